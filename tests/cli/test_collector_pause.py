"""One-shot commands read and print with the cyclic collector paused (cli/collector_pause.py,
issue 24), restore it afterwards (also on failure, and a caller that had it off keeps it off), and
a watch, which runs for long, keeps it. ``get`` on the REAL API server (tests/support)."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from tests.cli.helpers import RUNNING_JOBSET_STATUS, jobset, wmap
from tests.support.kube import KubeTestClient

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "jobset-leader-workers.yaml"


def _spy(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[bool]:
    """Whether the collector ran at each call of ``module.name``."""
    seen: list[bool] = []
    real = getattr(module, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return seen


def test_describe_pauses_the_cyclic_collector_and_restores_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The view is built with the cyclic collector paused (issue 24: its passes over describe's
    JSON values were about a fifth of the command's CPU); it runs again afterwards, also when the
    command fails."""
    import workload_map.views.model as views

    seen = _spy(monkeypatch, views, "build_describe")
    assert gc.isenabled()
    rc, out, err = wmap("describe", "-f", str(EXAMPLE))
    assert rc == 0, err
    assert seen == [False] and out.startswith("JobSet/")
    assert gc.isenabled()
    rc, _, err = wmap("describe", "-f", str(EXAMPLE.with_name("no-such-file.yaml")))
    assert rc != 0 and "no-such-file.yaml" in err
    assert gc.isenabled()
    gc.disable()  # a caller that had it off keeps it off
    try:
        assert wmap("describe", "-f", str(EXAMPLE))[0] == 0
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.cluster
def test_get_pauses_the_collector_but_a_watch_keeps_it(
    monkeypatch: pytest.MonkeyPatch, kube: KubeTestClient, namespace: str, kc: str
) -> None:
    import workload_map.cli.commands.get as get

    for name in ("a", "b"):
        kube.set_status(kube.create(jobset(name, namespace)), RUNNING_JOBSET_STATUS)
    seen = _spy(monkeypatch, get, "_row")
    rc, out, err = wmap("get", "jobsets", "-n", namespace, "--kubeconfig", kc)
    assert rc == 0, err
    assert seen == [False, False] and "Running" in out
    assert gc.isenabled()
    seen.clear()
    rc, out, err = wmap("get", "jobsets", "-n", namespace, "-w", "--watch-timeout", "1", "--kubeconfig", kc)
    assert seen == [True, True] and "Running" in out, (rc, err)
    assert gc.isenabled()
    rc, _, err = wmap("get", "jobsets", "-n", "no-such-ns-x", "--kubeconfig", "/no/such/kubeconfig")
    assert rc != 0 and "/no/such/kubeconfig" in err
    assert gc.isenabled()
