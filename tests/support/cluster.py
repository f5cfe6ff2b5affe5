"""A throwaway Kubernetes control plane for tests: etcd plus a real kube-apiserver v1.20.2.

Nothing else runs (no controller-manager, scheduler or kubelet): tests create every object, status
included, themselves. See ``../shared/bin/README.md`` for the flags and their reasons.

Typical use::

    with TestCluster() as cluster:
        client = KubeTestClient(cluster.server, cluster.admin_token, cluster.ca_file)

Authentication: a static token file with a fixed set of users (read once at apiserver start) and
client certificates signed by a CA generated for this cluster (:meth:`TestCluster.issue_client_cert`).
Authorization: RBAC only (``admin`` is in ``system:masters``; everyone else starts with nothing).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import httpx
import yaml

from tests.support.apiserver_binary import ensure_apiserver_binary, ensure_etcd

#: Per wait (etcd healthy, apiserver ready); raise it with $WMAP_CLUSTER_READY_TIMEOUT on slow machines.
DEFAULT_READY_TIMEOUT = float(os.environ.get("WMAP_CLUSTER_READY_TIMEOUT", "90"))
STOP_GRACE = 10.0
# Fresh ports to try when another process took the chosen one between free_port() and bind().
_PORT_ATTEMPTS = 4
SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"
DIR_PREFIX = "wmap-cluster-"

#: Users in the token file of every cluster: name -> groups.
DEFAULT_USERS: dict[str, tuple[str, ...]] = {
    "admin": ("system:masters",),
    "reader": ("wmap:readers",),
    "operator": ("wmap:operators",),
    "nobody": (),
}

_PR_SET_PDEATHSIG = 1


class ClusterError(RuntimeError):
    """The test cluster could not be started or stopped."""


@dataclass(frozen=True)
class TokenUser:
    name: str
    token: str
    groups: tuple[str, ...] = ()


@dataclass
class _Proc:
    name: str
    args: list[str]
    log_path: Path
    popen: subprocess.Popen[bytes] | None = None
    extra_env: dict[str, str] = field(default_factory=dict)


def free_port() -> int:
    """A currently free loopback TCP port (bind to port 0 and release it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    """preexec_fn: ask Linux to SIGKILL the child when the test process dies."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except OSError:
        pass


def _default_base_dir() -> str | None:
    """Where temp dirs go: ``$WMAP_CLUSTER_TMPDIR``, else /dev/shm when it is roomy (fast etcd fsync)."""
    env = os.environ.get("WMAP_CLUSTER_TMPDIR")
    if env:
        return env
    shm = "/dev/shm"
    try:
        st = os.statvfs(shm)
    except OSError:
        return None
    if st.f_bavail * st.f_frsize >= 2 << 30 and os.access(shm, os.W_OK):
        return shm
    return None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sweep_stale_dirs(base: str | None) -> None:
    """Remove cluster dirs left behind by test processes that were killed (they hold RAM in /dev/shm)."""
    root = Path(base or tempfile.gettempdir())
    for candidate in root.glob(f"{DIR_PREFIX}*"):
        try:
            pid = int((candidate / "owner.pid").read_text())
        except (OSError, ValueError):
            continue
        if not _pid_alive(pid):
            shutil.rmtree(candidate, ignore_errors=True)


def _tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"<cannot read {path}: {exc}>"
    return "\n".join(text.splitlines()[-lines:])


def _openssl(*args: str, cwd: Path) -> None:
    result = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise ClusterError(f"openssl {' '.join(args)} failed:\n{result.stderr.strip()}")


_LIVE: weakref.WeakSet[TestCluster] = weakref.WeakSet()


@atexit.register
def _stop_all_live() -> None:
    for cluster in list(_LIVE):
        with contextlib.suppress(Exception):
            cluster.stop()


class TestCluster:
    """etcd + kube-apiserver on free loopback ports, in a private temp directory."""

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        *,
        users: Mapping[str, Sequence[str]] | None = None,
        ready_timeout: float = DEFAULT_READY_TIMEOUT,
        base_dir: str | None = None,
        apiserver_binary: Path | None = None,
        extra_apiserver_args: Sequence[str] = (),
        etcd_seed: Path | None = None,
    ) -> None:
        """``etcd_seed``: an etcd data directory (from :meth:`save_etcd_data`) to start from a copy
        of, e.g. one that already holds all CRDs."""
        self.ready_timeout = ready_timeout
        self._etcd_seed = etcd_seed
        self._base_dir = base_dir if base_dir is not None else _default_base_dir()
        self._apiserver_binary = apiserver_binary
        self._extra_apiserver_args = list(extra_apiserver_args)
        wanted = dict(DEFAULT_USERS)
        wanted.update({name: tuple(groups) for name, groups in (users or {}).items()})
        self.users: dict[str, TokenUser] = {
            name: TokenUser(name, secrets.token_hex(16), tuple(groups)) for name, groups in wanted.items()
        }
        self.dir: Path | None = None
        self.etcd_port = 0
        self.apiserver_port = 0
        self._etcd: _Proc | None = None
        self._apiserver: _Proc | None = None
        self._client_serial = 0
        self.start_seconds: float | None = None
        #: Names of the CRDs installed by whoever set the cluster up (see tests/support/fixtures.py).
        self.installed_crds: list[str] = []
        #: Free-form timings (seconds) recorded by the setup code.
        self.timings: dict[str, float] = {}

    # ----------------------------------------------------------------------------- properties

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.apiserver_port}"

    @property
    def etcd_url(self) -> str:
        return f"http://127.0.0.1:{self.etcd_port}"

    @property
    def admin_token(self) -> str:
        return self.users["admin"].token

    @property
    def ca_file(self) -> Path:
        """The serving certificate bundle the apiserver generated in its ``--cert-dir``."""
        return self._path("certs", "apiserver.crt")

    @property
    def client_ca_file(self) -> Path:
        return self._path("pki", "client-ca.crt")

    @property
    def apiserver_log(self) -> Path:
        return self._path("kube-apiserver.log")

    @property
    def etcd_log(self) -> Path:
        return self._path("etcd.log")

    def token(self, user: str) -> str:
        return self.users[user].token

    def _path(self, *parts: str) -> Path:
        if self.dir is None:
            raise ClusterError("the cluster has not been started")
        return self.dir.joinpath(*parts)

    # ------------------------------------------------------------------------------ lifecycle

    def __enter__(self) -> TestCluster:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> TestCluster:
        """Start etcd and the apiserver and wait until ``/readyz`` says ok. Cleans up on failure."""
        if self.dir is not None:
            raise ClusterError("already started")
        began = time.monotonic()
        # Never start a 15-minute source build from inside a test run: scripts/test (or
        # `python -m tests.support.apiserver_binary`) does that beforehand.
        apiserver = self._apiserver_binary or ensure_apiserver_binary(allow_build=False)
        etcd = ensure_etcd()
        _sweep_stale_dirs(self._base_dir)
        self.dir = Path(tempfile.mkdtemp(prefix=DIR_PREFIX, dir=self._base_dir))
        (self.dir / "owner.pid").write_text(f"{os.getpid()}\n")
        _LIVE.add(self)
        try:
            self._write_credentials()
            if self._etcd_seed is not None:
                shutil.copytree(self._etcd_seed, self.dir / "etcd")
                (self.dir / "etcd").chmod(0o700)
            self._start_retrying_ports(lambda: self._start_etcd(etcd))
            self._start_retrying_ports(lambda: self._start_apiserver_process(apiserver))
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.monotonic() - began
        return self

    def _start_retrying_ports(self, start: Callable[[], None]) -> None:
        """Run ``start`` again with fresh ports when the chosen port was taken in the meantime.

        ``free_port`` releases the port before the process binds it, so a parallel test (or any
        process on the machine) can take it first: CI saw etcd die with "address already in use".
        """
        for attempt in range(_PORT_ATTEMPTS):
            try:
                start()
                return
            except ClusterError as exc:
                if "address already in use" not in str(exc) or attempt == _PORT_ATTEMPTS - 1:
                    raise

    def _start_etcd(self, etcd: Path) -> None:
        if self._etcd is not None:
            self._terminate(self._etcd)
        data_dir = self._path("etcd")
        self.etcd_port = free_port()
        peer_port = free_port()
        self._etcd = _Proc(
            "etcd",
            [
                str(etcd),
                "--name",
                "wmap-test",
                "--data-dir",
                str(data_dir),
                "--listen-client-urls",
                self.etcd_url,
                "--advertise-client-urls",
                self.etcd_url,
                "--listen-peer-urls",
                f"http://127.0.0.1:{peer_port}",
                "--initial-advertise-peer-urls",
                f"http://127.0.0.1:{peer_port}",
                "--initial-cluster",
                f"wmap-test=http://127.0.0.1:{peer_port}",
                "--log-level",
                "warn",
            ],
            self._path("etcd.log"),
        )
        self._spawn(self._etcd)
        self._wait_etcd(time.monotonic() + self.ready_timeout)

    def _start_apiserver_process(self, apiserver: Path) -> None:
        if self._apiserver is not None:
            self._terminate(self._apiserver)
        self.apiserver_port = free_port()
        self._apiserver = _Proc("kube-apiserver", self._apiserver_args(apiserver), self.apiserver_log)
        self._spawn(self._apiserver)
        self._wait_apiserver(time.monotonic() + self.ready_timeout)

    def stop(self) -> None:
        """Stop both processes (SIGTERM, then SIGKILL after a grace period) and delete the temp dir.

        ``WMAP_KEEP_CLUSTER_DIR=1`` keeps the directory (logs, etcd data) for debugging.
        """
        if self._apiserver is not None:
            self._terminate(self._apiserver)
        if self._etcd is not None:
            self._terminate(self._etcd)
        _LIVE.discard(self)
        if self.dir is not None:
            if os.environ.get("WMAP_KEEP_CLUSTER_DIR") == "1":
                print(f"[test cluster] kept {self.dir}")
            else:
                shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def save_etcd_data(self, dest: Path) -> None:
        """Copy etcd's data directory to ``dest`` (must not exist) for a later ``etcd_seed``.

        etcd is stopped for a consistent copy, so this restarts both processes (several seconds).
        """
        if self._etcd is None or self._apiserver is None:
            raise ClusterError("the cluster has not been started")
        self.stop_apiserver()
        self._terminate(self._etcd)
        try:
            shutil.copytree(self._path("etcd"), dest)
        finally:
            self._spawn(self._etcd)
            self._wait_etcd(time.monotonic() + self.ready_timeout)
            self.start_apiserver()

    def stop_apiserver(self) -> None:
        """Stop only the apiserver (etcd keeps the data); :meth:`start_apiserver` brings it back."""
        if self._apiserver is None:
            raise ClusterError("the cluster has not been started")
        self._terminate(self._apiserver)

    def start_apiserver(self) -> None:
        """Start the apiserver again on the same port, etcd and credentials; wait until ready."""
        if self._apiserver is None:
            raise ClusterError("the cluster has not been started")
        if self._apiserver.popen is not None and self._apiserver.popen.poll() is None:
            raise ClusterError("the apiserver is already running")
        self._spawn(self._apiserver)
        self._wait_apiserver(time.monotonic() + self.ready_timeout)

    def restart_apiserver(self) -> None:
        self.stop_apiserver()
        self.start_apiserver()

    def add_token_user(self, name: str, groups: Sequence[str] = ()) -> TokenUser:
        """Add a token user. The token file is read only at startup, so this restarts the apiserver
        when the cluster is running (a few seconds); prefer ``TestCluster(users=...)``."""
        user = TokenUser(name, secrets.token_hex(16), tuple(groups))
        self.users[name] = user
        if self.dir is not None:
            self._write_token_file()
            self.restart_apiserver()
        return user

    # ---------------------------------------------------------------------------- credentials

    def _write_token_file(self) -> None:
        lines = []
        for user in self.users.values():
            row = f"{user.token},{user.name},uid-{user.name}"
            if user.groups:
                row += ',"' + ",".join(user.groups) + '"'
            lines.append(row)
        path = self._path("pki", "tokens.csv")
        path.write_text("\n".join(lines) + "\n")
        path.chmod(0o600)

    def _write_credentials(self) -> None:
        pki = self._path("pki")
        pki.mkdir()
        self._path("certs").mkdir()
        self._write_token_file()
        _openssl("genrsa", "-out", "sa.key", "2048", cwd=pki)
        _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=pki)
        _openssl(
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "client-ca.key",
            "-out",
            "client-ca.crt",
            "-days",
            "3650",
            "-subj",
            "/CN=wmap-test-client-ca",
            cwd=pki,
        )

    def issue_client_cert(self, user: str, groups: Iterable[str] = ()) -> tuple[Path, Path]:
        """A client certificate (CN=user, O=group...) signed by the cluster's client CA."""
        self._client_serial += 1
        out = self._path("pki", "clients")
        out.mkdir(exist_ok=True)
        stem = f"{self._client_serial:03d}-{''.join(c if c.isalnum() else '_' for c in user)}"
        subject = "/CN=" + _subject_escape(user) + "".join("/O=" + _subject_escape(g) for g in groups)
        ext = out / f"{stem}.ext"
        ext.write_text("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth\n")
        key, csr, crt = out / f"{stem}.key", out / f"{stem}.csr", out / f"{stem}.crt"
        _openssl(
            "req",
            "-new",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(csr),
            "-subj",
            subject,
            cwd=out,
        )
        _openssl(
            "x509",
            "-req",
            "-in",
            str(csr),
            "-CA",
            str(self.client_ca_file),
            "-CAkey",
            str(self._path("pki", "client-ca.key")),
            "-set_serial",
            str(1000 + self._client_serial),
            "-days",
            "365",
            "-extfile",
            str(ext),
            "-out",
            str(crt),
            cwd=out,
        )
        return crt, key

    # ----------------------------------------------------------------------------- kubeconfig

    def write_kubeconfig(
        self,
        path: Path | str,
        *,
        user: str = "admin",
        token: str | None = None,
        namespace: str | None = None,
        client_cert: tuple[Path, Path] | None = None,
        insecure: bool = False,
        context: str = "wmap-test",
    ) -> Path:
        """Write a kubeconfig for ``user``: its token from the token file (or ``token``), or a client
        certificate pair from :meth:`issue_client_cert`. Trusts :attr:`ca_file` unless ``insecure``."""
        cluster: dict[str, object] = {"server": self.server}
        if insecure:
            cluster["insecure-skip-tls-verify"] = True
        else:
            cluster["certificate-authority"] = str(self.ca_file)
        auth: dict[str, object]
        if client_cert is not None:
            auth = {"client-certificate": str(client_cert[0]), "client-key": str(client_cert[1])}
        else:
            auth = {"token": token if token is not None else self.token(user)}
        ctx: dict[str, object] = {"cluster": "wmap-test", "user": user}
        if namespace is not None:
            ctx["namespace"] = namespace
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "wmap-test", "cluster": cluster}],
            "users": [{"name": user, "user": auth}],
            "contexts": [{"name": context, "context": ctx}],
            "current-context": context,
            "preferences": {},
        }
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(yaml.safe_dump(config, sort_keys=False))
        return target

    def ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_file))

    # ------------------------------------------------------------------------------ processes

    def _apiserver_args(self, binary: Path) -> list[str]:
        pki = self._path("pki")
        return [
            str(binary),
            "--etcd-servers",
            self.etcd_url,
            "--bind-address",
            "127.0.0.1",
            "--advertise-address",
            "127.0.0.1",
            "--secure-port",
            str(self.apiserver_port),
            "--insecure-port",
            "0",
            "--cert-dir",
            str(self._path("certs")),
            "--token-auth-file",
            str(pki / "tokens.csv"),
            "--client-ca-file",
            str(self.client_ca_file),
            "--service-account-issuer",
            "https://kubernetes.default.svc",
            "--service-account-key-file",
            str(pki / "sa.pub"),
            "--service-account-signing-key-file",
            str(pki / "sa.key"),
            "--authorization-mode",
            "RBAC",
            "--service-cluster-ip-range",
            SERVICE_CLUSTER_IP_RANGE,
            "--disable-admission-plugins",
            "ServiceAccount",
            "--profiling=false",
            "--v",
            "1",
            *self._extra_apiserver_args,
        ]

    def _spawn(self, proc: _Proc) -> None:
        env = dict(os.environ)
        env.update(proc.extra_env)
        with proc.log_path.open("ab") as log:
            log.write(f"\n===== {time.strftime('%H:%M:%S')} starting {proc.name} =====\n".encode())
            log.flush()
            proc.popen = subprocess.Popen(
                proc.args,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.dir,
                env=env,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )

    @staticmethod
    def _terminate(proc: _Proc) -> None:
        popen = proc.popen
        if popen is None or popen.poll() is not None:
            return
        popen.send_signal(signal.SIGTERM)
        try:
            popen.wait(STOP_GRACE)
        except subprocess.TimeoutExpired:
            popen.kill()
            popen.wait(STOP_GRACE)

    def _failure(self, what: str) -> ClusterError:
        parts = [what]
        for proc in (self._etcd, self._apiserver):
            if proc is None:
                continue
            code = proc.popen.poll() if proc.popen is not None else None
            state = (
                "not started"
                if proc.popen is None
                else f"exit code {code}"
                if code is not None
                else "running"
            )
            parts.append(f"--- {proc.name} ({state}), last lines of {proc.log_path}:\n{_tail(proc.log_path)}")
        return ClusterError("\n".join(parts))

    def _check_alive(self, proc: _Proc) -> None:
        if proc.popen is None or proc.popen.poll() is not None:
            raise self._failure(f"{proc.name} exited during startup")

    def _wait_etcd(self, deadline: float) -> None:
        assert self._etcd is not None
        last = ""
        with httpx.Client(timeout=2.0) as http:
            while time.monotonic() < deadline:
                self._check_alive(self._etcd)
                try:
                    resp = http.get(f"{self.etcd_url}/health")
                    if resp.status_code == 200 and '"true"' in resp.text:
                        return
                    last = f"HTTP {resp.status_code}: {resp.text[:200]}"
                except httpx.HTTPError as exc:
                    last = repr(exc)
                time.sleep(0.1)
        raise self._failure(f"etcd not healthy within {self.ready_timeout:.0f}s (last: {last})")

    def _wait_apiserver(self, deadline: float) -> None:
        assert self._apiserver is not None
        headers = {"Authorization": f"Bearer {self.admin_token}"}
        last = ""
        # The serving cert does not exist until the apiserver writes it: poll without verification,
        # then check that the CA bundle really verifies the server.
        with httpx.Client(timeout=5.0, verify=False, headers=headers) as http:
            while time.monotonic() < deadline:
                self._check_alive(self._apiserver)
                try:
                    resp = http.get(f"{self.server}/readyz")
                    if resp.status_code == 200 and resp.text.strip() == "ok":
                        # The bootstrap controller creates `default` shortly after; wait for it too.
                        ns = http.get(f"{self.server}/api/v1/namespaces/default")
                        if ns.status_code == 200:
                            break
                        last = f"namespace default: HTTP {ns.status_code}"
                    else:
                        last = f"HTTP {resp.status_code}: {resp.text[-300:]}"
                except httpx.HTTPError as exc:
                    last = repr(exc)
                time.sleep(0.25)
            else:
                raise self._failure(
                    f"kube-apiserver at {self.server} not ready within "
                    f"{self.ready_timeout:.0f}s (last: {last})"
                )
        try:
            with httpx.Client(timeout=5.0, verify=self.ssl_context(), headers=headers) as http:
                http.get(f"{self.server}/readyz").raise_for_status()
        except (httpx.HTTPError, ssl.SSLError, OSError) as exc:
            raise self._failure(f"apiserver is up but {self.ca_file} does not verify it: {exc!r}") from exc


def _subject_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("/", "\\/").replace("+", "\\+").replace("=", "\\=")
