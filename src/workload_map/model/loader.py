"""Reading Karta definitions from files, directories, strings and stdin.

Accepted shapes, per YAML/JSON document (``---`` separates documents):

* a full ``run.ai/v1alpha1`` ``Karta`` object;
* a legacy ``optimization.nvidia.com/v1alpha1`` ``ResourceInterface`` (same fields; read as a
  Karta, with a warning);
* a bare spec: a mapping with ``structureDefinition`` at the top (named from the file stem, plus
  ``-<n>`` when the file holds several definitions);
* a YAML/JSON list of the above, or a ``kind: List`` object with ``items``.

Empty documents are skipped. A document that is not a definition (another kind, or no
``spec.structureDefinition``) is reported as a finding (code KARTA104) naming file, document and
line; the other documents still load. Malformed YAML/JSON and unreadable files raise
``DefinitionError`` with ``file:line:column``.

Directories are read non-recursively: every ``*.yaml``, ``*.yml`` and ``*.json`` file directly
inside, in sorted order.

Bounds (see :mod:`workload_map.model.inputs`): special files are refused by type before they are
opened; at most 16 MiB per file, 1,000 files and 64 MiB per directory, 10,000 YAML documents per
file, 2,000,000 values per document (aliases counted expanded); at most 100 unknown-field and 100
repeated-key findings per definition (one more finding counts the rest). Every definition of one
file shares one expression compile budget (:class:`~workload_map.model._jq.CompileBudget`).

Unknown fields and repeated keys are errors by default (``field_validation="strict"``, as
kubectl's ``--validate=strict``); ``"warn"`` reports them as warnings, ``"ignore"`` not at all.

Speed: libyaml (``CSafeLoader``) composes each document once; the data is constructed from that
node tree and the tree is kept for the ``SourceMap`` (lookups walk it lazily). JSON files are
parsed with orjson and only composed as YAML if a location is asked for.
"""

from __future__ import annotations

import bisect
import difflib
import functools
import json
import os
import types
import typing
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, Union

import orjson
import yaml
from pydantic import BaseModel, ValidationError

from workload_map import messages
from workload_map.errors import DefinitionError, InputError
from workload_map.model import inputs
from workload_map.model._jq import FILE_COMPILE_SECONDS, CompileBudget
from workload_map.model.definition import (
    KARTA_API_VERSION,
    KARTA_KIND,
    LEGACY_API_VERSION,
    LEGACY_KIND,
    Karta,
)
from workload_map.model.findings import ERROR, WARNING, Finding, Severity, make
from workload_map.model.locations import PathPart, SourceMap, format_path
from workload_map.model.yamldocs import (
    MAX_JSON_LOCATED,
    NOT_JSON,
    Dumper,
    check_json_size,
    compose_all,
    compose_one,
    json_document,
)

DEFINITION_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = inputs.STDIN
#: Unknown-field (KARTA101) and repeated-key (KARTA107) findings kept per definition, each.
MAX_FIELD_FINDINGS = 100

#: How unknown fields and repeated keys are reported, as kubectl's ``--validate``: ``strict``
#: errors, ``warn`` warnings, ``ignore`` not at all.
FieldValidation = Literal["strict", "warn", "ignore"]
FIELD_VALIDATIONS: tuple[FieldValidation, ...] = ("strict", "warn", "ignore")


def field_validation_mode(value: str) -> FieldValidation:
    """``value`` as a FieldValidation (ValueError for anything else)."""
    for mode in FIELD_VALIDATIONS:
        if value == mode:
            return mode
    raise ValueError(f"field validation must be one of {', '.join(FIELD_VALIDATIONS)}, not {value!r}")


@dataclass(frozen=True)
class _Options:
    field_validation: FieldValidation = "strict"
    compile_seconds: float = FILE_COMPILE_SECONDS


__all__ = [
    "FIELD_VALIDATIONS",
    "DefinitionLoadError",
    "FieldValidation",
    "LoadResult",
    "LoadedDefinition",
    "RejectedDocument",
    "dump_definition",
    "field_validation_mode",
    "load_definition",
    "load_definitions",
    "load_definitions_text",
]


