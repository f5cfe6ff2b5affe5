"""Make sure a kube-apiserver v1.20.2 binary is available for the test cluster.

Run as ``python -m tests.support.apiserver_binary``; prints the path of the binary.

Where the binary comes from, in order:

1. the cache directory (``$WMAP_CACHE_DIR``, default ``~/.cache/workload-map/kube-apiserver-v1.20.2``)
   when it already holds a verified binary (fast path: no hashing when the stamp file matches);
2. ``kube-apiserver-v1.20.2-linux-amd64.xz`` in the shared binaries folder
   (``$WMAP_SHARED_DIR/bin``, default ``<repo>/../shared/bin``), unpacked with :mod:`lzma`;
3. a build from Debian bookworm's ``kubernetes`` source package by ``scripts/build-kube-apiserver.sh``
   (needs root or sudo, ~4 GB RAM, 10-15 minutes on 2 cores). It installs Debian's Go and build
   tools system-wide for the build and purges them again afterwards; only the binary stays, in the
   cache directory.

Each step says where the binary comes from and goes, and how long it took.

The unpacked binary must have the published sha256. A locally built binary is accepted even when its
hash differs (Go builds are only byte-identical under the exact same build path and date), provided
it reports ``Kubernetes v1.20.2``; set ``WMAP_STRICT_APISERVER_SHA=1`` to refuse it instead.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

VERSION = "v1.20.2"
SHA256 = "1a66fc4c8e6c770dfc56d85fe897159fb1e16ad9f6fc7ba1a267eded8933f54a"
XZ_NAME = f"kube-apiserver-{VERSION}-linux-amd64.xz"
BINARY_NAME = "kube-apiserver"
STAMP_NAME = "kube-apiserver.verified.json"

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO_ROOT / "scripts" / "build-kube-apiserver.sh"


class ApiserverBinaryError(RuntimeError):
    """The kube-apiserver binary could not be found, unpacked or built."""


def _say(message: str) -> None:
    print(f"[kube-apiserver] {message}", file=sys.stderr, flush=True)


def shared_dir() -> Path:
    """The ``shared/`` folder that sits next to the repository clone (or ``$WMAP_SHARED_DIR``)."""
    env = os.environ.get("WMAP_SHARED_DIR")
    if env:
        return Path(env).expanduser().resolve()
    return (REPO_ROOT.parent / "shared").resolve()


def cache_dir() -> Path:
    env = os.environ.get("WMAP_CACHE_DIR")
    if env:
        return Path(env).expanduser().resolve()
    return Path.home() / ".cache" / "workload-map" / f"kube-apiserver-{VERSION}"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _stat_key(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "inode": st.st_ino}


def _read_stamp(directory: Path) -> dict[str, object] | None:
    try:
        data = json.loads((directory / STAMP_NAME).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_stamp(directory: Path, binary: Path, sha: str, source: str) -> None:
    stamp = {"sha256": sha, "source": source, "stat": _stat_key(binary)}
    tmp = directory / (STAMP_NAME + ".tmp")
    tmp.write_text(json.dumps(stamp, indent=2) + "\n")
    os.replace(tmp, directory / STAMP_NAME)


def _cached_binary(directory: Path) -> Path | None:
    """The cached binary if the stamp says it was verified and it has not changed since."""
    binary = directory / BINARY_NAME
    stamp = _read_stamp(directory)
    if stamp is None or not binary.is_file() or not os.access(binary, os.X_OK):
        return None
    if stamp.get("stat") != _stat_key(binary):
        # Touched or replaced since verification: re-hash once.
        sha = sha256_of(binary)
        ok = sha == SHA256 or (stamp.get("source") == "built" and sha == stamp.get("sha256"))
        if not ok:
            return None
        _write_stamp(directory, binary, sha, str(stamp.get("source")))
    return binary


@contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Serialise concurrent callers (e.g. parallel pytest workers) on one cache directory."""
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / ".lock").open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _install(directory: Path, tmp_binary: Path, sha: str, source: str) -> Path:
    tmp_binary.chmod(0o755)
    binary = directory / BINARY_NAME
    os.replace(tmp_binary, binary)
    _write_stamp(directory, binary, sha, source)
    return binary


def _unpack_xz(xz_path: Path, directory: Path) -> Path:
    _say(f"unpacking {xz_path} into {directory}")
    began = time.monotonic()
    try:
        return _unpack_xz_into(xz_path, directory)
    finally:
        _say(f"unpacking took {time.monotonic() - began:.0f}s")


