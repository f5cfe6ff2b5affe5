"""``wmap set|label|annotate|scale|suspend|resume --local -f``: offline, for GitOps pipelines.

Every verb on every catalog type's running fixture (the same matrix as the library test), Lists,
many documents, stdin, JSON and YAML with the input's key order, all-or-nothing output, the error
messages and exit codes, and parity with ``kubectl set ... --local`` on a Deployment (the real
kubectl binary: the same containers get the same values)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.helpers import wmap
from tests.resolve.test_edit_catalog import REFUSED, SCALES, SLUGS, load, scaled_by
from tests.support.edits import VERBS, actions_unmet, has_actions, outside_named_paths
from workload_map.resolve import resolve
from workload_map.resolve.patch import json_patch
from workload_map.resolve.writeback import apply_edits

pytestmark = pytest.mark.usefixtures("bundled_catalog")

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "ml", "labels": {"app": "web"}},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "initContainers": [{"name": "init", "image": "busybox:1"}],
                "containers": [
                    {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}]},
                    {"name": "log", "image": "log:1", "resources": {"requests": {"cpu": "100m"}}},
                ],
            },
        },
    },
}


def write(tmp_path: Path, name: str, *docs: Any) -> str:
    path = tmp_path / name
    path.write_text("---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs))
    return str(path)


@pytest.mark.parametrize("verb", sorted(VERBS))
@pytest.mark.parametrize("slug", SLUGS)
def test_every_verb_on_every_catalog_type(tmp_path: Path, slug: str, verb: str) -> None:
    karta, obj = load(slug)
    path = write(tmp_path, "w.yaml", obj)
    rc, out, err = wmap(*VERBS[verb].argv("-f", path, "--local"), "-o", "yaml")
    if (slug, verb) in REFUSED:
        assert rc == 1 and out == ""
        assert REFUSED[(slug, verb)] in err
        return
    assert rc == 0, err
    printed = yaml.safe_load(out)
    assert printed == apply_edits(karta, obj, list(VERBS[verb].edits)).new_object
    assert list(printed) == list(obj)  # key order kept


@pytest.mark.parametrize("slug", SLUGS)
def test_scale_every_component_offline(tmp_path: Path, slug: str) -> None:
    karta, obj = load(slug)
    path = write(tmp_path, "w.yaml", obj)
    for name, comp in resolve(karta, obj).components.items():
        if len(comp.instances) != 1:
            continue
        found = scaled_by(karta, obj, name)
        target = (
            max(2, comp.instances[0].desired_replicas * 2)
            if isinstance(found, str)
            else found[0][comp.instances[0].id]
        )
        rc, out, err = wmap(
            "scale", "-f", path, "--local", "--component", name, "--replicas", str(target), "-o", "json"
        )
        if name in SCALES.get(slug, ()):
            assert rc == 0, err
            after = resolve(karta, json.loads(out)).components[name]
            assert [i.desired_replicas for i in after.instances] == [target]
        else:
            assert (rc, out) == (1, "") and f"component '{name}'" in err


def test_instances_are_named_with_instance(tmp_path: Path) -> None:
    karta, obj = load("jobset-x-k8s-io-jobset-v1alpha2")
    path = write(tmp_path, "js.yaml", obj)
    rc, _, err = wmap("scale", "-f", path, "--local", "--component", "replicatedjob", "--replicas", "4")
    assert rc == 1 and "has 2 instances (leader, workers): name the ones to scale with --instance" in err
    rc, out, err = wmap(
        "scale",
        "-f",
        path,
        "--local",
        "--component",
        "replicatedjob",
        "--instance",
        "workers",
        "--replicas",
        "6",
        "-o",
        "yaml",
    )
    assert rc == 0, err
    counts = {
        i.id: i.desired_replicas
        for i in resolve(karta, yaml.safe_load(out)).components["replicatedjob"].instances
    }
    assert counts == {"leader": 1, "workers": 6}
    rc, _, err = wmap(
        "scale",
        "-f",
        path,
        "--local",
        "--component",
        "replicatedjob",
        "--instance",
        "workers",
        "--replicas",
        "5",
    )
    assert rc == 1 and "5 is not a multiple of 2" in err


def test_lists_documents_stdin_and_json(tmp_path: Path) -> None:
    other = {**DEPLOYMENT, "metadata": {**DEPLOYMENT["metadata"], "name": "web2"}}
    listed = write(tmp_path, "list.yaml", {"apiVersion": "v1", "kind": "List", "items": [DEPLOYMENT, other]})
    rc, out, err = wmap("set", "image", "-f", listed, "--local", "app=app:2", "-o", "yaml")
    assert rc == 0, err
    doc = yaml.safe_load(out)
    assert doc["kind"] == "List" and [i["metadata"]["name"] for i in doc["items"]] == ["web", "web2"]
    assert all(i["spec"]["template"]["spec"]["containers"][0]["image"] == "app:2" for i in doc["items"])
    multi = write(tmp_path, "multi.yaml", DEPLOYMENT, other)
    rc, out, err = wmap("set", "scheduler", "-f", multi, "--local", "kai-scheduler", "-o", "yaml")
    assert rc == 0, err
    docs = list(yaml.safe_load_all(out))
    assert [d["spec"]["template"]["spec"]["schedulerName"] for d in docs] == ["kai-scheduler"] * 2
    rc, out, err = wmap("set", "scheduler", "-f", multi, "--local", "kai", "-o", "json")
    assert json.loads(out)["kind"] == "List"
    rc, out, err = wmap("label", "-f", "-", "--local", "team=ml", input=yaml.safe_dump(DEPLOYMENT))
    assert (rc, out) == (0, "deployment.apps/web labeled\n"), err
    rc, out, err = wmap("set", "image", "-f", multi, "--local", "app=app:2")
    assert out == "deployment.apps/web image updated\ndeployment.apps/web2 image updated\n"


def test_one_bad_document_prints_nothing(tmp_path: Path) -> None:
    broken = {
        **DEPLOYMENT,
        "metadata": {"name": "x"},
        "spec": {"template": {"spec": {"containers": [{"name": "z"}]}}},
    }
    multi = write(tmp_path, "multi.yaml", DEPLOYMENT, broken)
    rc, out, err = wmap("set", "image", "-f", multi, "--local", "app=app:2", "-o", "yaml")
    assert (rc, out) == (1, "")
    assert (
        "deployment.apps/x in " in err
        and "(document 2)" in err
        and 'unable to find container named "app"' in err
    )


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (
            ("set", "image", "--local", "app=x"),
            2,
            "you must specify resources by --filename when --local is set",
        ),
        (("set", "image", "-f", "{f}", "--local", "--dry-run=server", "app=x"), 2, "cannot be used together"),
        (("set", "image", "-f", "{f}", "--local", "app"), 2, "give resources either with -f or as TYPE/NAME"),
        (("set", "image", "deploy/web", "app", "a=b"), 2, "mix TYPE/NAME and TYPE NAME forms is not allowed"),
        (("set", "image", "deploy/web", "a=b", "x"), 2, "changes are KEY=VALUE or KEY-"),
        (("set", "image", "-f", "{f}", "--local", "nope=x"), 1, 'unable to find container named "nope"'),
        (("set", "image", "-f", "{f}", "--local", "x/app=y"), 1, "component 'x' not found"),
        (
            ("set", "resources", "-f", "{f}", "--local", "--limits=cpu=abc"),
            1,
            "quantities must match the regular",
        ),
        (("set", "resources", "-f", "{f}", "--local", "--requests=nvidia.com/gpu=1"), 1, "extended resource"),
        (("set", "resources", "-f", "{f}", "--local"), 2, "you must specify an update to requests or limits"),
        (("set", "env", "-f", "{f}", "--local", "1X=2"), 1, "a valid environment variable name"),
        (("set", "env", "-f", "{f}", "--local", "--from=pod/x"), 2, "expected secret/NAME or configmap/NAME"),
        (
            ("set", "tolerations", "-f", "{f}", "--local", "--add", "k:Sometimes"),
            1,
            "is not one of NoSchedule",
        ),
        (("set", "scheduler", "-f", "{f}", "--local", "Kai_Scheduler"), 1, "RFC 1123 subdomain"),
        (
            ("label", "-f", "{f}", "--local", "app=other"),
            1,
            "'app' already has a value (web), and --overwrite is false",
        ),
        (
            ("label", "-f", "{f}", "--local", "--component", "x", "a=b"),
            2,
            "--component needs --pod-templates",
        ),
        (("scale", "-f", "{f}", "--local", "--replicas", "-1"), 2, "must be greater than or equal to 0"),
        (
            ("scale", "-f", "{f}", "--local", "--replicas", "3", "--component", "replicaset"),
            1,
            "cannot be scaled",
        ),
        (("suspend", "-f", "{f}", "--local"), 1, "defines no suspendActions"),
        (("set", "image", "-f", "{missing}", "--local", "app=x"), 2, "cannot read"),
    ],
)
def test_errors_and_exit_codes(tmp_path: Path, args: tuple[str, ...], code: int, message: str) -> None:
    f = write(tmp_path, "d.yaml", DEPLOYMENT)
    argv = [a.format(f=f, missing=str(tmp_path / "missing.yaml")) for a in args]
    rc, out, err = wmap(*argv)
    assert rc == code, err
    assert message in err
    assert out == ""


def test_no_definition_exits_4(tmp_path: Path) -> None:
    f = write(
        tmp_path, "g.yaml", {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"}}
    )
    rc, _, err = wmap("set", "image", "-f", f, "--local", "a=b")
    assert rc == 4 and "no Karta definition covers this workload type" in err


def test_label_and_annotate_pod_templates_and_object(tmp_path: Path) -> None:
    f = write(tmp_path, "d.yaml", DEPLOYMENT)
    rc, out, _ = wmap("label", "-f", f, "--local", "--pod-templates", "kai.scheduler/queue=a", "-o", "json")
    assert json.loads(out)["spec"]["template"]["metadata"]["labels"] == {
        "app": "web",
        "kai.scheduler/queue": "a",
    }
    assert json.loads(out)["metadata"]["labels"] == {"app": "web"}
    rc, out, _ = wmap("label", "-f", f, "--local", "app-")
    assert out == "deployment.apps/web unlabeled\n"
    rc, out, _ = wmap("label", "-f", f, "--local", "app=web")
    assert out == "deployment.apps/web not labeled\n"
    rc, out, _ = wmap("annotate", "-f", f, "--local", "note=x", "-o", "yaml")
    assert rc == 0
    assert yaml.safe_load(out)["metadata"]["annotations"] == {"note": "x"}


def test_diff_output(tmp_path: Path) -> None:
    f = write(tmp_path, "d.yaml", DEPLOYMENT)
    rc, out, _ = wmap("set", "image", "-f", f, "--local", "app=app:2", "--diff")
    assert rc == 0
    assert out.startswith("diff -u -N LIVE/apps.v1.Deployment.ml.web MERGED/apps.v1.Deployment.ml.web\n")
    assert "-        image: app:1\n+        image: app:2\n" in out
    rc, out, _ = wmap("set", "image", "-f", f, "--local", "app=app:1", "--diff")
    assert (rc, out) == (0, "")


KUBECTL = shutil.which("kubectl")


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
@pytest.mark.parametrize(
    "args",
    [
        ("set", "image", "*=app:9"),
        ("set", "image", "init=b:2", "app=a:2"),
        ("set", "resources", "--limits=cpu=2,nvidia.com/gpu=1", "--requests=cpu=1"),
        ("set", "resources", "-c", "log", "--limits=memory=1Gi"),
        ("set", "env", "B=2", "A-"),
        ("set", "env", "-c", "app", "C=3"),
    ],
)
def test_same_containers_and_values_as_kubectl(tmp_path: Path, args: tuple[str, ...]) -> None:
    """kubectl round-trips objects through typed structs (it adds ``resources: {}`` and
    ``creationTimestamp: null``); the containers' images, resources and env must agree."""
    import subprocess

    f = write(tmp_path, "d.yaml", DEPLOYMENT)
    theirs = subprocess.run(
        [str(KUBECTL), *args[:2], "-f", f, "--local", "-o", "json", *args[2:]],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert theirs.returncode == 0, theirs.stderr
    rc, ours, err = wmap(*args[:2], "-f", f, "--local", "-o", "json", *args[2:])
    assert rc == 0, err

    def containers(doc: dict[str, Any]) -> list[tuple[Any, ...]]:
        spec = doc["spec"]["template"]["spec"]
        return [
            (c["name"], c.get("image"), c.get("resources") or {}, c.get("env") or [])
            for c in spec.get("initContainers", []) + spec["containers"]
        ]

    assert containers(json.loads(ours)) == containers(json.loads(theirs.stdout))


SUSPENDABLE = [slug for slug in SLUGS if has_actions(load(slug)[0], "suspend")]


@pytest.mark.parametrize("slug", SUSPENDABLE)
def test_suspend_and_resume_every_type(tmp_path: Path, slug: str) -> None:
    """The definition's suspendActions, then its resumeActions, each value at every path its
    action names (JobSet spec.suspend, KServe's stop annotation, RayCluster's suspend...), and
    nothing outside the paths the definition names."""
    karta, obj = load(slug)
    rc, out, err = wmap("suspend", "-f", write(tmp_path, "w.yaml", obj), "--local", "-o", "json")
    assert rc == 0, err
    suspended = json.loads(out)
    assert actions_unmet(karta, suspended, "suspend") == []
    assert outside_named_paths(karta, obj, suspended, json_patch(obj, suspended)) == []
    rc, out, err = wmap("resume", "-f", write(tmp_path, "s.yaml", suspended), "--local", "-o", "json")
    assert rc == 0, err
    resumed = json.loads(out)
    assert actions_unmet(karta, resumed, "resume") == []
    assert outside_named_paths(karta, suspended, resumed, json_patch(suspended, resumed)) == []
    rc, out, err = wmap("suspend", "-f", write(tmp_path, "w.yaml", obj), "--local")
    assert (rc, err) == (0, "") and out.endswith(" suspended\n"), out


def test_suspend_an_unknown_component_names_it(tmp_path: Path) -> None:
    _, obj = load("jobset-x-k8s-io-jobset-v1alpha2")
    rc, out, err = wmap("suspend", "-f", write(tmp_path, "w.yaml", obj), "--local", "--component", "nope")
    assert (rc, out) == (1, "") and "nope" in err, err


def test_env_from_removal_node_selector_and_toleration_removal(tmp_path: Path) -> None:
    """The removing and referencing forms of the CLI grammar, end to end (issue 25's verbs)."""
    deployment = json.loads(json.dumps(DEPLOYMENT))
    spec = deployment["spec"]["template"]["spec"]
    spec["nodeSelector"] = {"pool": "gpu", "zone": "a"}
    spec["tolerations"] = [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "spot", "operator": "Exists", "effect": "NoExecute"},
    ]
    f = write(tmp_path, "d.yaml", deployment)

    args = ("-f", f, "--local", "-c", "app", "--from=secret/creds", "A-", "-o", "json")
    rc, out, err = wmap("set", "env", *args)
    assert rc == 0, err
    app = json.loads(out)["spec"]["template"]["spec"]["containers"][0]
    assert app["envFrom"] == [{"secretRef": {"name": "creds"}}]
    assert "env" not in app or app["env"] == []

    rc, out, err = wmap("set", "node-selector", "-f", f, "--local", "zone-", "-o", "json")
    assert rc == 0, err
    assert json.loads(out)["spec"]["template"]["spec"]["nodeSelector"] == {"pool": "gpu"}

    rc, out, err = wmap("set", "tolerations", "-f", f, "--local", "--remove", "spot", "-o", "json")
    assert rc == 0, err
    assert json.loads(out)["spec"]["template"]["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
