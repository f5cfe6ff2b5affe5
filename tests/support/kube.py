"""A small, explicit Kubernetes REST client for tests (httpx only, no kubernetes package).

It plays the part of the missing controllers: tests create workload objects, set their status
through ``/status``, create pods with ``ownerReferences`` and then set the pods' status the way a
kubelet would.
"""

from __future__ import annotations

import copy
import itertools
import os
import secrets
import ssl
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import httpx
import orjson

Obj = dict[str, Any]
T = TypeVar("T")

CORE_KIND_PLURALS: dict[str, str] = {
    "Pod": "pods",
    "Node": "nodes",
    "Namespace": "namespaces",
    "Service": "services",
    "ConfigMap": "configmaps",
    "Secret": "secrets",
    "ServiceAccount": "serviceaccounts",
    "Event": "events",
    "PersistentVolumeClaim": "persistentvolumeclaims",
}
CLUSTER_SCOPED_CORE = {"Node", "Namespace", "PersistentVolume"}

TEST_IMAGE = "registry.invalid/wmap-test:latest"
_ns_counter = itertools.count(1)


class KubeApiError(RuntimeError):
    """A non-2xx answer from the apiserver."""

    def __init__(self, method: str, url: str, response: httpx.Response) -> None:
        self.status_code = response.status_code
        self.body: Obj = {}
        try:
            parsed = response.json()
            if isinstance(parsed, dict):
                self.body = parsed
        except ValueError:
            pass
        self.reason = str(self.body.get("reason", ""))
        message = self.body.get("message") or response.text[:500]
        super().__init__(f"{method} {url} -> HTTP {self.status_code} {self.reason}: {message}")


def rule(api_groups: Sequence[str], resources: Sequence[str], verbs: Sequence[str]) -> Obj:
    """One RBAC PolicyRule."""
    return {"apiGroups": list(api_groups), "resources": list(resources), "verbs": list(verbs)}


def split_api_version(api_version: str) -> tuple[str, str]:
    """``"jobset.x-k8s.io/v1alpha2"`` -> ``("jobset.x-k8s.io", "v1alpha2")``; ``"v1"`` -> ``("", "v1")``."""
    if "/" in api_version:
        group, version = api_version.split("/", 1)
        return group, version
    return "", api_version


def api_prefix(api_version: str) -> str:
    group, version = split_api_version(api_version)
    return f"/api/{version}" if not group else f"/apis/{group}/{version}"


def resource_path(
    api_version: str,
    plural: str,
    name: str | None = None,
    namespace: str | None = None,
    subresource: str | None = None,
) -> str:
    path = api_prefix(api_version)
    if namespace is not None:
        path += f"/namespaces/{namespace}"
    path += f"/{plural}"
    if name is not None:
        path += f"/{name}"
        if subresource is not None:
            path += f"/{subresource}"
    return path


