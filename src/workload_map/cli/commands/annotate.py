"""``wmap annotate``: see :mod:`workload_map.cli.commands.label`."""

from __future__ import annotations

from workload_map.cli.commands.label import make

command = make("annotate")