def _unpack_xz_into(xz_path: Path, directory: Path) -> Path:
    fd, tmp_name = tempfile.mkstemp(prefix=".kube-apiserver.", dir=directory)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out, lzma.open(xz_path, "rb") as src:
            for chunk in iter(lambda: src.read(1 << 20), b""):
                digest.update(chunk)
                out.write(chunk)
        sha = digest.hexdigest()
        if sha != SHA256:
            raise ApiserverBinaryError(
                f"{xz_path} unpacks to a binary with sha256 {sha}, expected {SHA256}; refusing to use it"
            )
        return _install(directory, tmp, sha, "xz")
    finally:
        tmp.unlink(missing_ok=True)


def _reported_version(binary: Path) -> str:
    try:
        out = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except OSError as exc:
        return f"<cannot run: {exc}>"
    return (out.stdout or out.stderr).strip()


def _build(directory: Path) -> Path:
    if not BUILD_SCRIPT.is_file():
        raise ApiserverBinaryError(f"build script {BUILD_SCRIPT} is missing")
    _say(f"no {XZ_NAME} found under {shared_dir() / 'bin'} (scripts/fetch-test-data does not fetch it);")
    _say(f"building kube-apiserver {VERSION} from Debian bookworm's 'kubernetes' source package once.")
    _say("This needs root or sudo (apt-get), network access, about 4 GB of RAM and 10-15 minutes on")
    _say("2 cores. Debian's Go and build tools are installed system-wide for the build and purged")
    _say(f"again afterwards; the binary is kept in {directory}.")
    _say(f"running: bash {BUILD_SCRIPT} <tmp output in {directory}>")
    began = time.monotonic()
    try:
        return _build_into(directory)
    finally:
        _say(f"the build took {(time.monotonic() - began) / 60:.1f} minutes")


def _build_into(directory: Path) -> Path:
    fd, tmp_name = tempfile.mkstemp(prefix=".kube-apiserver.build.", dir=directory)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        result = subprocess.run(["bash", str(BUILD_SCRIPT), str(tmp)], check=False)
        if result.returncode != 0 or tmp.stat().st_size == 0:
            raise ApiserverBinaryError(
                f"{BUILD_SCRIPT} failed (exit {result.returncode}); see its output above"
            )
        sha = sha256_of(tmp)
        if sha == SHA256:
            _say("built binary matches the published sha256")
            return _install(directory, tmp, sha, "built")
        tmp.chmod(0o755)
        version = _reported_version(tmp)
        if os.environ.get("WMAP_STRICT_APISERVER_SHA") == "1" or version != f"Kubernetes {VERSION}":
            raise ApiserverBinaryError(
                f"built binary has sha256 {sha} (expected {SHA256}) and reports {version!r}; refusing it"
            )
        _say(f"WARNING: built binary has sha256 {sha}, not the published {SHA256}.")
        _say(f"It reports {version!r} and was built from the same source; accepting it.")
        return _install(directory, tmp, sha, "built")
    finally:
        tmp.unlink(missing_ok=True)


def ensure_apiserver_binary(*, allow_build: bool = True) -> Path:
    """Return the path of a verified kube-apiserver v1.20.2, unpacking or building it if needed."""
    directory = cache_dir()
    found = _cached_binary(directory)
    if found is not None:
        return found
    with _locked(directory):
        found = _cached_binary(directory)  # another process may have finished meanwhile
        if found is not None:
            return found
        xz_path = shared_dir() / "bin" / XZ_NAME
        if xz_path.is_file():
            return _unpack_xz(xz_path, directory)
        if not allow_build:
            raise ApiserverBinaryError(
                f"kube-apiserver {VERSION} is not cached in {directory} and {xz_path} does not exist; "
                f"run `python -m tests.support.apiserver_binary` (builds it from source)"
            )
        return _build(directory)


def ensure_etcd() -> Path:
    """Path of the ``etcd`` executable (Debian ``etcd-server``)."""
    found = shutil.which("etcd")
    if found is None:
        raise ApiserverBinaryError(
            "etcd is not installed (Debian: apt-get install etcd-server; scripts/bootstrap.sh does this)"
        )
    return Path(found)


def main() -> int:
    try:
        path = ensure_apiserver_binary()
    except ApiserverBinaryError as exc:
        _say(f"ERROR: {exc}")
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
