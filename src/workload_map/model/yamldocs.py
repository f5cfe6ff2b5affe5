"""The bounded reader of YAML and JSON documents (manifests, CRD files, kubeconfigs, object lists,
definitions): alias and merge-key bombs, too many values, nodes or documents, huge numbers and
deep nesting are refused with a :class:`~workload_map.errors.DefinitionError` naming the origin
with line and column, before PyYAML constructs anything.

Speed: libyaml (``CSafeLoader``) composes each document once; the data is built from that node
tree (:func:`compose_all` keeps the nodes for the definition loader's source map). JSON texts are
parsed with orjson. No pydantic here: reading a kubeconfig must not wait for the model classes
(issue 24: ``describe`` asks for the pods while they import).
"""

from __future__ import annotations

import sys
from typing import Any

import orjson
import yaml

from workload_map import messages
from workload_map.errors import DefinitionError

try:  # libyaml when available (it is in the wheels we depend on); pure Python otherwise.
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
    Dumper: type[yaml.SafeDumper] = yaml.CSafeDumper  # type: ignore[assignment]
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader
    Dumper = yaml.SafeDumper

_RESOLVED: dict[tuple[str, tuple[bool, bool]], str] = {}
_RESOLVED_MAX = 50_000


class _CachingLoader(_Loader):  # type: ignore[valid-type,misc]
    """libyaml parsing with a memo in front of PyYAML's (Python, regex-based) implicit tag
    resolution, which is otherwise about a third of the parse time: definitions repeat the same
    scalars (keys, paths, "True") over and over. Safe because the safe loader has no path
    resolvers, so the tag depends on the scalar text and its plain/quoted style only."""

    def resolve(self, kind: type[yaml.Node], value: Any, implicit: Any) -> str:
        if kind is yaml.ScalarNode and isinstance(value, str) and len(value) < 200:
            key = (value, (bool(implicit[0]), bool(implicit[1])))
            tag = _RESOLVED.get(key)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if len(_RESOLVED) < _RESOLVED_MAX:
                    _RESOLVED[key] = tag
            return tag
        resolved: str = super().resolve(kind, value, implicit)
        return resolved


#: YAML documents read from one file or text at most.
MAX_DOCUMENTS = 10_000


def yaml_error(exc: yaml.YAMLError, origin: str, text: str) -> DefinitionError:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "syntax error"
        if exc.context and exc.problem:
            problem = f"{problem} ({exc.context})"
        if mark is not None:
            return DefinitionError(
                messages.yaml_error(f"{origin}:{mark.line + 1}:{mark.column + 1}", problem)
            )
        return DefinitionError(messages.yaml_error(origin, problem))
    if isinstance(exc, yaml.reader.ReaderError):
        pos = exc.position
        line = text.count("\n", 0, pos) + 1
        column = pos - (text.rfind("\n", 0, pos) + 1) + 1
        problem = (
            f"unacceptable character #x{exc.character:04x}: {exc.reason}"
            if isinstance(exc.character, int)
            else str(exc.reason)
        )
        return DefinitionError(messages.yaml_error(f"{origin}:{line}:{column}", problem))
    return DefinitionError(messages.yaml_error(origin, str(exc)))


_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"


class _Fallback(Exception):
    """The document uses a YAML feature the fast builder leaves to PyYAML (merge keys, sets...)."""


# Values a document may expand to through aliases; beyond this it is an alias bomb.
MAX_EXPANDED_VALUES = 2_000_000
# YAML nodes a text may hold, estimated from its bytes before libyaml composes it (a composed node
# costs about 280 bytes; 16 MiB of "- a" lines would be 4 million of them). Real manifests, CRDs
# and recordings need one estimated node per 13 bytes or more, so a 13 MiB file still fits.
MAX_YAML_NODES = 1_000_000
# A JSON text is parsed (orjson) only if it cannot hold more values than a YAML document may.
MAX_JSON_VALUES = MAX_EXPANDED_VALUES
# JSON is composed as YAML for locations (findings' line:column) only up to this size.
MAX_JSON_LOCATED = 2 * 1024 * 1024


class _TooLarge(Exception):
    pass


