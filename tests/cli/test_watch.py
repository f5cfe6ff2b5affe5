"""``wmap get -w`` as kubectl users expect it, on the test API server: comma-separated types,
watching several types at once (``--all-types``, ``-A``), ``--output-watch-events`` shaped like
kubectl's, and Ctrl-C ending a watch with kubectl's exit code and no message."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.helpers import kubectl, wmap
from tests.support.kube import KubeTestClient
from tests.support.seed import create_deployment_tree, create_jobset_tree, create_statefulset_tree

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.usefixtures("bundled_catalog"),
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed"),
]


def _spawn(argv: list[str], *, kubectl: bool = False) -> subprocess.Popen[str]:
    cmd = ["kubectl", *argv] if kubectl else [sys.executable, "-m", "workload_map.cli.main", *argv]
    return subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ)
    )


def _first_line(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None and proc.stderr is not None
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=60)
        raise AssertionError(f"no output; exit {proc.returncode}; stderr:\n{proc.stderr.read()}")
    return line


def _finish(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """The rest of stdout and stderr once the process ends (read through the same buffered
    files _first_line used; communicate() would skip what they already buffered)."""
    assert proc.stdout is not None and proc.stderr is not None
    proc.wait(timeout=60)
    return proc.stdout.read(), proc.stderr.read()


def test_comma_separated_types_select_what_kubectl_selects(
    kube: KubeTestClient, namespace: str, kc: str
) -> None:
    create_deployment_tree(kube, "web", namespace, replicas=1)
    create_statefulset_tree(kube, "db", namespace, replicas=1)
    create_jobset_tree(kube, "train", namespace, (("leader", 1),))
    theirs = kubectl(kc, "get", "deploy,sts,jobsets", "-n", namespace, "-o", "name").stdout.split()
    rc, out, err = wmap("get", "deploy,sts,jobsets", "-n", namespace, "-o", "name", "--kubeconfig", kc)
    assert rc == 0, err
    assert sorted(out.split()) == sorted(theirs) and len(theirs) == 3
    rc, out, err = wmap("get", "deploy,sts", "-n", namespace, "--kubeconfig", kc)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["NAME", "TYPE"]
    assert {(ln.split()[0], ln.split()[1]) for ln in lines[1:]} == {
        ("web", "Deployment"),
        ("db", "StatefulSet"),
    }
    rc, out, err = wmap("get", "deploy,sts", "-n", namespace, "-o", "json", "--kubeconfig", kc)
    assert sorted(i["kind"] for i in json.loads(out)["items"]) == ["Deployment", "StatefulSet"]


def test_comma_types_with_a_name_print_what_exists_then_fail(
    kube: KubeTestClient, namespace: str, kc: str
) -> None:
    """kubectl prints the objects it found and an error for each type without the name (exit
    non-zero); wmap does the same with its not-found code."""
    create_deployment_tree(kube, "web", namespace, replicas=1)
    k = kubectl(kc, "get", "deploy,sts", "web", "-n", namespace, "-o", "name")
    assert k.returncode != 0 and k.stdout.split() == ["deployment.apps/web"]
    rc, out, err = wmap("get", "deploy,sts", "web", "-n", namespace, "-o", "name", "--kubeconfig", kc)
    assert (rc, out.split()) == (3, ["deployment.apps/web"])
    assert 'StatefulSet "web" not found' in err
    rc, _, err = wmap("get", "deploy,,sts", "-n", namespace, "--kubeconfig", kc)
    assert rc == 2 and 'empty TYPE in "deploy,,sts"' in err
    rc, _, err = wmap("get", "deploy,nosuchthing", "-n", namespace, "--kubeconfig", kc)
    assert rc == 4 and "nosuchthing" in err


def test_watch_all_types_across_namespaces_with_watch_events(
    kube: KubeTestClient, namespace: str, kc: str
) -> None:
    """Rows of several types in two namespaces, ADDED for the list and MODIFIED for changes, the
    EVENT column first as kubectl prints it; the JobSet's own Jobs stay out (top-level rule)."""
    other = kube.create_namespace("wmap-w")
    dep = create_deployment_tree(kube, "web", namespace, replicas=1)[0]
    js, _ = create_jobset_tree(kube, "train", other, (("leader", 1),))
    header = kubectl(kc, "get", "deploy", "-A", "-w", "--output-watch-events", "--request-timeout=2s")
    kubectl_header = header.stdout.splitlines()[0].split()
    proc = _spawn(
        [
            "get",
            "--all-types",
            "-A",
            "-w",
            "--output-watch-events",
            "--watch-timeout",
            "12",
            "--kubeconfig",
            kc,
        ]
    )
    try:
        first = _first_line(proc)
        time.sleep(2)
        kube.patch(dep, {"spec": {"replicas": 3}})
        kube.patch(
            js,
            {
                "metadata": {"labels": {"changed": "yes"}},
                "spec": {"replicatedJobs": js["spec"]["replicatedJobs"]},
            },
        )
        job = {"apiVersion": "batch/v1", "kind": "Job", **kube.list("batch/v1", "jobs", other)[0]}
        kube.patch(job, {"metadata": {"labels": {"touched": "yes"}}})
        out, err = _finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert first.split()[:3] == kubectl_header[:3] == ["EVENT", "NAMESPACE", "NAME"], (first, kubectl_header)
    assert first.split()[3] == "TYPE"
    events = [ln.split() for ln in out.splitlines() if ln.strip()]
    seen = {(e[0], e[1], e[2], e[3]) for e in events}
    assert ("ADDED", namespace, "web", "Deployment") in seen, out
    assert ("ADDED", other, "train", "JobSet") in seen, out
    assert ("MODIFIED", namespace, "web", "Deployment") in seen, (out, err)
    assert not [e for e in events if e[3] == "Job"], out  # owned by the JobSet: not a top-level row


