"""The ``wmap`` config file and output-format precedence (spec 5.1).

Config file: YAML with one known key, ``output``; unknown keys and invalid values are errors.
Location: ``--config PATH`` > ``$WMAP_CONFIG`` > ``~/.wmap/config.yaml``. A missing default file is
ignored; a missing explicit one (flag or variable) is an error.

Output format: built-in default ``table`` < config file < ``$WMAP_OUTPUT`` < explicit ``-o`` (even
``-o table`` overrides the config). Commands pass the formats they accept; an explicit ``-o`` a
command does not accept is an error, a configured default it does not accept is skipped.

Not read for the root help, ``--version`` or ``validate`` (which has no output formats).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from workload_map.cli import exit_codes
from workload_map.cli.errors import CommandError

ENV_CONFIG = "WMAP_CONFIG"
ENV_OUTPUT = "WMAP_OUTPUT"
FORMATS: tuple[str, ...] = ("table", "wide", "json", "yaml")
DEFAULT_OUTPUT = "table"


def default_path() -> Path:
    return Path.home() / ".wmap" / "config.yaml"


@dataclass(frozen=True)
class Config:
    output: str | None = None
    path: str | None = None  # the file read, if any


def invalid_output(allowed: Sequence[str]) -> str:
    return f"invalid value: must be one of {', '.join(allowed)}"


def load_config(explicit: str | None = None, *, environ: Mapping[str, str] | None = None) -> Config:
    env = os.environ if environ is None else environ
    chosen = explicit or env.get(ENV_CONFIG) or None
    path = Path(chosen) if chosen else default_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if chosen:
            raise CommandError(f"config file {path} does not exist", exit_codes.USAGE) from None
        return Config()
    except OSError as exc:
        raise CommandError(
            f"cannot read config file {path}: {exc.strerror or exc}", exit_codes.USAGE
        ) from exc

    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CommandError(f"config file {path} is not valid YAML: {exc}", exit_codes.USAGE) from exc
    if data is None:
        return Config(path=str(path))
    if not isinstance(data, dict):
        raise CommandError(f"config file {path}: expected a mapping with key 'output'", exit_codes.USAGE)
    unknown = sorted(str(k) for k in data if k != "output")
    if unknown:
        raise CommandError(f"config file {path}: unknown key(s) {', '.join(unknown)}", exit_codes.USAGE)
    output = data.get("output")
    if output is not None and output not in FORMATS:
        raise CommandError(
            f"config file {path}: output {output!r}: {invalid_output(FORMATS)}", exit_codes.USAGE
        )
    return Config(output=output, path=str(path))


def resolve_output(
    flag: str | None,
    allowed: Sequence[str],
    config: Config,
    *,
    environ: Mapping[str, str] | None = None,
) -> str:
    """The output format for a command accepting ``allowed`` formats."""
    env = os.environ if environ is None else environ
    if flag is not None:
        if flag not in allowed:
            raise CommandError(f"-o {flag!r}: {invalid_output(allowed)}", exit_codes.USAGE)
        return flag
    for value, source in ((env.get(ENV_OUTPUT) or None, f"${ENV_OUTPUT}"), (config.output, "config")):
        if value is None:
            continue
        if value not in FORMATS:
            raise CommandError(f"{source} {value!r}: {invalid_output(FORMATS)}", exit_codes.USAGE)
        if value in allowed:  # a default that this command does not offer (e.g. wide) is skipped
            return value
    return DEFAULT_OUTPUT if DEFAULT_OUTPUT in allowed else allowed[0]
