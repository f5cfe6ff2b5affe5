"""What every cluster-facing command shares: the kubectl connection flags, ``--definitions``,
``--config`` and ``-o`` (accepted on the root and on each command; the command's value wins),
config-file and environment precedence, and a lazy :class:`Session` (kubeconfig, client,
discovery, merged definitions, type resolution).

Import discipline: only click and light modules at import time (``wmap --help`` must not import
pydantic, yaml or httpx); everything heavy is imported inside functions.

Config (upstream-spec 5.1): a YAML file with the keys ``output`` and (ours) ``prometheus``, the
cost source of ``get``/``describe`` (cli/cost.py). Location: ``--config`` >
``$WMAP_CONFIG`` > ``$KARTA_CONFIG`` > ``~/.config/wmap/config.yaml`` > ``~/.karta/config.yaml``
(a missing default file is ignored; a missing explicit one is an error). Output: ``table`` <
config file < ``$WMAP_OUTPUT`` (or ``$KARTA_OUTPUT``) < ``-o``. A ``wide`` default from config or
environment means ``table`` for commands without ``wide``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from workload_map.cli import exit_codes
from workload_map.cli.errors import CommandError, NoDefinitionError
from workload_map.errors import WorkloadMapError

if TYPE_CHECKING:
    from workload_map.cli.main import State
    from workload_map.cluster.claims import ClaimReader
    from workload_map.cluster.client import KubeClient
    from workload_map.cluster.discovery import APIResource, Discovery
    from workload_map.cluster.kubeconfig import ClusterConfig, ConnectionOptions
    from workload_map.definitions_source import DefinitionEntry, DefinitionSet
    from workload_map.model.loader import FieldValidation

F = TypeVar("F", bound=Callable[..., Any])

ALL_FORMATS = ("table", "wide", "json", "yaml")
CONFIG_ENVS = ("WMAP_CONFIG", "KARTA_CONFIG")
OUTPUT_ENVS = ("WMAP_OUTPUT", "KARTA_OUTPUT")
DEFAULT_CONFIGS = ("~/.config/wmap/config.yaml", "~/.karta/config.yaml")
#: The config file's keys: ``output`` (upstream's) and ``prometheus`` (cli/cost.py).
CONFIG_KEYS = ("output", "prometheus")

NO_DEFINITIONS = "no Karta definitions available (catalog empty and no cluster definitions)"


def _state(ctx: click.Context) -> State:
    from workload_map.cli.main import State

    state = ctx.find_object(State)
    if state is None:
        state = ctx.ensure_object(State)
    return state


# --- options -------------------------------------------------------------------------------------

# (flags, ConnectionOptions field, help, kind) ; kind: "str" | "flag" | "multi"
_CONNECTION: tuple[tuple[tuple[str, ...], str, str, str], ...] = (
    (("--kubeconfig",), "kubeconfig", "Path to the kubeconfig file.", "str"),
    (("--context",), "context", "The kubeconfig context to use.", "str"),
    (("--cluster",), "cluster", "The kubeconfig cluster to use.", "str"),
    (("--user",), "user", "The kubeconfig user to use.", "str"),
    (("-n", "--namespace"), "namespace", "Namespace (default: from the kubeconfig context).", "str"),
    (("--server", "-s"), "server", "The address of the Kubernetes API server.", "str"),
    (("--token",), "token", "Bearer token for authentication.", "str"),
    (("--as",), "as_user", "User to impersonate.", "str"),
    (("--as-group",), "as_groups", "Group to impersonate (repeatable).", "multi"),
    (("--as-uid",), "as_uid", "UID to impersonate.", "str"),
    (("--certificate-authority",), "certificate_authority", "Path to a CA certificate file.", "str"),
    (("--client-certificate",), "client_certificate", "Path to a client certificate file.", "str"),
    (("--client-key",), "client_key", "Path to a client key file.", "str"),
    (
        ("--insecure-skip-tls-verify",),
        "insecure_skip_tls_verify",
        "Do not verify the server's certificate.",
        "flag",
    ),
    (("--tls-server-name",), "tls_server_name", "Server name for certificate validation.", "str"),
    (("--request-timeout",), "request_timeout", "Timeout per request (e.g. 30s, 1m).", "str"),
    (("--cache-dir",), "cache_dir", "Discovery cache directory.", "str"),
    (("--disable-compression",), "disable_compression", "Ask the server not to compress.", "flag"),
)


def _store(field: str, kind: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    def callback(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        if value is None or value == () or value is False:
            return
        state = _state(ctx)
        if kind == "multi":
            state.conn[field] = tuple(state.conn.get(field, ())) + tuple(value)
        else:
            state.conn[field] = value

    return callback


def _complete_namespaces(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[str]:
    from workload_map.cli.completion_support import namespaces

    return namespaces(ctx, incomplete)


def _complete_contexts(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    from workload_map.cli.completion_support import complete_context

    return complete_context(ctx, param, incomplete)


def connection_options(f: F) -> F:
    """The kubectl connection flags plus ``--definitions`` and ``--config``."""
    for flags, field, help_text, kind in reversed(_CONNECTION):
        extra: dict[str, Any] = {}
        if field == "namespace":
            extra["shell_complete"] = _complete_namespaces
        elif field == "context":
            extra["shell_complete"] = _complete_contexts
        if kind == "flag":
            opt = click.option(
                *flags,
                field + "_",
                is_flag=True,
                default=None,
                expose_value=False,
                callback=_store(field, kind),
                help=help_text,
            )
        elif kind == "multi":
            opt = click.option(
                *flags,
                field + "_",
                multiple=True,
                metavar="NAME",
                expose_value=False,
                callback=_store(field, kind),
                help=help_text,
            )
        else:
            opt = click.option(
                *flags,
                field + "_",
                metavar="VALUE",
                expose_value=False,
                callback=_store(field, kind),
                help=help_text,
                **extra,
            )
        f = opt(f)
    f = click.option(
        "--definitions",
        "definitions_",
        multiple=True,
        metavar="PATH",
        expose_value=False,
        callback=_store_definitions,
        help="Also load Karta definitions from this file or directory (repeatable); they win per type.",
    )(f)
    f = validate_option(f)
    f = click.option(
        "--config",
        "config_",
        metavar="PATH",
        expose_value=False,
        callback=_store_config,
        help="Config file (default $WMAP_CONFIG, ~/.config/wmap/config.yaml, ~/.karta/config.yaml).",
    )(f)
    return f


_BOOL_STRICT = ("1", "t", "T", "TRUE", "true", "True")
_BOOL_IGNORE = ("0", "f", "F", "FALSE", "false", "False")


def parse_field_validation(value: str) -> FieldValidation:
    """kubectl's ``--validate`` values: ``strict``, ``warn``, ``ignore`` (exactly), or a Go boolean
    (``true`` is strict, ``false`` ignore); anything else is kubectl's usage error."""
    if value == "warn":
        return "warn"
    if value == "ignore" or value in _BOOL_IGNORE:
        return "ignore"
    if value == "strict" or value in _BOOL_STRICT:
        return "strict"
    from workload_map import messages

    raise click.UsageError(messages.invalid_validate_option(value))


