"""``InterpretDependency``: the ConfigMaps, Secrets, ServiceAccounts and PersistentVolumeClaims the
pods of a workload reference, so Karmada propagates them with it.

Every pod spec of the object counts (each instance of every component with a pod definition;
a fragmented spec contributes its containers). What a pod spec references follows Karmada's
``kube.getPodDependencies`` (``GetDependenciesFromPodTemplate`` in ``pkg/util/helper/pod.go`` and
the visitors in ``pkg/util/lifted/visitpod.go``):

* Secrets: ``imagePullSecrets[].name``; in init, regular and ephemeral containers
  ``envFrom[].secretRef.name`` and ``env[].valueFrom.secretKeyRef.name``; per volume, the first
  of these sources it has (a volume has one): ``azureFile.secretName``, ``cephfs.secretRef``,
  ``cinder.secretRef``, ``flexVolume.secretRef``, ``projected.sources[].secret``,
  ``rbd.secretRef``, ``secret.secretName``, ``scaleIO.secretRef``, ``iscsi.secretRef``,
  ``storageos.secretRef``, ``csi.nodePublishSecretRef``;
* ConfigMaps: containers' ``envFrom[].configMapRef`` and ``env[].valueFrom.configMapKeyRef``;
  per volume ``projected.sources[].configMap``, else ``configMap.name``;
* ServiceAccount: ``serviceAccountName`` unless empty or ``default``;
* PersistentVolumeClaims: ``volumes[].persistentVolumeClaim.claimName``.

Empty names are skipped. Every reference is ``v1`` in the workload's namespace (``default`` when it
has none, as Karmada's helper does); the list is sorted by apiVersion, kind, namespace and name
(Karmada's ``ConfigurableInterpreter.GetDependencies`` order) without duplicates.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

CONFIG_MAP = "ConfigMap"
SECRET = "Secret"
SERVICE_ACCOUNT = "ServiceAccount"
PVC = "PersistentVolumeClaim"
DEFAULT_NAMESPACE = "default"

# (volume source field, how the Secret name is read from it), in Karmada's switch order.
_SECRET_VOLUME_SOURCES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("azureFile", ("secretName",)),
    ("cephfs", ("secretRef", "name")),
    ("cinder", ("secretRef", "name")),
    ("flexVolume", ("secretRef", "name")),
    ("projected", ()),
    ("rbd", ("secretRef", "name")),
    ("secret", ("secretName",)),
    ("scaleIO", ("secretRef", "name")),
    ("iscsi", ("secretRef", "name")),
    ("storageos", ("secretRef", "name")),
    ("csi", ("nodePublishSecretRef", "name")),
)
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _name(value: Any, *path: str) -> str:
    for key in path:
        value = _dict(value).get(key)
    return value if isinstance(value, str) else ""


def _containers(spec: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for field in CONTAINER_LISTS:
        for c in _list(spec.get(field)):
            if isinstance(c, Mapping):
                yield c


def _has(value: Any, key: str) -> bool:
    """Go's ``field != nil`` for a pointer field decoded from JSON (absent or null is nil)."""
    return _dict(value).get(key) is not None


def _container_refs(container: Mapping[str, Any], ref: str, key_ref: str) -> Iterator[str]:
    for source in _list(container.get("envFrom")):
        if _has(source, ref):
            yield _name(source, ref, "name")
    for var in _list(container.get("env")):
        value_from = _dict(_dict(var).get("valueFrom"))
        if _has(value_from, key_ref):
            yield _name(value_from, key_ref, "name")


def _volume_secret(volume: Mapping[str, Any]) -> Iterator[str]:
    for field, path in _SECRET_VOLUME_SOURCES:
        if not _has(volume, field):
            continue
        if field == "projected":
            for source in _list(_dict(volume[field]).get("sources")):
                if _has(source, "secret"):
                    yield _name(source, "secret", "name")
        elif len(path) == 1 or _has(volume[field], path[0]):
            yield _name(volume[field], *path)
        return


def _volume_config_map(volume: Mapping[str, Any]) -> Iterator[str]:
    if _has(volume, "projected"):
        for source in _list(_dict(volume["projected"]).get("sources")):
            if _has(source, "configMap"):
                yield _name(source, "configMap", "name")
    elif _has(volume, "configMap"):
        yield _name(volume, "configMap", "name")


def pod_references(spec: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(kind, name) of every object one pod spec references (names may repeat)."""
    for ref in _list(spec.get("imagePullSecrets")):
        yield SECRET, _name(ref, "name")
    for c in _containers(spec):
        for name in _container_refs(c, "secretRef", "secretKeyRef"):
            yield SECRET, name
        for name in _container_refs(c, "configMapRef", "configMapKeyRef"):
            yield CONFIG_MAP, name
    volumes = [v for v in _list(spec.get("volumes")) if isinstance(v, Mapping)]
    for volume in volumes:
        for name in _volume_secret(volume):
            yield SECRET, name
        for name in _volume_config_map(volume):
            yield CONFIG_MAP, name
        if _has(volume, "persistentVolumeClaim"):
            yield PVC, _name(volume, "persistentVolumeClaim", "claimName")
    account = spec.get("serviceAccountName")
    if isinstance(account, str) and account != "default":
        yield SERVICE_ACCOUNT, account


def dependencies(pod_specs: Iterable[Mapping[str, Any]], namespace: str | None) -> list[dict[str, str]]:
    """Karmada ``DependentObjectReference`` objects for these pod specs, sorted, unique."""
    ns = namespace or DEFAULT_NAMESPACE
    found = {(kind, name) for spec in pod_specs for kind, name in pod_references(spec) if name}
    refs = sorted(("v1", kind, ns, name) for kind, name in found)
    return [{"apiVersion": a, "kind": k, "namespace": n, "name": m} for a, k, n, m in refs]
