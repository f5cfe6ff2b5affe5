"""Request authentication: bearer tokens, token files, basic auth, exec credential plugins, impersonation.

:class:`KubeAuth` is an ``httpx.Auth``: it sets ``Authorization`` and the ``Impersonate-*`` headers on
every request and, when a 401 comes back for a refreshable credential (exec plugin or token file), it
refreshes once and retries the request.

Exec plugins follow the client-go credential protocol (``client.authentication.k8s.io/v1``, ``v1beta1``
and ``v1alpha1``): the command runs with the kubeconfig's args and env plus ``KUBERNETES_EXEC_INFO``
(an ExecCredential whose ``spec`` carries ``interactive`` and, with ``provideClusterInfo``, ``cluster``);
its stdout must be an ExecCredential of the same apiVersion whose ``status`` holds a ``token`` or a
``clientCertificateData``/``clientKeyData`` PEM pair, optionally with an ``expirationTimestamp``.
The result is cached until that time (for the life of the process without one). The plugin's stderr
goes to ours, as with kubectl (plugins print prompts and errors there).

A plugin runs once per credential need: one thread runs it while the others wait for its result
(the provider's lock), and a failure is that result too: for :data:`EXEC_FAILURE_HOLD` seconds
every request fails with the same error instead of starting the plugin again. A plugin is stopped
with everything it started (its own session, or for an interactive plugin, which must stay in the
terminal's process group, its process tree) when it outlives its time limit, when the waiting
thread is interrupted, and when the process exits (:func:`stop_exec_plugins`, also run at exit).
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import IO, Any
from urllib.parse import quote

import httpx
import orjson

from workload_map.cluster.kubeconfig import ClusterConfig, ExecConfig, read_local_file
from workload_map.errors import ConfigurationError, ExecPluginError

__all__ = ["Credential", "ExecCredentialProvider", "KubeAuth", "TokenFileSource", "stop_exec_plugins"]

EXEC_API_VERSIONS = (
    "client.authentication.k8s.io/v1",
    "client.authentication.k8s.io/v1beta1",
    "client.authentication.k8s.io/v1alpha1",
)
#: Refresh an exec credential this many seconds before it expires.
EXPIRY_SKEW = 10.0
#: Re-read a token file at most this often (the kubelet rotates projected tokens).
TOKEN_FILE_TTL = 60.0
#: Largest token file read (projected service-account tokens are a few KB).
MAX_TOKEN_FILE = 1024 * 1024
#: Longest run of an exec plugin without a terminal, and with one (a person may be typing a password).
EXEC_TIMEOUT = 60.0
INTERACTIVE_EXEC_TIMEOUT = 300.0
#: Largest ExecCredential an exec plugin may print.
MAX_EXEC_OUTPUT = 1024 * 1024
#: Seconds a failed plugin run stands as the answer to every credential request (not run again).
EXEC_FAILURE_HOLD = 30.0

#: Plugins running now (pid -> process, whether it has its own session), for stop_exec_plugins.
_running: dict[int, tuple[subprocess.Popen[bytes], bool]] = {}
_running_lock = threading.Lock()
_exit_hook = False


def _descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (Linux /proc; empty elsewhere), children first."""
    parents: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as fh:
                    stat = fh.read(1024)
                ppid = int(stat.rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    out: list[int] = []
    todo = [pid]
    while todo and len(out) < 10_000:
        for child in parents.get(todo.pop(), ()):
            out.append(child)
            todo.append(child)
    return out


def _kill(proc: subprocess.Popen[bytes], *, group: bool) -> None:
    """Stop a plugin with everything it started: its session's process group, or (an interactive
    plugin shares the terminal's group with us) its process tree; reap it if it goes quickly."""
    try:
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            for pid in [*_descendants(proc.pid), proc.pid]:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=1.0)


def _track(proc: subprocess.Popen[bytes], group: bool) -> None:
    global _exit_hook
    with _running_lock:
        _running[proc.pid] = (proc, group)
        if not _exit_hook:
            atexit.register(stop_exec_plugins)
            _exit_hook = True


def _untrack(proc: subprocess.Popen[bytes]) -> None:
    with _running_lock:
        _running.pop(proc.pid, None)


def stop_exec_plugins() -> int:
    """Kill every exec plugin still running, with what it started; the number stopped. The CLI calls
    it on its way out (an interrupt, an error in another thread), and it runs at interpreter exit."""
    with _running_lock:
        running = list(_running.values())
        _running.clear()
    for proc, group in running:
        if proc.poll() is None:
            _kill(proc, group=group)
    return len(running)


