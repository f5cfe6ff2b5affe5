"""Build the ``ssl.SSLContext`` for a ClusterConfig, in memory where Python allows it.

CA bundles (file or ``certificate-authority-data``) are loaded with ``load_verify_locations(cadata=...)``.
Python can only load a client certificate and key from files, so ``*-data`` values (and PEMs returned by
an exec plugin) are written to a private temporary directory (mode 0700, files 0600), loaded, and deleted
immediately: nothing is left on disk after this function returns.
"""

from __future__ import annotations

import os
import shutil
import ssl
import tempfile

from workload_map.cluster.kubeconfig import ClusterConfig, read_local_file
from workload_map.errors import ConfigurationError

__all__ = ["build_ssl_context", "load_client_cert"]


def _load_ca(ctx: ssl.SSLContext, pem: bytes, origin: str) -> None:
    try:
        ctx.load_verify_locations(cadata=pem.decode("ascii", errors="replace"))
    except (ssl.SSLError, ValueError) as exc:
        raise ConfigurationError(
            f"the certificate authority ({origin}) is not a valid PEM bundle: {exc}"
        ) from None


def load_client_cert(
    ctx: ssl.SSLContext, cert_pem: bytes, key_pem: bytes, origin: str = "kubeconfig"
) -> None:
    """Load a client certificate + key given as PEM bytes through short-lived private files."""
    tmp = tempfile.mkdtemp(prefix="wmap-tls-")
    try:
        os.chmod(tmp, 0o700)
        cert_path = os.path.join(tmp, "client.crt")
        key_path = os.path.join(tmp, "client.key")
        for path, data in ((cert_path, cert_pem), (key_path, key_pem)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
        try:
            ctx.load_cert_chain(cert_path, key_path)
        except ssl.SSLError as exc:
            raise ConfigurationError(
                f"the client certificate and key ({origin}) cannot be used: {exc.reason or exc}"
            ) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def build_ssl_context(
    config: ClusterConfig, *, cert_pem: bytes | None = None, key_pem: bytes | None = None
) -> ssl.SSLContext:
    """The TLS context: the configured CA (or the system roots), optional client certificate.

    ``cert_pem``/``key_pem`` (from an exec plugin) replace the kubeconfig's client certificate.
    ``insecure-skip-tls-verify`` disables verification entirely, as kubectl does.
    """
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_alpn_protocols(["http/1.1"])
    if config.insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    else:
        pem = config.ca_pem()
        if pem is not None:
            _load_ca(ctx, pem, config.ca_file or "certificate-authority-data")
        else:
            ctx.load_default_certs()
    if cert_pem is not None and key_pem is not None:
        load_client_cert(ctx, cert_pem, key_pem, "exec plugin")
    elif config.client_cert_data or config.client_cert_file:
        # Files are read with the bounded reader, never handed to OpenSSL by path: a FIFO or a device
        # named as a certificate or key would block it or fill memory.
        cert = config.client_cert_data or read_local_file(config.client_cert_file or "", "client certificate")
        key = config.client_key_data or read_local_file(config.client_key_file or "", "client key")
        files = [f for f in (config.client_cert_file, config.client_key_file) if f]
        load_client_cert(ctx, cert, key, " and ".join(files) or "kubeconfig")
    return ctx
