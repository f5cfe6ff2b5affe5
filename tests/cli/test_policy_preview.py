"""``wmap policy preview``: what WorkloadPolicy objects would change on manifests, offline.

The manifests are the catalog's running fixtures (shaped as the frameworks' recordings, see
tests/catalog/lifecycles); the policy is the issue's example. Which objects pass unchanged (no
definition covers them, a controller created them) is the webhook's own decision
(workload_map.operator.policies.admit), so the preview and admission cannot disagree on it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.helpers import wmap
from tests.resolve.test_edit_catalog import load

pytestmark = pytest.mark.usefixtures("bundled_catalog")

ML_POLICY = {
    "apiVersion": "workload-map.dev/v1alpha1",
    "kind": "WorkloadPolicy",
    "metadata": {"name": "ml"},
    "spec": {
        "namespaceSelector": {"matchLabels": {"team": "ml"}},
        "set": {
            "schedulerName": "kai-scheduler",
            "podLabels": {"set": {"kai.scheduler/queue": {"fromNamespaceLabel": "queue"}}},
            "tolerations": {"add": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
            "priorityClassName": {"fromWorkloadLabel": "priority", "default": "train-normal"},
        },
    },
}
LATER = {
    "apiVersion": "workload-map.dev/v1alpha1",
    "kind": "WorkloadPolicy",
    "metadata": {"name": "z-later"},
    "spec": {"order": 20, "overwrite": True, "set": {"schedulerName": "volcano"}},
}
CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"a": "1"}}


def write(tmp_path: Path, name: str, *docs: Any) -> str:
    path = tmp_path / name
    path.write_text("---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs))
    return str(path)


def jobset() -> dict[str, Any]:
    _, obj = load("jobset-x-k8s-io-jobset-v1alpha2")
    obj["metadata"].setdefault("labels", {})["priority"] = "train-high"
    return obj


def templates(js: dict[str, Any]) -> list[dict[str, Any]]:
    return [rj["template"]["spec"]["template"] for rj in js["spec"]["replicatedJobs"]]


def test_the_issue_example_as_yaml_and_as_a_diff(tmp_path: Path) -> None:
    policies = write(tmp_path, "p.yaml", ML_POLICY)
    manifests = write(tmp_path, "m.yaml", jobset())
    args = (
        "policy",
        "preview",
        "-p",
        policies,
        "-f",
        manifests,
        "--namespace-labels",
        "team=ml,queue=research",
    )
    rc, out, err = wmap(*args, "-o", "yaml")
    assert rc == 0, err
    changed = yaml.safe_load(out)
    assert len(templates(changed)) == 2
    for tpl in templates(changed):
        assert tpl["spec"]["schedulerName"] == "kai-scheduler"
        assert tpl["spec"]["priorityClassName"] == "train-high"
        assert tpl["metadata"]["labels"]["kai.scheduler/queue"] == "research"
        assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in tpl["spec"][
            "tolerations"
        ]
    assert f"jobset.jobset.x-k8s.io/{changed['metadata']['name']}: applied ml" in err
    rc, out, err = wmap(*args)
    assert rc == 0, err
    assert out.startswith("diff -u -N LIVE/jobset.x-k8s.io.v1alpha2.JobSet.ml.")
    added = [line.split() for line in out.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert ["+", "schedulerName:", "kai-scheduler"] in added
    assert ["+", "kai.scheduler/queue:", "research"] in added


def test_unmatched_namespace_and_uncovered_objects_pass_unchanged(tmp_path: Path) -> None:
    policies = write(tmp_path, "p.yaml", ML_POLICY)
    js = jobset()
    owned = jobset()
    owned["metadata"]["name"] = "owned"
    owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "name": "t", "uid": "u1",
         "controller": True}
    ]  # fmt: skip
    manifests = write(tmp_path, "m.yaml", js, CONFIGMAP, owned)
    rc, out, err = wmap(
        "policy", "preview", "-p", policies, "-f", manifests, "--namespace-labels", "team=web"
    )
    assert (rc, out) == (0, "")  # no diff: nothing changes outside team=ml
    assert "applied no policy" in err
    rc, out, err = wmap(
        "policy",
        "preview",
        "-p",
        policies,
        "-f",
        manifests,
        "--namespace-labels",
        "team=ml,queue=a",
        "-o",
        "json",
    )
    assert rc == 0, err
    items = json.loads(out)["items"]
    assert items[1] == CONFIGMAP and items[2] == owned  # unchanged, as admission lets them through
    assert templates(items[0])[0]["spec"]["schedulerName"] == "kai-scheduler"
    assert "configmap/cfg: 0 definitions cover core/v1 ConfigMap: unchanged" in err
    assert "jobset.jobset.x-k8s.io/owned: created by a controller" in err


def test_conflicting_policies_are_reported_in_their_order(tmp_path: Path) -> None:
    policies = write(tmp_path, "p.yaml", LATER, ML_POLICY)  # file order is not the applied order
    manifests = write(tmp_path, "m.yaml", jobset())
    rc, out, err = wmap(
        "policy",
        "preview",
        "-p",
        policies,
        "-f",
        manifests,
        "--namespace-labels",
        "team=ml,queue=a",
        "-o",
        "json",
    )
    assert rc == 0, err
    assert {t["spec"]["schedulerName"] for t in templates(json.loads(out))} == {"volcano"}
    assert "applied ml, z-later" in err
    assert (
        "policies 'ml' and 'z-later' both set" in err and "'z-later' comes later (order 20) and wins" in err
    )


def test_a_missing_namespace_label_is_a_warning(tmp_path: Path) -> None:
    policies = write(tmp_path, "p.yaml", ML_POLICY)
    manifests = write(tmp_path, "m.yaml", jobset())
    rc, out, err = wmap(
        "policy", "preview", "-p", policies, "-f", manifests, "--namespace-labels", "team=ml", "-o", "json"
    )
    assert rc == 0, err
    assert "queue" in err and "policy 'ml'" in err
    for tpl in templates(json.loads(out)):
        assert tpl["spec"]["schedulerName"] == "kai-scheduler"
        assert "kai.scheduler/queue" not in ((tpl.get("metadata") or {}).get("labels") or {})


@pytest.mark.parametrize(
    ("policy", "labels", "code", "message"),
    [
        (
            {**ML_POLICY, "spec": {"set": {"tolerations": {"add": [{"key": "g", "effect": "Sometimes"}]}}}},
            "team=ml",
            1,
            "WorkloadPolicy 'ml': spec.set.tolerations.add[0].effect",
        ),
        ({**ML_POLICY, "spec": {"kinds": "JobSet", "set": {}}}, "team=ml", 1, "spec.kinds"),
        (CONFIGMAP, "team=ml", 2, "'ConfigMap' is not a WorkloadPolicy"),
        (ML_POLICY, "team", 2, "namespace label"),
    ],
)
def test_bad_input_names_the_field_and_prints_nothing(
    tmp_path: Path, policy: dict[str, Any], labels: str, code: int, message: str
) -> None:
    policies = write(tmp_path, "p.yaml", policy)
    manifests = write(tmp_path, "m.yaml", jobset())
    rc, out, err = wmap("policy", "preview", "-p", policies, "-f", manifests, "--namespace-labels", labels)
    assert (rc, out) == (code, ""), err
    assert message in err


def test_unreadable_files_are_usage_errors(tmp_path: Path) -> None:
    manifests = write(tmp_path, "m.yaml", jobset())
    rc, out, err = wmap("policy", "preview", "-p", str(tmp_path / "none.yaml"), "-f", manifests)
    assert (rc, out) == (2, "") and "none.yaml" in err