@dataclass(frozen=True)
class Credential:
    """What an exec plugin returned. ``expires_at`` is a POSIX timestamp or ``None`` (no expiry)."""

    token: str | None = None
    cert_pem: bytes | None = None
    key_pem: bytes | None = None
    expires_at: float | None = None

    def valid(self, now: float) -> bool:
        return self.expires_at is None or now < self.expires_at - EXPIRY_SKEW


def _parse_time(value: str) -> float:
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    dt = datetime.fromisoformat(text)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


class ExecCredentialProvider:
    """Runs an exec credential plugin and caches its credential until it expires."""

    def __init__(
        self,
        exec_config: ExecConfig,
        cluster: ClusterConfig | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        stdin: IO[Any] | None = None,
        stderr: IO[Any] | int | None = None,
        clock: Callable[[], float] = time.time,
        timeout: float | None = None,
    ) -> None:
        if exec_config.api_version not in EXEC_API_VERSIONS:
            raise ConfigurationError(
                f'exec plugin apiVersion "{exec_config.api_version}" is not supported '
                f"(use one of {', '.join(EXEC_API_VERSIONS)})"
            )
        self.config = exec_config
        self.cluster = cluster
        self._environ = environ
        self._stdin = stdin if stdin is not None else sys.stdin
        self._stderr = stderr
        self._clock = clock
        #: Longest run of the plugin; None: EXEC_TIMEOUT, or INTERACTIVE_EXEC_TIMEOUT with a terminal.
        self.timeout = timeout
        self._lock = threading.Lock()
        self._cached: Credential | None = None
        #: The last run's failure while it stands: (clock time it ends, message).
        self._failure: tuple[float, str] | None = None
        #: How many times the plugin ran (tests and diagnostics).
        self.runs = 0

    # -------------------------------------------------------------------------------------- public

    def get(self, *, force: bool = False) -> Credential:
        """The cached credential, or a fresh one when forced, missing or (nearly) expired."""
        with self._lock:
            cached = self._cached
            if not force and cached is not None and cached.valid(self._clock()):
                return cached
            return self._refresh()

    def refresh_after_unauthorized(self, used: Credential | None) -> Credential:
        """After a 401: run the plugin again, unless another thread already replaced ``used``."""
        with self._lock:
            if self._cached is not None and self._cached is not used and self._cached.valid(self._clock()):
                return self._cached
            return self._refresh()

    def invalidate(self) -> None:
        with self._lock:
            self._cached = None
            self._failure = None

    def _refresh(self) -> Credential:
        """Run the plugin (the lock is held: one run for every waiting thread), unless its last run
        failed less than :data:`EXEC_FAILURE_HOLD` seconds ago: then that failure again."""
        if self._failure is not None:
            until, message = self._failure
            if self._clock() < until:
                raise ExecPluginError(message)
            self._failure = None
        try:
            self._cached = self._run()
        except ExecPluginError as exc:
            self._failure = (self._clock() + EXEC_FAILURE_HOLD, str(exc))
            raise
        return self._cached

    # ------------------------------------------------------------------------------------- running

    def _interactive(self) -> bool:
        mode = self.config.interactive_mode
        if mode == "Never":
            return False
        try:
            tty = bool(self._stdin is not None and self._stdin.isatty())
        except (ValueError, OSError):
            tty = False
        if mode == "Always" and not tty:
            raise ExecPluginError(
                f'exec plugin "{self.config.command}" needs an interactive terminal '
                "(interactiveMode: Always), but standard input is not a terminal"
            )
        return tty

    def exec_info(self, interactive: bool) -> dict[str, Any]:
        """The ``KUBERNETES_EXEC_INFO`` ExecCredential sent to the plugin."""
        spec: dict[str, Any] = {"interactive": interactive}
        if self.config.provide_cluster_info and self.cluster is not None:
            c = self.cluster
            info: dict[str, Any] = {"server": c.server}
            if c.tls_server_name:
                info["tls-server-name"] = c.tls_server_name
            if c.insecure:
                info["insecure-skip-tls-verify"] = True
            ca = c.ca_pem() if not c.insecure else None
            if ca:
                info["certificate-authority-data"] = base64.b64encode(ca).decode()
            if c.proxy_url:
                info["proxy-url"] = c.proxy_url
            if c.disable_compression:
                info["disable-compression"] = True
            if self.config.cluster_config is not None:
                info["config"] = self.config.cluster_config
            spec["cluster"] = info
        return {"apiVersion": self.config.api_version, "kind": "ExecCredential", "spec": spec}

    def _run(self) -> Credential:
        cfg = self.config
        interactive = self._interactive()
        env = dict(os.environ if self._environ is None else self._environ)
        env.update(dict(cfg.env))
        env["KUBERNETES_EXEC_INFO"] = orjson.dumps(self.exec_info(interactive)).decode()
        command = cfg.command
        if "/" not in command and shutil.which(command, path=env.get("PATH")) is None:
            raise self._missing()
        self.runs += 1
        limit = (
            self.timeout
            if self.timeout is not None
            else (INTERACTIVE_EXEC_TIMEOUT if interactive else EXEC_TIMEOUT)
        )
        returncode, out = self._spawn([command, *cfg.args], env, interactive, limit)
        if returncode != 0:
            raise ExecPluginError(f'exec plugin "{command}" failed with exit code {returncode}')
        return self._parse(out)

    def _spawn(
        self, argv: list[str], env: dict[str, str], interactive: bool, limit: float
    ) -> tuple[int, bytes]:
        """Run the plugin with its stdout capped at MAX_EXEC_OUTPUT and its run time at ``limit``.

        A non-interactive plugin runs in its own session so that a kill also reaches the children
        that hold its stdout open; an interactive one must stay in the terminal's process group.
        """
        command = argv[0]
        try:
            proc = subprocess.Popen(
                argv,
                env=env,
                stdin=None if interactive else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                start_new_session=not interactive,
            )
        except FileNotFoundError:
            raise self._missing() from None
        except PermissionError:
            raise ExecPluginError(f'exec plugin "{command}" is not executable') from None
        except OSError as exc:
            raise ExecPluginError(f'exec plugin "{command}" could not be started: {exc}') from None
        _track(proc, not interactive)
        try:
            return self._wait(proc, command, interactive, limit)
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM turned into an exception...): the plugin goes too.
            _kill(proc, group=not interactive)
            raise
        finally:
            _untrack(proc)

    def _wait(
        self, proc: subprocess.Popen[bytes], command: str, interactive: bool, limit: float
    ) -> tuple[int, bytes]:
        assert proc.stdout is not None
        stdout = proc.stdout
        chunks: list[bytes] = []
        reader = threading.Thread(
            target=lambda: chunks.append(stdout.read(MAX_EXEC_OUTPUT + 1)),
            name="exec-plugin-stdout",
            daemon=True,
        )
        reader.start()
        reader.join(limit)
        out = chunks[0] if chunks else b""
        problem = None
        if reader.is_alive():
            problem = f"did not finish within {limit:g}s"
        elif len(out) > MAX_EXEC_OUTPUT:
            problem = f"printed more than {MAX_EXEC_OUTPUT} bytes"
        if problem is not None:
            _kill(proc, group=not interactive)
            reader.join(1.0)
            stdout.close()
            raise ExecPluginError(f'exec plugin "{command}" {problem}; it was stopped')
        try:
            returncode = proc.wait(timeout=max(limit, 1.0))
        except subprocess.TimeoutExpired:
            # stdout is closed but the process lives on: stop it rather than wait forever.
            _kill(proc, group=not interactive)
            raise ExecPluginError(
                f'exec plugin "{command}" did not exit within {limit:g}s; it was stopped'
            ) from None
        finally:
            stdout.close()
        return returncode, out

    def _missing(self) -> ExecPluginError:
        text = f'exec plugin "{self.config.command}" was not found'
        if self.config.install_hint:
            text += "\n\n" + self.config.install_hint.rstrip()
        return ExecPluginError(text)

    def _parse(self, out: bytes) -> Credential:
        cmd = self.config.command
        try:
            doc = orjson.loads(out)
        except orjson.JSONDecodeError as exc:
            raise ExecPluginError(f'exec plugin "{cmd}" did not print a JSON ExecCredential: {exc}') from None
        if not isinstance(doc, dict) or doc.get("kind") != "ExecCredential":
            raise ExecPluginError(f'exec plugin "{cmd}" did not print an ExecCredential')
        if doc.get("apiVersion") != self.config.api_version:
            raise ExecPluginError(
                f'exec plugin "{cmd}" returned apiVersion "{doc.get("apiVersion")}", '
                f'expected "{self.config.api_version}"'
            )
        status = doc.get("status")
        if not isinstance(status, dict):
            raise ExecPluginError(f'exec plugin "{cmd}" returned an ExecCredential without status')
        token = status.get("token") or None
        cert, key = status.get("clientCertificateData"), status.get("clientKeyData")
        if bool(cert) != bool(key):
            raise ExecPluginError(
                f'exec plugin "{cmd}": clientCertificateData and clientKeyData must be given together'
            )
        if not token and not cert:
            raise ExecPluginError(f'exec plugin "{cmd}" returned neither a token nor a client certificate')
        expires_at = None
        stamp = status.get("expirationTimestamp")
        if stamp:
            try:
                expires_at = _parse_time(str(stamp))
            except ValueError:
                raise ExecPluginError(
                    f'exec plugin "{cmd}" returned an invalid expirationTimestamp "{stamp}"'
                ) from None
        return Credential(
            token=str(token) if token else None,
            cert_pem=str(cert).encode() if cert else None,
            key_pem=str(key).encode() if key else None,
            expires_at=expires_at,
        )


