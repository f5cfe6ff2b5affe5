"""``workload_map.generate``: a draft Karta definition from a CRD (``wmap generate``).

:func:`draft_from_crd` picks one kind and version of a CRD file (the storage version unless one
is asked for), finds the pod templates and specs, the replica counts beside them, the status
fields and a suspend flag in its schema (:mod:`~workload_map.generate.infer`) and writes them
as a commented draft (:mod:`~workload_map.generate.draft`).
"""

from __future__ import annotations

from collections.abc import Sequence

from workload_map.generate.draft import Draft, draft_definition
from workload_map.generate.infer import GenerateError
from workload_map.lint.schemas import KindSchema

__all__ = ["Draft", "GenerateError", "draft_definition", "draft_from_schemas", "pick_schema"]


def pick_schema(
    schemas: Sequence[KindSchema], kind: str | None = None, version: str | None = None
) -> KindSchema:
    """The version to draft: ``version`` when given, else the first served one in the CRD's own
    order (the storage version is listed by most generators first)."""
    kinds = sorted({s.kind for s in schemas})
    if kind is not None:
        schemas = [s for s in schemas if s.kind.lower() == kind.lower()]
        if not schemas:
            raise GenerateError(f'no kind "{kind}" in the CRD (it has {", ".join(kinds) or "none"})')
    elif len(kinds) > 1:
        raise GenerateError(f"the file has several kinds ({', '.join(kinds)}): pick one with --kind")
    if version is not None:
        chosen = [s for s in schemas if s.version == version]
        if not chosen:
            have = ", ".join(s.version for s in schemas)
            raise GenerateError(f'no version "{version}" of {schemas[0].kind} (it has {have})')
        return chosen[0]
    served = [s for s in schemas if s.served] or list(schemas)
    if not served:
        raise GenerateError("the CRD has no versions")
    return served[0]


def draft_from_schemas(
    schemas: Sequence[KindSchema], *, kind: str | None = None, version: str | None = None, source: str
) -> Draft:
    ks = pick_schema(schemas, kind, version)
    return draft_definition(ks.group, ks.version, ks.kind, ks.schema, source=source)