def test_watch_events_as_json(kube: KubeTestClient, namespace: str, kc: str) -> None:
    dep = create_deployment_tree(kube, "web", namespace, replicas=1)[0]
    proc = _spawn(
        [
            "get",
            "deploy",
            "-n",
            namespace,
            "-w",
            "--output-watch-events",
            "-o",
            "json",
            "--watch-timeout",
            "15",
            "--kubeconfig",
            kc,
        ]
    )
    try:
        first = _first_line(proc)  # the watch has listed: change the object now, not after a guess
        kube.patch(dep, {"spec": {"replicas": 2}})
        rest, err = _finish(proc)
        out = first + rest
    finally:
        if proc.poll() is None:
            proc.kill()
    docs = []
    decoder = json.JSONDecoder()
    text = out.strip()
    while text:
        doc, end = decoder.raw_decode(text)
        docs.append(doc)
        text = text[end:].strip()
    assert [d["type"] for d in docs][:2] == ["ADDED", "MODIFIED"], out
    assert docs[0]["object"]["name"] == "web" and docs[1]["object"]["components"][0]["desired"] == 2
    rc, _, err = wmap("get", "deploy", "--output-watch-events", "--kubeconfig", kc)
    assert rc == 2 and "--output-watch-events needs --watch" in err


def test_ctrl_c_ends_a_watch_quietly_with_kubectls_code(
    kube: KubeTestClient, namespace: str, kc: str
) -> None:
    create_jobset_tree(kube, "train", namespace, (("leader", 1),))
    codes = []
    errors = []
    for theirs in (True, False):
        argv = ["get", "jobsets", "-n", namespace, "-w", "--kubeconfig", kc]
        proc = _spawn(argv, kubectl=theirs)
        try:
            assert _first_line(proc).split()[0] == "NAME"
            time.sleep(1)
            proc.send_signal(signal.SIGINT)
            _out, err = _finish(proc)
        finally:
            if proc.poll() is None:
                proc.kill()
        codes.append(proc.returncode)
        errors.append(err.strip())
    assert codes[0] == codes[1] == 1, codes
    assert errors[1] == "", errors


def test_one_type_failing_does_not_end_the_others(
    kube: KubeTestClient, namespace: str, kc: str, tmp_path: Path
) -> None:
    """A watched type whose CRD is deleted mid-watch is reported on stderr and dropped; the other
    types keep printing."""
    import secrets

    import yaml

    from tests.support.crds import install_crds, schemaless_crd

    group = f"w{secrets.token_hex(3)}.example.com"
    crd = schemaless_crd(group, "Gadget", "gadgets")
    karta = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "gadget"},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "gadget",
                    "kind": {"group": group, "version": "v1", "kind": "Gadget"},
                    "statusDefinition": {
                        "phaseDefinition": {"path": ".status.phase"},
                        "statusMappings": {"running": [{"byPhase": "Running"}]},
                    },
                    "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                    "scaleDefinition": {"replicasPath": ".spec.replicas"},
                }
            }
        },
    }
    install_crds(kube, [crd], downlevel=False)
    definition = tmp_path / "gadget.yaml"
    definition.write_text(yaml.safe_dump(karta))
    dep = create_deployment_tree(kube, "web", namespace, replicas=1)[0]
    kube.create(
        {
            "apiVersion": f"{group}/v1",
            "kind": "Gadget",
            "metadata": {"name": "g", "namespace": namespace},
            "spec": {"replicas": 1},
        }
    )
    proc = _spawn(
        [
            "get",
            "deploy,gadgets",
            "-n",
            namespace,
            "-w",
            "--watch-timeout",
            "14",
            "--definitions",
            str(definition),
            "--kubeconfig",
            kc,
        ]
    )
    try:
        assert _first_line(proc).split()[:2] == ["NAME", "TYPE"]
        time.sleep(2)
        kube.delete("apiextensions.k8s.io/v1", "customresourcedefinitions", f"gadgets.{group}")
        time.sleep(4)
        kube.patch(dep, {"spec": {"replicas": 2}})
        out, err = _finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "stopped watching Gadget" in err, err
    assert any(ln.split()[:2] == ["web", "Deployment"] and "deployment:2" in ln for ln in out.splitlines()), (
        out
    )
