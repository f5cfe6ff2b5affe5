"""What every write-back module shares: the :class:`Change` a write returns, and writing through a
definition's path expressions with errors that name the definition, component and field.

Private: the public names are re-exported by :mod:`workload_map.resolve.writeback`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workload_map.errors import DefinitionError, ExpressionError, PathError, WriteBackError
from workload_map.resolve._jq import Path, setpath
from workload_map.resolve.compiled import (
    CompiledComponent,
    CompiledDefinition,
    CompiledExpression,
    Definition,
    as_compiled,
)
from workload_map.resolve.patch import JsonPatch, PatchError, json_patch, merge_patch


class NotAssignableError(WriteBackError):
    """A definition path cannot be written (it reads fine but denotes no assignable location)."""

    def __init__(self, message: str, *, definition: str, component: str, field: str, path: str) -> None:
        super().__init__(message)
        self.definition = definition
        self.component = component
        self.field = field
        self.path = path


class Change:
    """The result of a write: the new object and two patches from the old object to it.

    ``merge_patch`` is ``None`` when the change cannot be expressed as a merge patch (it sets an
    object member to ``null``, e.g. a resume action whose value is ``"null"``); use ``json_patch``.
    It is computed when first read. ``warnings`` are things the write chose not to do (a value
    kept because overwriting was not asked for), in words for the user.

    Writes are copy-on-write: ``new_object`` (and the patches' values) share every part the write
    did not change with the input object (which is never mutated), so a write costs what it
    changes, not the object's size. Treat them as read-only, or ``copy.deepcopy`` before mutating.
    """

    __slots__ = ("_merge", "_old", "json_patch", "new_object", "warnings")

    def __init__(
        self,
        new_object: dict[str, Any],
        json_patch: JsonPatch,
        old: Mapping[str, Any],
        warnings: tuple[str, ...] = (),
    ) -> None:
        self.new_object = new_object
        self.json_patch = json_patch
        self.warnings = warnings
        self._old = old
        self._merge: tuple[Any | None] | None = None

    @property
    def merge_patch(self) -> Any | None:
        if self._merge is None:
            try:
                self._merge = (merge_patch(self._old, self.new_object),)
            except PatchError:
                self._merge = (None,)
        return self._merge[0]

    @property
    def changed(self) -> bool:
        return bool(self.json_patch)

    def __repr__(self) -> str:
        return f"Change(json_patch={self.json_patch!r}, warnings={self.warnings!r})"

    def to_dict(self) -> dict[str, Any]:
        out = {"object": self.new_object, "jsonPatch": self.json_patch, "mergePatch": self.merge_patch}
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out


def make_change(old: Mapping[str, Any], new: dict[str, Any], warnings: tuple[str, ...] = ()) -> Change:
    """A :class:`Change` between two objects (exposed for callers composing several writes)."""
    return Change(new, json_patch(old, new), old, warnings)


def plain(value: Any) -> Any:
    """A deep, plain-JSON copy (mapping proxies and tuples become dicts and lists)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return copy.deepcopy(value)


@dataclass(frozen=True)
class Target:
    """Where a write goes: ``field`` is the label used in messages, ``ce`` the definition's
    compiled expression for it."""

    definition: str
    component: str
    field: str
    ce: CompiledExpression

    @property
    def source(self) -> str:
        return self.ce.source


def not_assignable(t: Target, detail: str = "", prefix: str = "") -> NotAssignableError:
    msg = f"cannot write {t.field} of component '{t.component}': '{t.source}' is not an assignable path"
    if detail:
        msg += f" ({detail})"
    msg += f" (definition '{t.definition}')"
    return NotAssignableError(
        prefix + msg, definition=t.definition, component=t.component, field=t.field, path=t.source
    )


def target_paths(obj: Any, t: Target, prefix: str = "") -> list[Path]:
    """The locations ``t``'s expression denotes in ``obj`` (it must be an assignable path)."""
    if not t.ce.expr.is_assignable:
        raise not_assignable(t, prefix=prefix)
    try:
        return t.ce.expr.paths(obj)
    except PathError as exc:
        raise not_assignable(t, exc.message, prefix) from exc
    except ExpressionError as exc:
        raise WriteBackError(
            f"{prefix}cannot write {t.field} of component '{t.component}': {exc.message}"
        ) from exc


def set_at(obj: Any, path: Path, value: Any, t: Target, prefix: str = "") -> Any:
    """``obj`` with ``value`` at ``path`` (copy-on-write); errors name ``t``'s component and field."""
    try:
        return setpath(obj, path, value)
    except ExpressionError as exc:
        raise WriteBackError(
            f"{prefix}cannot write {t.field} of component '{t.component}' at {list(path)}: {exc.message}"
        ) from exc


def compiled_for(definition: Definition, obj: Mapping[str, Any]) -> tuple[CompiledDefinition, str]:
    """The compiled definition and its name; ``obj`` must be a JSON object."""
    if not isinstance(obj, Mapping):
        raise WriteBackError(f"workload object must be a JSON object, got {type(obj).__name__}")
    cd = as_compiled(definition)
    return cd, cd.name or "<unnamed>"


def component_of(
    definition: Definition, obj: Mapping[str, Any], component: str
) -> tuple[CompiledComponent, str]:
    """A component of the definition (an unknown name is a :class:`WriteBackError` listing the
    components) and the definition's name."""
    cd, dname = compiled_for(definition, obj)
    try:
        return cd.component(component), dname
    except DefinitionError as exc:
        raise WriteBackError(f"{exc} (components: {', '.join(cd.components)})") from exc