class DefinitionLoadError(DefinitionError):
    """``load_definition`` could not produce exactly one definition; ``findings`` says why."""

    def __init__(self, message: str, findings: Iterable[Finding] = ()) -> None:
        super().__init__(message)
        self.findings = tuple(findings)


@dataclass(frozen=True)
class LoadedDefinition:
    karta: Karta
    origin: str  # file path, "stdin", or the name given for a string
    document_index: int  # 0-based index of the YAML document in the stream
    source_map: SourceMap
    item_index: int | None = None  # 0-based index inside a list / ``kind: List`` document
    findings: tuple[Finding, ...] = ()  # loader findings for this definition (unknown fields...)
    #: The compile budget of the file this definition came from, shared with its other definitions.
    budget: CompileBudget | None = field(default=None, compare=False, repr=False)

    @property
    def name(self) -> str:
        return self.karta.name

    def validate(self) -> list[Finding]:
        """Validator findings (not including the loader's ``findings``)."""
        from workload_map.model.validator import validate_definition

        return validate_definition(self.karta, source_map=self.source_map, budget=self.budget)


@dataclass(frozen=True)
class RejectedDocument:
    """A document that did not become a definition: not a definition, or wrong types."""

    origin: str
    document_index: int
    item_index: int | None
    name: str
    location: str | None
    findings: tuple[Finding, ...]
    not_a_definition: bool  # True: another kind of object; False: a broken definition


@dataclass(frozen=True)
class LoadResult:
    definitions: tuple[LoadedDefinition, ...] = ()
    rejected: tuple[RejectedDocument, ...] = ()
    findings: tuple[Finding, ...] = ()  # every loader finding, in document order
    origins: tuple[str, ...] = field(default=())  # files read, in order

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

    @property
    def ok(self) -> bool:
        return not self.errors


# --- public API -------------------------------------------------------------------------


def _options(
    strict: bool | None, field_validation: FieldValidation | None, compile_seconds: float | None
) -> _Options:
    mode = field_validation_mode(field_validation or ("warn" if strict is False else "strict"))
    return _Options(mode, FILE_COMPILE_SECONDS if compile_seconds is None else compile_seconds)


def load_definitions(
    source: str | os.PathLike[str] | IO[str] | IO[bytes],
    *,
    field_validation: FieldValidation | None = None,
    strict: bool | None = None,
    name: str | None = None,
    compile_seconds: float | None = None,
) -> LoadResult:
    """Load every definition in ``source``: a file path, a directory, ``"-"`` (stdin), a readable
    stream, or YAML/JSON text (a ``str`` containing a newline is taken as text, named ``name`` or
    ``"<string>"``). ``field_validation`` (default ``"strict"``) says how unknown fields and
    repeated keys are reported; ``strict=False`` is the older spelling of ``"warn"``.
    ``compile_seconds`` is the compile budget of each file (:data:`FILE_COMPILE_SECONDS`)."""
    opts = _options(strict, field_validation, compile_seconds)
    if hasattr(source, "read"):
        stream = typing.cast("IO[Any]", source)
        origin = name or str(getattr(stream, "name", "stream"))
        raw = stream.read(inputs.MAX_FILE_BYTES + 1)
        if len(raw) > inputs.MAX_FILE_BYTES:
            raise InputError(messages.too_large(origin, inputs.MAX_FILE_BYTES))
        return _load_text(inputs.decode_text(raw, origin), origin, opts)
    if isinstance(source, str) and source == "-":
        origin = name or STDIN
        return _load_text(inputs.read_text("-", label=origin), origin, opts)
    if isinstance(source, str) and "\n" in source:
        return _load_text(source, name or "<string>", opts)
    path = Path(source)
    if inputs.is_directory(path):
        budget = inputs.ByteBudget(str(path), inputs.MAX_TOTAL_BYTES)
        files = inputs.list_files(
            path, DEFINITION_SUFFIXES, limit=inputs.MAX_DIRECTORY_FILES, what="definition files"
        )
        return _merge([_load_file(p, opts, budget=budget) for p in files])
    return _load_file(path, opts, name=name)


