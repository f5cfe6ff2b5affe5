"""``wmap serve --local``: the UI on the user's own machine without pasting a token.

Requests without ``Authorization`` act as the server's own identity, the kubeconfig's user (any
credential kind: token, exec plugin, client certificate); every action is checked with a
SelfSubjectAccessReview made with those credentials, which any authenticated user may create
(a TokenReview or SubjectAccessReview would need rights ordinary users lack). Requests with a
token are checked as usual. The server listens on loopback only, and because a browser can be
made to send requests there from other sites, :class:`LoopbackOnly` answers only requests from a
loopback peer whose ``Host`` is a loopback name (DNS rebinding) and, for anything but GET/HEAD,
whose ``Origin`` (when sent) is this server (cross-site requests).
"""

from __future__ import annotations

import ipaddress

from starlette.types import ASGIApp, Receive, Scope, Send

from workload_map.server.errors import HttpError, send_error

__all__ = ["LOOPBACK_NAMES", "LoopbackOnly", "is_loopback_host"]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def is_loopback_host(host: str) -> bool:
    """``host`` (an address or a name, without port) is this machine's loopback."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _host_name(value: str) -> str:
    value = value.strip()
    if value.startswith("["):
        return value[: value.find("]") + 1] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class LoopbackOnly:
    """ASGI middleware for ``--local``: 403 unless peer and Host are loopback, and unless a
    state-changing request comes from this server's own origin."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
        client = scope.get("client") or ("", 0)
        host = headers.get("host", "")
        problem = None
        if not is_loopback_host(str(client[0])):
            problem = "this server is local (--local): it answers this machine only"
        elif not is_loopback_host(_host_name(host)):
            problem = f'this server is local (--local): Host "{host}" is not a loopback name'
        elif scope.get("method") not in ("GET", "HEAD"):
            origin = headers.get("origin")
            if origin is not None and origin not in (f"http://{host}", f"https://{host}"):
                problem = f'this server is local (--local): a request from "{origin}" may not change anything'
        if problem is not None:
            await send_error(send, HttpError(403, "forbidden", problem))
            return
        await self.app(scope, receive, send)
