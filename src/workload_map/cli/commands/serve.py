"""``wmap serve``: the Workload Map REST API and web UI (see docs/server.md).

The server's own Kubernetes identity comes from the usual connection flags (kubeconfig, context,
token...) or the in-cluster service account; callers authenticate with their own bearer tokens.
Server dependencies (Starlette, uvicorn) are imported only when this command runs.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

import click

from workload_map.cli.common import Session, connection_options
from workload_map.cli.cost import prometheus_options
from workload_map.cli.errors import CommandError
from workload_map.cli.main import get_state

if TYPE_CHECKING:
    from workload_map.cluster.kubeconfig import ClusterConfig
    from workload_map.server.auth import User


def _split_listen(listen: str) -> tuple[str, int]:
    from workload_map.runtime.http import parse_listen

    try:
        return parse_listen(listen)
    except ValueError as exc:
        raise click.UsageError(f"--listen: {exc}") from None


@click.command(
    "serve",
    short_help="Serve the Workload Map REST API (and web UI).",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--listen", default=":8080", show_default=True, metavar="[HOST]:PORT", help="Address to serve on."
)
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False), help="TLS certificate (PEM).")
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False), help="TLS private key (PEM).")
@click.option(
    "--enable-writes",
    is_flag=True,
    help="Allow registering/deleting types and suspend/resume (still subject to the caller's RBAC).",
)
@click.option(
    "--local",
    is_flag=True,
    help="For your own machine: serve loopback only, and requests without a token act as your "
    "kubeconfig user (the UI needs no token then).",
)
@click.option("--log-level", default="info", show_default=True, help="debug, info, warning or error.")
@connection_options
@prometheus_options
def command(
    listen: str, tls_cert: str | None, tls_key: str | None, enable_writes: bool, local: bool, log_level: str
) -> None:
    """Serve /api/v1 (workload types, workloads, suspend/resume, pod groups, placement, live
    events, and with --prometheus each workload's GPU-hours and cost), /healthz, /readyz and
    /openapi.json. Every /api request needs
    "Authorization: Bearer <token>"; the token is checked with a TokenReview and each action
    with a SubjectAccessReview as that user. With --local, requests from this machine without a
    token act as the kubeconfig user (checked with SelfSubjectAccessReviews).

    \b
    Examples:
      wmap serve --local                      # http://127.0.0.1:8080, as you
      wmap serve --listen :8080 --enable-writes --tls-cert c.pem --tls-key k.pem
    """
    if bool(tls_cert) != bool(tls_key):
        raise click.UsageError("--tls-cert and --tls-key go together")
    host, port = _split_listen(listen)
    if local:
        from workload_map.server.local import is_loopback_host

        host = host or "127.0.0.1"
        if not is_loopback_host(host):
            raise click.UsageError(
                f'--local serves your kubeconfig credentials, so it listens on loopback only, not "{host}" '
                "(use --listen 127.0.0.1:PORT or localhost:PORT)"
            )
    try:
        import uvicorn

        from workload_map.server.app import ServerSettings, create_app
        from workload_map.server.limits import uvicorn_options
        from workload_map.server.state import ClusterState
    except ImportError as exc:
        raise CommandError(
            f"wmap serve needs the server extra ({exc.name} is missing): pip install 'workload-map[server]'"
        ) from exc
    import logging

    from workload_map.logs import configure_logging

    level = getattr(logging, log_level.upper(), None)
    if not isinstance(level, int):
        raise click.UsageError(f'invalid --log-level "{log_level}": use debug, info, warning or error')
    cli_state = get_state()
    local_paths = list(cli_state.definitions)
    if local_paths:
        from workload_map.definitions_source import local_entries

        # A bad file stops here, with its name, before anything listens.
        local_entries(local_paths, field_validation=cli_state.field_validation)
    from workload_map.cli.cost import prometheus_settings

    prometheus = prometheus_settings(cli_state)  # a bad URL or window stops here, before listening
    session = Session(cli_state)
    config = session.cluster_config()
    local_user = _local_user(config) if local else None
    listener = _bind(host, port)
    configure_logging(level)
    state = ClusterState(config, local_paths=local_paths, field_validation=cli_state.field_validation)
    settings = ServerSettings(enable_writes=enable_writes, local_user=local_user, prometheus=prometheus)
    app = create_app(state, settings)
    click.echo(
        f"wmap serve: listening on {'https' if tls_cert else 'http'}://{host}:{listener.getsockname()[1]} "
        f"(API server {config.server}; writes {'enabled' if enable_writes else 'disabled'}"
        + (f"; local: requests without a token act as {local_user.username}" if local_user else "")
        + (f"; definitions from {', '.join(local_paths)}" if local_paths else "")
        + (f"; cost from Prometheus {prometheus.shown}" if prometheus else "")
        + ")",
        err=True,
    )
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            log_config=None,  # our SafeFormatter handler (configure_logging) formats uvicorn's records too
            log_level=log_level.lower(),
            ssl_certfile=tls_cert,
            ssl_keyfile=tls_key,
            access_log=log_level.lower() == "debug",
            **uvicorn_options(settings.limits),
        )
    )
    server.run(sockets=[listener])


def _local_user(config: ClusterConfig) -> User:
    """Who ``--local`` requests without a token are: the kubeconfig's user, named as the
    kubeconfig names it (its groups are the API server's business: permissions are checked with
    SelfSubjectAccessReviews made with the same credentials)."""
    from workload_map.server.auth import User

    context = f" in context {config.context}" if config.context else ""
    return User(username=f"{config.user_name or 'kubeconfig user'}{context}", self_review=True)


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything says "listening" (a port in use is an error here)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise CommandError(f"wmap serve: cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock
