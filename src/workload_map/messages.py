"""Every user-facing message text, in one place.

Texts that must match upstream verbatim (validator findings, ``validate`` output) are marked
``# upstream``; keep them byte-for-byte. This module must stay import-light (standard library
only): the CLI imports it on paths where pydantic, yaml and the jq engine are not loaded.
"""

from __future__ import annotations

# --- validator: upstream rules (spec 2.10), exact text ------------------------------------

KARTA_IS_NIL = "karta is nil"  # upstream
ROOT_FULL_KIND = "root component must have full kind (group, version, kind)"  # upstream
ROOT_OWNER_REF = "root component cannot have owner ref"  # upstream
ROOT_STATUS_DEFINITION = "root component must have status definition"  # upstream
COMPONENT_NAME_EMPTY = "component name is empty"  # upstream


def component_name_not_unique(name: str) -> str:  # upstream
    return f"component name {name} is not unique"


def child_no_owner_ref(name: str) -> str:  # upstream
    return f"child component '{name}' has no owner ref"


def child_owner_missing(name: str, owner: str) -> str:  # upstream
    return f"child component '{name}' has owner ref to non-existing component '{owner}'"


def multiple_pod_specs(name: str) -> str:  # upstream
    return f"component '{name}' has multiple pod spec definitions"


def type_selector_empty(name: str) -> str:  # upstream
    return f"component '{name}' has component type selector with neither keyPath nor matchLabels"


def type_selector_value_without_key(name: str) -> str:  # upstream
    return f"component '{name}' has component type selector value without keyPath"


def instance_id_without_selector(name: str) -> str:  # upstream
    return f"component '{name}' has instance id path but no pod component instance selector"


def instance_selector_without_id(name: str) -> str:  # upstream
    return f"component '{name}' has pod component instance selector but no instance id path"


def ownership_cycle(name: str) -> str:  # upstream
    return f"ownership cycle detected involving component {name}"


def pod_group_member_undefined(name: str) -> str:  # upstream
    return f"pod-group member component '{name}' is not defined (should be a root or child component)"


# Upstream's wording; the field is the camelCase path the definition file spells, as in every
# other finding (upstream prints Go field names: Spec.StructureDefinition.ChildComponents[1]...).
def jq_parse_failed(expr: str, field: str, detail: str) -> str:
    return f"failed to parse JQ expression '{expr}' at '{field}': {detail}"


def jq_validation_failed(expr: str, field: str, detail: str) -> str:
    return f"JQ expression '{expr}' at '{field}' failed validation: {detail}"


# --- validator: our extra checks -----------------------------------------------------------


def by_conditions_without_definition(component: str, status: str) -> str:
    return (
        f"component '{component}' maps {status} by conditions but has no conditionsDefinition; "
        "the matcher can never match"
    )


def by_phase_without_definition(component: str, status: str) -> str:
    return (
        f"component '{component}' maps {status} by phase but has no phaseDefinition; "
        "the matcher can never match"
    )


def reason_without_reason_field(component: str, status: str) -> str:
    return (
        f"component '{component}' matches a condition reason for {status} but conditionsDefinition."
        "reasonFieldName is empty; reasons are never extracted, so the matcher can never match"
    )


def empty_matcher(component: str, status: str) -> str:
    return (
        f"component '{component}' has an empty {status} matcher (no byPhase, byConditions or "
        "byExpression); it matches every object"
    )


def condition_without_status_or_reason(component: str, status: str, ctype: str) -> str:
    return (
        f"component '{component}' {status} matcher checks condition '{ctype}' with neither status "
        "nor reason; it matches as soon as the condition exists"
    )


def duplicate_condition_type(component: str, status: str, ctype: str) -> str:
    return (
        f"component '{component}' {status} matcher lists condition '{ctype}' more than once; "
        "the entries must all hold, which is rarely intended"
    )


def duplicate_matcher(component: str, status: str) -> str:
    return f"component '{component}' lists the same {status} matcher more than once"


def matcher_in_two_statuses(component: str, first: str, second: str) -> str:
    return (
        f"component '{component}' has an identical matcher under {first} and {second}; "
        "both statuses always match together"
    )


def sub_group_unknown_component(name: str) -> str:
    return f"podGroup subgroup component '{name}' is not defined (should be a root or child component)"


