"""Where definitions come from for every command (upstream-spec 5.2, plus local files).

1. The bundled catalog (no cluster needed).
2. Best effort, the cluster-scoped ``kartas.run.ai`` objects readable with the current kubeconfig.
   Failures never fail the command: they leave the catalog with one warning (exact upstream texts,
   reasons ``no_crd``, ``forbidden``, ``unreachable``, ``invalid``). **Unlike upstream**, cluster
   definitions are validated when loaded: an invalid one is skipped with one clear warning (and
   the catalog keeps serving its GVK) instead of breaking every object of its type later.
3. ``--definitions PATH`` files and directories (origin ``local``). A broken local file is an
   error (the user asked for it explicitly); unknown fields and repeated keys in it are errors
   too unless ``field_validation`` (``--validate``) says ``warn`` or ``ignore``.

Merge per root GVK: the catalog first; cluster definitions replace the catalog's for their GVK;
local definitions replace both for theirs. Several definitions of one origin on one GVK are all
kept, with a ``collision`` warning; resolving that GVK is then ambiguous. Definitions without a
usable root GVK are kept, listed last (by name), never resolvable. List order: GVK string, name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from workload_map.errors import (
    ClusterError,
    DefinitionError,
    ForbiddenError,
    NoConfigurationError,
    NotFoundError,
)
from workload_map.kube.objects import gvk_text
from workload_map.model.definition import GroupVersionKind, Karta

if TYPE_CHECKING:
    from workload_map.model.loader import FieldValidation

Origin = Literal["catalog", "cluster", "local"]

__all__ = [
    "DefinitionEntry",
    "DefinitionSet",
    "LoadWarning",
    "gvk_string",
    "kind_version_group",
    "load_definition_set",
    "merge_definitions",
]


def gvk_string(gvk: GroupVersionKind) -> str:
    """Go's ``GroupVersionKind.String()``: ``jobset.x-k8s.io/v1alpha2, Kind=JobSet``."""
    return gvk_text(gvk.group, gvk.version, gvk.kind)


def kind_version_group(gvk: GroupVersionKind) -> str:
    """kubectl's fully qualified type: ``JobSet.v1alpha2.jobset.x-k8s.io`` (``Pod.v1`` for core)."""
    return f"{gvk.kind}.{gvk.version}.{gvk.group}" if gvk.group else f"{gvk.kind}.{gvk.version}"


@dataclass(frozen=True)
class LoadWarning:
    """A warning from loading definitions: ``reason`` is one of upstream's codes."""

    reason: str
    message: str


@dataclass(frozen=True)
class DefinitionEntry:
    karta: Karta
    origin: Origin
    source: str = ""

    @property
    def name(self) -> str:
        return self.karta.name

    @property
    def gvk(self) -> GroupVersionKind | None:
        gvk = self.karta.root_gvk
        if gvk is None or not gvk.kind or not gvk.version:
            return None
        return gvk

    @property
    def key(self) -> str | None:
        gvk = self.gvk
        return gvk_string(gvk) if gvk is not None else None


@dataclass
class DefinitionSet:
    """The merged definitions. ``entries`` is in list order."""

    entries: list[DefinitionEntry] = field(default_factory=list)
    warnings: list[LoadWarning] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._by_key: dict[str, list[DefinitionEntry]] = {}
        for e in self.entries:
            if e.key is not None:
                self._by_key.setdefault(e.key, []).append(e)

    def __len__(self) -> int:
        return len(self.entries)

    def for_gvk(self, group: str, version: str, kind: str) -> list[DefinitionEntry]:
        return list(self._by_key.get(gvk_text(group, version, kind), ()))

    def for_group_kind(self, group: str, kind: str) -> list[DefinitionEntry]:
        kl = kind.lower()
        return [
            e for e in self.entries if e.gvk is not None and e.gvk.group == group and e.gvk.kind.lower() == kl
        ]

    def by_name(self, name: str) -> DefinitionEntry | None:
        for e in self.entries:
            if e.name == name:
                return e
        return None

    def resolvable(self) -> list[DefinitionEntry]:
        return [e for e in self.entries if e.gvk is not None]

    def types(self) -> list[str]:
        """Type tokens for completion: lowercase root kinds; a kind covered at several GVKs is
        offered only in its qualified ``kind.version.group`` forms."""
        by_kind: dict[str, set[str]] = {}
        for e in self.resolvable():
            gvk = e.gvk
            assert gvk is not None
            by_kind.setdefault(gvk.kind.lower(), set()).add(kind_version_group(gvk).lower())
        out: list[str] = []
        for kind, qualified in sorted(by_kind.items()):
            out.extend(sorted(qualified) if len(qualified) > 1 else [kind])
        return out


