"""``wmap interpret --operation OP -f OBJECT``: Karmada's resource interpreter offline.

The answer is the one the webhook (``wmap karmada webhook``) sends Karmada for the same request:
a ``config.karmada.io/v1alpha1`` ``ResourceInterpreterContext`` with its ``response`` (as
``karmadactl interpret`` runs a customization offline). Patches are base64 JSON patches, as on the
wire. A request the interpreter refuses is an error (exit 1) naming the reason.
"""

from __future__ import annotations

from typing import Any

import click

from workload_map.cli.common import Session, connection_options, output_option, resolve_output
from workload_map.cli.errors import CommandError
from workload_map.cli.main import get_state

FORMATS = ("json", "yaml")


def _operation(value: str) -> str:
    from workload_map.interpret import OPERATIONS

    for op in OPERATIONS:
        if op.lower() == value.lower():
            return op
    raise click.BadParameter(f"{value!r} is not one of {', '.join(OPERATIONS)}", param_hint="--operation")


def _status_items(path: str) -> list[dict[str, Any]]:
    """AggregatedStatusItems from a file: a list, or an object holding ``aggregatedStatus`` (a
    ResourceBinding's status, or the ResourceBinding itself)."""
    from workload_map.cli.live import read_documents

    label, docs = read_documents(path)
    doc: Any = docs[0] if len(docs) == 1 else docs
    if isinstance(doc, dict):
        doc = (doc.get("status") or {}).get("aggregatedStatus", doc.get("aggregatedStatus"))
    if not isinstance(doc, list) or not all(isinstance(i, dict) for i in doc):
        raise CommandError(
            f"{label}: expected a list of AggregatedStatusItem objects (clusterName, status, ...) "
            "or a ResourceBinding with status.aggregatedStatus",
            2,
        )
    return doc


@click.command(
    "interpret",
    short_help="Answer a Karmada interpreter operation for a manifest (offline).",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--operation",
    "operation",
    required=True,
    metavar="OP",
    help="InterpretReplica, InterpretComponent, ReviseReplica, Retain, InterpretStatus, "
    "AggregateStatus, InterpretHealth or InterpretDependency (any case).",
)
@click.option("-f", "--file", "file", required=True, metavar="OBJECT", help="The object (or - for stdin).")
@click.option(
    "--desired-replicas", type=click.IntRange(min=0), default=None, help="ReviseReplica: the count to set."
)
@click.option(
    "--observed-file", default=None, metavar="FILE", help="Retain: the object as the member cluster has it."
)
@click.option(
    "--aggregated-status-file",
    default=None,
    metavar="FILE",
    help="AggregateStatus: the members' AggregatedStatusItems (a list, or a ResourceBinding).",
)
@connection_options
@output_option(FORMATS)
def command(
    operation: str,
    file: str,
    desired_replicas: int | None,
    observed_file: str | None,
    aggregated_status_file: str | None,
) -> None:
    """Answer one Karmada resource-interpreter OPERATION for the object in FILE, as the webhook
    would: replicas and per-replica requirements, components, a revised or retained object (JSON
    patch), the reflected or aggregated status, health, or the ConfigMaps, Secrets, PVCs and
    ServiceAccounts the pods reference. The definition comes from the catalog, --definitions
    files or the cluster's Kartas, as for describe -f.

    \b
    Examples:
      wmap interpret --operation InterpretComponent -f raycluster.yaml
      wmap interpret --operation ReviseReplica --desired-replicas 6 -f job.yaml -o json
      wmap interpret --operation AggregateStatus -f job.yaml --aggregated-status-file rb.yaml
    """
    from workload_map.cli.live import manifest_entry, read_manifest
    from workload_map.errors import InterpretError
    from workload_map.interpret import Request, interpret
    from workload_map.interpret.context import envelope
    from workload_map.resolve import compile_definition
    from workload_map.views.machine import dump

    op = _operation(operation)
    state = get_state()
    session = Session(state)
    fmt = resolve_output(state, FORMATS)
    if fmt not in FORMATS:  # no -o, environment or config choice: YAML, as kubectl prints objects
        fmt = "yaml"
    if op == "ReviseReplica" and desired_replicas is None:
        raise CommandError("--operation ReviseReplica needs --desired-replicas N", 2)
    if op == "Retain" and observed_file is None:
        raise CommandError("--operation Retain needs --observed-file FILE", 2)
    obj = read_manifest(file)
    observed = read_manifest(observed_file) if observed_file else None
    items = _status_items(aggregated_status_file) if aggregated_status_file else []
    entry = manifest_entry(session, obj, fmt)
    request = Request(op, obj, observed, desired_replicas, items)
    try:
        answer = interpret(compile_definition(entry.karta), request)
    except InterpretError as exc:
        name = (obj.get("metadata") or {}).get("name") or "(unnamed)"
        raise CommandError(f'{op} {obj["kind"]} "{name}": {exc}') from exc
    click.echo(dump(envelope(answer.response("")), fmt), nl=False)
