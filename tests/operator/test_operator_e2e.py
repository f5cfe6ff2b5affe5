"""The operator as a separate process on a real kube-apiserver, admission end to end.

The webhook configurations point at ``https://127.0.0.1:<port>`` (clientConfig.url) with a CA the
operator generates. All tests in this module share one operator namespace; each uses its own GVKs.
"""

from __future__ import annotations

import contextlib
import secrets
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.operator.helpers import KARTAS, OperatorProcess, conditions, karta, wait_for, widget_crd
from tests.support import crds
from tests.support.cluster import TestCluster
from tests.support.kube import KubeApiError, KubeTestClient
from workload_map.operator import texts
from workload_map.operator.certs import MUTATING_NAME, VALIDATING_NAME

pytestmark = [pytest.mark.slow, pytest.mark.cluster]  # every test runs on the Karta test cluster


def _uniq(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(3)}"


@pytest.fixture(scope="module")
def opns(kkube: KubeTestClient) -> str:
    return kkube.create_namespace("wmap-op")


@pytest.fixture(scope="module")
def operator(
    kcluster: TestCluster, kkube: KubeTestClient, opns: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OperatorProcess]:
    work = tmp_path_factory.mktemp("operator")
    proc = OperatorProcess(kcluster, work, opns, identity="op-a")
    try:
        proc.ready()
        wait_for(lambda: _webhooks_registered(kkube), what="webhook configurations")
        yield proc
    finally:
        proc.stop()
        _unregister(kkube)


def _webhooks_registered(kube: KubeTestClient) -> bool:
    kube.request(
        "GET", f"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{VALIDATING_NAME}"
    )
    kube.request(
        "GET", f"/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/{MUTATING_NAME}"
    )
    return True


def _unregister(kube: KubeTestClient) -> None:
    for plural, name in (
        ("validatingwebhookconfigurations", VALIDATING_NAME),
        ("mutatingwebhookconfigurations", MUTATING_NAME),
    ):
        with contextlib.suppress(KubeApiError):
            kube.request("DELETE", f"/apis/admissionregistration.k8s.io/v1/{plural}/{name}")


def _create(kube: KubeTestClient, body: dict[str, Any]) -> dict[str, Any]:
    return kube.request("POST", KARTAS, body)


def _ready_true(kube: KubeTestClient, name: str) -> dict[str, dict[str, Any]] | None:
    conds = conditions(kube, name)
    return conds if conds.get("Ready", {}).get("status") == "True" else None


def test_valid_karta_is_labelled_and_ready(operator: OperatorProcess, kkube: KubeTestClient) -> None:
    name = _uniq("pods")
    created = _create(kkube, karta(name, "", "v1", "Pod"))
    # Stamped by the mutating webhook on create; the core group is the empty label value.
    assert created["metadata"]["labels"] == {
        "run.ai/karta-group": "",
        "run.ai/karta-version": "v1",
        "run.ai/karta-kind": "Pod",
    }
    conds = wait_for(lambda: _ready_true(kkube, name), what="Ready")
    assert conds["Validated"]["reason"] == "ValidationSucceeded"
    assert conds["CRDExists"]["reason"] == "CRDFound"
    assert conds["Ready"]["reason"] == "Ready"
    obj = kkube.request("GET", f"{KARTAS}/{name}")
    assert obj["status"]["observedGeneration"] == obj["metadata"]["generation"]
    # KAI's lookup: exactly this label selector.
    found = kkube.request(
        "GET",
        KARTAS,
        params={"labelSelector": "run.ai/karta-group=,run.ai/karta-version=v1,run.ai/karta-kind=Pod"},
    )
    assert [i["metadata"]["name"] for i in found["items"]] == [name]
    # lastTransitionTime is stable across reconciliations that change nothing.
    before = {t: c["lastTransitionTime"] for t, c in conds.items()}
    kkube.request(
        "PATCH",
        f"{KARTAS}/{name}",
        {"metadata": {"annotations": {"x": "y"}}},
        content_type="application/merge-patch+json",
    )
    time.sleep(1.5)
    assert {t: c["lastTransitionTime"] for t, c in conditions(kkube, name).items()} == before
    kkube.request("DELETE", f"{KARTAS}/{name}")