def _sort_key(e: DefinitionEntry) -> tuple[int, str, str]:
    key = e.key
    return (0, key, e.name) if key is not None else (1, "", e.name)


def merge_definitions(
    catalog: Iterable[DefinitionEntry],
    cluster: Iterable[DefinitionEntry] = (),
    local: Iterable[DefinitionEntry] = (),
) -> tuple[list[DefinitionEntry], list[LoadWarning]]:
    """Merge per GVK (later layers replace earlier ones); collisions inside a layer warn."""
    merged: dict[str, list[DefinitionEntry]] = {}
    loose: dict[str, DefinitionEntry] = {}
    warnings: list[LoadWarning] = []
    for layer in (list(catalog), list(cluster), list(local)):
        mine: dict[str, list[DefinitionEntry]] = {}
        for e in layer:
            if e.key is None:
                loose[e.name] = e
            else:
                mine.setdefault(e.key, []).append(e)
        for key, group in mine.items():
            merged[key] = group
            if len(group) > 1 and group[0].origin != "catalog":
                names = ", ".join(f'"{g.name}"' for g in group)
                warnings.append(
                    LoadWarning(
                        "collision", f"{len(group)} {group[0].origin} Karta definitions claim {key}: {names}"
                    )
                )
    entries = [e for group in merged.values() for e in group] + list(loose.values())
    entries.sort(key=_sort_key)
    return entries, warnings


# --- loading ---------------------------------------------------------------------------------


def catalog_entries() -> list[DefinitionEntry]:
    from workload_map.catalog.registry import catalog

    return [DefinitionEntry(e.karta, "catalog", e.path) for e in catalog().entries()]


def _first_error(karta: Karta) -> tuple[int, str] | None:
    """The errors of a cluster Karta, validated as the admission webhook does: within one object's
    compile budget (0.5 s of CPU), so a Karta stored without the operator cannot make every
    command that lists definitions pay more."""
    from workload_map.model._jq import OBJECT_COMPILE_SECONDS
    from workload_map.model.findings import ERROR
    from workload_map.model.validator import CompileBudget, validate_definition

    budget = CompileBudget(f'Karta "{karta.name}"', OBJECT_COMPILE_SECONDS)
    errors = [f for f in validate_definition(karta, budget=budget) if f.severity == ERROR]
    if not errors:
        return None
    return len(errors), errors[0].format(location=False)


def decode_cluster_items(
    items: Sequence[Mapping[str, Any]],
) -> tuple[list[DefinitionEntry], list[LoadWarning]]:
    """Cluster ``Karta`` objects -> entries; undecodable or invalid ones are skipped with a warning."""
    from pydantic import ValidationError

    entries: list[DefinitionEntry] = []
    warnings: list[LoadWarning] = []
    for item in items:
        meta = item.get("metadata") if isinstance(item, Mapping) else None
        name = str(meta.get("name", "")) if isinstance(meta, Mapping) else ""
        try:
            karta = Karta.model_validate(item)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            detail = f"{where}: {first.get('msg', 'invalid')}" if where else str(first.get("msg", "invalid"))
            warnings.append(LoadWarning("invalid", f'skipping Karta definition "{name}": {detail}'))
            continue
        problem = _first_error(karta)
        if problem is not None:
            count, text = problem
            more = f" (and {count - 1} more)" if count > 1 else ""
            warnings.append(
                LoadWarning("invalid", f'skipping Karta definition "{name}": invalid: {text}{more}')
            )
            continue
        entries.append(DefinitionEntry(karta, "cluster", "cluster"))
    return entries, warnings


