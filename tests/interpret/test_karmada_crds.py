"""The objects we hand Karmada are accepted by Karmada's real CRDs (``$WMAP_SHARED_DIR/crds/karmada``,
v1.18.2) on the test API server, unchanged (nothing pruned as unknown), and pass the checks of
Karmada's validating webhook for them (``pkg/webhook/configuration/validating.go`` and
``helper.go``, restated here as facts: a fully qualified webhook name, exactly one of url and
service, an https URL, a timeout of 1-30 s, known operations, non-empty groups/versions/kinds,
``v1alpha1`` among the context versions)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.kube import KubeTestClient
from workload_map.definitions_source import load_definition_set
from workload_map.interpret import OPERATIONS, DefinitionIndex, select, webhook_configuration

CA = b"-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"
_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
SUPPORTED = {"*", *OPERATIONS}


def karmada_webhook_problems(config: dict[str, Any]) -> list[str]:
    """What Karmada's validating webhook would reject in a ResourceInterpreterWebhookConfiguration."""
    out: list[str] = []
    names: set[str] = set()
    for i, hook in enumerate(config.get("webhooks") or []):
        name = hook.get("name", "")
        if name in names:
            out.append(f"webhooks[{i}].name duplicate")
        names.add(name)
        if name.count(".") < 1 or not _DNS1123.match(name) or len(name) > 253:
            out.append(f"webhooks[{i}].name {name!r} is not a fully qualified domain name")
        timeout = hook.get("timeoutSeconds")
        if timeout is not None and not 1 <= timeout <= 30:
            out.append(f"webhooks[{i}].timeoutSeconds {timeout}")
        cc = hook.get("clientConfig") or {}
        if ("url" in cc) == ("service" in cc):
            out.append(f"webhooks[{i}].clientConfig: exactly one of url or service is required")
        if "url" in cc and not str(cc["url"]).startswith("https://"):
            out.append(f"webhooks[{i}].clientConfig.url must be https")
        if "service" in cc and not (cc["service"].get("name") and cc["service"].get("namespace")):
            out.append(f"webhooks[{i}].clientConfig.service needs name and namespace")
        versions = hook.get("interpreterContextVersions") or []
        if "v1alpha1" not in versions or len(set(versions)) != len(versions):
            out.append(f"webhooks[{i}].interpreterContextVersions {versions}")
        for j, rule in enumerate(hook.get("rules") or []):
            ops = rule.get("operations") or []
            if not ops or ("*" in ops and len(ops) > 1) or set(ops) - SUPPORTED:
                out.append(f"webhooks[{i}].rules[{j}].operations {ops}")
            for key in ("apiGroups", "apiVersions", "kinds"):
                values = rule.get(key) or []
                if not values or ("*" in values and len(values) > 1):
                    out.append(f"webhooks[{i}].rules[{j}].{key} {values}")
                if key != "apiGroups" and "" in values:
                    out.append(f"webhooks[{i}].rules[{j}].{key} has an empty entry")
    return out


def _configuration(*, include_native: bool = True, **kw: Any) -> dict[str, Any]:
    index = DefinitionIndex(load_definition_set())
    return webhook_configuration(select(index.covered(), include_native=include_native), ca_pem=CA, **kw)


@pytest.mark.parametrize(
    "client_config",
    [{"url": "https://wmap.example.com:8443"}, {"service": ("wmap-system", "wmap-operator", 443)}],
    ids=["url", "service"],
)
def test_the_webhook_configuration_passes_karmadas_checks(client_config: dict[str, Any]) -> None:
    config = _configuration(**client_config)
    assert karmada_webhook_problems(config) == []
    assert len(config["webhooks"][0]["rules"]) >= 25


def test_the_checks_catch_what_karmada_rejects() -> None:
    bad = _configuration(url="https://x:1")
    hook = bad["webhooks"][0]
    hook["name"] = "interpreter"
    hook["timeoutSeconds"] = 60
    hook["clientConfig"]["service"] = {"name": "s", "namespace": "n"}
    hook["rules"][0]["operations"] = ["*", "Prune2"]
    hook["rules"][1]["kinds"] = [""]
    assert len(karmada_webhook_problems(bad)) == 5


def test_the_webhook_configuration_is_accepted_by_karmadas_crd(kube: KubeTestClient) -> None:
    # The default selection (no natively interpreted kinds, so no core group): the test API server,
    # kube-apiserver v1.20, reports the empty string of apiGroups [""] (the CRD's own advice for the
    # core group) as "null" and rejects it.
    config = _configuration(
        include_native=False, service=("wmap-system", "wmap-operator", 443), name="wmap-interpreter-t"
    )
    created = kube.create(config)
    try:
        got = kube.get_obj(config)
        assert got["webhooks"] == config["webhooks"], "the API server pruned or changed fields"
        assert created["kind"] == "ResourceInterpreterWebhookConfiguration"
    finally:
        kube.delete_obj(config)


@pytest.mark.parametrize("kind", ["RayCluster", "JobSet", "Milvus"])
def test_exported_customizations_are_accepted_by_karmadas_crd(kube: KubeTestClient, kind: str) -> None:
    # Milvus has the most components of the catalog: its customization is the largest object.
    from workload_map.catalog import list_definitions
    from workload_map.interpret.export import export_customization
    from workload_map.resolve import compile_definition

    karta = next(d for d in list_definitions() if d.root_gvk is not None and d.root_gvk.kind == kind)
    export = export_customization(compile_definition(karta), name=f"wmap-t-{kind.lower()}")
    assert export.complete
    body = export.customization
    assert len(body["spec"]["customizations"]) == 8
    kube.create(body)
    try:
        got = kube.get_obj(body)
        assert got["spec"] == body["spec"], "the API server pruned or changed fields"
    finally:
        kube.delete_obj(body)
