"""``wmap serve``: the Workload Map REST API and web UI (see docs/server.md).

The server's own Kubernetes identity comes from the usual connection flags (kubeconfig, context,
token...) or the in-cluster service account; callers authenticate with their own bearer tokens.
Server dependencies (Starlette, uvicorn) are imported only when this command runs.
"""

from __future__ import annotations

import click

from workload_map.cli.common import Session, connection_options
from workload_map.cli.errors import CommandError
from workload_map.cli.main import get_state


def _split_listen(listen: str) -> tuple[str, int]:
    host, sep, port = listen.rpartition(":")
    if not sep:
        host, port = "", listen
    host = host.strip("[]") or "0.0.0.0"
    try:
        number = int(port)
    except ValueError as exc:
        raise click.UsageError(f'invalid --listen "{listen}": expected [HOST]:PORT') from exc
    if not 0 <= number <= 65535:
        raise click.UsageError(f'invalid --listen "{listen}": port out of range')
    return host, number


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
@click.option("--log-level", default="info", show_default=True, help="debug, info, warning or error.")
@connection_options
def command(
    listen: str, tls_cert: str | None, tls_key: str | None, enable_writes: bool, log_level: str
) -> None:
    """Serve /api/v1 (workload types, workloads, suspend/resume, pod groups, placement, live
    events), /healthz, /readyz and /openapi.json. Every /api request needs
    "Authorization: Bearer <token>"; the token is checked with a TokenReview and each action
    with a SubjectAccessReview as that user."""
    if bool(tls_cert) != bool(tls_key):
        raise click.UsageError("--tls-cert and --tls-key go together")
    host, port = _split_listen(listen)
    try:
        import uvicorn

        from workload_map.server.app import ServerSettings, create_app
        from workload_map.server.limits import uvicorn_options
        from workload_map.server.state import ClusterState
    except ImportError as exc:
        raise CommandError(
            f"wmap serve needs the server extra ({exc.name} is missing): pip install 'workload-map[server]'"
        ) from exc
    session = Session(get_state())
    config = session.cluster_config()
    state = ClusterState(config)
    settings = ServerSettings(enable_writes=enable_writes)
    app = create_app(state, settings)
    click.echo(
        f"wmap serve: listening on {'https' if tls_cert else 'http'}://{host}:{port} "
        f"(API server {config.server}; writes {'enabled' if enable_writes else 'disabled'})",
        err=True,
    )
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=log_level.lower(),
        ssl_certfile=tls_cert,
        ssl_keyfile=tls_key,
        access_log=log_level.lower() == "debug",
        **uvicorn_options(settings.limits),
    )
