"""``wmap record TYPE/NAME --out FILE``: watch a live workload and write every distinct state
in the upstream recording format, so users build their own corpus for ``wmap test``.

Each STATE event holds the object (``managedFields``, ``resourceVersion`` and ``selfLink``
stripped, as upstream's recorder stores it), its resourceVersion, every phase the definition
matches (``phases``) and the primary one (``state``). An update that changes nothing but those
volatile fields is not a new state. The file is rewritten whole (temporary file, then rename)
after each state, so stopping at any moment leaves a complete recording. Ends on Ctrl-C, when
the object is deleted, when ``--until`` is reached, after ``--timeout`` or ``--max-events``.
"""

from __future__ import annotations

import copy
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import click

from workload_map.cli import exit_codes, terminal
from workload_map.cli.common import Session, connection_options, split_type_name
from workload_map.cli.completion_support import complete_phase, complete_type_or_name
from workload_map.cli.errors import CommandError
from workload_map.cli.main import get_state

VOLATILE = ("managedFields", "resourceVersion", "selfLink")


def _stripped(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        for key in VOLATILE:
            meta.pop(key, None)
    return out


def _summary(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run-length of the phases, as upstream's ``summary``."""
    out: list[dict[str, Any]] = []
    for e in events:
        if out and out[-1]["phases"] == e["phases"]:
            out[-1]["amount"] += 1
        else:
            out.append({"amount": 1, "phases": list(e["phases"])})
    return out


def _write(path: Path, doc: dict[str, Any]) -> None:
    import yaml

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            yaml.safe_dump(doc, f, sort_keys=False, width=1_000_000)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@click.command(
    "record",
    short_help="Record a live workload's states for wmap test.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument(
    "args", nargs=-1, required=True, metavar="TYPE/NAME | TYPE NAME", shell_complete=complete_type_or_name
)
@click.option(
    "--out", "out", required=True, type=click.Path(dir_okay=False), help="The recording file to write."
)
@click.option("--flow", default="recorded", show_default=True, help="The flow name stored in the recording.")
@click.option(
    "--until",
    "until",
    default=None,
    metavar="PHASE",
    shell_complete=complete_phase,
    help="Stop once this phase is matched.",
)
@click.option("--timeout", type=float, default=0.0, help="Stop after this many seconds (0: no limit).")
@click.option("--max-events", type=int, default=1000, show_default=True, help="Stop after this many states.")
@connection_options
def command(
    args: tuple[str, ...], out: str, flow: str, until: str | None, timeout: float, max_events: int
) -> None:
    """Watch one workload and write each distinct state (object, phases) to FILE in the upstream
    recording format; replay it later with `wmap test TYPE FILE`.

    \b
    Examples:
      wmap record pytorchjob/llama -n ml --out cases/llama.yaml --until Running
      wmap record jobset train --out train.yaml --timeout 600
    """
    from workload_map.views.filters import PHASES

    if until is not None and until not in PHASES:
        raise click.UsageError(f'invalid --until "{until}": must be one of {", ".join(PHASES)}')
    if max_events < 1:
        raise click.UsageError("--max-events must be at least 1")
    if timeout < 0:
        raise click.UsageError("--timeout must not be negative")
    token, name, _ = split_type_name(args)
    if name is None:
        raise click.UsageError("a NAME is required: give it as TYPE/NAME or as TYPE NAME")
    session = Session(get_state())
    try:
        _record(session, token, name, Path(out), flow, until, timeout, max_events)
    finally:
        session.close()


def _record(
    session: Session,
    token: str,
    name: str,
    out: Path,
    flow: str,
    until: str | None,
    timeout: float,
    max_events: int,
) -> None:
    from workload_map.cli.live import read_workload
    from workload_map.errors import GoneError, NotFoundError
    from workload_map.resolve import compile_definition, resolve

    rt, obj = read_workload(session, token, name)
    res = rt.resource
    assert res is not None  # read_workload refused an uninstalled type
    namespace = session.namespace() if res.namespaced else None
    client = session.client()
    path = res.path(namespace, name)
    compiled = compile_definition(rt.entry.karta)
    doc: dict[str, Any] = {
        "schemaVersion": 1,
        "kartaName": rt.entry.name,
        "kartaFile": rt.entry.origin,
        "flow": flow,
        "events": [],
        "summary": [],
        "result": {"succeeded": until is None, "ended": ""},
    }
    events: list[dict[str, Any]] = doc["events"]
    last: dict[str, Any] | None = None
    deadline = time.monotonic() + timeout if timeout else None

    def add(o: dict[str, Any]) -> bool:
        """Record ``o`` if it is a new state; True when recording should stop."""
        nonlocal last
        o.setdefault("apiVersion", res.group_version)
        o.setdefault("kind", res.kind)
        state = _stripped(o)
        if state == last:
            return False
        last = state
        status = resolve(compiled, o).status
        phases = [p.value for p in status.phases]
        rv = str((o.get("metadata") or {}).get("resourceVersion") or "")
        events.append(
            {
                "kind": "STATE",
                "object": state,
                "phases": phases,
                "resourceVersion": rv,
                "state": status.primary_phase.value,
            }
        )
        doc["summary"] = _summary(events)
        reached = until is not None and until in phases
        if reached:
            doc["result"] = {"succeeded": True, "ended": "until"}
        _write(out, doc)
        terminal.echo(f"{len(events)}: {','.join(phases)} (resourceVersion {terminal.field(rv)})", err=True)
        return reached or len(events) >= max_events

    def finish(how: str) -> None:
        if doc["result"]["ended"] != "until":
            doc["result"] = {"succeeded": until is None, "ended": how}
        _write(out, doc)
        click.echo(f"recorded {len(events)} states to {out} ({how})", err=True)

    if add(obj):
        finish("until" if doc["result"]["ended"] == "until" else "max-events")
        return
    rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
    try:
        while True:
            remaining = None if deadline is None else max(1, int(deadline - time.monotonic()))
            try:
                for ev in client.watch(
                    res.path(namespace),
                    resource_version=rv or None,
                    field_selector=f"metadata.name={name}",
                    timeout_seconds=remaining,
                ):
                    rv = ev.resource_version or rv
                    if ev.type == "DELETED":
                        finish("deleted")
                        return
                    if ev.type in ("ADDED", "MODIFIED") and add(ev.object):
                        finish("until" if doc["result"]["ended"] == "until" else "max-events")
                        return
                    if deadline is not None and time.monotonic() >= deadline:
                        break
            except GoneError:
                try:
                    obj = client.get(path)
                except NotFoundError:
                    finish("deleted")
                    return
                rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
                if add(obj):
                    finish("until" if doc["result"]["ended"] == "until" else "max-events")
                    return
            if deadline is not None and time.monotonic() >= deadline:
                finish("timeout")
                if until is not None:
                    raise CommandError(f"--until {until} not reached in {timeout:g}s", exit_codes.ERROR)
                return
    except KeyboardInterrupt:
        finish("interrupted")
