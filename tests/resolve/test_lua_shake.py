"""``workload_map.resolve.lua.shake``: scripts keep only the runtime they reach, and lose nothing
they use.

* What the shaker believes each runtime defines is what the loaded runtime really holds (every
  key of ``J``, ``J.B``, ``R`` and ``K`` after loading, and nothing else).
* A shaken script reads no global its whole version does not (a dropped local would be read as a
  global: found in the compiled bytecode, every function included, run or not).
* Every member a shaken script uses is defined in it.
The exported scripts' answers are checked against the webhook in tests/interpret/test_lua_agreement.py.
"""

from __future__ import annotations

import re
import struct
from functools import cache
from typing import Any

import pytest
from lupa import lua51

from workload_map.catalog import list_definitions
from workload_map.interpret.export import CUSTOMIZATIONS, export_customization, operations_chunk
from workload_map.resolve import compile_definition
from workload_map.resolve.lua import prelude, runtime_chunks, status_chunk
from workload_map.resolve.lua.shake import _statements

# --- Lua 5.1 bytecode: the globals a chunk reads and writes -------------------------------------

GETGLOBAL, SETGLOBAL = 5, 7
#: Globals of Karmada's Lua sandbox (luavm.VM.setLib: base functions, table, string, math, os;
#: kube through require) a script may read.
SANDBOX = {
    *("assert", "error", "ipairs", "next", "pairs", "pcall", "select", "tonumber", "tostring", "type"),
    *("unpack", "require", "string", "table", "math", "os"),
}


class _Reader:
    def __init__(self, data: bytes) -> None:
        assert data[:4] == b"\x1bLua" and data[4] == 0x51, "not Lua 5.1 bytecode"
        self.int_size, self.size_t = data[7], data[8]
        assert data[6] == 1 and data[9] == 4 and data[10] == 8, "unexpected bytecode layout"
        self.data, self.pos = data, 12

    def take(self, n: int) -> bytes:
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def int(self) -> int:
        return int.from_bytes(self.take(self.int_size), "little")

    def string(self) -> str:
        n = int.from_bytes(self.take(self.size_t), "little")
        return self.take(n)[:-1].decode("utf-8", "replace") if n else ""

    def function(self, out: dict[str, set[str]]) -> None:
        self.string()
        self.take(2 * self.int_size + 4)  # line defined, last line, nups, params, vararg, stack
        code = [struct.unpack("<I", self.take(4))[0] for _ in range(self.int())]
        constants: list[Any] = []
        for _ in range(self.int()):
            kind = self.take(1)[0]
            if kind == 1:
                constants.append(bool(self.take(1)[0]))
            elif kind == 3:
                constants.append(struct.unpack("<d", self.take(8))[0])
            elif kind == 4:
                constants.append(self.string())
            else:
                constants.append(None)
        for ins in code:
            op = ins & 0x3F
            if op in (GETGLOBAL, SETGLOBAL):
                out["get" if op == GETGLOBAL else "set"].add(constants[ins >> 14])
        for _ in range(self.int()):
            self.function(out)
        self.take(self.int() * self.int_size)  # line info
        for _ in range(self.int()):  # local variables
            self.string()
            self.take(2 * self.int_size)
        for _ in range(self.int()):  # upvalue names
            self.string()


LUA = lua51.LuaRuntime()
_BYTES = lua51.LuaRuntime(encoding=None)  # bytecode comes back as bytes
_DUMP = _BYTES.eval(
    b"function(s) local f, e = loadstring(s); if not f then error(e) end; return string.dump(f) end"
)


