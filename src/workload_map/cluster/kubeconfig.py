"""Kubeconfig loading with kubectl's rules, flag overrides, and the in-cluster fallback.

Where the configuration comes from, in order:

1. ``--kubeconfig PATH``: that file only; a missing file is an error.
2. ``$KUBECONFIG``: a ``os.pathsep``-separated list; missing files and empty entries are skipped and
   the files are merged kubectl's way: for clusters, users and contexts the *first* file that defines a
   name wins; the first file that sets ``current-context`` (or ``preferences``) wins.
3. ``~/.kube/config``.
4. None of the above exists: the in-cluster service account
   (``KUBERNETES_SERVICE_HOST``/``KUBERNETES_SERVICE_PORT`` and the token, CA and namespace files under
   ``/var/run/secrets/kubernetes.io/serviceaccount``), else :class:`NoConfigurationError`.

Relative paths inside a kubeconfig (``certificate-authority``, ``client-certificate``, ``client-key``,
``tokenFile``, an exec ``command`` that contains a ``/``) are resolved against the directory of the
file that defined them; paths given as flags are relative to the working directory.

Namespace: ``-n`` > the context's namespace > ``default`` (in-cluster: ``-n`` > ``$POD_NAMESPACE`` >
the service account's namespace file > ``default``).

This module does not import httpx: the CLI can read the configuration without paying for the client.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workload_map.errors import ConfigurationError, NoConfigurationError

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
DEFAULT_NAMESPACE = "default"

__all__ = [
    "DEFAULT_NAMESPACE",
    "SERVICE_ACCOUNT_DIR",
    "ClusterConfig",
    "ConnectionOptions",
    "ExecConfig",
    "Kubeconfig",
    "kubeconfig_paths",
    "load_cluster_config",
    "load_kubeconfig",
    "parse_duration",
]


@dataclass(frozen=True)
class ConnectionOptions:
    """The kubectl-style connection flags, exactly as given (``None`` = flag not given)."""

    kubeconfig: str | None = None
    context: str | None = None
    cluster: str | None = None
    user: str | None = None
    namespace: str | None = None
    server: str | None = None
    token: str | None = None
    as_user: str | None = None
    as_groups: tuple[str, ...] = ()
    as_uid: str | None = None
    certificate_authority: str | None = None
    client_certificate: str | None = None
    client_key: str | None = None
    insecure_skip_tls_verify: bool | None = None
    tls_server_name: str | None = None
    request_timeout: str | None = None
    cache_dir: str | None = None
    disable_compression: bool = False


@dataclass(frozen=True)
class ExecConfig:
    """The ``user.exec`` block of a kubeconfig (client-go's ExecConfig)."""

    command: str
    api_version: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    install_hint: str | None = None
    provide_cluster_info: bool = False
    interactive_mode: str = "IfAvailable"
    #: The cluster's extension ``client.authentication.k8s.io/exec`` (sent as spec.cluster.config).
    cluster_config: Any = None


@dataclass(frozen=True)
class ClusterConfig:
    """Everything needed to talk to one API server: the merged result of kubeconfig and flags."""

    server: str
    namespace: str = DEFAULT_NAMESPACE
    #: True when the namespace came from ``-n`` (or the context), not the ``default`` fallback.
    namespace_explicit: bool = False
    context: str | None = None
    cluster_name: str | None = None
    user_name: str | None = None
    # TLS
    ca_data: bytes | None = None
    ca_file: str | None = None
    insecure: bool = False
    tls_server_name: str | None = None
    client_cert_data: bytes | None = None
    client_cert_file: str | None = None
    client_key_data: bytes | None = None
    client_key_file: str | None = None
    # credentials
    token: str | None = None
    token_file: str | None = None
    username: str | None = None
    password: str | None = None
    exec: ExecConfig | None = None
    auth_provider: str | None = None
    # impersonation
    impersonate_user: str | None = None
    impersonate_groups: tuple[str, ...] = ()
    impersonate_uid: str | None = None
    impersonate_extra: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # transport
    timeout: float | None = None
    proxy_url: str | None = None
    disable_compression: bool = False
    cache_dir: str | None = None
    #: ``kubeconfig``, ``in-cluster`` or ``flags`` (``--server`` without any kubeconfig).
    source: str = "kubeconfig"
    #: The kubeconfig files that were read (empty in-cluster).
    files: tuple[str, ...] = field(default_factory=tuple)

    def ca_pem(self) -> bytes | None:
        """The CA bundle as PEM bytes (data wins over file), or ``None`` for the system roots."""
        if self.ca_data:
            return self.ca_data
        if self.ca_file:
            return read_local_file(self.ca_file, "certificate authority")
        return None


# --------------------------------------------------------------------------------------------- parsing

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: str) -> float | None:
    """``--request-timeout``: ``0`` (no timeout, returns ``None``), a bare number of seconds, or a Go
    duration such as ``1m30s`` or ``500ms``."""
    text = value.strip()
    if re.fullmatch(r"\d+", text):
        seconds = float(text)
    else:
        pos, seconds = 0, 0.0
        for m in _DURATION_PART.finditer(text):
            if m.start() != pos:
                break
            seconds += float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
            pos = m.end()
        if pos != len(text) or not text:
            raise ConfigurationError(
                f'invalid request timeout "{value}": use a number of seconds or a duration such as 30s or 1m'
            )
    return None if seconds == 0 else seconds


