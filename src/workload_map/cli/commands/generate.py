"""``wmap generate --crd FILE`` / ``wmap generate TYPE``: print a draft Karta definition for a
kind from its CRD schema (workload_map.generate), every guess commented. A TYPE is read from the
cluster's served CRD (``--cluster`` is kubectl's flag for the kubeconfig cluster, so TYPE alone
says "from the cluster")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from workload_map.cli import exit_codes
from workload_map.cli.common import Session, connection_options
from workload_map.cli.errors import CommandError
from workload_map.cli.main import get_state
from workload_map.errors import WorkloadMapError


@click.command(
    "generate",
    short_help="Draft a Karta definition from a CRD.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("type_word", required=False, metavar="[TYPE]")
@click.option("--crd", "crd", type=click.Path(dir_okay=False), help="A CRD file (YAML or JSON).")
@click.option("--kind", default=None, help="The kind, when the file holds several.")
@click.option("--version", "version", default=None, help="The version (default: the first served one).")
@connection_options
def command(type_word: str | None, crd: str | None, kind: str | None, version: str | None) -> None:
    """Print a draft Karta definition for a CRD's kind: a component per pod template or pod
    spec in the schema (instances for lists and maps of them), replicas from the integer
    fields beside each, status rules from the status schema (conditions, a phase enum), a
    suspend flag. Every guess carries a comment saying what it was inferred from; the draft
    validates, and lints clean against the same CRD.

    \b
    Examples:
      wmap generate --crd ray.io_rayclusters.yaml > raycluster.yaml
      wmap generate widgets --version v1beta1      # the cluster's CRD of widgets
    """
    from workload_map.generate import draft_from_schemas
    from workload_map.lint import crd_schemas, load_crd_file

    if (crd is None) == (type_word is None):
        raise click.UsageError("give --crd FILE, or a TYPE to read its CRD from the cluster (not both)")
    source = crd or type_word or ""
    try:
        if crd is not None:
            path = Path(crd)
            schemas = load_crd_file(path)
            source = path.name
        else:
            assert type_word is not None
            doc, source = _cluster_crd(type_word)
            schemas = crd_schemas(doc, source)
            kind = kind or doc["spec"]["names"]["kind"]
        if not schemas:
            raise CommandError(f"{source}: no CustomResourceDefinition with a schema", exit_codes.USAGE)
        draft = draft_from_schemas(schemas, kind=kind, version=version, source=source)
    except CommandError:
        raise
    except WorkloadMapError as exc:
        text = str(exc)
        raise CommandError(text if source in text else f"{source}: {text}", exit_codes.USAGE) from exc
    click.echo(draft.text, nl=False)


def _cluster_crd(word: str) -> tuple[dict[str, Any], str]:
    """The served CRD of ``word`` (kubectl's type resolution), and its name."""
    from workload_map.errors import NotFoundError
    from workload_map.kube.objects import api_path

    session = Session(get_state())
    try:
        match = session.discovery().resolve_one(word)
        if not match.group or "." not in match.group:
            raise CommandError(
                f"{match.kind} is a built-in kind: it has no CRD to draft from", exit_codes.USAGE
            )
        name = f"{match.name}.{match.group}"
        try:
            doc = session.client().get(
                api_path("apiextensions.k8s.io/v1", "customresourcedefinitions", name=name)
            )
        except NotFoundError as exc:
            raise CommandError(f"no CustomResourceDefinition {name}", exit_codes.NOT_FOUND) from exc
        return doc, f"the cluster's CRD {name}"
    finally:
        session.close()
