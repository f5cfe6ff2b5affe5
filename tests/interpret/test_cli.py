"""``wmap interpret`` and ``wmap karmada config``: answers, usage errors and exit codes."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.cli.helpers import jobset, wmap
from workload_map.interpret import OPERATIONS


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    for name in ("KUBECONFIG", "WMAP_CONFIG", "WMAP_OUTPUT", "WMAP_CATALOG_DIR"):
        monkeypatch.delenv(name, raising=False)
    yield


def _write(tmp_path: Path, name: str, data: object) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_interpret_prints_the_webhooks_response(tmp_path: Path) -> None:
    obj = _write(tmp_path, "js.yaml", jobset("train", "ml", roles=(("leader", 1), ("workers", 2))))
    rc, out, err = wmap("interpret", "--operation", "interpretcomponent", "-f", obj, "-o", "json")
    assert rc == 0, err
    context = json.loads(out)
    assert (
        context["apiVersion"] == "config.karmada.io/v1alpha1"
        and context["kind"] == "ResourceInterpreterContext"
    )
    response = context["response"]
    assert response["successful"] is True and response["uid"] == ""
    assert [(c["name"], c["replicas"]) for c in response["components"]] == [("leader", 1), ("workers", 2)]


def test_interpret_revise_gives_a_base64_json_patch(tmp_path: Path) -> None:
    # The catalog's LWS leader count is computed (`.spec.replicas // 1`): nothing to revise at the
    # current count, and a different count is refused with the component named.
    lws = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "l"},
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": {"containers": []}}},
        },
    }
    path = _write(tmp_path, "lws.yaml", lws)
    rc, out, _ = wmap("interpret", "--operation", "ReviseReplica", "--desired-replicas", "4", "-f", path)
    assert rc == 0 and "patch" not in yaml.safe_load(out)["response"]
    rc, _, err = wmap("interpret", "--operation", "ReviseReplica", "--desired-replicas", "6", "-f", path)
    assert rc == 1 and err.startswith('error: ReviseReplica LeaderWorkerSet "l": ') and "leader" in err


def test_interpret_aggregates_a_resourcebindings_statuses(tmp_path: Path) -> None:
    obj = jobset("train", "ml")
    items = [
        {"clusterName": "a", "status": {"conditions": [{"type": "Completed", "status": "True"}]}},
        {"clusterName": "b", "status": {"conditions": [{"type": "Failed", "status": "True"}]}},
    ]
    binding = {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "status": {"aggregatedStatus": items},
    }
    rc, out, err = wmap(
        "interpret",
        "--operation",
        "AggregateStatus",
        "-f",
        _write(tmp_path, "o.yaml", obj),
        "--aggregated-status-file",
        _write(tmp_path, "rb.yaml", binding),
        "-o",
        "json",
    )
    assert rc == 0, err
    patch = json.loads(base64.b64decode(json.loads(out)["response"]["patch"]))
    assert patch == [{"op": "add", "path": "/status", "value": items[1]["status"]}]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--operation", "Prune"], "is not one of"),
        (["--operation", "ReviseReplica"], "needs --desired-replicas"),
        (["--operation", "Retain"], "needs --observed-file"),
    ],
)
def test_interpret_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    obj = _write(tmp_path, "js.yaml", jobset("train", "ml"))
    rc, _, err = wmap("interpret", *args, "-f", obj)
    assert rc == 2 and message in err


def test_interpret_a_type_without_definition_exits_4(tmp_path: Path) -> None:
    obj = _write(
        tmp_path, "g.yaml", {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"}}
    )
    rc, _, err = wmap("interpret", "--operation", "InterpretHealth", "-f", obj)
    assert rc == 4 and "Gizmo" in err


def test_interpret_a_bad_status_file_names_it(tmp_path: Path) -> None:
    obj = _write(tmp_path, "js.yaml", jobset("train", "ml"))
    bad = _write(tmp_path, "bad.yaml", {"status": {"aggregatedStatus": "x"}})
    rc, _, err = wmap(
        "interpret", "--operation", "AggregateStatus", "-f", obj, "--aggregated-status-file", bad
    )
    assert rc == 2 and "bad.yaml" in err and "AggregatedStatusItem" in err


def test_karmada_config_claims_every_covered_kind_but_the_native_ones(tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    rc, out, err = wmap(
        "karmada", "config", "--service", "wmap-system/wmap-operator:443", "--ca-file", str(ca)
    )
    assert rc == 0, err
    body = yaml.safe_load(out)
    assert body["kind"] == "ResourceInterpreterWebhookConfiguration"
    [hook] = body["webhooks"]
    assert hook["clientConfig"]["service"] == {
        "namespace": "wmap-system",
        "name": "wmap-operator",
        "path": "/interpret-karmada",
        "port": 443,
    }
    assert base64.b64decode(hook["clientConfig"]["caBundle"]) == ca.read_bytes()
    kinds = {(r["apiGroups"][0], r["kinds"][0]) for r in hook["rules"]}
    assert {k for _, k in kinds} >= {
        "JobSet",
        "LeaderWorkerSet",
        "RayCluster",
        "TrainJob",
        "InferenceService",
    }
    native = {
        ("apps", "Deployment"),
        ("batch", "Job"),
        ("", "Pod"),
        ("apps", "StatefulSet"),
        ("batch", "CronJob"),
    }
    assert not native & kinds
    assert all(r["operations"] == list(OPERATIONS) and len(r["apiGroups"]) == 1 for r in hook["rules"])
    rc, out, _ = wmap(
        "karmada", "config", "--url", "https://10.0.0.1:8443", "--kind", "Job", "--include-native"
    )
    assert rc == 0
    rules = yaml.safe_load(out)["webhooks"][0]["rules"]
    assert {(r["apiGroups"][0], r["kinds"][0]) for r in rules} == {
        ("batch", "Job"),
        ("batch.volcano.sh", "Job"),
    }


@pytest.mark.parametrize(
    ("args", "rc", "message"),
    [
        ([], 2, "exactly one of --url and --service"),
        (["--url", "http://x:1"], 2, "https"),
        (["--service", "nope"], 2, "NAMESPACE/NAME"),
        (["--url", "https://x:1", "--kind", "Gizmo"], 4, "no definition covers Gizmo"),
        (["--url", "https://x:1", "--ca-file", "/nonexistent/ca.crt"], 2, "/nonexistent/ca.crt"),
    ],
)
def test_karmada_config_errors(args: list[str], rc: int, message: str) -> None:
    got, _, err = wmap("karmada", "config", *args)
    assert got == rc and message in err


def test_karmada_config_reads_the_ca_file_bounded(tmp_path: Path) -> None:
    # the shared bounded reader: a FIFO is refused by type (never opened, so never waited on),
    # a file beyond 1 MiB by size; both usage errors naming the flag and the file
    fifo = tmp_path / "ca.fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.crt"
    big.write_bytes(b"-----BEGIN CERTIFICATE-----\n" + b"A" * (1 << 20))
    for path, text in ((fifo, "not a regular file"), (big, "larger than")):
        rc, out, err = wmap("karmada", "config", "--url", "https://x:1", "--ca-file", str(path))
        assert rc == 2 and f"--ca-file {path}" in err and text in err and out == "", err


def test_export_karmada_writes_every_operation_as_lua() -> None:
    rc, out, err = wmap("export", "karmada", "rayclusters")
    assert rc == 0, err
    body = yaml.safe_load(out)
    assert body["kind"] == "ResourceInterpreterCustomization"
    assert body["spec"]["target"] == {"apiVersion": "ray.io/v1", "kind": "RayCluster"}
    scripts = body["spec"]["customizations"]
    assert set(scripts) == {
        "replicaResource",
        "componentResource",
        "replicaRevision",
        "retention",
        "statusReflection",
        "statusAggregation",
        "healthInterpretation",
        "dependencyInterpretation",
    }
    assert "function GetComponents(desiredObj)" in scripts["componentResource"]["luaScript"]
    assert 'local kube = require("kube")' in scripts["dependencyInterpretation"]["luaScript"]
    assert "require(" not in scripts["healthInterpretation"]["luaScript"]
    # scripts are literal blocks in the YAML, one per line of Lua
    assert "luaScript: |" in out


def test_export_karmada_leaves_out_what_it_cannot_translate(tmp_path: Path) -> None:
    definition = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "gizmos-example-com-v1"},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "gizmo",
                    "kind": {"group": "example.com", "version": "v1", "kind": "Gizmo"},
                    "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                    "statusDefinition": {
                        "statusMappings": {
                            "running": [
                                {
                                    "byExpression": {
                                        "expression": '.status.phase | test("^Run(ning)?$")',
                                        "expectedResult": "true",
                                    }
                                }
                            ]
                        }
                    },
                }
            }
        },
    }
    path = _write(tmp_path, "gizmo.yaml", definition)
    rc, out, err = wmap("--definitions", path, "export", "karmada", "gizmos")
    assert rc == 0, err
    scripts = yaml.safe_load(out)["spec"]["customizations"]
    assert "healthInterpretation" not in scripts and "statusAggregation" not in scripts
    assert "componentResource" in scripts
    assert "warning: gizmos-example-com-v1: InterpretHealth left out:" in err
    assert "test/1" in err and "statusMappings.running[0].byExpression.expression" in err
    rc, out, err = wmap("--definitions", path, "export", "karmada", "gizmos", "--strict")
    assert rc == 1 and out == "" and "error: gizmos-example-com-v1: AggregateStatus left out" in err


def test_export_karmada_usage() -> None:
    assert wmap("export", "karmada")[0] == 2
    rc, _, err = wmap("export", "karmada", "gizmos")
    assert rc == 4 and "gizmos" in err
    rc, out, _ = wmap("export", "karmada", "--all", "-o", "json")
    assert rc == 0
    listed = json.loads(out)
    kinds = {i["spec"]["target"]["kind"] for i in listed["items"]}
    assert {"JobSet", "RayCluster", "TrainJob"} <= kinds and "Deployment" not in kinds


def test_components_are_what_requirements_fit_places(tmp_path: Path) -> None:
    # One implementation (resolve.placement.instance_needs): per pod template, the component
    # Karmada gets carries the count, requests and node claim `wmap requirements` (and so --fit)
    # places. Roles differ in size, and the workers carry every scheduling field.
    from workload_map.resolve.quantity import parse_quantity, to_millis, to_units

    obj = jobset("train", "ml", roles=(("leader", 1), ("workers", 3)), gpus=8)
    leader = obj["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    leader["containers"][0]["resources"] = {"requests": {"cpu": "1500m", "memory": "3Gi"}}
    workers = obj["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]
    term = {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["h100"]}]}
    required = {"nodeSelectorTerms": [term]}
    workers.update(
        nodeSelector={"pool": "gpu"},
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}},
        priorityClassName="training",
    )
    path = _write(tmp_path, "js.yaml", obj)
    rc, out, err = wmap("requirements", "-f", path, "-o", "json")
    assert rc == 0, err
    instances = json.loads(out)["instances"]
    rc, out, err = wmap("interpret", "--operation", "InterpretComponent", "-f", path, "-o", "json")
    assert rc == 0, err
    components = json.loads(out)["response"]["components"]
    assert [c["name"] for c in components] == [i["instanceId"] for i in instances] == ["leader", "workers"]
    for inst, comp in zip(instances, components, strict=True):
        req = comp["replicaRequirements"]
        assert comp["replicas"] == inst["desiredReplicas"]
        rr, pod = req["resourceRequest"], inst["podRequests"]
        assert to_millis(parse_quantity(rr["cpu"])) == pod["cpuMillis"]
        assert to_units(parse_quantity(rr["memory"])) == pod["memoryBytes"]
        assert {k: to_units(parse_quantity(v)) for k, v in rr.items() if "/" in k} == pod["extended"]
        claim = req.get("nodeClaim") or {}
        assert claim.get("nodeSelector") == inst["nodeSelector"]
        assert claim.get("tolerations") == inst["tolerations"]
        node_affinity = (inst["affinity"] or {}).get("nodeAffinity") or {}
        hard = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        assert claim.get("hardNodeAffinity") == hard
        assert req.get("priorityClassName") == inst["priorityClassName"]
    assert components[1]["replicaRequirements"]["nodeClaim"]["hardNodeAffinity"] == required
