"""Registering a workload type through the REST API (``POST /api/v1/workload-types``): bounded
validation (issue 23) and strict field validation by default (issue 24), on the real test API
server with the Karta CRD.

The issue's 94 KB ownerRef ring cost 8 s of server CPU per dry run (the cubic cycle check); it is
one finding now, linear in the body (tests/model/test_hostile_definitions.py counts the work). The
body's expressions share one object's compile budget (0.5 s of CPU)."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.testclient import TestClient

from tests.server.conftest import AppFactory
from tests.support import hostile_inputs as h
from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient

Headers = Callable[[str], dict[str, str]]
TYPES = "/api/v1/workload-types"


@pytest.fixture(scope="module")
def rw(make_app: AppFactory) -> TestClient:
    return make_app(enable_writes=True)


def typo_karta(kind: str = "Typo") -> dict[str, Any]:
    karta = h.karta(f"{kind.lower()}s", {"structureDefinition": {"rootComponent": h._root(kind)}})
    mappings = karta["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]["statusMappings"]
    mappings["runing"] = mappings.pop("running")
    return karta


def test_the_issues_94kb_ownerref_ring_is_one_finding(rw: TestClient, bearer: Headers) -> None:
    body = h.ownerref_cycle_of_size(94 * 1024)
    assert 90 * 1024 < len(json.dumps(body, separators=(",", ":"))) < 100 * 1024
    r = rw.post(f"{TYPES}?dryRun=true", json=body, headers=bearer("admin"))
    assert r.status_code == 422, r.text
    findings = r.json()["findings"]
    assert [f["code"] for f in findings] == ["KARTA014"]
    assert findings[0]["message"].startswith("ownership cycle detected involving component c000")


def test_expressions_beyond_one_objects_compile_budget_are_refused(rw: TestClient, bearer: Headers) -> None:
    body = h.many_expressions(3000)
    r = rw.post(f"{TYPES}?dryRun=true", json=body, headers=bearer("admin"))
    assert r.status_code == 422, r.text
    [f] = [f for f in r.json()["findings"] if f["code"] == "KARTA301"]
    assert f["message"].startswith("request: compiling its expressions took more than 0.5 s of CPU")


def test_unknown_fields_are_refused_unless_field_validation_says_otherwise(
    rw: TestClient, bearer: Headers
) -> None:
    body = typo_karta()
    r = rw.post(f"{TYPES}?dryRun=true", json=body, headers=bearer("admin"))
    assert r.status_code == 422, r.text
    assert (
        'unknown field "runing"' in r.json()["message"] and '(did you mean "running"?)' in r.json()["message"]
    )
    r = rw.post(f"{TYPES}?dryRun=true&fieldValidation=Warn", json=body, headers=bearer("admin"))
    assert r.status_code == 200, r.text
    [warning] = [f for f in r.json()["findings"] if f["code"] == "KARTA101"]
    assert warning["severity"] == "warning"
    r = rw.post(f"{TYPES}?dryRun=true&fieldValidation=Ignore", json=body, headers=bearer("admin"))
    assert r.status_code == 200 and not [f for f in r.json()["findings"] if f["code"] == "KARTA101"]
    r = rw.post(f"{TYPES}?dryRun=true&fieldValidation=strict", json=body, headers=bearer("admin"))
    assert r.status_code == 400 and "fieldValidation must be one of Strict, Warn, Ignore" in r.text


def test_the_api_server_prunes_unknown_fields_of_a_karta(kube: KubeTestClient, karta_crd: str) -> None:
    """Why the admission webhook never sees an unknown field: the Karta CRD's structural schema
    preserves none, so the API server drops them before admission (and stores the rest)."""
    body = typo_karta("Pruned")
    stored = kube.request("POST", "/apis/run.ai/v1alpha1/kartas", body, params={"dryRun": "All"})
    mappings = stored["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]["statusMappings"]
    assert "runing" not in mappings and mappings == {}
    untouched = copy.deepcopy(body)
    untouched["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]["statusMappings"] = {}
    assert stored["spec"] == untouched["spec"]


def _wait_for_published_schema(kube: KubeTestClient) -> None:
    """kubectl validates against the server's OpenAPI document, which the API server updates a
    moment after a CRD is installed: wait until the Karta's schema is in it."""
    for _ in range(120):
        doc = kube.request("GET", "/openapi/v2")
        if "ai.run.v1alpha1.Karta" in doc.get("definitions", {}):
            return
        time.sleep(1)
    raise AssertionError("the Karta CRD's schema never appeared in /openapi/v2")


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_refuses_the_typo_only_while_it_validates(
    cluster: TestCluster, kube: KubeTestClient, karta_crd: str, tmp_path: Path
) -> None:
    """Observed, not assumed, on the v1.20 test server (no server-side field validation): kubectl's
    default --validate=strict checks the Karta CRD's published schema itself and refuses the typo;
    with --validate=false (or any client that does not validate) the API server takes the object
    and prunes the field silently. The webhook only sees the pruned object, so wmap's own readers
    (validate, --definitions, the REST API) are where a typo is refused whatever applies it."""
    _wait_for_published_schema(kube)
    kc = str(cluster.write_kubeconfig(tmp_path / "kubeconfig", user="admin"))
    path = tmp_path / "typo.yaml"
    path.write_text(yaml.safe_dump(typo_karta("Kubectl")))

    def apply(validate: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                "kubectl",
                "--kubeconfig",
                kc,
                "apply",
                "--dry-run=server",
                f"--validate={validate}",
                "-f",
                str(path),
                "-o",
                "json",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "HOME": str(tmp_path)},  # no OpenAPI cache from another run
        )

    strict = apply("strict")
    assert strict.returncode != 0 and 'unknown field "runing"' in strict.stderr, strict.stderr
    lenient = apply("false")
    assert lenient.returncode == 0, lenient.stderr
    stored = json.loads(lenient.stdout)
    assert (
        "runing"
        not in stored["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]["statusMappings"]
    )
