"""Lua 5.1 (lupa) set up the way Karmada runs resource-interpreter scripts, for tests.

Facts from Karmada's source (``pkg/resourceinterpreter/customized/declarative/luavm``) and the
libraries it vendors (gopher-lua, layeh.com/gopher-json), restated here:

* **Libraries** (``VM.setLib``): package, base, table, a "safe" string library without ``gsub``,
  ``rep`` and ``dump`` (``pkg/util/lifted/lua/string_safe.go``), math and a safe os (``time``,
  ``date``). ``collectgarbage``, ``dofile``, ``getfenv``, ``getmetatable``, ``load``,
  ``loadfile``, ``loadstring``, ``rawequal``, ``rawget``, ``rawset``, ``setfenv``,
  ``setmetatable``, ``module`` and ``newproxy`` are replaced by functions raising an error; no io,
  debug or coroutine. ``kube`` is preloaded for ``require("kube")``.
* **Arguments** go through ``json.Marshal`` and gopher-json's ``Decode``: numbers become doubles,
  ``null`` members and ``null`` array elements disappear (``LTable.Append``/``RawSetString`` with
  nil), objects become tables.
* **Results** go through gopher-json's ``Encode`` (an empty table is ``[]``; a table with keys
  1..n an array, otherwise an object; a table met twice anywhere in the result fails, since the
  encoder's ``visited`` set is never cleared; mixed or sparse keys fail) and then
  ``convertEmptySliceToEmptyStructPartly``: an empty ``[]`` whose path (array indices dropped) is an
  empty object in the reference objects becomes ``{}``, one that is an empty array there stays, any
  other is deleted.
* **Limits**: gopher-lua's call stack holds 256 frames; scripts here are also checked to stay
  well below that (:attr:`KarmadaLua.max_depth`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from lupa import lua51

from workload_map.interpret.dependencies import pod_references
from workload_map.resolve.quantity import format_binary, format_decimal, parse_quantity

DISABLED = (
    "collectgarbage",
    "dofile",
    "getfenv",
    "getmetatable",
    "load",
    "loadfile",
    "loadstring",
    "rawequal",
    "rawget",
    "rawset",
    "setfenv",
    "setmetatable",
    "module",
    "newproxy",
)
REVERSED_PAIRS = """(function(rawnext)
  return function(t)
    local keys, n = {}, 0
    local k = rawnext(t)
    while k ~= nil do n = n + 1; keys[n] = k; k = rawnext(t, k) end
    local i = n + 1
    return function() i = i - 1; if i >= 1 then return keys[i], t[keys[i]] end end, t, nil
  end
end)(next)"""
#: Frames a script may use here; gopher-lua stops at 256 (CallStackSize), with room kept for
#: Karmada's own frames.
DEPTH_LIMIT = 200


class LuaScriptError(AssertionError):
    """A script failed (or returned what Karmada would fail to convert)."""


class EncodeError(LuaScriptError):
    """gopher-json could not encode the result."""


class KarmadaLua:
    """One Lua state prepared like Karmada's (see the module doc)."""

    def __init__(self, *, track_depth: bool = True, pairs_order: str = "lua") -> None:
        """``pairs_order``: "lua" (C Lua's hash order) or "reversed" (the keys ``next`` gives, in
        reverse). gopher-lua iterates a table in insertion order (``LTable.Next``), which no C
        Lua table does: scripts whose answers must not depend on the order are run both ways."""
        self.lua = lua51.LuaRuntime(unpack_returned_tuples=True, register_eval=False)
        g = self.lua.globals()
        if pairs_order == "reversed":
            g.pairs = self.lua.eval(REVERSED_PAIRS)
        elif pairs_order != "lua":
            raise ValueError(pairs_order)
        self._debug = g.debug
        for name in DISABLED:
            self.lua.execute(
                f"function {name}() error('call function {name} is not supported in karmada "
                "customized resourceinterpreter.') end"
            )
        for name in ("gsub", "rep", "dump"):
            message = f"The Lua function string.{name} is not supported by Karmada."
            self.lua.execute(f"string.{name} = function() error('{message}') end")
        g.io = None
        g.coroutine = None
        g.dofile = self.lua.eval("function() error('dofile is not supported') end")
        os_safe = self.lua.table_from({"time": g.os.time, "date": g.os.date})
        g.os = os_safe
        self._install_kube()
        g.debug = None
        self.max_depth = 0
        self.track_depth = track_depth
        self._encode: Any = None

    # --- kube.* (pkg/resourceinterpreter/customized/declarative/luavm/kube.go) ----------------
    def _install_kube(self) -> None:
        kube = self.lua.table_from(
            {
                "getPodDependencies": self._get_pod_dependencies,
                "accuratePodRequirements": self._accurate_pod_requirements,
                "resourceAdd": self._resource_add,
                "getResourceQuantity": self._get_resource_quantity,
            }
        )
        loader = self.lua.eval("function(k) return function() return k end end")
        self.lua.globals().package.preload.kube = loader(kube)

    def _get_pod_dependencies(self, template: Any, namespace: Any = None) -> Any:
        # kube.go: exactly two arguments; namespace "default" when nil; the template converted to a
        # PodTemplateSpec, a pod made from it in the namespace, GetDependenciesFromPodTemplate.
        spec = self.encode(template).get("spec") if template is not None else None
        ns = namespace if isinstance(namespace, str) else ("default" if namespace is None else str(namespace))
        refs = {(kind, name) for kind, name in pod_references(spec if isinstance(spec, dict) else {}) if name}
        out = [{"apiVersion": "v1", "kind": k, "namespace": ns, "name": n} for k, n in sorted(refs)]
        return self.to_lua(out)

    def _accurate_pod_requirements(self, template: Any) -> Any:
        # helper.GenerateReplicaRequirements: the node claim and the template's requests
        # (containers summed, init containers' maximum, overhead; requests falling back to limits).
        spec = self.encode(template).get("spec") or {}
        total: dict[str, int] = {}

        def requests(c: Mapping[str, Any]) -> dict[str, int]:
            res = c.get("resources") or {}
            merged = {**(res.get("limits") or {}), **(res.get("requests") or {})}
            return {k: parse_quantity(v) for k, v in merged.items()}

        for c in spec.get("containers") or []:
            for k, v in requests(c).items():
                total[k] = total.get(k, 0) + v
        for c in spec.get("initContainers") or []:
            for k, v in requests(c).items():
                total[k] = max(total.get(k, 0), v)
        for k, v in (spec.get("overhead") or {}).items():
            total[k] = total.get(k, 0) + parse_quantity(v)
        request: dict[str, str] = {}
        for k, v in total.items():
            if k == "cpu":
                millis = -(-v // 1_000_000)
                if millis > 0:
                    request[k] = f"{millis}m" if millis % 1000 else format_decimal(millis // 1000)
            else:
                units = -(-v // 1_000_000_000)
                if units > 0:
                    binary = k in ("memory", "ephemeral-storage") or k.startswith("hugepages-")
                    request[k] = format_binary(units) if binary else format_decimal(units)
        claim: dict[str, Any] = {}
        if spec.get("nodeSelector") is not None:
            claim["nodeSelector"] = spec["nodeSelector"]
        if spec.get("tolerations"):
            claim["tolerations"] = spec["tolerations"]
        hard = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        if hard is not None:
            claim["hardNodeAffinity"] = hard
        out: dict[str, Any] = {}
        if claim:
            out["nodeClaim"] = claim
        if request:
            out["resourceRequest"] = request
        return self.to_lua(out) if out else None

    def _resource_add(self, *quantities: Any) -> str:
        # resource.Quantity{} plus each argument (nil: a zero Quantity; a string: MustParse):
        # Add takes the addend's format while the sum is still zero; String() prints canonically.
        total, fmt = 0, ""
        for q in quantities:
            if q is None:
                value, q_fmt = 0, ""
            elif isinstance(q, str):
                value, q_fmt = parse_quantity(q), quantity_format(q)
            else:
                raise LuaScriptError(f"bad argument to resourceAdd (string expected, got {type(q).__name__})")
            if total == 0:
                fmt = q_fmt
            total += value
        return quantity_string(total, fmt)

    def _get_resource_quantity(self, q: Any) -> float:
        return (parse_quantity(q) if q is not None else 0) / 1e9

    # --- values across the boundary -------------------------------------------------------------
    def encode(self, value: Any) -> Any:
        """gopher-json's ``Encode`` of a Lua result, as JSON data (:class:`EncodeError` when
        gopher-json would fail)."""
        if self._encode is None:
            self._encode = self.lua.eval(ENCODE)
        try:
            text = self._encode(value)
        except Exception as exc:
            raise EncodeError(str(exc)) from exc
        return _numbers(json.loads(text))

    def to_lua(self, value: Any) -> Any:
        """gopher-json's ``Decode`` of ``value``'s JSON: nulls gone, numbers doubles."""
        if value is None:
            return None
        if isinstance(value, bool | str):
            return value
        if isinstance(value, int | float):
            return float(value)
        if isinstance(value, list):
            items = [self.to_lua(v) for v in value if v is not None]
            return self.lua.table_from(items)
        if isinstance(value, dict):
            return self.lua.table_from({k: self.to_lua(v) for k, v in value.items() if v is not None})
        raise TypeError(type(value).__name__)

    def run(self, script: str, function: str, *args: Any, results: int = 1) -> list[Any]:
        """``VM.RunScript``: run the chunk, call the global ``function`` with the arguments
        converted as Karmada converts them; the raw Lua results."""
        try:
            self.lua.execute(script)
        except Exception as exc:
            raise LuaScriptError(f"loading the script failed: {exc}") from exc
        fn = self.lua.globals()[function]
        if fn is None:
            raise LuaScriptError(f"not found function {function}")
        lua_args = [self.to_lua(a) for a in args]
        hook = self._depth_hook() if self.track_depth else None
        try:
            out = fn(*lua_args)
        except Exception as exc:
            raise LuaScriptError(f"{function}: {exc}") from exc
        finally:
            if hook is not None:
                self._debug.sethook()
        if not isinstance(out, tuple):
            out = (out,)
        out = list(out) + [None] * (results - len(out))
        return out[:results]

    def _depth_hook(self) -> Any:
        # Counts Lua frames at every call; remembers the deepest.
        state = self.lua.table_from({"max": 0})
        set_hook = self.lua.eval(
            """function(debug, state)
                debug.sethook(function()
                  local depth = 2
                  while debug.getinfo(depth, "l") do depth = depth + 1 end
                  if depth > state.max then state.max = depth end
                end, "c")
              end"""
        )
        set_hook(self._debug, state)
        self._state = state
        return True

    def deepest(self) -> int:
        return int(self._state.max) if getattr(self, "_state", None) is not None else 0


# --- apimachinery's resource.Quantity text ----------------------------------------------------

_BINARY_SUFFIXES = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_EXPONENTS = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}


def quantity_format(text: str) -> str:
    """The format ``resource.ParseQuantity`` gives a quantity: its suffix's."""
    m = re.match(r"^[+-]?(?:\d+\.?\d*|\.\d+)(.*)$", text.strip())
    suffix = m[1] if m else ""
    if suffix in _BINARY_SUFFIXES:
        return "BinarySI"
    if re.fullmatch(r"[eE][+-]?\d+", suffix):
        return "DecimalExponent"
    return "DecimalSI"


def quantity_string(nanos: int, fmt: str) -> str:
    """``Quantity.String()`` of an exact value in nano-units: BinarySI when whole and at least
    1024 in magnitude, else DecimalSI (or DecimalExponent when so formatted, or no format), the
    mantissa with the largest power-of-1000 exponent that keeps it whole."""
    if nanos == 0:
        return "0"
    if fmt == "BinarySI" and not -1024 * 10**9 < nanos < 1024 * 10**9 and nanos % 10**9 == 0:
        return format_binary(nanos // 10**9)
    mantissa, exponent = nanos, -9
    while mantissa % 1000 == 0 and exponent < 18:
        mantissa //= 1000
        exponent += 3
    if fmt in ("BinarySI", "DecimalSI"):
        return f"{mantissa}{_DECIMAL_EXPONENTS[exponent]}"
    return f"{mantissa}e{exponent}" if exponent else str(mantissa)


# --- gopher-json's Encode and Karmada's conversion -----------------------------------------------

# gopher-json's Encode, in Lua (a table's identity is only visible there): an empty table is [],
# the first key decides array (keys 1..n, no others) or object (string keys only); a table met
# twice fails (the visited set is never cleared).
ENCODE = r"""
function(value)
  local visited = {}
  local function quote(s)
    local out = {'"'}
    for i = 1, #s do
      local b = s:byte(i)
      local c = s:sub(i, i)
      if c == '"' then out[#out + 1] = '\\"'
      elseif c == '\\' then out[#out + 1] = '\\\\'
      elseif b < 32 then out[#out + 1] = string.format('\\u%04x', b)
      else out[#out + 1] = c end
    end
    out[#out + 1] = '"'
    return table.concat(out)
  end
  local function enc(v)
    local t = type(v)
    if v == nil then return "null" end
    if t == "boolean" then return v and "true" or "false" end
    if t == "number" then
      if v ~= v or v == math.huge or v == -math.huge then
        error("json: unsupported value: " .. tostring(v))
      end
      return string.format("%.17g", v)
    end
    if t == "string" then return quote(v) end
    if t ~= "table" then error("cannot encode " .. t .. " to JSON") end
    if visited[v] then error("cannot encode recursively nested tables to JSON") end
    visited[v] = true
    local k = next(v)
    if k == nil then return "[]" end
    local parts = {}
    if type(k) == "number" then
      local n = 0
      for key in pairs(v) do
        if type(key) ~= "number" then error("cannot encode mixed or invalid key types") end
        n = n + 1
      end
      for i = 1, n do
        if v[i] == nil then error("cannot encode sparse array") end
        parts[i] = enc(v[i])
      end
      return "[" .. table.concat(parts, ",") .. "]"
    end
    for key, x in pairs(v) do
      if type(key) ~= "string" then error("cannot encode mixed or invalid key types") end
      parts[#parts + 1] = quote(key) .. ":" .. enc(x)
    end
    return "{" .. table.concat(parts, ",") .. "}"
  end
  return enc(value)
end
"""


def _numbers(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    return value


def empty_fields(value: Any, path: tuple[str, ...] = ()) -> tuple[set[tuple[str, ...]], set[tuple[str, ...]]]:
    """(paths of empty arrays, paths of empty objects) of a JSON value, array indices dropped
    (``traverseToFindEmptyField``)."""
    arrays: set[tuple[str, ...]] = set()
    objects: set[tuple[str, ...]] = set()
    if isinstance(value, dict):
        items: Sequence[tuple[Any, Any]] = list(value.items())
    elif isinstance(value, list):
        items = [(None, v) for v in value]
    else:
        return arrays, objects
    for key, v in items:
        here = path if key is None else (*path, key)
        if isinstance(v, list) and not v:
            arrays.add(here)
        elif isinstance(v, dict) and not v:
            objects.add(here)
        elif isinstance(v, list | dict):
            a, o = empty_fields(v, here)
            arrays |= a
            objects |= o
    return arrays, objects


def fix_empty(value: Any, references: Sequence[Any], *, struct: bool) -> Any:
    """``convertEmptySliceToEmptyStructPartly``: empty ``[]`` fields become ``{}`` where the
    references hold an empty object at that path, stay where they hold an empty array, and are
    deleted otherwise; a whole empty result is ``{}`` for a struct target."""
    if value == []:
        return {} if struct else []
    arrays: set[tuple[str, ...]] = set()
    objects: set[tuple[str, ...]] = set()
    for ref in references:
        a, o = empty_fields(ref)
        arrays |= a
        objects |= o

    def go(v: Any, path: tuple[str, ...]) -> Any:
        if isinstance(v, dict):
            out: dict[str, Any] = {}
            for k, x in v.items():
                here = (*path, k)
                if x == []:
                    if here in objects:
                        out[k] = {}
                    elif here in arrays:
                        out[k] = []
                    continue
                out[k] = go(x, here)
            return out
        if isinstance(v, list):
            kept: list[Any] = []
            for x in v:
                if x == []:
                    if path in objects:
                        kept.append({})
                    elif path in arrays:
                        kept.append([])
                    else:
                        continue  # sjson.Delete of the element
                else:
                    kept.append(go(x, path))
            return kept
        return v

    return go(value, ())


def as_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


# --- running an exported customization as Karmada's VM does -----------------------------------------

#: operation -> (customization field, Lua function, result count)
ENTRY_POINTS = {
    "InterpretReplica": ("replicaResource", "GetReplicas", 2),
    "InterpretComponent": ("componentResource", "GetComponents", 1),
    "ReviseReplica": ("replicaRevision", "ReviseReplica", 1),
    "Retain": ("retention", "Retain", 1),
    "InterpretStatus": ("statusReflection", "ReflectStatus", 1),
    "AggregateStatus": ("statusAggregation", "AggregateStatus", 1),
    "InterpretHealth": ("healthInterpretation", "InterpretHealth", 1),
    "InterpretDependency": ("dependencyInterpretation", "GetDependencies", 1),
}


def karmada_json(value: Any) -> Any:
    """An object as Karmada's JSON carries it to a webhook: keys sorted (Go marshals
    ``unstructured`` maps sorted), integral numbers below 2**53 as integers."""
    if isinstance(value, dict):
        return {k: karmada_json(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [karmada_json(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def run_customization(
    k: KarmadaLua,
    customization: Mapping[str, Any],
    operation: str,
    obj: Mapping[str, Any],
    *,
    observed: Mapping[str, Any] | None = None,
    replicas: int = 0,
    items: Sequence[Mapping[str, Any]] | None = None,
) -> Any:
    """What Karmada takes from one customization script (``luavm.VM.<Operation>``), as JSON data;
    raises :class:`LuaScriptError` where Karmada's call would fail. ``items`` None is Go's nil
    slice (Lua nil), what the controller passes when a binding has no aggregated status (the
    field is ``omitempty``). Dependencies come back as the ``ConfigurableInterpreter`` returns
    them: verified (``VerifyDependencies``), as a set, sorted."""
    key, function, count = ENTRY_POINTS[operation]
    script = customization["spec"]["customizations"][key]["luaScript"]
    if operation == "ReviseReplica":
        args: tuple[Any, ...] = (obj, replicas)
    elif operation == "Retain":
        args = (obj, observed)
    elif operation == "AggregateStatus":
        args = (obj, None if items is None else list(items))
    else:
        args = (obj,)
    out = k.run(script, function, *args, results=count)
    if operation == "InterpretReplica":
        replica, requires = out
        if not isinstance(replica, int | float) or isinstance(replica, bool):
            raise LuaScriptError(f"result type {type(replica).__name__} is not number")
        req = None if requires is None else fix_empty(k.encode(requires), [], struct=True)
        return {"replicas": int(replica), "replicaRequirements": req}
    if operation == "InterpretHealth":
        if not isinstance(out[0], bool):
            raise LuaScriptError("result type is not bool")
        return out[0]
    value = out[0]
    if value is None and operation in ("InterpretComponent",):
        return []
    if value is None or lua51.lua_type(value) != "table":
        raise LuaScriptError(f"expect the returned type is table but got {value!r}")
    encoded = k.encode(value)
    if operation == "ReviseReplica":
        return fix_empty(encoded, [obj], struct=True)
    if operation == "Retain":
        return fix_empty(encoded, [obj, observed], struct=True)
    if operation in ("InterpretStatus", "AggregateStatus"):
        return fix_empty(encoded, [], struct=True)
    if operation == "InterpretDependency":
        return _dependency_set(fix_empty(encoded, [], struct=False))
    return fix_empty(encoded, [], struct=False)


def _dependency_set(refs: Any) -> list[dict[str, Any]]:
    """``ConfigurableInterpreter.GetDependencies`` after the script: each reference verified,
    duplicates merged (a Go set of the struct), sorted by apiVersion, kind, namespace, name."""
    if not isinstance(refs, list):
        raise LuaScriptError(f"dependencies are not a list: {refs!r}")
    unique: dict[str, dict[str, Any]] = {}
    for i, ref in enumerate(refs):
        if not isinstance(ref, dict):
            raise LuaScriptError(f"dependencies[{i}] is not an object: {ref!r}")
        if not ref.get("apiVersion") or not ref.get("kind"):
            raise LuaScriptError(f"dependencies[{i}]: missing required apiVersion or kind")
        if not ref.get("name") and ref.get("labelSelector") is None:
            raise LuaScriptError(
                f"dependencies[{i}]: dependency can not leave name and labelSelector all empty"
            )
        unique.setdefault(json.dumps(ref, sort_keys=True), ref)
    order = ("apiVersion", "kind", "namespace", "name")
    return sorted(unique.values(), key=lambda r: tuple(str(r.get(k, "")) for k in order))
