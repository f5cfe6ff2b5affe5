"""Shared pieces of the live commands: reading manifests and object files, definition lookup for
a manifest, errors. Owner references and the owner walk are :mod:`workload_map.kube`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import click

from workload_map.cli import exit_codes
from workload_map.cli.errors import CommandError, NoDefinitionError
from workload_map.kube.objects import controller_ref, gvk_text, split_api_version

if TYPE_CHECKING:
    from workload_map.cli.common import ResolvedType, Session
    from workload_map.definitions_source import DefinitionEntry, DefinitionSet

__all__ = [
    "echo_no_definition",
    "entry_for_manifest",
    "read_documents",
    "read_manifest",
    "read_objects",
    "read_workload",
]


def read_documents(path: str) -> tuple[str, list[Any]]:
    """The label (``stdin`` or the path) and the non-empty YAML/JSON documents of ``path`` or
    ``-``, read by the shared bounded reader (:mod:`workload_map.model.inputs`: special files
    refused, 16 MiB) and the project's loader (JSON as JSON, YAML size and alias expansion
    bounded); any failure is a usage error (exit 2) naming the file."""
    from workload_map.errors import DefinitionError
    from workload_map.model.inputs import STDIN, read_text
    from workload_map.model.yamldocs import load_yaml_documents

    label = STDIN if path == "-" else path
    try:
        text = read_text(path, label=label)
        return label, [d for d in load_yaml_documents(text, label) if d is not None]
    except DefinitionError as exc:
        raise CommandError(str(exc), exit_codes.USAGE) from exc


#: Documents a workload manifest may carry beside the workload (``kubectl apply -f`` files such
#: as NVIDIA's DRA examples): the claims and templates its pods name, and their namespace.
COMPANION_KINDS = frozenset({"ResourceClaimTemplate", "ResourceClaim", "DeviceClass", "Namespace"})


def read_manifest(path: str, companions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """One workload manifest from a file or ``-`` (stdin); usage errors as spec 5.5. With
    ``companions``, the file may also hold documents of :data:`COMPANION_KINDS` (appended there:
    the DRA claims and templates the workload's pods name)."""
    label, docs = read_documents(path)
    if companions is not None:
        extra = [d for d in docs if isinstance(d, dict) and d.get("kind") in COMPANION_KINDS]
        rest = [d for d in docs if not (isinstance(d, dict) and d.get("kind") in COMPANION_KINDS)]
        if rest:  # a file of companions alone still names what is missing below
            companions.extend(extra)
            docs = rest
    if len(docs) > 1:
        raise CommandError(
            f"{label} holds more than one document; describe reads one workload", exit_codes.USAGE
        )
    doc = docs[0] if docs else None
    if not isinstance(doc, dict) or not doc.get("apiVersion") or not doc.get("kind"):
        raise CommandError(
            f"{label} declares no apiVersion and kind, so there is nothing to resolve it by", exit_codes.USAGE
        )
    return doc


def read_objects(path: str) -> list[Mapping[str, Any]]:
    """Every object of a file (or ``-``): YAML/JSON documents, ``*List`` documents expanded
    (``kubectl get -o yaml``), lifecycle fixtures (``object`` + ``expect``) unwrapped."""
    label, docs = read_documents(path)
    out: list[Mapping[str, Any]] = []
    for d in docs:
        if (
            isinstance(d, Mapping)
            and isinstance(d.get("items"), list)
            and str(d.get("kind", "")).endswith("List")
        ):
            out.extend(i for i in d["items"] if isinstance(i, Mapping))
        elif isinstance(d, Mapping) and "object" in d and "expect" in d and isinstance(d["object"], Mapping):
            out.append(d["object"])  # a lifecycle fixture
        elif isinstance(d, Mapping):
            out.append(d)
    if not out:
        raise CommandError(f"{label} holds no object", exit_codes.USAGE)
    return out


def entry_for_manifest(defs: DefinitionSet, obj: Mapping[str, Any]) -> DefinitionEntry:
    """Exact GVK first, else the same group and kind at any version (one match), spec 5.5."""
    from workload_map.cli.common import _claimed_twice
    from workload_map.definitions_source import kind_version_group

    api_version, kind = str(obj["apiVersion"]), str(obj["kind"])
    group, version = split_api_version(api_version)
    exact = defs.for_gvk(group, version, kind)
    if len(exact) == 1:
        return exact[0]
    if len(exact) > 1:
        raise _claimed_twice(exact)
    near = defs.for_group_kind(group, kind)
    if len(near) == 1:
        return near[0]
    if len(near) > 1:
        forms = ", ".join(kind_version_group(e.gvk) for e in near if e.gvk is not None)
        raise CommandError(
            f'"{kind}.{group}" matches more than one Karta definition, retry with one of: {forms}',
            exit_codes.USAGE,
        )
    raise NoDefinitionError(
        f"no Karta definition covers this workload type: {gvk_text(group, version, kind)}"
    )


def read_workload(session: Session, token: str, name: str) -> tuple[ResolvedType, dict[str, Any]]:
    """The live workload ``TYPE NAME`` (in the session's namespace when the type is namespaced):
    its resolved type and the object. Not installed or not found: exit 3; forbidden: exit 1."""
    from workload_map.cli.errors import WorkloadNotFoundError
    from workload_map.errors import ForbiddenError, NotFoundError

    rt = session.resolve_type(token)
    res = rt.resource
    if res is None:
        raise WorkloadNotFoundError(f"{rt.kind} is not installed in this cluster")
    namespace = session.namespace() if res.namespaced else None
    try:
        obj = session.client().get(res.path(namespace, name))
    except NotFoundError as exc:
        where = f" in namespace {namespace}" if namespace else ""
        raise WorkloadNotFoundError(f'{rt.kind} "{name}" not found{where}') from exc
    except ForbiddenError as exc:
        raise CommandError(f"not allowed to read {rt.kind}: {exc}") from exc
    return rt, obj


def manifest_entry(session: Session, obj: Mapping[str, Any], fmt: str) -> DefinitionEntry:
    """The definition for a manifest (``describe -f``, ``requirements``): definitions loaded best
    effort (the cluster's only with a kubeconfig), then :func:`entry_for_manifest`. With
    ``-o json|yaml`` a missing definition also prints the machine-readable object."""
    defs = session.definitions(cluster=session.has_kubeconfig())
    try:
        return entry_for_manifest(defs, obj)
    except NoDefinitionError:
        if fmt in ("json", "yaml"):
            group, version = split_api_version(str(obj["apiVersion"]))
            echo_no_definition(fmt, gvk=gvk_text(group, version, str(obj["kind"])))
        raise


def echo_no_definition(fmt: str, *, token: str | None = None, gvk: str | None = None) -> None:
    """For ``-o json|yaml``: the machine-readable no-definition object on stdout."""
    from workload_map.cli.common import no_definition_object
    from workload_map.views.machine import dump

    click.echo(dump(no_definition_object(token=token, gvk=gvk), fmt), nl=False)


def prefetch_owners(
    session: Session, pods: Sequence[Mapping[str, Any]], lookup: Any, skip_uids: set[str]
) -> None:
    """Fetch the controllers of ``pods`` (8 in flight) unless the reference is a workload UID."""
    keys = []
    for pod in pods:
        ref = controller_ref(pod)
        if ref is None or ref.get("uid") in skip_uids:
            continue
        keys.append(
            (
                str((pod.get("metadata") or {}).get("namespace") or ""),
                str(ref.get("apiVersion")),
                str(ref.get("kind")),
                str(ref.get("name")),
            )
        )
    if keys:
        lookup.prefetch(keys)
    del session
