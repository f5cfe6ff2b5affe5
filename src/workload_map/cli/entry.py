"""The console-script entry point (``wmap``, ``kubectl-wmap``): ``--help``, ``-h``, no arguments and
``--version`` are answered without importing click; everything else runs
:func:`workload_map.cli.main.run`.

Why: the interpreter starts in about 15 ms, and importing click alone costs about three times that
(``inspect``, ``typing``, ``enum``...), so no root help rendered by click can stay within 4x of
``python -c pass`` (bench/bench_cli.py). The root help is therefore rendered by click once and kept
in the user's cache (``$XDG_CACHE_HOME/workload-map/help``, else ``~/.cache/workload-map/help``,
the directory of the discovery cache), keyed by everything it depends on: the program name, the
terminal width click would read (``$COLUMNS``, the terminal's columns), the Python and package
versions, and the size and modification time of every click and workload-map module loaded while
rendering it. Any difference, a missing or unreadable cache or an unwritable directory means
rendering it with click again, exactly as ``run`` would print it (tests/cli/test_entry.py compares
the two at several widths and after the cache is spoiled).

This module imports only ``os`` and ``sys`` (both already loaded when Python starts), and ``gc`` when
a command has run (its objects are frozen out of the interpreter's collections at exit).
"""

from __future__ import annotations

import os
import sys

#: First line of a cache file (its format's version).
MAGIC = "wmap-help 1"
#: Bytes a cache file may have; a larger one is not read (and is rewritten).
MAX_CACHE_BYTES = 1 << 18
_HELP_ARGS = ((), ("--help",), ("-h",))


def cache_dir() -> str:
    """``$XDG_CACHE_HOME/workload-map``, else ``~/.cache/workload-map`` (the rule of
    ``workload_map.cluster.discovery.cache_root``, which this module must not import)."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    return os.path.join(xdg if xdg else os.path.join(os.path.expanduser("~"), ".cache"), "workload-map")


def _terminal() -> str:
    """What click's help width is computed from: ``$COLUMNS`` and the terminal's columns."""
    try:
        columns = str(os.get_terminal_size(sys.__stdout__.fileno()).columns)  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        columns = "-"
    return f"{os.environ.get('COLUMNS', '')}:{columns}"


def _key(prog: str) -> str:
    from workload_map import __version__

    key = f"{prog}|{_terminal()}|{sys.version}|{__version__}"
    return key.replace("\n", " ").replace("\t", " ")


def _cache_path(prog: str) -> str:
    name = "".join(c if c.isalnum() else "-" for c in f"{prog}-{_terminal()}")
    return os.path.join(cache_dir(), "help", f"{name}.txt")


def _stamp(path: str) -> str:
    st = os.stat(path)
    return f"{path}\t{st.st_mtime_ns}\t{st.st_size}"


def cached_help(prog: str) -> str | None:
    """The root help from the cache when every input it was rendered from is unchanged."""
    try:
        with open(_cache_path(prog), "rb") as f:
            data = f.read(MAX_CACHE_BYTES + 1)
        if len(data) > MAX_CACHE_BYTES:
            return None
        head, sep, text = data.decode("utf-8").partition("\n\n")
        lines = head.split("\n")
        if not sep or len(lines) < 3 or lines[0] != MAGIC or lines[1] != _key(prog):
            return None
        for line in lines[2:]:
            if _stamp(line.split("\t", 1)[0]) != line:
                return None
        return text
    except (OSError, ValueError):
        return None


def render_help(prog: str) -> str:
    """The root help as click prints it for ``wmap --help``, kept in the cache for next time."""
    import contextlib

    import click

    from workload_map.cli.main import cli

    with click.Context(cli, info_name=prog, **cli.context_settings) as ctx:
        text = ctx.get_help() + "\n"  # click.echo adds the line feed
    files = sorted(
        {
            str(module.__file__)
            for name, module in list(sys.modules.items())
            if (name.split(".", 1)[0] in ("click", "workload_map")) and getattr(module, "__file__", None)
        }
    )
    path = _cache_path(prog)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        head = "\n".join([MAGIC, _key(prog), *(_stamp(f) for f in files)])
        with open(tmp, "w", encoding="utf-8") as out:
            out.write(f"{head}\n\n{text}")
        os.replace(tmp, path)  # whole or not at all
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return text


def _write(text: str) -> int:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # ``wmap --help | head -1``: as run() answers it
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return 1
    return 0


def main() -> None:
    """``wmap``: the root help and the version from here, everything else from ``run``."""
    args = tuple(sys.argv[1:])
    if args == ("--version",):
        from workload_map import __version__

        sys.exit(_write(f"{__version__}\n"))
    if args in _HELP_ARGS:
        prog = "kubectl wmap" if os.path.basename(sys.argv[0]).startswith("kubectl-") else "wmap"
        text = cached_help(prog)
        sys.exit(_write(text if text is not None else render_help(prog)))
    from workload_map.cli.main import run

    code = run()
    # The interpreter's last collections walk every object still alive (after a describe of 1,000
    # pods, 60 to 180 ms here): nothing needs them now, so the objects are frozen out of them.
    import gc

    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    main()
