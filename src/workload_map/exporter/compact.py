"""The compact forms in which the exporter keeps pods and workloads (issue 24: < 4 KB of memory
per pod).

A trimmed pod (:func:`workload_map.exporter.trim.trim_pod`) as nested dicts costs four dicts per
pod: the object, its metadata, spec and status, ~1 KB before any value. :class:`CompactPod` keeps
one small object with slots instead:

- ``metadata``: the dict itself (the owner walk, the owner index and every key lookup read it,
  so it is never rebuilt), its labels, annotations and owner references shared between pods;
- ``spec``: ``nodeName`` apart and the rest as one dict shared by the pods of one template (its
  scheduler, priority, restart policy and containers' resources are equal);
- ``status``: its JSON text (``phase``, conditions, container statuses: most of a running pod's
  own bytes), one ``bytes`` object instead of a dict per condition and container; equal texts
  (every pending pod's) are kept once.

A workload object is kept whole (its definition may read any field) as a :class:`CompactObject`:
its metadata dict, and every other field (spec, status) as one JSON text, a third of the dicts'
size; it is decoded when the workload is rendered.

Both are read-only :class:`~collections.abc.Mapping` objects with the object's keys, so the owner
walk and the ``workload_map.kube.objects`` helpers read them as they read a dict; other fields are
rebuilt on each access (new dicts, safe to change). :func:`as_dict` gives the plain dict the
resolver and the definitions' expressions read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import orjson

__all__ = ["CompactObject", "CompactPod", "PodLike", "as_dict", "compact_workload", "packed_status"]

#: ``_node`` of a spec without ``nodeName`` (a ``null`` node name is kept as ``None``).
_ABSENT: Any = object()

#: A pod as the exporter's stores hold it: a :class:`CompactPod` (or, from elsewhere, a dict).
PodLike = Mapping[str, Any]

#: Distinct status texts remembered by :func:`packed_status`; when full it starts over.
STATUS_SHARED_MAX = 4096
#: Status texts longer than this are kept as they are (unlikely to repeat; bounds the memory).
STATUS_SHARED_KEY_MAX = 256
_STATUSES: dict[bytes, bytes] = {}


def packed_status(status: Mapping[str, Any]) -> bytes:
    """``status`` as compact JSON, one object for every equal short text."""
    text = orjson.dumps(status)
    if len(text) > STATUS_SHARED_KEY_MAX:
        return text
    found = _STATUSES.get(text)
    if found is not None:
        return found
    if len(_STATUSES) >= STATUS_SHARED_MAX:
        _STATUSES.clear()
    _STATUSES[text] = text
    return text


class _Compact(Mapping[str, Any]):
    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The object as plain dicts (its metadata shared with this object: do not change it)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_dict()!r})"


class CompactObject(_Compact):
    """A trimmed object kept whole: its metadata dict and its other fields as one JSON text
    (see the module doc). Build it with :meth:`pack`; never mutated after that."""

    __slots__ = ("_keys", "_rest", "metadata")

    #: the object's keys in their order (one tuple per shape, shared)
    _keys: tuple[str, ...]
    #: JSON of the object without ``metadata``
    _rest: bytes
    metadata: Any

    @classmethod
    def pack(cls, obj: Mapping[str, Any]) -> CompactObject:
        out = cls.__new__(cls)
        keys = tuple(obj)
        out._keys = _KEY_TUPLES.setdefault(keys, keys) if len(_KEY_TUPLES) < 1024 else keys
        out.metadata = obj.get("metadata")
        out._rest = orjson.dumps({k: v for k, v in obj.items() if k != "metadata"})
        return out

    def __getitem__(self, key: str) -> Any:
        if key not in self._keys:
            raise KeyError(key)
        if key == "metadata":
            return self.metadata
        return orjson.loads(self._rest)[key]

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def to_dict(self) -> dict[str, Any]:
        rest = orjson.loads(self._rest)
        return {k: self.metadata if k == "metadata" else rest[k] for k in self._keys}


_KEY_TUPLES: dict[tuple[str, ...], tuple[str, ...]] = {}


def compact_workload(obj: dict[str, Any]) -> Mapping[str, Any]:
    """A (trimmed) workload object as a :class:`CompactObject`; as it is when it cannot be
    written as JSON (it was decoded from JSON, so only a hand-made object)."""
    try:
        return CompactObject.pack(obj)
    except (TypeError, orjson.JSONEncodeError):
        return obj


class CompactPod(_Compact):
    """A trimmed pod in compact form (see the module doc). Build it with
    :meth:`from_trimmed`; never mutated after that."""

    __slots__ = ("_api_version", "_kind", "_node", "_spec", "_status", "metadata")

    _api_version: str | None
    _kind: str | None
    metadata: dict[str, Any] | None
    #: ``spec.nodeName`` (``_spec`` holds the rest), or ``_ABSENT`` when the spec has none
    _node: Any
    #: the spec without ``nodeName`` (shared), or ``None`` when the pod has no spec
    _spec: dict[str, Any] | None
    _status: bytes | None

    @classmethod
    def from_trimmed(cls, pod: Mapping[str, Any], shared: Any) -> CompactPod:
        """``pod`` (a trimmed pod: plain JSON values) in compact form; ``shared`` makes one
        object of equal values (:func:`workload_map.exporter.trim.shared`)."""
        out = cls.__new__(cls)
        api_version, kind = pod.get("apiVersion"), pod.get("kind")
        out._api_version = api_version if isinstance(api_version, str) else None
        out._kind = kind if isinstance(kind, str) else None
        meta = pod.get("metadata")
        out.metadata = meta if isinstance(meta, dict) else None
        spec = pod.get("spec")
        if isinstance(spec, dict):
            rest = dict(spec)
            out._node = rest.pop("nodeName", _ABSENT)
            out._spec = shared(rest) if rest else rest
        else:
            out._node, out._spec = _ABSENT, None
        status = pod.get("status")
        out._status = packed_status(status) if isinstance(status, dict) else None
        return out

    # --- Mapping ------------------------------------------------------------------------------

    def _keys(self) -> list[str]:
        keys = []
        if self._api_version is not None:
            keys.append("apiVersion")
        if self._kind is not None:
            keys.append("kind")
        if self.metadata is not None:
            keys.append("metadata")
        if self._spec is not None:
            keys.append("spec")
        if self._status is not None:
            keys.append("status")
        return keys

    def __getitem__(self, key: str) -> Any:
        if key == "metadata" and self.metadata is not None:
            return self.metadata
        if key == "spec" and self._spec is not None:
            return self._spec_dict()
        if key == "status" and self._status is not None:
            return orjson.loads(self._status)
        if key == "apiVersion" and self._api_version is not None:
            return self._api_version
        if key == "kind" and self._kind is not None:
            return self._kind
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())

    def _spec_dict(self) -> dict[str, Any]:
        assert self._spec is not None
        if self._node is _ABSENT:
            return dict(self._spec)
        return {"nodeName": self._node, **self._spec}

    def to_dict(self) -> dict[str, Any]:
        """The trimmed pod as plain dicts (metadata shared with this object: do not change it)."""
        return {key: self[key] for key in self._keys()}


def as_dict(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A stored object as a plain dict (a shallow copy of a dict)."""
    return obj.to_dict() if isinstance(obj, _Compact) else dict(obj)
