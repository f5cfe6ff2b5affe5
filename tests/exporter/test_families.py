"""Choosing the exported workload families (``--metric-allowlist``/``--metric-denylist``), read as
kube-state-metrics reads its flags of the same names: exact names or regular expressions searched
in the name (kube-prometheus' denylist writes ``^...$`` to anchor), the two lists exclusive."""

from __future__ import annotations

import pytest

from tests.cli.helpers import wmap
from workload_map.cli import exit_codes
from workload_map.exporter import metrics as m
from workload_map.exporter.metrics import MAX_PATTERN_LENGTH, select_families


def names(families: tuple[m.Family, ...]) -> list[str]:
    return [f.name for f in families]


def test_no_list_exports_every_workload_family() -> None:
    assert select_families() == m.WORKLOAD_FAMILIES


def test_allowlist_keeps_the_output_order() -> None:
    got = select_families(allow=["wmap_pod_workload_info", "wmap_workload_info"])
    assert names(got) == ["wmap_workload_info", "wmap_pod_workload_info"]


def test_unanchored_regex_matches_inside_the_name_and_anchors_restrict_it() -> None:
    every_pods = select_families(allow=["_pods$"])
    assert names(every_pods) == [
        "wmap_workload_component_pods",
        "wmap_workload_instance_pods",
        "wmap_workload_unattributed_pods",
    ]
    # searched, not matched whole: "resource_requests" is in two names
    assert names(select_families(allow=["resource_requests"])) == [
        "wmap_workload_resource_requests",
        "wmap_workload_component_resource_requests",
    ]
    assert names(select_families(allow=["^wmap_workload_resource_requests$"])) == [
        "wmap_workload_resource_requests"
    ]


def test_denylist_leaves_the_rest() -> None:
    got = select_families(deny=["wmap_workload_phase", "^wmap_workload_component_resource_requests$"])
    assert "wmap_workload_phase" not in names(got)
    assert "wmap_workload_component_resource_requests" not in names(got)
    assert len(got) == len(m.WORKLOAD_FAMILIES) - 2
    assert "wmap_workload_primary_phase" in names(got)  # "wmap_workload_phase" is not searched in it


@pytest.mark.parametrize(
    ("allow", "deny", "message"),
    [
        (["wmap_workload_info"], ["wmap_workload_phase"], "mutually exclusive"),
        (["wmap_nope"], [], "--metric-allowlist: 'wmap_nope' matches none of the workload families"),
        ([], ["kube_pod_.*"], "--metric-denylist: 'kube_pod_.*' matches none"),
        ([], ["wmap_(unclosed"], "--metric-denylist: 'wmap_(unclosed' is not a valid regular expression"),
        (["x" * (MAX_PATTERN_LENGTH + 1)], [], f"longer than {MAX_PATTERN_LENGTH} characters"),
    ],
)
def test_bad_lists_are_refused(allow: list[str], deny: list[str], message: str) -> None:
    with pytest.raises(ValueError) as err:
        select_families(allow, deny)
    assert message in str(err.value)
    if "matches none" in message:
        assert "wmap_workload_info" in str(err.value)  # the families one could have meant


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--metric-allowlist", "wmap_workload_info", "--metric-denylist", "wmap_workload_phase"],
            "exclusive",
        ),
        (["--metric-denylist", "wmap_workload_phase,wmap_typo"], "'wmap_typo' matches none"),
    ],
)
def test_the_command_refuses_bad_lists_with_the_usage_code(args: list[str], message: str) -> None:
    """Refused before anything connects: no kubeconfig is read (the server named is unreachable)."""
    rc, _out, err = wmap("exporter", *args, "--server", "https://127.0.0.1:9", "--token", "t")
    assert rc == exit_codes.USAGE, err
    assert message in err


def test_the_docs_name_every_workload_family_the_shipped_rules_read() -> None:
    """docs/metrics.md "Choosing families" tells which families not to deny when the shipped rules
    are installed: that list must follow the rules file."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    rules = (root / "deploy/helm/workload-map/files/wmap-rules.yaml").read_text()
    read = {f.name for f in m.WORKLOAD_FAMILIES if re.search(rf"\b{f.name}\b", rules)}
    docs = (root / "docs/metrics.md").read_text()
    section = docs[docs.index("## Choosing families") : docs.index("## Ceilings")]
    said = section[section.index("The\nshipped rules") :]
    said = said[: said.index("keep those")]
    named = {f.name for f in m.WORKLOAD_FAMILIES if f"`{f.name}`" in said}
    assert read and named == read
