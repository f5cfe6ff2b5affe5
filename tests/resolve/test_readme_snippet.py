"""The README's library snippet runs from the repository root and prints what its comment says
(issue 24: it printed ``ResourceStatus.RUNNING``; a phase prints as its word)."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

from workload_map.model.definition import ResourceStatus

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_library_snippet_prints_what_it_says() -> None:
    text = (ROOT / "README.md").read_text()
    section = text.split("As a library", 1)[1]
    (block,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)[:1]
    promised = re.search(r"#\s*(.+)\n", block.splitlines()[-1] + "\n")
    assert promised is not None, "the snippet's last line says what it prints"
    out = io.StringIO()
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)
        with contextlib.redirect_stdout(out):
            exec(compile(block, "README.md[library snippet]", "exec"), {})
    finally:
        os.chdir(cwd)
    assert out.getvalue() == promised.group(1).strip() + "\n" == "Running 12\n"


def test_a_phase_prints_as_its_word() -> None:
    phase = ResourceStatus.RUNNING
    assert str(phase) == f"{phase}" == "Running" and f"{phase:>9}" == "  Running"
    assert repr(phase) == "<ResourceStatus.RUNNING: 'Running'>" and phase == "Running"
