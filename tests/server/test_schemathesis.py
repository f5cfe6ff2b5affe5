"""Fuzz the API with schemathesis from openapi/openapi.json (bounded: 25 examples per operation,
positive data, an admin token, writes disabled): no 5xx, and every response conforms to the
document. The SSE stream is left out (it does not end by itself)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from starlette.testclient import TestClient

from tests.server.conftest import AppFactory
from tests.support.cluster import TestCluster
from workload_map.server.openapi import openapi_document


@pytest.fixture(scope="module")
def fuzz_app(make_app: AppFactory, kube: Any) -> TestClient:
    client = make_app(enable_writes=False)
    kube.wait_until(lambda: client.get("/readyz").status_code == 200, timeout=90)
    return client


@pytest.fixture(scope="module")
def api_schema(fuzz_app: TestClient) -> Any:
    return schemathesis.openapi.from_asgi("/openapi.json", fuzz_app.app).exclude(
        path="/api/v1/watch/workloads"
    )


def _no_server_error(_ctx: Any, response: Any, _case: Any) -> bool:
    assert response.status_code < 500, f"{response.status_code}: {response.text[:500]}"
    return True


CHECKS: list[Callable[..., Any]] = [
    _no_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.mark.slow
def test_api_conforms(api_schema: Any, cluster: TestCluster) -> None:
    headers = {"Authorization": f"Bearer {cluster.token('admin')}"}
    failures: list[str] = []
    operations = [op.ok() for op in api_schema.get_all_operations()]
    assert len(operations) >= 13
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def run(case: Any) -> None:
            case.call_and_validate(headers=headers, checks=CHECKS)

        try:
            run()
        except Exception as exc:
            failures.append(f"{operation.label}: {exc}"[:2000])
    assert not failures, "\n\n".join(failures)


def test_document_loads() -> None:
    assert len(list(schemathesis.openapi.from_dict(openapi_document()).get_all_operations())) >= 14