def globals_of(script: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {"get": set(), "set": set()}
    _Reader(bytes(_DUMP(script.encode()))).function(out)
    return out


# --- the shaker's view against the loaded runtimes ----------------------------------------------


def _declared(chunk: Any) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for s in _statements(chunk):
        for d in s.defines:
            if "." in d:
                table, name = d.split(".", 1)
                out.setdefault(table, set()).add(name)
    return out


def test_the_shaker_sees_every_member_the_runtimes_define() -> None:
    j_chunk, r_chunk = runtime_chunks()
    k_chunk = operations_chunk()
    loaded = LUA.execute(
        "local J = (function(...)\n" + j_chunk.source + "\nend)()\n"
        "local R = (function(...)\n" + r_chunk.source + "\nend)(J)\n"
        "local K = (function(...)\n" + k_chunk.source + "\nend)(J, R, {})\n"
        "local function keys(t) local out = {} for k in pairs(t) do out[#out + 1] = k end return out end\n"
        "return {J = keys(J), B = keys(J.B), R = keys(R), K = keys(K)}"
    )
    real = {table: set(loaded[table].values()) for table in ("J", "B", "R", "K")}
    declared: dict[str, set[str]] = {}
    for chunk in (j_chunk, r_chunk, k_chunk):
        for table, names in _declared(chunk).items():
            declared.setdefault(table, set()).update(names)
    assert declared == real


# --- shaken scripts ----------------------------------------------------------------------------


@cache
def _scripts() -> list[tuple[str, str]]:
    out = []
    for karta in list_definitions():
        export = export_customization(compile_definition(karta))
        for key, body in export.customization["spec"]["customizations"].items():
            out.append((f"{karta.metadata.name}/{key}", body["luaScript"]))
    return out


def _whole(script: str) -> str:
    """The same script with the whole runtimes and operations (what it was before shaking)."""
    head, _, rest = script.partition("local J = (function(...)")
    rest = rest.split("\nend)(J)\n", 1)[1]
    before_k, _, after = rest.partition("local K = (function(...)\n")
    k_end = after.index("\nend)(J, R, D)")
    return (
        head + prelude() + before_k + "local K = (function(...)\n" + operations_chunk().source + after[k_end:]
    )


def test_every_definition_exports_shaken_scripts() -> None:
    scripts = _scripts()
    assert len(scripts) == 31 * len(CUSTOMIZATIONS)
    whole = sum(len(_whole(s)) for _, s in scripts)
    shaken = sum(len(s) for _, s in scripts)
    assert shaken < whole / 2, (shaken, whole)


@pytest.mark.parametrize("name", [n for n, _ in _scripts()])
def test_a_shaken_script_reads_no_global_its_whole_version_does_not(name: str) -> None:
    script = dict(_scripts())[name]
    shaken, whole = globals_of(script), globals_of(_whole(script))
    assert shaken["get"] <= whole["get"], shaken["get"] - whole["get"]
    assert shaken["set"] == whole["set"] and len(shaken["set"]) == 1
    assert shaken["get"] <= SANDBOX, shaken["get"] - SANDBOX


def _used_members(script: str) -> set[str]:
    """Every ``J.x``, ``J.B.x``, ``R.x`` and ``K.x`` the script's code names (strings included:
    over-approximating is fine here), read with a pattern of its own."""
    used = {f"{t}.{n}" for t, n in re.findall(r"(?<![\w.])([JRK])\.([A-Za-z_]\w*)", script)}
    return used | {f"B.{n}" for n in re.findall(r"(?<![\w.])J\.B\.([A-Za-z_]\w*)", script)}


def test_every_member_a_shaken_script_uses_is_defined_in_it() -> None:
    every = set()
    for chunk in (*runtime_chunks(), operations_chunk()):
        for s in _statements(chunk):
            every |= {d for d in s.defines if "." in d}
    for name, script in _scripts():
        defined: set[str] = set()
        for chunk in (*runtime_chunks(), operations_chunk()):
            for s in _statements(chunk):
                if _compacted(s.text) in script:  # scripts hold the runtimes compacted
                    defined |= {d for d in s.defines if "." in d}
        missing = (_used_members(script) & every) - defined
        assert not missing, (name, sorted(missing)[:5])


def _compacted(text: str) -> str:
    return "\n".join(
        line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("--")
    )


def test_the_status_chunk_is_shaken_too() -> None:
    karta = next(k for k in list_definitions() if k.metadata.name == "ray-io-raycluster-v1")
    chunk, refused = status_chunk(compile_definition(karta))
    assert refused == []
    assert len(chunk) < len(prelude()) / 2
    assert globals_of(chunk)["set"] == set()
