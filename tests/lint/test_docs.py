"""docs/catalog.md lists every lint code with its severity."""

from __future__ import annotations

from pathlib import Path

from workload_map.lint import CODES

DOC = Path(__file__).resolve().parents[2] / "docs" / "catalog.md"


def test_every_code_documented() -> None:
    text = DOC.read_text()
    for code, (severity, _) in CODES.items():
        assert f"| `{code}` | {severity} |" in text, code
