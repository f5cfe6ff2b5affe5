"""Hostile input to the readers (issue 23): worst time and peak memory per attack, before and after.

Each attack (built by ``tests/support/hostile_inputs.py`` from the issue's text) runs ``wmap`` (or,
for the REST API, the server's definition registration) in its own subprocess with a timeout and an
address-space limit, and reports wall time, peak RSS (``wait4``), the exit code and the first line
of stderr. With ``--before SRC`` the same attacks also run against another source tree (the base
commit's ``src``), side by side, and the ratio after/before is printed.

Run: ``.venv/bin/python bench/bench_hostile_input.py [--before /path/to/base/src] [--timeout 60]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import hostile_inputs as h  # noqa: E402

CLI = "import sys; from workload_map.cli.main import run; sys.exit(run(sys.argv[1:]))"
# The REST API's registration (POST /api/v1/workload-types?dryRun=true) without a cluster: the
# definition is validated before the cluster is asked anything, which is the CPU the issue measured.
REST = """
import json, sys
from workload_map.server.errors import HttpError
from workload_map.server.types import register_type
body = json.loads(open(sys.argv[1], "rb").read())
try:
    register_type(None, body, dry_run=True)
except HttpError as exc:
    print(f"{exc.status}: {str(exc)[:200]}", file=sys.stderr)
    sys.exit(1)
