"""Findings: what the loader and the validator report about a definition.

A finding never raises; callers collect them and decide (the CLI fails on errors, prints
warnings). Every code is stable and documented in ``docs/validation.md``; ``CODES`` below is the
registry the documentation test checks against.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

Severity = Literal["error", "warning"]

ERROR: Severity = "error"
WARNING: Severity = "warning"


@dataclass(frozen=True, slots=True)
class CodeInfo:
    severity: Severity
    summary: str
    upstream: bool = False


# KARTA0xx: upstream validator rules (spec 2.10), exact upstream message text.
# KARTA1xx: loader (shape, types, unknown fields, documents that are not definitions).
# KARTA2xx: our extra semantic checks.
# KARTA3xx: limits (the compile budget, the findings cap).
CODES: dict[str, CodeInfo] = {
    "KARTA001": CodeInfo(ERROR, "karta is nil", True),
    "KARTA002": CodeInfo(ERROR, "component name is not unique (stops validation)", True),
    "KARTA003": CodeInfo(ERROR, "root component must have full kind (group, version, kind)", True),
    "KARTA004": CodeInfo(ERROR, "root component cannot have owner ref", True),
    "KARTA005": CodeInfo(ERROR, "root component must have status definition", True),
    "KARTA006": CodeInfo(ERROR, "child component has no owner ref", True),
    "KARTA007": CodeInfo(ERROR, "child component has owner ref to non-existing component", True),
    "KARTA008": CodeInfo(ERROR, "component name is empty", True),
    "KARTA009": CodeInfo(ERROR, "component has multiple pod spec definitions", True),
    "KARTA010": CodeInfo(ERROR, "component type selector with neither keyPath nor matchLabels", True),
    "KARTA011": CodeInfo(ERROR, "component type selector value without keyPath", True),
    "KARTA012": CodeInfo(ERROR, "instance id path but no pod component instance selector", True),
    "KARTA013": CodeInfo(ERROR, "pod component instance selector but no instance id path", True),
    "KARTA014": CodeInfo(ERROR, "ownership cycle detected", True),
    "KARTA015": CodeInfo(ERROR, "pod-group member component is not defined", True),
    "KARTA016": CodeInfo(ERROR, "jq expression does not parse", True),
    "KARTA017": CodeInfo(ERROR, "jq expression failed static validation (forbidden or undefined)", True),
    "KARTA101": CodeInfo(ERROR, "unknown field (a warning with field validation warn)"),
    "KARTA102": CodeInfo(ERROR, "value has the wrong type"),
    "KARTA103": CodeInfo(ERROR, "required field is missing"),
    "KARTA104": CodeInfo(ERROR, "document is not a Karta definition"),
    "KARTA105": CodeInfo(WARNING, "legacy ResourceInterface definition read as Karta"),
    "KARTA106": CodeInfo(WARNING, "definition has no metadata.name"),
    "KARTA107": CodeInfo(ERROR, "duplicate key in a YAML mapping (a warning with field validation warn)"),
    "KARTA201": CodeInfo(WARNING, "byConditions matcher without conditionsDefinition"),
    "KARTA202": CodeInfo(WARNING, "byPhase matcher without phaseDefinition"),
    "KARTA203": CodeInfo(WARNING, "condition reason matcher while reasonFieldName is empty"),
    "KARTA204": CodeInfo(ERROR, "empty status matcher matches everything"),
    "KARTA205": CodeInfo(WARNING, "byConditions entry with neither status nor reason"),
    "KARTA206": CodeInfo(WARNING, "byConditions matcher lists a condition type twice"),
    "KARTA207": CodeInfo(WARNING, "identical status matcher listed twice under one status"),
    "KARTA208": CodeInfo(WARNING, "identical status matcher under two statuses"),
    "KARTA209": CodeInfo(ERROR, "podGroup subgroup names an unknown component"),
    "KARTA210": CodeInfo(WARNING, "pod spec path is not assignable (write-back fails)"),
    "KARTA211": CodeInfo(ERROR, "suspend/resume action path is not assignable"),
    "KARTA212": CodeInfo(ERROR, "suspend/resume action value is not valid JSON"),
    "KARTA213": CodeInfo(ERROR, "suspendDefinition without suspendActions or resumeActions"),
    "KARTA214": CodeInfo(ERROR, "duplicate additionalChildKinds entry"),
    "KARTA215": CodeInfo(WARNING, "additionalChildKinds has one kind in two groups"),
    "KARTA216": CodeInfo(WARNING, "two pod-bearing components whose pods cannot be told apart"),
    "KARTA217": CodeInfo(WARNING, "metadataPath without podSpecPath"),
    "KARTA218": CodeInfo(WARNING, "instanceIdPath on the root component"),
    "KARTA219": CodeInfo(ERROR, "component type selector with empty keyPath or empty matchLabels"),
    "KARTA220": CodeInfo(WARNING, "pod-group member without groupByKeyPaths"),
    "KARTA221": CodeInfo(ERROR, "duplicate entry in a keyed list or set"),
    "KARTA222": CodeInfo(ERROR, "topology with empty fields"),
    "KARTA223": CodeInfo(WARNING, "empty jq expression (ignored)"),
    "KARTA301": CodeInfo(ERROR, "the file's expressions exceed the compile budget; some were not checked"),
    "KARTA302": CodeInfo(WARNING, "more findings than are reported (error when an error was left out)"),
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem. ``field`` is the camelCase path (``spec.structureDefinition.rootComponent``),
    ``location`` is ``file:line:column`` (1-based) when the definition came from text."""

    code: str
    severity: Severity
    message: str
    field: str | None = None
    definition: str | None = None
    location: str | None = None

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    def format(self, *, code: bool = True, location: bool = True) -> str:
        """``file:12:7: <message> [KARTA009]``."""
        text = self.message
        if location and self.location:
            text = f"{self.location}: {text}"
        if code:
            text = f"{text} [{self.code}]"
        return text

    def as_error(self) -> Finding:
        return self if self.severity == ERROR else replace(self, severity=ERROR)

    def with_context(self, *, definition: str | None = None, location: str | None = None) -> Finding:
        return replace(
            self,
            definition=self.definition if definition is None else definition,
            location=self.location if location is None else location,
        )


def make(
    code: str,
    message: str,
    *,
    field: str | None = None,
    definition: str | None = None,
    location: str | None = None,
    severity: Severity | None = None,
) -> Finding:
    """A finding with the code's registered severity unless ``severity`` overrides it."""
    return Finding(code, severity or CODES[code].severity, message, field, definition, location)


def errors(findings: list[Finding] | tuple[Finding, ...]) -> list[Finding]:
    return [f for f in findings if f.severity == ERROR]


def warnings(findings: list[Finding] | tuple[Finding, ...]) -> list[Finding]:
    return [f for f in findings if f.severity == WARNING]
