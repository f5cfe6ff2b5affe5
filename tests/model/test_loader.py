"""The loader: input shapes, unknown fields, type errors, locations, bad input, round trips."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.model.conftest import base, children, root
from workload_map.errors import DefinitionError
from workload_map.model.definition import Karta
from workload_map.model.loader import (
    DefinitionLoadError,
    dump_definition,
    load_definition,
    load_definitions,
    load_definitions_text,
)
from workload_map.model.locations import SourceMap, format_path, parse_path
from workload_map.model.yamldocs import load_yaml_documents

DATA = Path(__file__).parent / "data"


def y(d: Any) -> str:
    return yaml.safe_dump(d, sort_keys=False)


# --- shapes ---------------------------------------------------------------------------


def test_single_file() -> None:
    d = load_definition(DATA / "valid" / "jobset.yaml")
    assert d.name == "jobset-x-k8s-io-jobset-v1alpha2"
    assert d.origin == str(DATA / "valid" / "jobset.yaml")
    assert d.document_index == 0 and d.item_index is None
    assert d.findings == ()


def test_multi_document_stream_skips_empty_documents() -> None:
    a, b = base(), base()
    b["metadata"]["name"] = "second"
    text = "---\n" + y(a) + "---\n---\n# only a comment\n---\n" + y(b)
    result = load_definitions_text(text, name="multi.yaml")
    assert [d.name for d in result.definitions] == ["t", "second"]
    assert [d.document_index for d in result.definitions] == [0, 3]
    assert result.findings == ()


def test_yaml_list_and_kind_list() -> None:
    a, b = base(), base()
    b["metadata"]["name"] = "b"
    as_list = load_definitions_text(y([a, b]), name="l.yaml")
    assert [(d.name, d.item_index) for d in as_list.definitions] == [("t", 0), ("b", 1)]
    kind_list = load_definitions_text(y({"apiVersion": "v1", "kind": "List", "items": [a, b]}), name="k.yaml")
    assert [d.name for d in kind_list.definitions] == ["t", "b"]
    loc = kind_list.definitions[1].source_map.location("spec.structureDefinition.rootComponent.name")
    assert loc is not None
    line = int(loc.split(":")[1])
    assert (
        y({"apiVersion": "v1", "kind": "List", "items": [a, b]}).splitlines()[line - 1].strip()
        == "name: root"
    )


def test_directory_non_recursive_sorted(tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text(y(base()))
    a = base()
    a["metadata"]["name"] = "a"
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "notes.txt").write_text("ignored")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "c.yaml").write_text(y(base()))
    result = load_definitions(tmp_path)
    assert [d.name for d in result.definitions] == ["a", "t"]
    assert result.origins == (str(tmp_path / "a.json"), str(tmp_path / "b.yaml"))


def test_json_file_with_locations(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    d = base()
    children(d)[0]["ownerName"] = "root"
    p.write_text(json.dumps(d, indent=2))
    result = load_definitions(p)
    [f] = result.findings
    assert f.code == "KARTA101"
    assert f.location is not None
    line, col = map(int, f.location.rsplit(":", 2)[1:])
    assert p.read_text().splitlines()[line - 1][col - 1 :].startswith('"ownerName"')


def test_legacy_resource_interface_is_normalised() -> None:
    d = load_definitions(DATA / "valid" / "legacy-ri.json")
    [loaded] = d.definitions
    assert loaded.karta.api_version == "run.ai/v1alpha1" and loaded.karta.kind == "Karta"
    assert [f.code for f in d.findings] == ["KARTA105"]
    cond = loaded.karta.spec.structure_definition.root_component.status_definition
    assert cond is not None and cond.conditions_definition is not None
    assert cond.conditions_definition.type_field_name == "type"  # CRD default applied
    assert cond.conditions_definition.reason_field_name == "reason"


def test_bare_spec_named_from_file_stem(tmp_path: Path) -> None:
    p = tmp_path / "myjob.yaml"
    p.write_text(y(base()["spec"]))
    [d] = load_definitions(p).definitions
    assert d.name == "myjob"
    assert d.karta.kind == "Karta"
    loc = d.source_map.location("spec.structureDefinition.childComponents[0].ownerRef")
    assert loc == f"{p}:{_line_of(p.read_text(), 'ownerRef')}:5"
    p.write_text(y(base()["spec"]) + "---\n" + y(base()["spec"]))
    assert [d.name for d in load_definitions(p).definitions] == ["myjob-0", "myjob-1"]


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = io.TextIOWrapper(io.BytesIO(y(base()["spec"]).encode()))
    monkeypatch.setattr(sys, "stdin", fake)
    [d] = load_definitions("-").definitions
    assert d.origin == "stdin" and d.name == "stdin"


def test_stream_and_text_sources() -> None:
    [d] = load_definitions(io.StringIO(y(base())), name="given").definitions
    assert d.origin == "given"
    [d2] = load_definitions(y(base())).definitions
    assert d2.origin == "<string>"


def test_missing_name_is_derived_with_warning() -> None:
    d = base()
    del d["metadata"]
    result = load_definitions_text(y(d), name="noname.yaml")
    [loaded] = result.definitions
    assert loaded.name == "noname"
    assert [f.code for f in result.findings] == ["KARTA106"]


# --- not a definition / bad input -----------------------------------------------------------


def test_other_kind_is_not_a_definition() -> None:
    text = y(base()) + "---\n" + (DATA / "invalid" / "deployment.yaml").read_text()
    result = load_definitions_text(text, name="mixed.yaml")
    assert [d.name for d in result.definitions] == ["t"]
    [rej] = result.rejected
    assert rej.not_a_definition and rej.document_index == 1
    [f] = rej.findings
    assert f.code == "KARTA104"
    line = _line_of(text, "apiVersion: apps/v1")
    assert (
        f.message
        == f"mixed.yaml: document 2 (line {line}) is not a Karta definition: it is a Deployment (apps/v1)"
    )
    assert f.location == f"mixed.yaml:{line}:1"


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("just a string\n", 'expected a mapping, got string "just a string"'),
        ("a: 1\n", "no spec.structureDefinition (and no apiVersion/kind)"),
        ("apiVersion: run.ai/v2\nkind: Karta\nspec: {}\n", "unsupported apiVersion"),
    ],
)
def test_not_definitions(text: str, what: str) -> None:
    result = load_definitions_text(text, name="x.yaml")
    [f] = result.findings
    assert f.code == "KARTA104" and what in f.message


def test_empty_file_has_no_definitions(tmp_path: Path) -> None:
    p = tmp_path / "empty.yaml"
    p.write_text("")
    result = load_definitions(p)
    assert result.definitions == () and result.findings == ()
    with pytest.raises(DefinitionLoadError, match="expected exactly one Karta definition, found 0"):
        load_definition(p)


def test_malformed_yaml_has_location(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text("spec:\n  structureDefinition:\n    rootComponent: [a, b\n    x: y\n")
    with pytest.raises(DefinitionError) as info:
        load_definitions(p)
    msg = str(info.value)
    assert msg.startswith(f"{p}:4:") and "invalid YAML" in msg


def test_malformed_json_has_location(tmp_path: Path) -> None:
    p = tmp_path / "bad.json"
    p.write_text('{\n  "spec": {\n    "a": 1,\n  }\n}\n')
    with pytest.raises(DefinitionError, match=rf"^{p}:3:11: invalid JSON: trailing comma"):
        load_definitions(p)


def test_binary_garbage(tmp_path: Path) -> None:
    p = tmp_path / "garbage.yaml"
    p.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(DefinitionError, match="not UTF-8"):
        load_definitions(p)
    p.write_bytes(b"a: \x00\x01\n")
    with pytest.raises(DefinitionError, match=rf"^{p}:1:4: invalid YAML: unacceptable character"):
        load_definitions(p)


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(DefinitionError, match=r"cannot read .*missing\.yaml: No such file or directory"):
        load_definitions(tmp_path / "missing.yaml")


# --- unknown fields and types -----------------------------------------------------------------


def test_unknown_field_is_an_error_with_suggestion() -> None:
    """Unknown fields are errors by default (issue 24, as kubectl's --validate=strict); "warn"
    keeps the lenient mode and "ignore" drops them silently."""
    d = base()
    children(d)[0]["ownerName"] = "root"
    children(d).insert(0, {"name": "first", "ownerRef": "root"})
    result = load_definitions_text(y(d), name="u.yaml")
    [f] = result.findings
    assert (f.code, f.severity) == ("KARTA101", "error")
    assert not result.ok
    [w] = load_definitions_text(y(d), name="u.yaml", field_validation="warn").findings
    assert (w.code, w.severity, w.message) == ("KARTA101", "warning", f.message)
    assert load_definitions_text(y(d), name="u.yaml", strict=False).findings == (w,)  # the older spelling
    ignored = load_definitions_text(y(d), name="u.yaml", field_validation="ignore")
    assert ignored.findings == () and ignored.ok and ignored.definitions
    assert f.message == (
        'unknown field "ownerName" at spec.structureDefinition.childComponents[1] (did you mean "ownerRef"?)'
    )
    assert f.field == "spec.structureDefinition.childComponents[1].ownerName"
    assert result.definitions  # still loads


def test_unknown_fields_nested_and_strict() -> None:
    d = base()
    root(d)["statusDefinition"]["statusMappings"]["runing"] = [{"byPhase": "Running"}]
    children(d)[0]["scaleDefinition"]["replicaPath"] = ".x"
    d["spec"]["optimizationInstructions"] = {
        "gangScheduling": {
            "podGroups": [{"name": "g", "members": [{"componentName": "worker", "groupByKeyPath": [".a"]}]}]
        }
    }
    d["metadata"]["managedFields"] = [{"manager": "kubectl"}]  # not ours to police
    d["status"] = {"conditions": [{"type": "Ready", "anything": 1}]}
    result = load_definitions_text(y(d), name="u.yaml", field_validation="warn")
    assert {f.severity for f in result.findings} == {"warning"}
    assert [f.message for f in result.findings] == [
        'unknown field "runing" at spec.structureDefinition.rootComponent.statusDefinition.statusMappings'
        ' (did you mean "running"?)',
        'unknown field "replicaPath" at spec.structureDefinition.childComponents[0].scaleDefinition'
        ' (did you mean "replicasPath"?)',
        'unknown field "groupByKeyPath" at '
        "spec.optimizationInstructions.gangScheduling.podGroups[0].members[0]"
        ' (did you mean "groupByKeyPaths"?)',
    ]
    strict = load_definitions_text(y(d), name="u.yaml", strict=True)
    assert {f.severity for f in strict.findings} == {"error"}
    assert not strict.ok


def test_unknown_field_without_close_match() -> None:
    d = base()
    d["spec"]["zzz"] = 1
    [f] = load_definitions_text(y(d)).findings
    assert f.message == 'unknown field "zzz" at spec'


def test_type_errors_all_at_once_with_locations() -> None:
    result = load_definitions(DATA / "invalid" / "types.yaml")
    assert result.definitions == ()
    [rej] = result.rejected
    assert not rej.not_a_definition and rej.name == "types"
    [f] = rej.findings
    assert f.code == "KARTA102"
    assert f.field == "spec.structureDefinition.childComponents[1].scaleDefinition.replicasPath"
    assert f.message == (
        "spec.structureDefinition.childComponents[1].scaleDefinition.replicasPath: "
        "expected a string, got number 5"
    )
    text = (DATA / "invalid" / "types.yaml").read_text()
    line = _line_of(text, "replicasPath: 5")
    assert f.location == f"{DATA / 'invalid' / 'types.yaml'}:{line}:23"


def test_several_type_errors_and_missing_fields() -> None:
    d = base()
    d["spec"]["structureDefinition"]["childComponents"] = {}
    root(d)["statusDefinition"]["phaseDefinition"] = {}
    root(d)["statusDefinition"]["statusMappings"]["failed"] = [{"byConditions": [{"status": "True"}]}]
    root(d)["kind"] = "Job"
    result = load_definitions_text(y(d), name="t.yaml")
    got = sorted((f.code, f.field) for f in result.findings)
    assert got == [
        ("KARTA102", "spec.structureDefinition.childComponents"),
        ("KARTA102", "spec.structureDefinition.rootComponent.kind"),
        ("KARTA103", "spec.structureDefinition.rootComponent.statusDefinition.phaseDefinition.path"),
        (
            "KARTA103",
            "spec.structureDefinition.rootComponent.statusDefinition.statusMappings.failed[0]"
            ".byConditions[0].type",
        ),
    ]
    msgs = {f.field: f.message for f in result.findings}
    assert msgs["spec.structureDefinition.childComponents"].endswith("expected a list, got a mapping")
    assert msgs["spec.structureDefinition.rootComponent.statusDefinition.phaseDefinition.path"] == (
        "spec.structureDefinition.rootComponent.statusDefinition.phaseDefinition: "
        'required field "path" is missing'
    )
    with pytest.raises(DefinitionLoadError) as info:
        load_definition(y(d))
    assert len(info.value.findings) == 4


# --- locations ----------------------------------------------------------------------------


def test_source_map_positions_nested() -> None:
    text = (DATA / "valid" / "jobset.yaml").read_text()
    d = load_definition(DATA / "valid" / "jobset.yaml")
    sm = d.source_map
    lines = text.splitlines()

    def at(path: str, key: bool = True) -> str:
        pos = sm.position(path, key=key)
        assert pos is not None
        return lines[pos.line - 1][pos.column - 1 :]

    assert at("spec.structureDefinition.childComponents[0].scaleDefinition.replicasPath").startswith(
        "replicasPath:"
    )
    assert at(
        "spec.structureDefinition.childComponents[0].scaleDefinition.replicasPath", key=False
    ).startswith(".spec.replicatedJobs[] | .replicas")
    assert at("spec.structureDefinition.childComponents[0]").startswith("name: replicatedjob")
    assert at(
        "spec.structureDefinition.rootComponent.statusDefinition.statusMappings.running[0]"
        ".byConditions[0].status",
        key=False,
    ).startswith('"True"')
    assert at(
        "spec.optimizationInstructions.gangScheduling.podGroups[0].members[0].groupByKeyPaths[0]"
    ).startswith('.metadata.labels["jobset.sigs.k8s.io/jobset-name"]')
    # A missing path resolves to its deepest existing ancestor.
    assert at("spec.structureDefinition.childComponents[0].scaleDefinition.nope").startswith(
        "scaleDefinition:"
    )
    loc = sm.location("spec.structureDefinition.childComponents[0].scaleDefinition.replicasPath", offset=3)
    assert loc is not None and loc.endswith(":52:26")
    all_paths = dict(sm.items())
    assert "spec.structureDefinition.childComponents[0].instanceIdPath" in all_paths
    assert len(all_paths) > 50


def test_path_helpers() -> None:
    p = "spec.structureDefinition.childComponents[1].scaleDefinition.replicasPath"
    assert parse_path(p) == (
        "spec",
        "structureDefinition",
        "childComponents",
        1,
        "scaleDefinition",
        "replicasPath",
    )
    assert format_path(parse_path(p)) == p
    assert SourceMap.empty("x").location("spec") is None


# --- write back -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["jobset.yaml", "lws.yaml", "pod.yaml", "legacy-ri.json"])
@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_round_trip(name: str, fmt: str) -> None:
    first = load_definition(DATA / "valid" / name)
    text = dump_definition(first.karta, format=fmt)  # type: ignore[arg-type]
    again = load_definition(text if "\n" in text else text + "\n")
    assert again.karta == first.karta
    assert again.findings == ()
    if fmt == "yaml":
        assert text.startswith("apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata:\n")
    else:
        assert json.loads(text)["spec"]["structureDefinition"]["rootComponent"]["name"]


def test_dump_keeps_camel_case_and_drops_unset() -> None:
    k = Karta.model_validate(base())
    out = yaml.safe_load(dump_definition(k))
    assert "status" not in out
    assert out["spec"]["structureDefinition"]["childComponents"][0]["scaleDefinition"] == {
        "replicasPath": ".spec.replicas"
    }


# --- size and speed -----------------------------------------------------------------------


def test_five_megabyte_file(tmp_path: Path) -> None:
    docs = []
    for i in range(2200):
        d = base()
        d["metadata"]["name"] = f"d{i}"
        docs.append(y(d))
    text = "---\n".join(docs)
    assert len(text) > 1_000_000
    big = "---\n".join([text] * max(1, 5_000_000 // len(text)))
    p = tmp_path / "big.yaml"
    p.write_text(big)
    result = load_definitions(p)
    # Load speed is measured by bench/bench_load.py, never asserted here.
    assert len(result.definitions) == big.count("kind: Karta")


def test_alias_bomb_is_refused() -> None:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(1, 9):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    with pytest.raises(
        DefinitionError, match=r"more than 2,000,000 values .counting what its aliases expand to"
    ):
        load_definitions_text("\n".join(lines) + "\n", name="bomb.yaml")


def _bomb(merge: bool) -> str:
    lines = ["status:", '  a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(1, 9):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"  a{i}: &a{i} [{refs}]")
    lines.append("  m: &m {k: *a8}")
    if merge:  # a merge key sends the document to PyYAML's constructor: it must be bounded too
        lines.append("  n: {<<: *m, z: 1}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("merge", [False, True], ids=["aliases", "aliases-and-merge-key"])
def test_alias_bomb_in_any_yaml_reader_is_refused(merge: bool) -> None:
    with pytest.raises(
        DefinitionError, match=r"bomb.yaml:\d+:1: .* more than 2,000,000 values .counting what its aliases"
    ):
        load_yaml_documents(_bomb(merge), "bomb.yaml")


def test_huge_number_is_a_located_message() -> None:
    text = "spec:\n  generation: " + "9" * 100_000 + "\n"
    with pytest.raises(DefinitionError) as info:
        load_yaml_documents(text, "n.yaml")
    assert "n.yaml:2:15" in str(info.value)
    assert "a number of 100000 digits is longer than the allowed 4300" in str(info.value)


def test_ordinary_merge_keys_load_through_the_safe_reader() -> None:
    assert load_yaml_documents("a: &a {x: 1}\nb: {<<: *a, y: 2}\n---\nc: 3\n", "ok.yaml") == [
        {"a": {"x": 1}, "b": {"x": 1, "y": 2}},
        {"c": 3},
    ]


def test_anchors_merge_keys_and_tags_still_load() -> None:
    text = y(base()).replace("metadata:\n  name: t\n", "metadata: &m\n  name: t\nx-extra:\n  <<: *m\n")
    result = load_definitions_text(text, name="m.yaml")
    [d] = result.definitions
    assert d.name == "t"
    assert [f.code for f in result.findings] == ["KARTA101"]  # x-extra


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    text = "spec: " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(DefinitionError):
        load_definitions_text(text, name="deep.yaml")


def test_duplicate_keys_are_reported() -> None:
    text = y(base()).replace(
        "        replicasPath: .spec.replicas\n", "        replicasPath: .a\n        replicasPath: .b\n"
    )
    result = load_definitions_text(text, name="dup.yaml", field_validation="warn")
    [f] = result.findings
    assert (f.code, f.severity) == ("KARTA107", "warning")
    assert f.message == 'duplicate key "replicasPath" (the last value wins)'
    assert f.location == f"dup.yaml:{_line_of(text, 'replicasPath: .b')}:9"
    [d] = result.definitions
    scale = d.karta.spec.structure_definition.child_components[0].scale_definition
    assert scale is not None and scale.replicas_path == ".b"
    assert load_definitions_text(text, strict=True).findings[0].severity == "error"
    assert load_definitions_text(text).findings[0].severity == "error"  # strict is the default
    assert load_definitions_text(text, field_validation="ignore").findings == ()
