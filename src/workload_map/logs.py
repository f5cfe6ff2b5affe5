"""Logging for the long-running processes (exporter, operator, serve) that is safe with hostile values,
and the one escaping of control characters that every human-readable output uses.

Workload names, definition names, API messages and expression errors come from whoever may create
objects; written raw they can forge log lines (newlines), corrupt terminals (escape sequences) or
flood the log (a 100 KB label value). :class:`SafeFormatter` escapes every control character of the
message and its arguments and shortens long arguments and messages, so each record is one line of
bounded length; tracebacks keep their line breaks but are escaped and bounded too.

:func:`escape_controls` is the same escaping without a length limit, for the CLI's tables, trees,
findings and errors: C0 and C1 controls (ESC and so CSI and OSC sequences, BEL, CR, backspace, the
one-byte CSI U+009B), DEL, the Unicode line and paragraph separators and the bidirectional
overrides and isolates become visible escapes (``\x1b``, ``\r``, ``\u202e``), so text from a
cluster or a definition cannot move the cursor, retitle the window, write the clipboard or
reorder what is shown.
"""

from __future__ import annotations

import logging
import re
import sys
from typing import IO

__all__ = [
    "MAX_ARGUMENT",
    "MAX_MESSAGE",
    "SafeFormatter",
    "configure_logging",
    "escape_controls",
    "safe_text",
]

#: Longest text kept of one %-argument of a log call, and of a whole formatted message.
MAX_ARGUMENT = 512
MAX_MESSAGE = 4096
#: A traceback is cut after this many characters (its last lines, where the error is, are kept).
MAX_TRACEBACK = 16384

# C0 and C1 controls, DEL, and the Unicode line/paragraph separators and bidi overrides, which can
# hide or reorder text on a terminal.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_UNSAFE_BUT_NEWLINE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# Line feeds and tabs are layout a renderer wrote; neither moves the cursor anywhere harmful.
_UNSAFE_BUT_LAYOUT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control character escaped (see the module doc); with
    ``keep_newlines``, line feeds and tabs stay (multi-line output a renderer laid out)."""
    pattern = _UNSAFE_BUT_LAYOUT if keep_newlines else _UNSAFE
    return pattern.sub(_escape_char, text)


def safe_text(value: object, limit: int = MAX_ARGUMENT) -> str:
    """``value`` as one printable line: its first ``limit`` characters, control characters escaped."""
    text = value if isinstance(value, str) else str(value)
    # Escape only the part that is kept, so that a huge value is never scanned whole.
    escaped = escape_controls(text[:limit])
    return escaped + (f"...(+{len(text) - limit} chars)" if len(text) > limit else "")


def _safe_argument(value: object) -> object:
    if isinstance(value, (int, float, bool)) or value is None:
        return value  # %d and %.2f need numbers; numbers carry no control characters
    return safe_text(value)


class SafeFormatter(logging.Formatter):
    """A Formatter whose messages are single escaped lines of bounded length (see the module doc)."""

    def format(self, record: logging.LogRecord) -> str:
        safe = logging.makeLogRecord(record.__dict__)
        args = record.args
        try:
            if isinstance(args, tuple):
                message = str(record.msg) % tuple(_safe_argument(a) for a in args)
            elif isinstance(args, dict):
                message = str(record.msg) % {k: _safe_argument(v) for k, v in args.items()}
            else:
                message = str(record.msg)
        except (TypeError, ValueError, KeyError):
            message = f"{record.msg!s} {args!r}"  # a bad format string must not lose the record
        safe.msg = safe_text(message, MAX_MESSAGE)
        safe.args = None
        safe.exc_info = None
        safe.exc_text = None
        text = super().format(safe)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            trace = record.exc_text
            if len(trace) > MAX_TRACEBACK:
                trace = f"...(-{len(trace) - MAX_TRACEBACK} chars)\n{trace[-MAX_TRACEBACK:]}"
            text = f"{text}\n{_UNSAFE_BUT_NEWLINE.sub(_escape_char, trace)}"
        return text


def configure_logging(level: int, stream: IO[str] | None = None) -> None:
    """Route every logger (ours, uvicorn's, httpx's) through one handler with :class:`SafeFormatter`."""
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(SafeFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("httpx").setLevel(max(level, logging.WARNING))
    # uvicorn (and an earlier dictConfig) may have given its loggers their own handlers or
    # disabled them: route them to ours.
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        for old in list(logger.handlers):
            logger.removeHandler(old)
        logger.propagate = True
        logger.disabled = False
        logger.setLevel(logging.NOTSET)  # uvicorn sets its own level after this, from --log-level
