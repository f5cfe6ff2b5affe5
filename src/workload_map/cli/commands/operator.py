"""``wmap operator``: run the Karta operator (reconciler + admission webhooks), and
``wmap operator certs``: generate webhook certificates (and optionally store them in a Secret and
patch the webhook configurations' ``caBundle``), e.g. from a Kubernetes Job.

The operator's namespace (leader Lease, GVK claims) is ``-n``, else ``$POD_NAMESPACE``, else the
kubeconfig context's namespace.
"""

from __future__ import annotations

import base64
import logging
import os
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Any

import click

from workload_map.cli.common import connection_options

CTX = {"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "WMAP_OPERATOR"}


def _session() -> Any:
    from workload_map.cli.common import Session
    from workload_map.cli.main import get_state

    return Session(get_state())


def _namespace(session: Any) -> str:
    given = session.state.conn.get("namespace")
    return str(given or os.environ.get("POD_NAMESPACE") or session.namespace())


def _hosts_from_url(url: str | None) -> list[str]:
    if not url:
        return []
    from urllib.parse import urlparse

    host = urlparse(url).hostname
    return [host] if host else []


@click.group(
    "operator",
    invoke_without_command=True,
    short_help="Run the Karta operator and admission webhooks.",
    context_settings=CTX,
)
@connection_options
@click.option("--identity", default=None, help="Leader election identity (default: host name + pid).")
@click.option(
    "--webhook-listen",
    default="0.0.0.0:9443",
    show_default=True,
    help="HOST:PORT for the HTTPS admission webhooks ('' disables them).",
)
@click.option(
    "--webhook-url",
    default=None,
    help="Register the webhook configurations with this base URL (clientConfig.url) at start.",
)
@click.option(
    "--webhook-service",
    default=None,
    metavar="NAMESPACE/NAME:PORT",
    help="Register the webhook configurations with this Service (clientConfig.service) at start.",
)
@click.option(
    "--cert-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("/tmp/wmap-webhook-certs"),
    show_default=True,
    help="Holds ca.crt, tls.crt and tls.key (generated when missing unless --no-generate-certs).",
)
@click.option(
    "--cert-host", "cert_hosts", multiple=True, help="Extra DNS name or IP of the serving certificate."
)
@click.option("--generate-certs/--no-generate-certs", default=True, show_default=True)
@click.option(
    "--health-listen", default="0.0.0.0:8081", show_default=True, help="HOST:PORT for /healthz, /readyz."
)
@click.option("--leader-elect/--no-leader-elect", default=True, show_default=True)
@click.option("--lease-name", default="wmap-operator-leader", show_default=True)
@click.option("--lease-duration", type=float, default=15.0, show_default=True)
@click.option("--renew-deadline", type=float, default=10.0, show_default=True)
@click.option("--retry-period", type=float, default=2.0, show_default=True)
@click.option("--workers", type=int, default=4, show_default=True)
@click.option("--validation-timeout", type=float, default=10.0, show_default=True)
@click.option("--claim-grace", type=float, default=15.0, show_default=True)
@click.option("--resync", type=float, default=300.0, show_default=True)
@click.option("--failure-policy", type=click.Choice(["Fail", "Ignore"]), default="Fail", show_default=True)
@click.option("--reconcile/--no-reconcile", default=True, show_default=True, help="Run the reconciler.")
@click.option(
    "--kueue/--no-kueue",
    default=False,
    show_default=True,
    help="Kueue admission: hold workloads labelled kueue.x-k8s.io/queue-name suspended until their "
    "Kueue Workload is admitted, then write its flavors into their pod templates and resume them "
    '(docs/gangs.md "Kueue admission"). Runs on the leader (needs --reconcile); with the '
    "webhooks, /hold-kueue also suspends them at creation.",
)
@click.option(
    "--kueue-type",
    "kueue_types",
    multiple=True,
    metavar="KIND[.GROUP]",
    help="A type the Kueue admission watches (repeatable; default: every catalog type whose "
    "definition can suspend it). Leave out the types Kueue's own integrations manage.",
)
@click.option(
    "--policies/--no-policies",
    default=False,
    show_default=True,
    help="Serve /mutate-workload: apply WorkloadPolicy objects to workloads at admission.",
)
@click.option(
    "--policy-group",
    "policy_groups",
    multiple=True,
    metavar="GROUP",
    help="API group whose workloads go to the policy webhook (repeatable; default: the catalog's).",
)
@click.option(
    "--policy-failure-policy", type=click.Choice(["Ignore", "Fail"]), default="Ignore", show_default=True
)
@click.option("--policy-timeout", type=click.IntRange(1, 30), default=5, show_default=True)
@click.option(
    "--policy-operations",
    default="CREATE",
    show_default=True,
    metavar="CREATE[,UPDATE]",
    help="Admission operations sent to the policy webhook.",
)
@click.option(
    "--karmada-interpreter/--no-karmada-interpreter",
    default=False,
    show_default=True,
    help="Also serve Karmada's resource interpreter (POST /interpret-karmada) on the webhook port.",
)
@click.option(
    "--gangs/--no-gangs",
    default=False,
    show_default=True,
    help="Run the gang controller: keep each opted-in workload's scheduler objects (docs/gangs.md).",
)
@click.option(
    "--gang-scheduler",
    type=click.Choice(["kai", "volcano", "coscheduling", "workload-api"]),
    default="volcano",
    show_default=True,
    help="The scheduler whose gang objects the controller keeps.",
)
@click.option(
    "--gang-namespace",
    "gang_namespaces",
    multiple=True,
    metavar="NS[,NS]",
    help="Namespace whose workloads opt in (repeatable; default: every namespace).",
)
@click.option(
    "--gang-selector", default="", metavar="SELECTOR", help="Label selector the workloads must match."
)
@click.option(
    "--gang-scheduler-name", default=None, help="schedulerName for the pods (default: the scheduler's)."
)
@click.option("--gang-workers", type=int, default=4, show_default=True)
@click.option("-v", "--verbose", count=True, help="More logging (-v info, -vv debug).")
@click.pass_context
def command(
    ctx: click.Context,
    identity: str | None,
    webhook_listen: str,
    webhook_url: str | None,
    webhook_service: str | None,
    cert_dir: Path,
    cert_hosts: tuple[str, ...],
    generate_certs: bool,
    health_listen: str,
    leader_elect: bool,
    lease_name: str,
    lease_duration: float,
    renew_deadline: float,
    retry_period: float,
    workers: int,
    validation_timeout: float,
    claim_grace: float,
    resync: float,
    failure_policy: str,
    reconcile: bool,
    kueue: bool,
    kueue_types: tuple[str, ...],
    policies: bool,
    policy_groups: tuple[str, ...],
    policy_failure_policy: str,
    policy_timeout: int,
    policy_operations: str,
    karmada_interpreter: bool,
    gangs: bool,
    gang_scheduler: str,
    gang_namespaces: tuple[str, ...],
    gang_selector: str,
    gang_scheduler_name: str | None,
    gang_workers: int,
    verbose: int,
) -> None:
    """Run the Karta operator: reconcile Kartas (conditions Validated, CRDExists, Ready; index
    labels; GVK claims) while leader, and serve the admission webhooks on every replica. Stops
    cleanly on SIGTERM/SIGINT (releases the leader Lease)."""
    if ctx.invoked_subcommand is not None:
        return
    from workload_map.logs import configure_logging

    configure_logging([logging.WARNING, logging.INFO, logging.DEBUG][min(verbose, 2)], sys.stderr)
    from workload_map.operator.certs import CertFiles, ensure_certs, service_hosts, webhook_configurations
    from workload_map.operator.claims import ClaimStore
    from workload_map.operator.engine import Engine
    from workload_map.operator.webhooks import AdmissionHandler, HTTPServerThread

    gang_config = None
    if gangs:
        from workload_map.operator.gangs_config import GangConfig, GangConfigError

        if not reconcile:
            raise click.UsageError("--gangs needs the reconciler (drop --no-reconcile)")
        try:
            gang_config = GangConfig.build(
                gang_scheduler, gang_namespaces, gang_selector, gang_scheduler_name, gang_workers
            )
        except GangConfigError as exc:
            raise click.UsageError(str(exc)) from None
    session = _session()
    client = session.client()
    namespace = _namespace(session)
    identity = identity or f"{socket.gethostname()}-{os.getpid()}"
    service: tuple[str, str, int] | None = None
    hosts = list(cert_hosts) + _hosts_from_url(webhook_url)
    if webhook_service:
        ns_name, _, port = webhook_service.rpartition(":")
        svc_ns, _, svc_name = ns_name.partition("/")
        service = (svc_ns, svc_name, int(port or 443))
        hosts += service_hosts(svc_name, svc_ns)

    stop = threading.Event()
    engine: Engine | None = None
    if reconcile:
        engine = Engine(
            client,
            namespace,
            identity,
            leader_election=leader_elect,
            lease_name=lease_name,
            lease_duration=lease_duration,
            renew_deadline=renew_deadline,
            retry_period=retry_period,
            workers=workers,
            validation_timeout=validation_timeout,
            claim_grace=claim_grace,
            resync=resync,
            gangs=gang_config,
        )

    kueue_admission = _kueue_admission(client, engine, kueue_types) if kueue else None

    operations = [op.strip().upper() for op in policy_operations.split(",") if op.strip()]
    if not operations or any(op not in ("CREATE", "UPDATE") for op in operations):
        raise click.UsageError("--policy-operations takes CREATE, UPDATE or CREATE,UPDATE")
    policy_source = None
    if policies and webhook_listen:
        from workload_map.operator.policies import PolicySource

        policy_source = PolicySource(client).start()

    def ready() -> bool:
        return (
            (engine is None or engine.synced())
            and (policy_source is None or policy_source.synced())
            and (kueue_admission is None or kueue_admission.synced())
        )

    servers: list[HTTPServerThread] = []
    if webhook_listen:
        files = ensure_certs(cert_dir, hosts or ["localhost"]) if generate_certs else CertFiles(cert_dir)
        claims = ClaimStore(client, namespace, grace=claim_grace)
        interpreter = None
        if karmada_interpreter:
            from workload_map.cli.commands.karmada import interpreter_for

            interpreter = interpreter_for(session, stop)
        servers.append(
            HTTPServerThread(
                webhook_listen,
                admission=AdmissionHandler(
                    claims, _policy_admission(policy_source), _kueue_hold(kueue_admission)
                ),
                cert=files.cert,
                key=files.key,
                ready=ready,
                interpreter=interpreter,
            ).start()
        )
        if webhook_url or service:
            validating, mutating = webhook_configurations(
                files.ca_pem(), url=webhook_url, service=service, failure_policy=failure_policy
            )
            configs = [
                (validating, "validatingwebhookconfigurations"),
                (mutating, "mutatingwebhookconfigurations"),
            ]
            if policy_source is not None:
                from workload_map.operator.certs import policy_webhook_configuration

                groups = list(policy_groups) or _catalog_groups()
                policy_config = policy_webhook_configuration(
                    files.ca_pem(),
                    groups,
                    url=webhook_url,
                    service=service,
                    failure_policy=policy_failure_policy,
                    timeout_seconds=policy_timeout,
                    operations=operations,
                )
                configs.append((policy_config, "mutatingwebhookconfigurations"))
            if kueue_admission is not None:
                from workload_map.operator.certs import kueue_webhook_configuration

                kueue_groups = sorted({e.gvk.group for e in kueue_admission.entries if e.gvk and e.gvk.group})
                kueue_config = kueue_webhook_configuration(
                    files.ca_pem(), kueue_groups, url=webhook_url, service=service
                )
                configs.append((kueue_config, "mutatingwebhookconfigurations"))
            for body, plural in configs:
                name = body["metadata"]["name"]
                client.patch(
                    f"/apis/admissionregistration.k8s.io/v1/{plural}/{name}",
                    body,
                    patch_type="apply",
                    field_manager="wmap-operator",
                    force=True,
                )
    if health_listen:
        servers.append(HTTPServerThread(health_listen, ready=ready).start())
    if engine is not None:
        engine.start()
    if kueue_admission is not None:
        kueue_admission.start()

    def on_signal(_signum: int, _frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    click.echo(f"wmap operator {identity} running (namespace {namespace})", err=True)
    while not stop.wait(1.0):
        if engine is not None and not engine.alive():
            click.echo("error: an informer thread died; exiting", err=True)
            break
        if kueue_admission is not None and not kueue_admission.alive():
            click.echo("error: a Kueue admission informer thread died; exiting", err=True)
            break
    if kueue_admission is not None:
        kueue_admission.stop()
    if engine is not None:
        engine.stop()
    if policy_source is not None:
        policy_source.stop()
    for server in servers:
        server.stop()


def _kueue_admission(client: Any, engine: Any, types: tuple[str, ...]) -> Any:
    """The Kueue admission controller, acting while this replica leads (the reconciler's lease)."""
    from workload_map.errors import WorkloadMapError
    from workload_map.operator.kueue import KueueAdmission, admission_entries

    if engine is None:
        raise click.UsageError("--kueue needs --reconcile (it acts on the leader only)")
    try:
        entries = admission_entries(types)
    except WorkloadMapError as exc:
        raise click.UsageError(str(exc)) from exc
    return KueueAdmission(client, entries, leading=engine.is_leader)


def _kueue_hold(controller: Any) -> Any:
    """The webhook side of ``--kueue``: the controller's types suspended at creation."""
    if controller is None:
        return None
    from workload_map.operator.kueue_hold import KueueHold

    return KueueHold(controller.entries)


def _policy_admission(source: Any) -> Any:
    if source is None:
        return None
    from workload_map.operator.policies import PolicyAdmission

    return PolicyAdmission(source)


def _catalog_groups() -> list[str]:
    """The API groups of the catalog's workload kinds (what the policy webhook watches by default)."""
    from workload_map.definitions_source import catalog_entries

    # Not the core group: it would send every Service, ConfigMap and Secret to the webhook.
    return sorted({e.gvk.group for e in catalog_entries() if e.gvk is not None and e.gvk.group})


@command.command("certs", context_settings=CTX)
@click.option("--cert-dir", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option("--service", "service_name", default=None, help="Service name (adds its cluster DNS names).")
@click.option("--service-namespace", default=None, help="Namespace of the Service (default: the operator's).")
@click.option("--host", "hosts", multiple=True, help="Extra DNS name or IP address.")
@click.option("--days", type=int, default=365, show_default=True)
@click.option(
    "--secret", default=None, help="Store tls.crt, tls.key and ca.crt in this Secret (operator namespace)."
)
@click.option(
    "--patch-webhooks/--no-patch-webhooks",
    default=False,
    help="Set caBundle of the wmap webhook configurations to the generated CA.",
)
def certs_command(
    cert_dir: Path,
    service_name: str | None,
    service_namespace: str | None,
    hosts: tuple[str, ...],
    days: int,
    secret: str | None,
    patch_webhooks: bool,
) -> None:
    """Generate (or reuse, when still valid) the webhook CA and serving certificate."""
    from workload_map.operator.certs import MUTATING_NAME, VALIDATING_NAME, ensure_certs, service_hosts

    names = list(hosts)
    session = _session() if (secret or patch_webhooks or service_name) else None
    namespace = _namespace(session) if session is not None else "default"
    if service_name:
        names += service_hosts(service_name, service_namespace or namespace)
    files = ensure_certs(cert_dir, names, days=days)
    click.echo(f"certificates in {cert_dir}", err=True)
    if session is None:
        return
    client = session.client()
    if secret:
        body = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": secret, "namespace": namespace},
            "type": "kubernetes.io/tls",
            "data": {
                "tls.crt": base64.b64encode(files.cert.read_bytes()).decode(),
                "tls.key": base64.b64encode(files.key.read_bytes()).decode(),
                "ca.crt": base64.b64encode(files.ca_cert.read_bytes()).decode(),
            },
        }
        client.patch(
            f"/api/v1/namespaces/{namespace}/secrets/{secret}",
            body,
            patch_type="apply",
            field_manager="wmap-certs",
            force=True,
        )
        click.echo(f"stored in Secret {namespace}/{secret}", err=True)
    if patch_webhooks:
        bundle = base64.b64encode(files.ca_pem()).decode()
        for plural, name in (
            ("validatingwebhookconfigurations", VALIDATING_NAME),
            ("mutatingwebhookconfigurations", MUTATING_NAME),
        ):
            path = f"/apis/admissionregistration.k8s.io/v1/{plural}/{name}"
            current = client.get(path)
            ops = [
                {"op": "replace", "path": f"/webhooks/{i}/clientConfig/caBundle", "value": bundle}
                for i in range(len(current.get("webhooks") or []))
            ]
            client.patch(path, ops, patch_type="json")
            click.echo(f"patched caBundle of {plural}/{name}", err=True)
