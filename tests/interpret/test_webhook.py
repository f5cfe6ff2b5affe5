"""The interpreter webhook over TLS: requests as Karmada sends them, malformed and hostile ones,
and the server's bounds (body size, slow clients never delaying others)."""

from __future__ import annotations

import json
import socket
import ssl
from collections.abc import Iterator
from typing import Any

import pytest

from tests.cli.helpers import jobset
from tests.interpret.defs import widget, widget_definition
from tests.resolve.defs import karta
from tests.support.karmada_webhook import KarmadaClient, interpreter_webhook, karmada_context
from workload_map.definitions_source import DefinitionEntry, DefinitionSet, catalog_entries
from workload_map.interpret import DefinitionIndex

# A definition whose status rule is an exponential recursion (2**40 calls): it passes the static
# checks, so only the evaluation's guards (step budget, deadline) stop it.
HOSTILE = """
metadata: {name: gadgets-example-com-v1}
spec:
  structureDefinition:
    rootComponent:
      name: gadget
      kind: {group: example.com, version: v1, kind: Gadget}
      specDefinition: {podTemplateSpecPath: .spec.template}
      statusDefinition:
        statusMappings:
          running:
          - byExpression:
              expression: 'def f: if . > 0 then (. - 1 | f) + (. - 1 | f) else 1 end; 40 | f > 0'
              expectedResult: "true"
"""


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KarmadaClient]:
    entries = [*catalog_entries(), DefinitionEntry(widget_definition(), "local")]
    entries.append(DefinitionEntry(karta(HOSTILE), "local"))
    index = DefinitionIndex(DefinitionSet(entries))
    with interpreter_webhook(tmp_path_factory.mktemp("certs"), index) as c:
        yield c


def test_every_operation_answers_a_jobset_over_tls(client: KarmadaClient) -> None:
    obj = jobset("train", "ml", roles=(("leader", 1), ("workers", 3)), gpus=8)
    replica = client.call("InterpretReplica", obj)
    assert replica.response["replicas"] == 4
    assert replica.response["replicaRequirements"]["resourceRequest"]["nvidia.com/gpu"] == "8"
    names = [c["name"] for c in client.call("InterpretComponent", obj).response["components"]]
    assert names == ["leader", "workers"]
    assert client.call("InterpretHealth", obj).response["healthy"] is False  # no status yet: Initializing
    assert client.call("InterpretStatus", obj).response["rawStatus"] == {}
    assert client.call("InterpretDependency", obj).response["dependencies"] == []
    assert client.call("ReviseReplica", obj, replicas=4).patched == obj
    assert client.call("Retain", obj, observed=obj).patched == obj
    agg = client.call("AggregateStatus", obj, aggregated_status=[{"clusterName": "m", "status": {"x": 1}}])
    assert agg.patched is not None and agg.patched["status"] == {"x": 1}


def test_a_revision_comes_back_as_a_json_patch_karmada_applies(client: KarmadaClient) -> None:
    obj = widget([("a", 1), ("b", 3)])
    out = client.call("ReviseReplica", obj, replicas=9)
    assert out.response["patchType"] == "JSONPatch"
    assert out.patched is not None
    assert [g["replicas"] for g in out.patched["spec"]["groups"]] == [2, 6]


def test_a_kind_no_definition_covers_is_refused(client: KarmadaClient) -> None:
    obj = {"apiVersion": "example.com/v9", "kind": "Gizmo", "metadata": {"name": "g"}}
    out = client.call("InterpretReplica", obj)
    assert not out.successful
    assert out.response["status"] == {
        "code": 404,
        "message": "wmap interpreter: no Karta definition covers example.com/v9 Gizmo",
    }


def _raw(client: KarmadaClient, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    answer = client.http.post(client.url, content=body, headers=headers or {})
    return answer.status_code, answer.json()


@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        (b"{not json", 400, "not JSON"),
        (b"[]", 200, "not a ResourceInterpreterContext"),
        (b'{"request": {"uid": 5}}', 200, "request.uid must be a string"),
        (b'{"request": {"uid": "u", "kind": "Job"}}', 200, "request.kind must be an object"),
        (
            b'{"request": {"uid": "u", "kind": {"version": "v1", "kind": "K"}, "operation": "X"}}',
            200,
            "object",
        ),
    ],
    ids=["not-json", "list", "uid", "kind", "no-object"],
)
def test_malformed_contexts_get_a_refusal(
    client: KarmadaClient, body: bytes, status: int, fragment: str
) -> None:
    code, answer = _raw(client, body)
    assert code == status
    assert answer["kind"] == "ResourceInterpreterContext"
    assert answer["response"]["successful"] is False
    assert fragment in answer["response"]["status"]["message"]


def test_bad_fields_of_a_request_keep_its_uid(client: KarmadaClient) -> None:
    body = karmada_context("ReviseReplica", widget([("a", 1)]))
    body["request"]["replicas"] = "three"
    code, answer = _raw(client, json.dumps(body).encode())
    assert code == 200 and answer["response"]["uid"] == body["request"]["uid"]
    assert "request.replicas must be an integer" in answer["response"]["status"]["message"]


def test_an_oversized_body_is_refused_before_it_is_read(client: KarmadaClient) -> None:
    import http.client

    host, port = client.url.split("//")[1].split("/")[0].split(":")
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    conn = http.client.HTTPSConnection(host, int(port), timeout=30, context=context)
    try:
        conn.putrequest("POST", "/interpret-karmada")
        conn.putheader("Content-Length", str(64 * 1024 * 1024))
        conn.endheaders()
        resp = conn.getresponse()
        code, answer = resp.status, json.loads(resp.read())
    finally:
        conn.close()
    assert code == 413 and "larger than" in answer["response"]["status"]["message"]


def test_a_hostile_object_is_bounded_and_refused(client: KarmadaClient) -> None:
    # 10,000 worker groups: beyond the expression engine's 1,000 results, refused at once.
    out = client.call("InterpretComponent", widget([(f"g{i}", 1) for i in range(10_000)]))
    assert not out.successful and "exceed the allowed number 1000" in out.response["status"]["message"]
    assert out.response["status"]["code"] == 422


def test_a_hostile_definition_is_stopped_by_the_cost_budget(client: KarmadaClient) -> None:
    gadget = {
        "apiVersion": "example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": "g", "namespace": "d"},
        "spec": {"template": {"spec": {"containers": [{"name": "main", "image": "x"}]}}},
    }
    # every operation resolves the object, status rules included; AggregateStatus stops at the
    # first member rather than spending one deadline per member
    for operation in ("InterpretHealth", "AggregateStatus", "InterpretReplica"):
        out = client.call(operation, gadget, aggregated_status=[{"clusterName": "m", "status": {"x": 1}}])
        assert not out.successful and out.response["status"]["code"] == 422
        # the step budget, or on a loaded machine the evaluation's deadline, whichever comes first
        message = out.response["status"]["message"]
        assert "cost budget" in message or "exceeded its time limit" in message, message
        assert "statusMappings.running[0].byExpression.expression" in message
    # and the server serves the next request
    assert client.call("InterpretHealth", widget([("a", 1)])).successful


def test_a_client_that_never_sends_its_body_delays_no_one(client: KarmadaClient) -> None:
    host, port = client.url.split("//")[1].split("/")[0].split(":")
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    stalled = context.wrap_socket(socket.create_connection((host, int(port))), server_hostname=host)
    try:
        stalled.sendall(b"POST /interpret-karmada HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
        out = client.call("InterpretHealth", widget([("a", 1)]))
        assert out.successful
    finally:
        stalled.close()
