"""``wmap lint`` end to end: files, exit codes, formats, --object, and --cluster on the test API server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.helpers import wmap

from .widget import CRD, definition, root

CATALOG = Path(__file__).resolve().parents[2] / "src" / "workload_map" / "catalog" / "data"


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for env in ("WMAP_CONFIG", "KARTA_CONFIG", "WMAP_OUTPUT", "KARTA_OUTPUT", "KUBECONFIG"):
        monkeypatch.delenv(env, raising=False)


def write(tmp_path: Path, name: str, data: Any) -> str:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(p)


def test_clean_definition_exits_0(tmp_path: Path) -> None:
    rc, out, err = wmap(
        "lint", write(tmp_path, "d.yaml", definition()), "--crd", write(tmp_path, "crd.yaml", CRD)
    )
    assert (rc, out, err) == (0, "OK: 1 definition(s), 0 object(s), no findings\n", "")


def test_findings_exit_1_with_location_field_expression_schema(tmp_path: Path) -> None:
    d = definition()
    root(d)["scaleDefinition"]["replicasPath"] = ".spec.replica // 1"
    path = write(tmp_path, "d.yaml", d)
    rc, out, err = wmap("lint", path, "--crd", write(tmp_path, "crd.yaml", CRD))
    assert rc == 1
    lines = out.splitlines()
    assert lines[0].startswith(f"{path}:")
    assert lines[0].endswith(
        'error: .spec.replica: no field "replica" here (did you mean "replicas"?) '
        "in example.com/v1 Widget [LINT001]"
    )
    assert lines[1:] == [
        "    field: spec.structureDefinition.rootComponent.scaleDefinition.replicasPath",
        "    expression: .spec.replica // 1",
        "    schema: crd.yaml#/properties/spec",
    ]
    assert err == "error: 1 error(s), 0 warning(s)\n"


def test_warnings_pass_unless_strict(tmp_path: Path) -> None:
    d = definition()
    frag = d["spec"]["structureDefinition"]["childComponents"][0]["specDefinition"][
        "fragmentedPodSpecDefinition"
    ]
    frag["resourcesPath"] = "{requests: .spec.worker.resources.requests}"
    args = ("lint", write(tmp_path, "d.yaml", d), "--crd", write(tmp_path, "crd.yaml", CRD))
    rc, out, err = wmap(*args)
    assert rc == 0 and "[LINT013]" in out and err == "warning: 1 warning(s)\n"
    rc, _, err = wmap(*args, "--strict")
    assert rc == 1 and err == "error: 0 error(s), 1 warning(s)\n"


def test_json_output(tmp_path: Path) -> None:
    d = definition()
    root(d)["scaleDefinition"]["replicasPath"] = ".spec.name"
    rc, out, _ = wmap(
        "lint", write(tmp_path, "d.yaml", d), "--crd", write(tmp_path, "crd.yaml", CRD), "-o", "json"
    )
    assert rc == 1
    data = json.loads(out)
    assert (data["count"], data["errors"], data["warnings"]) == (1, 1, 0)
    item = data["items"][0]
    assert item["code"] == "LINT003"
    assert item["schema"] == "crd.yaml#/properties/spec/properties/name"
    assert set(item) == {
        "code",
        "severity",
        "message",
        "definition",
        "field",
        "expression",
        "schema",
        "location",
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give a DEFINITION file, --object FILE, or both"),
        (("d.yaml", "--crd", "crd.yaml", "--cluster"), "--crd and --cluster cannot be combined"),
        (("d.yaml", "--context", "x"), "--kubeconfig and --context need --cluster"),
    ],
)
def test_usage_errors_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "d.yaml", definition())
    write(tmp_path, "crd.yaml", CRD)
    rc, _, err = wmap("lint", *args)
    assert rc == 2
    assert f"error: {message}" in err


def test_unreadable_inputs_exit_2(tmp_path: Path) -> None:
    d = write(tmp_path, "d.yaml", definition())
    rc, _, err = wmap("lint", d, "--crd", str(tmp_path / "missing.yaml"))
    assert rc == 2 and "cannot read CRD file" in err
    rc, _, err = wmap("lint", d, "--crd", d)
    assert rc == 2 and "holds no CustomResourceDefinition" in err
    other = {**CRD, "spec": {**CRD["spec"], "names": {**CRD["spec"]["names"], "kind": "Gadget"}}}
    rc, _, err = wmap("lint", d, "--crd", write(tmp_path, "other.yaml", other))
    assert rc == 2
    assert "error: example-com-widget-v1: no schema for example.com/v1 Widget in the CRDs given" in err


def test_builtin_kinds_need_no_crd(tmp_path: Path) -> None:
    rc, out, err = wmap("lint", str(CATALOG / "batch-job-v1.yaml"))
    assert rc == 0, out
    assert "no --crd given" in err


def test_object_mode(tmp_path: Path) -> None:
    crd = write(tmp_path, "crd.yaml", CRD)
    good = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
    }
    rc, out, _ = wmap("lint", "--object", write(tmp_path, "o.yaml", good), "--crd", crd)
    assert (rc, out) == (0, "OK: 0 definition(s), 1 object(s), no findings\n")
    bad = {**good, "spec": {"replicas": "two", "mode": "Off", "tmplate": {}}}
    rc, out, _ = wmap("lint", "--object", write(tmp_path, "b.yaml", bad), "--crd", crd, "-o", "json")
    assert rc == 1
    codes = sorted((i["code"], i["field"]) for i in json.loads(out)["items"])
    assert codes == [
        ("LINT101", ".spec.replicas"),
        ("LINT102", ".spec.template"),
        ("LINT103", ".spec.mode"),
        ("LINT104", ".spec.tmplate"),
    ]


def test_cluster_mode(cluster: Any, tmp_path: Path) -> None:
    """--cluster reads the CRDs the test API server serves (down-levelled corpus)."""
    kc = str(cluster.write_kubeconfig(tmp_path / "kc"))
    for name in (
        "ray-io-raycluster-v1.yaml",
        "jobset-x-k8s-io-jobset-v1alpha2.yaml",
        "apps-deployment-v1.yaml",
    ):
        rc, out, err = wmap("lint", str(CATALOG / name), "--cluster", "--kubeconfig", kc)
        assert (rc, out) == (0, "OK: 1 definition(s), 0 object(s), no findings\n"), err
    d = yaml.safe_load((CATALOG / "ray-io-raycluster-v1.yaml").read_text())
    d["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]["phaseDefinition"]["path"] = (
        ".status.stat"
    )
    rc, out, _ = wmap("lint", write(tmp_path, "rc.yaml", d), "--cluster", "--kubeconfig", kc)
    assert rc == 1
    assert "[LINT001]" in out and "schema: cluster:rayclusters.ray.io#/properties/status" in out
    d["spec"]["structureDefinition"]["rootComponent"]["kind"]["kind"] = "RayThing"
    rc, _, err = wmap("lint", write(tmp_path, "rt.yaml", d), "--cluster", "--kubeconfig", kc)
    assert rc == 2 and "no schema for ray.io/v1 RayThing in the cluster" in err
