"""``wmap serve`` on an install without the [server] extra (issue 24): a usage error (exit 2) that
names the missing packages and says how to add them, before any flag or connection is looked at;
never ``internal error``. The installed-wheel form: tests/packaging/test_wheel.py."""

from __future__ import annotations

import importlib.util
import json
from importlib import metadata
from importlib.machinery import ModuleSpec
from typing import Any

import pytest

from tests.cli.helpers import wmap
from workload_map import __version__
from workload_map.cli import exit_codes
from workload_map.cli.commands import serve


def _without(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> ModuleSpec | None:
        return None if name in names else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


@pytest.mark.parametrize("args", [[], ["--local"], ["--local", "--listen", "0.0.0.0:1"]])
def test_serve_without_the_extra_is_a_usage_error_naming_it(
    monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    _without(monkeypatch, "starlette", "uvicorn")
    rc, out, err = wmap("serve", *args)
    assert rc == exit_codes.USAGE, err
    assert out == ""
    (line,) = err.splitlines()
    assert line.startswith("error: wmap serve needs the [server] extra (starlette, uvicorn not installed): ")
    assert "internal error" not in err
    # the extra's own requirements, read from the installed metadata (pyproject.toml's list)
    assert "pip install 'starlette>=0.37' 'uvicorn>=0.29'" in line


def test_one_missing_module_is_named_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "uvicorn")
    rc, _, err = wmap("serve")
    assert rc == exit_codes.USAGE and "(uvicorn not installed)" in err


REQUIRES = metadata.requires("workload-map")


class _Dist:
    def __init__(self, direct_url: dict[str, Any] | None) -> None:
        self.text = None if direct_url is None else json.dumps(direct_url)
        self.requires = REQUIRES

    def read_text(self, name: str) -> str | None:
        assert name == "direct_url.json"
        return self.text


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        # pip's PEP 610 records: an editable clone, a plain clone, the built wheel
        ({"url": "file:///home/u/workload-map", "dir_info": {"editable": True}},
         "pip install -e '/home/u/workload-map[server]'"),
        ({"url": "file:///home/u/workload-map", "dir_info": {}},
         "pip install '/home/u/workload-map[server]'"),
        ({"url": "file:///tmp/dist/workload_map-0.1.0-py3-none-any.whl", "archive_info": {}},
         "pip install '/tmp/dist/workload_map-0.1.0-py3-none-any.whl[server]'"),
    ],
)  # fmt: skip
def test_the_advice_names_the_source_pip_installed_from(
    monkeypatch: pytest.MonkeyPatch, record: dict[str, Any], expected: str
) -> None:
    monkeypatch.setattr(metadata, "distribution", lambda name: _Dist(record))
    text = serve._extra_missing(["starlette"]).messages[0]
    assert f": {expected}, or add its packages: pip install " in text


@pytest.mark.parametrize("record", [None, {"url": "https://example.com/x.whl"}, {"dir_info": {}}])
def test_an_unknown_source_gets_the_clone_and_wheel_forms(
    monkeypatch: pytest.MonkeyPatch, record: dict[str, Any] | None
) -> None:
    monkeypatch.setattr(metadata, "distribution", lambda name: _Dist(record))
    text = serve._extra_missing(["starlette"]).messages[0]
    assert "pip install '.[server]' (in a clone)" in text
    assert f"pip install 'workload_map-{__version__}-py3-none-any.whl[server]' (the built wheel)" in text


def test_help_needs_no_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "starlette", "uvicorn")
    rc, out, _ = wmap("serve", "--help")
    assert rc == 0 and "Usage:" in out
