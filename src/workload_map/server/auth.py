"""Who is calling (TokenReview) and may they do this (SubjectAccessReview), with short caches.

Both reviews are sent with the server's own credentials; the API server answers for the user.
Token results are cached by the SHA-256 of the token (``token_ttl``, failures ``failure_ttl``);
access decisions by ``(user, groups, verb, group, resource, subresource, namespace, name)`` for
``access_ttl`` seconds. Caches are bounded (oldest entries dropped).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from workload_map.errors import ClusterError
from workload_map.kube.objects import api_path
from workload_map.server.errors import HttpError, from_cluster_error

if TYPE_CHECKING:
    from workload_map.cluster.client import KubeClient

__all__ = ["AccessReviewer", "Authenticator", "User"]

TOKEN_REVIEW_PATH = "/apis/authentication.k8s.io/v1/tokenreviews"
SSAR_PATH = api_path("authorization.k8s.io/v1", "selfsubjectaccessreviews")
SAR_PATH = api_path("authorization.k8s.io/v1", "subjectaccessreviews")

K = TypeVar("K")
V = TypeVar("V")


class _TTLCache(Generic[K, V]):
    def __init__(self, max_size: int, clock: Callable[[], float]) -> None:
        self._data: OrderedDict[K, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()
        self._max = max_size
        self._clock = clock

    def get(self, key: K) -> V | None:
        with self._lock:
            hit = self._data.get(key)
            if hit is None:
                return None
            if hit[0] <= self._clock():
                del self._data[key]
                return None
            return hit[1]

    def put(self, key: K, value: V, ttl: float) -> None:
        with self._lock:
            self._data[key] = (self._clock() + ttl, value)
            self._data.move_to_end(key)
            while len(self._data) > self._max:
                self._data.popitem(last=False)


@dataclass(frozen=True)
class User:
    username: str
    uid: str | None = None
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: ``wmap serve --local``: the server's own kubeconfig identity, checked with
    #: SelfSubjectAccessReviews (which every authenticated user may create).
    self_review: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"username": self.username, "uid": self.uid, "groups": list(self.groups)}


class Authenticator:
    """``authenticate(authorization_header) -> User`` or :class:`HttpError` 401."""

    def __init__(
        self,
        client: KubeClient,
        *,
        token_ttl: float = 10.0,
        failure_ttl: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.token_ttl = token_ttl
        self.failure_ttl = failure_ttl
        self._cache: _TTLCache[str, User | str] = _TTLCache(4096, clock)
        #: TokenReviews sent (tests).
        self.reviews = 0

    def authenticate(self, header: str | None) -> User:
        if not header:
            raise HttpError(
                401, "unauthorized", "missing bearer token", "Send Authorization: Bearer <Kubernetes token>."
            )
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise HttpError(
                401,
                "unauthorized",
                "the Authorization header is not a bearer token",
                "Send Authorization: Bearer <Kubernetes token>.",
            )
        key = hashlib.sha256(token.encode()).hexdigest()
        cached = self._cache.get(key)
        if cached is None:
            cached = self._review(token)
            self._cache.put(key, cached, self.token_ttl if isinstance(cached, User) else self.failure_ttl)
        if isinstance(cached, str):
            raise HttpError(401, "unauthorized", f"the token was not accepted: {cached}")
        return cached

    def _review(self, token: str) -> User | str:
        body = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token},
        }
        self.reviews += 1
        try:
            review = self.client.create(TOKEN_REVIEW_PATH, body)
        except ClusterError as exc:
            raise from_cluster_error(exc, "TokenReview") from exc
        status = review.get("status") or {}
        if not status.get("authenticated"):
            return str(status.get("error") or "not authenticated")
        info = status.get("user") or {}
        extra = info.get("extra") or {}
        return User(
            username=str(info.get("username") or ""),
            uid=str(info["uid"]) if info.get("uid") else None,
            groups=tuple(str(g) for g in info.get("groups") or ()),
            extra={str(k): tuple(str(x) for x in v) for k, v in extra.items() if isinstance(v, list)},
        )


AccessKey = tuple[str, tuple[str, ...], str, str, str, str, str, str]


class AccessReviewer:
    """SubjectAccessReviews for a user, cached briefly."""

    def __init__(
        self, client: KubeClient, *, ttl: float = 10.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.client = client
        self.ttl = ttl
        self._cache: _TTLCache[AccessKey, bool] = _TTLCache(65536, clock)
        #: SubjectAccessReviews sent (tests).
        self.reviews = 0

    def allowed(
        self,
        user: User,
        verb: str,
        *,
        group: str,
        resource: str,
        namespace: str = "",
        name: str = "",
        subresource: str = "",
    ) -> bool:
        who = "\x00self" if user.self_review else user.username
        key: AccessKey = (who, user.groups, verb, group, resource, subresource, namespace, name)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        attrs: dict[str, Any] = {"verb": verb, "group": group, "resource": resource}
        if namespace:
            attrs["namespace"] = namespace
        if name:
            attrs["name"] = name
        if subresource:
            attrs["subresource"] = subresource
        kind = "SelfSubjectAccessReview" if user.self_review else "SubjectAccessReview"
        spec: dict[str, Any] = {"resourceAttributes": attrs}
        if not user.self_review:
            spec.update(user=user.username, groups=list(user.groups))
            if user.uid:
                spec["uid"] = user.uid
            if user.extra:
                spec["extra"] = {k: list(v) for k, v in user.extra.items()}
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": kind, "spec": spec}
        self.reviews += 1
        try:
            review = self.client.create(SSAR_PATH if user.self_review else SAR_PATH, body)
        except ClusterError as exc:
            raise from_cluster_error(exc, kind) from exc
        ok = bool((review.get("status") or {}).get("allowed"))
        self._cache.put(key, ok, self.ttl)
        return ok

    def require(
        self,
        user: User,
        verb: str,
        *,
        group: str,
        resource: str,
        namespace: str = "",
        name: str = "",
        subresource: str = "",
    ) -> None:
        """:class:`HttpError` 403 unless allowed."""
        if self.allowed(
            user,
            verb,
            group=group,
            resource=resource,
            namespace=namespace,
            name=name,
            subresource=subresource,
        ):
            return
        qualified = f"{resource}.{group}" if group else resource
        if subresource:
            qualified += f"/{subresource}"
        where = f' in namespace "{namespace}"' if namespace else " at cluster scope"
        target = f' "{name}"' if name else ""
        raise HttpError(
            403,
            "forbidden",
            f'user "{user.username}" cannot {verb} {qualified}{target}{where}',
            "Ask a cluster administrator for the Kubernetes RBAC permission.",
        )
