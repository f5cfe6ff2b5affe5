"""Shared pytest setup. Cluster fixtures (`cluster`, `kube`, `namespace`, `extra_crd_docs`,
`karta_crd`, `no_karta_crd`) live in tests/support/fixtures.py; the separate Karta cluster of the
operator, CRD and deploy tests (`kcluster`, `kkube`) in tests/operator/karta_cluster.py.

Test data (README "Test data"): the framework CRD corpus and upstream's recordings live in
``$WMAP_SHARED_DIR`` (default ``../shared``). When they are missing, every test that needs them
(the ``cluster`` fixture's cluster is built from the corpus; ``corpus``-marked tests read it) is
skipped, and one summary line says what is missing and the command that fetches it.
"""

from __future__ import annotations

import pytest

from tests.support.apiserver_binary import shared_dir

pytest_plugins = ("tests.support.fixtures", "tests.operator.karta_cluster")

FETCH = "scripts/fetch-test-data"
_skipped: list[str] = []


def _missing() -> list[str]:
    base = shared_dir()
    return [str(base / part) for part in ("crds", "upstream-recordings") if not (base / part).is_dir()]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = _missing()
    if not missing:
        return
    skip = pytest.mark.skip(reason=f"test data missing ({', '.join(missing)}): run {FETCH}")
    for item in items:
        if "cluster" in getattr(item, "fixturenames", ()) or item.get_closest_marker("corpus"):
            item.add_marker(skip)
            _skipped.append(item.nodeid)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _skipped:
        terminalreporter.write_line(
            f"test data: {len(_skipped)} tests skipped: {', '.join(_missing())} not found "
            f"(set WMAP_SHARED_DIR, or fetch it with: {FETCH})"
        )
