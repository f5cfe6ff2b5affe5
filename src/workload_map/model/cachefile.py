"""Files in the user's cache directory, read as untrusted and written whole or not at all.

:func:`cache_root` is ``$XDG_CACHE_HOME/workload-map``, else ``~/.cache/workload-map`` (discovery,
the parsed catalog; ``workload_map.cli.entry`` repeats the rule because ``--help`` imports nothing
of the package). :func:`read_private` hands back a file's bytes only when it is a regular file of
this user that nobody else may write, of at most ``max_bytes`` (read bounded, whatever its size
claims; a FIFO or device planted there never blocks); the caller still validates the content and
falls back to the source when anything is off. :func:`write_atomic` writes a temporary file beside
the target and renames it over, so a reader sees the old file or the new one, never a part; a
read-only or missing home only means no cache.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["cache_root", "read_private", "write_atomic"]


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/workload-map``, else ``~/.cache/workload-map``."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "workload-map"


def read_private(path: Path, max_bytes: int) -> bytes | None:
    """The bytes of ``path``, or ``None`` when it is missing, unreadable, not a regular file (a
    symbolic link included), owned by another user, writable by group or others, or larger than
    ``max_bytes``."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o022 or st.st_size > max_bytes:
            return None
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            return None
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return data if len(data) <= max_bytes else None
    except OSError:
        return None
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` through a temporary file renamed over it (private to the user);
    ``False`` when the directory cannot be written (read-only home, no space)."""
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return False
