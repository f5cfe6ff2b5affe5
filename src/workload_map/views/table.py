"""``get`` tables: one row per :class:`~workload_map.views.model.WorkloadView`.

Columns: ``[NAMESPACE]  NAME  [TYPE]  PHASE  COMPONENTS  GPU  AGE``, NAMESPACE first and only
across namespaces (``-A``), as kubectl prints it; ``-o wide`` adds ``READY``
(ready/total pods, from one pod list per namespace), ``CPU``, ``MEMORY`` and ``ORIGIN``. With a
Prometheus configured (``cost_window`` given), ``GPU-HOURS(<window>)`` and ``COST(<window>)``
follow GPU, and ``-o wide`` adds ``COST/H`` (views.cost). TYPE
appears with ``--all-types`` (the Kind, ``Kind.group`` when the Kind is covered in several
groups). COMPONENTS lists pod-bearing components (or instances) as ``name:desired``, or
``name:ready/desired`` when pods were listed, at most :data:`MAX_COMPONENTS` then ``+N``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from workload_map.views.cost import cost_cells, cost_headers
from workload_map.views.format import age, columns, cpu_text, memory_text
from workload_map.views.model import WorkloadView

MAX_COMPONENTS = 4

__all__ = ["MAX_COMPONENTS", "components_text", "render_table", "table_rows"]


def components_text(view: WorkloadView, limit: int = MAX_COMPONENTS) -> str:
    parts: list[str] = []
    for c in view.components[:limit]:
        parts.append(f"{c.name}:{c.desired}" if c.ready is None else f"{c.name}:{c.ready}/{c.desired}")
    hidden = len(view.components) - limit
    if hidden > 0:
        parts.append(f"+{hidden}")
    return ",".join(parts) if parts else "<none>"


def table_rows(
    views: Sequence[WorkloadView],
    *,
    wide: bool = False,
    show_type: bool = False,
    type_labels: Mapping[tuple[str, str], str] | None = None,
    now: datetime | None = None,
    show_namespace: bool = False,
    label_columns: Sequence[str] = (),
    show_labels: bool = False,
    cost_window: str | None = None,
) -> list[list[str]]:
    header = ["NAMESPACE", "NAME"] if show_namespace else ["NAME"]
    if show_type:
        header.append("TYPE")
    header += ["PHASE", "COMPONENTS"]
    if wide:
        header.append("READY")
    header.append("GPU")
    if cost_window is not None:
        header += cost_headers(cost_window, wide)
    if wide:
        header += ["CPU", "MEMORY"]
    header.append("AGE")
    if wide:
        header.append("ORIGIN")
    # kubectl: -L columns named by the key's last path segment, then LABELS (sorted k=v).
    header += [key.rsplit("/", 1)[-1].upper() for key in label_columns]
    if show_labels:
        header.append("LABELS")
    rows = [header]
    for v in views:
        row = [v.namespace or "<none>", v.name] if show_namespace else [v.name]
        if show_type:
            label = (type_labels or {}).get((v.api_version, v.kind), v.kind)
            row.append(label)
        row += [",".join(v.phases), components_text(v)]
        if wide:
            row.append("<unknown>" if v.pods_total is None else f"{v.pods_ready or 0}/{v.pods_total}")
        row.append(str(v.resources.gpus))
        if cost_window is not None:
            row += cost_cells(v.cost, wide)
        if wide:
            row += [cpu_text(v.resources.cpu_millis), memory_text(v.resources.memory_bytes)]
        row.append(age(v.created_at, now))
        if wide:
            row.append(v.origin)
        labels = dict(v.labels)
        row += [labels.get(key, "") for key in label_columns]
        if show_labels:
            row.append(",".join(f"{k}={val}" for k, val in v.labels) or "<none>")
        rows.append(row)
    return rows


def render_table(
    views: Sequence[WorkloadView],
    *,
    wide: bool = False,
    show_type: bool = False,
    type_labels: Mapping[tuple[str, str], str] | None = None,
    now: datetime | None = None,
    no_headers: bool = False,
    show_namespace: bool = False,
    label_columns: Sequence[str] = (),
    show_labels: bool = False,
    cost_window: str | None = None,
) -> str:
    """The table text (with a trailing newline); ``no_headers`` leaves the header row out, and the
    column widths then come from the rows alone (kubectl's tab writer never sees the header)."""
    rows = table_rows(
        views,
        wide=wide,
        show_type=show_type,
        type_labels=type_labels,
        now=now,
        show_namespace=show_namespace,
        label_columns=label_columns,
        show_labels=show_labels,
        cost_window=cost_window,
    )
    return "\n".join(columns(rows[1:] if no_headers else rows)) + "\n"
