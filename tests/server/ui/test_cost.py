# ruff: noqa: E501  (JavaScript snippets run in the browser)
"""The workload page's Cost section in headless Chromium: ``wmap serve --prometheus URL`` against
the real test API server and a fake Prometheus on loopback that answers as Prometheus's HTTP API
does (tests/support/fake_prometheus.py, playing the cost recording rules). The section shows
GPU-hours, cost, idle GPU cost and the queries that gave them; a Prometheus refusing the
queries leaves the rest of the page whole and says why in the section."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from tests.server.ui.helpers import UI, check_screenshot
from tests.support.cluster import TestCluster
from tests.support.fake_prometheus import (
    TRAIN_MEASURES,
    Answer,
    FakePrometheus,
    RuleSeries,
    error,
    jobset_labels,
)
from tests.support.kube import KubeTestClient
from tests.support.processes import WmapProcess, start_wmap
from tests.support.seed import create_jobset_tree, running_status

pytestmark = pytest.mark.cluster

ROLES = (("leader", 1), ("workers", 2))


@pytest.fixture(scope="module")
def prometheus(kube: KubeTestClient) -> Iterator[tuple[FakePrometheus, str]]:
    ns = kube.create_namespace("wmap-ui-cost")
    for name in ("train", "broken"):
        js, _ = create_jobset_tree(kube, name, ns, ROLES, gpus=4, node="node-a")
        kube.set_status(js, running_status(ROLES))
    rules = RuleSeries()
    rules.add(jobset_labels(ns, "train"), **TRAIN_MEASURES)

    def answer(query: str) -> Answer:
        if 'workload_name="broken"' in query:
            return error(422, "execution", "many-to-many matching not allowed")
        return rules.answer(query)

    with FakePrometheus(answer) as prom:
        yield prom, ns


@pytest.fixture(scope="module")
def serve_cost(
    cluster: TestCluster, prometheus: tuple[FakePrometheus, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WmapProcess]:
    d = tmp_path_factory.mktemp("serve-cost")
    kc = cluster.write_kubeconfig(d / "kubeconfig")
    with start_wmap("serve", ["--prometheus", prometheus[0].url], d / "serve.log", kubeconfig=kc) as proc:
        yield proc


@pytest.fixture
def ui(browser: Any, serve_cost: WmapProcess, shots: Path) -> UI:
    return UI(browser, serve_cost.url, shots)


def test_cost_section(ui: UI, prometheus: tuple[FakePrometheus, str], admin_token: str) -> None:
    prom, ns = prometheus
    ui.open(f"/workload/{ns}/JobSet/train", admin_token)
    ui.wait(lambda: ui.js("return !!document.getElementById('cost-queries')"), "cost section")
    figures = ui.js(
        "return Object.fromEntries([...document.querySelectorAll('#cost-figures > div')].map(d => [d.id, d.textContent]))"
    )
    assert figures == {
        "cost-gpu-hours": "GPU-hours72.0 (3 GPUs allocated now)",
        "cost-total": "Cost190.50 (now 8.25 per hour: cpu 0.50, gpu 7.50, memory 0.25)",
        "cost-idle": "Idle GPU cost1.25 per hour (GPU utilisation 62.5%)",
    }
    assert ui.d.find_element(By.ID, "cost-title").text == "Cost (last 24h)"
    comps = ui.js(
        "return [...document.querySelectorAll('#cost-components tbody tr')].map(tr => [...tr.cells].map(c => c.textContent))"
    )
    assert comps == [["replicatedjob", "leader", "2.75"], ["replicatedjob", "workers", "5.50"]]
    # the queries shown are the ones the server ran against Prometheus
    shown = ui.js(
        "return [...document.querySelectorAll('#cost-queries li')].map(li => [li.dataset.name, li.querySelector('code').textContent])"
    )
    asked = {q["query"] for q in prom.queries if 'workload_name="train"' in q["query"]}
    assert {q for _, q in shown} == asked and len(shown) == 7
    assert f"Prometheus {prom.url}" in ui.d.find_element(By.CSS_SELECTOR, "#cost-queries summary").text
    # the rest of the page as without a Prometheus
    assert ui.d.find_element(By.CSS_SELECTOR, "#tile-gpus .value").text == "12"
    ui.js("document.getElementById('cost').scrollIntoView()")
    ui.screenshot("workload-cost")  # docs/server.md's (WMAP_UI_SHOTS); the check needs the top bar
    ui.js("window.scrollTo(0, 0)")
    shot = ui.screenshot("workload-cost-page")
    print("cost screenshot", shot, check_screenshot(shot))


def test_cost_section_when_prometheus_refuses(
    ui: UI, prometheus: tuple[FakePrometheus, str], admin_token: str
) -> None:
    _, ns = prometheus
    ui.open(f"/workload/{ns}/JobSet/broken", admin_token)
    ui.wait(lambda: ui.js("return !!document.getElementById('cost-error')"), "cost error")
    assert (
        "refused the query: execution: many-to-many matching not allowed"
        in ui.d.find_element(By.ID, "cost-error").text
    )
    assert ui.d.find_element(By.ID, "cost-gpu-hours").text.split() == ["GPU-hours", "unknown"]
    assert ui.d.find_element(By.ID, "wl-title").text == "JobSet/broken"
    assert len(ui.texts("#pods-table tbody tr[data-pod]")) == 3  # the page itself is whole
    assert ui.texts("#cost-queries li code")  # what was tried, to try by hand