"""


@dataclass
class Attack:
    name: str
    argv: Callable[[Path], list[str]]  # python arguments after the interpreter, given the work dir


@dataclass
class Outcome:
    seconds: float
    rss_mb: float
    code: str  # exit code, "timeout" or a signal name
    message: str


def _cli(*args: str) -> Callable[[Path], list[str]]:
    return lambda d: ["-c", CLI, *(a.format(d=d) for a in args)]


ATTACKS = [
    Attack("ownerRef cycle, 1,000 components: validate", _cli("validate", "{d}/cycle.yaml")),
    Attack("4,000 distinct expressions: validate", _cli("validate", "{d}/expressions.yaml")),
    Attack("100,000 unknown fields: validate", _cli("validate", "{d}/unknown.yaml")),
    Attack("100,000 repeated keys: validate", _cli("validate", "{d}/duplicates.yaml")),
    Attack("FIFO as definition file: validate", _cli("validate", "{d}/fifo.yaml")),
    Attack("FIFO as --definitions: definitions", _cli("--definitions", "{d}/fifo.yaml", "definitions")),
    Attack("/dev/zero: validate", _cli("validate", "/dev/zero")),
    Attack("/dev/zero as --definitions", _cli("--definitions", "/dev/zero", "definitions")),
    Attack("directory of 100,000 files: validate", _cli("validate", "{d}/many")),
    Attack("directory of 100,000 files: --definitions", _cli("--definitions", "{d}/many", "definitions")),
    Attack("250,000 containers in JSON: describe -f", _cli("describe", "-f", "{d}/containers.json")),
    Attack("5,000-digit quantity: describe -f", _cli("describe", "-f", "{d}/quantity.json")),
    Attack("16 MiB of '- a' YAML lines: describe -f", _cli("describe", "-f", "{d}/lines.yaml")),
    Attack("REST register dryRun, 94 KB cycle", lambda d: ["-c", REST, f"{d}/cycle-94k.json"]),
    Attack("typo 'runing:' in statusMappings: validate", _cli("validate", "{d}/typo.yaml")),
]


def prepare(work: Path, scale: float) -> None:
    def n(count: int) -> int:
        return max(2, int(count * scale))

    (work / "cycle.yaml").write_text(json.dumps(h.ownerref_cycle(n(1000))))
    (work / "expressions.yaml").write_text(json.dumps(h.many_expressions(n(4000))))
    (work / "unknown.yaml").write_text(h.unknown_fields_yaml(n(100_000)))
    (work / "duplicates.yaml").write_text(h.duplicate_keys_yaml(n(100_000)))
    h.make_fifo(work / "fifo.yaml")
    h.directory_of_files(work / "many", n(100_000))
    compact = {"separators": (",", ":")}
    (work / "containers.json").write_text(json.dumps(h.jobset_with_containers(n(250_000)), **compact))
    (work / "quantity.json").write_text(json.dumps(h.huge_quantity_jobset(5000)))
    # Within the 16 MiB byte cap, but 4 million YAML nodes for libyaml to compose.
    (work / "lines.yaml").write_text("- a\n" * int(4 * 1024 * 1024 * scale))
    cycle = h.ownerref_cycle_of_size(int(94 * 1024 * scale), components=n(1000))
    (work / "cycle-94k.json").write_text(json.dumps(cycle, **compact))
    typo = h.karta("typo", {"structureDefinition": {"rootComponent": h._root()}})
    mappings = typo["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]["statusMappings"]
    mappings["runing"] = mappings.pop("running")
    (work / "typo.yaml").write_text(json.dumps(typo))


def run_one(src: Path, attack: Attack, work: Path, timeout: float, mem_limit: int) -> Outcome:
    env = {**os.environ, "PYTHONPATH": str(src), "HOME": str(work / "home")}

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (mem_limit, mem_limit))
        os.setsid()

    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, *attack.argv(work)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=open(work / "stderr.txt", "wb"),  # noqa: SIM115
        env=env,
        cwd=work,
        preexec_fn=limits,
    )
    code = ""
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - start > timeout:
            os.killpg(proc.pid, signal.SIGKILL)
            _, status, usage = os.wait4(proc.pid, 0)
            code = "timeout"
            break
        time.sleep(0.02)
    seconds = time.monotonic() - start
    proc.returncode = 0  # reaped by wait4
    if not code:
        code = str(os.waitstatus_to_exitcode(status))
    err = (work / "stderr.txt").read_text(errors="replace").strip().splitlines()
    message = next((line for line in err if line.startswith("error:")), err[0] if err else "")
    return Outcome(seconds, usage.ru_maxrss / 1024, code, message[:110])


def _cell(o: Outcome | None) -> str:
    if o is None:
        return ""
    return f"{o.seconds:7.2f}s {o.rss_mb:7.0f}MB {o.code:>7}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", type=Path, help="another source tree (its src/) to run side by side")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--mem-limit-mb", type=int, default=3072, help="address-space limit per run")
    parser.add_argument("--scale", type=float, default=1.0, help="shrink the attacks (tests use 0.01)")
    parser.add_argument("--only", default="", help="run only attacks whose name contains this text")
    parser.add_argument("--messages", action="store_true", help="print each run's error line")
    parser.add_argument("--no-after", action="store_true", help="run only the --before tree")
    args = parser.parse_args()

    trees = [("before", args.before)] if args.before else []
    if not (args.no_after and trees):
        trees.append(("after", ROOT / "src"))
    with tempfile.TemporaryDirectory(prefix="wmap-hostile-") as tmp:
        work = Path(tmp)
        (work / "home").mkdir()
        prepare(work, args.scale)
        header = f"{'attack':<46} " + " ".join(
            f"{label + ' (time, peak RSS, exit)':<32}" for label, _ in trees
        )
        print(header + ("  time ratio" if len(trees) == 2 else ""))
        for attack in ATTACKS:
            if args.only and args.only not in attack.name:
                continue
            outcomes = [
                run_one(src, attack, work, args.timeout, args.mem_limit_mb * 1024 * 1024) for _, src in trees
            ]
            line = f"{attack.name:<46} " + " ".join(f"{_cell(o):<32}" for o in outcomes)
            if len(outcomes) == 2 and outcomes[1].seconds > 0:
                line += f"  {outcomes[0].seconds / outcomes[1].seconds:8.1f}x"
            print(line, flush=True)
            if args.messages:
                for (label, _), o in zip(trees, outcomes, strict=True):
                    print(f"    {label}: {o.message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
