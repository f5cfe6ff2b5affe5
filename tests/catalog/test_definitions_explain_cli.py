"""``wmap definitions`` and ``wmap explain`` against the real catalog (no cluster)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.cli.helpers import wmap
from workload_map.catalog.registry import DATA_DIR


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for env in (
        "WMAP_CONFIG",
        "KARTA_CONFIG",
        "WMAP_OUTPUT",
        "KARTA_OUTPUT",
        "KUBECONFIG",
        "WMAP_CATALOG_DIR",
    ):
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))


SLUGS = sorted(p.stem for p in DATA_DIR.glob("*.yaml"))


def test_definitions_table() -> None:
    rc, out, err = wmap("definitions")
    assert (rc, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "KIND", "ORIGIN", "COMPONENTS"]
    assert [line.split()[0] for line in lines[1:]] == SLUGS
    rows = {line.split()[0]: line for line in lines[1:]}
    assert rows["core-pod-v1"].split() == ["core-pod-v1", "Pod.v1", "catalog", "pod"]
    assert rows["leaderworkerset-x-k8s-io-leaderworkerset-v1"].split(None, 3)[1:] == [
        "LeaderWorkerSet.v1.leaderworkerset.x-k8s.io",
        "catalog",
        "leaderworkerset, group, leader, worker",
    ]
    milvus = rows["milvus-io-milvus-v1beta1"].split(None, 3)[3]
    assert milvus.startswith("milvus, ") and milvus.endswith(" more")
    assert len(milvus.split(", ")) == 5


def test_component_limit() -> None:
    rc, out, _ = wmap("definitions", "--component-limit", "0", "--group", "milvus.io")
    assert rc == 0 and "more" not in out
    rc, out, _ = wmap("definitions", "--component-limit", "1", "--group", "leaderworkerset.x-k8s.io")
    assert out.splitlines()[1].endswith("leaderworkerset, group, +2 more")


def test_filters() -> None:
    rc, out, _ = wmap("definitions", "--group", "kubeflow.org", "--kind", "mpijob")
    assert rc == 0
    assert [line.split()[0] for line in out.splitlines()[1:]] == [
        "kubeflow-org-mpijob-v1",
        "kubeflow-org-mpijob-v2beta1",
    ]
    rc, out, _ = wmap("definitions", "--group", "kubeflow.org", "--kind", "MPIJob", "--version", "v2beta1")
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["kubeflow-org-mpijob-v2beta1"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("core-pod-v1", "--group", "x"), "NAME cannot be combined with --group/--kind/--version"),
        (
            ("--kind", "PyTorchJob"),
            "--kind needs --group, for example --group kubeflow.org --kind PyTorchJob",
        ),
        (("--group", "g", "--version", "v1"), "--version needs --kind"),
        (("--group", "g", "--kind", ""), "--kind must not be empty"),
        (("--group", "g", "--kind", "K", "--version", " "), "--version must not be empty"),
        (("--component-limit", "-1"), "--component-limit must be 0 or more, got -1"),
        (("-o", "wide"), 'invalid argument "wide" for "-o, --output" flag'),
    ],
)
def test_definitions_usage_errors(args: tuple[str, ...], message: str) -> None:
    rc, _, err = wmap("definitions", *args)
    assert rc == 2
    assert f"error: {message}" in err


def test_definitions_not_found_errors() -> None:
    rc, _, err = wmap("definitions", "nope")
    assert (rc, err) == (
        1,
        'error: no Karta definition named "nope". Run "wmap definitions" to see what is available\n',
    )
    rc, _, err = wmap("definitions", "--group", "kubeflow.org", "--kind", "Nope")
    assert rc == 1
    assert err == (
        'error: no Karta definition covers "Nope.kubeflow.org". '
        'Run "wmap definitions" to see what is available\n'
    )


def test_definitions_machine_envelope() -> None:
    _rc, out, _ = wmap("definitions", "-o", "json")
    data = json.loads(out)
    assert data["count"] == len(SLUGS) == len(data["items"])
    assert [i["metadata"]["name"] for i in data["items"]] == SLUGS
    assert all(i["kind"] == "Karta" and "spec" in i and "status" not in i for i in data["items"])
    _rc, out, _ = wmap("definitions", "-o", "yaml", "--group", "ray.io")
    assert yaml.safe_load(out)["count"] == 3


def test_definition_by_name_is_a_bare_karta_that_validates(tmp_path: Path) -> None:
    rc, out, _ = wmap("definitions", "jobset-x-k8s-io-jobset-v1alpha2")
    assert rc == 0
    doc = yaml.safe_load(out)
    assert (doc["apiVersion"], doc["kind"], doc["metadata"]["name"]) == (
        "run.ai/v1alpha1",
        "Karta",
        "jobset-x-k8s-io-jobset-v1alpha2",
    )
    rc, vout, _ = wmap("validate", "-", input=out)
    assert rc == 0 and vout.startswith("OK: jobset-x-k8s-io-jobset-v1alpha2 is a valid Karta definition")
    rc, out, _ = wmap("definitions", "core-pod-v1", "-o", "json")
    assert json.loads(out)["metadata"]["name"] == "core-pod-v1"


def test_definitions_include_local_files(tmp_path: Path) -> None:
    src = (DATA_DIR / "core-pod-v1.yaml").read_text().replace("name: core-pod-v1", "name: my-pod", 1)
    (tmp_path / "mine.yaml").write_text(src)
    rc, out, _ = wmap("definitions", "--definitions", str(tmp_path / "mine.yaml"), "--group", "")
    assert rc == 0
    assert out.splitlines()[1].split() == ["my-pod", "Pod.v1", "local", "pod"]


def test_explain_text_key_lines() -> None:
    rc, out, err = wmap("explain", "pytorchjob")
    assert (rc, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "Karta definition kubeflow-org-pytorchjob-v1 for kubeflow.org/v1 PyTorchJob"
    assert "  pytorchjob (kubeflow.org/v1 PyTorchJob) [root]" in lines
    assert "  ├─ master (v1 Pod)" in lines
    assert "  └─ worker (v1 Pod)" in lines
    assert "  pods: from the pod template at .spec.pytorchReplicaSpecs.Master.template" in lines
    assert '  pods of this role: .metadata.labels["training.kubeflow.org/replica-type"] is "master"' in lines
    assert "  Running when condition Running is True" in lines
    assert "  Failed when condition Failed is True" in lines
    assert "Suspend: set .spec.runPolicy.suspend to true" in lines
    assert "Resume: set .spec.runPolicy.suspend to false" in lines
    assert any(line.startswith('  group "job": pods of ') for line in lines)


def test_explain_by_name_fragmented_and_virtual_components() -> None:
    rc, out, _ = wmap("explain", "leaderworkerset-x-k8s-io-leaderworkerset-v1")
    assert rc == 0
    lines = out.splitlines()
    assert "  └─ group (no kind: a logical grouping)" in lines
    assert (
        '  a pod\'s replica (group) index: .metadata.labels["leaderworkerset.sigs.k8s.io/group-index"]'
        in lines
    )
    assert "Suspend: not supported (no native suspend field)" in lines
    rc, out, _ = wmap("explain", "nimservice")
    assert "  pods: assembled from fields scattered over the object:" in out.splitlines()


def test_explain_deployment_phase_words() -> None:
    rc, out, _ = wmap("explain", "Deployment.apps")
    assert rc == 0
    assert (
        "  Failed when condition Progressing is False with reason ProgressDeadlineExceeded"
        in out.splitlines()
    )


def test_explain_structured() -> None:
    _rc, out, _ = wmap("explain", "raycluster", "-o", "json")
    data = json.loads(out)
    assert data["name"] == "ray-io-raycluster-v1" and data["origin"] == "catalog"
    worker = next(c for c in data["components"] if c["name"] == "worker")
    assert worker["pods"]["source"] == "podTemplateSpec"
    assert worker["instanceIdPath"]
    assert set(data["status"]["rules"]) >= {"Running", "Failed"}
    assert data["gangScheduling"]["format"] == "podGroups"


def test_explain_errors() -> None:
    rc, _, err = wmap("explain", "nothing-like-this")
    assert rc == 4
    assert 'no Karta definition covers "nothing-like-this"' in err
    rc, _, err = wmap("explain", "mpijob")
    assert rc == 2
    assert "MPIJob.v1.kubeflow.org, MPIJob.v2beta1.kubeflow.org" in err