def owner_reference(owner: Mapping[str, Any], *, controller: bool = True) -> Obj:
    meta = owner["metadata"]
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": controller,
        "blockOwnerDeletion": True,
    }


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class KubeTestClient:
    """Synchronous client for one user: a bearer token or a client certificate."""

    def __init__(
        self,
        server: str,
        token: str | None = None,
        ca_file: Path | str | None = None,
        *,
        client_cert: tuple[Path | str, Path | str] | None = None,
        timeout: float = 60.0,
    ) -> None:
        self.server = server.rstrip("/")
        self.token = token
        self.ca_file = Path(ca_file) if ca_file is not None else None
        self.client_cert = client_cert
        verify: ssl.SSLContext | bool = False
        if self.ca_file is not None:
            verify = ssl.create_default_context(cafile=str(self.ca_file))
        if client_cert is not None:
            if not isinstance(verify, ssl.SSLContext):
                verify = ssl.create_default_context()
                verify.check_hostname = False
                verify.verify_mode = ssl.CERT_NONE
            verify.load_cert_chain(str(client_cert[0]), str(client_cert[1]))
        headers = {"Accept": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        self.http = httpx.Client(base_url=self.server, verify=verify, headers=headers, timeout=timeout)
        self._discovery: dict[str, dict[str, tuple[str, bool]]] = {}

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> KubeTestClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def as_user(self, token: str) -> KubeTestClient:
        """Another client on the same server and CA, authenticated by ``token``."""
        return KubeTestClient(self.server, token, self.ca_file)

    # --------------------------------------------------------------------------------- raw HTTP

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Obj:
        """Send a request; return the decoded JSON body; raise :class:`KubeApiError` on non-2xx."""
        response = self.raw(method, path, body, params=params, content_type=content_type)
        if response.status_code >= 300:
            raise KubeApiError(method, path, response)
        if not response.content:
            return {}
        parsed = orjson.loads(response.content)
        return parsed if isinstance(parsed, dict) else {"value": parsed}

    def raw(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> httpx.Response:
        content = None if body is None else orjson.dumps(body)
        headers = {"Content-Type": content_type} if content is not None else None
        return self.http.request(method, path, content=content, params=params, headers=headers)

    def status_of(self, method: str, path: str) -> int:
        """Just the HTTP status code of a request (e.g. to assert a 403)."""
        return self.raw(method, path).status_code

    # -------------------------------------------------------------------------------- discovery

    def resources(self, api_version: str, *, refresh: bool = False) -> dict[str, tuple[str, bool]]:
        """kind -> (plural, namespaced) for one group/version, from discovery (cached)."""
        if refresh or api_version not in self._discovery:
            listing = self.request("GET", api_prefix(api_version))
            kinds: dict[str, tuple[str, bool]] = {}
            for res in listing.get("resources", []):
                if "/" in res["name"]:
                    continue  # subresources like pods/status
                kinds[res["kind"]] = (res["name"], bool(res["namespaced"]))
            self._discovery[api_version] = kinds
        return self._discovery[api_version]

    def forget_discovery(self, api_version: str | None = None) -> None:
        """Drop cached discovery for one group/version (or all)."""
        if api_version is None:
            self._discovery.clear()
        else:
            self._discovery.pop(api_version, None)

    def plural_for(self, api_version: str, kind: str, *, wait: float = 10.0) -> tuple[str, bool]:
        """(plural, namespaced) of ``kind``; waits a little for freshly installed CRDs to appear."""
        deadline = time.monotonic() + wait
        refresh = False
        while True:
            try:
                found = self.resources(api_version, refresh=refresh).get(kind)
            except KubeApiError as exc:
                if exc.status_code != 404:
                    raise
                found = None
            if found is not None:
                return found
            if time.monotonic() >= deadline:
                raise LookupError(f"the apiserver serves no kind {kind} in {api_version}")
            refresh = True
            time.sleep(0.2)

    def path_of(self, obj: Mapping[str, Any], *, subresource: str | None = None, named: bool = True) -> str:
        plural, namespaced = self.plural_for(obj["apiVersion"], obj["kind"])
        meta = obj.get("metadata", {})
        namespace = meta.get("namespace") if namespaced else None
        if namespaced and namespace is None:
            raise ValueError(f"{obj['kind']} is namespaced: set metadata.namespace")
        name = meta.get("name") if named else None
        return resource_path(obj["apiVersion"], plural, name, namespace, subresource)

    # ------------------------------------------------------------------------------------ CRUD

    def create(self, obj: Mapping[str, Any]) -> Obj:
        return self.request("POST", self.path_of(obj, named=False), obj)

    def get(self, api_version: str, plural: str, name: str, namespace: str | None = None) -> Obj:
        return self.request("GET", resource_path(api_version, plural, name, namespace))

    def get_obj(self, obj: Mapping[str, Any]) -> Obj:
        """Re-read ``obj`` (by apiVersion, kind, namespace and name)."""
        return self.request("GET", self.path_of(obj))

    def list(
        self,
        api_version: str,
        plural: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
    ) -> list[Obj]:
        params = {"labelSelector": label_selector} if label_selector else None
        listing = self.request("GET", resource_path(api_version, plural, None, namespace), params=params)
        items: list[Obj] = listing.get("items", [])
        return items

    def update(self, obj: Mapping[str, Any]) -> Obj:
        return self.request("PUT", self.path_of(obj), self._with_resource_version(obj))

    def update_status(self, obj: Mapping[str, Any]) -> Obj:
        """PUT the whole object to its ``/status`` subresource (only ``.status`` is taken)."""
        return self.request("PUT", self.path_of(obj, subresource="status"), self._with_resource_version(obj))

    def set_status(self, obj: Mapping[str, Any], status: Mapping[str, Any]) -> Obj:
        """Replace ``.status`` of the live object, like an operator would."""
        current = self.get_obj(obj)
        current["status"] = copy.deepcopy(dict(status))
        return self.update_status(current)

    def patch(
        self, obj: Mapping[str, Any], patch: Mapping[str, Any], *, subresource: str | None = None
    ) -> Obj:
        """JSON merge patch."""
        return self.request(
            "PATCH",
            self.path_of(obj, subresource=subresource),
            patch,
            content_type="application/merge-patch+json",
        )

    def delete(self, api_version: str, plural: str, name: str, namespace: str | None = None) -> Obj:
        return self.request("DELETE", resource_path(api_version, plural, name, namespace))

    def delete_obj(self, obj: Mapping[str, Any]) -> Obj:
        return self.request("DELETE", self.path_of(obj))

    def _with_resource_version(self, obj: Mapping[str, Any]) -> Obj:
        body = copy.deepcopy(dict(obj))
        meta = body.setdefault("metadata", {})
        if not meta.get("resourceVersion"):
            meta["resourceVersion"] = self.get_obj(body)["metadata"]["resourceVersion"]
        return body

    # ------------------------------------------------------------------------------ namespaces

    def create_namespace(self, prefix: str = "wmap-t", labels: Mapping[str, str] | None = None) -> str:
        """Create a namespace with a never-reused name (deleted namespaces stay Terminating forever)."""
        name = f"{prefix}-{os.getpid() % 10000}-{next(_ns_counter)}-{secrets.token_hex(3)}"[:63]
        meta: Obj = {"name": name}
        if labels:
            meta["labels"] = dict(labels)
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}
        self.request("POST", "/api/v1/namespaces", namespace)
        return name

    # ------------------------------------------------------------------------------------ pods

    def make_pod(
        self,
        name: str,
        namespace: str,
        *,
        owner: Mapping[str, Any] | None = None,
        owners: Sequence[Mapping[str, Any]] = (),
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
        gpus: int = 0,
        cpu: str | None = None,
        memory: str | None = None,
        phase: str = "Running",
        ready: bool | None = None,
        node: str | None = None,
        reason: str | None = None,
        message: str | None = None,
        container_reason: str | None = None,
        restarts: int = 0,
        containers: Sequence[str] = ("main",),
        scheduled: bool | None = None,
        extra_status: Mapping[str, Any] | None = None,
    ) -> Obj:
        """Create a pod, then set its status as a kubelet would.

        ``ready`` defaults to ``phase == "Running"``. ``reason``/``message`` go to ``status.reason``
        (e.g. ``Evicted``); ``container_reason`` puts every container in ``waiting`` with that reason
        (e.g. ``CrashLoopBackOff``) or, for a terminated phase, ``terminated``. ``scheduled`` defaults
        to ``node is not None or phase != "Pending"``; an unscheduled pod gets ``PodScheduled=False``
        with reason ``Unschedulable``.
        """
        if ready is None:
            ready = phase == "Running" and container_reason is None
        if scheduled is None:
            scheduled = node is not None or phase != "Pending"
        resources: Obj = {}
        limits: dict[str, str] = {}
        requests: dict[str, str] = {}
        if gpus:
            limits["nvidia.com/gpu"] = str(gpus)
            requests["nvidia.com/gpu"] = str(gpus)
        if cpu:
            requests["cpu"] = cpu
        if memory:
            requests["memory"] = memory
        if limits:
            resources["limits"] = limits
        if requests:
            resources["requests"] = requests
        refs = [owner_reference(o) for o in ([owner] if owner is not None else [])]
        refs += [owner_reference(o, controller=False) for o in owners]
        meta: Obj = {"name": name, "namespace": namespace}
        if labels:
            meta["labels"] = dict(labels)
        if annotations:
            meta["annotations"] = dict(annotations)
        if refs:
            meta["ownerReferences"] = refs
        spec: Obj = {
            "containers": [{"name": c, "image": TEST_IMAGE, "resources": resources} for c in containers],
            "restartPolicy": "Never" if phase in ("Succeeded", "Failed") else "Always",
        }
        if node is not None:
            spec["nodeName"] = node
        pod = self.create({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
        pod["status"] = self._pod_status(
            pod,
            phase=phase,
            ready=ready,
            scheduled=scheduled,
            reason=reason,
            message=message,
            container_reason=container_reason,
            restarts=restarts,
            extra=extra_status,
        )
        return self.update_status(pod)

    @staticmethod
    def _pod_status(
        pod: Obj,
        *,
        phase: str,
        ready: bool,
        scheduled: bool,
        reason: str | None,
        message: str | None,
        container_reason: str | None,
        restarts: int,
        extra: Mapping[str, Any] | None,
    ) -> Obj:
        now = _now()

        def cond(kind: str, ok: bool, why: str | None = None) -> Obj:
            c: Obj = {"type": kind, "status": "True" if ok else "False", "lastTransitionTime": now}
            if why and not ok:
                c["reason"] = why
            return c

        status: Obj = {"phase": phase}
        if not scheduled:
            status["conditions"] = [cond("PodScheduled", False, "Unschedulable")]
            status["conditions"][0]["message"] = message or "0/0 nodes are available"
        else:
            status["conditions"] = [
                cond("PodScheduled", True),
                cond("Initialized", True),
                cond("ContainersReady", ready, "ContainersNotReady"),
                cond("Ready", ready, "ContainersNotReady"),
            ]
            status["startTime"] = now
            if pod["spec"].get("nodeName"):
                status["hostIP"] = "10.1.0.1"
            if phase != "Pending" or container_reason:
                status["podIP"] = "10.2.0.1"
                statuses = []
                for c in pod["spec"]["containers"]:
                    state: Obj
                    if phase in ("Succeeded", "Failed"):
                        code = 0 if phase == "Succeeded" else 1
                        term_reason = container_reason or ("Completed" if code == 0 else "Error")
                        state = {
                            "terminated": {
                                "exitCode": code,
                                "reason": term_reason,
                                "startedAt": now,
                                "finishedAt": now,
                            }
                        }
                    elif container_reason:
                        state = {"waiting": {"reason": container_reason}}
                    else:
                        state = {"running": {"startedAt": now}}
                    statuses.append(
                        {
                            "name": c["name"],
                            "image": c["image"],
                            "imageID": "",
                            "ready": ready,
                            "started": ready,
                            "restartCount": restarts,
                            "state": state,
                        }
                    )
                status["containerStatuses"] = statuses
        if reason:
            status["reason"] = reason
        if message and scheduled:
            status["message"] = message
        if extra:
            status.update(copy.deepcopy(dict(extra)))
        return status

    # ----------------------------------------------------------------------------------- nodes

    def make_node(
        self,
        name: str,
        *,
        gpus: int = 8,
        cpu: str = "96",
        memory: str = "1024Gi",
        pods: str = "110",
        labels: Mapping[str, str] | None = None,
        ready: bool = True,
        unschedulable: bool = False,
        taints: Sequence[Mapping[str, Any]] = (),
        gpu_resource: str = "nvidia.com/gpu",
    ) -> Obj:
        """Create a Node (cluster-scoped: use unique names) and set capacity/allocatable via /status."""
        meta: Obj = {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}}
        spec: Obj = {}
        if unschedulable:
            spec["unschedulable"] = True
        if taints:
            spec["taints"] = [dict(t) for t in taints]
        node = self.create({"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec})
        resources = {"cpu": cpu, "memory": memory, "pods": pods}
        if gpus:
            resources[gpu_resource] = str(gpus)
        now = _now()
        node["status"] = {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "reason": "KubeletReady" if ready else "KubeletNotReady",
                    "lastHeartbeatTime": now,
                    "lastTransitionTime": now,
                }
            ],
            "addresses": [{"type": "Hostname", "address": name}],
        }
        node = self.update_status(node)
        # The TaintNodesByCondition admission plugin taints every new node
        # node.kubernetes.io/not-ready:NoSchedule; on a real cluster the node lifecycle controller
        # removes it once the node is Ready. No controller runs here: do its part for Ready nodes.
        taints = (node.get("spec") or {}).get("taints") or []
        kept = [t for t in taints if t.get("key") != "node.kubernetes.io/not-ready"]
        if ready and len(kept) != len(taints):
            node["spec"]["taints"] = kept
            node = self.update(node)
        return node

    # ------------------------------------------------------------------------------------ RBAC

    def grant(
        self,
        user: str,
        rules: Iterable[Mapping[str, Any]],
        namespace: str | None = None,
        *,
        subject_kind: str = "User",
        name: str | None = None,
        wait: bool = True,
    ) -> str:
        """Give ``user`` (or a Group with ``subject_kind="Group"``) the rules: a Role + RoleBinding in
        ``namespace``, or a ClusterRole + ClusterRoleBinding when ``namespace`` is None. Returns the
        role name. With ``wait``, returns once the authorizer allows the first rule's first verb
        (RBAC reads bindings through an informer, so grants take effect a moment later)."""
        rules = [dict(r) for r in rules]
        role_name = name or f"wmap-test-{user.replace(':', '-')}-{secrets.token_hex(4)}"
        scoped = namespace is not None
        role_kind = "Role" if scoped else "ClusterRole"
        meta: Obj = {"name": role_name}
        if scoped:
            meta["namespace"] = namespace
        self.create(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": role_kind,
                "metadata": dict(meta),
                "rules": rules,
            }
        )
        self.create(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding" if scoped else "ClusterRoleBinding",
                "metadata": dict(meta),
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role_name},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": subject_kind, "name": user}],
            }
        )
        if wait and rules:
            first = rules[0]
            attrs: Obj = {
                "verb": first["verbs"][0],
                "group": (first.get("apiGroups") or [""])[0],
                "resource": (first.get("resources") or ["*"])[0],
            }
            if scoped:
                attrs["namespace"] = namespace
            who: Obj = {"user": user} if subject_kind == "User" else {"user": "wmap-probe", "groups": [user]}
            self.wait_until(lambda: self.can(who, attrs), timeout=10.0)
        return role_name

    def can(self, who: Mapping[str, Any], resource_attributes: Mapping[str, Any]) -> bool:
        """SubjectAccessReview: may ``who`` (``{"user": ..., "groups": [...]}``) do this?"""
        review = self.request(
            "POST",
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SubjectAccessReview",
                "spec": {**dict(who), "resourceAttributes": dict(resource_attributes)},
            },
        )
        return bool(review.get("status", {}).get("allowed"))

    def wait_until(self, check: Callable[[], T], *, timeout: float = 10.0, interval: float = 0.1) -> T:
        """Poll ``check()`` until it returns something truthy; return that value."""
        deadline = time.monotonic() + timeout
        while True:
            value = check()
            if value:
                return value
            if time.monotonic() >= deadline:
                raise TimeoutError(f"condition not met within {timeout}s")
            time.sleep(interval)
