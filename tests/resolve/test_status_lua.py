"""``workload_map.resolve.lua.status_chunk``: the status part of a definition as a Lua chunk (for
health-check exporters such as Argo CD's), run under Karmada-like Lua 5.1, gives the phases and
primary phase :func:`workload_map.resolve.resolve_status` gives, on every recorded state."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
import yaml

from tests.support.apiserver_binary import shared_dir
from tests.support.karmada_lua import KarmadaLua, karmada_json
from workload_map.catalog import get_definition
from workload_map.resolve import compile_definition, resolve_status
from workload_map.resolve.lua import status_chunk

pytestmark = pytest.mark.corpus

RECORDINGS = shared_dir() / "upstream-recordings"


def _states() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted(RECORDINGS.glob("*/*/*/*.yaml")) if RECORDINGS.is_dir() else []:
        if path.parts[-4] == "flows":
            continue
        doc = yaml.safe_load(path.read_text())
        out += [e["object"] for e in doc.get("events") or [] if e.get("kind") == "STATE"]
    return out


STATES = _states()


@cache
def _chunk(api_version: str, kind: str) -> str:
    chunk, refused = status_chunk(compile_definition(get_definition(api_version, kind)))
    assert refused == []
    return chunk


def test_the_status_chunk_gives_the_resolvers_phases() -> None:
    assert len(STATES) == 253
    k = KarmadaLua(track_depth=False)
    for obj in STATES:
        status = k.lua.execute(_chunk(obj["apiVersion"], obj["kind"]))(k.to_lua(karmada_json(obj)))
        phases = [status.phases[i] for i in range(1, len(status.phases) + 1)]
        want = resolve_status(get_definition(obj["apiVersion"], obj["kind"]), karmada_json(obj))
        assert phases == [p.value for p in want.phases], obj["metadata"]["name"]
        assert status.primary == want.primary_phase.value
        assert status.phase == want.phase
