"""Webhook certificates (a private CA and a serving certificate) and the webhook configurations.

Certificates are made with the ``openssl`` command line tool (no new Python dependency): an EC
P-256 CA and a serving certificate whose subjectAltName lists the Service DNS names and/or IP
addresses the API server uses to call the webhook. :func:`ensure_certs` keeps existing files when
they are still valid for the wanted names for at least ``renew_before`` days.
"""

from __future__ import annotations

import base64
import ipaddress
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workload_map.crd.generate import CRD_NAME, PLURAL
from workload_map.kube.schedulers import KUEUE_QUEUE_LABEL
from workload_map.model.definition import KARTA_GROUP, KARTA_VERSION
from workload_map.resolve.policy import GROUP as POLICY_GROUP
from workload_map.resolve.policy import PLURAL as POLICY_PLURAL
from workload_map.resolve.policy import VERSION as POLICY_VERSION

CA_CERT = "ca.crt"
CA_KEY = "ca.key"
TLS_CERT = "tls.crt"
TLS_KEY = "tls.key"

VALIDATING_NAME = "wmap-karta-validating"
MUTATING_NAME = "wmap-karta-mutating"
VALIDATE_PATH = "/validate-karta"
MUTATE_PATH = "/mutate-karta"
VALIDATING_WEBHOOK = f"validate.{CRD_NAME}"
MUTATING_WEBHOOK = f"mutate.{CRD_NAME}"
#: WorkloadPolicy: validated in the same configuration as Kartas; applied by a configuration of
#: its own (enabled separately: it sees every workload of the configured groups).
VALIDATE_POLICY_PATH = "/validate-workloadpolicy"
MUTATE_WORKLOAD_PATH = "/mutate-workload"
POLICY_VALIDATING_WEBHOOK = f"validate.{POLICY_PLURAL}.{POLICY_GROUP}"
POLICY_MUTATING_NAME = "wmap-workload-policies"
POLICY_MUTATING_WEBHOOK = f"policies.{POLICY_GROUP}"
#: Kueue hold (``--kueue``): opted-in workloads are suspended at creation (operator/kueue_hold.py).
MUTATE_KUEUE_PATH = "/hold-kueue"
KUEUE_MUTATING_NAME = "wmap-kueue-hold"
KUEUE_MUTATING_WEBHOOK = f"kueue-hold.{POLICY_GROUP}"


class CertError(RuntimeError):
    """Certificates could not be generated."""


@dataclass(frozen=True)
class CertFiles:
    directory: Path

    @property
    def ca_cert(self) -> Path:
        return self.directory / CA_CERT

    @property
    def ca_key(self) -> Path:
        return self.directory / CA_KEY

    @property
    def cert(self) -> Path:
        return self.directory / TLS_CERT

    @property
    def key(self) -> Path:
        return self.directory / TLS_KEY

    def ca_pem(self) -> bytes:
        return self.ca_cert.read_bytes()


