"""``wmap crd``: print the ``kartas.run.ai`` CustomResourceDefinition (YAML, or JSON with -o json).

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
@click.option(
    "-o",
    "--output",
    "output",
    type=click.Choice(["yaml", "json"]),
    default=None,
    help="yaml (default) or json.",
)
def command(output: str | None) -> None:
    """Print the Karta CustomResourceDefinition generated from the definition model."""
    from workload_map.cli.main import get_state
    from workload_map.crd.generate import shipped_crd, shipped_crd_text

    fmt = output or getattr(get_state(), "output", None) or "yaml"
    if fmt == "json":
        click.echo(json.dumps(shipped_crd(), indent=2))
    elif fmt == "yaml":
        click.echo(shipped_crd_text(), nl=False)
    else:
        raise click.UsageError(f"unsupported output format {fmt!r} for crd (yaml or json)")