#: Largest local file a kubeconfig may name (certificates, keys, token files, the kubeconfig itself).
MAX_LOCAL_FILE = 16 * 1024 * 1024
#: The in-cluster namespace file holds one name (at most 63 characters).
MAX_NAMESPACE_FILE = 4096


def read_local_file(path: str | Path, what: str, limit: int = MAX_LOCAL_FILE) -> bytes:
    """The bytes of a file the kubeconfig names (or the kubeconfig itself), read with the project's
    bounded reader (:func:`workload_map.model.inputs.read_bytes`): a FIFO, device or socket is refused
    by its type before it is opened (a named pipe cannot block ``wmap``, ``/dev/zero`` cannot fill
    memory) and at most ``limit`` bytes are read. Every refusal is a ConfigurationError naming the
    file and what the kubeconfig uses it for."""
    from workload_map.errors import InputError
    from workload_map.model.inputs import read_bytes

    label = f"{what} file {path}"
    if not os.path.exists(path):
        raise ConfigurationError(f"{label} does not exist")
    try:
        return read_bytes(path, limit=limit, label=label)
    except InputError as exc:
        raise ConfigurationError(str(exc)) from None


def _check_local_file(path: str, what: str, where: str) -> None:
    """A file the configuration names exists and is a regular file (a FIFO, device or socket is
    refused by type now, before anything reads it); else a ConfigurationError naming it."""
    from workload_map.errors import InputError
    from workload_map.model.inputs import require_regular_file

    if not os.path.exists(path):
        raise ConfigurationError(f"{what} file {path} ({where}) does not exist")
    try:
        require_regular_file(path, f"{what} file {path} ({where})")
    except InputError as exc:
        raise ConfigurationError(str(exc)) from None


def _b64(value: Any, what: str, where: str) -> bytes:
    if not isinstance(value, str):
        raise ConfigurationError(f"{where}: {what} must be a base64 string")
    try:
        return base64.b64decode(value.strip(), validate=False)
    except (binascii.Error, ValueError) as exc:
        raise ConfigurationError(f"{where}: {what} is not valid base64: {exc}") from None


def _load_yaml(path: Path) -> dict[str, Any]:

    raw = read_local_file(path, "kubeconfig")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigurationError(f"kubeconfig {path} is not UTF-8 text: {exc}") from None
    from workload_map.errors import DefinitionError
    from workload_map.model.yamldocs import load_yaml_documents

    try:
        docs = load_yaml_documents(text, str(path))
    except DefinitionError as exc:
        raise ConfigurationError(f"kubeconfig {path} is not valid YAML: {exc}") from None
    data = docs[0] if docs else None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigurationError(f"kubeconfig {path} is not a YAML mapping")
    return data


def _resolve(path: Any, base: Path) -> Any:
    if isinstance(path, str) and path and not os.path.isabs(path):
        return str(base / path)
    return path


def _named(data: dict[str, Any], key: str, inner: str, path: Path) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    entries = data.get(key) or []
    if not isinstance(entries, list):
        raise ConfigurationError(f"kubeconfig {path}: {key} must be a list")
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise ConfigurationError(f"kubeconfig {path}: every entry of {key} needs a name")
        body = entry.get(inner) or {}
        if not isinstance(body, dict):
            raise ConfigurationError(f'kubeconfig {path}: {key[:-1]} "{entry["name"]}" is not a mapping')
        out.append((entry["name"], body))
    return out


