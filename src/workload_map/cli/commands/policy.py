"""``wmap policy preview``: what WorkloadPolicy objects would change on manifests, offline.

The same :func:`workload_map.resolve.policy.apply_policies` the operator's admission webhook runs,
with the namespace's labels given on the command line (``--namespace-labels team=ml,queue=a``).
Prints a unified diff per manifest (the policies that applied and the warnings on stderr), or the
changed manifests with ``-o yaml|json``. Which objects pass unchanged (no definition covers them,
a controller created them) is decided by the webhook's own :func:`workload_map.operator.policies.admit`.
"""

from __future__ import annotations

from typing import Any

import click

from workload_map.cli.common import connection_options, output_option

CTX = {"help_option_names": ["-h", "--help"]}


@click.group("policy", short_help="Preview WorkloadPolicy changes on manifests.", context_settings=CTX)
def command() -> None:
    """WorkloadPolicy (workload-map.dev/v1alpha1) tools; the policies themselves are applied by
    wmap operator --policies at admission."""


@command.command("preview", context_settings=CTX)
@click.option(
    "-p",
    "--policies",
    "policy_files",
    multiple=True,
    required=True,
    metavar="FILE",
    help="WorkloadPolicy objects (a file or -, many documents or a List; repeatable).",
)
@click.option(
    "-f",
    "--filename",
    "filenames",
    multiple=True,
    required=True,
    metavar="FILE",
    help="Workload manifests (a file or -, many documents or a List; repeatable).",
)
@click.option(
    "--namespace-labels",
    default="",
    metavar="K=V[,K=V]",
    help="The labels of the workloads' namespace (what namespaceSelector and fromNamespaceLabel read).",
)
@click.option("--operation", type=click.Choice(["CREATE", "UPDATE"]), default="CREATE", show_default=True)
@connection_options
@output_option(("json", "yaml"))
def preview(
    policy_files: tuple[str, ...], filenames: tuple[str, ...], namespace_labels: str, operation: str
) -> None:
    """Show what the policies would change on each manifest: a unified diff (the policies that
    applied, conflicts and kept values as warnings), or the changed manifests with -o yaml|json."""
    from workload_map.cli import exit_codes
    from workload_map.cli.common import Session
    from workload_map.cli.edit_args import parse_pairs
    from workload_map.cli.errors import CommandError
    from workload_map.cli.live import read_objects
    from workload_map.cli.main import get_state
    from workload_map.cli.write import unified_diff
    from workload_map.kube.objects import kubectl_name, name_of, split_api_version
    from workload_map.operator.policies import admit
    from workload_map.resolve.edits import InvalidEditError
    from workload_map.resolve.policy import KIND, parse_policy
    from workload_map.views.machine import dump

    state = get_state()
    labels = parse_pairs([namespace_labels], "namespace label") if namespace_labels else {}
    policies = []
    for path in policy_files:
        for obj in read_objects(path):
            if obj.get("kind") != KIND:
                raise CommandError(f"{path}: {obj.get('kind')!r} is not a {KIND}", exit_codes.USAGE)
            try:
                policies.append(parse_policy(obj))
            except InvalidEditError as exc:
                raise CommandError(f"{path}: {KIND} {name_of(obj)!r}: {exc}") from exc
    session = Session(state)
    try:
        defs = session.definitions(cluster=False)
    finally:
        session.close()
    changed: list[dict[str, Any]] = []
    texts: list[str] = []
    notes: list[str] = []
    for path in filenames:
        for obj in read_objects(path):
            api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
            label = kubectl_name(api_version, kind, name_of(obj))
            result = admit(
                defs,
                policies,
                (*split_api_version(api_version), kind),
                obj,
                operation=operation,
                namespace_labels=lambda: labels,
            )
            if isinstance(result, str):  # admitted unchanged, as the webhook would
                notes.append(f"{label}: {result}")
                changed.append(dict(obj))
                continue
            for w in result.warnings:
                state.warn(f"{label}: {w}")
            notes.append(f"{label}: applied {', '.join(result.applied) or 'no policy'}")
            changed.append(result.change.new_object)
            diff = unified_diff(dict(obj), result.change.new_object)
            if diff:
                texts.append(diff.rstrip("\n"))
    fmt = state.output
    if fmt == "json":
        data: Any = (
            changed[0] if len(changed) == 1 else {"apiVersion": "v1", "kind": "List", "items": changed}
        )
        click.echo(dump(data, "json"), nl=False)
    elif fmt == "yaml":
        click.echo("---\n".join(dump(d, "yaml") for d in changed), nl=False)
    else:
        for text in texts:
            click.echo(text)
    for note in notes:  # which policies applied: on stderr, so stdout stays a diff or manifests
        click.echo(note, err=True)
