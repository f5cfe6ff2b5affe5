"""Network attacks of issue #23, run against one or more source trees: worst time and peak memory.

Each attack runs ``wmap`` from a tree (``PYTHONPATH=TREE/src`` with this interpreter) as a separate
process, against the fake API server of ``tests/support/fake_apiserver.py`` on loopback, with a
time limit and a memory ceiling (the process group is killed past either; the row says so).
Measured per attack: wall time until the answer (or the kill), the peak RSS of the ``wmap`` process
(its ``VmHWM``, polled every 10 ms: ``ru_maxrss`` would include the benchmark's own memory, which
the child shares between fork and exec), and the outcome (exit code and last stderr line, or the
HTTP answers the attack was after).

The CLI as a client of a malicious API server:

- ``gzip-tiny-objects``: a list page of 80,000,000 empty objects (240 MB inflated, about 230 KB gzipped);
- ``tiny-objects-under-ceiling``: 490,000 of them, just under ``MAX_DECODED_VALUES`` (an empty
  object counts twice: its brace and its comma): the most such a page can still cost;
- ``endless-continue``: every list page carries a new ``continue`` token;
- ``discovery-100k-groups``: ``/apis`` names 100,000 groups;
- ``redirect-empty``: every GET answers 302 with an empty body;
- ``exec-plugin-sleeps``: the kubeconfig's exec plugin sleeps for ever (plugins alive after exit counted);
- ``exec-plugin-interrupted``: the same, and ``wmap`` gets SIGINT 2 s into the plugin's run;
- ``kubeconfig-fifo``: ``--kubeconfig`` names a FIFO nobody writes to;
- ``kubeconfig-ca-fifo``: the kubeconfig's ``certificate-authority`` is such a FIFO;
- ``kubeconfig-cert-dev-zero``: its ``client-certificate`` and ``client-key`` are ``/dev/zero``.

``wmap serve`` (half-open connections, slow heads and floods come from 127.0.0.2, the probes and the
authenticated client from 127.0.0.1, so the server sees two clients):

- ``serve-half-open-300``: 300 connections that send nothing, while ``/healthz`` and an authenticated
  ``/api/v1/whoami`` are probed;
- ``serve-slowloris-300``: 300 connections that send a partial head and then a byte every second;
- ``serve-header-100k``: one request head with a 100 KB header;
- ``serve-dry-run-read-only``: ``POST /api/v1/workload-types?dryRun=true`` while writes are disabled.

The exporter's server (``runtime.http``, shared with the operator's webhooks): ``exporter-half-open-200``
and ``exporter-header-100k``, the same attacks.

Run: ``.venv/bin/python bench/bench_hostile_net.py --tree /work/wt/base --tree .`` (each attack per tree,
side by side; ``--only NAME`` repeats, ``--timeout``, ``--rss-limit-mb``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.fake_apiserver import FakeApiServer, Reply, Seen  # noqa: E402
from tests.support.pids import alive  # noqa: E402

PODS = "/api/v1/namespaces/default/pods"
GET_PODS = ["get", "pods", "--generic", "-n", "default"]
ATTACKER = "127.0.0.2"  # a second loopback address: the server sees another client


@dataclass
class Outcome:
    seconds: float
    peak_mb: float
    result: str
    killed: str = ""
    notes: list[str] = field(default_factory=list)


@dataclass
class Tree:
    path: Path

    def env(self, home: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "WMAP_CATALOG_DIR")}
        env.update(PYTHONPATH=str(self.path / "src"), HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"))
        return env


def _hwm_mb(pid: int) -> float:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Measured:
    """A ``wmap`` process in its own session, watched for time and RSS."""

    def __init__(self, tree: Tree, argv: list[str], home: Path, *, stderr: Path) -> None:
        self.stderr_path = stderr
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "workload_map.cli.main", *argv],
            env=tree.env(home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr.open("wb"),
            start_new_session=True,
        )
        self.peak = 0.0
        self.killed = ""
        self.status: int | None = None
        self.ended: float | None = None

    def poll(self, rss_limit_mb: float) -> bool:
        """True once the process ended (collected with its rusage)."""
        if self.status is not None:
            return True
        self.peak = max(self.peak, _hwm_mb(self.proc.pid))
        pid, status = os.waitpid(self.proc.pid, os.WNOHANG)
        if pid:
            self.ended = time.monotonic()
            self.status = os.waitstatus_to_exitcode(status)
            self.proc.returncode = self.status
            return True
        if self.peak > rss_limit_mb and not self.killed:
            self.kill(f"killed above {rss_limit_mb:.0f} MB")
        return False

    def wait(self, timeout: float, rss_limit_mb: float) -> None:
        while not self.poll(rss_limit_mb):
            if time.monotonic() - self.started > timeout and not self.killed:
                self.kill(f"killed after {timeout:.0f} s")
            time.sleep(0.01)

    def kill(self, why: str) -> None:
        self.killed = why
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def outcome(self) -> Outcome:
        end = self.ended or time.monotonic()
        lines = [ln for ln in self.stderr_path.read_text(errors="replace").splitlines() if ln.strip()]
        last = lines[-1][:160] if lines else ""
        return Outcome(end - self.started, self.peak, f"exit {self.status}: {last}", self.killed)


# ----------------------------------------------------------------------------------- client attacks


def _tiny_objects_gzip(count: int) -> bytes:
    """``{"items":[{},{},...]}`` with ``count`` objects, gzipped piece by piece."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [
        packer.compress(b'{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[')
    ]
    piece = b"{}," * 1_000_000
    left = count - 1
    while left > 0:
        n = min(left, 1_000_000)
        parts.append(packer.compress(piece if n == 1_000_000 else b"{}," * n))
        left -= n
    parts.append(packer.compress(b"{}]}"))
    parts.append(packer.flush())
    return b"".join(parts)