def _store_validate(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
    if value is not None:
        _state(ctx).field_validation = parse_field_validation(str(value))


def validate_option(f: F) -> F:
    """``--validate=strict|warn|ignore`` for definition files, as kubectl's flag (``--validate``
    alone is ``strict``, see cli.main)."""
    return click.option(
        "--validate",
        "validate_",
        metavar="MODE",
        expose_value=False,
        callback=_store_validate,
        help="Unknown fields and repeated keys in definition files: strict (or true, the default) "
        "makes them errors, warn warnings, ignore (or false) drops them silently.",
    )(f)


def _store_definitions(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
    if value:
        _state(ctx).definitions.extend(value)


def _store_config(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
    if value:
        _state(ctx).config = value


def invalid_output(value: str, formats: Sequence[str]) -> click.UsageError:
    return click.UsageError(
        f'invalid argument "{value}" for "-o, --output" flag: '
        f"invalid value: must be one of {', '.join(formats)}"
    )


def format_allowed(value: str, formats: Sequence[str]) -> bool:
    """``value`` is one of ``formats``; a format ending in ``=`` (``custom-columns=``) takes any
    argument after it, which the command checks (an empty one gets kubectl's message there)."""
    return value in formats or any(f.endswith("=") and value.startswith(f) for f in formats)


def output_option(formats: Sequence[str] = ALL_FORMATS) -> Callable[[F], F]:
    """``-o/--output`` accepting ``formats`` (anything else is a usage error, exit 2)."""

    def callback(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        if value is None:
            return
        if not format_allowed(value, formats):
            raise invalid_output(value, formats)
        _state(ctx).output = value

    def complete(_ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[str]:
        return [f for f in formats if f.startswith(incomplete)]

    def decorate(f: F) -> F:
        opt = click.option(
            "-o",
            "--output",
            "output_",
            metavar="FORMAT",
            expose_value=False,
            callback=callback,
            shell_complete=complete,
            help=f"Output format: {', '.join(formats)} (default table, or the config file's).",
        )
        return opt(f)

    return decorate


# --- config and output ---------------------------------------------------------------------------


def config_path(state: State, environ: dict[str, str] | None = None) -> tuple[Path | None, bool]:
    """The config file to read and whether it was named explicitly."""
    env = os.environ if environ is None else environ
    if state.config:
        return Path(state.config).expanduser(), True
    for name in CONFIG_ENVS:
        if env.get(name):
            return Path(env[name]).expanduser(), True
    for default in DEFAULT_CONFIGS:
        p = Path(default).expanduser()
        if p.is_file():
            return p, False
    return None, False


#: Largest config file read (its one key is ``output``).
MAX_CONFIG_FILE = 64 * 1024


def read_config(state: State) -> dict[str, Any]:
    path, explicit = config_path(state)
    if path is None:
        return {}
    if not path.exists():
        if explicit:
            raise CommandError(f"config file {path} does not exist", exit_codes.USAGE)
        return {}
    from workload_map.errors import DefinitionError
    from workload_map.model.inputs import read_text
    from workload_map.model.yamldocs import load_yaml_documents

    try:
        text = read_text(path, limit=MAX_CONFIG_FILE, label=f"config file {path}")
    except DefinitionError as exc:
        raise CommandError(str(exc), exit_codes.USAGE) from exc
    try:
        docs = load_yaml_documents(text, str(path))
    except DefinitionError as exc:
        raise CommandError(f"config file {path}: invalid YAML: {exc}", exit_codes.USAGE) from exc
    data = docs[0] if docs else None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise CommandError(f"config file {path}: expected a mapping with the key output", exit_codes.USAGE)
    unknown = sorted(str(k) for k in data if k not in CONFIG_KEYS)
    if unknown:
        raise CommandError(
            f"config file {path}: unknown key(s) {', '.join(unknown)} "
            '(the keys are "output" and "prometheus")',
            exit_codes.USAGE,
        )
    out = data.get("output")
    if out is not None and out not in ALL_FORMATS:
        raise CommandError(
            f'config file {path}: invalid output "{out}": must be one of {", ".join(ALL_FORMATS)}',
            exit_codes.USAGE,
        )
    return data


def resolve_output(state: State, formats: Sequence[str]) -> str:
    """``-o`` > ``$WMAP_OUTPUT``/``$KARTA_OUTPUT`` > config file > ``table``."""
    if state.output is not None:
        if not format_allowed(state.output, formats):
            raise invalid_output(state.output, formats)
        return state.output
    chosen: str | None = None
    for name in OUTPUT_ENVS:
        value = os.environ.get(name)
        if value:
            if value not in ALL_FORMATS:
                raise CommandError(
                    f'${name}: invalid output "{value}": must be one of {", ".join(ALL_FORMATS)}',
                    exit_codes.USAGE,
                )
            chosen = value
            break
    if chosen is None:
        chosen = read_config(state).get("output") or "table"
    if chosen not in formats:
        chosen = "table"
    return chosen


# --- session -------------------------------------------------------------------------------------


@dataclass
class ResolvedType:
    """A TYPE token resolved to a definition and (when the server serves it) a resource."""

    token: str
    entry: DefinitionEntry
    resource: APIResource | None

    @property
    def kind(self) -> str:
        gvk = self.entry.gvk
        return gvk.kind if gvk is not None else self.token

    @property
    def api_version(self) -> str:
        gvk = self.entry.gvk
        assert gvk is not None
        return gvk.api_version


class Session:
    """Lazily built connection pieces for one command run."""

    def __init__(self, state: State) -> None:
        self.state = state
        self._config: ClusterConfig | None = None
        self._client: KubeClient | None = None
        self._discovery: Discovery | None = None
        self._definitions: DefinitionSet | None = None
        self._claims: ClaimReader | None = None
        #: The cluster's Kartas listed ahead (``describe`` asks for them with the pods, before the
        #: definitions' machinery imports); called where :meth:`definitions` would list them.
        self.early_kartas: Callable[[], list[dict[str, Any]]] | None = None

    # connection
    def options(self, **overrides: Any) -> ConnectionOptions:
        from workload_map.cluster.kubeconfig import ConnectionOptions

        values = dict(self.state.conn)
        values.update(overrides)
        return ConnectionOptions(**values)

    def cluster_config(self) -> ClusterConfig:
        if self._config is None:
            from workload_map.cluster.kubeconfig import load_cluster_config

            self._config = load_cluster_config(self.options())
        return self._config

    def has_kubeconfig(self) -> bool:
        from workload_map.errors import ConfigurationError

        try:
            self.cluster_config()
        except ConfigurationError:
            return False
        return True

    def client(self) -> KubeClient:
        if self._client is None:
            from workload_map.cluster.client import KubeClient

            self._client = KubeClient(self.cluster_config(), on_warning=self.state.warn)
        return self._client

    def discovery(self) -> Discovery:
        if self._discovery is None:
            from workload_map.cluster.discovery import Discovery

            self._discovery = Discovery(self.client())
        return self._discovery

    def namespace(self) -> str:
        ns = self.state.conn.get("namespace")
        if ns:
            return str(ns)
        try:
            return self.cluster_config().namespace
        except Exception:
            return "default"

    def claims(self) -> ClaimReader:
        """The DRA claims and templates the resolver reads live (each once; what could not be
        read is said when the session closes)."""
        if self._claims is None:
            from workload_map.cluster.claims import ClaimReader

            self._claims = ClaimReader(self.client(), self.discovery())
        return self._claims

    def close(self) -> None:
        if self._claims is not None:
            for text in self._claims.warnings():
                self.state.warn(text)
        if self._client is not None:
            self._client.close()

    # definitions
    def definitions(self, *, cluster: bool = True) -> DefinitionSet:
        """Catalog + cluster Kartas (best effort) + ``--definitions``; warnings queued once."""
        if self._definitions is None:
            from workload_map.definitions_source import load_definition_set
            from workload_map.errors import ConfigurationError
            from workload_map.kube.objects import KARTA_PATH

            list_kartas: Callable[[], list[dict[str, Any]]] | None = None
            if cluster:
                try:
                    client = self.client()
                except ConfigurationError:
                    client = None
                if client is not None and self.early_kartas is not None:
                    list_kartas = self.early_kartas  # listed ahead (describe)
                elif client is not None:
                    c = client

                    def list_kartas() -> list[dict[str, Any]]:
                        return c.list_all(KARTA_PATH)

            self._definitions = load_definition_set(
                list_kartas=list_kartas,
                local_paths=list(self.state.definitions),
                field_validation=self.state.field_validation,
            )
            for w in self._definitions.warnings:
                if w.reason != "no_crd":  # said where it matters: missing_definitions_note()
                    self.state.warn(w.message)
        if not self._definitions.entries:
            raise NoDefinitionError(NO_DEFINITIONS)
        return self._definitions

    def missing_definitions_note(self) -> str | None:
        """Why the cluster's own definitions are missing, when that is because the Karta CRD is
        not installed: worth saying where a definition is looked for and not found, not on
        every command that finds its definition in the catalog."""
        from workload_map import messages

        if self._definitions is not None and any(w.reason == "no_crd" for w in self._definitions.warnings):
            return messages.KARTA_CRD_NOT_INSTALLED
        return None

    # type resolution: workload_map.type_words, the one resolver of every consumer
    def resolve_type(self, token: str) -> ResolvedType:
        from workload_map.cluster.discovery import discovery_error
        from workload_map.errors import ClusterError
        from workload_map.type_words import AmbiguousTypeWordError, offline_candidates, resolve_word

        defs = self.definitions()
        try:
            match = resolve_word(defs, token, self.discovery())
        except AmbiguousTypeWordError as exc:
            # Several covered types; prefer the one the server serves, if exactly one is.
            served = [e for e in offline_candidates(defs, token) if self._resource_for(e) is not None]
            if len(served) == 1:
                return ResolvedType(token, served[0], self._resource_for(served[0]))
            raise type_word_error(exc) from exc
        except ClusterError as exc:
            raise CommandError(discovery_error(token, exc)) from exc
        except WorkloadMapError as exc:
            raise type_word_error(exc, note=self.missing_definitions_note()) from exc
        from workload_map.cluster.discovery import APIResource

        given = match.served
        resource = given if isinstance(given, APIResource) else self._resource_for(match.entry)
        return ResolvedType(token, match.entry, resource)

    def _resource_for(self, entry: DefinitionEntry) -> APIResource | None:
        gvk = entry.gvk
        if gvk is None:
            return None
        return self.discovery().resource_for_kind(gvk.api_version, gvk.kind)


def definition_for_word(state: State, word: str) -> DefinitionEntry:
    """The merged set's definition for a type word or definition name (``explain``, ``test``):
    type-word errors as :func:`type_word_error` reports them."""
    from workload_map.type_words import resolve_word

    session = Session(state)
    try:
        defs = session.definitions()
    finally:
        session.close()
    try:
        return resolve_word(defs, word).entry
    except WorkloadMapError as exc:
        raise type_word_error(exc) from exc


def type_word_error(exc: Exception, *, note: str | None = None) -> CommandError:
    """A type-word failure as the CLI reports it: unknown or uncovered words exit 4 (no
    definition; ``note`` says why cluster definitions are missing, when known), ambiguous words
    and definitions claimed twice are usage errors (2)."""
    from workload_map.cli.main import PROG
    from workload_map.type_words import (
        AmbiguousTypeWordError,
        DefinitionClaimedTwiceError,
        NoDefinitionForTypeError,
        UnknownTypeWordError,
    )

    hint = f'Run "{PROG} definitions" to see what is available' + (f" ({note})" if note else "")
    if isinstance(exc, UnknownTypeWordError):
        more = f"; did you mean {' or '.join(repr(s) for s in exc.suggestions)}?" if exc.suggestions else "."
        return NoDefinitionError(f'no Karta definition covers "{exc.word}"{more} {hint}', word=exc.word)
    if isinstance(exc, NoDefinitionForTypeError):
        text = f'no Karta definition covers "{exc.word}" ({exc.gvk}). {hint}'
        return NoDefinitionError(text, word=exc.word)
    if isinstance(exc, AmbiguousTypeWordError | DefinitionClaimedTwiceError):
        return CommandError(str(exc), exit_codes.USAGE)
    return CommandError(str(exc))


def with_generic_hint(session: Session, exc: NoDefinitionError, command: str) -> NoDefinitionError:
    """``exc`` naming ``--generic`` when its word is a type the cluster serves (``get`` and
    ``describe`` read such a type without a definition; ``command``: the command line without
    the flag); ``exc`` itself otherwise."""
    from workload_map import messages

    word = exc.word
    if not word or "," in word:
        return exc
    try:
        served = bool(session.discovery().resolve_type(word))
    except (WorkloadMapError, OSError):
        return exc  # not served, or the cluster cannot say: the hint would mislead
    if not served:
        return exc
    hint = messages.generic_hint(word, f"{command} --generic")
    return NoDefinitionError(f"{exc.messages[0]}; {hint}", word=word)


def _claimed_twice(found: Sequence[DefinitionEntry]) -> CommandError:
    from workload_map.definitions_source import kind_version_group

    gvk = found[0].gvk
    assert gvk is not None
    names = ", ".join(f'"{e.name}"' for e in found)
    return CommandError(
        f"{len(found)} Karta definitions claim {kind_version_group(gvk)}: {names}; "
        "remove one from the cluster",
        exit_codes.USAGE,
    )


def no_definition_object(*, token: str | None = None, gvk: str | None = None) -> dict[str, str]:
    """The machine-readable no-definition error (``schemas/error.v1.json``)."""
    out: dict[str, str] = {"error": "no_definition_for_type"}
    if token is not None:
        out["type"] = token
    if gvk is not None:
        out["gvk"] = gvk
    out["message"] = "no Karta definition covers this workload type"
    out["hint"] = (
        '"wmap definitions" lists the types Karta covers; apply a Karta definition to the cluster '
        "to cover this one"
    )
    return out


def split_type_name(args: Sequence[str]) -> tuple[str, str | None, bool]:
    """``TYPE``, ``TYPE/NAME`` or ``TYPE NAME`` -> (type, name, slash form). Usage errors as spec 5.4."""
    if not args:
        raise click.UsageError("a TYPE is required, or --all-types")
    if len(args) > 2:
        raise click.UsageError(f"expected TYPE[/NAME] [NAME], got {len(args)} arguments")
    first = args[0]
    name: str | None = None
    slash = False
    type_token = first
    if "/" in first:
        type_token, _, name = first.partition("/")
        slash = True
        if not type_token:
            raise click.UsageError(f'TYPE is empty in "{first}"')
        if not name:
            raise click.UsageError(f'NAME is empty in "{first}"')
        if "/" in name:
            raise click.UsageError(f'NAME must not contain "/": "{name}"')
    elif not first:
        raise click.UsageError(f'TYPE is empty in "{first}"')
    if len(args) == 2:
        second = args[1]
        if name is not None:
            raise click.UsageError(f'NAME given twice: as "{name}" and as "{second}"')
        if not second:
            raise click.UsageError(f'NAME is empty in "{second}"')
        if "/" in second:
            raise click.UsageError(f'NAME must not contain "/": "{second}"')
        name = second
    return type_token, name, slash
