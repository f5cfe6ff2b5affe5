"""The shipped Prometheus rules and every query of docs/metrics.md, checked by Prometheus' own
promtool: rules parse (``promtool check rules``), the recording rules and alerts give the expected
values on synthetic DCGM, cAdvisor and exporter series (``promtool test rules``), every query of
the docs parses and returns, on the same series, the samples doc-queries.expected.yaml gives it,
and the PrometheusRule manifest carries the same groups as the plain rules file."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
RULES_DIR = ROOT / "deploy" / "prometheus"
RULES = RULES_DIR / "wmap-rules.yaml"
RULES_TESTS = RULES_DIR / "wmap-rules.test.yaml"
PROMETHEUS_RULE = RULES_DIR / "wmap-prometheusrule.yaml"
METRICS_DOC = ROOT / "docs" / "metrics.md"
DOC_RESULTS = Path(__file__).with_name("doc-queries.expected.yaml")

PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool not installed (scripts/bootstrap.sh installs Debian's prometheus)"
)


def _promtool(*args: str, cwd: Path = RULES_DIR) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None
    return subprocess.run([PROMTOOL, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def doc_queries() -> list[str]:
    """The ```promql blocks of docs/metrics.md, comment lines dropped."""
    blocks = re.findall(r"```promql\n(.*?)```", METRICS_DOC.read_text(), flags=re.S)
    out = []
    for block in blocks:
        lines = [ln for ln in block.splitlines() if not ln.lstrip().startswith("#")]
        out.append("\n".join(lines).strip())
    return out


@needs_promtool
def test_shipped_rules_parse() -> None:
    result = _promtool("check", "rules", RULES.name)
    assert result.returncode == 0, result.stdout + result.stderr


@needs_promtool
def test_rules_unit_tests_pass() -> None:
    result = _promtool("test", "rules", RULES_TESTS.name)
    assert result.returncode == 0 and "SUCCESS" in result.stdout, result.stdout + result.stderr


@needs_promtool
def test_every_documented_query_parses(tmp_path: Path) -> None:
    queries = doc_queries()
    assert len(queries) >= 7
    rules = {
        "groups": [
            {
                "name": "docs",
                "rules": [{"record": f"doc:query_{i}", "expr": q} for i, q in enumerate(queries)],
            }
        ]
    }
    path = tmp_path / "doc-rules.yaml"
    path.write_text(yaml.safe_dump(rules))
    result = _promtool("check", "rules", str(path), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def _doc_results_test_file(tmp_path: Path, expected: dict[str, Any]) -> Path:
    """A ``promtool test rules`` file evaluating each entry of ``expected`` on the rules test's
    synthetic series (its input groups merged), the entry's own extra series and the shipped
    recording rules (the cost queries read their series)."""
    shipped = yaml.safe_load(RULES_TESTS.read_text())
    series = [s for group in shipped["tests"] for s in group["input_series"]]
    test = {
        "interval": "1m",
        "input_series": series + expected["input_series"],
        "promql_expr_test": [
            {"expr": q["query"], "eval_time": expected["eval_time"], "exp_samples": q["exp_samples"]}
            for q in expected["queries"]
        ],
    }
    path = tmp_path / "doc-queries.test.yaml"
    path.write_text(
        yaml.safe_dump({"rule_files": [str(RULES)], "evaluation_interval": "1m", "tests": [test]})
    )
    return path


@needs_promtool
def test_every_documented_query_gives_its_result(tmp_path: Path) -> None:
    """Each documented query runs in Prometheus on synthetic DCGM, cAdvisor and exporter series
    and returns exactly the samples written beside it: a join that matches nothing (a renamed
    label, a many-to-many match) fails here although it parses."""
    expected = yaml.safe_load(DOC_RESULTS.read_text())
    assert [q["query"].strip() for q in expected["queries"]] == doc_queries()
    result = _promtool("test", "rules", str(_doc_results_test_file(tmp_path, expected)), cwd=tmp_path)
    assert result.returncode == 0 and "SUCCESS" in result.stdout, result.stdout + result.stderr


@needs_promtool
def test_a_wrong_documented_result_is_caught(tmp_path: Path) -> None:
    """The check above can fail: the same queries with one expected value changed."""
    expected = yaml.safe_load(DOC_RESULTS.read_text())
    expected["queries"][0]["exp_samples"][0]["value"] += 1
    result = _promtool("test", "rules", str(_doc_results_test_file(tmp_path, expected)), cwd=tmp_path)
    assert result.returncode != 0 and "FAILED" in (result.stdout + result.stderr)


@needs_promtool
def test_a_broken_query_is_caught(tmp_path: Path) -> None:
    """The check above can fail: the query the docs used to carry (grouping labels after
    group_left followed by a parenthesised number) is refused by promtool."""
    broken = "sum(x) * on (a) group_left\n(\n  1 - avg by (a) (y)\n)"
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "b", "rules": [{"record": "b:x", "expr": broken}]}]}))
    result = _promtool("check", "rules", str(path), cwd=tmp_path)
    assert result.returncode != 0 and "parse error" in (result.stdout + result.stderr)


def test_prometheusrule_has_the_rules_files_groups() -> None:
    plain = yaml.safe_load(RULES.read_text())
    operator = yaml.safe_load(PROMETHEUS_RULE.read_text())
    assert operator["apiVersion"] == "monitoring.coreos.com/v1" and operator["kind"] == "PrometheusRule"
    assert operator["spec"]["groups"] == plain["groups"]


def test_role_table_names_real_components() -> None:
    """The docs' table of component labels names components the catalog definitions have."""
    from workload_map.catalog import list_definitions

    by_kind: dict[str, set[str]] = {}
    for karta in list_definitions():
        gvk = karta.root_gvk
        assert gvk is not None
        structure = karta.spec.structure_definition
        names = {structure.root_component.name} | {c.name for c in structure.child_components}
        by_kind.setdefault(gvk.kind, set()).update(names)
    by_kind["Volcano Job"] = by_kind["Job"]
    by_kind["Knative Service"] = by_kind["Service"]
    text = METRICS_DOC.read_text()
    section = text[text.index("## Telling roles apart") : text.index("## Example PromQL")]
    rows = [ln for ln in section.splitlines() if ln.startswith("| ") and not ln.startswith("| type")]
    checked = 0
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        kinds = [k.strip() for k in cells[0].split(",")]
        named = set(re.findall(r"`([^`]+)`", cells[1]))
        known = set().union(*(by_kind.get(k, set()) for k in kinds))
        assert all(k in by_kind for k in kinds), row
        assert named <= known, (row, named - known)
        checked += bool(named)
    assert checked >= 10


#: The series the rules read from other exporters, each by the name its project documents:
#: OpenCost's metrics reference (opencost.io/docs/integrations/metrics, and the constants of
#: opencost's pkg/costmodel/metrics.go), dcgm-exporter's etc/default-counters.csv
#: (DCGM_FI_DEV_GPU_UTIL: gauge, "GPU utilization (in %)") and cAdvisor's container metrics.
DOCUMENTED_INPUTS = {
    "container_cpu_allocation": "OpenCost",
    "container_memory_allocation_bytes": "OpenCost",
    "container_gpu_allocation": "OpenCost",
    "node_cpu_hourly_cost": "OpenCost",
    "node_ram_hourly_cost": "OpenCost",
    "node_gpu_hourly_cost": "OpenCost",
    "DCGM_FI_DEV_GPU_UTIL": "dcgm-exporter",
    "container_cpu_usage_seconds_total": "cAdvisor",
    "container_memory_working_set_bytes": "cAdvisor",
}
#: PromQL words that look like metric names in an expression.
_PROMQL_WORDS = {
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "and",
    "or",
    "unless",
    "bool",
}


def metric_names(expr: str) -> set[str]:
    """The metric names an expression reads: identifiers that are neither functions (followed by
    ``(``), label names (inside ``{...}`` or a by/on/group_left list), strings nor keywords."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # string literals
    text = re.sub(r"\{[^}]*\}", "", text)  # label matchers
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    text = re.sub(r"\[[^\]]*\]", "", text)  # ranges and subquery steps
    names = set()
    for m in re.finditer(r"(?<![\w.])([A-Za-z_:][\w:]*)(\s*\()?", text):
        word, call = m.group(1), m.group(2)
        if not call and word not in _PROMQL_WORDS and not re.fullmatch(r"\d+[smhdwy]?|e\d+", word):
            names.add(word)
    return names


def test_rules_read_documented_names_and_the_exporters_families() -> None:
    """Every series a rule reads is one the rules record, one of the exporter's families (so a
    rename in workload_map.exporter.metrics fails here), or an input by the name OpenCost, DCGM or
    cAdvisor documents; and every documented input is read."""
    from workload_map.exporter.metrics import FAMILIES

    groups = yaml.safe_load(RULES.read_text())["groups"]
    rules = [r for g in groups for r in g["rules"]]
    recorded = {r["record"] for r in rules if "record" in r}
    read: set[str] = set()
    for r in rules:
        read |= metric_names(r["expr"])
    # the alert naming renamed join labels selects its series by a __name__ regex
    for r in rules:
        for m in re.finditer(r'__name__=~"([^"]+)"', r["expr"]):
            read |= set(m.group(1).split("|"))
    exporter = {f.name for f in FAMILIES}
    own = {n for n in read if n.startswith("wmap_")}
    assert own <= exporter, own - exporter
    outside = read - recorded - own
    assert outside == set(DOCUMENTED_INPUTS), outside ^ set(DOCUMENTED_INPUTS)
    assert {"wmap_pod_workload_info", "wmap_workload_resource_requests"} <= own


def test_metric_names_of_an_expression() -> None:
    """The extraction above, on a join with every construct the rules use (it can fail)."""
    expr = (
        'sum by (namespace, pod) (max by (node) (node_gpu_hourly_cost{node!=""}) * on (node) group_left ()'
        " rate(container_cpu_usage_seconds_total[5m:1m]) / 1024 ^ 3) unless on (namespace, pod)"
        ' label_replace(wmap_pod_workload_info, "x", "$1", "y", "(.*)") > bool 1e-9'
    )
    assert metric_names(expr) == {
        "node_gpu_hourly_cost",
        "container_cpu_usage_seconds_total",
        "wmap_pod_workload_info",
    }
