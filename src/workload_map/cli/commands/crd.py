"""``wmap crd [NAME]``: print the ``kartas.run.ai`` CustomResourceDefinition (YAML, or JSON with
-o json), or ``wmap crd workloadpolicies.workload-map.dev`` for the WorkloadPolicy CRD.

The text is the packaged ``kartas.run.ai.yaml`` generated from the definition model, so
``wmap crd | kubectl apply --server-side -f -`` installs exactly what the operator expects.
"""

from __future__ import annotations

import json

import click


@click.command(
    "crd",
    short_help="Print the Karta CRD (kartas.run.ai).",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument(
    "name", required=False, type=click.Choice(["kartas.run.ai", "workloadpolicies.workload-map.dev"])
)
@click.option(
    "-o",
    "--output",
    "output",
    type=click.Choice(["yaml", "json"]),
    default=None,
    help="yaml (default) or json.",
)
def command(name: str | None, output: str | None) -> None:
    """Print the Karta CustomResourceDefinition generated from the definition model (NAME
    workloadpolicies.workload-map.dev: the WorkloadPolicy CRD of the admission policies)."""
    from workload_map.cli.main import get_state
    from workload_map.crd import generate

    policy = name == generate.POLICY_CRD_NAME
    fmt = output or getattr(get_state(), "output", None) or "yaml"
    if fmt == "json":
        click.echo(json.dumps(generate.shipped_policy_crd() if policy else generate.shipped_crd(), indent=2))
    elif fmt == "yaml":
        click.echo(generate.shipped_policy_crd_text() if policy else generate.shipped_crd_text(), nl=False)
    else:
        raise click.UsageError(f"unsupported output format {fmt!r} for crd (yaml or json)")
