"""The product as users install it (issue #13): the sdist and the wheel are built, the wheel is
installed with its dependencies into a fresh virtualenv outside the source tree, and every
``wmap`` subcommand is run from there, including ``kubectl wmap`` and the web UI's static files
served by an installed ``wmap serve`` against the test cluster."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.cluster import TestCluster, free_port

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "src" / "workload_map"

pytestmark = pytest.mark.packaging


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


class Installed:
    def __init__(self, root: Path, wheel: Path, sdist: Path) -> None:
        self.root = root
        self.wheel = wheel
        self.sdist = sdist
        self.bin = root / "venv" / "bin"
        self.home = root / "home"
        self.home.mkdir()

    def env(self) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if k.startswith(("PIP_", "LANG", "LC_"))}
        # PATH: the venv first (kubectl looks plugins up on PATH), no PYTHONPATH, no source tree.
        return {**keep, "PATH": f"{self.bin}:/usr/bin:/bin", "HOME": str(self.home)}

    def wmap(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(self.bin / "wmap"), *args],
            cwd=self.root,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if check:
            assert done.returncode == 0, f"wmap {' '.join(args)} exited {done.returncode}:\n{done.stderr}"
        return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    root = tmp_path_factory.mktemp("installed")
    dist = root / "dist"
    python = str(root / "venv" / "bin" / "python")
    _run([sys.executable, "-m", "venv", str(root / "venv")], root)
    # The sdist is built by the build backend pyproject.toml asks for (setuptools>=77), as pip
    # would in an isolated build; the wheel by pip itself.
    _run([python, "-m", "pip", "install", "-q", "setuptools>=77", "wheel"], root)
    _run([python, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(REPO)], REPO)
    _run([python, "-c", f"from setuptools import build_meta as b; b.build_sdist({str(dist)!r})"], REPO)
    wheel = next(dist.glob("workload_map-*.whl"))
    sdist = next(dist.glob("workload_map-*.tar.gz"))
    _run([python, "-m", "pip", "install", "-q", f"{wheel}[server]"], root)
    yield Installed(root, wheel, sdist)


def _data_files() -> set[str]:
    return {
        str(p.relative_to(PACKAGE.parent))
        for p in PACKAGE.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    }


def test_every_data_file_under_src_is_in_the_wheel_and_the_sdist(installed: Installed) -> None:
    files = _data_files()
    assert "workload_map/lint/builtin_schemas/definitions.json" in files  # the file that went missing
    with zipfile.ZipFile(installed.wheel) as wheel:
        in_wheel = set(wheel.namelist())
    assert files - in_wheel == set()
    with tarfile.open(installed.sdist) as sdist:
        in_sdist = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    assert {f"src/{f}" for f in files} - in_sdist == set()


def test_the_installed_package_is_not_the_source_tree(installed: Installed) -> None:
    where = _run(
        [str(installed.bin / "python"), "-c", "import workload_map; print(workload_map.__file__)"],
        installed.root,
        installed.env(),
    )
    assert str(installed.root / "venv") in where and str(REPO) not in where


def test_version_and_the_kubectl_plugin(installed: Installed) -> None:
    version = installed.wmap("--version").stdout
    assert version.startswith("wmap ") or "0.1.0" in version
    plugin = subprocess.run(
        [str(installed.bin / "kubectl-wmap"), "--version"],
        env=installed.env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert plugin.returncode == 0 and plugin.stdout == version
    # kubectl's plugin completion executable (kubectl 1.26+): Cobra's format, a directive last
    completion = subprocess.run(
        [str(installed.bin / "kubectl_complete-wmap"), "ge"],
        env=installed.env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert completion.returncode == 0
    words = [line.split("\t")[0] for line in completion.stdout.splitlines()]
    assert {"get", "generate"} <= set(words) and completion.stdout.endswith(":4\n")


@pytest.mark.parametrize(
    "command",
    ["completion", "crd", "definitions", "describe", "explain", "exporter", "gang", "get", "group",
     "lint", "operator", "requirements", "serve", "validate", "set", "label", "annotate", "scale",
     "suspend", "resume", "policy"],
)  # fmt: skip
def test_every_subcommand_has_help(installed: Installed, command: str) -> None:
    assert "Usage:" in installed.wmap(command, "--help").stdout


def test_offline_commands_work_from_the_install(installed: Installed) -> None:
    data = next((installed.root / "venv" / "lib").rglob("workload_map/catalog/data"))
    job = data / "batch-job-v1.yaml"
    assert "is a valid Karta definition" in installed.wmap("validate", str(job)).stdout
    # lint reads the built-in kinds' schemas shipped as package data (lint/builtin_schemas).
    assert installed.wmap("lint", str(job)).stdout.startswith("OK: 1 definition(s)")
    assert "kartas.run.ai" in installed.wmap("crd").stdout
    assert "kind: WorkloadPolicy" in installed.wmap("crd", "workloadpolicies.workload-map.dev").stdout
    assert "JobSet" in installed.wmap("explain", "jobset-x-k8s-io-jobset-v1alpha2").stdout
    assert "complete" in installed.wmap("completion", "bash").stdout
    manifest = installed.root / "job.yaml"
    manifest.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: n}\n"
        "spec: {parallelism: 2, template: {spec: {containers: [{name: c, image: x,"
        " resources: {limits: {nvidia.com/gpu: 1}}}]}}}\n"
    )
    assert "j" in installed.wmap("describe", "-f", str(manifest)).stdout
    assert installed.wmap("requirements", "-f", str(manifest)).returncode == 0
    # the gang plan rendered from the installed catalog, offline
    gang = installed.wmap("gang", "job/j", "-f", str(manifest), "--scheduler", "volcano", "--objects-only")
    assert gang.returncode == 0 and "scheduling.volcano.sh/v1beta1" in gang.stdout


def test_serve_without_the_server_extra_says_how_to_add_it(installed: Installed, tmp_path: Path) -> None:
    """A plain ``pip install`` of the wheel (no extras): ``wmap serve`` is a usage error naming the
    extra and the command that adds it from this very wheel, not ``internal error``."""
    venv = tmp_path / "plain"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(installed.wheel)], tmp_path)
    env = {**installed.env(), "PATH": f"{venv / 'bin'}:/usr/bin:/bin"}
    for args in (["serve"], ["serve", "--local"]):
        done = subprocess.run(
            [str(venv / "bin" / "wmap"), *args], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr == (
            "error: wmap serve needs the [server] extra (starlette, uvicorn not installed): "
            f"pip install '{installed.wheel}[server]', or add its packages: "
            "pip install 'starlette>=0.37' 'uvicorn>=0.29'\n"
        )


@pytest.mark.cluster
def test_installed_serve_answers_with_its_web_ui(
    installed: Installed, cluster: TestCluster, tmp_path: Path
) -> None:
    kubeconfig = cluster.write_kubeconfig(tmp_path / "kubeconfig", user="admin")
    port = free_port()
    proc = subprocess.Popen(
        [
            str(installed.bin / "wmap"),
            "serve",
            "--listen",
            f"127.0.0.1:{port}",
            "--kubeconfig",
            str(kubeconfig),
        ],
        cwd=installed.root,
        env=installed.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "installed wmap serve did not start"
            time.sleep(0.2)
        index = httpx.get(f"http://127.0.0.1:{port}/", timeout=10)
        assert index.status_code == 200 and "<html" in index.text.lower()
        for name in ("app.css", "js/main.js", "js/api.js"):
            assert httpx.get(f"http://127.0.0.1:{port}/static/{name}", timeout=10).status_code == 200, name
    finally:
        proc.terminate()
        proc.wait(10)
