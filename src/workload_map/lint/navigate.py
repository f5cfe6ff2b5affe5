"""Following a field path (``("spec", "replicas")``, ``"[]"`` for iteration) through an OpenAPI v3
structural schema.

Rules: ``properties`` name fields; ``additionalProperties`` (a schema) is the value of every
other key and of ``[]`` over a map; ``items`` is the element of ``[]`` over an array; ``[]`` over
an object with ``properties`` may yield any property (all are candidates);
``x-kubernetes-preserve-unknown-fields`` without properties, ``additionalProperties: true``, a
missing ``type`` and ``x-kubernetes-int-or-string`` nodes below which nothing is declared mean
"anything goes" from there. ``metadata`` declared as a bare object (CRDs do this for the root and
often for templates) is read as ObjectMeta. Objects marked ``x-wmap-partial`` (the built-in
subsets) may hold fields the subset omits, so a missing key there is not a problem.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any

from workload_map.lint.schemas import object_meta_schema

Schema = Mapping[str, Any]
ITER = "[]"

__all__ = ["ITER", "Node", "Resolution", "kind_of", "resolve_path", "show_path"]


@dataclass(frozen=True)
class Node:
    schema: Schema
    pointer: str  # JSON pointer inside the openAPIV3Schema, "" for the root


@dataclass(frozen=True)
class Resolution:
    """Result of following a path. ``nodes``: candidate schemas at the end (several after ``[]``
    over an object with properties). ``open``: somewhere along the path anything goes, so
    nothing below can be checked. ``problem``: why the path cannot exist, with ``at`` the node
    where it failed and ``depth`` the number of steps that worked."""

    nodes: tuple[Node, ...] = ()
    open: bool = False
    problem: str | None = None
    at: Node | None = None
    depth: int = 0

    @property
    def ok(self) -> bool:
        return self.problem is None


def kind_of(schema: Schema) -> str:
    """``object``, ``array``, ``string``, ``integer``, ``number``, ``boolean``,
    ``int-or-string`` or ``any`` (nothing declared)."""
    if schema.get("x-kubernetes-int-or-string"):
        return "int-or-string"
    t = schema.get("type")
    if isinstance(t, str) and t:
        return t
    if isinstance(schema.get("properties"), Mapping) or isinstance(
        schema.get("additionalProperties"), Mapping
    ):
        return "object"
    if isinstance(schema.get("items"), Mapping):
        return "array"
    return "any"


def _is_open(schema: Schema) -> bool:
    k = kind_of(schema)
    if k == "any":
        return True
    if k != "object":
        return False
    has_props = isinstance(schema.get("properties"), Mapping) and bool(schema.get("properties"))
    addl = schema.get("additionalProperties")
    return (bool(schema.get("x-kubernetes-preserve-unknown-fields")) and not has_props) or addl is True


def _esc(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def show_path(path: Sequence[str]) -> str:
    """``("spec", "a", "[]", "x/y")`` -> ``.spec.a[]["x/y"]``."""
    out = ""
    for part in path:
        if part == ITER:
            out += "[]"
        elif part.replace("_", "a").isalnum() and not part[:1].isdigit():
            out += f".{part}"
        else:
            out += f'["{part}"]'
    return out or "."


def _meta_if_bare(key: str, node: Node) -> Node:
    s = node.schema
    if key == "metadata" and kind_of(s) in ("object", "any") and not s.get("properties"):
        return Node(object_meta_schema(), node.pointer)
    return node


def resolve_path(root: Schema, path: Sequence[str], *, root_pointer: str = "") -> Resolution:
    """Follow ``path`` from ``root``; see the module docstring for the rules."""
    current: list[Node] = [Node(root, root_pointer)]
    for depth, key in enumerate(path):
        if any(_is_open(n.schema) for n in current):
            return Resolution(tuple(current), open=True, depth=depth)
        nxt: list[Node] = []
        open_below = False
        for n in current:
            s = n.schema
            k = kind_of(s)
            if key == ITER:
                items = s.get("items")
                addl = s.get("additionalProperties")
                props = s.get("properties")
                if k == "array" and isinstance(items, Mapping):
                    nxt.append(Node(items, f"{n.pointer}/items"))
                elif k == "object" and isinstance(addl, Mapping):
                    nxt.append(Node(addl, f"{n.pointer}/additionalProperties"))
                elif k == "object" and isinstance(props, Mapping):
                    nxt.extend(Node(v, f"{n.pointer}/properties/{_esc(p)}") for p, v in props.items())
                elif k in ("array", "object"):
                    open_below = True
                continue
            if k != "object":
                continue
            props = s.get("properties")
            addl = s.get("additionalProperties")
            if isinstance(props, Mapping) and key in props:
                nxt.append(_meta_if_bare(key, Node(props[key], f"{n.pointer}/properties/{_esc(key)}")))
            elif isinstance(addl, Mapping):
                nxt.append(Node(addl, f"{n.pointer}/additionalProperties"))
            elif s.get("x-kubernetes-preserve-unknown-fields") or s.get("x-wmap-partial"):
                open_below = True
        if open_below and not nxt:
            return Resolution(tuple(current), open=True, depth=depth)
        if not nxt:
            return Resolution(problem=_explain(current, key), at=current[0], depth=depth)
        current = nxt
    return Resolution(tuple(current), depth=len(path))


def _explain(current: list[Node], key: str) -> str:
    kinds = sorted({kind_of(n.schema) for n in current})
    if key == ITER:
        return f"cannot iterate: the schema declares {' or '.join(kinds)} here"
    objects = [n for n in current if kind_of(n.schema) == "object"]
    if not objects:
        return f'"{key}" cannot be read: the schema declares {" or ".join(kinds)} here, not an object'
    names: list[str] = sorted({p for n in objects for p in (n.schema.get("properties") or {})})
    text = f'no field "{key}" here'
    close = get_close_matches(key, names, n=1, cutoff=0.6)
    if close:
        text += f' (did you mean "{close[0]}"?)'
    elif names:
        shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
        text += f" (fields: {shown})"
    return text
