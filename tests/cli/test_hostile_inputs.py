"""Issue 23, every reader has a ceiling: special files refused by type before they are opened,
directories listed up to a limit, bytes bounded per file and per directory, JSON read as JSON, a
5,000-digit quantity a clear error. The attacks are rebuilt from the issue's text
(tests/support/hostile_inputs.py) and run through ``wmap`` as users run it."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import workload_map.model.inputs as inputs
from tests.cli.helpers import wmap
from tests.support import hostile_inputs as h
from workload_map.cli import exit_codes

pytestmark = pytest.mark.usefixtures("bundled_catalog")

VALID = h.small_definition_yaml("Widget")


@contextlib.contextmanager
def unblocking(fifo: Path, after: float = 60.0) -> Iterator[None]:
    """If a reader opens ``fifo`` (the bug), a writer shows up after ``after`` seconds, writes
    garbage and closes, so the test fails on its assertions instead of hanging forever."""
    done = threading.Event()

    def writer() -> None:
        if done.wait(after):
            return
        while not done.is_set():
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader: nobody is blocked on it
                done.wait(0.2)
                continue
            os.write(fd, b"opened!")
            os.close(fd)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()


@pytest.fixture
def specials(tmp_path: Path) -> Iterator[dict[str, tuple[Path, str]]]:
    """A FIFO, a listening Unix socket and two character devices, with the type each is refused as."""
    fifo = h.make_fifo(tmp_path / "pipe.yaml")
    sock_path, sock = h.make_socket(tmp_path / "sock.yaml")
    try:
        yield {
            "fifo": (fifo, "FIFO (named pipe)"),
            "socket": (sock_path, "socket"),
            "zero": (Path("/dev/zero"), "character device"),
            "null": (Path("/dev/null"), "character device"),
        }
    finally:
        sock.close()


def _block_device() -> Path | None:
    for entry in sorted(Path("/dev").iterdir()):
        with contextlib.suppress(OSError):
            if stat.S_ISBLK(entry.stat().st_mode):
                return entry
    return None


def readers(path: str, work: Path) -> dict[str, list[str]]:
    """Every command that reads a file given by the user, with ``path`` in the file's place."""
    definition = work / "def.json"
    definition.write_text(VALID)
    case = work / "case.yaml"
    case.write_text(json.dumps({"object": {"apiVersion": "v1", "kind": "Pod"}, "expect": {"phases": []}}))
    return {
        "validate": ["validate", path],
        "--definitions": ["--definitions", path, "definitions"],
        "describe -f": ["describe", "-f", path],
        "group -f": ["group", "p", "-f", path],
        "requirements -f": ["requirements", "-f", path],
        "lint DEFINITION": ["lint", path],
        "lint --object": ["lint", "--object", path],
        "lint --crd": ["lint", str(definition), "--crd", path],
        "generate --crd": ["generate", "--crd", path],
        "test DEFINITION": ["test", path, str(case)],
        "test CASE": ["test", str(definition), path],
        "custom-columns-file": ["get", "widgets", "-o", f"custom-columns-file={path}"],
        "jsonpath-file": ["get", "widgets", "-o", f"jsonpath-file={path}"],
        "--config": ["--config", path, "definitions"],
    }


@pytest.mark.parametrize("kind", ["fifo", "socket", "zero", "null"])
def test_special_files_are_refused_by_type_by_every_reader(
    kind: str, specials: dict[str, tuple[Path, str]], tmp_path: Path
) -> None:
    path, what = specials[kind]
    for reader, args in readers(str(path), tmp_path).items():
        with unblocking(specials["fifo"][0]):
            rc, out, err = wmap(*args)
        assert rc == exit_codes.USAGE, (reader, rc, out, err)
        assert f"it is a {what}, not a regular file" in err, (reader, err)
        assert "opened!" not in err and "Traceback" not in err, (reader, err)


def test_a_block_device_is_refused_by_type(tmp_path: Path) -> None:
    device = _block_device()
    if device is None:
        pytest.skip("no block device in /dev here")
    rc, _, err = wmap("validate", str(device))
    assert rc == exit_codes.USAGE and "it is a block device, not a regular file" in err


def test_a_special_file_inside_a_definitions_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(VALID)
    fifo = h.make_fifo(tmp_path / "b.yaml")
    with unblocking(fifo):
        rc, _, err = wmap("validate", str(tmp_path))
    assert rc == exit_codes.USAGE and f"cannot read {fifo}: it is a FIFO (named pipe)" in err


