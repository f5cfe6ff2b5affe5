# ruff: noqa: E501  (JavaScript snippets run in the browser)
"""The web UI as a daily tool, in headless Chromium against ``wmap serve`` on the test API server:
the workload page says why (the rule behind the phase, the pods holding it, conditions, events),
shows labels, annotations and the YAML of the workload and of its definition, links pods to
their node's page; the list never cuts a kind name off, its namespace picker offers the
namespaces the user may list, and an authentication error is never shown as "No workloads
found". Screenshots go to ``$WMAP_UI_SHOTS`` (docs/server.md shows them)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.cli.helpers import jobset
from tests.server.ui.conftest import ServeProcess
from tests.server.ui.helpers import UI, check_screenshot
from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient
from tests.support.seed import (
    SCHEDULING,
    create_jobset_tree,
    job_for,
    running_status,
    stuck_deployment,
    stuck_events,
)
from tests.support.seed_catalog import seed_catalog_type

pytestmark = pytest.mark.cluster

LONG_KIND = "trainer-kubeflow-org-trainjob-v1alpha1"


@pytest.fixture(scope="module")
def daily(kube: KubeTestClient) -> dict[str, Any]:
    ns = kube.create_namespace("wmap-daily")
    kube.make_node("node-a", gpus=8)
    dep, rs, pods = stuck_deployment(kube, ns)
    kube.patch(dep, {"metadata": {"annotations": {"team.example.com/owner": "ml-platform"}}})
    stuck_events(kube, dep, rs, pods)
    seed_catalog_type(kube, "serving-kserve-io-llminferenceservice-v1alpha2", ns)  # LLMInferenceService
    return {"ns": ns}


@pytest.fixture
def ui(browser: Any, serve: ServeProcess, shots: Path) -> UI:
    return UI(browser, serve.url, shots)


def _rest(serve: ServeProcess, cluster: TestCluster, path: str) -> Any:
    r = httpx.get(
        f"{serve.url}/api/v1{path}", headers={"Authorization": f"Bearer {cluster.token('admin')}"}, timeout=30
    )
    r.raise_for_status()
    return r.json()


def test_workload_page_says_why_and_shows_yaml(
    ui: UI, daily: dict[str, Any], serve: ServeProcess, cluster: TestCluster
) -> None:
    ns = daily["ns"]
    ui.open(f"/workload/{ns}/apps-deployment-v1/web", cluster.token("admin"))
    ui.wait(lambda: ui.js("return !!document.querySelector('#events-table tbody tr')"), "events table")
    detail = _rest(serve, cluster, f"/namespaces/{ns}/workloads/apps-deployment-v1/web")

    reasons = ui.texts("#phase-reasons li")
    assert [r.split(" ", 1)[0] for r in reasons] == [r["phase"] for r in detail["phaseReasons"]]
    assert all(r["rule"] in text for r, text in zip(detail["phaseReasons"], reasons, strict=True))
    held = {li.split()[0]: li for li in ui.texts("#waiting-on li")}
    assert "CrashLoopBackOff" in held["web-5d9f7c-crash"]
    assert held["web-5d9f7c-wait"].split()[1] == "Pending" and held["web-5d9f7c-wait"].endswith(SCHEDULING)
    assert "1/3 ready" in ui.texts("#waiting-on .holdup p")[0]

    conditions = [
        row.split("\n")
        for row in ui.js(
            "return [...document.querySelectorAll('#conditions-table tbody tr')].map(r => [...r.cells].map(c => c.textContent).join('\\n'))"
        )
    ]
    assert (
        [(c[0], c[1], c[2]) for c in conditions]
        == [(c["type"], c["status"], c["reason"]) for c in detail["conditions"]]
        == [
            ("Available", "False", "MinimumReplicasUnavailable"),
            ("Progressing", "True", "ReplicaSetUpdated"),
        ]
    )
    events = ui.js(
        "return [...document.querySelectorAll('#events-table tbody tr')].map(r => [...r.cells].map(c => c.textContent))"
    )
    assert [e[1] for e in events] == [e["reason"] for e in reversed(detail["events"])]  # newest first
    assert events[0][2].endswith("(x7 over 39m)") and events[0][4] == "Pod/web-5d9f7c-crash"

    assert "app=web" in ui.texts("#labels-list li")
    assert "team.example.com/owner=ml-platform" in ui.texts("#annotations-list li")
    ui.js(
        "document.querySelector('#yaml-workload').open = true; document.querySelector('#yaml-definition').open = true"
    )
    workload_yaml = ui.wait(
        lambda: (
            (t := ui.js("return document.getElementById('yaml-workload-text').textContent")) != "Loading…"
            and t
        ),
        "workload YAML",
    )
    definition_yaml = ui.wait(
        lambda: (
            (t := ui.js("return document.getElementById('yaml-definition-text').textContent")) != "Loading…"
            and t
        ),
        "definition YAML",
    )
    assert yaml.safe_load(workload_yaml) == _rest(
        serve, cluster, f"/namespaces/{ns}/workloads/apps-deployment-v1/web/manifest"
    )
    assert (
        yaml.safe_load(definition_yaml)
        == _rest(serve, cluster, "/workload-types/apps-deployment-v1")["karta"]
    )
    ui.js(
        "document.querySelector('#yaml-workload').open = false; document.querySelector('#yaml-definition').open = false; window.scrollTo(0, 0)"
    )
    check_screenshot(ui.screenshot("workload-why"))

    link = ui.wait(
        lambda: ui.js(
            "return document.querySelector('#pods-table tr[data-pod=\"web-5d9f7c-crash\"] a.node-link')"
        ),
        "node link",
    )
    link.click()
    ui.wait(
        lambda: (
            ui.js("return location.hash") == "#/node/node-a" and ui.texts("#node-pods tbody tr[data-pod]")
        ),
        "node page",
    )
    pods = ui.js(
        "return [...document.querySelectorAll('#node-pods tbody tr[data-pod]')].map(r => [...r.cells].map(c => c.textContent))"
    )
    assert [ns, "web-5d9f7c-crash", "CrashLoopBackOff", "7"] in pods
    assert ["nvidia.com/gpu", "8", "8"] in ui.js(
        "return [...document.querySelectorAll('#node-resources tbody tr')].map(r => [...r.cells].map(c => c.textContent))"
    )
    assert ui.texts("#node-ready") == ["Ready"]
    check_screenshot(ui.screenshot("node"))


def test_a_running_workload_with_a_crashing_pod_shows_the_problem(
    ui: UI, kube: KubeTestClient, cluster: TestCluster
) -> None:
    """Issue 24: the green Running chip alone hid a pod in CrashLoopBackOff that `wmap describe`
    explains. The JobSet controller still says Running (each replicated job has an active Job);
    the page adds a warning chip naming the pods' state, the list a not-ready chip, and a
    healthy workload gets neither."""
    ns = kube.create_namespace("wmap-crash")
    roles = (("leader", 1), ("workers", 2))
    crashy = kube.create(jobset("crashy", ns, roles, gpus=1))
    for role, replicas in roles:
        for i in range(replicas):
            job = kube.create(job_for(crashy, role, i))
            crash = role == "workers" and i == 1
            kube.make_pod(f"{job['metadata']['name']}-pod", ns, owner=job, labels=job["metadata"]["labels"],
                          gpus=1, node="node-a", ready=not crash,
                          container_reason="CrashLoopBackOff" if crash else None, restarts=7 if crash else 0)  # fmt: skip
    kube.set_status(crashy, {"replicatedJobsStatus": [
        {"name": "leader", "active": 1, "ready": 1, "failed": 0, "succeeded": 0, "suspended": 0},
        {"name": "workers", "active": 2, "ready": 1, "failed": 0, "succeeded": 0, "suspended": 0},
    ]})  # fmt: skip
    healthy, _ = create_jobset_tree(kube, "healthy", ns, roles, gpus=1)
    kube.set_status(healthy, running_status(roles))

    ui.open(f"/workload/{ns}/jobset-x-k8s-io-jobset-v1alpha2/crashy", cluster.token("admin"))
    chip = ui.wait(lambda: ui.texts(".detail-head [data-attention]"), "attention chip")
    assert chip == ["1 pod CrashLoopBackOff"]
    assert ui.texts(".detail-head .chips [data-phase]") == ["Running"]
    assert "CrashLoopBackOff" in " ".join(ui.texts("#waiting-on li"))

    ui.open(f"/workloads?namespace={ns}", cluster.token("admin"))
    ui.wait(lambda: ui.js("return document.getElementById('main').dataset.total") == "2", "both rows")
    flags = ui.js(
        "return Object.fromEntries([...document.querySelectorAll('#workloads-table tbody tr[data-key]')].map(r => [r.cells[0].textContent, [...r.querySelectorAll('[data-attention]')].map(e => e.textContent)]))"
    )
    assert flags == {"crashy": ["1 not ready"], "healthy": []}


def test_list_shows_whole_kind_names_and_the_namespace_picker(
    ui: UI, daily: dict[str, Any], cluster: TestCluster, tmp_path: Path
) -> None:
    ns = daily["ns"]
    ui.open(f"/workloads?namespace={ns}", cluster.token("admin"))
    ui.wait(lambda: "LLMInferenceService" in ui.texts("#workloads-table td.kind"), "LLMInferenceService row")
    # One row per workload, the same rows as `wmap get --all-types`: no Pod rows for the pods a
    # Deployment owns through its ReplicaSet, or for the LLMInferenceService's router pods.
    from tests.cli.helpers import wmap

    kc = cluster.write_kubeconfig(tmp_path / "kubeconfig", user="admin")
    rc, out, err = wmap("get", "--all-types", "-n", ns, "-o", "name", "--kubeconfig", str(kc))
    assert rc == 0, err
    ui.wait(
        lambda: ui.js("return document.getElementById('main').dataset.total") == str(len(out.split())),
        "all rows",
    )
    shown = sorted(
        zip(
            ui.texts("#workloads-table td.kind"),
            ui.texts("#workloads-table tbody tr[data-key] td:first-child"),
            strict=True,
        )
    )
    cli = sorted((line.split("/", 1)[0].split(".", 1)[0], line.split("/", 1)[1]) for line in out.split())
    assert [(k.lower(), n) for k, n in shown] == cli, (shown, cli)
    cut = ui.js(
        "return [...document.querySelectorAll('#workloads-table td.kind')].filter(td => td.scrollWidth > td.clientWidth).map(td => td.textContent)"
    )
    assert cut == [], f"kind names cut off: {cut}"
    theirs = subprocess.run(
        ["kubectl", "--kubeconfig", str(kc), "get", "namespaces", "-o", "name"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split()
    options = ui.wait(
        lambda: ui.js(
            "return document.getElementById('ns-list').dataset.source === 'cluster' && [...document.querySelectorAll('#ns-list option')].map(o => o.value)"
        ),
        "namespace options",
    )
    assert sorted(options) == sorted(n.split("/", 1)[1] for n in theirs)
    check_screenshot(ui.screenshot("workloads-list"))


def test_an_authentication_error_is_never_no_workloads_found(ui: UI, daily: dict[str, Any]) -> None:
    ui.open("/workloads", "not-a-valid-token")
    ui.wait(
        lambda: "401" in ui.js("return document.getElementById('wl-message').textContent"), "the 401 message"
    )
    ui.js(
        "window.dispatchEvent(new Event('resize')); document.getElementById('wl-scroller').dispatchEvent(new Event('scroll'))"
    )
    ui.wait(lambda: ui.js("return !document.getElementById('wl-message').hidden"), "message still shown")
    text = ui.js("return document.getElementById('wl-message').textContent")
    assert "No workloads found" not in text and "401" in text
    assert ui.js("return document.getElementById('banner').dataset.status") == "401"


@pytest.fixture(scope="module")
def local_serve(cluster: TestCluster, tmp_path_factory: pytest.TempPathFactory) -> Any:
    from tests.support.processes import start_wmap

    tmp = tmp_path_factory.mktemp("ui-local")
    cert = cluster.issue_client_cert("ui-local-admin", groups=["system:masters"])
    kc = cluster.write_kubeconfig(tmp / "kubeconfig", user="ui-local-admin", client_cert=cert)
    with start_wmap("serve", ["--local"], tmp / "serve.log", kubeconfig=kc) as proc:
        yield proc


def test_local_serve_needs_no_token(
    browser: Any, local_serve: Any, shots: Path, daily: dict[str, Any]
) -> None:
    ui = UI(browser, local_serve.url, shots)
    ui.open(f"/workloads?namespace={daily['ns']}", None)
    ui.wait(
        lambda: ui.js("return document.getElementById('auth-state').dataset.local") == "1", "local sign-in"
    )
    assert ui.texts("#auth-state") == ["ui-local-admin in context wmap-test (local)"]
    ui.wait(
        lambda: "web" in ui.texts("#workloads-table tbody tr[data-key] td:first-child"),
        "rows without a token",
    )
    assert ui.js("return document.getElementById('banner').hidden")
    check_screenshot(ui.screenshot("local"))


def test_other_types_page_reads_generically(ui: UI, kube: KubeTestClient, cluster: TestCluster) -> None:
    from tests.support.seed import seed_gizmos

    ns = kube.create_namespace("wmap-other")
    group = seed_gizmos(kube, ns)
    headers = {"Authorization": f"Bearer {cluster.token('admin')}"}
    kube.wait_until(  # the server's discovery follows new CRDs within its refresh period
        lambda: any(
            t["group"] == group
            for t in httpx.get(f"{ui.base}/api/v1/other-types", headers=headers, timeout=30).json()["items"]
        ),
        timeout=60,
    )
    ui.open(f"/other?type=gizmos.{group}&namespace={ns}", cluster.token("admin"))
    rows = ui.wait(
        lambda: (
            (
                r := ui.js(
                    "return [...document.querySelectorAll('#generic-table tbody tr')].map(t => [t.dataset.name, t.dataset.origin, t.cells[2].textContent, t.cells[4].textContent])"
                )
            )
            and len(r) == 7
            and r
        ),
        "generic rows",
    )
    by_name = {name: (origin, phase, pods) for name, origin, phase, pods in rows}
    assert by_name["ready"] == ("generic", "Running", "2/2")
    assert by_name["stalled"][1] == "Failed" and by_name["behind"][1] == "Initializing"
    assert f"Gizmo ({group}/v1)" in ui.texts("#o-type option")
    assert "kstatus" in ui.texts("#o-note")[0]
    check_screenshot(ui.screenshot("other-types"))
