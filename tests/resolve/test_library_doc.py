"""The python examples of docs/library.md (up to the write-back section) run, in order."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "library.md"
STOP = "## Write-back, pods, gangs and placement"


def test_library_examples_run() -> None:
    text = DOC.read_text()
    text = text.split(STOP, 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 6
    namespace: dict[str, object] = {}
    for i, block in enumerate(blocks):
        code = compile(block, f"docs/library.md[python block {i}]", "exec")
        exec(code, namespace)