def test_a_path_swapped_for_a_fifo_after_the_check_is_refused_on_the_descriptor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The type is checked again on the opened descriptor (opened non-blocking, so a FIFO swapped
    in after the first check cannot block the open either)."""
    regular = tmp_path / "regular.yaml"
    regular.write_text(VALID)
    fifo = h.make_fifo(tmp_path / "swapped.yaml")
    monkeypatch.setattr(inputs, "_stat", lambda _path, _label: os.stat(regular))  # the check saw a file
    with unblocking(fifo), pytest.raises(inputs.InputError, match="it is a FIFO"):
        inputs.read_bytes(fifo)


def test_a_directory_of_many_definition_files_is_refused_before_reading_them(tmp_path: Path) -> None:
    many = h.directory_of_files(tmp_path / "many", inputs.MAX_DIRECTORY_FILES + 1)
    expected = f"{many} holds more than 1,000 definition files"
    rc, _, err = wmap("validate", str(many))
    assert rc == exit_codes.USAGE and expected in err
    rc, _, err = wmap("--definitions", str(many), "definitions")
    assert rc == exit_codes.USAGE and expected in err
    (many / "d000000.yaml").unlink()  # exactly the limit: read
    rc, out, err = wmap("validate", "-q", str(many))
    assert rc == 0 and out == "", err


def test_a_directory_listing_stops_at_its_entry_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inputs, "MAX_DIRECTORY_FILES", 10)
    noise = tmp_path / "noise"
    noise.mkdir()
    for i in range(10 * 20 + 1):  # other files: looked at, never read
        (noise / f"f{i}.txt").touch()
    rc, _, err = wmap("validate", str(noise))
    assert rc == exit_codes.USAGE and f"{noise} holds more than 200 entries" in err


def test_case_directories_are_listed_up_to_their_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import workload_map.cli.commands.test as test_command

    monkeypatch.setattr(test_command, "MAX_FILES", 5)
    cases = tmp_path / "cases" / "deeper"
    cases.mkdir(parents=True)
    for i in range(6):
        (cases / f"c{i}.yaml").write_text("{}")
    definition = tmp_path / "def.json"
    definition.write_text(VALID)
    rc, _, err = wmap("test", str(definition), str(tmp_path / "cases"))
    assert rc == exit_codes.USAGE and "holds more than 5 case files" in err


def test_a_directory_reads_at_most_its_byte_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inputs, "MAX_TOTAL_BYTES", 3 * len(VALID))
    for i in range(4):
        (tmp_path / f"d{i}.json").write_text(h.small_definition_yaml(f"Kind{i}"))
    rc, _, err = wmap("validate", str(tmp_path))
    assert rc == exit_codes.USAGE and f"{tmp_path}: the files read add up to more than" in err


def test_stdin_is_read_up_to_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inputs, "MAX_FILE_BYTES", 1000)
    rc, _, err = wmap("validate", "-", input="#" * 1001)
    assert rc == exit_codes.USAGE and "stdin is larger than 1,000 bytes" in err


def test_a_big_regular_file_is_refused_at_its_limit(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as fh:
        fh.truncate(inputs.MAX_FILE_BYTES + 1)  # sparse: costs no disk
    rc, _, err = wmap("validate", str(big))
    assert rc == exit_codes.USAGE and f"{big} is larger than 16 MiB" in err


# --- JSON as JSON, quantities -------------------------------------------------------------------


def test_250000_containers_in_plain_json_are_read_as_json(tmp_path: Path) -> None:
    """The issue's file took 44 s and 1.1 GB through the YAML path, then blamed aliases."""
    path = tmp_path / "wide.json"
    path.write_text(json.dumps(h.jobset_with_containers(250_000), separators=(",", ":")))
    rc, out, err = wmap("describe", "-f", str(path))
    assert rc == 0, err
    assert out.startswith("JobSet/wide") and "alias" not in err


def test_the_same_containers_as_yaml_are_refused_before_composing(tmp_path: Path) -> None:
    import yaml

    path = tmp_path / "wide.yaml"
    path.write_text(yaml.safe_dump(h.jobset_with_containers(250_000)))
    rc, _, err = wmap("describe", "-f", str(path))
    assert rc == exit_codes.USAGE and "too much YAML structure to read" in err and "alias" not in err


def test_a_5000_digit_quantity_is_our_error_not_pythons(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_text(json.dumps(h.huge_quantity_jobset(5000)))
    rc, _, err = wmap("describe", "-f", str(path))
    assert rc == exit_codes.ERROR, err
    assert "(5,000 characters) is too long: a quantity has at most 100 digits" in err
    assert "ValueError" not in err and "9" * 100 not in err