def test_invalid_karta_is_rejected_with_validator_message(
    operator: OperatorProcess, kkube: KubeTestClient
) -> None:
    body = karta(_uniq("bad"), "example.com", "v1", "Bad")
    body["spec"]["structureDefinition"]["rootComponent"].pop("statusDefinition")
    body["spec"]["structureDefinition"]["childComponents"] = [{"name": "c"}]
    with pytest.raises(KubeApiError) as info:
        _create(kkube, body)
    text = str(info.value)
    assert "root component must have status definition" in text
    assert "child component 'c' has no owner ref" in text
    # The jq rules too.
    body = karta(_uniq("badjq"), "example.com", "v1", "Bad2")
    body["spec"]["structureDefinition"]["rootComponent"]["scaleDefinition"] = {"replicasPath": "[range(10)]"}
    with pytest.raises(KubeApiError) as info:
        _create(kkube, body)
    assert "function 'range' may produce excessive output and is not allowed" in str(info.value)


def test_duplicate_gvk_is_rejected(operator: OperatorProcess, kkube: KubeTestClient) -> None:
    first = _uniq("dup-a")
    _create(kkube, karta(first, "dup.example.com", "v1", "Thing"))
    with pytest.raises(KubeApiError) as info:
        _create(kkube, karta(_uniq("dup-b"), "dup.example.com", "v1", "Thing"))
    assert texts.duplicate_gvk("dup.example.com", "v1", "Thing", first) in str(info.value)
    # Another version of the same kind is another GVK.
    _create(kkube, karta(_uniq("dup-c"), "dup.example.com", "v2", "Thing"))


