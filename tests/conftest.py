"""Shared pytest setup. Cluster fixtures (`cluster`, `kube`, `namespace`, `extra_crd_docs`,
`karta_crd`, `no_karta_crd`) live in tests/support/fixtures.py; the separate Karta cluster of the
operator, CRD and deploy tests (`kcluster`, `kkube`) in tests/operator/karta_cluster.py.

Test data (README "Test data"): the framework CRD corpus and upstream's recordings live in
``$WMAP_SHARED_DIR`` (default ``../shared``). When they are missing, every test that needs them
(the ``cluster`` fixture's cluster is built from the corpus; ``corpus``-marked tests read it) is
skipped, and one summary line says how many were skipped for that, what is missing and the
command that fetches it; tests left out by ``-m``/``-k`` are counted as deselected, not skipped.

A test API server starts only for a test marked ``cluster`` (tests/support/cluster.py refuses
otherwise), so ``-m "not cluster"`` never starts one.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support import cluster as test_cluster
from tests.support.apiserver_binary import shared_dir

pytest_plugins = ("tests.support.fixtures", "tests.operator.karta_cluster")

FETCH = "scripts/fetch-test-data"
SKIP_REASON = "test data missing"
_skipped: set[str] = set()
_deselected: list[int] = [0]


def _missing() -> list[str]:
    base = shared_dir()
    return [str(base / part) for part in ("crds", "upstream-recordings") if not (base / part).is_dir()]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = _missing()
    if not missing:
        return
    skip = pytest.mark.skip(reason=f"{SKIP_REASON} ({', '.join(missing)}): run {FETCH}")
    for item in items:
        if "cluster" in getattr(item, "fixturenames", ()) or item.get_closest_marker("corpus"):
            item.add_marker(skip)


def pytest_deselected(items: list[pytest.Item]) -> None:
    _deselected[0] += len(items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Tell tests/support/cluster.py which test runs, so a test not marked ``cluster`` that
    starts a test API server (through any fixture) fails instead."""
    test_cluster.RUNNING_TEST = test_cluster.RunningTest(
        item.nodeid, item.get_closest_marker("cluster") is not None
    )
    try:
        return (yield)
    finally:
        test_cluster.RUNNING_TEST = None


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and isinstance(report.longrepr, tuple) and SKIP_REASON in str(report.longrepr[2]):
        _skipped.add(report.nodeid)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _skipped:
        deselected = f"; {_deselected[0]} more deselected by -m/-k, not counted" if _deselected[0] else ""
        terminalreporter.write_line(
            f"test data: {len(_skipped)} tests skipped because {', '.join(_missing())} "
            f"{'is' if len(_missing()) == 1 else 'are'} not found{deselected} "
            f"(set WMAP_SHARED_DIR, or fetch it with: {FETCH})"
        )


@pytest.fixture
def no_wall_deadline() -> Iterator[None]:
    """Expressions keep their cost budget but get an hour of wall clock: for tests of count
    bounds, whose large (legal) inputs can run past the 0.25 s deadline on a loaded machine."""
    from workload_map.expr.runtime import Limits, set_limits

    before = Limits.deadline
    set_limits(deadline=3600.0)
    try:
        yield
    finally:
        set_limits(deadline=before)