def load_definitions_text(
    text: str,
    *,
    name: str = "<string>",
    field_validation: FieldValidation | None = None,
    strict: bool | None = None,
    compile_seconds: float | None = None,
) -> LoadResult:
    """Load definitions from YAML or JSON text; ``name`` is used as the origin in locations."""
    return _load_text(text, name, _options(strict, field_validation, compile_seconds))


def load_definition(
    source: str | os.PathLike[str] | IO[str] | IO[bytes],
    *,
    field_validation: FieldValidation | None = None,
    strict: bool | None = None,
    name: str | None = None,
) -> LoadedDefinition:
    """Exactly one definition, or ``DefinitionLoadError`` (a ``DefinitionError``)."""
    result = load_definitions(source, field_validation=field_validation, strict=strict, name=name)
    origin = result.origins[0] if len(result.origins) == 1 else str(name or source)
    if result.errors:
        first = result.errors[0]
        raise DefinitionLoadError(
            first.format() if len(result.errors) == 1 else _joined(result.errors), result.findings
        )
    if len(result.definitions) != 1:
        raise DefinitionLoadError(
            messages.expected_one_definition(origin, len(result.definitions)), result.findings
        )
    return result.definitions[0]


def dump_definition(karta: Karta, format: Literal["yaml", "json"] = "yaml") -> str:
    """The definition as YAML or JSON text, in the wire (camelCase) shape."""
    data = karta.to_wire()
    if format == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if format == "yaml":
        text: str = yaml.dump(
            data,
            Dumper=Dumper,
            sort_keys=False,
            default_flow_style=False,
            allow_unicode=True,
            width=1_000_000,
        )
        return text
    raise ValueError(f"unknown format {format!r} (yaml or json)")


# --- reading ------------------------------------------------------------------------------


def _joined(findings: list[Finding]) -> str:
    return "\n".join(f.format() for f in findings)


def _merge(results: list[LoadResult]) -> LoadResult:
    return LoadResult(
        definitions=tuple(d for r in results for d in r.definitions),
        rejected=tuple(d for r in results for d in r.rejected),
        findings=tuple(f for r in results for f in r.findings),
        origins=tuple(o for r in results for o in r.origins),
    )


def _load_file(
    path: Path, opts: _Options, *, name: str | None = None, budget: inputs.ByteBudget | None = None
) -> LoadResult:
    origin = name or str(path)
    text = inputs.read_text(path, label=origin, budget=budget)
    if path.suffix.lower() == ".json":
        return _load_json(text, origin, path.stem, opts)
    return _load_text(text, origin, opts, stem=path.stem)


def _load_json(text: str, origin: str, stem: str, opts: _Options) -> LoadResult:
    check_json_size(text, origin)
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        where = f"{origin}:{exc.lineno}:{exc.colno}"
        raise DefinitionError(f"{where}: invalid JSON: {exc.msg}") from exc
    return _process_json(data, text, origin, stem, opts)


def _process_json(data: Any, text: str, origin: str, stem: str, opts: _Options) -> LoadResult:
    # Locations come from composing the text as YAML on the first lookup, for small texts only.
    compose = (lambda: compose_one(text)) if len(text) <= MAX_JSON_LOCATED else (lambda: None)
    source = SourceMap(origin, compose=compose)
    docs: list[tuple[SourceMap, Any]] = [(source, data)]
    return _process(docs, origin, stem, opts)


def _load_text(text: str, origin: str, opts: _Options, *, stem: str | None = None) -> LoadResult:
    stem = stem if stem is not None else _stem_of(origin)
    data = json_document(text, origin)
    if data is not NOT_JSON:
        return _process_json(data, text, origin, stem, opts)
    composed = compose_all(text, origin)
    docs = [(SourceMap(origin, node), data) for node, data, _ in composed]
    duplicates = [dups for _, _, dups in composed]
    return _process(docs, origin, stem, opts, duplicates=duplicates)


def _stem_of(origin: str) -> str:
    if origin.startswith("<") and origin.endswith(">"):
        return origin[1:-1] or "definition"
    return Path(origin).stem or origin


# --- documents -> definitions -------------------------------------------------------------


@dataclass
class _Candidate:
    data: Any
    source_map: SourceMap
    path: tuple[PathPart, ...]  # where the candidate sits inside its document
    document_index: int
    item_index: int | None