class _BadScalar(Exception):
    def __init__(self, node: yaml.Node, problem: str) -> None:
        if "integer string conversion" in problem:
            value = str(getattr(node, "value", ""))
            limit = sys.get_int_max_str_digits()
            problem = f"a number of {len(value)} digits is longer than the allowed {limit}"
        super().__init__(problem)
        self.node = node
        self.problem = problem


def _expanded_size(root: yaml.Node, limit: int) -> int:
    """How many values the node graph stands for once every alias and merge key is expanded,
    counted over the graph (each node's size once, memoized), refusing more than ``limit``
    before anything is constructed. PyYAML's constructor would copy merged mappings and
    callers walk shared values, so the expanded size is what costs."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        known = sizes.get(key)
        if known is not None:
            return known
        if key in active:  # a recursive alias: counted once
            return 1
        total = 1
        if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
            active.add(key)
            children = (
                [part for pair in node.value for part in pair]
                if isinstance(node, yaml.MappingNode)
                else list(node.value)
            )
            for child in children:
                total += size(child)
                if total > limit:
                    raise _TooLarge
            active.discard(key)
        sizes[key] = total
        return total

    return size(root)


def load_yaml_documents(text: str, origin: str) -> list[Any]:
    """Every document of a YAML (or JSON) text as plain data, with the bounds the definition
    loader has: an alias or merge-key bomb, a 4,300-digit number, too many values or documents,
    or a too-deep nesting is a DefinitionError naming ``origin`` with line and column. Text that
    is JSON is parsed as JSON (orjson), only falling back to YAML when it is not valid JSON. The
    one reader for untrusted files (manifests, CRD files, kubeconfigs, object lists)."""
    parsed = json_document(text, origin)
    if parsed is not NOT_JSON:
        return [parsed]
    return [data for _, data, _ in compose_all(text, origin)]


NOT_JSON = object()


def json_document(text: str, origin: str) -> Any:
    """The data of ``text`` when it is one JSON object or array, else ``NOT_JSON`` (read it as
    YAML, which also reports the syntax error). Refused before parsing when it may hold more than
    :data:`MAX_JSON_VALUES` values (every value but the first needs a comma or an opening bracket)."""
    start = text[:64].lstrip("\ufeff \t\r\n")[:1]
    if start not in ("{", "["):
        return NOT_JSON
    check_json_size(text, origin)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return NOT_JSON


def check_json_size(text: str, origin: str) -> None:
    estimate = text.count(",") + text.count("[") + text.count("{")
    if estimate > MAX_JSON_VALUES:
        raise DefinitionError(messages.too_many_values(origin, MAX_JSON_VALUES, aliases=False))


def _check_yaml_size(text: str, origin: str) -> None:
    """Refuse a text that may compose to more than :data:`MAX_YAML_NODES` nodes. Each node after the
    first of a document is introduced by a line break, a comma, an opening bracket, ``- ``, ``: ``
    or ``? ``, so counting those (at C speed) bounds the nodes from above."""
    estimate = (
        text.count("\n")
        + text.count(",")
        + text.count("[")
        + text.count("{")
        + text.count("- ")
        + text.count(": ")
        + text.count("? ")
    )
    if estimate > MAX_YAML_NODES:
        raise DefinitionError(messages.too_many_yaml_nodes(origin, MAX_YAML_NODES))


class _Builder:
    """Data from a composed node tree: plain maps, lists and scalars, about twice as fast as
    PyYAML's constructor (bench/bench_load.py). Aliases share the built object, as in PyYAML,
    and the expanded size is counted so that an alias bomb is refused instead of walked."""

    def __init__(self) -> None:
        self._constructor = yaml.constructor.SafeConstructor()
        self._memo: dict[int, tuple[Any, int]] = {}
        self.expanded = 0
        self.aliased = False  # a node was reached twice (an alias)
        self.duplicates: list[tuple[str, yaml.Node]] = []  # (key, key node) of repeated keys

    def build(self, node: yaml.Node) -> Any:
        value, size = self._build(node)
        self.expanded = size
        return value

    def _build(self, node: yaml.Node) -> tuple[Any, int]:
        if isinstance(node, yaml.ScalarNode):
            if node.tag == _STR_TAG:
                return node.value, 1
            fn = yaml.constructor.SafeConstructor.yaml_constructors.get(node.tag)
            if fn is None or node.tag in ("tag:yaml.org,2002:value", "tag:yaml.org,2002:merge"):
                raise _Fallback
            try:
                return fn(self._constructor, node), 1
            except ValueError as exc:  # e.g. an integer of more than 4,300 digits
                raise _BadScalar(node, str(exc)) from None
        done = self._memo.get(id(node))
        if done is not None:
            self.aliased = True
            return done
        size = 1
        if isinstance(node, yaml.MappingNode) and node.tag == _MAP_TAG:
            mapping: dict[Any, Any] = {}
            self._memo[id(node)] = (mapping, 1)  # a recursive alias counts as one
            for k, v in node.value:
                if k.tag == "tag:yaml.org,2002:merge":
                    raise _Fallback
                key, ks = self._build(k)
                value, vs = self._build(v)
                size += ks + vs
                try:
                    if key in mapping:
                        self.duplicates.append((str(key), k))
                    mapping[key] = value
                except TypeError:  # an unhashable key (a mapping or list used as a key)
                    raise _Fallback from None
            result: tuple[Any, int] = (mapping, size)
        elif isinstance(node, yaml.SequenceNode) and node.tag == _SEQ_TAG:
            items: list[Any] = []
            self._memo[id(node)] = (items, 1)
            for v in node.value:
                value, vs = self._build(v)
                size += vs
                items.append(value)
            result = (items, size)
        else:
            raise _Fallback
        if size > MAX_EXPANDED_VALUES:
            raise _TooLarge
        self._memo[id(node)] = result
        return result


def compose_all(text: str, origin: str) -> list[tuple[yaml.Node, Any, list[tuple[str, yaml.Node]]]]:
    """Compose each document once (libyaml), build its data from the same nodes, keep the nodes
    for the source map. Also returns the repeated mapping keys of each document."""
    _check_yaml_size(text, origin)
    loader = _CachingLoader(text)
    docs: list[tuple[yaml.Node, Any, list[tuple[str, yaml.Node]]]] = []
    try:
        while loader.check_node():
            if len(docs) >= MAX_DOCUMENTS:
                raise DefinitionError(messages.too_many_documents(origin, MAX_DOCUMENTS))
            node = loader.get_node()
            if node is None:
                continue
            builder = _Builder()
            try:
                try:
                    data = builder.build(node)
                except _Fallback:
                    builder.aliased = True  # merge keys and anchors: what they expand to is counted
                    _expanded_size(node, MAX_EXPANDED_VALUES)
                    try:
                        data = loader.construct_document(node)
                    except ValueError as exc:
                        raise _BadScalar(node, str(exc)) from None
            except _BadScalar as exc:
                mark = exc.node.start_mark
                raise DefinitionError(
                    messages.yaml_error(f"{origin}:{mark.line + 1}:{mark.column + 1}", exc.problem)
                ) from None
            except _TooLarge:
                where = f"{origin}:{node.start_mark.line + 1}:1"
                raise DefinitionError(
                    messages.too_many_values(where, MAX_EXPANDED_VALUES, aliases=builder.aliased)
                ) from None
            docs.append((node, data, builder.duplicates))
    except yaml.YAMLError as exc:
        raise yaml_error(exc, origin, text) from exc
    except RecursionError as exc:
        raise DefinitionError(messages.yaml_error(origin, "nesting too deep")) from exc
    finally:
        loader.dispose()
    return docs


def compose_one(text: str) -> yaml.Node | None:
    loader = _Loader(text)
    try:
        node: yaml.Node | None = loader.get_single_node()
        return node
    finally:
        loader.dispose()


__all__ = [
    "MAX_DOCUMENTS",
    "MAX_EXPANDED_VALUES",
    "MAX_JSON_LOCATED",
    "MAX_JSON_VALUES",
    "MAX_YAML_NODES",
    "NOT_JSON",
    "Dumper",
    "check_json_size",
    "compose_all",
    "compose_one",
    "json_document",
    "load_yaml_documents",
    "yaml_error",
]
