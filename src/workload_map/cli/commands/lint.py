"""``wmap lint``: check Karta definitions against the schemas of the kinds they describe.

``wmap lint DEFINITION --crd CRD.yaml [--crd ...]`` reads CRD files; ``--cluster`` reads the
CRDs the current cluster serves (``apiextensions.k8s.io/v1``). Kubernetes built-in kinds (Pod,
Job, CronJob, Deployment, StatefulSet) use a bundled schema subset. ``--object FILE`` checks
workload manifests against the same schemas (types, required, enums, unknown fields).

Output: one finding per block (``file:line:column: severity: message [LINTnnn]`` then field,
expression and schema node), or ``-o json|yaml`` ``{items, count, errors, warnings}``. Exit 0
clean, 1 errors (warnings too with ``--strict``), 2 usage or unreadable input.
"""

from __future__ import annotations

from typing import Any

import click

from workload_map.cli import exit_codes, terminal
from workload_map.cli.common import Session, validate_option
from workload_map.cli.errors import CommandError
from workload_map.cli.live import read_objects
from workload_map.cli.main import get_state
from workload_map.kube.objects import split_api_version


def _cluster_schemas(session: Session, gvks: list[tuple[str, str, str]]) -> Any:
    from workload_map.errors import ClusterError, NotFoundError
    from workload_map.lint import SchemaSet, crd_schemas

    out = SchemaSet()
    client = session.client()
    disc = session.discovery()
    for group, version, kind in gvks:
        if not group or group in ("apps", "batch"):
            continue  # built-in kinds: bundled subset
        api = f"{group}/{version}"
        try:
            res = disc.resource_for_kind(api, kind)
        except ClusterError as exc:
            raise CommandError(
                f"cannot read the cluster's API resources for {api}: {exc}", exit_codes.USAGE
            ) from exc
        if res is None:
            continue  # reported as "no schema" below
        name = f"{res.name}.{group}"
        try:
            crd = client.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
        except NotFoundError:
            continue
        except ClusterError as exc:
            raise CommandError(
                f"cannot read CustomResourceDefinition {name}: {exc}", exit_codes.USAGE
            ) from exc
        out.add(crd_schemas(crd, f"cluster:{name}"))
    return out


@click.command(
    "lint",
    short_help="Check definitions (and objects) against CRD schemas.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("definition", metavar="[DEFINITION]", required=False)
@click.option("--crd", "crds", multiple=True, metavar="FILE", help="A CRD file (repeatable).")
@click.option("--cluster", "from_cluster", is_flag=True, help="Use the CRDs the current cluster serves.")
@click.option(
    "--kubeconfig", "kubeconfig", default=None, help="Path to the kubeconfig file (with --cluster)."
)
@click.option("--context", "kube_context", default=None, help="The kubeconfig context (with --cluster).")
@click.option("--object", "objects", multiple=True, metavar="FILE", help="Also check a workload manifest.")
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
@validate_option
@click.option("-o", "--output", "output", type=click.Choice(["text", "json", "yaml"]), default=None)
def command(
    definition: str | None,
    crds: tuple[str, ...],
    from_cluster: bool,
    kubeconfig: str | None,
    kube_context: str | None,
    objects: tuple[str, ...],
    strict: bool,
    output: str | None,
) -> None:
    """Check each definition in DEFINITION (file, directory or -) against the schema of its root
    kind: every field its expressions read must exist, replicas must be integers, templates pod
    templates, phases strings (byPhase values in the enum), conditions arrays with the
    type/status fields, fragmented and suspend paths assignable, suspend values of the field's
    type. Schemas come from --crd files or, with --cluster, from the cluster; built-in kinds use
    a bundled subset. Codes: docs/catalog.md."""
    from workload_map.lint import (
        LintFinding,
        NoSchemaError,
        SchemaError,
        SchemaSet,
        lint_definition,
        load_crd_file,
    )
    from workload_map.lint.objects import validate_object
    from workload_map.model.loader import load_definitions

    state = get_state()
    if definition is None and not objects:
        raise click.UsageError("give a DEFINITION file, --object FILE, or both")
    if crds and from_cluster:
        raise click.UsageError("--crd and --cluster cannot be combined")
    if (kubeconfig or kube_context) and not from_cluster:
        raise click.UsageError("--kubeconfig and --context need --cluster")
    fmt = output or (state.output if state.output in ("json", "yaml") else "text")

    schemas = SchemaSet()
    for path in crds:
        try:
            schemas.add(load_crd_file(path))
        except SchemaError as exc:
            raise CommandError(str(exc), exit_codes.USAGE) from exc

    loaded = []
    if definition is not None:
        result = load_definitions(definition, field_validation=state.field_validation)
        problems = [f.format() for f in result.errors] + [
            f.format() for r in result.rejected for f in r.findings
        ]
        if problems:
            raise CommandError(problems, exit_codes.USAGE)
        if not result.definitions:
            raise CommandError(f"{definition} holds no Karta definition", exit_codes.USAGE)
        loaded = list(result.definitions)
    manifests = [o for path in objects for o in read_objects(path)]

    if from_cluster:
        if kubeconfig:
            state.conn["kubeconfig"] = kubeconfig
        if kube_context:
            state.conn["context"] = kube_context
        session = Session(state)
        wanted: list[tuple[str, str, str]] = []
        for d in loaded:
            gvk = d.karta.root_gvk
            if gvk is not None:
                wanted.append((gvk.group, gvk.version, gvk.kind))
        for o in manifests:
            group, version = split_api_version(str(o.get("apiVersion", "")))
            wanted.append((group, version, str(o.get("kind", ""))))
        try:
            schemas = _cluster_schemas(session, wanted)
        finally:
            session.close()
    elif not crds:
        state.warn("no --crd given: only Kubernetes built-in kinds can be checked")

    findings: list[LintFinding] = []
    missing: list[str] = []
    for d in loaded:
        try:
            findings.extend(lint_definition(d.karta, schemas, source_map=d.source_map, budget=d.budget))
        except NoSchemaError as exc:
            missing.append(f"{d.name}: {exc}")
    for o in manifests:
        for f in validate_object(o, schemas):
            (missing.append(f.message) if f.code == "LINT106" else findings.append(f))
    if missing:
        where = "the cluster" if from_cluster else "the CRDs given"
        raise CommandError([f"{m} in {where}" for m in missing], exit_codes.USAGE)

    errors = [f for f in findings if f.is_error]
    warnings = [f for f in findings if not f.is_error]
    if fmt == "text":
        for f in findings:
            terminal.echo(f.format())
        if not findings:
            click.echo(f"OK: {len(loaded)} definition(s), {len(manifests)} object(s), no findings")
    else:
        from workload_map.views.machine import dump

        data = {
            "items": [f.to_dict() for f in findings],
            "count": len(findings),
            "errors": len(errors),
            "warnings": len(warnings),
        }
        click.echo(dump(data, fmt), nl=False)
    if errors or (strict and warnings):
        raise CommandError(f"{len(errors)} error(s), {len(warnings)} warning(s)", exit_codes.ERROR)
    if warnings:
        state.warn(f"{len(warnings)} warning(s)")