def _candidates(docs: list[tuple[SourceMap, Any]]) -> Iterator[_Candidate]:
    for index, (smap, data) in enumerate(docs):
        if data is None:
            continue  # empty document
        items: list[Any] | None = None
        base: tuple[PathPart, ...] = ()
        if isinstance(data, list):
            items = data
        elif (
            isinstance(data, dict)
            and isinstance(data.get("kind"), str)
            and data["kind"].endswith("List")
            and isinstance(data.get("items"), list)
        ):
            items, base = data["items"], ("items",)
        if items is None:
            yield _Candidate(data, smap, (), index, None)
            continue
        for i, item in enumerate(items):
            if item is not None:
                yield _Candidate(item, _sub_map(smap, (*base, i)), (*base, i), index, i)


def _sub_map(smap: SourceMap, path: tuple[PathPart, ...]) -> SourceMap:
    """A source map rooted at ``path`` of ``smap``'s document."""
    parent = smap

    def compose() -> yaml.Node | None:
        return parent.value_node(path)

    return SourceMap(smap.origin, compose=compose)


def _describe_doc(c: _Candidate) -> str:
    doc = f"document {c.document_index + 1}"
    if c.item_index is not None:
        doc = f"item {c.item_index + 1} of {doc}"
    pos = c.source_map.position(())
    return f"{doc} (line {pos.line})" if pos else doc


def _field_severity(opts: _Options) -> Severity:
    return ERROR if opts.field_validation == "strict" else WARNING


def _duplicate_findings(
    cand: _Candidate, dups: list[tuple[str, yaml.Node]], origin: str, opts: _Options
) -> list[Finding]:
    """KARTA107 for the repeated keys written inside this candidate (``dups`` is in document
    order, so the candidate's are found by bisection), at most MAX_FIELD_FINDINGS of them."""
    node = cand.source_map.node
    if not dups or node is None or opts.field_validation == "ignore":
        return []
    lo, hi = node.start_mark.index, node.end_mark.index
    offsets = [k.start_mark.index for _, k in dups]
    first, last = bisect.bisect_left(offsets, lo), bisect.bisect_left(offsets, hi)
    severity = _field_severity(opts)
    out = [
        make(
            "KARTA107",
            messages.duplicate_key(key),
            location=f"{origin}:{k.start_mark.line + 1}:{k.start_mark.column + 1}",
            severity=severity,
        )
        for key, k in dups[first : min(last, first + MAX_FIELD_FINDINGS)]
    ]
    hidden = last - first - MAX_FIELD_FINDINGS
    if hidden > 0:
        out.append(
            make(
                "KARTA107",
                messages.more_field_findings(hidden, "repeated keys"),
                location=out[-1].location,
                severity=severity,
            )
        )
    return out


def _process(
    docs: list[tuple[SourceMap, Any]],
    origin: str,
    stem: str,
    opts: _Options,
    *,
    duplicates: list[list[tuple[str, yaml.Node]]] | None = None,
) -> LoadResult:
    candidates = list(_candidates(docs))
    definitions: list[LoadedDefinition] = []
    rejected: list[RejectedDocument] = []
    all_findings: list[Finding] = []
    several = len(candidates) > 1
    budget = CompileBudget(origin, opts.compile_seconds)  # one for every definition of this text
    for ordinal, cand in enumerate(candidates):
        derived = f"{stem}-{ordinal}" if several else stem
        dups = duplicates[cand.document_index] if duplicates else []
        loaded, reject = _read_candidate(cand, origin, derived, opts, dups=dups, budget=budget)
        if loaded is not None:
            definitions.append(loaded)
            all_findings.extend(loaded.findings)
        if reject is not None:
            rejected.append(reject)
            all_findings.extend(reject.findings)
    return LoadResult(tuple(definitions), tuple(rejected), tuple(all_findings), (origin,))


