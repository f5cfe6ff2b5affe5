"""Bounded reading of local inputs: files, directories and stdin, for every reader of the project
(definitions, manifests and object files, case files, CRD files, the config file, format files).

- A path is looked at (``stat``) before it is opened: a FIFO, a character or block device, a
  socket is refused by its type, so a named pipe cannot block the reader and ``/dev/zero`` cannot
  fill memory. The file is then opened non-blocking and checked again on the open descriptor, so a
  path swapped for a FIFO in between is refused too.
- At most ``limit`` bytes are read (:data:`MAX_FILE_BYTES` unless the caller says otherwise),
  whatever size the file claims.
- A directory is listed lazily and the listing stops at a limit of matching files
  (:data:`MAX_DIRECTORY_FILES`) and of entries looked at, instead of reading the whole directory
  first; a :class:`ByteBudget` bounds the bytes read over all of its files.

Every refusal is an :class:`~workload_map.errors.InputError` (a usage error, exit 2) naming the
path.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from workload_map import messages
from workload_map.errors import InputError

__all__ = [
    "MAX_DIRECTORY_FILES",
    "MAX_FILE_BYTES",
    "MAX_TOTAL_BYTES",
    "STDIN",
    "ByteBudget",
    "decode_text",
    "is_directory",
    "list_files",
    "read_bytes",
    "read_text",
]

#: Largest file (or stdin) read by any reader.
MAX_FILE_BYTES = 16 * 1024 * 1024
#: Most files taken from one directory argument (definitions, case files).
MAX_DIRECTORY_FILES = 1_000
#: Most bytes read over all the files of one directory argument.
MAX_TOTAL_BYTES = 64 * 1024 * 1024
#: Directory entries looked at per matching file allowed (other files, subdirectories).
_ENTRIES_PER_FILE = 20
_CHUNK = 1 << 20

STDIN = "stdin"

_SPECIAL = (
    (stat.S_ISFIFO, "FIFO (named pipe)"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISDIR, "directory"),
)


@dataclass
class ByteBudget:
    """Bytes left for a group of files (one directory argument)."""

    origin: str
    limit: int = MAX_TOTAL_BYTES
    used: int = 0

    def charge(self, size: int) -> None:
        self.used += size
        if self.used > self.limit:
            raise InputError(messages.inputs_too_large(self.origin, self.limit))


def _kind(mode: int) -> str | None:
    """The name of a file type that is not a regular file (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _SPECIAL if test(mode)), "special file")


def _stat(path: str | Path, label: str) -> os.stat_result:
    try:
        return os.stat(path)
    except OSError as exc:
        raise InputError(messages.cannot_read(label, exc.strerror or str(exc))) from None


def is_directory(path: str | Path) -> bool:
    """Whether ``path`` names a directory (following symbolic links), without opening it."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return False


def read_bytes(
    source: str | Path,
    *,
    limit: int | None = None,
    label: str | None = None,
    budget: ByteBudget | None = None,
) -> bytes:
    """The bytes of a regular file, or of stdin for ``"-"``: at most ``limit`` of them
    (:data:`MAX_FILE_BYTES` by default), else an InputError. Special files are refused by type
    before they are opened."""
    if limit is None:
        limit = MAX_FILE_BYTES
    if str(source) == "-":
        return _read_stdin(limit, label or STDIN, budget)
    name = label or str(source)
    kind = _kind(_stat(source, name).st_mode)
    if kind is not None:
        raise InputError(messages.not_a_regular_file(name, kind))
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | os.O_CLOEXEC)
    except OSError as exc:
        raise InputError(messages.cannot_read(name, exc.strerror or str(exc))) from None
    try:
        kind = _kind(os.fstat(fd).st_mode)  # the path may have been swapped since the stat
        if kind is not None:
            raise InputError(messages.not_a_regular_file(name, kind))
        chunks: list[bytes] = []
        size = 0
        while True:
            try:
                chunk = os.read(fd, min(_CHUNK, limit + 1 - size))
            except OSError as exc:
                raise InputError(messages.cannot_read(name, exc.strerror or str(exc))) from None
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise InputError(messages.too_large(name, limit))
    finally:
        os.close(fd)
    if budget is not None:
        budget.charge(size)
    return b"".join(chunks)


def _read_stdin(limit: int, label: str, budget: ByteBudget | None) -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    try:
        if stream is not None:
            data: bytes = stream.read(limit + 1)
        else:  # a text stream (tests): counted in characters
            data = sys.stdin.read(limit + 1).encode("utf-8")
    except OSError as exc:
        raise InputError(messages.cannot_read(label, exc.strerror or str(exc))) from None
    if len(data) > limit:
        raise InputError(messages.too_large(label, limit))
    if budget is not None:
        budget.charge(len(data))
    return data


def decode_text(raw: bytes | str, label: str) -> str:
    """UTF-8 text (a byte order mark is dropped), else an InputError naming the byte."""
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(messages.not_utf8(label, f"{exc.reason} at byte {exc.start}")) from None


def read_text(
    source: str | Path,
    *,
    limit: int | None = None,
    label: str | None = None,
    budget: ByteBudget | None = None,
) -> str:
    """:func:`read_bytes` decoded as UTF-8."""
    name = label or (STDIN if str(source) == "-" else str(source))
    return decode_text(read_bytes(source, limit=limit, label=name, budget=budget), name)


def list_files(
    directory: str | Path,
    suffixes: Iterable[str],
    *,
    limit: int = MAX_DIRECTORY_FILES,
    recursive: bool = False,
    what: str = "files",
) -> list[Path]:
    """The files of ``directory`` whose names end in one of ``suffixes`` (case-insensitive), sorted;
    subdirectories too when ``recursive``. The listing stops with an InputError at more than
    ``limit`` such files, or after looking at ``limit`` x 20 entries, before reading any of them.
    A matching name that is a FIFO, device or socket is refused by type (never opened)."""
    ends = tuple(s.lower() for s in suffixes)
    found: list[Path] = []
    seen = 0
    max_entries = max(limit, 1) * _ENTRIES_PER_FILE
    for entry in _walk(Path(directory), recursive):
        seen += 1
        if seen > max_entries:
            raise InputError(messages.too_many_files(str(directory), max_entries, "entries"))
        if not entry.name.lower().endswith(ends):
            continue
        if not entry.is_file():  # the type comes from the directory listing (d_type) when it can
            if entry.is_dir():
                continue
            try:
                kind = _kind(entry.stat().st_mode)
            except OSError:
                continue  # a dangling link: nothing to read
            raise InputError(messages.not_a_regular_file(entry.path, kind or "special file"))
        found.append(Path(entry.path))
        if len(found) > limit:
            raise InputError(messages.too_many_files(str(directory), limit, what))
    return sorted(found)


def _walk(directory: Path, recursive: bool) -> Iterator[os.DirEntry[str]]:
    pending = [directory]
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    if recursive and entry.is_dir(follow_symlinks=False):
                        pending.append(Path(entry.path))
                    yield entry
        except OSError as exc:
            raise InputError(messages.cannot_read(str(current), exc.strerror or str(exc))) from None
