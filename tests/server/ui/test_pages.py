# ruff: noqa: E501  (JavaScript snippets run in the browser)
"""The web UI in headless Chromium against ``wmap serve`` on the real test API server.

One namespace is seeded per module: JobSets (running, failed, waiting for pods) with Jobs and
pods, and a PyTorchJob with a pod no component claims. Each page is opened fresh, its content
asserted through the DOM, and a screenshot checked for being a real rendering.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.server.ui.conftest import ServeProcess
from tests.server.ui.helpers import UI, check_screenshot
from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient
from tests.support.seed import PYTORCH_ROLE, create_jobset_tree, role_pods, running_status

pytestmark = pytest.mark.cluster

SEVERITY = [
    "Failed",
    "Degraded",
    "Suspending",
    "Resuming",
    "Suspended",
    "Initializing",
    "Running",
    "Completed",
    "Undefined",
]
FAILED = {
    "conditions": [
        {
            "type": "Failed",
            "status": "True",
            "reason": "BackoffLimitExceeded",
            "message": "m",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
    ]
}


def pytorchjob(name: str, namespace: str) -> dict[str, Any]:
    def spec(replicas: int) -> dict[str, Any]:
        c = {
            "name": "pytorch",
            "image": "registry.invalid/x:1",
            "resources": {"requests": {"cpu": "8", "memory": "64Gi"}, "limits": {"nvidia.com/gpu": "8"}},
        }
        return {"replicas": replicas, "restartPolicy": "OnFailure", "template": {"spec": {"containers": [c]}}}

    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"pytorchReplicaSpecs": {"Master": spec(1), "Worker": spec(1)}},
    }


@pytest.fixture(scope="module")
def seeded(kube: KubeTestClient) -> dict[str, Any]:
    ns = kube.create_namespace("wmap-ui")
    train, _ = create_jobset_tree(kube, "train", ns, (("leader", 1), ("workers", 2)), gpus=4, node="node-a")
    kube.set_status(train, running_status((("leader", 1), ("workers", 2))))
    kube.patch(train, {"metadata": {"labels": {"team": "a"}}})
    broken, _ = create_jobset_tree(kube, "broken", ns, (("workers", 1),), gpus=1)
    kube.set_status(broken, FAILED)
    create_jobset_tree(kube, "queued", ns, (("workers", 2),), gpus=2, ready=False, node=None)
    pt = kube.create(pytorchjob("llama", ns))
    kube.set_status(
        pt,
        {
            "conditions": [
                {
                    "type": "Running",
                    "status": "True",
                    "reason": "R",
                    "message": "m",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ]
        },
    )
    replicas = (("llama-master-0", "master", "gpu-1"), ("llama-worker-0", "worker", "gpu-2"))
    role_pods(kube, pt, PYTORCH_ROLE, replicas, gpus=8, cpu="8", memory="64Gi")
    kube.make_pod("llama-sidecar", ns, owner=pt, node="gpu-2")  # no replica-type label: unattributed
    return {"ns": ns, "names": {"train", "broken", "queued", "llama"}}


@pytest.fixture
def ui(browser: Any, serve: ServeProcess, shots: Path) -> UI:
    return UI(browser, serve.url, shots)


def table_names(ui: UI) -> list[str]:
    return ui.texts("#workloads-table tbody tr[data-key] td:first-child")


def wait_rows(ui: UI, n: int) -> list[str]:
    return ui.wait(
        lambda: (
            (
                len(table_names(ui)) == n
                and ui.js("return document.getElementById('main').dataset.shown") == str(n)
            )
            and table_names(ui)
        ),
        f"{n} rows",
    )


# --------------------------------------------------------------------------- workloads page


def test_workloads_table(ui: UI, seeded: dict[str, Any], admin_token: str) -> None:
    ns = seeded["ns"]
    ui.open(f"/workloads?namespace={ns}", admin_token)
    names = wait_rows(ui, 4)
    assert set(names) == seeded["names"]
    # live stream connected
    ui.wait(lambda: ui.js("return document.getElementById('wl-live').dataset.state") == "open", "stream open")
    # default sort: phase severity, so the Failed workload comes first
    assert names[0] == "broken"
    row = {
        r["name"]: r
        for r in ui.js("""
      return [...document.querySelectorAll('#workloads-table tbody tr[data-key]')].map(tr => ({
        name: tr.cells[0].textContent, kind: tr.cells[1].textContent, ns: tr.cells[2].textContent,
        chips: [...tr.cells[3].querySelectorAll('.chip')].map(c => c.textContent),
        ready: tr.cells[4].textContent, gpus: tr.cells[5].textContent, cpu: tr.cells[6].textContent,
        mem: tr.cells[7].textContent, href: tr.cells[0].querySelector('a').getAttribute('href')}))""")
    }
    assert row["train"]["kind"] == "JobSet" and row["llama"]["kind"] == "PyTorchJob"
    assert row["train"]["ns"] == ns
    assert "Running" in row["train"]["chips"] and "Failed" in row["broken"]["chips"]
    assert row["train"]["gpus"] == "12" and row["train"]["ready"] == "3/3"
    assert row["train"]["cpu"] == "1500m" and row["train"]["mem"] == "3Gi"
    assert row["llama"]["gpus"] == "16" and row["llama"]["cpu"] == "16" and row["llama"]["mem"] == "128Gi"
    assert row["queued"]["ready"] == "0/2"
    for r in row.values():  # every row's chips in severity order
        ranks = [SEVERITY.index(c) for c in r["chips"]]
        assert ranks == sorted(ranks), r
    assert row["train"]["href"].startswith(f"#/workload/{ns}/")
    shot = ui.screenshot("workloads")
    stats = check_screenshot(
        shot, colours={"Failed chip": (0xFD, 0xE7, 0xE5), "Running chip": (0xE2, 0xF4, 0xE6)}
    )
    print("workloads screenshot", shot, stats)


def test_phase_chip_order_matches_spec(ui: UI, seeded: dict[str, Any], admin_token: str) -> None:
    ui.open("/definitions", admin_token)
    ui.wait(lambda: ui.js("return !!document.getElementById('definitions')"), "page")
    got = ui.d.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "import('/static/js/util.js').then(m => done({order: m.sortPhases(arguments[0]),"
        " tones: arguments[0].map(p => [p, m.phaseTone(p)])}));",
        list(reversed(SEVERITY)),
    )
    assert got["order"] == SEVERITY
    tones = dict(got["tones"])
    assert [tones[p] for p in SEVERITY] == [
        "error",
        "warning",
        "warning",
        "info",
        "secondary",
        "secondary",
        "success",
        "info",
        "grey",
    ]


def test_sorting_and_filters(ui: UI, seeded: dict[str, Any], admin_token: str) -> None:
    ns = seeded["ns"]
    ui.open(f"/workloads?namespace={ns}", admin_token)
    wait_rows(ui, 4)
    gpu_header = ui.d.find_element(By.CSS_SELECTOR, "th[data-col=gpus] button")
    gpu_header.click()
    ui.wait(lambda: table_names(ui) == ["broken", "queued", "train", "llama"], "ascending GPUs")
    assert (
        ui.js("return document.querySelector('th[data-col=gpus]').getAttribute('aria-sort')") == "ascending"
    )
    gpu_header.click()
    ui.wait(lambda: table_names(ui) == ["llama", "train", "queued", "broken"], "descending GPUs")
    ui.d.find_element(By.CSS_SELECTOR, "th[data-col=name] button").click()
    ui.wait(lambda: table_names(ui) == ["broken", "llama", "queued", "train"], "by name")
    # text search (in the browser)
    search = ui.d.find_element(By.ID, "f-search")
    search.send_keys("lla")
    ui.wait(lambda: table_names(ui) == ["llama"], "search")
    assert "1 of 4" in ui.d.find_element(By.ID, "wl-count").text
    search.clear()
    search.send_keys(" ")
    search.send_keys(Keys.BACKSPACE)
    wait_rows(ui, 4)
    # phase filter
    ui.js(
        "const s = document.getElementById('f-phase'); s.value = 'Failed'; s.dispatchEvent(new Event('change'))"
    )
    ui.wait(lambda: table_names(ui) == ["broken"], "phase filter")
    ui.js("const s = document.getElementById('f-phase'); s.value = ''; s.dispatchEvent(new Event('change'))")
    wait_rows(ui, 4)
    # label selector (sent to the server)
    labels = ui.d.find_element(By.ID, "f-labels")
    labels.send_keys("team=a")
    labels.send_keys(Keys.TAB)
    ui.wait(lambda: table_names(ui) == ["train"], "label selector")
    assert "labelSelector=team%3Da" in ui.d.current_url or "labelSelector=team=a" in ui.d.current_url
    # type filter (sent to the server): the type list comes from /workload-types
    ui.js("const l = document.getElementById('f-labels'); l.value = ''; l.dispatchEvent(new Event('change'))")
    wait_rows(ui, 4)
    options = ui.js(
        "return [...document.querySelectorAll('#f-type option')].map(o => [o.value, o.parentElement.label || ''])"
    )
    pt_type = next(v for v, _ in options if "pytorchjob" in v)
    ui.js(
        "const s = document.getElementById('f-type'); s.value = arguments[0]; s.dispatchEvent(new Event('change'))",
        pt_type,
    )
    ui.wait(lambda: table_names(ui) == ["llama"], "type filter")


def test_live_update_in_place(ui: UI, seeded: dict[str, Any], admin_token: str, kube: KubeTestClient) -> None:
    ns = seeded["ns"]
    ui.open(f"/workloads?namespace={ns}&sort=name", admin_token)
    wait_rows(ui, 4)
    ui.wait(lambda: ui.js("return document.getElementById('wl-live').dataset.state") == "open", "stream open")
    ui.js("window.__noReload = true")
    before = ui.js(
        "return [...document.querySelector('tr[data-key*=\"|queued\"]').querySelectorAll('.chip')].map(c => c.textContent)"
    )
    assert "Failed" not in before
    js = kube.get("jobset.x-k8s.io/v1alpha2", "jobsets", "queued", ns)
    kube.set_status(js, FAILED)
    ui.wait(
        lambda: (
            "Failed"
            in ui.js(
                "return [...document.querySelector('tr[data-key*=\"|queued\"]').querySelectorAll('.chip')].map(c => c.textContent)"
            )
        ),
        "row updated from the stream",
        timeout=20,
    )
    assert ui.js("return window.__noReload") is True
    assert table_names(ui) == ["broken", "llama", "queued", "train"]  # same place (sorted by name)
    # a new workload appears, a deleted one goes
    create_jobset_tree(kube, "fresh", ns, (("workers", 1),), gpus=1)
    ui.wait(lambda: "fresh" in table_names(ui), "added row")
    kube.delete("jobset.x-k8s.io/v1alpha2", "jobsets", "fresh", ns)
    ui.wait(lambda: "fresh" not in table_names(ui), "deleted row")
    kube.set_status(kube.get("jobset.x-k8s.io/v1alpha2", "jobsets", "queued", ns), {})


# ---------------------------------------------------------------------------- workload page


def test_workload_page_jobset(ui: UI, seeded: dict[str, Any], admin_token: str) -> None:
    ns = seeded["ns"]
    ui.open(f"/workloads?namespace={ns}", admin_token)
    wait_rows(ui, 4)
    # The list re-renders on live events: find and click in one retried step (no stale element).
    ui.wait(lambda: ui.d.find_element(By.LINK_TEXT, "train").click() or True, "click train")
    ui.wait(lambda: ui.js("return !!document.getElementById('component-graph')"), "detail page")
    assert ui.d.find_element(By.ID, "wl-title").text == "JobSet/train"
    head = ui.d.find_element(By.CSS_SELECTOR, ".detail-head").text
    assert "Running" in head
    meta = ui.d.find_element(By.CSS_SELECTOR, "dl.meta").text
    assert ns in meta and "jobset" in meta and "catalog" in meta
    tiles = {
        t: ui.d.find_element(By.CSS_SELECTOR, f"#tile-{t} .value").text
        for t in ("gpus", "pods", "cpu", "memory")
    }
    assert tiles == {"gpus": "12", "pods": "3/3", "cpu": "1500m", "memory": "3Gi"}
    nodes = ui.js(
        "return [...document.querySelectorAll('#component-graph g.node')].map(g => [g.dataset.name, +g.dataset.depth, g.textContent])"
    )
    by_name = {n: (d, text) for n, d, text in nodes}
    assert by_name["train"][0] == 0
    assert {"leader", "workers"} <= set(by_name)
    assert by_name["leader"][0] > by_name["replicatedjob"][0] if "replicatedjob" in by_name else True
    assert "1/1 ready" in by_name["leader"][1] and "2/2 ready" in by_name["workers"][1]
    assert "GPU 8 (4/pod)" in by_name["workers"][1]
    edges = ui.js("return document.querySelectorAll('#component-graph path.edge').length")
    assert edges == len(nodes) - 1
    pods = ui.js(
        "return [...document.querySelectorAll('#pods-table tbody tr[data-pod]')].map(tr => [...tr.cells].map(c => c.textContent))"
    )
    assert sorted(p[0] for p in pods) == ["train-leader-0-pod", "train-workers-0-pod", "train-workers-1-pod"]
    assert all(
        p[2] == "Running" and p[3] == "yes" and p[4] == "0" and p[6] == "node-a" and p[7] == "4" for p in pods
    )
    res = ui.js(
        "return [...document.querySelectorAll('#resources-table tbody tr')].map(tr => [...tr.cells].map(c => c.textContent))"
    )
    assert res[-1] == ["TOTAL", "3", "12", "1500m", "3Gi"]
    assert ["leader", "1", "4", "500m", "1Gi"] in res and ["workers", "2", "8", "1", "2Gi"] in res
    assert "Every pod is attributed" in ui.d.find_element(By.ID, "u-title").find_element(By.XPATH, "..").text
    shot = ui.screenshot("workload-jobset")
    print("workload screenshot", shot, check_screenshot(shot, colours={"Running chip": (0xE2, 0xF4, 0xE6)}))


def test_workload_page_pytorchjob_unattributed(ui: UI, seeded: dict[str, Any], admin_token: str) -> None:
    ns = seeded["ns"]
    ui.open(f"/workloads?namespace={ns}", admin_token)
    wait_rows(ui, 4)
    href = ui.js("return document.querySelector('tr[data-key*=\"|llama\"] a').getAttribute('href')")
    ui.open(href[1:], admin_token)
    ui.wait(lambda: ui.js("return !!document.getElementById('component-graph')"), "detail page")
    assert ui.d.find_element(By.ID, "wl-title").text == "PyTorchJob/llama"
    names = ui.js("return [...document.querySelectorAll('#component-graph g.node')].map(g => g.dataset.name)")
    assert names[0] == "llama" and {"master", "worker"} <= set(names)
    pods = ui.texts("#pods-table tbody tr[data-pod] td:first-child")
    assert sorted(pods) == ["llama-master-0", "llama-worker-0"]
    un = ui.js(
        "return [...document.querySelectorAll('#unattributed-table tbody tr')].map(tr => [...tr.cells].map(c => c.textContent))"
    )
    assert [u[0] for u in un] == ["llama-sidecar"] and un[0][2] == "gpu-2" and un[0][3]
    assert ui.d.find_element(By.CSS_SELECTOR, "#tile-gpus .value").text == "16"
    shot = ui.screenshot("workload-pytorchjob")
    print("pytorchjob screenshot", shot, check_screenshot(shot))


def test_workload_not_found(ui: UI, seeded: dict[str, Any], admin_token: str) -> None:
    ui.open(f"/workload/{seeded['ns']}/JobSet/nope", admin_token)
    box = ui.wait(lambda: ui.d.find_elements(By.CSS_SELECTOR, "#workload-detail .error-box"), "error box")
    assert "not found" in box[0].text.lower() and "404" in box[0].text


# ------------------------------------------------------------------------- definitions page


def test_definitions_page(ui: UI, seeded: dict[str, Any], admin_token: str) -> None:
    ui.open("/definitions", admin_token)
    ui.wait(lambda: ui.d.find_elements(By.ID, "d-summary"), "definitions")
    served = ui.js(
        "return [...document.querySelectorAll('#defs-served tbody tr[data-name]')].map(tr => [tr.dataset.name, tr.cells[1].textContent, tr.dataset.origin, tr.cells[4].textContent])"
    )
    unserved = ui.js(
        "return [...document.querySelectorAll('#defs-unserved tbody tr[data-name]')].map(tr => tr.dataset.name)"
    )
    kinds = {k for _, k, _, _ in served}
    assert {"JobSet", "PyTorchJob", "Deployment", "Job"} <= kinds
    assert all(o in ("catalog", "cluster") for _, _, o, _ in served)
    assert all(v.startswith("valid") for *_, v in served)
    assert len(served) + len(unserved) >= 30
    summary = ui.d.find_element(By.ID, "d-summary").text
    assert f"{len(served)} cover kinds the cluster serves" in summary
    ui.d.find_element(By.ID, "d-search").send_keys("jobset")
    ui.wait(
        lambda: all(
            "jobset" in n
            for n in ui.js(
                "return [...document.querySelectorAll('tr[data-name]')].map(tr => tr.dataset.name)"
            )
        ),
        "search",
    )
    ui.d.find_element(By.ID, "d-search").clear()
    ui.d.find_element(By.ID, "d-search").send_keys("x")
    ui.d.find_element(By.ID, "d-search").send_keys(Keys.BACKSPACE)
    shot = ui.screenshot("definitions")
    print("definitions screenshot", shot, check_screenshot(shot))


# --------------------------------------------------------------------------------------- auth


def test_auth_errors(ui: UI, seeded: dict[str, Any], cluster: TestCluster, admin_token: str) -> None:
    ui.open("/workloads", None)
    banner = ui.wait(
        lambda: ui.d.find_element(By.ID, "banner").is_displayed() and ui.d.find_element(By.ID, "banner"),
        "401 banner",
    )
    assert "401" in banner.text and banner.get_attribute("data-status") == "401"
    assert ui.d.find_element(By.ID, "auth-state").text == "no token"
    ui.open("/workloads", "not-a-real-token")
    banner = ui.wait(
        lambda: ui.d.find_element(By.ID, "banner").is_displayed() and ui.d.find_element(By.ID, "banner"),
        "401 banner",
    )
    assert "401" in banner.text
    # enter a token through the dialog: the page reloads its data
    # (the banner re-renders while requests retry: find and click in one retried step)
    ui.wait(lambda: ui.d.find_element(By.CSS_SELECTOR, "#banner button").click() or True, "token dialog")
    field = ui.d.find_element(By.ID, "token-input")
    field.clear()
    field.send_keys(admin_token)
    ui.d.find_element(By.CSS_SELECTOR, "#token-form button[value=save]").click()
    ui.wait(lambda: not ui.d.find_element(By.ID, "banner").is_displayed(), "banner gone")
    assert ui.js("return sessionStorage.getItem('wmap.token')") == admin_token
    # an authenticated user without RBAC: 403 on a workload
    ui.open(f"/workload/{seeded['ns']}/JobSet/train", cluster.token("nobody"))
    banner = ui.wait(
        lambda: ui.d.find_element(By.ID, "banner").is_displayed() and ui.d.find_element(By.ID, "banner"),
        "403 banner",
    )
    assert "403" in banner.text and banner.get_attribute("data-status") == "403"
    assert "403" in ui.d.find_element(By.CSS_SELECTOR, "#workload-detail .error-box").text
    shot = ui.screenshot("forbidden")
    check_screenshot(shot, colours={"error banner": (0xFD, 0xE7, 0xE5)})


# ------------------------------------------------------------------------- suspend / resume


def test_suspend_and_resume_buttons(
    ui: UI, seeded: dict[str, Any], admin_token: str, kube: KubeTestClient
) -> None:
    ns = seeded["ns"]
    create_jobset_tree(kube, "pausable", ns, (("workers", 1),), gpus=1)
    ui.open(f"/workload/{ns}/jobset-x-k8s-io-jobset-v1alpha2/pausable", admin_token)
    suspend = ui.wait(lambda: ui.d.find_element(By.ID, "btn-suspend"), "suspend button")
    assert suspend.is_enabled() and not ui.d.find_element(By.ID, "btn-resume").is_enabled()
    suspend.click()
    ui.wait(
        lambda: (
            kube.get("jobset.x-k8s.io/v1alpha2", "jobsets", "pausable", ns)["spec"].get("suspend") is True
        ),
        "spec.suspend set",
    )
    # the page re-reads the workload: Suspending (no controller here to confirm), Resume enabled
    ui.wait(lambda: "Suspending" in ui.texts(".detail-head .chip"), "Suspending chip")
    resume = ui.wait(
        lambda: (
            ui.d.find_element(By.ID, "btn-resume").is_enabled() and ui.d.find_element(By.ID, "btn-resume")
        ),
        "resume enabled",
    )
    resume.click()
    ui.wait(
        lambda: not kube.get("jobset.x-k8s.io/v1alpha2", "jobsets", "pausable", ns)["spec"].get("suspend"),
        "spec.suspend cleared",
    )
    ui.wait(lambda: "Suspending" not in ui.texts(".detail-head .chip"), "chip back")
    kube.delete("jobset.x-k8s.io/v1alpha2", "jobsets", "pausable", ns)


# ------------------------------------------------------------------------------------------ scale


def test_scale_form_scales_through_the_definition(
    ui: UI, seeded: dict[str, Any], admin_token: str, kube: KubeTestClient
) -> None:
    """The scale form lists the components with a count, one entry per instance where there are
    several (a JobSet's replicated jobs); the count is in pods, as the page shows them. Scaling one
    replicated job leaves the other as it was."""
    from selenium.webdriver.support.ui import Select

    ns = seeded["ns"]
    create_jobset_tree(kube, "growing", ns, (("leader", 1), ("workers", 1)), gpus=1)
    ui.open(f"/workload/{ns}/jobset-x-k8s-io-jobset-v1alpha2/growing", admin_token)
    select = Select(ui.wait(lambda: ui.d.find_element(By.ID, "scale-component"), "scale form"))
    assert [o.text for o in select.options] == ["replicatedjob/leader (1)", "replicatedjob/workers (1)"]
    select.select_by_visible_text("replicatedjob/workers (1)")
    field = ui.d.find_element(By.ID, "scale-replicas")
    field.clear()
    field.send_keys("3")
    ui.d.find_element(By.ID, "btn-scale").click()

    def replicas() -> list[int]:
        js = kube.get("jobset.x-k8s.io/v1alpha2", "jobsets", "growing", ns)
        return [rj["replicas"] for rj in js["spec"]["replicatedJobs"]]

    ui.wait(lambda: replicas() == [1, 3], "workers scaled, leader kept")
    ui.wait(lambda: "replicatedjob/workers (3)" in ui.texts("#scale-component option"), "form re-read")
    kube.delete("jobset.x-k8s.io/v1alpha2", "jobsets", "growing", ns)
