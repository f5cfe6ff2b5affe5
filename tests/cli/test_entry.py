"""The console-script entry point: ``wmap --help``/``-h``/no arguments from the cached root help
and ``--version`` without importing click, and the same text click prints, byte for byte."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from workload_map import __version__
from workload_map.cli import entry

#: Modules ``wmap --help`` (cached) and ``wmap --version`` must not import: click and typing alone
#: cost about 3x and 1x the interpreter's start (bench/bench_cli.py, target 4x ``python -c pass``).
HEAVY = (
    "click",
    "typing",
    "inspect",
    "pydantic",
    "yaml",
    "httpx",
    "orjson",
    "workload_map.cli.main",
    "workload_map.cli.common",
    "workload_map.messages",
    "workload_map.expr",
    "workload_map.model",
)

RUN = (
    "import sys\n"
    "sys.argv[0] = sys.argv.pop(1)\n"
    "from workload_map.cli import entry\n"
    "try:\n"
    "    entry.main()\n"
    "except SystemExit as exc:\n"
    "    heavy = sorted(m for m in {heavy} if m in sys.modules)\n"
    "    print(exc.code, heavy, file=sys.stderr)\n"
).replace("{heavy}", repr(HEAVY))


def wmap(
    cache: Path, *args: str, argv0: str = "/usr/bin/wmap", columns: str | None = None
) -> tuple[str, str]:
    """``wmap ARGS`` through the entry point with ``cache`` as XDG_CACHE_HOME: (stdout, stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["XDG_CACHE_HOME"] = str(cache)
    if columns is not None:
        env["COLUMNS"] = columns
    done = subprocess.run(
        [sys.executable, "-c", RUN, argv0, *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout, done.stderr


def click_help(*args: str, prog: str = "wmap", columns: str | None = None) -> str:
    """What ``run`` (click) prints for ``args``."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    code = f"from workload_map.cli.main import cli\ncli.main(args={list(args)!r}, prog_name={prog!r})\n"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env).stdout


@pytest.mark.parametrize("args", [("--help",), ("-h",), ()])
def test_help_is_clicks_and_cached(tmp_path: Path, args: tuple[str, ...]) -> None:
    expected = click_help(*args)
    assert expected.startswith("Usage: wmap [OPTIONS] [COMMAND] [ARGS]...") and "validate" in expected
    cold, err = wmap(tmp_path, *args)
    assert cold == expected and err.startswith("0 ") and "'click'" in err  # rendered by click
    warm, err = wmap(tmp_path, *args)
    assert warm == expected and err.strip() == "0 []"  # from the cache: nothing heavy imported


def test_version_imports_nothing_heavy(tmp_path: Path) -> None:
    out, err = wmap(tmp_path, "--version")
    assert out == f"{__version__}\n" and err.strip() == "0 []"
    assert not (tmp_path / "workload-map").exists()


@pytest.mark.parametrize("columns", ["50", "60", "200"])
def test_help_follows_the_terminal_width(tmp_path: Path, columns: str) -> None:
    wmap(tmp_path, "--help", columns="80")
    expected = click_help("--help", columns=columns)
    assert wmap(tmp_path, "--help", columns=columns)[0] == expected
    out, err = wmap(tmp_path, "--help", columns=columns)
    assert out == expected and err.strip() == "0 []"


def test_kubectl_plugin_name(tmp_path: Path) -> None:
    wmap(tmp_path, "--help")
    expected = click_help("--help", prog="kubectl wmap")
    assert expected.startswith("Usage: kubectl wmap ")
    assert wmap(tmp_path, "--help", argv0="/usr/local/bin/kubectl-wmap")[0] == expected
    out, err = wmap(tmp_path, "--help", argv0="/usr/local/bin/kubectl-wmap")
    assert out == expected and err.strip() == "0 []"


def test_a_spoiled_cache_is_rendered_again(tmp_path: Path) -> None:
    expected = click_help("--help")
    wmap(tmp_path, "--help")
    (cached,) = (tmp_path / "workload-map" / "help").iterdir()
    head, _, text = cached.read_text().partition("\n\n")
    lines = head.split("\n")
    # a module's size changed (an upgrade, an edit in a checkout)
    path, mtime, size = lines[2].split("\t")
    cached.write_text(
        "\n".join([*lines[:2], f"{path}\t{mtime}\t{int(size) + 1}", *lines[3:]]) + "\n\n" + text
    )
    out, err = wmap(tmp_path, "--help")
    assert out == expected and "'click'" in err
    assert wmap(tmp_path, "--help")[1].strip() == "0 []"  # rewritten
    for spoiled in (b"\xff\xfe garbage", b"", b"wmap-help 1\n", b"x" * (entry.MAX_CACHE_BYTES + 10)):
        cached.write_bytes(spoiled)
        out, err = wmap(tmp_path, "--help")
        assert out == expected and "'click'" in err
    # a text that is not what click would print cannot be served: the key names the version
    cached.write_text(head.replace(__version__, "0.0.0-other") + "\n\nnot the help\n")
    assert wmap(tmp_path, "--help")[0] == expected


def test_unwritable_cache_still_prints_the_help(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    out, err = wmap(blocker, "--help")
    assert out == click_help("--help") and err.startswith("0 ")
    assert list(tmp_path.iterdir()) == [blocker]


def test_other_arguments_go_to_click(tmp_path: Path) -> None:
    out, err = wmap(tmp_path, "--bogus")
    assert "error: No such option '--bogus'" in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("2 [") and "'click'" in last  # exit 2 (usage), from run()
    out, err = wmap(tmp_path, "validate", "--help")
    assert out.startswith("Usage: wmap validate") and err.startswith("0 ")


def test_cache_dir_is_the_discovery_caches() -> None:
    from workload_map.cluster.discovery import cache_root

    assert Path(entry.cache_dir()) == cache_root()
