"""A real exec credential plugin for tests: a small Python script written to a temp dir."""

from __future__ import annotations

import sys
from pathlib import Path

PLUGIN = r"""#!{python}
import json, os, sys
from pathlib import Path
state = Path({state!r})
state.mkdir(exist_ok=True)
runs = len(list(state.glob("run-*"))) + 1
info = os.environ.get("KUBERNETES_EXEC_INFO", "")
(state / f"run-{{runs}}").write_text(json.dumps({{"info": info, "args": sys.argv[1:],
    "extra": os.environ.get("PLUGIN_EXTRA"), "stdin_tty": sys.stdin is not None and sys.stdin.isatty()}}))
tokens = (state / "tokens").read_text().split() if (state / "tokens").exists() else []
api_version = json.loads(info)["apiVersion"] if info else "client.authentication.k8s.io/v1"
status = {{}}
if tokens:
    status["token"] = tokens[min(runs, len(tokens)) - 1]
if (state / "cert").exists():
    status["clientCertificateData"] = (state / "cert").read_text()
    status["clientKeyData"] = (state / "key").read_text()
if (state / "expires").exists():
    status["expirationTimestamp"] = (state / "expires").read_text().strip()
if (state / "fail").exists():
    sys.stderr.write("plugin failed on purpose\n")
    sys.exit(3)
print(json.dumps({{"apiVersion": api_version, "kind": "ExecCredential", "status": status}}))
"""


def write_plugin(directory: Path) -> tuple[Path, Path]:
    """Write the plugin; returns (script, state dir). Put tokens (one per run, the last repeats) in
    ``state/tokens``; ``state/cert`` + ``state/key`` for a certificate; ``state/expires`` for an expiry."""
    state = directory / "state"
    state.mkdir(parents=True, exist_ok=True)
    script = directory / "kube-plugin"
    script.write_text(PLUGIN.format(python=sys.executable, state=str(state)))
    script.chmod(0o755)
    return script, state


def runs(state: Path) -> list[dict[str, object]]:
    import json

    files = sorted(state.glob("run-*"), key=lambda p: int(p.name.split("-")[1]))
    return [json.loads(p.read_text()) for p in files]
