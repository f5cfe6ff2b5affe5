"""``wmap resume``: see :mod:`workload_map.cli.commands.suspend`."""

from __future__ import annotations

from workload_map.cli.commands.suspend import make

command = make("resume")
