"""``wmap set|label|annotate|scale`` live, on the real API server with the frameworks' real CRDs.

For every catalog type, the running fixture's object (tests/catalog/lifecycles, shaped as the
frameworks' recordings) is created as its controller would have it; then for every verb:

* ``--dry-run=server`` is accepted by the API server (the real CRD schema, or the built-in
  validation of Deployments, Jobs...), the object stored is unchanged, and the server's answer
  shows the change in every pod location the resolver reads;
* the live write succeeds, and the object read back shows it in every pod location, with a diff
  that touches only paths the definition names; refused verbs fail with the matrix's reason and
  leave the object as it was.

Plus scale for every component that scales, two writers (a conflict retried on the fresh object,
then given up on with the reason), RBAC errors naming the verb and resource as kubectl does, and
kubectl's own output lines for the verbs both tools have.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.helpers import kubectl, kubectl_out, wmap
from tests.resolve.test_edit_catalog import REFUSED, SCALES, SLUGS, load, scaled_by
from tests.support.cluster import TestCluster
from tests.support.edits import VERBS, actions_unmet, has_actions, outside_named_paths, pod_seen
from tests.support.kube import KubeApiError, KubeTestClient
from tests.support.seed_catalog import seed_from_fixture
from workload_map.resolve import resolve
from workload_map.resolve.patch import json_patch

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("bundled_catalog")]

#: Bookkeeping the API server changes on every write.
_VOLATILE = ("managedFields", "resourceVersion", "generation")


def _clean(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in obj.get("metadata", {}).items() if k not in _VOLATILE}
    return {k: v for k, v in obj.items() if k != "status"} | {"metadata": meta}


def _seed(kube: KubeTestClient, slug: str, namespace: str) -> dict[str, Any]:
    try:
        return seed_from_fixture(kube, slug, namespace)
    except LookupError as exc:  # e.g. CronJob batch/v1 is newer than the test API server (v1.20)
        pytest.skip(f"the test API server does not serve {slug}'s version: {exc}")
    except KubeApiError as exc:
        if exc.status_code == 404:
            pytest.skip(f"the test API server's CRD corpus does not serve {slug}'s version")
        raise


def _word(kube: KubeTestClient, obj: dict[str, Any]) -> str:
    plural, _ = kube.plural_for(obj["apiVersion"], obj["kind"])
    group = obj["apiVersion"].rpartition("/")[0]
    return f"{plural}.{group}/{obj['metadata']['name']}" if group else f"{plural}/{obj['metadata']['name']}"


def _shows(karta: Any, obj: dict[str, Any], verb: str) -> int:
    shown = 0
    for comp in resolve(karta, obj).components.values():
        for inst in comp.instances:
            seen = pod_seen(inst.spec)
            if seen is not None:
                assert VERBS[verb].shows(seen), f"{verb}: {comp.name}/{inst.id}: {seen}"
                shown += 1
    return shown


#: What the API server itself refuses on a live object (the same change works with --local, i.e.
#: before the object is created, and in the admission policy): a Job's pod template is immutable
#: (v1.20; newer servers allow some scheduling fields of suspended Jobs), and a Pod's spec allows
#: only image and toleration changes, its metadata labels and annotations.
LIVE_REFUSED: dict[tuple[str, str], str] = {
    **{("batch-job-v1", verb): "field is immutable" for verb in VERBS},
    **{
        ("core-pod-v1", verb): "pod updates may not change fields other than"
        # (not scheduler: the fixture pod already names kai-scheduler, so nothing is sent)
        for verb in ("resources", "env", "node-selector", "priority-class")
    },
}


@pytest.mark.parametrize("slug", SLUGS)
def test_every_verb_live_and_dry_run(kube: KubeTestClient, kc: str, namespace: str, slug: str) -> None:
    karta, _ = load(slug)
    created = _seed(kube, slug, namespace)
    word = _word(kube, created)
    base = ("--kubeconfig", kc, "-n", namespace)
    for verb in sorted(VERBS):
        before = kube.get_obj(created)
        args = (*base, *VERBS[verb].argv(word))
        rc, out, err = wmap(*args, "--dry-run=server", "-o", "json")
        refused = REFUSED.get((slug, verb)) or LIVE_REFUSED.get((slug, verb))
        if refused is not None:
            assert rc == 1 and refused in err, err
            assert (
                kube.get_obj(created)["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
            )
            continue
        assert rc == 0, f"{verb}: {err}"
        answered = json.loads(out)
        assert _shows(karta, answered, verb) > 0
        assert kube.get_obj(created)["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
        rc, out, err = wmap(*args)
        assert rc == 0, f"{verb}: {err}"
        after = kube.get_obj(created)
        if after["metadata"]["resourceVersion"] != before["metadata"]["resourceVersion"]:
            assert out.rstrip().endswith(("updated", "labeled", "annotated")), out
        assert _shows(karta, after, verb) > 0
        ops = json_patch(_clean(before), _clean(after))
        assert outside_named_paths(karta, before, after, ops) == [], verb


@pytest.mark.parametrize("slug", SLUGS)
def test_scale_live(kube: KubeTestClient, kc: str, namespace: str, slug: str) -> None:
    karta, _ = load(slug)
    created = _seed(kube, slug, namespace)
    word = _word(kube, created)
    for name, comp in resolve(karta, kube.get_obj(created)).components.items():
        if len(comp.instances) != 1:
            continue
        found = scaled_by(karta, kube.get_obj(created), name)
        target = (
            max(2, comp.instances[0].desired_replicas * 2)
            if isinstance(found, str)
            else found[0][comp.instances[0].id]
        )
        args = (
            "--kubeconfig",
            kc,
            "-n",
            namespace,
            "scale",
            word,
            "--component",
            name,
            "--replicas",
            str(target),
        )
        before = kube.get_obj(created)["metadata"]["resourceVersion"]
        rc, out, err = wmap(*args, "--dry-run=server", "-o", "json")
        if name not in SCALES.get(slug, ()):
            assert (rc, out) == (1, "") and f"component '{name}'" in err, err
            assert kube.get_obj(created)["metadata"]["resourceVersion"] == before
            continue
        assert rc == 0, err
        answered = resolve(karta, json.loads(out)).components[name]
        assert [i.desired_replicas for i in answered.instances] == [target]  # accepted by the schema
        assert kube.get_obj(created)["metadata"]["resourceVersion"] == before
        rc, out, err = wmap(*args)
        assert rc == 0, err
        assert out.endswith("scaled\n")
        after = resolve(karta, kube.get_obj(created)).components[name]
        assert [i.desired_replicas for i in after.instances] == [target]


SUSPENDABLE = [slug for slug in SLUGS if has_actions(load(slug)[0], "suspend")]
#: Suspend fields the test API server (v1.20.2) drops without an error: batch/v1 Job
#: ``spec.suspend`` came in Kubernetes 1.21 (alpha, JobSuspend gate), so v1.20 prunes it and a
#: PATCH of it alone is a silent no-op. wmap must say so instead of printing "suspended".
LIVE_DROPPED = {"batch-job-v1": ".spec.suspend = true (job: suspendActions[0].path)"}


@pytest.mark.parametrize("slug", SUSPENDABLE)
def test_suspend_and_resume_live(kube: KubeTestClient, kc: str, namespace: str, slug: str) -> None:
    """``wmap suspend`` and ``resume`` on the live object: the server dry run answers with the
    actions' values and stores nothing, the write stores them (the real CRD keeps the fields, it
    does not prune them), and the diff stays on the paths the definition names."""
    karta, _ = load(slug)
    created = _seed(kube, slug, namespace)
    base = ("--kubeconfig", kc, "-n", namespace)
    word = _word(kube, created)
    if slug in LIVE_DROPPED:
        before = kube.get_obj(created)
        for args in (("suspend", word), ("suspend", word, "--dry-run=server")):
            rc, out, err = wmap(*base, *args)
            assert (rc, out) == (1, ""), err
            assert (
                f"the API server does not keep {LIVE_DROPPED[slug]}" in err and "nothing was written" in err
            )
        assert kube.get_obj(created)["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
        return
    for verb in ("suspend", "resume"):
        before = kube.get_obj(created)
        rc, out, err = wmap(*base, verb, word, "--dry-run=server", "-o", "json")
        assert rc == 0, f"{verb}: {err}"
        assert actions_unmet(karta, json.loads(out), verb) == []
        assert kube.get_obj(created)["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
        rc, out, err = wmap(*base, verb, word)
        assert rc == 0, f"{verb}: {err}"
        after = kube.get_obj(created)
        assert actions_unmet(karta, after, verb) == [], f"{verb}: the API server did not keep it"
        ops = json_patch(_clean(before), _clean(after))
        assert outside_named_paths(karta, before, after, ops) == [], verb


def _jobset(kube: KubeTestClient, namespace: str) -> dict[str, Any]:
    return _seed(kube, "jobset-x-k8s-io-jobset-v1alpha2", namespace)


def test_two_writers_never_lose_an_update(
    kube: KubeTestClient, cluster: TestCluster, namespace: str, tmp_path: Path
) -> None:
    """The other writer changes the object between our read and our PATCH: the precondition
    makes the API server refuse the stale write (409), we read again and apply our edit to what
    the other writer left; both changes survive."""
    from workload_map.cluster.client import KubeClient
    from workload_map.cluster.kubeconfig import ConnectionOptions
    from workload_map.cluster.writes import write_change
    from workload_map.resolve.writeback import SetImage, apply_edits

    karta, _ = load("jobset-x-k8s-io-jobset-v1alpha2")
    created = _jobset(kube, namespace)
    path = kube.path_of(created)
    kc = cluster.write_kubeconfig(tmp_path / "kubeconfig")
    client = KubeClient.from_options(ConnectionOptions(kubeconfig=str(kc)))
    calls: list[str] = []

    def compute(obj: dict[str, Any]) -> Any:
        calls.append(obj["metadata"]["resourceVersion"])
        if len(calls) == 1:  # the other writer gets in first
            other = kube.get_obj(created)
            other["metadata"].setdefault("labels", {})["other"] = "writer"
            kube.update(other)
        return apply_edits(karta, obj, [SetImage("*", "img:2")])

    try:
        result = write_change(client, path, compute, field_manager="test")
    finally:
        client.close()
    assert result.attempts == 2 and len(set(calls)) == 2
    final = kube.get_obj(created)
    assert final["metadata"]["labels"]["other"] == "writer"
    images = {
        c["image"]
        for rj in final["spec"]["replicatedJobs"]
        for c in rj["template"]["spec"]["template"]["spec"]["containers"]
    }
    assert images == {"img:2"}


def test_a_writer_that_never_stops_ends_in_exit_1(
    kube: KubeTestClient, kc: str, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workload_map.cluster.client import KubeClient

    created = _jobset(kube, namespace)
    original = KubeClient.patch
    bumps = {"n": 0}

    def racing_patch(self: KubeClient, path: str, body: Any, **kwargs: Any) -> dict[str, Any]:
        other = kube.get_obj(created)  # someone else writes just before every PATCH
        bumps["n"] += 1
        other["metadata"].setdefault("annotations", {})["bump"] = str(bumps["n"])
        kube.update(other)
        return original(self, path, body, **kwargs)

    monkeypatch.setattr(KubeClient, "patch", racing_patch)
    rc, out, err = wmap("--kubeconfig", kc, "-n", namespace, "set", "image", _word(kube, created), "*=img:3")
    assert (rc, out) == (1, "")
    assert "the object has been modified" in err and "changed 5 times" in err
    assert bumps["n"] == 5
    images = {
        c["image"]
        for rj in kube.get_obj(created)["spec"]["replicatedJobs"]
        for c in rj["template"]["spec"]["template"]["spec"]["containers"]
    }
    assert "img:3" not in images


def test_rbac_errors_name_the_verb_and_resource(
    kube: KubeTestClient, cluster: TestCluster, namespace: str, tmp_path: Path
) -> None:
    created = _jobset(kube, namespace)
    kube.grant(
        "reader", [{"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets"], "verbs": ["get"]}], namespace
    )
    kc = str(cluster.write_kubeconfig(tmp_path / "reader", user="reader"))
    word = _word(kube, created)
    rc, out, err = wmap("--kubeconfig", kc, "-n", namespace, "set", "scheduler", word, "kai-scheduler")
    assert (rc, out) == (1, "")
    theirs = kubectl(kc, "-n", namespace, "patch", word, "--type=merge", "-p", '{"spec":{}}')
    assert theirs.returncode == 1
    reason = (
        'User "reader" cannot patch resource "jobsets" in API group "jobset.x-k8s.io" '
        f'in the namespace "{namespace}"'
    )
    assert reason in err and reason in theirs.stderr
    rc, _, err = wmap(
        "--kubeconfig", kc, "-n", namespace, "set", "scheduler", word, "kai", "--dry-run=server"
    )
    assert rc == 1 and "cannot patch resource" in err
    rc, _, err = wmap(
        "--kubeconfig", kc, "-n", namespace, "set", "scheduler", word, "kai", "--dry-run=client"
    )
    assert rc == 0  # reading is allowed; nothing is sent


def test_missing_workload_exits_3(kc: str, namespace: str) -> None:
    rc, _, err = wmap(
        "--kubeconfig", kc, "-n", namespace, "scale", "deployments.apps/nothere", "--replicas", "2"
    )
    assert rc == 3 and f'Deployment "nothere" not found in namespace {namespace}' in err


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (("set", "image", "{w}", "app=app:2"), ("set", "image", "{w}", "app=app:3")),
        (("set", "image", "{w}", "app=app:1"), ("set", "image", "{w}", "app=app:1")),  # unchanged: no line
        (
            ("set", "image", "{w}", "app=app:2", "--dry-run=server"),
            ("set", "image", "{w}", "app=app:3", "--dry-run=server"),
        ),
        (("set", "resources", "{w}", "--limits=cpu=2"), ("set", "resources", "{w}", "--limits=cpu=3")),
        (("set", "env", "{w}", "X=1"), ("set", "env", "{w}", "Y=1")),
        (("label", "{w}", "team=ml"), ("label", "{w}", "owner=me")),
        (("label", "{w}", "team-"), ("label", "{w}", "team-")),  # absent: "not found."
        (("label", "{w}", "team=a", "app-"), ("label", "{w}", "owner=b", "team-")),
        (("annotate", "{w}", "note=x"), ("annotate", "{w}", "note2=x")),
        (("scale", "{w}", "--replicas", "3"), ("scale", "{w}", "--replicas=4")),
        (
            ("set", "image", "{w}", "app=app:2", "-o", "name"),
            ("set", "image", "{w}", "app=app:5", "-o", "name"),
        ),
    ],
)
def test_output_lines_are_kubectls(
    kube: KubeTestClient, kc: str, namespace: str, ours: tuple[str, ...], theirs: tuple[str, ...]
) -> None:
    kube.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": namespace, "labels": {"app": "web"}},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "app", "image": "app:1"}]},
                },
            },
        }
    )
    rc, out, err = wmap("--kubeconfig", kc, "-n", namespace, *(a.format(w="deployment/web") for a in ours))
    assert rc == 0, err
    expected = kubectl_out(kc, "-n", namespace, *(a.format(w="deployment/web") for a in theirs))
    assert out == expected


def test_a_scheduler_name_is_checked_more_strictly_than_the_api_server(
    kube: KubeTestClient, kc: str, namespace: str
) -> None:
    """Observed: the API server (v1.20) accepts any schedulerName in a pod template; wmap refuses
    names that are not DNS subdomains (every real scheduler's name is one; a misspelt one leaves
    pods Pending silently). The test keeps both facts in view."""
    deploy = kube.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": namespace},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "app", "image": "app:1"}]},
                },
            },
        }
    )
    rc, out, err = wmap(
        "--kubeconfig", kc, "-n", namespace, "set", "scheduler", "deployment/web", "Kai_Scheduler"
    )
    assert (rc, out) == (1, "") and "RFC 1123 subdomain" in err
    answer = kube.request(
        "PATCH",
        kube.path_of(deploy),
        [{"op": "add", "path": "/spec/template/spec/schedulerName", "value": "Kai_Scheduler"}],
        params={"dryRun": "All"},
        content_type="application/json-patch+json",
    )
    assert answer["spec"]["template"]["spec"]["schedulerName"] == "Kai_Scheduler"


def test_field_manager_is_recorded(kube: KubeTestClient, kc: str, namespace: str) -> None:
    created = _jobset(kube, namespace)
    word = _word(kube, created)
    rc, _, err = wmap(
        "--kubeconfig", kc, "-n", namespace, "set", "scheduler", word, "kai", "--field-manager", "gitops-bot"
    )
    assert rc == 0, err
    rc, _, err = wmap("--kubeconfig", kc, "-n", namespace, "label", word, "team=ml")
    assert rc == 0, err
    managers = {m["manager"] for m in kube.get_obj(created)["metadata"]["managedFields"]}
    assert {"gitops-bot", "wmap-label"} <= managers


@pytest.mark.parametrize(
    ("args", "ours"),
    [
        (("set", "resources", "{w}", "--limits=cpu=abc"), "quantities must match the regular expression"),
        (("set", "resources", "{w}", "--limits=cpu=-1"), "must be greater than or equal to 0"),
        (("set", "tolerations", "{w}", "--add", "gpu:Sometimes"), "is not one of NoSchedule"),
        (("label", "{w}", "--pod-templates", "queue=not a value"), 'invalid label "queue" value'),
        (("set", "env", "{w}", "1BAD=x"), "a valid environment variable name"),
    ],
)
def test_values_refused_here_are_refused_by_the_api_server(
    kube: KubeTestClient, kc: str, namespace: str, args: tuple[str, ...], ours: str
) -> None:
    """Each value wmap refuses before writing is one the API server refuses too: the same change
    made by hand (a JSON patch of the pod template, server-side dry run) is rejected (422) by the
    Deployment's validation and by the JobSet CRD's schema where it checks that field."""
    deploy = kube.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": namespace},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "app", "image": "app:1"}]},
                },
            },
        }
    )
    rc, out, err = wmap("--kubeconfig", kc, "-n", namespace, *(a.format(w="deployment/web") for a in args))
    assert (rc, out) == (1, "") and ours in err, err
    by_hand: dict[str, dict[str, tuple[str, Any]]] = {
        "set": {
            "resources": (
                "/spec/template/spec/containers/0/resources",
                {"limits": {"cpu": args[-1].split("=")[-1]}},
            ),
            "tolerations": (
                "/spec/template/spec/tolerations",
                [{"key": "gpu", "operator": "Exists", "effect": "Sometimes"}],
            ),
            "env": ("/spec/template/spec/containers/0/env", [{"name": "1BAD", "value": "x"}]),
        },
        "label": {"": ("/spec/template/metadata/labels/queue", "not a value")},
    }
    path, value = by_hand["set"][args[1]] if args[0] == "set" else by_hand["label"][""]
    with pytest.raises(KubeApiError) as refused:
        kube.request(
            "PATCH",
            kube.path_of(deploy),
            [{"op": "add", "path": path, "value": value}],
            params={"dryRun": "All"},
            content_type="application/json-patch+json",
        )
    assert refused.value.status_code == 422, refused.value
    if args[1:2] == ("resources",) and args[-1].endswith("abc"):  # the CRD's quantity pattern
        js = _jobset(kube, namespace)
        container = "/spec/replicatedJobs/0/template/spec/template/spec/containers/0/resources"
        with pytest.raises(KubeApiError) as schema:
            kube.request(
                "PATCH",
                kube.path_of(js),
                [{"op": "add", "path": container, "value": {"limits": {"cpu": "abc"}}}],
                params={"dryRun": "All"},
                content_type="application/json-patch+json",
            )
        assert schema.value.status_code == 422 and "limits.cpu" in str(schema.value)
