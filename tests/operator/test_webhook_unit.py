"""Admission decisions without an API server."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.operator.helpers import karta
from workload_map.operator import texts
from workload_map.operator.claims import Conflict
from workload_map.operator.handlers import merge_conditions
from workload_map.operator.webhooks import AdmissionHandler, join_messages, label_patch


class FakeClaims:
    def __init__(self, holder: str | None = None) -> None:
        self.holder = holder
        self.calls: list[tuple[Any, ...]] = []

    def claim(self, gvk: tuple[str, str, str], name: str, *, dry_run: bool = False) -> Conflict | None:
        self.calls.append((gvk, name, dry_run))
        return Conflict(self.holder) if self.holder and self.holder != name else None


def _review(
    handler: AdmissionHandler, op: str, obj: dict[str, Any], old: dict[str, Any] | None = None
) -> Any:
    req = {"uid": "u1", "operation": op, "object": obj, "oldObject": old}
    return handler.review("/validate-karta", {"request": req})["response"]


def test_valid_create_claims_and_is_allowed() -> None:
    claims = FakeClaims()
    resp = _review(AdmissionHandler(claims), "CREATE", karta("a", "", "v1", "Pod"))  # type: ignore[arg-type]
    assert resp == {"allowed": True, "uid": "u1"}
    assert claims.calls == [(("", "v1", "Pod"), "a", False)]


def test_duplicate_message() -> None:
    resp = _review(AdmissionHandler(FakeClaims("first")), "CREATE", karta("b", "g.io", "v1", "K"))  # type: ignore[arg-type]
    assert resp["allowed"] is False
    assert resp["status"]["message"] == (
        'a Karta for group "g.io" version "v1" kind "K" already exists ("first"); '
        "only one Karta per group/version/kind is allowed"
    )


def test_immutable_gvk_and_labels() -> None:
    old = karta("a", "g.io", "v1", "K")
    old["metadata"]["labels"] = texts.index_labels("g.io", "v1", "K")
    new = karta("a", "g.io", "v2", "K")
    new["metadata"]["labels"] = {}
    resp = _review(AdmissionHandler(None), "UPDATE", new, old)
    lines = resp["status"]["message"].split("\n")
    assert texts.GVK_IMMUTABLE in lines
    assert texts.managed_label("run.ai/karta-group", "g.io") in lines


def test_metadata_only_update_of_invalid_karta_is_allowed() -> None:
    bad = karta("a", "g.io", "v1", "K")
    bad["spec"]["structureDefinition"]["rootComponent"].pop("statusDefinition")
    new = json.loads(json.dumps(bad))
    new["metadata"]["labels"] = texts.index_labels("g.io", "v1", "K")
    assert _review(AdmissionHandler(None), "UPDATE", new, bad)["allowed"] is True
    assert _review(AdmissionHandler(None), "CREATE", bad)["allowed"] is False


def test_mutation_patch_core_group() -> None:
    handler = AdmissionHandler(None)
    req = {"uid": "u", "operation": "CREATE", "object": karta("p", "", "v1", "Pod")}
    resp = handler.review("/mutate-karta", {"request": req})["response"]
    ops = json.loads(base64.b64decode(resp["patch"]))
    assert ops == [{"op": "add", "path": "/metadata/labels", "value": texts.index_labels("", "v1", "Pod")}]
    obj = karta("p", "g.io", "v1", "K")
    obj["metadata"]["labels"] = {"team": "x"}
    ops2, _ = label_patch(obj)
    assert {o["path"] for o in ops2} == {
        "/metadata/labels/run.ai~1karta-group",
        "/metadata/labels/run.ai~1karta-version",
        "/metadata/labels/run.ai~1karta-kind",
    }


def test_messages_are_bounded() -> None:
    text = join_messages(["x" * 5000] * 50)
    assert len(text) < 9000 and text.endswith("more")


def test_last_transition_time_kept_unless_status_changes() -> None:
    cur = [
        {"type": "Ready", "status": "False", "reason": "NotReady", "message": "m", "lastTransitionTime": "T0"}
    ]
    same = merge_conditions(
        cur, [{"type": "Ready", "status": "False", "reason": "NotReady", "message": "m2"}], "T1"
    )
    flipped = merge_conditions(
        cur, [{"type": "Ready", "status": "True", "reason": "Ready", "message": "m"}], "T1"
    )
    assert same[0]["lastTransitionTime"] == "T0" and flipped[0]["lastTransitionTime"] == "T1"


def _post(port: int, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest("POST", "/validate-karta")
        for k, v in headers.items():
            conn.putheader(k, v)
        conn.endheaders()
        if body:
            conn.send(body)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("body", "headers", "status", "fragment"),
    [
        (b"[]", None, 200, "not an AdmissionReview"),
        (b"null", None, 200, "not an AdmissionReview"),
        (b'{"request":"x"}', None, 200, "not an AdmissionReview"),
        (b'{"request":{"uid":5}}', None, 200, "request.uid is not a string"),
        (b"{not json", None, 400, "not JSON"),
        (b"{}", {"Content-Length": "abc"}, 400, "no valid Content-Length"),
        (b"", {"Content-Length": "999999999"}, 413, "body larger than"),
    ],
    ids=["list", "null", "string-request", "bad-uid", "not-json", "bad-length", "too-large"],
)
def test_malformed_reviews_get_an_answer(
    body: bytes, headers: dict[str, str] | None, status: int, fragment: str
) -> None:
    from workload_map.operator.webhooks import HTTPServerThread

    handler = AdmissionHandler(FakeClaims())  # type: ignore[arg-type]
    server = HTTPServerThread("127.0.0.1:0", admission=handler).start()
    try:
        got, answer = _post(server.port, body, headers or {"Content-Length": str(len(body))})
    finally:
        server.stop()
    assert got == status
    assert answer["kind"] == "AdmissionReview"
    assert answer["response"]["allowed"] is False
    assert fragment in answer["response"]["status"]["message"]


def test_many_indistinguishable_children_give_linear_findings() -> None:
    # 6,000 components with one selector: one finding per extra component, not per pair.
    from workload_map.model.loader import load_definitions_text
    from workload_map.model.validator import validate_definition

    selector = {"componentTypeSelector": {"keyPath": ".metadata.labels.role", "value": "x"}}
    children = [
        {
            "name": f"c{i}",
            "ownerRef": "root",
            "specDefinition": {"podTemplateSpecPath": f".spec.c{i}"},
            "podSelector": selector,
        }
        for i in range(6000)
    ]
    doc = karta("many", "example.com", "v1", "Many")
    doc["spec"]["structureDefinition"]["childComponents"] = children
    [definition] = load_definitions_text(json.dumps(doc), name="many.json").definitions
    findings = validate_definition(definition.karta)
    codes = [f.code for f in findings]
    # 5,999 findings, the first 200 listed and the rest counted (issue 23's findings cap).
    assert codes.count("KARTA216") == 200
    [more] = [f for f in findings if f.code == "KARTA302"]
    assert more.message == "5,799 more finding(s) not shown (the first 200 are)"