_BOMBS: dict[int, bytes] = {}


def tiny_objects(count: int) -> Callable[[FakeApiServer], list[str]]:
    def setup(fake: FakeApiServer) -> list[str]:
        if count not in _BOMBS:
            _BOMBS[count] = _tiny_objects_gzip(count)
        headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
        fake.on("GET", PODS, Reply(200, _BOMBS[count], headers))
        return GET_PODS

    return setup


def endless_continue(fake: FakeApiServer) -> list[str]:
    def page(seen: Seen) -> Reply:
        n = int((seen.param("continue") or "c0")[1:]) + 1
        return Reply.json(
            {"kind": "PodList", "apiVersion": "v1", "metadata": {"continue": f"c{n}"}, "items": []}
        )

    fake.on("GET", PODS, page)
    return GET_PODS


def discovery_groups(fake: FakeApiServer) -> list[str]:
    groups = [
        {"name": f"g{i}.example.com", "versions": [{"groupVersion": f"g{i}.example.com/v1", "version": "v1"}]}
        for i in range(100_000)
    ]
    fake.on("GET", "/apis", Reply.json({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}))
    return ["get", "widgets", "-n", "default"]


def redirect_empty(fake: FakeApiServer) -> list[str]:
    import re

    fake.on("GET", re.compile(r"/.*"), Reply(302, b"", {"Location": "http://127.0.0.1:9/elsewhere"}))
    return GET_PODS


def _sleeping_plugin(directory: Path) -> dict[str, object]:
    script = directory / "sleepy-plugin"
    script.write_text(
        textwrap.dedent(
            f"""\
            #!/bin/sh
            echo $$ >> {directory}/plugin-pids
            sleep 1000 &
            echo $! >> {directory}/plugin-pids
            wait
            """
        )
    )
    script.chmod(0o755)
    return {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": str(script),
            "interactiveMode": "Never",
        }
    }


def _plugin_report(directory: Path) -> list[str]:
    pids = (
        [int(p) for p in (directory / "plugin-pids").read_text().split()]
        if (directory / "plugin-pids").exists()
        else []
    )
    runs = len(pids) // 2
    time.sleep(0.5)
    living = [p for p in pids if alive(p)]
    for pid in living:  # ours: started by this benchmark's wmap; stop them by id
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return [f"plugin runs {runs}", f"plugin processes alive after exit {len(living)}"]


