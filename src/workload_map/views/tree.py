"""``describe``'s human output: header, component tree, phase and why, resources table,
unattributed pods, Events.

Layout (upstream-spec 5.5)::

    JobSet/train   namespace: ml   definition: jobset-x-k8s-io-jobset-v1alpha2 (catalog)   age: 2h

    `-- replicatedjob    3/3 ready   gpu: 12   node-1,node-2
        |-- leader       1/1 ready   gpu: 4    node-1
        |   `-- train-leader-0-0  Running   gpu: 4   node-1
        ...

    Phase: Running
      Initializing: jobset rule: ...      (phases other than Running/Completed: the rule behind them)

    Waiting on:                           (components short of ready pods; not when settled)
      workers: 1/2 ready
        train-workers-1   Pending   0/8 nodes are available: ...

    Conditions:                           (the root's, when it has any)
      Type  Status  Reason  Age  Message

    Resources:
    COMPONENT   REPLICAS   GPU   CPU   MEMORY
    ...
    TOTAL       3          12    12    48Gi

Branch glyphs ``|-- `` and ``\\`-- `` (last), indentation ``|   `` or four spaces. The name column
is followed by two spaces, every other column by three. Component cells: name;
``<ready>/<desired> ready`` (file mode: ``replicas: <desired>``); ``gpu: <n>`` (blank when 0);
comma-joined nodes. Pod cells: name; ``<Phase>`` or ``<Phase> (<Reason>)``; ``gpu: <n>``; node or
``<none>``. Pods come before a component's child components.

``pod_limit`` (per component) shows unhealthy pods (not ready and not Succeeded) first and
replaces the rest with ``...  and <N> more (<K> unhealthy shown)`` (or ``<K> of <M>``).
``component_limit`` (per parent) keeps components with an unhealthy pod first, then those with
fewer pods than desired, then the rest, shows them in declared order and closes with
``...  and <N> more component(s)`` plus ``(<K> unhealthy, <J> with missing pods)`` parts. The
resources table is never truncated and lists components, not replicas: a component split into
``<component>[<replicaKey>]`` rows (LWS groups) appears once with its whole request.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from workload_map.logs import escape_controls as _one_line
from workload_map.views.cost import cost_lines
from workload_map.views.format import age, columns, cpu_text, memory_text
from workload_map.views.model import ComponentView, DescribeView, PodView, Resources

__all__ = ["events_lines", "render_describe", "resources_rows", "tree_rows", "why_lines"]

Row = list[str]


def _gpu(n: int) -> str:
    return f"gpu: {n}" if n else ""


def _pod_status(p: PodView) -> str:
    """kubectl's STATUS where it says more than the phase (``CrashLoopBackOff``, ``Init:0/2``),
    else the phase with the reason it is not ready; restarts when there were any."""
    if p.status and p.status != p.phase:
        text = p.status
    else:
        text = f"{p.phase} ({p.reason})" if p.reason else p.phase
    return f"{text}, {p.restarts} restarts" if p.restarts else text


def _limit_pods(pods: Sequence[PodView], limit: int) -> tuple[list[PodView], str | None]:
    if limit <= 0 or len(pods) <= limit:
        return list(pods), None
    ordered = sorted(pods, key=lambda p: 0 if p.unhealthy else 1)  # stable
    shown = ordered[:limit]
    unhealthy_total = sum(1 for p in pods if p.unhealthy)
    unhealthy_shown = sum(1 for p in shown if p.unhealthy)
    more = len(pods) - limit
    if unhealthy_shown == unhealthy_total:
        note = f"and {more} more ({unhealthy_shown} unhealthy shown)"
    else:
        note = f"and {more} more ({unhealthy_shown} of {unhealthy_total} unhealthy shown)"
    return shown, note


def _missing(c: ComponentView) -> bool:
    return c.replicas.current < c.replicas.desired


def _limit_components(comps: Sequence[ComponentView], limit: int) -> tuple[list[ComponentView], str | None]:
    if limit <= 0 or len(comps) <= limit:
        return list(comps), None

    def rank(i: int) -> tuple[int, int]:
        c = comps[i]
        if c.any_unhealthy():
            return (0, i)
        if _missing(c):
            return (1, i)
        return (2, i)

    keep = sorted(sorted(range(len(comps)), key=rank)[:limit])
    kept = set(keep)
    hidden = [c for i, c in enumerate(comps) if i not in kept]
    parts: list[str] = []
    unhealthy = sum(1 for c in hidden if c.any_unhealthy())
    missing = sum(1 for c in hidden if not c.any_unhealthy() and _missing(c))
    if unhealthy:
        parts.append(f"{unhealthy} unhealthy")
    if missing:
        parts.append(f"{missing} with missing pods")
    note = f"and {len(hidden)} more component(s)" + (f" ({', '.join(parts)})" if parts else "")
    return [comps[i] for i in keep], note


def tree_rows(
    components: Sequence[ComponentView],
    *,
    file_mode: bool = False,
    pod_limit: int = 0,
    component_limit: int = 0,
) -> list[Row]:
    """The tree as rows of cells (name with glyphs, status, gpu, nodes)."""
    rows: list[Row] = []

    def comp_cells(c: ComponentView, prefix: str) -> Row:
        status = (
            f"replicas: {c.replicas.desired}"
            if file_mode
            else f"{c.replicas.ready}/{c.replicas.desired} ready"
        )
        return [prefix + c.name, status, _gpu(c.resources.gpus), ",".join(c.nodes)]

    def walk(items: Sequence[ComponentView], indent: str) -> None:
        shown, note = _limit_components(items, component_limit)
        entries: list[tuple[str, ComponentView | None]] = [("c", c) for c in shown]
        if note is not None:
            entries.append(("note", None))
        for i, (what, comp) in enumerate(entries):
            last = i == len(entries) - 1
            glyph = "`-- " if last else "|-- "
            child_indent = indent + ("    " if last else "|   ")
            if comp is None:
                rows.append([indent + glyph + "...", note or "", "", ""])
                continue
            rows.append(comp_cells(comp, indent + glyph))
            pods, pod_note = _limit_pods(comp.pods, pod_limit)
            sub: list[tuple[str, PodView | ComponentView | None]] = [("p", p) for p in pods]
            if pod_note is not None:
                sub.append(("pnote", None))
            has_children = bool(comp.children)
            for j, (_kind, item) in enumerate(sub):
                plast = j == len(sub) - 1 and not has_children
                pglyph = "`-- " if plast else "|-- "
                if isinstance(item, PodView):
                    rows.append(
                        [
                            child_indent + pglyph + item.name,
                            _pod_status(item),
                            _gpu(item.resources.gpus),
                            item.node or "<none>",
                        ]
                    )
                else:
                    rows.append([child_indent + pglyph + "...", pod_note or "", "", ""])
            if has_children:
                walk(comp.children, child_indent)
            del what

    walk(components, "")
    return rows


def resources_rows(view: DescribeView) -> list[Row]:
    """``COMPONENT REPLICAS GPU CPU MEMORY`` rows (depth-first, grouping rows skipped) and TOTAL."""
    rows: list[Row] = [["COMPONENT", "REPLICAS", "GPU", "CPU", "MEMORY"]]
    replicas = 0

    def cells(name: str, n: int, r: Resources) -> Row:
        return [name, str(n), str(r.gpus), cpu_text(r.cpu_millis), memory_text(r.memory_bytes)]

    def walk(items: Sequence[ComponentView]) -> None:
        nonlocal replicas
        for c in items:
            # A row split per replica lists its components once, not once per replica.
            kids = c.children if c.component_rows is None else c.component_rows
            skip = (
                c.grouping
                and not c.pods
                and c.own_resources.is_empty
                and (c.replicas.desired == sum(k.replicas.desired for k in kids))
            )
            if not skip:
                rows.append(cells(c.name, c.own_desired, c.own_resources))
                replicas += c.own_desired
            walk(kids)

    walk(view.components)
    rows.append(cells("TOTAL", replicas, view.resources))
    return rows


def render_describe(
    view: DescribeView, *, pod_limit: int = 0, component_limit: int = 0, now: datetime | None = None
) -> str:
    """The full human output of ``describe`` (trailing newline included)."""
    v = view.view
    # Names and phases come from the cluster and the definition: one line each, whatever they hold.
    head = [
        _one_line(f"{v.kind}/{v.name}"),
        _one_line(f"namespace: {v.namespace or '<none>'}"),
        _one_line(f"definition: {v.definition} ({v.origin})"),
    ]
    if not view.file_mode:
        head.append(f"age: {age(v.created_at, now)}")
    lines = ["   ".join(head)]
    if view.file_mode:
        # The phase a manifest's own status gives, as the library resolves the file; pods are
        # never in a manifest, so ready counts stay unknown.
        source = "from the manifest's status" if view.manifest_status else "the manifest has no status"
        lines.append(f"Phase: {_one_line(','.join(v.phases))} ({source}; file mode: no pods)")
    if view.components:
        lines.append("")
        rows = tree_rows(
            view.components, file_mode=view.file_mode, pod_limit=pod_limit, component_limit=component_limit
        )
        lines += columns(rows, pads=[2, 3, 3, 3])
    if not view.file_mode:
        lines += ["", f"Phase: {_one_line(','.join(v.phases))}"]
        if view.reading:
            lines.append(f"  ({_one_line(view.reading)})")
    lines += why_lines(view, now)
    lines += ["", "Resources:"]
    lines += columns(resources_rows(view))
    lines += cost_lines(v.cost)
    if view.unattributed:
        lines += ["", "Unattributed pods:"]
        urows: list[Row] = [["NAME", "PHASE", "NODE", "REASON"]]
        for u in view.unattributed:
            urows.append([u.name, u.phase or "Unknown", u.node or "<none>", u.reason])
        lines += columns(urows)
    lines += events_lines(view, now)
    return "\n".join(lines) + "\n"


def why_lines(view: DescribeView, now: datetime | None = None) -> list[str]:
    """Under the phase: the rule behind each phase (``Initializing: jobset rule: condition X is
    False``), the components short of ready pods with the pods holding them, then the
    workload's conditions as a table (kubectl's columns plus AGE and MESSAGE)."""
    lines: list[str] = []
    from workload_map.views.why import EXPLAINED

    for r in view.phase_reasons:
        if r.phase in EXPLAINED:
            lines.append(_one_line(f"  {r.phase}: {r.component} rule: {r.rule}"))
    if view.holdups:
        lines += ["", "Waiting on:"]
        for h in view.holdups:
            missing = f", {h.missing} not created" if h.missing else ""
            lines.append(_one_line(f"  {h.component}: {h.ready}/{h.desired} ready{missing}"))
            rows: list[Row] = [[p.name, p.status, p.message or ""] for p in h.pods]
            lines += ["    " + ln for ln in columns(rows)]
            if h.more:
                lines.append(f"    ...  and {h.more} more not ready")
    if view.conditions:
        lines += ["", "Conditions:"]
        rows = [["Type", "Status", "Reason", "Age", "Message"]]
        for c in view.conditions:
            when = age(c.last_transition, now) if c.last_transition else ""
            rows.append([c.type, c.status, c.reason or "", when, " ".join((c.message or "").split())])
        lines += ["  " + ln for ln in columns(rows, pads=2)]
    return lines


def events_lines(view: DescribeView, now: datetime | None = None) -> list[str]:
    """kubectl describe's Events section, merged over the workload, its child objects and its
    pods (an Object column says which); nothing when events were not read."""
    if view.events is None:
        return []
    if not view.events:
        return ["", "Events:  <none>"]
    rows: list[Row] = [["Type", "Reason", "Age", "From", "Object", "Message"]]
    rows.append(["----", "------", "----", "----", "------", "-------"])  # kubectl's rulers
    for e in view.events:
        rows.append([e.type, e.reason, e.age(now), e.source, e.object, " ".join(e.message.split())])
    return ["", "Events:", *("  " + ln for ln in columns(rows, pads=2))]