def test_concurrent_creates_admit_exactly_one(operator: OperatorProcess, kkube: KubeTestClient) -> None:
    group = f"race{secrets.token_hex(2)}.example.com"
    results: list[tuple[str, int, str]] = []
    barrier = threading.Barrier(12)

    def create(i: int) -> None:
        name = f"race-{i}-{secrets.token_hex(2)}"
        client = kkube.as_user(kkube.token or "")
        try:
            barrier.wait()
            response = client.raw("POST", KARTAS, karta(name, group, "v1", "Racer"))
            results.append((name, response.status_code, response.text))
        finally:
            client.close()

    threads = [threading.Thread(target=create, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    admitted = [r for r in results if r[1] == 201]
    assert len(results) == 12
    assert len(admitted) == 1, results
    winner = admitted[0][0]
    for _name, code, text in results:
        if code != 201:
            assert code == 403 and f'already exists (\\"{winner}\\")' in text, text
    items = kkube.request("GET", KARTAS, params={"labelSelector": "run.ai/karta-kind=Racer"})["items"]
    assert [i["metadata"]["name"] for i in items] == [winner]


def test_root_gvk_immutable_and_labels_protected(operator: OperatorProcess, kkube: KubeTestClient) -> None:
    name = _uniq("immut")
    _create(kkube, karta(name, "immut.example.com", "v1", "Thing"))
    path = f"{KARTAS}/{name}"
    merge = "application/merge-patch+json"
    patch = {"spec": {"structureDefinition": {"rootComponent": {"kind": {"kind": "Other"}}}}}
    with pytest.raises(KubeApiError) as info:
        kkube.request("PATCH", path, patch, content_type=merge)
    assert texts.GVK_IMMUTABLE in str(info.value)
    with pytest.raises(KubeApiError) as info:
        kkube.request(
            "PATCH", path, {"metadata": {"labels": {"run.ai/karta-kind": "Nope"}}}, content_type=merge
        )
    assert texts.managed_label("run.ai/karta-kind", "Thing") in str(info.value)
    with pytest.raises(KubeApiError) as info:
        kkube.request(
            "PATCH", path, {"metadata": {"labels": {"run.ai/karta-group": None}}}, content_type=merge
        )
    assert "cannot be edited or removed" in str(info.value)
    # Other labels are fine.
    kkube.request("PATCH", path, {"metadata": {"labels": {"team": "a"}}}, content_type=merge)


def test_crd_appearing_later_flips_crd_exists(operator: OperatorProcess, kkube: KubeTestClient) -> None:
    group = f"late{secrets.token_hex(2)}.example.com"
    name = _uniq("late")
    _create(kkube, karta(name, group, "v1", "Widget"))
    conds = wait_for(
        lambda: (c := conditions(kkube, name)).get("CRDExists", {}).get("reason") == "CRDNotFound" and c,
        what="CRDNotFound",
    )
    assert conds["CRDExists"]["message"] == f"CRD for {group}/Widget not found or does not serve version v1"
    assert conds["Ready"] == {**conds["Ready"], "status": "False", "reason": "NotReady"}
    assert conds["Ready"]["message"] == "Validated and CRDExists must both be True"
    events = kkube.request("GET", "/api/v1/namespaces/default/events")["items"]
    assert any(e["involvedObject"]["name"] == name and e["reason"] == "CRDNotFound" for e in events)
    crds.install_crds(kkube, [widget_crd(group)], downlevel=False)
    wait_for(lambda: _ready_true(kkube, name), what="Ready after CRD install")
    kkube.request("DELETE", f"{crds.CRD_PATH}/widgets.{group}")
    wait_for(
        lambda: conditions(kkube, name)["CRDExists"]["status"] == "False", what="CRDExists False after delete"
    )


def test_hostile_definition_does_not_block_others(operator: OperatorProcess, kkube: KubeTestClient) -> None:
    # Created while admission is bypassed (as if before the webhooks existed): a huge, deeply
    # nested expression that the validator must reject without stalling the other Kartas.
    hostile = _uniq("hostile")
    body = karta(hostile, "hostile.example.com", "v1", "Thing")
    body["spec"]["structureDefinition"]["rootComponent"]["scaleDefinition"] = {
        "replicasPath": "(" * 3000 + ".a" + ")" * 3000,
        "minReplicasPath": " | ".join([".a // .b"] * 20000),
    }
    _unregister(kkube)
    _create(kkube, body)
    names = [_uniq("calm") for _ in range(3)]
    for n in names:
        _create(kkube, karta(n, f"{n}.example.com", "v1", "Calm"))
    for n in names:
        wait_for(
            lambda n=n: conditions(kkube, n).get("Validated", {}).get("status") == "True",
            what=f"{n} validated",
        )
    conds = wait_for(
        lambda: conditions(kkube, hostile).get("Validated"), timeout=40, what="hostile evaluated"
    )
    assert conds["status"] == "False" and conds["reason"] == "ValidationFailed"


# (before the failover test, which stops the module's operator)
def test_a_definition_exceeding_the_limits_on_live_workloads_is_reported(
    operator: OperatorProcess, kkube: KubeTestClient, opns: str
) -> None:
    """WithinLimits: a valid Karta is resolved on live objects of its kind; one that explodes on them
    gets WithinLimits=False (ExceedsLimits, then Quarantined) and Ready=False, with an event."""
    from tests.support.hostile import EXPLOSION

    group = f"cost{secrets.token_hex(2)}.example.com"
    crds.install_crds(kkube, [widget_crd(group), widget_crd(group, kind="Gadget")], downlevel=False)
    for plural in ("widgets", "gadgets"):
        for i in range(3):
            kkube.request(
                "POST",
                f"/apis/{group}/v1/namespaces/{opns}/{plural}",
                {"apiVersion": f"{group}/v1", "kind": plural[:-1].title(), "metadata": {"name": f"w{i}"}},
            )
    hostile, calm = _uniq("costly"), _uniq("cheap")
    _create(kkube, karta(hostile, group, "v1", "Widget", scaleDefinition={"replicasPath": f"({EXPLOSION})"}))
    _create(
        kkube, karta(calm, group, "v1", "Gadget", scaleDefinition={"replicasPath": ".spec.replicas // 1"})
    )
    bad = wait_for(
        lambda: (c := conditions(kkube, hostile)).get("WithinLimits", {}).get("status") == "False" and c,
        timeout=60,
        what="WithinLimits False",
    )
    assert bad["Validated"]["status"] == "True" and bad["CRDExists"]["status"] == "True"
    assert bad["WithinLimits"]["reason"] in ("ExceedsLimits", "Quarantined")
    # Whichever guard stops it first: the cost budget, or the deadline on a loaded machine.
    message = bad["WithinLimits"]["message"]
    assert "cost budget" in message or "time limit" in message
    assert bad["Ready"]["status"] == "False" and bad["Ready"]["message"] == texts.MESSAGE_LIMITS_NOT_READY
    events = kkube.request("GET", "/api/v1/namespaces/default/events")["items"]
    assert any(e["involvedObject"]["name"] == hostile and e["reason"] == "ExceedsLimits" for e in events)
    good = wait_for(lambda: _ready_true(kkube, calm), timeout=60, what="calm Ready")
    assert good["WithinLimits"]["status"] == "True"
    assert good["WithinLimits"]["message"] == "3 live Gadget object(s) resolved within the expression limits"


def test_survives_apiserver_restart_and_cut_watch(
    operator: OperatorProcess, kcluster: TestCluster, kkube: KubeTestClient
) -> None:
    kcluster.restart_apiserver()
    name = _uniq("after-restart")
    wait_for(
        lambda: _create(kkube, karta(name, "restart.example.com", "v1", "Thing")), what="create after restart"
    )
    wait_for(
        lambda: conditions(kkube, name).get("Validated", {}).get("status") == "True",
        timeout=60,
        what="reconciled",
    )
    assert operator.proc.poll() is None
    # A second restart right away: the watch is cut mid-stream again.
    kcluster.restart_apiserver()
    name2 = _uniq("after-cut")
    wait_for(
        lambda: _create(kkube, karta(name2, "restart2.example.com", "v1", "Thing")), what="create after cut"
    )
    wait_for(
        lambda: conditions(kkube, name2).get("Validated", {}).get("status") == "True",
        timeout=60,
        what="reconciled",
    )


def test_two_replicas_one_leader_and_failover(
    operator: OperatorProcess,
    kcluster: TestCluster,
    kkube: KubeTestClient,
    opns: str,
    tmp_path: Path,
) -> None:
    lease_path = f"/apis/coordination.k8s.io/v1/namespaces/{opns}/leases/wmap-operator-leader"
    wait_for(lambda: kkube.request("GET", lease_path)["spec"]["holderIdentity"] == "op-a", what="op-a leads")
    second = OperatorProcess(kcluster, tmp_path, opns, identity="op-b", register=False)
    try:
        second.ready()
        time.sleep(3)
        assert kkube.request("GET", lease_path)["spec"]["holderIdentity"] == "op-a"
        # Kill the leader without a release: op-b takes over once the lease expires.
        operator.stop(signal.SIGKILL)
        wait_for(
            lambda: kkube.request("GET", lease_path)["spec"]["holderIdentity"] == "op-b",
            timeout=30,
            what="failover",
        )
        # op-b reconciles (op-a's webhook is gone: bypass admission for this create).
        _unregister(kkube)
        name = _uniq("failover")
        _create(kkube, karta(name, "failover.example.com", "v1", "Thing"))
        wait_for(
            lambda: conditions(kkube, name).get("Validated", {}).get("status") == "True",
            what="op-b reconciles",
        )
        wait_for(  # stamped by op-b's reconcile (no mutating webhook here)
            lambda: (
                kkube.request("GET", f"{KARTAS}/{name}")["metadata"]["labels"]["run.ai/karta-kind"] == "Thing"
            ),
            what="labels stamped by op-b",
        )
        # Graceful stop releases the lease.
        second.stop()
        assert kkube.request("GET", lease_path)["spec"]["holderIdentity"] == ""
    finally:
        second.stop()
