"""Where object schemas come from: CRD files, a live cluster, and the built-in subset.

A :class:`KindSchema` is the ``openAPIV3Schema`` of one served version of one kind, plus a label
naming its source (``kubeflow.org_pytorchjobs.yaml`` or ``builtin:apps/v1 Deployment``) used in
finding locations. :class:`SchemaSet` indexes them by group, version and kind.

Built-in kinds (Pod, Job, CronJob, Deployment, StatefulSet) have no CRD; ``builtin_schemas/``
holds a hand-written subset of their API types (JSON; ``$ref`` names an entry of
``definitions.json``). Objects marked ``x-wmap-partial`` may have fields the subset omits.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from workload_map.errors import WorkloadMapError

BUILTIN_DIR = Path(__file__).resolve().parent / "builtin_schemas"
CRD_KIND = "CustomResourceDefinition"
CRD_LIST_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

Schema = dict[str, Any]

__all__ = [
    "BUILTIN_DIR",
    "CRD_LIST_PATH",
    "KindSchema",
    "SchemaError",
    "SchemaSet",
    "builtin_schemas",
    "crd_schemas",
    "load_crd_file",
]


#: Largest CRD file read (the biggest in the corpus, KServe's, is well under 2 MiB).
MAX_CRD_FILE = 32 * 1024 * 1024


class SchemaError(WorkloadMapError):
    """A CRD file cannot be read, or it is not a CRD."""


@dataclass(frozen=True)
class KindSchema:
    group: str
    version: str
    kind: str
    schema: Schema
    source: str  # file name, "cluster:<crd name>" or "builtin:<gvk>"
    builtin: bool = False
    served: bool = True

    @property
    def gvk(self) -> str:
        api = f"{self.group}/{self.version}" if self.group else self.version
        return f"{api} {self.kind}"


@dataclass
class SchemaSet:
    """Schemas by (group, version, kind); later additions replace earlier ones."""

    items: dict[tuple[str, str, str], KindSchema] = field(default_factory=dict)

    def add(self, schemas: Iterable[KindSchema]) -> SchemaSet:
        for s in schemas:
            self.items[(s.group, s.version, s.kind)] = s
        return self

    def get(self, group: str, version: str, kind: str) -> KindSchema | None:
        return self.items.get((group, version, kind))

    def versions_of(self, group: str, kind: str) -> list[str]:
        return sorted(v for (g, v, k) in self.items if g == group and k == kind)

    def __len__(self) -> int:
        return len(self.items)


def crd_schemas(doc: Mapping[str, Any], source: str) -> list[KindSchema]:
    """Every version of one ``CustomResourceDefinition`` document that carries a schema (a
    top-level ``spec.validation`` schema of apiextensions v1beta1 applies to every version)."""
    spec = doc.get("spec")
    if not isinstance(spec, Mapping):
        return []
    group = str(spec.get("group", ""))
    names = spec.get("names")
    kind = str(names.get("kind", "")) if isinstance(names, Mapping) else ""
    shared = spec.get("validation")
    shared_schema = shared.get("openAPIV3Schema") if isinstance(shared, Mapping) else None
    out: list[KindSchema] = []
    versions = spec.get("versions") or ([{"name": spec.get("version")}] if spec.get("version") else [])
    for v in versions:
        if not isinstance(v, Mapping):
            continue
        schema_holder = v.get("schema")
        schema = schema_holder.get("openAPIV3Schema") if isinstance(schema_holder, Mapping) else None
        schema = schema if isinstance(schema, Mapping) else shared_schema
        if not isinstance(schema, Mapping):
            continue
        out.append(
            KindSchema(
                group, str(v.get("name", "")), kind, dict(schema), source, served=bool(v.get("served", True))
            )
        )
    return out


def load_crd_file(path: str | Path) -> list[KindSchema]:
    """The schemas of every CRD in a YAML/JSON file (several documents or a ``List`` are fine).
    Raises :class:`SchemaError` for an unreadable file or one without any CRD."""
    p = Path(path)
    from workload_map.model.inputs import read_text
    from workload_map.model.yamldocs import load_yaml_documents

    try:
        text = read_text(p, limit=MAX_CRD_FILE, label=f"CRD file {path}")
    except WorkloadMapError as exc:
        raise SchemaError(str(exc)) from exc
    try:
        docs = [d for d in load_yaml_documents(text, str(path)) if d]
    except WorkloadMapError as exc:
        raise SchemaError(f"cannot parse CRD file {path}: {exc}") from exc
    found: list[KindSchema] = []
    for doc in _flatten(docs):
        if doc.get("kind") == CRD_KIND:
            found.extend(crd_schemas(doc, p.name))
    if not found:
        raise SchemaError(f"{path} holds no CustomResourceDefinition with a schema")
    return found


def _flatten(docs: Iterable[Any]) -> Iterable[Mapping[str, Any]]:
    for d in docs:
        if (
            isinstance(d, Mapping)
            and isinstance(d.get("items"), list)
            and str(d.get("kind", "")).endswith("List")
        ):
            yield from (i for i in d["items"] if isinstance(i, Mapping))
        elif isinstance(d, Mapping):
            yield d


def _resolve_refs(node: Any, defs: Mapping[str, Any], depth: int = 0) -> Any:
    if depth > 40:
        raise SchemaError("built-in schema $ref nesting too deep")
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = defs.get(ref)
            if target is None:
                raise SchemaError(f"built-in schema: unknown $ref {ref!r}")
            merged = {**copy.deepcopy(target), **{k: v for k, v in node.items() if k != "$ref"}}
            return _resolve_refs(merged, defs, depth + 1)
        return {k: _resolve_refs(v, defs, depth + 1) for k, v in node.items() if k != "$comment"}
    if isinstance(node, list):
        return [_resolve_refs(v, defs, depth + 1) for v in node]
    return node


@cache
def _builtin() -> tuple[KindSchema, ...]:
    defs = json.loads((BUILTIN_DIR / "definitions.json").read_text(encoding="utf-8"))
    out: list[KindSchema] = []
    for path in sorted(BUILTIN_DIR.glob("*.json")):
        if path.name == "definitions.json":
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        api = f"{data['group']}/{data['version']}" if data["group"] else data["version"]
        out.append(
            KindSchema(
                data["group"],
                data["version"],
                data["kind"],
                _resolve_refs(data["schema"], defs),
                f"builtin:{api} {data['kind']}",
                builtin=True,
            )
        )
    return tuple(out)


def builtin_schemas() -> list[KindSchema]:
    """The built-in kinds' schema subsets (fresh copies)."""
    return [
        KindSchema(s.group, s.version, s.kind, copy.deepcopy(s.schema), s.source, True) for s in _builtin()
    ]


@cache
def object_meta_schema() -> Schema:
    """ObjectMeta from the built-in subset (CRD schemas say only ``metadata: {type: object}``)."""
    defs = json.loads((BUILTIN_DIR / "definitions.json").read_text(encoding="utf-8"))
    meta: Schema = _resolve_refs({"$ref": "ObjectMeta"}, defs)
    return meta
