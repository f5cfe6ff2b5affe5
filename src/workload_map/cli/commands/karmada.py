"""``wmap karmada``: Karmada's resource interpreter as a webhook.

* ``wmap karmada webhook``: serve ``POST /interpret-karmada`` over TLS for every type a definition
  covers (catalog, ``--definitions`` files, the cluster's Kartas), on the bounded server the
  operator's admission webhooks use;
* ``wmap karmada config``: print the ``ResourceInterpreterWebhookConfiguration`` that sends
  Karmada's requests for those types to it (apply it to the Karmada API server).

The operator can serve the same endpoint (``wmap operator --karmada-interpreter``, Helm value
``operator.karmadaInterpreter``); docs/multicluster.md shows both set-ups.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import click

from workload_map.cli.common import Session, connection_options
from workload_map.cli.errors import CommandError
from workload_map.cli.main import get_state

CTX = {"help_option_names": ["-h", "--help"]}
#: How often the webhook re-reads the definitions (the cluster's Kartas change).
RELOAD_SECONDS = 60.0
#: A CA bundle larger than this is refused before it is read (a few certificates are kilobytes).
MAX_CA_BYTES = 1 << 20


@click.group(
    "karmada", short_help="Karmada resource interpreter: webhook and its configuration.", context_settings=CTX
)
def command() -> None:
    """Karmada's resource interpreter for every type a Karta definition covers."""


def _parse_service(value: str) -> tuple[str, str, int]:
    ns_name, sep, port = value.rpartition(":")
    if not sep:
        ns_name, port = value, "443"
    namespace, slash, name = ns_name.partition("/")
    if not slash or not namespace or not name or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise click.BadParameter(f"{value!r} is not NAMESPACE/NAME[:PORT]", param_hint="--service")
    return namespace, name, int(port)


def definition_index(session: Session, *, cluster: bool) -> Any:
    """The definitions the interpreter answers for, indexed by kind."""
    from workload_map.interpret import DefinitionIndex

    return DefinitionIndex(session.definitions(cluster=cluster))


@command.command("config", context_settings=CTX)
@click.option("--url", default=None, help="The webhook's https base URL (clientConfig.url).")
@click.option(
    "--service", default=None, metavar="NAMESPACE/NAME[:PORT]", help="The Service in front of the webhook."
)
@click.option(
    "--ca-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="PEM CA bundle that signed the webhook's certificate (clientConfig.caBundle).",
)
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    metavar="KIND[.GROUP]",
    help="Only these kinds (repeatable); default: every covered kind Karmada does not interpret natively.",
)
@click.option(
    "--include-native/--no-include-native",
    default=False,
    show_default=True,
    help="Also claim the kinds Karmada interprets itself (Deployment, StatefulSet, Job, Pod...).",
)
@click.option("--timeout", type=click.IntRange(1, 30), default=3, show_default=True, help="timeoutSeconds.")
@click.option("--name", default="wmap-interpreter", show_default=True, help="metadata.name.")
@click.option("-o", "--output", "output", type=click.Choice(["yaml", "json"]), default=None)
@connection_options
def config_command(
    url: str | None,
    service: str | None,
    ca_file: Path | None,
    kinds: tuple[str, ...],
    include_native: bool,
    timeout: int,
    name: str,
    output: str | None,
) -> None:
    """Print the ResourceInterpreterWebhookConfiguration: one rule per covered kind, every
    interpreter operation, v1alpha1 contexts. Apply it to the Karmada API server:

    \b
      wmap karmada config --service wmap-system/wmap-operator:443 --ca-file ca.crt \\
        | kubectl --kubeconfig karmada.config apply -f -
    """
    from workload_map.interpret import select, webhook_configuration
    from workload_map.views.machine import dump

    if (url is None) == (service is None):
        raise CommandError("give exactly one of --url and --service", 2)
    if url is not None and not url.startswith("https://"):
        raise CommandError(f"--url must be an https URL (Karmada calls webhooks over TLS): {url}", 2)
    svc = _parse_service(service) if service is not None else None
    ca_pem = None
    if ca_file is not None:
        from workload_map.errors import InputError
        from workload_map.model.inputs import read_bytes

        try:
            # the shared bounded reader: a FIFO or device is refused, a bundle read up to 1 MiB
            ca_pem = read_bytes(ca_file, limit=MAX_CA_BYTES, label=f"--ca-file {ca_file}")
        except InputError as exc:
            raise CommandError(str(exc), 2) from exc
        if b"-----BEGIN CERTIFICATE-----" not in ca_pem:
            raise CommandError(f"--ca-file {ca_file}: not a PEM certificate", 2)
    state = get_state()
    session = Session(state)
    index = definition_index(session, cluster=session.has_kubeconfig())
    chosen = select(index.covered(), kinds, include_native)
    if kinds:
        found = {c.kind.lower() for c in chosen} | {f"{c.kind}.{c.group}".lower() for c in chosen}
        missing = [k for k in kinds if k.lower() not in found]
        if missing:
            raise CommandError(f"no definition covers {', '.join(missing)}", 4)
    if not chosen:
        raise CommandError("no definition covers any kind to configure", 4)
    body = webhook_configuration(
        chosen, ca_pem=ca_pem, url=url, service=svc, timeout_seconds=timeout, name=name
    )
    fmt = output or state.output or "yaml"
    if fmt not in ("yaml", "json"):
        raise click.UsageError(f"unsupported output format {fmt!r} for karmada config (yaml or json)")
    click.echo(dump(body, fmt), nl=False)