def _openssl(*args: str, cwd: Path) -> str:
    exe = shutil.which("openssl")
    if exe is None:
        raise CertError("the openssl command is needed to generate webhook certificates")
    proc = subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise CertError(f"openssl {args[0]} failed: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def _san(hosts: Sequence[str]) -> str:
    entries = []
    for host in hosts:
        try:
            ipaddress.ip_address(host)
            entries.append(f"IP:{host}")
        except ValueError:
            entries.append(f"DNS:{host}")
    return ",".join(entries)


def service_hosts(service: str, namespace: str) -> list[str]:
    """The names the API server may use for ``service.namespace`` (webhook ``clientConfig.service``)."""
    return [
        service,
        f"{service}.{namespace}",
        f"{service}.{namespace}.svc",
        f"{service}.{namespace}.svc.cluster.local",
    ]


def _cert_hosts(cert: Path, cwd: Path) -> set[str]:
    text = _openssl("x509", "-in", str(cert), "-noout", "-ext", "subjectAltName", cwd=cwd)
    hosts: set[str] = set()
    for part in text.replace("\n", ",").split(","):
        part = part.strip()
        if part.startswith("DNS:"):
            hosts.add(part[4:])
        elif part.startswith("IP Address:"):
            hosts.add(part[len("IP Address:") :])
    return hosts


def _still_valid(cert: Path, seconds: int, cwd: Path) -> bool:
    exe = shutil.which("openssl")
    if exe is None:
        return False
    proc = subprocess.run(
        [exe, "x509", "-in", str(cert), "-noout", "-checkend", str(seconds)],
        cwd=cwd,
        capture_output=True,
        check=False,
    )
    return proc.returncode == 0


def generate_certs(
    directory: Path, hosts: Sequence[str], *, days: int = 365, common_name: str = "wmap-webhook"
) -> CertFiles:
    """Write a new CA and serving certificate for ``hosts`` into ``directory`` (keys mode 0600)."""
    if not hosts:
        raise CertError("at least one host name or IP address is needed for the serving certificate")
    directory.mkdir(parents=True, exist_ok=True)
    files = CertFiles(directory)
    with tempfile.TemporaryDirectory(prefix="wmap-certs-") as tmp:
        work = Path(tmp)
        _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ca.key", cwd=work)
        _openssl(
            "req", "-x509", "-new", "-key", "ca.key", "-sha256", "-days", str(days + 365),
            "-subj", "/CN=wmap-webhook-ca", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-out", "ca.crt", cwd=work,
        )  # fmt: skip
        _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "tls.key", cwd=work)
        _openssl("req", "-new", "-key", "tls.key", "-subj", f"/CN={common_name}", "-out", "tls.csr", cwd=work)
        (work / "ext.cnf").write_text(
            "basicConstraints=CA:FALSE\n"
            "keyUsage=critical,digitalSignature,keyEncipherment\n"
            "extendedKeyUsage=serverAuth\n"
            f"subjectAltName={_san(hosts)}\n"
        )
        _openssl(
            "x509", "-req", "-in", "tls.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-sha256", "-days", str(days), "-extfile", "ext.cnf", "-out", "tls.crt", cwd=work,
        )  # fmt: skip
        for name in (CA_CERT, CA_KEY, TLS_CERT, TLS_KEY):
            target = directory / name
            tmp_target = directory / f".{name}.tmp"
            shutil.copyfile(work / name, tmp_target)
            os.chmod(tmp_target, 0o600 if name.endswith(".key") else 0o644)
            os.replace(tmp_target, target)
    return files


def ensure_certs(
    directory: Path, hosts: Sequence[str], *, days: int = 365, renew_before_days: int = 30
) -> CertFiles:
    """Reuse the certificates in ``directory`` when they cover ``hosts`` and stay valid for
    ``renew_before_days``; otherwise generate new ones."""
    files = CertFiles(directory)
    if all(p.is_file() for p in (files.ca_cert, files.cert, files.key)):
        try:
            if set(hosts) <= _cert_hosts(files.cert, directory) and _still_valid(
                files.cert, renew_before_days * 86400, directory
            ):
                return files
        except CertError:
            pass
    return generate_certs(directory, hosts, days=days)


# --------------------------------------------------------------------- webhook configurations


def _client_config(
    ca_pem: bytes, path: str, *, url: str | None, service: tuple[str, str, int] | None
) -> dict[str, Any]:
    config: dict[str, Any] = {"caBundle": base64.b64encode(ca_pem).decode("ascii")}
    if url is not None:
        config["url"] = url.rstrip("/") + path
    elif service is not None:
        namespace, name, port = service
        config["service"] = {"namespace": namespace, "name": name, "path": path, "port": port}
    else:
        raise ValueError("a webhook needs a url or a service")
    return config


def _rules(operations: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "apiGroups": [KARTA_GROUP],
            "apiVersions": [KARTA_VERSION],
            "operations": operations,
            "resources": [PLURAL],
            "scope": "Cluster",
        }
    ]


def webhook_configurations(
    ca_pem: bytes,
    *,
    url: str | None = None,
    service: tuple[str, str, int] | None = None,
    failure_policy: str = "Fail",
    timeout_seconds: int = 10,
    labels: dict[str, str] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(ValidatingWebhookConfiguration, MutatingWebhookConfiguration), admissionregistration v1.
    ``url`` (e.g. ``https://127.0.0.1:9443``) or ``service`` ``(namespace, name, port)``."""
    meta_labels = {"app.kubernetes.io/name": "wmap-operator", **(labels or {})}
    validating = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": VALIDATING_NAME, "labels": dict(meta_labels)},
        "webhooks": [
            {
                "name": VALIDATING_WEBHOOK,
                "admissionReviewVersions": ["v1"],
                "clientConfig": _client_config(ca_pem, VALIDATE_PATH, url=url, service=service),
                "rules": _rules(["CREATE", "UPDATE"]),
                "failurePolicy": failure_policy,
                "sideEffects": "NoneOnDryRun",
                "timeoutSeconds": timeout_seconds,
                "matchPolicy": "Equivalent",
            },
            {
                "name": POLICY_VALIDATING_WEBHOOK,
                "admissionReviewVersions": ["v1"],
                "clientConfig": _client_config(ca_pem, VALIDATE_POLICY_PATH, url=url, service=service),
                "rules": [
                    {
                        "apiGroups": [POLICY_GROUP],
                        "apiVersions": [POLICY_VERSION],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": [POLICY_PLURAL],
                        "scope": "Cluster",
                    }
                ],
                "failurePolicy": failure_policy,
                "sideEffects": "None",
                "timeoutSeconds": timeout_seconds,
                "matchPolicy": "Equivalent",
            },
        ],
    }
    mutating = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": MUTATING_NAME, "labels": dict(meta_labels)},
        "webhooks": [
            {
                "name": MUTATING_WEBHOOK,
                "admissionReviewVersions": ["v1"],
                "clientConfig": _client_config(ca_pem, MUTATE_PATH, url=url, service=service),
                "rules": _rules(["CREATE"]),
                "failurePolicy": failure_policy,
                "sideEffects": "None",
                "timeoutSeconds": timeout_seconds,
                "matchPolicy": "Equivalent",
                "reinvocationPolicy": "Never",
            }
        ],
    }
    return validating, mutating