def path_not_assignable(component: str, field: str, expr: str) -> str:
    return (
        f"component '{component}' {field} '{expr}' is not an assignable path; "
        "reading works but writing pod spec changes back will fail"
    )


def suspend_path_not_assignable(component: str, field: str, expr: str) -> str:
    return f"component '{component}' {field} '{expr}' is not an assignable path; suspend/resume will fail"


def suspend_value_not_json(component: str, field: str, value: str, detail: str) -> str:
    return f"component '{component}' {field} value {value!r} is not valid JSON: {detail}"


def suspend_actions_empty(component: str, which: str) -> str:
    return f"component '{component}' suspendDefinition has no {which} (at least one is required)"


def duplicate_child_kind(gvk: str) -> str:
    return f"additionalChildKinds lists {gvk} more than once"


def child_kind_same_kind(kind: str, first: str, second: str) -> str:
    return (
        f"additionalChildKinds has kind '{kind}' in two groups ({first} and {second}); "
        "the CRD keys this list by kind only, so server-side apply merges them"
    )


def selectors_indistinguishable(first: str, second: str, why: str) -> str:
    return f"pods of components '{first}' and '{second}' cannot be told apart: {why}"


def metadata_path_without_pod_spec_path(component: str) -> str:
    return (
        f"component '{component}' has metadataPath without podSpecPath; "
        "metadataPath is only used with podSpecPath"
    )


def root_instance_id_path(component: str) -> str:
    return (
        f"root component '{component}' has instanceIdPath; the root is always one object, "
        "so instances belong on a child component"
    )


def type_selector_empty_key_path(component: str) -> str:
    return f"component '{component}' has component type selector with an empty keyPath (minimum length 1)"


def type_selector_empty_match_labels(component: str) -> str:
    return f"component '{component}' has component type selector with empty matchLabels (at least one label)"


def member_without_group_keys(group: str, component: str) -> str:
    return (
        f"pod-group '{group}' member '{component}' has no groupByKeyPaths; grouping falls back to "
        "owner reference traversal, which depends on the consumer"
    )


def duplicate_list_entry(what: str, key: str) -> str:
    return f"{what} lists '{key}' more than once"


def topology_empty_fields(where: str, fields: str) -> str:
    return f"{where} topology has empty {fields}"


def empty_expression(field: str) -> str:
    return f"jq expression at '{field}' is empty and is ignored"


def compile_budget_exceeded(origin: str, seconds: float, unchecked: int) -> str:
    return (
        f"{origin}: compiling its expressions took more than {seconds:g} s of CPU, the limit for one "
        f"file; {unchecked} expression(s) of this definition were not checked (simplify them, or "
        "split the file)"
    )


def findings_suppressed(hidden: int, shown: int) -> str:
    return f"{hidden:,} more finding(s) not shown (the first {shown:,} are)"


# --- loader ----------------------------------------------------------------------------


def unknown_field(key: str, path: str, suggestion: str | None) -> str:
    where = f" at {path}" if path else ""
    hint = f' (did you mean "{suggestion}"?)' if suggestion else ""
    return f'unknown field "{key}"{where}{hint}'


def type_error(path: str, detail: str) -> str:
    return f"{path}: {detail}" if path else detail


def missing_field(path: str, key: str) -> str:
    return f'{path}: required field "{key}" is missing' if path else f'required field "{key}" is missing'


def not_a_definition(origin: str, doc: str, what: str) -> str:
    return f"{origin}: {doc} is not a Karta definition: {what}"


def legacy_definition() -> str:
    return "legacy optimization.nvidia.com/v1alpha1 ResourceInterface read as run.ai/v1alpha1 Karta"


#: kubectl's words for a --validate value it does not know.
def invalid_validate_option(value: str) -> str:
    return f'invalid - validate option "{value}"; must be one of: strict (or true), warn, ignore (or false)'


FIELD_VALIDATION_HINT = (
    "unknown fields and repeated keys are errors (--validate=strict, the default); "
    "--validate=warn reports them as warnings, --validate=ignore drops them"
)


def more_field_findings(hidden: int, what: str) -> str:
    return f"{hidden:,} more {what} not listed"