def read_cluster_definitions(
    list_kartas: Callable[[], list[dict[str, Any]]],
) -> tuple[list[DefinitionEntry], list[LoadWarning]]:
    """Best effort: call ``list_kartas`` (which lists ``kartas.run.ai``) and turn failures into
    the spec's warnings."""
    try:
        items = list_kartas()
    except NoConfigurationError:
        return [], []
    except NotFoundError:
        return [], [
            LoadWarning("no_crd", "the kartas.run.ai CRD is not installed; showing built-in definitions only")
        ]
    except ForbiddenError:
        return [], [
            LoadWarning(
                "forbidden",
                "not allowed to list kartas.run.ai; showing built-in definitions only. Ask a cluster "
                'administrator for "list" permission on kartas.run.ai to include cluster definitions.',
            )
        ]
    except ClusterError as exc:
        return [], [
            LoadWarning(
                "unreachable",
                f"could not read Karta definitions from the cluster: {exc}; "
                "showing built-in definitions only",
            )
        ]
    return decode_cluster_items(items)


#: Load problems of one ``--definitions`` path quoted in its error, at most.
MAX_QUOTED_PROBLEMS = 5


def local_entries(
    paths: Sequence[str], *, field_validation: FieldValidation = "strict"
) -> list[DefinitionEntry]:
    """Definitions from ``--definitions`` files/directories; any error raises DefinitionError.
    ``field_validation`` is ``--validate`` (``strict``: unknown fields and repeated keys are
    errors)."""
    if not paths:
        return []  # the loader (YAML locations, findings) is not imported for nothing
    from workload_map import messages
    from workload_map.model.findings import ERROR
    from workload_map.model.loader import load_definitions

    out: list[DefinitionEntry] = []
    for path in paths:
        result = load_definitions(path, field_validation=field_validation)
        findings = [*result.errors, *(f for r in result.rejected for f in r.findings)]
        if findings:
            problems = [f.format() for f in findings[:MAX_QUOTED_PROBLEMS]]
            if len(findings) > MAX_QUOTED_PROBLEMS:
                problems.append(f"and {len(findings) - MAX_QUOTED_PROBLEMS} more")
            if any(f.code in ("KARTA101", "KARTA107") for f in findings):
                problems.append(messages.FIELD_VALIDATION_HINT)
            raise DefinitionError(f"--definitions {path}: " + "; ".join(problems))
        if not result.definitions:
            raise DefinitionError(f"--definitions {path}: contains no Karta definition")
        for loaded in result.definitions:
            errors = [f for f in loaded.validate() if f.severity == ERROR]
            if errors:
                raise DefinitionError(
                    f'--definitions {path}: definition "{loaded.name}" is invalid: '
                    + errors[0].format(location=False)
                    + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")
                )
            out.append(DefinitionEntry(loaded.karta, "local", loaded.origin))
    return out


def load_definition_set(
    *,
    list_kartas: Callable[[], list[dict[str, Any]]] | None = None,
    local_paths: Sequence[str] = (),
    include_catalog: bool = True,
    field_validation: FieldValidation = "strict",
) -> DefinitionSet:
    """Catalog + cluster (best effort, when ``list_kartas`` is given) + local files, merged
    (``field_validation``: how the local files' unknown fields count, see :func:`local_entries`)."""
    cat = catalog_entries() if include_catalog else []
    cluster: list[DefinitionEntry] = []
    warnings: list[LoadWarning] = []
    if list_kartas is not None:
        cluster, warnings = read_cluster_definitions(list_kartas)
    local = local_entries(local_paths, field_validation=field_validation)
    entries, merge_warnings = merge_definitions(cat, cluster, local)
    return DefinitionSet(entries, warnings + merge_warnings)
