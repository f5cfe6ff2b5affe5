"""The exporter's metric families and the per-workload rendering (see docs/metrics.md)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from workload_map import messages as msg
from workload_map.exporter.exposition import Family, encode, join_labels, label_text, sample_line
from workload_map.model.definition import ResourceStatus
from workload_map.resolve.dra import GPU_DEVICE_CLASSES, gpus_of
from workload_map.resolve.pods import PodAttribution
from workload_map.resolve.resources import ResourceTotals, sum_totals
from workload_map.resolve.types import Component, Workload

__all__ = [
    "ALL_PHASES",
    "FAMILIES",
    "WORKLOAD_FAMILIES",
    "render_workload",
    "resource_samples",
    "select_families",
]

BUILD_INFO = Family("wmap_build_info", "info", "Build information of the workload-map exporter.")
SHARD_INFO = Family(
    "wmap_exporter_shard_info",
    "info",
    "This exporter's shard (--shard) of --total-shards; workloads split by UID as kube-state-metrics does.",
)
WORKLOAD_INFO = Family(
    "wmap_workload_info",
    "info",
    "One series per exported (top-level) workload: its version, uid and the Karta definition used.",
)
PRIMARY_PHASE = Family(
    "wmap_workload_primary_phase",
    "gauge",
    "1 for the workload's primary (most severe matched) phase.",
)
PHASE = Family(
    "wmap_workload_phase",
    "gauge",
    "State set of the shared phases: 1 for every phase the workload's status matches, 0 for the others.",
)
COMPONENT_PODS = Family(
    "wmap_workload_component_pods",
    "gauge",
    "Pods per component: desired (from the definition's scale), current (attributed pods) and ready. "
    "Grouping components sum their children; the root component gives the workload total.",
)
INSTANCE_PODS = Family(
    "wmap_workload_instance_pods",
    "gauge",
    "Pods per instance of a component with several (a JobSet's replicated jobs, a Ray worker group): "
    "desired, current and ready, labelled like wmap_pod_workload_info's component and instance.",
)
RESOURCE_REQUESTS = Family(
    "wmap_workload_resource_requests",
    "gauge",
    "Resources the workload requests for its desired pods (pod template requests x desired replicas), "
    "by resource and unit (cpu in cores, memory in bytes, devices as counts).",
)
COMPONENT_RESOURCE_REQUESTS = Family(
    "wmap_workload_component_resource_requests",
    "gauge",
    "Like wmap_workload_resource_requests, per component (grouping components sum their children).",
)
UNATTRIBUTED_PODS = Family(
    "wmap_workload_unattributed_pods",
    "gauge",
    "Pods owned by the workload that no component's pod selector claims.",
)
POD_INFO = Family(
    "wmap_pod_workload_info",
    "info",
    "Attribution of a pod to its top-level workload, component and instance (join DCGM or cAdvisor "
    "series on namespace and pod).",
)
RESOLVE_FAILED = Family(
    "wmap_workload_resolve_failed",
    "gauge",
    "1 when the workload could not be resolved through its definition (see the exporter's log).",
)
RESOLVE_ERRORS = Family(
    "wmap_exporter_resolve_errors_total",
    "counter",
    "Workload object versions that failed to resolve, by kind.",
)
DEFINITION_QUARANTINED = Family(
    "wmap_definition_quarantined",
    "gauge",
    "1 while the definition is quarantined: it kept exceeding the expression limits (cost budget or "
    "deadline), so its workloads are not evaluated (wmap_workload_resolve_failed 1) until a retry succeeds.",
)
DEFINITION_LIMIT_FAILURES = Family(
    "wmap_definition_limit_failures_total",
    "counter",
    "Evaluations of the definition that exceeded the expression limits.",
)
DEFINITION_INFO = Family(
    "wmap_exporter_definition_info",
    "info",
    "Karta definitions in use: the watched group/version/kind, definition name, origin and whether the "
    "cluster serves the type.",
)
INFORMER_SYNCED = Family(
    "wmap_informer_synced", "gauge", "1 once the informer's first list completed, else 0."
)
INFORMER_LAST_EVENT = Family(
    "wmap_informer_last_event_timestamp_seconds",
    "gauge",
    "Unix time of the informer's last contact with fresh data (list, watch event or bookmark).",
)
INFORMER_LAST_SYNC = Family(
    "wmap_informer_last_sync_timestamp_seconds",
    "gauge",
    "Unix time of the informer's last complete list.",
)
INFORMER_OBJECTS = Family("wmap_informer_objects", "gauge", "Objects in the informer's store.")
INFORMER_RELISTS = Family(
    "wmap_informer_lists_total", "counter", "Complete lists the informer made (1 + relists)."
)
INFORMER_WATCH_ERRORS = Family(
    "wmap_informer_watch_errors_total",
    "counter",
    "Watch and list failures (connection errors, API errors) the informer recovered from.",
)
SERIES_LIMIT = Family(
    "wmap_exporter_series_limit",
    "gauge",
    "The --max-series ceiling on workload series per scrape (0: none), as kube-state-metrics' "
    "kube_state_metrics_list_objects_limit reports its --object-limit.",
)
WORKLOAD_SERIES = Family(
    "wmap_exporter_workload_series",
    "gauge",
    "Workload series (wmap_workload_* and wmap_pod_workload_info) in this scrape.",
)
DROPPED_SERIES = Family(
    "wmap_exporter_dropped_series",
    "gauge",
    "Workload series left out of this scrape by the --max-series ceiling (whole workloads).",
)
DROPPED_WORKLOADS = Family(
    "wmap_exporter_dropped_workloads",
    "gauge",
    "Workloads left out of this scrape by the --max-series ceiling.",
)
QUEUE_DEPTH = Family("wmap_exporter_queue_depth", "gauge", "Workloads waiting to be re-rendered.")
READY = Family("wmap_exporter_ready", "gauge", "1 when every informer has synced.")

#: Families rendered from the per-workload cache, in output order.
WORKLOAD_FAMILIES: tuple[Family, ...] = (
    WORKLOAD_INFO,
    PRIMARY_PHASE,
    PHASE,
    COMPONENT_PODS,
    INSTANCE_PODS,
    RESOURCE_REQUESTS,
    COMPONENT_RESOURCE_REQUESTS,
    UNATTRIBUTED_PODS,
    RESOLVE_FAILED,
    POD_INFO,
)
FAMILIES: tuple[Family, ...] = (
    BUILD_INFO,
    SHARD_INFO,
    *WORKLOAD_FAMILIES,
    RESOLVE_ERRORS,
    DEFINITION_INFO,
    INFORMER_SYNCED,
    INFORMER_LAST_EVENT,
    INFORMER_LAST_SYNC,
    INFORMER_OBJECTS,
    INFORMER_RELISTS,
    INFORMER_WATCH_ERRORS,
    SERIES_LIMIT,
    WORKLOAD_SERIES,
    DROPPED_SERIES,
    DROPPED_WORKLOADS,
    QUEUE_DEPTH,
    READY,
)

#: Longest --metric-allowlist/--metric-denylist entry read (they are matched against the ~10
#: workload family names once, at start).
MAX_PATTERN_LENGTH = 256


def select_families(allow: Sequence[str] = (), deny: Sequence[str] = ()) -> tuple[Family, ...]:
    """The workload families to export, as kube-state-metrics' ``--metric-allowlist`` and
    ``--metric-denylist`` select its metrics: each entry an exact name or a regular expression
    searched in the name (unanchored, as kube-state-metrics matches; write ``^...$`` to anchor);
    the two lists are mutually exclusive. The exporter's own families are always exported.
    ``ValueError`` names the entry that is not a valid expression or matches no workload family
    (a typo would otherwise silently drop or keep everything)."""
    if allow and deny:
        raise ValueError(msg.METRIC_LISTS_EXCLUSIVE)
    flag, entries = ("--metric-allowlist", allow) if allow else ("--metric-denylist", deny)
    names = [fam.name for fam in WORKLOAD_FAMILIES]
    matched: set[str] = set()
    for entry in entries:
        if len(entry) > MAX_PATTERN_LENGTH:
            raise ValueError(msg.metric_list_entry_too_long(flag, MAX_PATTERN_LENGTH))
        try:
            pattern = re.compile(entry)
        except re.error as exc:
            raise ValueError(msg.metric_list_bad_pattern(flag, entry, str(exc))) from None
        hits = {name for name in names if name == entry or pattern.search(name)}
        if not hits:
            raise ValueError(msg.metric_list_matches_nothing(flag, entry, names))
        matched |= hits
    if not entries:
        return WORKLOAD_FAMILIES
    return tuple(fam for fam in WORKLOAD_FAMILIES if (fam.name in matched) == bool(allow))


ALL_PHASES: tuple[str, ...] = tuple(s.value for s in ResourceStatus)
_BYTE_RESOURCES = ("memory", "ephemeral-storage")

Labels = list[tuple[str, str]]


def _unit(resource: str) -> str:
    if resource == "cpu":
        return "core"
    if resource in _BYTE_RESOURCES or resource.startswith("hugepages-"):
        return "byte"
    return "integer"


def resource_samples(totals: ResourceTotals) -> list[tuple[str, str, float]]:
    """``(resource, unit, value)``: cpu, memory and nvidia.com/gpu always, other extended
    resources when non-zero. Whole GPUs requested through DRA claims (the classes of NVIDIA's DRA
    driver, whose ``gpu.nvidia.com`` DeviceClass maps ``nvidia.com/gpu``) count in
    ``nvidia.com/gpu``, as everywhere else; the other device classes (``mig.nvidia.com``...) are
    counts under their class name when non-zero."""
    out: list[tuple[str, str, float]] = [
        ("cpu", "core", totals.cpu_millis / 1000),
        ("memory", "byte", totals.memory_bytes),
    ]
    extended = dict(totals.extended)
    dra_gpus = gpus_of(totals.devices)
    out.append(("nvidia.com/gpu", "integer", extended.pop("nvidia.com/gpu", 0) + dra_gpus))
    for cls, n in totals.devices.items():
        if cls not in GPU_DEVICE_CLASSES and n:
            extended[cls] = extended.get(cls, 0) + n
    for name in sorted(extended):
        if extended[name]:
            out.append((name, _unit(name), extended[name]))
    return out


def _component_totals(workload: Workload) -> dict[str, ResourceTotals]:
    out: dict[str, ResourceTotals] = {}

    def total(comp: Component) -> ResourceTotals:
        if comp.name not in out:
            out[comp.name] = sum_totals(
                [comp.resources, *(total(workload.components[c]) for c in comp.children)]
            )
        return out[comp.name]

    for comp in workload.components.values():
        total(comp)
    return out


#: ``state="..."`` of the pod count series, written once.
_STATE_TEXT = {state: label_text([("state", state)]) for state in ("desired", "current", "ready")}


class _Lines:
    """A workload's sample lines by family, from label texts already written (:func:`label_text`):
    labels shared by many lines (the workload's, a component's, the pods' workload labels) are
    escaped once."""

    def __init__(self) -> None:
        self.out: dict[str, list[str]] = {}

    def add(self, family: Family, value: float, *labels: str) -> None:
        self.out.setdefault(family.name, []).append(sample_line(family.name, join_labels(*labels), value))

    def counts(self, family: Family, labels: str, desired: int, current: int, ready: int) -> None:
        """The desired, current and ready pod counts of ``labels``."""
        for state, value in (("desired", desired), ("current", current), ("ready", ready)):
            self.add(family, value, labels, _STATE_TEXT[state])

    def encoded(self) -> dict[str, bytes]:
        return {k: encode("".join(v)) for k, v in self.out.items()}


def render_workload(
    base: Labels,
    info_labels: Labels,
    workload: Workload | None,
    attribution: PodAttribution | None,
    pods: Mapping[str, Mapping[str, Any]],
    pod_labels: Sequence[tuple[str, str]],
) -> dict[str, bytes]:
    """Family name -> sample lines for one workload.

    ``base``: namespace/group/kind/name labels; ``info_labels``: extra labels of the info series;
    ``workload``/``attribution`` are ``None`` when resolving failed; ``pods``: the owned pods by
    name; ``pod_labels``: workload labels of the pod info series (``workload_kind``...).
    Labels shared by many lines (``base``, a component's, ``pod_labels``) are escaped once.
    """
    lines = _Lines()
    add, counts = lines.add, lines.counts
    base_text = label_text(base)
    add(WORKLOAD_INFO, 1, base_text, label_text(info_labels))
    if workload is None:
        add(RESOLVE_FAILED, 1, base_text)
    else:
        add(RESOLVE_FAILED, 0, base_text)
        add(PRIMARY_PHASE, 1, base_text, label_text([("phase", workload.primary_phase.value)]))
        matched = {p.value for p in workload.phases}
        for phase in ALL_PHASES:
            add(PHASE, 1 if phase in matched else 0, base_text, label_text([("phase", phase)]))
        for resource, unit, value in resource_samples(workload.resources):
            add(RESOURCE_REQUESTS, value, base_text, label_text([("resource", resource), ("unit", unit)]))
        for comp_name, totals in _component_totals(workload).items():
            comp_text = join_labels(base_text, label_text([("component", comp_name)]))
            for resource, unit, value in resource_samples(totals):
                add(
                    COMPONENT_RESOURCE_REQUESTS,
                    value,
                    comp_text,
                    label_text([("resource", resource), ("unit", unit)]),
                )
    claimed: set[str] = set()
    pod_labels_text = label_text(pod_labels)
    if attribution is not None:
        for cp in attribution.components:
            comp_text = join_labels(base_text, label_text([("component", cp.name)]))
            counts(COMPONENT_PODS, comp_text, cp.desired, cp.current, cp.ready)
            for inst in cp.instances:
                if inst.instance_id:  # the roles a query must tell apart
                    inst_text = join_labels(comp_text, label_text([("instance", inst.instance_id)]))
                    counts(INSTANCE_PODS, inst_text, inst.desired, inst.current, inst.ready)
            for inst in cp.instances:
                placed = label_text([("component", cp.name), ("instance", inst.instance_id)])
                for p in inst.pods:
                    claimed.add(p.name)
                    add(POD_INFO, 1, *_pod_info(pods.get(p.name), p.name, pod_labels_text, placed))
        add(UNATTRIBUTED_PODS, len(attribution.unattributed), base_text)
    unplaced = label_text([("component", ""), ("instance", "")])
    for name in sorted(pods):
        if name not in claimed:
            add(POD_INFO, 1, *_pod_info(pods[name], name, pod_labels_text, unplaced))
    return lines.encoded()


def _pod_info(
    pod: Mapping[str, Any] | None, name: str, pod_labels: str, placed: str
) -> tuple[str, str, str, str]:
    """The label texts of a pod's info series, in order: its namespace, name and uid, then
    ``pod_labels`` (the workload's, written), ``placed`` (its component and instance, written),
    then its node."""
    meta = pod.get("metadata") if pod is not None else None
    meta = meta if isinstance(meta, Mapping) else {}
    spec = pod.get("spec") if pod is not None else None
    node = spec.get("nodeName") if isinstance(spec, Mapping) else None
    own = label_text(
        [("namespace", str(meta.get("namespace") or "")), ("pod", name), ("uid", str(meta.get("uid") or ""))]
    )
    return own, pod_labels, placed, label_text([("node", node if isinstance(node, str) else "")])


def render_generic(
    base: Labels,
    info_labels: Labels,
    phase: str,
    pods: Mapping[str, Mapping[str, Any]],
    pod_labels: Sequence[tuple[str, str]],
) -> dict[str, bytes]:
    """The lines of a workload read generically (``--generic-types``): its info series (definition
    and origin ``generic``), its phase by kstatus's rules, the requests of the pods its owner chain
    reaches and those pods as one component, ``pods``."""
    from workload_map.resolve.pods import pod_resources, pod_status

    lines = _Lines()
    add = lines.add
    base_text = label_text(base)
    add(WORKLOAD_INFO, 1, base_text, label_text(info_labels))
    add(RESOLVE_FAILED, 0, base_text)
    add(PRIMARY_PHASE, 1, base_text, label_text([("phase", phase)]))
    for p in ALL_PHASES:
        add(PHASE, 1 if p == phase else 0, base_text, label_text([("phase", p)]))
    ready = sum(1 for pod in pods.values() if pod_status(pod)[1])
    for resource, unit, value in resource_samples(sum_totals(pod_resources(p) for p in pods.values())):
        add(RESOURCE_REQUESTS, value, base_text, label_text([("resource", resource), ("unit", unit)]))
    lines.counts(
        COMPONENT_PODS,
        join_labels(base_text, label_text([("component", "pods")])),
        len(pods),
        len(pods),
        ready,
    )
    pod_labels_text = label_text(pod_labels)
    placed = label_text([("component", "pods"), ("instance", "")])
    for name in sorted(pods):
        add(POD_INFO, 1, *_pod_info(pods[name], name, pod_labels_text, placed))
    return lines.encoded()
