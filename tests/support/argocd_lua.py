"""Lua 5.1 (lupa) running a health check the way Argo CD runs one from ``argocd-cm``, for tests.

Facts from Argo CD's ``util/lua/lua.go`` (``VM.runLua``, ``ExecuteHealthLua``) and gopher-lua,
restated here:

* **Libraries**: ``lua.NewState(SkipOpenLibs: !UseOpenLibs)``, then package, base, table and a
  safe os are opened. Without ``resource.customizations.useOpenLibs.<group>_<kind>: "true"`` there
  is no ``string`` and no ``math`` library (and no string methods); with it gopher-lua opens all of
  its libraries. With open libraries this harness runs in Karmada's sandbox
  (:class:`~tests.support.karmada_lua.KarmadaLua`: ``string`` without ``gsub``/``rep``/``dump``,
  no io, debug or coroutine), a subset of what Argo CD then offers, so a script that runs here
  needs nothing Argo CD lacks.
* **The object** is the global ``obj``, converted by ``decodeValue``: maps to tables, lists to
  tables appended in order (``nil`` elements disappear), numbers to doubles, ``nil`` members
  absent — what :meth:`KarmadaLua.to_lua` does.
* **The result** is the script's return value: a table, encoded by gopher-json and unmarshalled
  into ``HealthStatus``; a status outside Healthy, Progressing, Suspended, Degraded, Missing,
  Unknown becomes ``Unknown`` / "Lua returned an invalid health status"; anything but a table is
  an error ("expect table output from Lua script, not <type>").
* **Limits**: a one-second context timeout and gopher-lua's 256-frame call stack (the depth is
  checked against :data:`~tests.support.karmada_lua.DEPTH_LIMIT`).
"""

from __future__ import annotations

from typing import Any

from tests.support.karmada_lua import KarmadaLua, LuaScriptError

VALID = frozenset({"Healthy", "Progressing", "Suspended", "Degraded", "Missing", "Unknown"})
INVALID_STATUS = "Lua returned an invalid health status"


class ArgoCDLua(KarmadaLua):
    """One Lua state prepared like Argo CD's health-check VM (see the module doc)."""

    def __init__(self, *, open_libs: bool = True, pairs_order: str = "lua") -> None:
        super().__init__(track_depth=True, pairs_order=pairs_order)
        if not open_libs:
            g = self.lua.globals()
            g.string = None
            g.math = None
            # gopher-lua gives strings their methods only with the string library
            self.lua.eval("function(d) d.getmetatable('').__index = {} end")(self._debug)

    def health(self, script: str, obj: Any) -> dict[str, Any]:
        """``ExecuteHealthLua``: ``{"status": ..., "message": ...}`` or :class:`LuaScriptError`."""
        self.lua.globals().obj = self.to_lua(obj)
        self._depth_hook()
        try:
            result = self.lua.execute(script)
        except Exception as exc:
            raise LuaScriptError(f"health script failed: {exc}") from exc
        finally:
            self._debug.sethook()
        self.max_depth = max(self.max_depth, self.deepest())
        if not hasattr(result, "keys") or isinstance(result, str):
            kind = "nil" if result is None else type(result).__name__
            raise LuaScriptError(f"expect table output from Lua script, not {kind}")
        out = self.encode(result)
        if not isinstance(out, dict):
            raise LuaScriptError(f"the health table encodes as {type(out).__name__}")
        if out.get("status") not in VALID:
            return {"status": "Unknown", "message": INVALID_STATUS}
        return {"status": out["status"], "message": out.get("message", "")}
