"""Running ``wmap operator`` as a separate process against the Karta test cluster."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from tests.support.cluster import TestCluster, free_port
from tests.support.crds import schemaless_crd
from tests.support.kube import KubeApiError, KubeTestClient

T = TypeVar("T")
KARTAS = "/apis/run.ai/v1alpha1/kartas"


class OperatorProcess:
    def __init__(
        self,
        cluster: TestCluster,
        workdir: Path,
        namespace: str,
        *,
        identity: str,
        register: bool = True,
        extra: tuple[str, ...] = (),
    ) -> None:
        self.port = free_port()
        self.health_port = free_port()
        self.identity = identity
        kubeconfig = cluster.write_kubeconfig(workdir / f"kubeconfig-{identity}")
        self.log_path = workdir / f"operator-{identity}.log"
        args = [
            sys.executable, "-m", "workload_map.cli.main", "operator",
            "--kubeconfig", str(kubeconfig), "-n", namespace,
            "--identity", identity,
            "--webhook-listen", f"127.0.0.1:{self.port}",
            "--health-listen", f"127.0.0.1:{self.health_port}",
            "--cert-dir", str(workdir / "certs"),
            "--cert-host", "127.0.0.1",
            "--lease-duration", "4", "--renew-deadline", "3", "--retry-period", "0.5",
            "--claim-grace", "3", "--resync", "30", "--validation-timeout", "3",
            "-vv",
            *extra,
        ]  # fmt: skip
        if register:
            args += ["--webhook-url", f"https://127.0.0.1:{self.port}"]
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT, env={**os.environ})

    def ready(self, timeout: float = 30.0) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"operator exited: {self.log()}")
            try:
                if httpx.get(f"http://127.0.0.1:{self.health_port}/readyz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise TimeoutError(f"operator not ready: {self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._log.close()


def wait_for(check: Callable[[], T | None], *, timeout: float = 30.0, what: str = "condition") -> T:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            value = check()
        except (KubeApiError, KeyError, AssertionError) as exc:
            value, last = None, exc
        if value:
            return value
        time.sleep(0.2)
    raise TimeoutError(f"timed out waiting for {what} (last: {last})")


def conditions(kube: KubeTestClient, name: str) -> dict[str, dict[str, Any]]:
    obj = kube.request("GET", f"{KARTAS}/{name}")
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def karta(name: str, group: str, version: str, kind: str, **root: Any) -> dict[str, Any]:
    component: dict[str, Any] = {
        "name": "root",
        "kind": {"group": group, "version": version, "kind": kind},
        "statusDefinition": {
            "phaseDefinition": {"path": ".status.phase"},
            "statusMappings": {"running": [{"byPhase": "Running"}]},
        },
    }
    component.update(root)
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": name},
        "spec": {"structureDefinition": {"rootComponent": component}},
    }


def widget_crd(group: str, kind: str = "Widget", version: str = "v1") -> dict[str, Any]:
    """A schemaless CRD of ``kind`` (plural ``<kind>s``) in ``group``."""
    return schemaless_crd(group, kind, kind.lower() + "s", version=version)