def _read_candidate(
    cand: _Candidate,
    origin: str,
    derived: str,
    opts: _Options,
    *,
    dups: list[tuple[str, yaml.Node]],
    budget: CompileBudget,
) -> tuple[LoadedDefinition | None, RejectedDocument | None]:
    data = cand.data
    smap = cand.source_map
    loc = smap.location(())

    def reject(what: str, name: str = derived) -> tuple[None, RejectedDocument]:
        f = make(
            "KARTA104",
            messages.not_a_definition(origin, _describe_doc(cand), what),
            definition=name,
            location=loc,
        )
        return None, RejectedDocument(origin, cand.document_index, cand.item_index, name, loc, (f,), True)

    if not isinstance(data, dict):
        return reject(f"expected a mapping, got {_describe_value(data)}")
    findings: list[Finding] = []
    api_version, kind = data.get("apiVersion"), data.get("kind")
    if "structureDefinition" in data and "spec" not in data and kind is None and api_version is None:
        # A bare spec.
        data = {
            "apiVersion": KARTA_API_VERSION,
            "kind": KARTA_KIND,
            "metadata": {"name": derived},
            "spec": data,
        }
        smap = SourceMap(origin, compose=lambda: cand.source_map.node, prefix=("spec",))
    elif kind == LEGACY_KIND and api_version in (LEGACY_API_VERSION, None):
        data = {**data, "apiVersion": KARTA_API_VERSION, "kind": KARTA_KIND}
        findings.append(
            make(
                "KARTA105",
                messages.legacy_definition(),
                definition=_name_of(data) or derived,
                location=loc,
            )
        )
    elif kind == KARTA_KIND:
        if api_version not in (KARTA_API_VERSION, None):
            return reject(
                f"unsupported apiVersion {api_version!r} for kind Karta (expected {KARTA_API_VERSION})"
            )
    elif kind is not None or api_version is not None:
        return reject(f"it is a {kind or '<no kind>'} ({api_version or '<no apiVersion>'})")
    else:
        spec = data.get("spec")
        if not (isinstance(spec, dict) and "structureDefinition" in spec):
            return reject("no spec.structureDefinition (and no apiVersion/kind)")

    name = _name_of(data)
    if not name:
        name = derived
        metadata = data.get("metadata")
        metadata = dict(metadata) if isinstance(metadata, dict) else {}
        metadata["name"] = derived
        data = {**data, "metadata": metadata}
        findings.append(
            make(
                "KARTA106",
                messages.missing_name(derived),
                field="metadata.name",
                definition=derived,
                location=loc,
            )
        )

    findings.extend(f.with_context(definition=name) for f in _duplicate_findings(cand, dups, origin, opts))
    findings.extend(_unknown_fields(data, smap, name, opts))
    try:
        karta = Karta.model_validate(data)
    except ValidationError as exc:
        findings.extend(_type_findings(exc, smap, name))
        rej = RejectedDocument(
            origin, cand.document_index, cand.item_index, name, loc, tuple(findings), False
        )
        return None, rej
    loaded = LoadedDefinition(
        karta, origin, cand.document_index, smap, cand.item_index, tuple(findings), budget=budget
    )
    return loaded, None


def _name_of(data: dict[str, Any]) -> str | None:
    metadata = data.get("metadata")
    if isinstance(metadata, dict):
        name = metadata.get("name")
        if isinstance(name, str) and name:
            return name
    return None


def _describe_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"number {value}"
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:37] + "..."
        return f"string {json.dumps(text)}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return type(value).__name__


# --- unknown fields -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Shape:
    """What a field holds: a model, a list of a shape, free-form data, or a scalar."""

    model: type[BaseModel] | None = None
    item: _Shape | None = None
    free: bool = False


_SCALAR = _Shape()
_FREE = _Shape(free=True)
# Kubernetes-managed or operator-written parts: not ours to police.
_FREE_TOP_LEVEL = {"metadata", "status"}


def _shape_of(annotation: Any) -> _Shape:
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _shape_of(members[0]) if len(members) == 1 else _FREE
    if origin in (tuple, list):
        args = typing.get_args(annotation)
        return _Shape(item=_shape_of(args[0]) if args else _FREE)
    if origin is dict or annotation is dict or annotation is Any:
        return _FREE
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _Shape(model=annotation)
    return _SCALAR


