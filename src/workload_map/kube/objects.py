"""Kubernetes object vocabulary, without I/O: metadata access, owner references and the
controller reference, apiVersion splitting, GVK text, API paths and the Karta API constants.

Every consumer (CLI, server, exporter, operator, resolver) reads objects through these
functions, so "what the controller reference is" or "how an apiVersion splits" has one answer.
Objects are untrusted JSON: every accessor tolerates missing or mistyped fields.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from workload_map.model.karta_api import (
    KARTA_API_VERSION,
    KARTA_GROUP,
    KARTA_KIND,
    KARTA_VERSION,
    gvk_text,
)

#: A decoded Kubernetes object (JSON), read only through the accessors below.
KubeObject = Mapping[str, Any]
#: One entry of ``metadata.ownerReferences``.
OwnerReference = Mapping[str, Any]

KARTA_PLURAL = "kartas"
KARTA_RESOURCE = f"{KARTA_PLURAL}.{KARTA_GROUP}"


def meta(obj: Any) -> Mapping[str, Any]:
    """``obj.metadata`` (``{}`` when absent or not an object)."""
    # dict first: a plain type check; the Mapping ABC check (5x slower, millions of calls in the
    # exporter at scale) only for other mappings
    m = obj.get("metadata") if isinstance(obj, (dict, Mapping)) else None
    return m if isinstance(m, (dict, Mapping)) else {}


def _text(obj: Any, key: str) -> str:
    value = meta(obj).get(key)
    return value if isinstance(value, str) else ""


def name_of(obj: Any) -> str:
    return _text(obj, "name")


def namespace_of(obj: Any) -> str:
    return _text(obj, "namespace")


def uid_of(obj: Any) -> str:
    return _text(obj, "uid")


def labels_of(obj: Any) -> dict[str, str]:
    """String-valued labels (others dropped)."""
    raw = meta(obj).get("labels")
    return {str(k): v for k, v in raw.items() if isinstance(v, str)} if isinstance(raw, Mapping) else {}


_LABEL_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_LABEL_KEY = re.compile(rf"^([a-z0-9]([-a-z0-9.]{{0,251}}[a-z0-9])?/)?{_LABEL_NAME}$")
_LABEL_VALUE = re.compile(rf"^({_LABEL_NAME})?$")


def valid_label(key: str, value: str) -> bool:
    """A label Kubernetes accepts: a qualified name (optional DNS-subdomain prefix) and a value
    of at most 63 alphanumerics, ``-``, ``_``, ``.`` (alphanumeric at both ends, or empty)."""
    return bool(_LABEL_KEY.match(key)) and bool(_LABEL_VALUE.match(value))


def label_selector(labels: Mapping[str, str]) -> str:
    """``labelSelector`` text for pods carrying every one of ``labels`` (keys sorted; each label
    must pass :func:`valid_label`, so no character of the selector syntax can be in it)."""
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def has_labels(obj: Any, labels: Mapping[str, str]) -> bool:
    """Whether ``obj`` carries every one of ``labels`` (a ``matchLabels`` selector)."""
    own = labels_of(obj)
    return all(own.get(k) == v for k, v in labels.items())


def annotations_of(obj: Any) -> dict[str, str]:
    """String-valued annotations (others dropped)."""
    raw = meta(obj).get("annotations")
    return {str(k): v for k, v in raw.items() if isinstance(v, str)} if isinstance(raw, Mapping) else {}


def owner_refs(obj: Any) -> list[OwnerReference]:
    """``metadata.ownerReferences`` entries that are objects, in order."""
    refs = meta(obj).get("ownerReferences")
    return [r for r in refs if isinstance(r, (dict, Mapping))] if isinstance(refs, list) else []


def controller_ref(obj: Any) -> OwnerReference | None:
    """The one owner reference with ``controller: true`` (``None`` if none or several: the API
    server allows only one, so several means a hand-made object we do not guess about)."""
    ctrl = [r for r in owner_refs(obj) if r.get("controller") is True]
    return ctrl[0] if len(ctrl) == 1 else None


def owner_uids(obj: Any) -> list[str]:
    """The UIDs of every owner reference (the exporter's and server's owner index)."""
    return [u for r in owner_refs(obj) if isinstance(u := r.get("uid"), str) and u]


def split_api_version(api_version: str) -> tuple[str, str]:
    """``apps/v1`` -> ``("apps", "v1")``; ``v1`` -> ``("", "v1")``."""
    group, _, version = api_version.rpartition("/")
    return group, version


def group_of(api_version: Any) -> str:
    """The API group of an apiVersion value (``""`` for the core group or a non-string)."""
    return split_api_version(api_version)[0] if isinstance(api_version, str) else ""


def join_api_version(group: str, version: str) -> str:
    """``("apps", "v1")`` -> ``apps/v1``; ``("", "v1")`` -> ``v1``."""
    return f"{group}/{version}" if group else version


def ref_key(namespace: str, ref: OwnerReference) -> tuple[str, str, str, str]:
    """``(namespace, apiVersion, kind, name)`` of an owner reference: the owner-lookup key."""
    return (
        namespace,
        str(ref.get("apiVersion") or ""),
        str(ref.get("kind") or ""),
        str(ref.get("name") or ""),
    )


def api_path(
    api_version: str,
    plural: str,
    namespace: str | None = None,
    name: str | None = None,
    subresource: str | None = None,
) -> str:
    """``/api/v1/namespaces/ns/pods/x/status`` style paths from an apiVersion (``v1``, ``apps/v1``)."""
    base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    parts = [base]
    if namespace:
        parts.append(f"namespaces/{quote(namespace, safe='')}")
    parts.append(plural)
    if name is not None:
        if not name:
            raise ValueError("name must not be empty")
        parts.append(quote(name, safe=""))
        if subresource:
            parts.append(subresource)
    return "/".join(parts)


#: The cluster-scoped collection of Karta objects.
KARTA_PATH = api_path(KARTA_API_VERSION, KARTA_PLURAL)

__all__ = [
    "KARTA_API_VERSION",
    "KARTA_GROUP",
    "KARTA_KIND",
    "KARTA_PATH",
    "KARTA_PLURAL",
    "KARTA_RESOURCE",
    "KARTA_VERSION",
    "KubeObject",
    "OwnerReference",
    "annotations_of",
    "api_path",
    "controller_ref",
    "group_of",
    "gvk_text",
    "has_labels",
    "join_api_version",
    "kubectl_name",
    "label_selector",
    "labels_of",
    "meta",
    "name_of",
    "namespace_of",
    "owner_refs",
    "owner_uids",
    "ref_key",
    "split_api_version",
    "uid_of",
    "valid_label",
]


def kubectl_name(api_version: str, kind: str, name: str) -> str:
    """An object as ``kubectl get -o name`` prints it: ``kind.group/name`` in lower case
    (``jobset.jobset.x-k8s.io/train``, ``deployment.apps/web``), ``kind/name`` for the core group."""
    group = group_of(api_version)
    return f"{kind.lower()}.{group}/{name}" if group else f"{kind.lower()}/{name}"
