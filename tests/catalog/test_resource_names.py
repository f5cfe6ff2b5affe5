"""``catalog/resource-names.yaml`` (the REST names type words use without a cluster) against the
outside world: the frameworks' real CRDs and the real API server's discovery for built-ins."""

from __future__ import annotations

import pytest

from tests.support import crds
from tests.support.kube import KubeTestClient
from workload_map.catalog import list_definitions
from workload_map.type_words import catalog_names


def test_every_catalog_root_kind_has_its_names() -> None:
    roots = {(k.root_gvk.group, k.root_gvk.kind) for k in list_definitions() if k.root_gvk is not None}
    assert roots <= set(catalog_names()), sorted(roots - set(catalog_names()))


@pytest.mark.corpus
def test_custom_resource_names_equal_the_real_crds() -> None:
    real = {}
    for _, doc in crds.corpus_crds():
        n = doc["spec"]["names"]
        real[(doc["spec"]["group"], n["kind"])] = (
            n["plural"],
            n.get("singular") or n["kind"].lower(),
            tuple(n.get("shortNames") or ()),
        )
    checked = 0
    for (group, kind), names in catalog_names().items():
        if names.builtin:
            continue
        assert (group, kind) in real, f"{group}/{kind}: no CRD in the corpus"
        assert (names.plural, names.singular, names.short_names) == real[(group, kind)], (group, kind)
        checked += 1
    assert checked >= 20


@pytest.mark.cluster
def test_builtin_names_equal_the_api_server(kube: KubeTestClient) -> None:
    for (group, kind), names in catalog_names().items():
        if not names.builtin:
            continue
        api = (
            "v1"
            if not group
            else {"apps": "apps/v1", "batch": "batch/v1beta1" if kind == "CronJob" else "batch/v1"}[group]
        )
        listing = kube.request("GET", f"/api/{api}" if "/" not in api else f"/apis/{api}")
        found = [r for r in listing["resources"] if r["kind"] == kind and "/" not in r["name"]]
        assert found, (group, kind)
        res = found[0]
        # kube-apiserver v1.20 leaves singularName empty for built-ins; kubectl lowercases the kind.
        assert res["name"] == names.plural and (res.get("singularName") or kind.lower()) == names.singular
        assert tuple(res.get("shortNames") or ()) == names.short_names, (group, kind)
