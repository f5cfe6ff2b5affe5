"""JSON patches between two JSON documents, and applying them.

Patch values are the new document's own values (not copies): treat patches as read-only.

* :func:`json_patch` gives a minimal RFC 6902 patch: one ``replace``/``add``/``remove`` at the
  deepest node where the documents differ. Objects are compared key by key; arrays index by
  index, with ``add`` (ascending) or ``remove`` (descending) at the tail when lengths differ.
  Pointer tokens are escaped (``~`` -> ``~0``, ``/`` -> ``~1``).
* :func:`merge_patch` gives an RFC 7386 merge patch, or raises :class:`PatchError` when none
  exists (a merge patch cannot set an object member to ``null``: ``null`` means "delete").
* :func:`apply_json_patch` (all six operations) and :func:`apply_merge_patch` never mutate their
  input.

Equality is JSON equality: ``true`` is not ``1``, and ``1`` differs from ``1.0`` only in type (a
``replace`` is emitted so the result has the exact new value).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from workload_map.errors import WriteBackError

JsonPatch = list[dict[str, Any]]


class PatchError(WriteBackError):
    """A patch could not be computed or applied."""


# --- equality and pointers ---------------------------------------------------------------


def json_equal(a: Any, b: Any) -> bool:
    """Structural JSON equality (booleans are not numbers; ``1`` and ``1.0`` differ)."""
    if a is b:  # copy-on-write writes share every unchanged subtree: no need to walk it
        return True
    if isinstance(a, dict):
        if not isinstance(b, dict) or a.keys() != b.keys():
            return False
        return all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return False
        return all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def escape_token(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def unescape_token(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def pointer(path: Sequence[str | int]) -> str:
    """The RFC 6901 JSON pointer of a path (``""`` is the whole document)."""
    return "".join("/" + escape_token(p) for p in path)


def parse_pointer(ptr: str) -> list[str]:
    if ptr == "":
        return []
    if not ptr.startswith("/"):
        raise PatchError(f"invalid JSON pointer {ptr!r}: must be empty or start with '/'")
    tokens = ptr[1:].split("/")
    for t in tokens:
        if "~" in t.replace("~0", "").replace("~1", ""):
            raise PatchError(f"invalid JSON pointer {ptr!r}: bad '~' escape")
    return [unescape_token(t) for t in tokens]


# --- diff --------------------------------------------------------------------------------


def json_patch(old: Any, new: Any) -> JsonPatch:
    """A minimal RFC 6902 patch taking ``old`` to ``new``."""
    ops: JsonPatch = []
    _diff(old, new, [], ops)
    return ops


def _diff(old: Any, new: Any, path: list[str | int], ops: JsonPatch) -> None:
    if old is new:  # shared by a copy-on-write write: unchanged
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                ops.append({"op": "remove", "path": pointer([*path, key])})
        for key, value in new.items():
            if key not in old:
                ops.append({"op": "add", "path": pointer([*path, key]), "value": value})
            else:
                _diff(old[key], value, [*path, key], ops)
        return
    if isinstance(old, list) and isinstance(new, list):
        common = min(len(old), len(new))
        for i in range(common):
            _diff(old[i], new[i], [*path, i], ops)
        for i in range(len(old) - 1, common - 1, -1):
            ops.append({"op": "remove", "path": pointer([*path, i])})
        for i in range(common, len(new)):
            ops.append({"op": "add", "path": pointer([*path, i]), "value": new[i]})
        return
    if not json_equal(old, new):
        ops.append({"op": "replace", "path": pointer(path), "value": new})


_NOT_EXPRESSIBLE = "the change cannot be expressed as a JSON merge patch (it sets an object member to null)"


def merge_patch(old: Any, new: Any) -> Any:
    """An RFC 7386 merge patch taking ``old`` to ``new``.

    Raises :class:`PatchError` when no merge patch can express the change (``new`` holds a
    ``null`` object member that ``old`` lacks or has with another value): in a merge patch
    ``null`` means "delete", so such a member cannot be written. That is found while the patch is
    built (no trial application of it).
    """
    return _merge_diff(old, new)


def _has_null_member(value: Any) -> bool:
    """An object member (at any depth, not inside arrays, which merge as whole values) is null."""
    if isinstance(value, dict):
        return any(v is None or _has_null_member(v) for v in value.values())
    return False


def _merge_diff(old: Any, new: Any) -> Any:
    if not isinstance(new, dict):
        return new
    if not isinstance(old, dict):
        # Applying an object patch to a non-object starts from {}; nulls inside cannot survive.
        if _has_null_member(new):
            raise PatchError(_NOT_EXPRESSIBLE)
        return new
    out: dict[str, Any] = {}
    for key in old:
        if key not in new:
            out[key] = None
    for key, value in new.items():
        if key not in old:
            if value is None or _has_null_member(value):
                raise PatchError(_NOT_EXPRESSIBLE)
            out[key] = value
        elif not json_equal(old[key], value):
            if value is None:
                raise PatchError(_NOT_EXPRESSIBLE)
            out[key] = _merge_diff(old[key], value)
    return out


# --- apply -------------------------------------------------------------------------------


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 ``MergePatch(target, patch)``; neither input is mutated nor shared."""
    return _merge(copy.deepcopy(target), patch)