@dataclass
class Kubeconfig:
    """Merged kubeconfig content: named clusters, users and contexts (paths already absolute)."""

    clusters: dict[str, dict[str, Any]] = field(default_factory=dict)
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    contexts: dict[str, dict[str, Any]] = field(default_factory=dict)
    current_context: str | None = None
    files: list[str] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not (self.clusters or self.users or self.contexts or self.current_context)

    def merge_file(self, path: Path) -> None:
        """Add one file's entries; names already present (from earlier files) are kept."""
        data = _load_yaml(path)
        base = path.resolve().parent
        self.files.append(str(path))
        for name, body in _named(data, "clusters", "cluster", path):
            if name not in self.clusters:
                body = dict(body)
                body["certificate-authority"] = _resolve(body.get("certificate-authority"), base)
                self.clusters[name] = body
        for name, body in _named(data, "users", "user", path):
            if name not in self.users:
                body = dict(body)
                for key in ("client-certificate", "client-key", "tokenFile"):
                    body[key] = _resolve(body.get(key), base)
                exec_block = body.get("exec")
                if isinstance(exec_block, dict):
                    command = exec_block.get("command")
                    if isinstance(command, str) and "/" in command:
                        exec_block = dict(exec_block)
                        exec_block["command"] = _resolve(command, base)
                        body["exec"] = exec_block
                self.users[name] = body
        for name, body in _named(data, "contexts", "context", path):
            if name not in self.contexts:
                self.contexts[name] = dict(body)
        current = data.get("current-context")
        if self.current_context is None and isinstance(current, str) and current:
            self.current_context = current


def kubeconfig_paths(
    options: ConnectionOptions, environ: Mapping[str, str], home: Path
) -> tuple[list[Path], bool]:
    """The files to read, and whether they were asked for explicitly (a missing one is then an error)."""
    if options.kubeconfig:
        return [Path(options.kubeconfig).expanduser()], True
    env = environ.get("KUBECONFIG", "")
    if env:
        seen: set[str] = set()
        paths: list[Path] = []
        for part in env.split(os.pathsep):
            if part and part not in seen:
                seen.add(part)
                paths.append(Path(part).expanduser())
        return paths, False
    return [home / ".kube" / "config"], False


