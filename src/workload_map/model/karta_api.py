"""The Karta API's names (group, version, kind, the predecessor's) and Go's GVK text: plain
constants without pydantic, so the Kubernetes vocabulary (:mod:`workload_map.kube.objects`) and
the commands' first requests do not wait for the model classes (issue 24: ``describe`` asks for
the pods while the models import). :mod:`workload_map.model.definition` re-exports them."""

from __future__ import annotations

KARTA_GROUP = "run.ai"
KARTA_VERSION = "v1alpha1"
KARTA_API_VERSION = f"{KARTA_GROUP}/{KARTA_VERSION}"
KARTA_KIND = "Karta"
# The predecessor project's shape: same fields under another group and kind.
LEGACY_API_VERSION = "optimization.nvidia.com/v1alpha1"
LEGACY_KIND = "ResourceInterface"


def gvk_text(group: str, version: str, kind: str) -> str:
    """Go's ``schema.GroupVersionKind.String()``: ``apps/v1, Kind=Deployment``, ``/v1, Kind=Pod``.
    Used for keys, sorting and messages; :mod:`workload_map.kube.objects` re-exports it."""
    return f"{group}/{version}, Kind={kind}"


__all__ = [
    "KARTA_API_VERSION",
    "KARTA_GROUP",
    "KARTA_KIND",
    "KARTA_VERSION",
    "LEGACY_API_VERSION",
    "LEGACY_KIND",
    "gvk_text",
]