def duplicate_key(key: str) -> str:
    return f'duplicate key "{key}" (the last value wins)'


def missing_name(derived: str) -> str:
    return f'definition has no metadata.name; using "{derived}"'


def yaml_error(location: str, problem: str) -> str:
    return f"{location}: invalid YAML: {problem}"


def cannot_read(origin: str, detail: str) -> str:
    return f"cannot read {origin}: {detail}"


def not_utf8(origin: str, detail: str) -> str:
    return f"{origin}: not UTF-8 text ({detail})"


def not_a_regular_file(origin: str, what: str) -> str:
    return f"cannot read {origin}: it is a {what}, not a regular file"


def too_large(origin: str, limit: int) -> str:
    return f"{origin} is larger than {_size(limit)}"


def too_many_files(directory: str, limit: int, what: str) -> str:
    return f"{directory} holds more than {limit:,} {what}; give a smaller directory or single files"


def inputs_too_large(origin: str, limit: int) -> str:
    return f"{origin}: the files read add up to more than {_size(limit)}"


def too_many_documents(origin: str, limit: int) -> str:
    return f"{origin} holds more than {limit:,} YAML documents"


def too_many_values(location: str, limit: int, aliases: bool) -> str:
    through = " (counting what its aliases expand to)" if aliases else ""
    return f"{location}: the document holds more than {limit:,} values{through}"


def too_many_yaml_nodes(origin: str, limit: int) -> str:
    return (
        f"{origin}: too much YAML structure to read (more than {limit:,} line breaks, commas, brackets, "
        '": " and "- "); JSON of the same data is read faster'
    )


def _size(limit: int) -> str:
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if limit >= factor and limit % factor == 0:
            return f"{limit // factor} {unit}"
    return f"{limit:,} bytes"


def no_definition_files(directory: str) -> str:
    return f"{directory}: no *.yaml, *.yml or *.json files"


def no_definitions(origin: str) -> str:
    return f"{origin}: contains no Karta definition"


def expected_one_definition(origin: str, count: int) -> str:
    return f"{origin}: expected exactly one Karta definition, found {count}"


# --- CLI (general) ------------------------------------------------------------------------

INTERNAL_ERROR_HINT = "rerun with --debug to see the traceback"


def owners_not_readable(resources: list[str]) -> str:
    names = ", ".join(resources)
    return (
        f"not allowed to get {names}: pods owned through them are not shown. Ask a cluster "
        f'administrator for "get" permission on {names} (the owners between workloads and pods).'
    )


def internal_error(detail: str) -> str:
    return f"internal error: {detail} ({INTERNAL_ERROR_HINT})"


def no_such_command(name: str) -> str:
    return f'unknown command "{name}" for "wmap"'


def did_you_mean(candidates: list[str]) -> str:
    return "Did you mean this?\n" + "".join(f"\t{c}\n" for c in candidates)


def see_help(command_path: str) -> str:
    return f"Run '{command_path} --help' for usage."


# --- CLI: validate (spec 5.7) --------------------------------------------------------------


def output_not_supported(command: str) -> str:  # upstream shape, our binary name
    return f"--output is not supported by {command}"


def validate_ok(name: str, gvk: str) -> str:  # upstream
    return f"OK: {name} is a valid Karta definition (GVK: {gvk})"


def validate_invalid(name: str) -> str:  # upstream
    return f"INVALID: {name}"


def findings_in(count: int, name: str) -> str:  # upstream
    return f"{count} finding(s) in {name}"


# --- quarantine of definitions that keep exceeding the expression limits ------------------------


def definition_quarantined(definition: str, retry_in: float, failures: int, last_error: str) -> str:
    return (
        f'definition "{definition}" is quarantined (retried in {max(retry_in, 0.0):.0f}s): '
        f"{failures} evaluations in a row exceeded the expression limits; last: {last_error}"
    )


def jsonpath_failed(template: str, detail: str, data: object) -> str:
    """kubectl's words for a template that fails on the data; the data as JSON (kubectl prints
    a Go dump), cut at 2,000 characters."""
    import json

    shown = json.dumps(data, separators=(",", ":"), default=str)
    if len(shown) > 2000:
        shown = shown[:2000] + "..."
    return (
        f"error executing jsonpath {json.dumps(template)}: Error executing template: {detail}. "
        "Printing more information for debugging the template:\n"
        f"\ttemplate was:\n\t\t{template}\n"
        f"\tobject given to jsonpath engine was:\n\t\t{shown}\n"
    )