class TokenFileSource:
    """A bearer token read from a file, re-read at most every :data:`TOKEN_FILE_TTL` seconds."""

    def __init__(self, path: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        self._token: str | None = None
        self._read_at = 0.0

    def get(self, *, force: bool = False) -> str:
        with self._lock:
            now = self._clock()
            if force or self._token is None or now - self._read_at > TOKEN_FILE_TTL:
                raw = read_local_file(self.path, "token", MAX_TOKEN_FILE)
                try:
                    self._token = raw.decode("utf-8").strip()
                except UnicodeDecodeError:
                    raise ConfigurationError(f"token file {self.path} is not UTF-8 text") from None
                self._read_at = now
            return self._token


class KubeAuth(httpx.Auth):
    """Authorization and impersonation headers for a ClusterConfig; one refresh-and-retry on 401."""

    requires_request_body = False
    requires_response_body = False

    def __init__(self, config: ClusterConfig, exec_provider: ExecCredentialProvider | None = None) -> None:
        if config.auth_provider and not (config.token or config.token_file or config.exec):
            raise ConfigurationError(
                f'the kubeconfig user uses auth-provider "{config.auth_provider}", which was removed from '
                "Kubernetes clients; switch it to an exec credential plugin"
            )
        self.config = config
        self.exec = exec_provider
        if self.exec is None and config.exec is not None and not config.token and not config.token_file:
            self.exec = ExecCredentialProvider(config.exec, config)
        self.token_file = (
            TokenFileSource(config.token_file) if config.token_file and not config.token else None
        )
        self._impersonation = self._impersonation_headers(config)
        self._basic: str | None = None
        if config.username is not None and not (config.token or self.token_file or self.exec):
            raw = f"{config.username}:{config.password or ''}".encode()
            self._basic = "Basic " + base64.b64encode(raw).decode()

    @staticmethod
    def _impersonation_headers(config: ClusterConfig) -> list[tuple[str, str]]:
        headers: list[tuple[str, str]] = []
        if config.impersonate_user:
            headers.append(("Impersonate-User", config.impersonate_user))
            headers.extend(("Impersonate-Group", g) for g in config.impersonate_groups)
            if config.impersonate_uid:
                headers.append(("Impersonate-Uid", config.impersonate_uid))
            for key, values in config.impersonate_extra:
                name = "Impersonate-Extra-" + quote(key, safe="")
                headers.extend((name, v) for v in values)
        return headers

    def exec_credential(self) -> Credential | None:
        """The current exec credential (running the plugin when needed), if an exec plugin is configured."""
        return self.exec.get() if self.exec is not None else None

    def _apply(self, request: httpx.Request, *, force: bool = False) -> Credential | None:
        used: Credential | None = None
        if self.config.token:
            request.headers["Authorization"] = f"Bearer {self.config.token}"
        elif self.token_file is not None:
            request.headers["Authorization"] = f"Bearer {self.token_file.get(force=force)}"
        elif self.exec is not None:
            used = self.exec.get()
            if used.token:
                request.headers["Authorization"] = f"Bearer {used.token}"
        elif self._basic is not None:
            request.headers["Authorization"] = self._basic
        if self._impersonation:
            items = [
                (k, v) for k, v in request.headers.multi_items() if not k.lower().startswith("impersonate-")
            ]
            request.headers = httpx.Headers(items + self._impersonation)
        return used

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        used = self._apply(request)
        response = yield request
        if response.status_code != 401:
            return
        if self.exec is not None and not self.config.token and not self.token_file:
            fresh = self.exec.refresh_after_unauthorized(used)
            if fresh.token and fresh.token != (used.token if used else None):
                request.headers["Authorization"] = f"Bearer {fresh.token}"
                yield request
        elif self.token_file is not None:
            before = request.headers.get("Authorization")
            self._apply(request, force=True)
            if request.headers.get("Authorization") != before:
                yield request
