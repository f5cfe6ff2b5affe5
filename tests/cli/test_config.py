"""Config file location and output-format precedence (spec 5.1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workload_map.cli.config import Config, load_config, resolve_output
from workload_map.cli.errors import CommandError


def test_missing_default_is_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert load_config(environ={}) == Config()


def test_missing_explicit_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CommandError) as info:
        load_config(str(tmp_path / "nope.yaml"), environ={})
    assert info.value.exit_code == 2
    with pytest.raises(CommandError):
        load_config(None, environ={"WMAP_CONFIG": str(tmp_path / "nope.yaml")})


def test_precedence_flag_env_file(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("output: yaml\n")
    g = tmp_path / "g.yaml"
    g.write_text("output: json\n")
    assert load_config(str(f), environ={"WMAP_CONFIG": str(g)}).output == "yaml"
    assert load_config(None, environ={"WMAP_CONFIG": str(g)}).output == "json"
    cfg = load_config(str(f), environ={})
    allowed = ("table", "wide", "json", "yaml")
    assert resolve_output(None, allowed, cfg, environ={}) == "yaml"
    assert resolve_output(None, allowed, cfg, environ={"WMAP_OUTPUT": "json"}) == "json"
    assert resolve_output("table", allowed, cfg, environ={"WMAP_OUTPUT": "json"}) == "table"
    assert resolve_output(None, allowed, Config(), environ={}) == "table"


def test_strict_config(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("output: yaml\ncolour: true\n")
    with pytest.raises(CommandError, match="unknown key"):
        load_config(str(f), environ={})
    f.write_text("output: xml\n")
    with pytest.raises(CommandError, match="must be one of table, wide, json, yaml"):
        load_config(str(f), environ={})


def test_formats_a_command_does_not_offer() -> None:
    with pytest.raises(CommandError, match="must be one of table, json, yaml") as info:
        resolve_output("wide", ("table", "json", "yaml"), Config(), environ={})
    assert info.value.exit_code == 2
    assert resolve_output(None, ("table", "json", "yaml"), Config(output="wide"), environ={}) == "table"