def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    out: dict[str, Any] = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge(out.get(key), value)
    return out


def apply_json_patch(obj: Any, ops: Sequence[Mapping[str, Any]]) -> Any:
    """Apply an RFC 6902 patch (``add``, ``remove``, ``replace``, ``move``, ``copy``, ``test``);
    the input is not mutated. Any failure raises :class:`PatchError` naming the operation."""
    doc = copy.deepcopy(obj)
    for index, op in enumerate(ops):
        try:
            doc = _apply_one(doc, op)
        except PatchError as exc:
            raise PatchError(
                f"patch operation {index} ({op.get('op')!r} {op.get('path')!r}): {exc}"
            ) from None
    return doc


def _apply_one(doc: Any, op: Mapping[str, Any]) -> Any:
    kind = op.get("op")
    path = op.get("path")
    if not isinstance(path, str):
        raise PatchError("missing 'path'")
    tokens = parse_pointer(path)
    if kind == "add":
        return _add(doc, tokens, copy.deepcopy(_value(op)))
    if kind == "remove":
        doc, _ = _remove(doc, tokens)
        return doc
    if kind == "replace":
        doc, _ = _remove(doc, tokens)
        return _add(doc, tokens, copy.deepcopy(_value(op)))
    if kind in ("move", "copy"):
        source = op.get("from")
        if not isinstance(source, str):
            raise PatchError("missing 'from'")
        src_tokens = parse_pointer(source)
        if kind == "move":
            if tokens[: len(src_tokens)] == src_tokens and len(tokens) > len(src_tokens):
                raise PatchError("cannot move a value into one of its children")
            doc, value = _remove(doc, src_tokens)
        else:
            value = copy.deepcopy(_get(doc, src_tokens))
        return _add(doc, tokens, value)
    if kind == "test":
        if not json_equal(_get(doc, tokens), _value(op)):
            raise PatchError("test failed")
        return doc
    raise PatchError(f"unknown operation {kind!r}")


def _value(op: Mapping[str, Any]) -> Any:
    if "value" not in op:
        raise PatchError("missing 'value'")
    return op["value"]


def _index(container: list[Any], token: str, *, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
        raise PatchError(f"invalid array index {token!r}")
    i = int(token)
    limit = len(container) if allow_end else len(container) - 1
    if i > limit:
        raise PatchError(f"array index {i} out of range")
    return i


def _get(doc: Any, tokens: list[str]) -> Any:
    cur = doc
    for t in tokens:
        if isinstance(cur, dict):
            if t not in cur:
                raise PatchError(f"member {t!r} not found")
            cur = cur[t]
        elif isinstance(cur, list):
            cur = cur[_index(cur, t, allow_end=False)]
        else:
            raise PatchError(f"cannot index a scalar with {t!r}")
    return cur


def _add(doc: Any, tokens: list[str], value: Any) -> Any:
    if not tokens:
        return value
    parent = _get(doc, tokens[:-1])
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, allow_end=True), value)
    else:
        raise PatchError(f"cannot add {last!r} to a scalar")
    return doc


def _remove(doc: Any, tokens: list[str]) -> tuple[Any, Any]:
    if not tokens:
        return None, doc
    parent = _get(doc, tokens[:-1])
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"member {last!r} not found")
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, last, allow_end=False))
    raise PatchError(f"cannot remove {last!r} from a scalar")


__all__ = [
    "JsonPatch",
    "PatchError",
    "apply_json_patch",
    "apply_merge_patch",
    "escape_token",
    "json_equal",
    "json_patch",
    "merge_patch",
    "parse_pointer",
    "pointer",
]