@functools.cache
def _model_fields(model: type[BaseModel]) -> tuple[dict[str, _Shape], dict[str, str]]:
    """Wire name -> shape, and Python name -> wire name (for suggestions)."""
    by_alias: dict[str, _Shape] = {}
    py_to_alias: dict[str, str] = {}
    for py_name, info in model.model_fields.items():
        alias = info.alias or py_name
        by_alias[alias] = _shape_of(info.annotation)
        py_to_alias[py_name] = alias
    return by_alias, py_to_alias


def _unknown_fields(data: dict[str, Any], smap: SourceMap, name: str, opts: _Options) -> list[Finding]:
    """KARTA101 for every field the format does not have (``metadata`` and ``status`` aside), with
    a did-you-mean; at most MAX_FIELD_FINDINGS are described, one more finding counts the rest."""
    if opts.field_validation == "ignore":
        return []
    out: list[Finding] = []
    severity = _field_severity(opts)
    hidden = 0

    def walk(value: Any, model: type[BaseModel], path: tuple[PathPart, ...]) -> None:
        nonlocal hidden
        if not isinstance(value, dict):
            return
        fields, py_to_alias = _model_fields(model)
        for key, sub in value.items():
            shape = fields.get(key) if isinstance(key, str) else None
            if shape is None:
                if len(out) >= MAX_FIELD_FINDINGS:
                    hidden += 1
                    continue
                key_text = str(key)
                full = (*path, key_text)
                out.append(
                    make(
                        "KARTA101",
                        messages.unknown_field(
                            key_text, format_path(path), _suggestion(key_text, fields, py_to_alias)
                        ),
                        field=format_path(full),
                        definition=name,
                        location=smap.location(full),
                        severity=severity,
                    )
                )
                continue
            if not path and key in _FREE_TOP_LEVEL:
                continue
            visit(sub, shape, (*path, key))

    def visit(value: Any, shape: _Shape, path: tuple[PathPart, ...]) -> None:
        if shape.model is not None:
            walk(value, shape.model, path)
        elif shape.item is not None and isinstance(value, list):
            for i, item in enumerate(value):
                visit(item, shape.item, (*path, i))

    walk(data, Karta, ())
    if hidden:
        out.append(
            make(
                "KARTA101",
                messages.more_field_findings(hidden, "unknown fields"),
                definition=name,
                location=out[-1].location,
                severity=severity,
            )
        )
    return out


def _suggestion(key: str, fields: dict[str, _Shape], py_to_alias: dict[str, str]) -> str | None:
    """The field ``key`` was probably meant to be: its camelCase spelling, a close match, or the
    same name in another case."""
    suggestion = py_to_alias.get(key)
    if suggestion is not None and suggestion != key:
        return suggestion
    if len(key) > 200:
        return None  # difflib is quadratic in the length of what it compares
    close = difflib.get_close_matches(key, list(fields), n=1, cutoff=0.6)
    if close:
        return close[0]
    lowered = {f.lower(): f for f in fields}
    return lowered.get(key.lower())


# --- type errors --------------------------------------------------------------------------

_EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "bool_type": "a boolean",
    "bool_parsing": "a boolean",
    "tuple_type": "a list",
    "list_type": "a list",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "dict_type": "a mapping",
    "mapping_type": "a mapping",
}


def _type_findings(exc: ValidationError, smap: SourceMap, name: str) -> list[Finding]:
    out: list[Finding] = []
    for err in exc.errors(include_url=False):
        loc = tuple(p for p in err["loc"] if isinstance(p, (str, int)))
        path = format_path(loc)
        kind = err["type"]
        if kind == "missing" and loc:
            parent = format_path(loc[:-1])
            out.append(
                make(
                    "KARTA103",
                    messages.missing_field(parent, str(loc[-1])),
                    field=path,
                    definition=name,
                    location=smap.location(loc),
                )
            )
            continue
        expected = _EXPECTED.get(kind)
        detail = (
            f"expected {expected}, got {_describe_value(err.get('input'))}"
            if expected
            else f"{err['msg']} (got {_describe_value(err.get('input'))})"
        )
        out.append(
            make(
                "KARTA102",
                messages.type_error(path, detail),
                field=path,
                definition=name,
                location=smap.location(loc, key=False),
            )
        )
    return out
