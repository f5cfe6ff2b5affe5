"""Names, labels and user-facing texts of the operator (upstream-spec 2.10, exact wording where
upstream has one; consumers.md 1.4 for the labels KAI selects on)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

from workload_map.kube.objects import KARTA_API_VERSION, KARTA_PATH

__all__ = ["KARTA_API_VERSION", "KARTA_PATH"]  # re-exported: the operator reads them from here too
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
FIELD_MANAGER = "wmap-operator"
COMPONENT = "wmap-operator"

# --- index labels (KAI lists Kartas with exactly these three, consumers.md 1.4) ---------------
LABEL_GROUP = "run.ai/karta-group"
LABEL_VERSION = "run.ai/karta-version"
LABEL_KIND = "run.ai/karta-kind"
MANAGED_LABELS = (LABEL_GROUP, LABEL_VERSION, LABEL_KIND)

# --- conditions --------------------------------------------------------------------------------
VALIDATED = "Validated"
CRD_EXISTS = "CRDExists"
READY = "Ready"
WITHIN_LIMITS = "WithinLimits"
CONDITION_TYPES = (VALIDATED, CRD_EXISTS, WITHIN_LIMITS, READY)

REASON_PENDING = "Pending"
MESSAGE_PENDING = "Condition has not been evaluated yet"
REASON_VALIDATION_SUCCEEDED = "ValidationSucceeded"
REASON_VALIDATION_FAILED = "ValidationFailed"
REASON_CRD_FOUND = "CRDFound"
REASON_CRD_NOT_FOUND = "CRDNotFound"
REASON_READY = "Ready"
REASON_NOT_READY = "NotReady"
MESSAGE_NOT_READY = "Validated and CRDExists must both be True"
MESSAGE_VALIDATION_SUCCEEDED = "Karta definition is valid"
MESSAGE_READY = "Karta is valid and its workload CRD is served"

REASON_WITHIN_LIMITS = "WithinLimits"
REASON_EXCEEDS_LIMITS = "ExceedsLimits"
REASON_QUARANTINED = "Quarantined"
REASON_NOT_SAMPLED = "NotSampled"
MESSAGE_LIMITS_NOT_READY = "the definition exceeds the expression limits on live workloads (see WithinLimits)"

EVENT_VALIDATION_FAILED = "ValidationFailed"
EVENT_EXCEEDS_LIMITS = "ExceedsLimits"
EVENT_CRD_NOT_FOUND = "CRDNotFound"


def crd_not_found(group: str, kind: str, version: str) -> str:  # upstream
    return f"CRD for {group}/{kind} not found or does not serve version {version}"


def within_limits(count: int, kind: str) -> str:
    if count == 0:
        return f"no {kind} exists yet to evaluate the definition on"
    return f"{count} live {kind} object(s) resolved within the expression limits"


def exceeds_limits(detail: str) -> str:
    return f"resolving a live workload exceeded the expression limits: {detail}"


def not_sampled(detail: str) -> str:
    return f"not evaluated on live workloads: {detail}"


def sample_forbidden(plural: str, group: str) -> str:
    resource = f"{plural}.{group}" if group else plural
    return not_sampled(f"the operator may not list {resource} (grant list to check the definition's cost)")


def crd_found(group: str, kind: str, version: str) -> str:
    return f"{group or 'core'}/{version}, Kind={kind} is served by the API server"


# --- admission messages (upstream, exact) ------------------------------------------------------


def duplicate_gvk(group: str, version: str, kind: str, name: str) -> str:  # upstream
    return (
        f'a Karta for group "{group}" version "{version}" kind "{kind}" already exists ("{name}"); '
        "only one Karta per group/version/kind is allowed"
    )


GVK_IMMUTABLE = "the root component GVK is immutable and cannot be changed after creation"  # upstream


def managed_label(key: str, value: str) -> str:  # upstream
    return (
        f'label "{key}" is managed by the operator and must equal "{value}"; it cannot be edited or removed'
    )


def label_value_invalid(key: str, value: str) -> str:
    return (
        f'the root component GVK cannot be indexed: "{value}" is not a valid value for label "{key}" '
        "(at most 63 characters: alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric)"
    )


# --- label values ------------------------------------------------------------------------------

_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def valid_label_value(value: str) -> bool:
    return len(value) <= 63 and bool(_LABEL_VALUE.match(value))


def index_labels(group: str, version: str, kind: str) -> dict[str, str]:
    """The three index labels for a root GVK. The core group is the empty string, which is a valid
    label value: KAI selects with ``run.ai/karta-group=<group>`` built from the pod owner's GVK,
    so a Pod Karta must carry ``run.ai/karta-group: ""`` to be found (no ``core`` alias)."""
    return {LABEL_GROUP: group, LABEL_VERSION: version, LABEL_KIND: kind}


def root_gvk(obj: Mapping[str, object]) -> tuple[str, str, str] | None:
    """(group, version, kind) of a Karta object's root component, or None when absent."""
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        return None
    sd = spec.get("structureDefinition")
    root = sd.get("rootComponent") if isinstance(sd, Mapping) else None
    kind = root.get("kind") if isinstance(root, Mapping) else None
    if not isinstance(kind, Mapping):
        return None
    return (str(kind.get("group") or ""), str(kind.get("version") or ""), str(kind.get("kind") or ""))


def claim_name(group: str, version: str, kind: str) -> str:
    """The name of the Lease that claims a root GVK for one Karta (a DNS label)."""
    digest = hashlib.sha256(f"{group}\x00{version}\x00{kind}".encode()).hexdigest()[:20]
    return f"karta-gvk-{digest}"
