"""The DRA claim cache of ``wmap serve`` and the exporter (issue 24): discovery is asked until it
answers and then never again; a kind ``resource.k8s.io`` does not serve gets no informer, no
client and no request, and reading it is "not served" in the CLI's words."""

from __future__ import annotations

from typing import Any

import pytest

from workload_map.cluster.claims import ClaimNotServedError, ClaimReader
from workload_map.errors import ConnectionFailedError
from workload_map.resolve.dra import claim_essentials
from workload_map.runtime.claims import ClaimCache


class _Discovery:
    def __init__(self, served: dict[str, list[str]], fail: int = 0) -> None:
        self.served, self.fail, self.calls = served, fail, 0

    def served_versions(self, group: str, kind: str) -> list[str]:
        self.calls += 1
        if self.fail:
            self.fail -= 1
            raise ConnectionFailedError("the API server is restarting")
        assert group == "resource.k8s.io"
        return self.served.get(kind, [])

    def preferred_version(self, group: str) -> str | None:
        return "v1"


def _no_client() -> Any:
    raise AssertionError("no client may be made for a kind the cluster does not serve")


def test_an_unserved_group_gets_no_informer_and_is_asked_once() -> None:
    discovery = _Discovery({})
    cache = ClaimCache(_no_client, discovery, claim_essentials)  # type: ignore[arg-type]
    assert cache.start() == [] and cache.start() == []
    assert discovery.calls == 2  # one question per kind, at the first start only
    assert cache.get("ResourceClaimTemplate", "ml", "t") is None and cache.wait_for_sync(0)
    with pytest.raises(ClaimNotServedError):
        cache.read("ResourceClaim", "ml", "c")
    reader = ClaimReader.over(cache.read)
    assert reader("ResourceClaimTemplate", "ml", "t") is None
    assert reader.warnings() == [
        "the cluster does not serve resourceclaimtemplates.resource.k8s.io: devices requested through DRA "
        "claims are not counted"
    ]


def test_a_failing_discovery_is_asked_again() -> None:
    discovery = _Discovery({}, fail=1)
    cache = ClaimCache(_no_client, discovery, claim_essentials)  # type: ignore[arg-type]
    assert cache.start() == []
    assert cache.start() == [] and discovery.calls == 3  # the failed question, then both kinds
    cache.start()
    assert discovery.calls == 3
