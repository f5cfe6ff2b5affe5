"""Lint findings and their codes (documented in ``docs/catalog.md``; a test keeps both in step)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Severity = Literal["error", "warning"]

# code -> (severity, summary)
CODES: dict[str, tuple[Severity, str]] = {
    # definition vs schema
    "LINT001": ("error", "the definition reads a field the schema does not have"),
    "LINT002": ("error", "the definition steps into a value the schema says is not an object/array"),
    "LINT003": ("error", "replicas path does not yield an integer (or int-or-string)"),
    "LINT004": ("error", "podTemplateSpecPath does not yield a pod template (object with spec.containers)"),
    "LINT005": ("error", "podSpecPath does not yield a pod spec (object with containers)"),
    "LINT006": ("error", "metadataPath does not yield an object"),
    "LINT007": ("error", "fragmented pod spec path yields the wrong type"),
    "LINT008": ("error", "phase path does not yield a string"),
    "LINT009": ("error", "byPhase value is not one of the phase field's enum values"),
    "LINT010": ("error", "conditions path is not an array of objects with the type/status fields"),
    "LINT011": ("warning", "reason matchers used but the conditions have no reason field"),
    "LINT012": ("error", "byConditions type/status value is not in the schema's enum"),
    "LINT013": ("warning", "fragmented pod spec path is not assignable (read-only; write-back fails)"),
    "LINT014": ("error", "suspend/resume action path is not assignable"),
    "LINT015": ("error", "suspend/resume action value does not fit the field"),
    "LINT016": ("warning", "pod selector / gang path reads a field a Pod does not have"),
    "LINT017": ("warning", "version is not served by the CRD"),
    "LINT018": ("error", "the expressions exceed the compile budget; the rest were not checked"),
    "LINT019": ("warning", "more findings than are reported (error when an error was left out)"),
    # objects vs schema (``validate_object``)
    "LINT101": ("error", "value has the wrong type"),
    "LINT102": ("error", "required field is missing"),
    "LINT103": ("error", "value is not one of the enum values"),
    "LINT104": ("warning", "unknown field (the API server prunes it)"),
    "LINT105": ("error", "value out of range (minimum/maximum/minItems/maxItems)"),
    "LINT106": ("error", "no schema for the object's kind and version"),
}


@dataclass(frozen=True)
class LintFinding:
    """One problem. ``field`` is the camelCase definition field (``spec.structureDefinition.
    rootComponent.scaleDefinition.replicasPath``) or, for objects, the object path;
    ``expression`` the jq text; ``schema`` ``<source>#<JSON pointer>`` of the schema node
    involved; ``location`` ``file:line:column`` when the definition came from a file."""

    code: str
    message: str
    severity: Severity = "error"
    field: str | None = None
    expression: str | None = None
    schema: str | None = None
    definition: str | None = None
    location: str | None = None

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def format(self) -> str:
        head = f"{self.location}: " if self.location else ""
        who = f"{self.definition}: " if self.definition and not self.location else ""
        lines = [f"{head}{who}{self.severity}: {self.message} [{self.code}]"]
        if self.field:
            lines.append(f"    field: {self.field}")
        if self.expression is not None:
            lines.append(f"    expression: {self.expression}")
        if self.schema:
            lines.append(f"    schema: {self.schema}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "definition": self.definition,
            "field": self.field,
            "expression": self.expression,
            "schema": self.schema,
            "location": self.location,
        }


def make(code: str, message: str, **kw: Any) -> LintFinding:
    return LintFinding(code, message, CODES[code][0], **kw)