def policy_webhook_configuration(
    ca_pem: bytes,
    groups: Sequence[str],
    *,
    url: str | None = None,
    service: tuple[str, str, int] | None = None,
    failure_policy: str = "Ignore",
    timeout_seconds: int = 5,
    operations: Sequence[str] = ("CREATE",),
    namespace_selector: dict[str, Any] | None = None,
    object_selector: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The MutatingWebhookConfiguration that sends every workload of ``groups`` to
    ``/mutate-workload`` (WorkloadPolicy). ``Ignore`` by default: an operator that is down lets
    workloads through unchanged rather than blocking them."""
    return _workload_webhook_configuration(
        POLICY_MUTATING_NAME,
        POLICY_MUTATING_WEBHOOK,
        MUTATE_WORKLOAD_PATH,
        ca_pem,
        groups,
        url=url,
        service=service,
        failure_policy=failure_policy,
        timeout_seconds=timeout_seconds,
        operations=operations,
        namespace_selector=namespace_selector,
        object_selector=object_selector,
        labels=labels,
    )


def kueue_webhook_configuration(
    ca_pem: bytes,
    groups: Sequence[str],
    *,
    url: str | None = None,
    service: tuple[str, str, int] | None = None,
    failure_policy: str = "Ignore",
    timeout_seconds: int = 5,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The MutatingWebhookConfiguration that sends each CREATE of a workload of ``groups`` that
    carries Kueue's queue-name label to ``/hold-kueue`` (suspended at creation). ``Ignore`` by
    default: while the operator is down a workload is created unsuspended, and the Kueue
    controller suspends it when it sees it."""
    return _workload_webhook_configuration(
        KUEUE_MUTATING_NAME,
        KUEUE_MUTATING_WEBHOOK,
        MUTATE_KUEUE_PATH,
        ca_pem,
        groups,
        url=url,
        service=service,
        failure_policy=failure_policy,
        timeout_seconds=timeout_seconds,
        operations=("CREATE",),
        object_selector={"matchExpressions": [{"key": KUEUE_QUEUE_LABEL, "operator": "Exists"}]},
        labels=labels,
    )


def _workload_webhook_configuration(
    name: str,
    webhook_name: str,
    path: str,
    ca_pem: bytes,
    groups: Sequence[str],
    *,
    url: str | None,
    service: tuple[str, str, int] | None,
    failure_policy: str,
    timeout_seconds: int,
    operations: Sequence[str],
    namespace_selector: dict[str, Any] | None = None,
    object_selector: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One mutating webhook for every resource of the workload ``groups``."""
    webhook: dict[str, Any] = {
        "name": webhook_name,
        "admissionReviewVersions": ["v1"],
        "clientConfig": _client_config(ca_pem, path, url=url, service=service),
        "rules": [
            {
                "apiGroups": sorted(set(groups)),
                "apiVersions": ["*"],
                "operations": list(operations),
                "resources": ["*"],
                "scope": "*",
            }
        ],
        "failurePolicy": failure_policy,
        "sideEffects": "None",
        "timeoutSeconds": timeout_seconds,
        "matchPolicy": "Equivalent",
        "reinvocationPolicy": "IfNeeded",
    }
    if namespace_selector:
        webhook["namespaceSelector"] = namespace_selector
    if object_selector:
        webhook["objectSelector"] = object_selector
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {
            "name": name,
            "labels": {"app.kubernetes.io/name": "wmap-operator", **(labels or {})},
        },
        "webhooks": [webhook],
    }
