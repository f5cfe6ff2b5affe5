"""``wmap generate --crd FILE`` / ``wmap generate TYPE``: print a draft Karta definition for a
kind from its CRD schema (workload_map.generate), every guess commented. A TYPE is read from the
cluster's served CRD (``--cluster`` is kubectl's flag for the kubeconfig cluster, so TYPE alone
says "from the cluster")."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from workload_map.cli import exit_codes
from workload_map.cli.common import Session, connection_options
from workload_map.cli.errors import CommandError
from workload_map.cli.main import get_state
from workload_map.errors import WorkloadMapError

if TYPE_CHECKING:
    from workload_map.cluster.discovery import APIResource
    from workload_map.generate import Draft

#: Objects read from the cluster for pod selectors (one page); their pods are listed in the
#: same namespace.
OBSERVED_OBJECTS = 50


@click.command(
    "generate",
    short_help="Draft a Karta definition from a CRD.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("type_word", required=False, metavar="[TYPE]")
@click.option("--crd", "crd", type=click.Path(dir_okay=False), help="A CRD file (YAML or JSON).")
@click.option("--kind", default=None, help="The kind, when the file holds several.")
@click.option("--version", "version", default=None, help="The version (default: the first served one).")
@click.option(
    "-f",
    "--filename",
    "objects_file",
    type=click.Path(dir_okay=False, allow_dash=True),
    default=None,
    help="Objects of the type and their pods (kubectl get -o yaml output, - for stdin): pod "
    "selectors are taken from the labels those pods carry.",
)
@click.option(
    "--observe/--no-observe",
    default=True,
    help=f"With a TYPE: read up to {OBSERVED_OBJECTS} objects of it in the namespace and their pods "
    "for pod selectors (default: on).",
)
@connection_options
def command(
    type_word: str | None,
    crd: str | None,
    kind: str | None,
    version: str | None,
    objects_file: str | None,
    observe: bool,
) -> None:
    """Print a draft Karta definition for a CRD's kind: a component per pod template or pod
    spec in the schema (instances for lists and maps of them), replicas from the integer
    fields beside each, status rules from the status schema (conditions, a phase enum), a
    suspend flag, and pod selectors from the labels of live pods (a TYPE's objects in the
    namespace, or the -f file). Every guess carries a comment saying what it was inferred from;
    the draft validates, and lints clean against the same CRD (docs/new-type.md).

    \b
    Examples:
      wmap generate --crd ray.io_rayclusters.yaml > raycluster.yaml
      wmap generate widgets --version v1beta1      # the cluster's CRD of widgets
      wmap generate --crd widgets.yaml -f <(kubectl get widgets,jobs,pods -o yaml)
    """
    from workload_map.generate import draft_from_schemas
    from workload_map.lint import crd_schemas, load_crd_file

    if (crd is None) == (type_word is None):
        raise click.UsageError("give --crd FILE, or a TYPE to read its CRD from the cluster (not both)")
    source = crd or type_word or ""
    # One session for a TYPE: its CRD and its live objects are read with the same discovery.
    session = Session(get_state()) if type_word is not None else None
    try:
        res: APIResource | None = None
        if crd is not None:
            path = Path(crd)
            schemas = load_crd_file(path)
            source = path.name
        else:
            assert session is not None and type_word is not None
            doc, source, res = _cluster_crd(session, type_word)
            schemas = crd_schemas(doc, source)
            kind = kind or doc["spec"]["names"]["kind"]
        if not schemas:
            raise CommandError(f"{source}: no CustomResourceDefinition with a schema", exit_codes.USAGE)
        draft = draft_from_schemas(schemas, kind=kind, version=version, source=source)
        if objects_file is not None:
            draft = _observe_file(draft, objects_file)
        elif session is not None and res is not None and observe:
            draft = _observe_cluster(session, res, draft)
    except CommandError:
        raise
    except WorkloadMapError as exc:
        text = str(exc)
        raise CommandError(text if source in text else f"{source}: {text}", exit_codes.USAGE) from exc
    finally:
        if session is not None:
            session.close()
    click.echo(draft.text, nl=False)


def _drafted(draft: Draft, objects: list[Any]) -> list[Any]:
    """The objects of the drafted kind (matched by group: kubectl may list another version)."""
    from workload_map.kube.objects import split_api_version

    root = draft.karta["spec"]["structureDefinition"]["rootComponent"]["kind"]
    want = (root["group"], root["kind"])
    return [
        o for o in objects if (split_api_version(str(o.get("apiVersion") or ""))[0], o.get("kind")) == want
    ]


def _observe_file(draft: Draft, path: str) -> Draft:
    """Pod selectors from the objects of the drafted kind in ``path`` and the pods their owner
    chains reach (through the file's other objects)."""
    from workload_map.cli.live import read_objects
    from workload_map.generate.observed import observe_selectors
    from workload_map.kube.objects import uid_of
    from workload_map.kube.owners import index_by_owner, lookup_in

    objects = read_objects(path)
    mine = _drafted(draft, objects)
    pods = [o for o in objects if o.get("kind") == "Pod" and o.get("apiVersion") == "v1"]
    owned = index_by_owner(pods, {uid_of(o) for o in mine if uid_of(o)}, lookup_in(objects))
    return observe_selectors(draft, mine, owned)


def _observe_cluster(session: Session, res: APIResource, draft: Draft) -> Draft:
    """Pod selectors from up to :data:`OBSERVED_OBJECTS` live objects of ``res`` in the
    namespace and their pods; nothing observed (no objects, no right to list) leaves the draft."""
    from workload_map.cli.generic import owned_pods
    from workload_map.errors import ForbiddenError
    from workload_map.generate.observed import observe_selectors
    from workload_map.kube.objects import uid_of

    namespace = session.namespace() if res.namespaced else None
    try:
        page = next(iter(session.client().list(res.path(namespace), limit=OBSERVED_OBJECTS)), {})
    except ForbiddenError as exc:
        session.state.warn(f"not allowed to list {res.name}, so no pod selectors were observed: {exc}")
        return draft
    objects = [dict(o, apiVersion=res.group_version, kind=res.kind) for o in page.get("items") or ()]
    if not objects:
        return draft
    owned = owned_pods(
        session, namespace, {uid_of(o) for o in objects if uid_of(o)}, "no pod selectors were observed"
    )
    return draft if owned is None else observe_selectors(draft, objects, owned)


def _cluster_crd(session: Session, word: str) -> tuple[dict[str, Any], str, APIResource]:
    """The served CRD of ``word`` (kubectl's type resolution), its name and the resource."""
    from workload_map.errors import NotFoundError
    from workload_map.kube.objects import api_path

    match = session.discovery().resolve_one(word)
    if not match.group or "." not in match.group:
        raise CommandError(f"{match.kind} is a built-in kind: it has no CRD to draft from", exit_codes.USAGE)
    name = f"{match.name}.{match.group}"
    try:
        doc = session.client().get(
            api_path("apiextensions.k8s.io/v1", "customresourcedefinitions", name=name)
        )
    except NotFoundError as exc:
        raise CommandError(f"no CustomResourceDefinition {name}", exit_codes.NOT_FOUND) from exc
    return doc, f"the cluster's CRD {name}", match
