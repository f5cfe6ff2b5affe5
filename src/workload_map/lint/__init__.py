"""``workload_map.lint``: check Karta definitions (and workload objects) against the schemas of
the kinds they describe: CRD files, a live cluster's CRDs, or the built-in subset for Kubernetes
kinds. Finding codes are documented in ``docs/catalog.md``."""

from __future__ import annotations

from workload_map.lint.checks import (
    LintTarget,
    NoSchemaError,
    lint_definition,
    output_paths,
    schema_for,
    targets,
)
from workload_map.lint.findings import CODES, LintFinding
from workload_map.lint.schemas import (
    KindSchema,
    SchemaError,
    SchemaSet,
    builtin_schemas,
    crd_schemas,
    load_crd_file,
)

__all__ = [
    "CODES",
    "KindSchema",
    "LintFinding",
    "LintTarget",
    "NoSchemaError",
    "SchemaError",
    "SchemaSet",
    "builtin_schemas",
    "crd_schemas",
    "lint_definition",
    "load_crd_file",
    "output_paths",
    "schema_for",
    "targets",
]
