"""Dynamic shell completion: TYPE (root kinds of the merged definitions, comma lists too), NAME
(objects of that type in the namespace ``get`` would search), pods for ``group``, definition
names and type words for ``explain``/``definitions``/``lint``, namespaces, kubeconfig contexts,
``-o`` and ``--phase`` values.

Every lookup runs in a daemon thread bounded by :data:`TIMEOUT` seconds (``$WMAP_COMPLETION_TIMEOUT``
overrides it, for slow clusters); a failure or a timeout offers nothing, silently (no warnings on the
terminal while the user types).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import click


def _timeout_from_env(default: float = 2.0) -> float:
    try:
        value = float(os.environ.get("WMAP_COMPLETION_TIMEOUT", default))
    except ValueError:
        return default
    return value if value > 0 else default


TIMEOUT = _timeout_from_env()
T = TypeVar("T")

__all__ = [
    "TIMEOUT",
    "bounded",
    "complete_context",
    "complete_definition",
    "complete_phase",
    "complete_pod",
    "complete_type_or_name",
    "namespaces",
]


def bounded(fn: Callable[[], list[T]], timeout: float = TIMEOUT) -> list[T]:
    """``fn()`` in a daemon thread; ``[]`` on error or when it takes longer than ``timeout``."""
    box: dict[str, list[T]] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException:  # completion must never print or fail
            box["value"] = []

    t = threading.Thread(target=run, daemon=True, name="wmap-complete")
    t.start()
    t.join(timeout)
    from workload_map.logs import escape_controls

    # The shell prints candidates at the prompt: one from the cluster with control characters (no
    # real Kubernetes name has any) is left out rather than shown or inserted.
    return [v for v in box.get("value", []) if not isinstance(v, str) or escape_controls(v) == v]


def _session(ctx: click.Context) -> Any:
    from workload_map.cli.common import Session, _state

    state = _state(ctx)
    state.conn.setdefault("request_timeout", f"{max(1, int(TIMEOUT))}s")
    return Session(state)


def complete_phase(_ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[str]:
    from workload_map.views.filters import PHASES

    head, _, last = incomplete.rpartition(",")
    prefix = head + "," if head else ""
    return [prefix + p for p in PHASES if p.startswith(last)]


def namespaces(ctx: click.Context, incomplete: str) -> list[str]:
    def fetch() -> list[str]:
        session = _session(ctx)
        try:
            items = session.client().list_all("/api/v1/namespaces")
        finally:
            session.close()
        names = [str((i.get("metadata") or {}).get("name") or "") for i in items]
        return sorted(n for n in names if n.startswith(incomplete))

    return bounded(fetch)


def _types(ctx: click.Context) -> list[str]:
    session = _session(ctx)
    try:
        types: list[str] = session.definitions().types()
        return types
    finally:
        session.close()


def _names(ctx: click.Context, token: str, prefix: str) -> list[str]:
    session = _session(ctx)
    try:
        rt = session.resolve_type(token)
        if rt.resource is None:
            return []
        items = session.client().list_all(rt.resource.path(session.namespace()))
    finally:
        session.close()
    names = [str((i.get("metadata") or {}).get("name") or "") for i in items]
    return sorted(n for n in names if n.startswith(prefix))


def complete_type_or_name(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[str]:
    if ctx.params.get("all_types") or ctx.params.get("file"):
        return []
    given = [a for a in (ctx.params.get("args") or ()) if a]
    if not given:
        if "/" in incomplete:
            token, _, prefix = incomplete.partition("/")
            return bounded(lambda: [f"{token}/{n}" for n in _names(ctx, token, prefix)])
        # kubectl's comma form: complete the last word of "jobsets,pyt"
        head, comma, last = incomplete.rpartition(",")
        lead = head + comma
        return bounded(lambda: [lead + t for t in _types(ctx) if t.startswith(last.lower())])
    if len(given) == 1 and "/" not in given[0]:
        return bounded(lambda: _names(ctx, given[0], incomplete))
    return []


def complete_pod(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[str]:
    """``group POD``: the pods of the namespace ``group`` would read."""

    def fetch() -> list[str]:
        session = _session(ctx)
        try:
            items = session.client().list_all(f"/api/v1/namespaces/{session.namespace()}/pods")
        finally:
            session.close()
        names = [str((i.get("metadata") or {}).get("name") or "") for i in items]
        return sorted(n for n in names if n.startswith(incomplete))

    return bounded(fetch)


def complete_definition(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[str]:
    """``explain``/``definitions``/``lint``: definition names and the type words they answer to."""

    def fetch() -> list[str]:
        session = _session(ctx)
        try:
            defs = session.definitions()
            words = {e.name for e in defs.entries} | set(defs.types())
        finally:
            session.close()
        return sorted(w for w in words if w.startswith(incomplete))

    return bounded(fetch)


def complete_context(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[str]:
    """``--context``: the contexts of the merged kubeconfig (``--kubeconfig`` or ``$KUBECONFIG``)."""
    from workload_map.cli.common import _state

    kubeconfig = _state(ctx).conn.get("kubeconfig")

    def fetch() -> list[str]:
        from workload_map.cluster.kubeconfig import ConnectionOptions, load_kubeconfig

        merged = load_kubeconfig(ConnectionOptions(kubeconfig=kubeconfig))
        return sorted(c for c in merged.contexts if c.startswith(incomplete))

    return bounded(fetch)