@command.command("webhook", context_settings=CTX)
@click.option("--listen", default="0.0.0.0:8443", show_default=True, help="HOST:PORT of the HTTPS server.")
@click.option(
    "--cert-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("/tmp/wmap-karmada-certs"),
    show_default=True,
    help="Holds ca.crt, tls.crt and tls.key (generated when missing unless --no-generate-certs).",
)
@click.option("--cert-host", "cert_hosts", multiple=True, help="DNS name or IP of the serving certificate.")
@click.option("--generate-certs/--no-generate-certs", default=True, show_default=True)
@click.option(
    "--cluster-definitions/--no-cluster-definitions",
    default=True,
    show_default=True,
    help="Also answer for the cluster's Kartas (re-read every minute; needs a kubeconfig).",
)
@click.option("-v", "--verbose", count=True, help="More logging (-v info, -vv debug).")
@connection_options
def webhook_command(
    listen: str,
    cert_dir: Path,
    cert_hosts: tuple[str, ...],
    generate_certs: bool,
    cluster_definitions: bool,
    verbose: int,
) -> None:
    """Serve Karmada's resource interpreter webhook over TLS (POST /interpret-karmada; /healthz).
    Stops on SIGTERM/SIGINT."""
    from workload_map.logs import configure_logging
    from workload_map.operator.certs import CertFiles, ensure_certs
    from workload_map.operator.webhooks import HTTPServerThread

    configure_logging([logging.WARNING, logging.INFO, logging.DEBUG][min(verbose, 2)], sys.stderr)
    state = get_state()
    session = Session(state)
    cluster = cluster_definitions and session.has_kubeconfig()
    stop = threading.Event()
    interpreter = interpreter_for(session, stop, cluster=cluster)
    files = (
        ensure_certs(cert_dir, list(cert_hosts) or ["localhost"]) if generate_certs else CertFiles(cert_dir)
    )
    for path in (files.cert, files.key):
        if not path.is_file():
            raise CommandError(f"{path}: no such certificate file (use --generate-certs)", 2)
    try:
        server = HTTPServerThread(listen, cert=files.cert, key=files.key, interpreter=interpreter).start()
    except (OSError, ValueError) as exc:
        raise CommandError(f"cannot listen on {listen}: {exc}") from exc

    def on_signal(_signum: int, _frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    click.echo(f"wmap karmada webhook listening on {listen} (https, port {server.port})", err=True)
    stop.wait()
    server.stop()


def interpreter_for(session: Session, stop: threading.Event, *, cluster: bool = True) -> Any:
    """The webhook's request handler over the session's definitions; with ``cluster`` the
    cluster's Kartas are re-read every :data:`RELOAD_SECONDS` until ``stop`` is set."""
    holder = _Reloading(lambda: definition_index(session, cluster=cluster))
    if cluster:

        def reload_loop() -> None:
            while not stop.wait(RELOAD_SECONDS):
                holder.reload()

        threading.Thread(target=reload_loop, name="wmap-karmada-definitions", daemon=True).start()
    return holder.review


class _Reloading:
    """The current definition index; :meth:`reload` replaces it (a failed reload keeps the old)."""

    def __init__(self, load: Any) -> None:
        self._load = load
        self._index = load()

    def reload(self) -> None:
        from workload_map.errors import WorkloadMapError

        try:
            self._index = self._load()
        except WorkloadMapError as exc:
            logging.getLogger(__name__).warning("reloading definitions failed, keeping the old ones: %s", exc)

    def review(self, body: Any) -> dict[str, Any]:
        from workload_map.interpret import review

        return review(body, self._index)
