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