def load_kubeconfig(
    options: ConnectionOptions | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> Kubeconfig:
    """Read and merge the kubeconfig files selected by ``options`` and the environment."""
    options = options or ConnectionOptions()
    env = os.environ if environ is None else environ
    paths, explicit = kubeconfig_paths(options, env, home or Path.home())
    merged = Kubeconfig()
    for path in paths:
        if not path.exists():
            if explicit:
                raise ConfigurationError(f"kubeconfig {path} does not exist (given by --kubeconfig)")
            continue
        if path.is_dir():
            raise ConfigurationError(f"kubeconfig {path} is a directory, not a file")
        merged.merge_file(path)
    return merged


# ----------------------------------------------------------------------------------------- resolution


def _in_cluster(options: ConnectionOptions, env: Mapping[str, str], sa_dir: Path) -> ClusterConfig | None:
    host, port = env.get("KUBERNETES_SERVICE_HOST"), env.get("KUBERNETES_SERVICE_PORT")
    token_path = sa_dir / "token"
    if not host or not port or not token_path.exists():
        return None
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # IPv6
    namespace = options.namespace
    explicit = bool(namespace)
    if not namespace:
        namespace = env.get("POD_NAMESPACE") or None
        if namespace is None:
            ns_file = sa_dir / "namespace"
            namespace = (
                read_local_file(ns_file, "service account namespace", MAX_NAMESPACE_FILE)
                .decode("utf-8", "replace")
                .strip()
                or None
                if ns_file.exists()
                else None
            )
        explicit = namespace is not None
    ca_file = options.certificate_authority or (
        str(sa_dir / "ca.crt") if (sa_dir / "ca.crt").exists() else None
    )
    return ClusterConfig(
        server=options.server or f"https://{host}:{port}",
        namespace=namespace or DEFAULT_NAMESPACE,
        namespace_explicit=explicit,
        ca_file=ca_file,
        insecure=bool(options.insecure_skip_tls_verify),
        tls_server_name=options.tls_server_name,
        client_cert_file=options.client_certificate,
        client_key_file=options.client_key,
        token=options.token,
        # The kubelet rotates projected tokens: re-read the file (the auth layer does, per request batch).
        token_file=None if options.token else str(token_path),
        impersonate_user=options.as_user,
        impersonate_groups=options.as_groups,
        impersonate_uid=options.as_uid,
        timeout=parse_duration(options.request_timeout) if options.request_timeout else None,
        disable_compression=options.disable_compression,
        cache_dir=options.cache_dir,
        source="in-cluster",
    )


def _exec_config(block: Any, user: str, cluster: Mapping[str, Any]) -> ExecConfig:
    where = f'user "{user}": exec'
    if not isinstance(block, dict):
        raise ConfigurationError(f"{where} must be a mapping")
    command = block.get("command")
    if not isinstance(command, str) or not command:
        raise ConfigurationError(f"{where}: command is required")
    api_version = block.get("apiVersion")
    if not isinstance(api_version, str) or not api_version:
        raise ConfigurationError(f"{where}: apiVersion is required")
    args = block.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigurationError(f"{where}: args must be a list of strings")
    env_pairs: list[tuple[str, str]] = []
    for item in block.get("env") or []:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ConfigurationError(f"{where}: env entries need a name and a value")
        env_pairs.append((item["name"], str(item.get("value", ""))))
    mode = block.get("interactiveMode") or ("" if api_version.endswith("/v1") else "IfAvailable")
    if mode not in ("Never", "IfAvailable", "Always"):
        if not mode:
            raise ConfigurationError(f"{where}: interactiveMode is required for {api_version}")
        raise ConfigurationError(f'{where}: invalid interactiveMode "{mode}" (Never, IfAvailable or Always)')
    extension = None
    for ext in cluster.get("extensions") or []:
        if isinstance(ext, dict) and ext.get("name") == "client.authentication.k8s.io/exec":
            extension = ext.get("extension")
    hint = block.get("installHint")
    return ExecConfig(
        command=command,
        api_version=api_version,
        args=tuple(args),
        env=tuple(env_pairs),
        install_hint=hint if isinstance(hint, str) and hint else None,
        provide_cluster_info=bool(block.get("provideClusterInfo")),
        interactive_mode=mode,
        cluster_config=extension,
    )


def _str(body: Mapping[str, Any], key: str) -> str | None:
    value = body.get(key)
    return value if isinstance(value, str) and value else None


def load_cluster_config(
    options: ConnectionOptions | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
    service_account_dir: Path | None = None,
) -> ClusterConfig:
    """Resolve ``options`` against the kubeconfig files (or the in-cluster account) into a ClusterConfig.

    ``environ``, ``home`` and ``service_account_dir`` default to the real process values; tests inject them.
    """
    options = options or ConnectionOptions()
    env = os.environ if environ is None else environ
    sa_dir = SERVICE_ACCOUNT_DIR if service_account_dir is None else service_account_dir
    kubeconfig = load_kubeconfig(options, environ=env, home=home)
    timeout = parse_duration(options.request_timeout) if options.request_timeout else None

    if kubeconfig.is_empty():
        in_cluster = _in_cluster(options, env, sa_dir)
        if in_cluster is not None:
            return in_cluster
        if not options.server:
            where = describe_sources(kubeconfig_paths(options, env, home or Path.home())[0])
            raise NoConfigurationError(
                "no Kubernetes configuration found: no kubeconfig "
                f"(looked at {where}; set $KUBECONFIG or --kubeconfig) and not running inside a cluster"
            )

    context_name = options.context or kubeconfig.current_context
    context: dict[str, Any] = {}
    if context_name:
        if context_name in kubeconfig.contexts:
            context = kubeconfig.contexts[context_name]
        elif options.context:
            raise ConfigurationError(f'context "{context_name}" does not exist in the kubeconfig')
        elif not (options.server or options.cluster):
            raise ConfigurationError(
                f'the kubeconfig\'s current-context "{context_name}" does not exist; pick one with --context'
            )

    cluster_name = options.cluster or _str(context, "cluster")
    user_name = options.user or _str(context, "user")
    cluster: dict[str, Any] = {}
    if cluster_name:
        if cluster_name not in kubeconfig.clusters:
            if options.cluster or not options.server:
                raise ConfigurationError(f'cluster "{cluster_name}" does not exist in the kubeconfig')
        else:
            cluster = kubeconfig.clusters[cluster_name]
    user: dict[str, Any] = {}
    if user_name:
        if user_name in kubeconfig.users:
            user = kubeconfig.users[user_name]
        elif options.user:
            raise ConfigurationError(f'user "{user_name}" does not exist in the kubeconfig')
        # kubectl tolerates a context naming a missing user: it connects without credentials.

    server = options.server or _str(cluster, "server")
    if not server:
        if not context_name:
            raise NoConfigurationError(
                "the kubeconfig selects no context: set current-context or pass --context"
            )
        raise ConfigurationError(
            f'cluster "{cluster_name}" has no server address'
            if cluster_name
            else f'context "{context_name}" names no cluster'
        )
    if "://" not in server:
        server = f"https://{server}"
    server = server.rstrip("/")

    # --- TLS: a --certificate-authority flag replaces the kubeconfig CA; --insecure-skip-tls-verify=true
    # drops every CA (they are mutually exclusive in client-go).
    where = f'cluster "{cluster_name}"'
    ca_data = None
    ca_file = None
    insecure = bool(cluster.get("insecure-skip-tls-verify"))
    if options.certificate_authority:
        ca_file = options.certificate_authority
        insecure = False
    else:
        if cluster.get("certificate-authority-data"):
            ca_data = _b64(cluster["certificate-authority-data"], "certificate-authority-data", where)
        else:
            ca_file = _str(cluster, "certificate-authority")
    if options.insecure_skip_tls_verify is not None:
        insecure = options.insecure_skip_tls_verify
    if insecure:
        ca_data = ca_file = None
    if ca_file:
        _check_local_file(ca_file, "certificate authority", where)

    # --- credentials
    uwhere = f'user "{user_name}"'
    cert_data = key_data = None
    cert_file = key_file = None
    if options.client_certificate:
        cert_file = options.client_certificate
    elif user.get("client-certificate-data"):
        cert_data = _b64(user["client-certificate-data"], "client-certificate-data", uwhere)
    else:
        cert_file = _str(user, "client-certificate")
    if options.client_key:
        key_file = options.client_key
    elif user.get("client-key-data"):
        key_data = _b64(user["client-key-data"], "client-key-data", uwhere)
    else:
        key_file = _str(user, "client-key")
    for path, what in ((cert_file, "client certificate"), (key_file, "client key")):
        if path:
            _check_local_file(path, what, uwhere)
    if bool(cert_data or cert_file) != bool(key_data or key_file):
        raise ConfigurationError(f"{uwhere}: a client certificate needs both the certificate and the key")

    token = options.token or _str(user, "token")
    token_file = None if options.token else _str(user, "tokenFile")
    if token_file and os.path.exists(token_file):  # a missing one is reported when it is read
        _check_local_file(token_file, "token", uwhere)
    exec_cfg = None
    username = password = None
    if not options.token:
        if user.get("exec") is not None:
            exec_cfg = _exec_config(user["exec"], user_name or "", cluster)
        username, password = _str(user, "username"), _str(user, "password")
    auth_provider = None
    if isinstance(user.get("auth-provider"), dict):
        auth_provider = _str(user["auth-provider"], "name")

    # --- impersonation: flags replace the kubeconfig's `as*` fields.
    as_user = options.as_user or _str(user, "as")
    as_groups = options.as_groups or tuple(g for g in (user.get("as-groups") or []) if isinstance(g, str))
    as_uid = options.as_uid or _str(user, "as-uid")
    extra: list[tuple[str, tuple[str, ...]]] = []
    raw_extra = user.get("as-user-extra") or {}
    if isinstance(raw_extra, dict):
        for key, values in raw_extra.items():
            if isinstance(values, list):
                extra.append((str(key), tuple(str(v) for v in values)))
    if (as_groups or as_uid or extra) and not as_user:
        raise ConfigurationError("impersonating groups, a uid or extra fields requires --as (a user)")

    namespace = options.namespace or _str(context, "namespace")
    return ClusterConfig(
        server=server,
        namespace=namespace or DEFAULT_NAMESPACE,
        namespace_explicit=namespace is not None,
        context=context_name if context else None,
        cluster_name=cluster_name,
        user_name=user_name,
        ca_data=ca_data,
        ca_file=ca_file,
        insecure=insecure,
        tls_server_name=options.tls_server_name or _str(cluster, "tls-server-name"),
        client_cert_data=cert_data,
        client_cert_file=cert_file,
        client_key_data=key_data,
        client_key_file=key_file,
        token=token,
        token_file=token_file,
        username=username,
        password=password,
        exec=exec_cfg,
        auth_provider=auth_provider,
        impersonate_user=as_user,
        impersonate_groups=tuple(as_groups),
        impersonate_uid=as_uid,
        impersonate_extra=tuple(extra),
        timeout=timeout,
        proxy_url=_str(cluster, "proxy-url"),
        disable_compression=options.disable_compression or bool(cluster.get("disable-compression")),
        cache_dir=options.cache_dir,
        source="kubeconfig" if not kubeconfig.is_empty() else "flags",
        files=tuple(kubeconfig.files),
    )


def describe_sources(paths: Sequence[Path]) -> str:
    return ", ".join(str(p) for p in paths)