def kubeconfig_fifo(fake: FakeApiServer, tmp: Path) -> Path:
    os.mkfifo(tmp / "kubeconfig.fifo")
    return tmp / "kubeconfig.fifo"


def _https_kubeconfig(fake: FakeApiServer, tmp: Path, cluster: dict[str, str], user: dict[str, str]) -> Path:
    """The fake's kubeconfig over https (never reached: the files are read first)."""
    import yaml

    path = fake.kubeconfig(tmp / "kubeconfig")
    doc = yaml.safe_load(path.read_text())
    doc["clusters"][0]["cluster"] = {"server": fake.url.replace("http:", "https:"), **cluster}
    doc["users"][0]["user"] = user
    path.write_text(yaml.safe_dump(doc))
    return path


def kubeconfig_ca_fifo(fake: FakeApiServer, tmp: Path) -> Path:
    os.mkfifo(tmp / "ca.crt")
    return _https_kubeconfig(
        fake, tmp, {"certificate-authority": str(tmp / "ca.crt")}, {"token": "good-token"}
    )


def kubeconfig_cert_dev_zero(fake: FakeApiServer, tmp: Path) -> Path:
    user = {"client-certificate": "/dev/zero", "client-key": "/dev/zero"}
    return _https_kubeconfig(fake, tmp, {"insecure-skip-tls-verify": "true"}, user)


# ------------------------------------------------------------------------------------- serve attacks


def _connect(port: int, source: str = ATTACKER) -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.settimeout(10)
    sock.connect(("127.0.0.1", port))
    return sock


def _probe(url: str, path: str, headers: dict[str, str] | None = None) -> str:
    try:
        answer = httpx.get(url + path, headers=headers, timeout=15)
        return str(answer.status_code)
    except httpx.HTTPError as exc:
        return type(exc).__name__


def _hold(port: int, count: int, first: bytes, trickle: bool, stop: threading.Event) -> list[int]:
    """Keep ``count`` attacker connections open until ``stop``: each sends ``first`` (and with
    ``trickle`` a byte a second); one the server closes is opened again at once. Returns the
    number of connections opened so far (one item, updated)."""
    opened = [0]

    def keep() -> None:
        socks: list[socket.socket] = []
        try:
            while not stop.is_set():
                while len(socks) < count and not stop.is_set():
                    try:
                        s = _connect(port)
                        s.setblocking(False)
                        if first:
                            s.send(first)
                        socks.append(s)
                        opened[0] += 1
                    except OSError:
                        break
                stop.wait(1.0)
                for s in list(socks):
                    try:
                        if trickle:
                            s.send(b"X")
                        if s.recv(65536, socket.MSG_PEEK) == b"":
                            raise OSError("closed")
                        # an answer (503...) counts as closed: the attacker reconnects
                        s.close()
                        socks.remove(s)
                    except BlockingIOError:
                        pass  # still open, nothing said
                    except OSError:
                        s.close()
                        socks.remove(s)
        finally:
            for s in socks:
                s.close()

    threading.Thread(target=keep, daemon=True).start()
    return opened


def _probes(url: str, second: str, rounds: int = 8) -> list[str]:
    out = []
    for _ in range(rounds):
        health = _probe(url, "/healthz")
        other = _probe(url, second, {"Authorization": "Bearer good-token"})
        out.append(f"{health}/{other}")
        time.sleep(1.5)
    return out


def flood(count: int, first: bytes, trickle: bool, second: str) -> Callable[[str, int], list[str]]:
    """``count`` attacker connections kept open from 127.0.0.2 while 127.0.0.1 probes ``/healthz``
    and ``second`` (with a bearer token the fake API server accepts) every 1.5 s."""

    def attack(url: str, port: int) -> list[str]:
        stop = threading.Event()
        opened = _hold(port, count, first, trickle, stop)
        time.sleep(2.0)  # let the flood build up
        try:
            answers = _probes(url, second)
        finally:
            stop.set()
        return [f"{opened[0]} attacker connections opened", f"healthz/{second}: " + " ".join(answers)]

    return attack