# --- CLI: serve without its extra ------------------------------------------------------------


def server_extra_missing(missing: list[str], reinstall: str | None, packages: list[str], version: str) -> str:
    """``wmap serve`` on an install without ``[server]``: what is missing and how to add it.
    ``reinstall``: pip's arguments for the source this install came from, with the extra (from
    pip's record of it); otherwise the clone and wheel forms (the package is on no index)."""
    sources = (
        [f"pip install {reinstall}"]
        if reinstall
        else [
            "pip install '.[server]' (in a clone)",
            f"pip install 'workload_map-{version}-py3-none-any.whl[server]' (the built wheel)",
        ]
    )
    extra = "pip install " + " ".join(f"'{p}'" for p in packages)
    return (
        f"wmap serve needs the [server] extra ({', '.join(missing)} not installed): "
        + ", ".join(sources)
        + f", or add its packages: {extra}"
    )


# --- CLI: a type no definition covers ---------------------------------------------------------

#: Said where it matters (a type no definition covers, ``wmap definitions``), not on every command.
KARTA_CRD_NOT_INSTALLED = "the kartas.run.ai CRD is not installed, so no cluster definition was read"


def generic_hint(word: str, command: str) -> str:
    """A type the cluster serves but no definition covers: ``--generic`` reads it anyway
    (``command``: the command line that does, ``wmap get gizmos --generic``)."""
    return (
        f'"{word}" is served by the cluster: `{command}` reads it without a definition '
        "(kstatus phase, pods through owner references)"
    )


# --- DRA resource claims -------------------------------------------------------------------------


def dra_claims_not_readable(resources: list[str]) -> str:
    names = ", ".join(resources)
    return (
        f"not allowed to get {names}: devices (GPUs) requested through DRA resource claims are not "
        f'counted. Ask a cluster administrator for "get" permission on {names}.'
    )


def dra_claims_not_served(resource: str) -> str:
    return f"the cluster does not serve {resource}: devices requested through DRA claims are not counted"


def dra_claim_missing(what: str) -> str:
    return f"{what} not found: the devices it requests are not counted"


# --- cost per workload (Prometheus) ------------------------------------------------------------

#: Where the cost recording rules come from.
COST_RULES_HINT = (
    "install the recording rules of deploy/prometheus/wmap-rules.yaml "
    "(Helm: exporter.prometheusRule.enabled=true)"
)


def cost_not_shown(failures: list[str]) -> str:
    shown = "; ".join(failures[:3]) + (f" (and {len(failures) - 3} more)" if len(failures) > 3 else "")
    return f"GPU-hours and cost not shown: {shown}"


def prometheus_warning(url: str, text: str) -> str:
    return f"Prometheus at {url} warns: {text}"


def cost_series_missing(url: str, missing: list[str]) -> str:
    """No workload has cost series: which inputs Prometheus lacks and what provides each."""
    why = {
        "workload:wmap_cost_per_hour:sum": COST_RULES_HINT,
        "container_cpu_allocation": "scrape OpenCost with honor_labels: true",
        "wmap_pod_workload_info": "scrape wmap exporter with honor_labels: true",
    }
    parts = [f"{name} ({why.get(name, 'not scraped')})" for name in missing]
    return f"no cost data: Prometheus at {url} has no {', no '.join(parts)} (docs/metrics.md)"


# --- exporter: --metric-allowlist / --metric-denylist -----------------------------------------

METRIC_LISTS_EXCLUSIVE = "--metric-allowlist and --metric-denylist are mutually exclusive"


def metric_list_entry_too_long(flag: str, limit: int) -> str:
    return f"{flag}: an entry is longer than {limit} characters"


def metric_list_bad_pattern(flag: str, entry: str, error: str) -> str:
    return f"{flag}: {entry!r} is not a valid regular expression: {error}"


def metric_list_matches_nothing(flag: str, entry: str, families: list[str]) -> str:
    return f"{flag}: {entry!r} matches none of the workload families ({', '.join(families)})"
