"""``-o yaml`` (views.machine.to_yaml): a string with line breaks is a literal block, as kubectl
prints one (issue 24: ``wmap group -o yaml`` printed the PodGroup's multi-line
``kai.scheduler/top-owner-metadata`` annotation as a quoted scalar with a blank line between its
lines). Whatever the text, the YAML reads back as the same data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli.helpers import wmap
from workload_map.views.machine import to_yaml


def test_a_multi_line_string_is_a_literal_block() -> None:
    text = to_yaml({"metadata": {"annotations": {"a": "name: x\nuid: y\n", "b": "one\ntwo"}}})
    assert text == (
        "metadata:\n  annotations:\n    a: |\n      name: x\n      uid: y\n    b: |-\n      one\n      two\n"
    )


def test_text_a_literal_block_cannot_hold_stays_one_quoted_line() -> None:
    assert to_yaml({"a": "trailing \nspace"}) == 'a: "trailing \\nspace"\n'
    assert to_yaml({"a": "tab\there\nx"}) == 'a: "tab\\there\\nx"\n'


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.text(max_size=8), st.text(max_size=40) | st.lists(st.text(max_size=20), max_size=3))
)
def test_any_text_reads_back(data: dict[str, Any]) -> None:
    assert yaml.safe_load(to_yaml(data)) == (data or {})


def test_group_yaml_prints_the_top_owner_annotation_as_a_block(tmp_path: Path) -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "n", "uid": "u1"}}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "j-abc",
            "namespace": "n",
            "uid": "u2",
            "ownerReferences": [
                {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u1", "controller": True}
            ],
        },
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [job, pod]}))
    rc, out, err = wmap("group", "j-abc", "-f", str(path), "-o", "yaml")
    assert rc == 0, err
    assert (
        "    kai.scheduler/top-owner-metadata: |\n      name: j\n      uid: u1\n      group: batch\n"
        "      version: v1\n      kind: Job\n"
    ) in out
    assert "\n\n" not in out
    assert yaml.safe_load(out)["metadata"]["annotations"]["kai.scheduler/top-owner-metadata"] == (
        "name: j\nuid: u1\ngroup: batch\nversion: v1\nkind: Job\n"
    )
