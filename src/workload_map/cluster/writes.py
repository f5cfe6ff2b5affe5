"""Writing a change to a live object without losing anyone else's: read, compute, PATCH with a
``metadata.resourceVersion`` precondition, and on a conflict compute again on the fresh object.

:func:`write_change` is what ``wmap set``/``label``/``scale``/``suspend`` and the REST API use.
The change is computed by the caller's function (the write-back of :mod:`workload_map.resolve`)
from the object as read, so a retry applies the same request to what another writer left, never
a stale copy over it. After ``attempts`` conflicts in a row it gives up with
:class:`~workload_map.errors.ConflictError` saying so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar

from workload_map.cluster.client import KubeClient, PatchType
from workload_map.errors import ConflictError


class Change(Protocol):
    """What a write-back returns (:class:`workload_map.resolve.writeback.Change`)."""

    @property
    def new_object(self) -> dict[str, Any]: ...

    @property
    def json_patch(self) -> list[dict[str, Any]]: ...

    @property
    def merge_patch(self) -> Any | None: ...

    @property
    def changed(self) -> bool: ...


C = TypeVar("C", bound=Change)

#: Attempts at most (a read and a PATCH each) before a conflict is reported.
DEFAULT_ATTEMPTS = 5

DryRun = Literal["none", "client", "server"]


@dataclass(frozen=True)
class WriteResult(Generic[C]):
    """What happened: ``before`` is the object the change was computed on (the last read),
    ``change`` the change, ``after`` the API server's answer (the written object, or the server's
    dry-run result); ``None`` when nothing was sent (no change, or a client dry run)."""

    before: dict[str, Any]
    change: C
    after: dict[str, Any] | None
    attempts: int

    @property
    def result(self) -> dict[str, Any]:
        """The object as it is (or would be) after the write."""
        return self.after if self.after is not None else self.change.new_object


def patch_of(change: Change) -> tuple[PatchType, Any]:
    """The patch to send: a merge patch when one exists, else the JSON patch."""
    if change.merge_patch is not None:
        return "merge", change.merge_patch
    return "json", change.json_patch


def _resource_version(obj: Mapping[str, Any]) -> str | None:
    meta = obj.get("metadata")
    rv = meta.get("resourceVersion") if isinstance(meta, Mapping) else None
    return rv if isinstance(rv, str) and rv else None


def write_change(
    client: KubeClient,
    path: str,
    compute: Callable[[dict[str, Any]], C],
    *,
    dry_run: DryRun = "none",
    field_manager: str | None = None,
    attempts: int = DEFAULT_ATTEMPTS,
    current: dict[str, Any] | None = None,
) -> WriteResult[C]:
    """Apply ``compute(object)`` to the object at ``path``.

    ``current`` is the object when the caller already read it. ``dry_run="client"`` computes the
    change only; ``"server"`` sends it with ``dryRun=All`` (admission and validation run, nothing is
    stored). Errors of ``compute`` and of the API server (403, 404, 422...) propagate as they are.
    """
    obj = current if current is not None else client.get(path)
    tries = max(1, attempts)
    for attempt in range(1, tries + 1):
        change = compute(obj)
        if not change.changed or dry_run == "client":
            return WriteResult(obj, change, None, attempt)
        patch_type, body = patch_of(change)
        try:
            after = client.patch(
                path,
                body,
                patch_type=patch_type,
                field_manager=field_manager,
                dry_run=dry_run == "server",
                resource_version=_resource_version(obj),
            )
        except ConflictError as exc:
            if attempt == tries:
                raise ConflictError(
                    409,
                    "Conflict",
                    f"{exc.message} (the object changed {tries} times while this change was being "
                    "written; gave up)",
                    details=exc.details,
                    method=exc.method,
                    path=exc.path,
                ) from exc
            obj = client.get(path)
            continue
        return WriteResult(obj, change, after, attempt)
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


__all__ = ["DEFAULT_ATTEMPTS", "Change", "DryRun", "WriteResult", "patch_of", "write_change"]
