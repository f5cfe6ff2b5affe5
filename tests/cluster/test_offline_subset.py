"""``-m "not cluster"`` means what it says (issue 24): a test not marked ``cluster`` that starts a
test API server fails instead (tests/support/cluster.py), and the test-data summary counts the
tests really skipped, not the ones ``-m`` deselected. Deliberately not marked ``cluster``: it must
run in the offline subset, and it starts no server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import cluster as test_cluster
from tests.support.cluster import TestCluster, UnmarkedClusterTestError

REPO = Path(__file__).resolve().parents[2]


def test_an_unmarked_test_cannot_start_a_cluster() -> None:
    running = test_cluster.RUNNING_TEST
    assert running is not None and running.nodeid.endswith("test_an_unmarked_test_cannot_start_a_cluster")
    assert not running.cluster_marked
    cluster = TestCluster()
    with pytest.raises(UnmarkedClusterTestError, match="is not marked `cluster`: mark it"):
        cluster.start()
    assert cluster.dir is None  # refused before anything was spawned or written


@pytest.mark.cluster
def test_a_marked_test_is_known_as_one() -> None:
    running = test_cluster.RUNNING_TEST
    assert running is not None and running.cluster_marked


def _pytest(*args: str, shared: Path) -> str:
    env = {**os.environ, "WMAP_SHARED_DIR": str(shared)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done.stdout


def test_the_skip_summary_counts_skipped_tests_not_deselected_ones(tmp_path: Path) -> None:
    corpus = "tests/catalog/test_recordings.py"  # every test there is marked corpus
    other = "tests/kai/test_native_parity.py"  # none there needs test data
    out = _pytest(corpus, other, shared=tmp_path)
    (line,) = [ln for ln in out.splitlines() if ln.startswith("test data: ")]
    assert " tests skipped because " in line and "deselected" not in line, out
    skipped = int(line.split()[2])
    total = int(out.rsplit(" skipped", 1)[0].rsplit(" ", 1)[1])
    assert 0 < skipped <= total  # (the others skipped for their own reasons: empty parameter sets)
    out = _pytest(corpus, other, "-m", "not corpus", shared=tmp_path)
    assert "test data:" not in out and "deselected" in out, out
