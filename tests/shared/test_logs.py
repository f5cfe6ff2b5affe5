"""Log records with hostile values stay single, bounded, escaped lines (issue #10)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from workload_map.logs import MAX_ARGUMENT, MAX_MESSAGE, SafeFormatter, configure_logging, safe_text


def formatted(message: str, *args: object, exc: BaseException | None = None) -> str:
    record = logging.LogRecord("t", logging.WARNING, __file__, 1, message, args, None)
    if exc is not None:
        try:
            raise exc
        except BaseException as caught:
            record.exc_info = (type(caught), caught, caught.__traceback__)
    return SafeFormatter("%(levelname)s %(message)s").format(record)


def test_control_characters_are_escaped() -> None:
    name = "evil\nWARNING forged line\r\x00\x1b[31mred\u2028\u202e"
    line = formatted("workload %s failed", name)
    assert "\n" not in line and "\x1b" not in line and "\x00" not in line
    assert line == "WARNING workload evil\\nWARNING forged line\\r\\x00\\x1b[31mred\\u2028\\u202e failed"


def test_long_arguments_and_messages_are_cut() -> None:
    line = formatted("value %s end", "v" * 100_000)
    assert len(line) < MAX_ARGUMENT + 100
    assert f"...(+{100_000 - MAX_ARGUMENT} chars) end" in line
    many = formatted("%s" * 20, *(["w" * MAX_ARGUMENT] * 20))
    assert len(many) < MAX_MESSAGE + 100 and "chars)" in many


def test_numbers_keep_their_format_and_bad_formats_keep_the_record() -> None:
    assert formatted("%d pods, %.1f GPUs", 3, 2.5) == "WARNING 3 pods, 2.5 GPUs"
    assert formatted("%d pods", "x").startswith("WARNING %d pods")


def test_tracebacks_keep_lines_but_are_escaped() -> None:
    text = formatted("failed", exc=ValueError("bad\x1b[2Jvalue"))
    assert text.startswith("WARNING failed\nTraceback")
    assert "\x1b" not in text and "bad\\x1b[2Jvalue" in text


def test_safe_text_scans_only_what_it_keeps() -> None:
    assert safe_text("a\tb") == "a\\tb"
    assert safe_text("x" * 10, limit=4) == "xxxx...(+6 chars)"


@pytest.fixture
def restore_root() -> Iterator[None]:
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    yield None
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])


def test_configure_logging_routes_every_logger_through_the_safe_formatter(restore_root: object) -> None:
    stream = io.StringIO()
    configure_logging(logging.INFO, stream)
    logging.getLogger("uvicorn.error").info("client %s", "a\nb")
    logging.getLogger("httpx").info("not shown below WARNING")
    assert stream.getvalue().rstrip("\n").endswith("INFO uvicorn.error: client a\\nb")
    assert "not shown" not in stream.getvalue()