def header_100k(url: str, port: int) -> list[str]:
    with _connect(port, "127.0.0.1") as s:
        head = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(
            b"X-Pad-%d: %s\r\n" % (i, b"a" * 2000) for i in range(50)
        )
        s.sendall(head + b"\r\n")
        try:
            reply = s.recv(200)
        except OSError as exc:
            reply = f"{type(exc).__name__}".encode()
    status = reply.split(b"\r\n", 1)[0].decode(errors="replace")
    return [f"100 KB head: {status or 'connection closed'}"]


def dry_run_read_only(url: str, port: int) -> list[str]:
    karta = (ROOT / "src/workload_map/catalog/data/jobset-x-k8s-io-jobset-v1alpha2.yaml").read_text()
    import yaml

    doc = yaml.safe_load(karta)
    doc["metadata"]["name"] = "dry-run-probe"
    answer = httpx.post(
        url + "/api/v1/workload-types?dryRun=true",
        json=doc,
        headers={"Authorization": "Bearer good-token"},
        timeout=30,
    )
    return [f"dry run with writes disabled: HTTP {answer.status_code} {answer.text[:120]}"]


# -------------------------------------------------------------------------------------------- driver


@dataclass
class ClientAttack:
    name: str
    setup: Callable[[FakeApiServer], list[str]]
    plugin: bool = False
    interrupt_after: float | None = None
    #: The kubeconfig to give ``wmap`` (default: the fake's own).
    kubeconfig: Callable[[FakeApiServer, Path], Path] | None = None


@dataclass
class ServerAttack:
    name: str
    command: str
    attack: Callable[[str, int], list[str]]


CLIENT_ATTACKS = [
    ClientAttack("gzip-tiny-objects", tiny_objects(80_000_000)),
    ClientAttack("tiny-objects-under-ceiling", tiny_objects(490_000)),
    ClientAttack("endless-continue", endless_continue),
    ClientAttack("discovery-100k-groups", discovery_groups),
    ClientAttack("redirect-empty", redirect_empty),
    ClientAttack("exec-plugin-sleeps", lambda fake: GET_PODS, plugin=True),
    ClientAttack("exec-plugin-interrupted", lambda fake: GET_PODS, plugin=True, interrupt_after=2.0),
    ClientAttack("kubeconfig-fifo", lambda fake: GET_PODS, kubeconfig=kubeconfig_fifo),
    ClientAttack("kubeconfig-ca-fifo", lambda fake: GET_PODS, kubeconfig=kubeconfig_ca_fifo),
    ClientAttack("kubeconfig-cert-dev-zero", lambda fake: GET_PODS, kubeconfig=kubeconfig_cert_dev_zero),
]
SERVER_ATTACKS = [
    ServerAttack("serve-half-open-300", "serve", flood(300, b"", False, "/api/v1/whoami")),
    ServerAttack(
        "serve-slowloris-300", "serve", flood(300, b"GET /healthz HTTP/1.1\r\n", True, "/api/v1/whoami")
    ),
    ServerAttack("serve-header-100k", "serve", header_100k),
    ServerAttack("serve-dry-run-read-only", "serve", dry_run_read_only),
    ServerAttack("exporter-half-open-200", "exporter", flood(200, b"", False, "/metrics")),
    ServerAttack("exporter-header-100k", "exporter", header_100k),
]


