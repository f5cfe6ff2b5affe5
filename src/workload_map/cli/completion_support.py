"""Dynamic shell completion: TYPE (root kinds of the merged definitions), NAME (objects of that
type in the namespace ``get`` would search), namespaces, ``-o`` and ``--phase`` values.

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

__all__ = ["TIMEOUT", "bounded", "complete_phase", "complete_type_or_name", "namespaces"]


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
    return box.get("value", [])


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
        return bounded(lambda: [t for t in _types(ctx) if t.startswith(incomplete.lower())])
    if len(given) == 1 and "/" not in given[0]:
        return bounded(lambda: _names(ctx, given[0], incomplete))
    return []