def run_client(attack: ClientAttack, tree: Tree, tmp: Path, timeout: float, rss: float) -> Outcome:
    with FakeApiServer() as fake:
        argv = attack.setup(fake)
        user = _sleeping_plugin(tmp) if attack.plugin else None
        if attack.kubeconfig is not None:
            kubeconfig = attack.kubeconfig(fake, tmp)
        else:
            kubeconfig = fake.kubeconfig(tmp / "kubeconfig", user=user)
        proc = Measured(tree, [*argv, "--kubeconfig", str(kubeconfig)], tmp / "home", stderr=tmp / "stderr")
        if attack.interrupt_after is not None:
            # SIGINT once the plugin has been running for interrupt_after seconds.
            pids = tmp / "plugin-pids"
            while not pids.exists() and time.monotonic() - proc.started < timeout and not proc.poll(rss):
                time.sleep(0.05)
            time.sleep(attack.interrupt_after)
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.proc.pid, signal.SIGINT)
        proc.wait(timeout, rss)
        outcome = proc.outcome()
        outcome.notes.append(f"{len(fake.requests)} requests")
        if attack.plugin:
            outcome.notes += _plugin_report(tmp)
        return outcome


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_server(attack: ServerAttack, tree: Tree, tmp: Path, timeout: float, rss: float) -> Outcome:
    with FakeApiServer() as fake:
        kubeconfig = fake.kubeconfig(tmp / "kubeconfig")
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        argv = [attack.command, "--listen", f"127.0.0.1:{port}", "--kubeconfig", str(kubeconfig)]
        proc = Measured(tree, argv, tmp / "home", stderr=tmp / "stderr")
        try:
            ready = False
            while time.monotonic() - proc.started < 60 and not proc.poll(rss):
                if _probe(url, "/healthz") == "200":
                    ready = True
                    break
                time.sleep(0.2)
            if not ready:
                return proc.outcome()
            started = time.monotonic()
            result: list[str] = []
            worker = threading.Thread(target=lambda: result.extend(attack.attack(url, port)), daemon=True)
            worker.start()
            while worker.is_alive() and time.monotonic() - started < timeout:
                proc.poll(rss)
                worker.join(0.1)
            seconds = time.monotonic() - started
            proc.poll(rss)
            return Outcome(seconds, proc.peak, "; ".join(result) or "attack did not finish", proc.killed)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.proc.pid, signal.SIGTERM)
            for _ in range(100):
                if proc.poll(rss):
                    break
                time.sleep(0.1)
            else:
                proc.kill("")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--tree", action="append", type=Path, help="a source tree (repeatable); default: this one"
    )
    ap.add_argument("--only", action="append", help="run only this attack (repeatable)")
    ap.add_argument(
        "--timeout", type=float, default=120.0, help="seconds before an attack's process is killed"
    )
    ap.add_argument("--rss-limit-mb", type=float, default=2500.0, help="RSS at which the process is killed")
    args = ap.parse_args()
    # A shell starts background jobs with SIGINT ignored, and children inherit that: handle it here
    # so that the wmap processes get the default (the interrupt attack needs it).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    trees = [Tree(p.resolve()) for p in (args.tree or [ROOT])]
    resource.setrlimit(resource.RLIMIT_NOFILE, (4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    attacks: list[ClientAttack | ServerAttack] = [*CLIENT_ATTACKS, *SERVER_ATTACKS]
    names = [a.name for a in attacks]
    for name in args.only or ():
        if name not in names:
            ap.error(f"unknown attack {name!r}: one of {', '.join(names)}")
    print(f"{'attack':<26} {'tree':<22} {'seconds':>8} {'peak MB':>8}  outcome")
    for attack in attacks:
        if args.only and attack.name not in args.only:
            continue
        for tree in trees:
            with tempfile.TemporaryDirectory(prefix="wmap-net-") as tmp:
                if isinstance(attack, ClientAttack):
                    out = run_client(attack, tree, Path(tmp), args.timeout, args.rss_limit_mb)
                else:
                    out = run_server(attack, tree, Path(tmp), args.timeout, args.rss_limit_mb)
            what = "; ".join([out.killed, out.result, *out.notes] if out.killed else [out.result, *out.notes])
            print(
                f"{attack.name:<26} {str(tree.path)[-22:]:<22} {out.seconds:8.1f} {out.peak_mb:8.0f}  {what}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
