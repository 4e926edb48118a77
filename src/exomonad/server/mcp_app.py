"""MCP over the server's socket: each caller sees and may call only its role's tools.

Built on the official SDK's low-level server. The caller is identified per request by
the token header (see :mod:`exomonad.server.identity`); a tool outside the caller's role
is neither listed nor callable. Tool code is synchronous (file locks, SQLite, tmux) and
runs in a worker thread of the server's pool, but for the loop-safe tools judged by the
built-in policy, which run on the event loop (:func:`answer_call`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as types
import orjson
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp_types import methods
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from exomonad.errors import ExomonadError
from exomonad.policy import Escalate
from exomonad.server.identity import TOKEN_HEADER, Identity
from exomonad.server.peer import peer_pid
from exomonad.server.services import Services
from exomonad.server.threads import in_thread
from exomonad.server.tools import (
    LOOP_SAFE,
    ON_LOOP,
    TOOLS,
    admit,
    call_tool,
    prepare_call,
    run_allowed,
    tool_mailbox,
)

__all__ = ["ToolCatalog", "answer_call", "build_mcp_server", "caller_of", "identity_of",
           "mcp_first"]  # fmt: skip

#: Where the SDK's streamable HTTP app serves MCP.
MCP_PATH = "/mcp"


def caller_of(svc: Services, token: str | None, scope: Any) -> Identity:
    """The caller of one request: its token header and the connecting process (least
    role without a valid token); an authenticated caller's MCP client is noted as up
    (``mcp_ready``)."""
    return _seen(svc, svc.identify(token, peer_pid(scope)))


def _seen(svc: Services, who: Identity) -> Identity:
    if who.authenticated:
        svc.mcp_seen.add((who.team, who.name))
    return who


def identity_of(svc: Services, ctx: ServerRequestContext[Any]) -> Identity:
    """The caller of this request (least role without a valid token)."""
    headers = getattr(ctx.request, "headers", None)
    token = headers.get(TOKEN_HEADER) if headers is not None else None
    return caller_of(svc, token, getattr(ctx.request, "scope", None))


def _error(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}


async def answer_call(svc: Services, who: Identity, name: str,
                      arguments: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """What ``tools/call`` answers, for the SDK's handler and the fast path alike: the
    result in its wire form (``content``, ``structuredContent``, ``isError``), before
    the per-protocol-version sieve both apply. A refusal or a failure is an ``isError``
    result; the tool runs in a worker thread (file locks, SQLite, tmux, approvals), or on
    the event loop when it is loop-safe and the built-in policy judges it."""
    try:
        result = await _call(svc, who, name, arguments)
    except ValidationError as exc:
        return _error(f"invalid arguments for {name}: {exc.errors()}")
    except ExomonadError as exc:
        svc.counters["tool_errors"] += 1
        return _error(str(exc))
    text = orjson.dumps(result).decode()
    return {"content": [{"type": "text", "text": text}], "structuredContent": result,
            "isError": False}  # fmt: skip


async def _call(svc: Services, who: Identity, name: str,
                arguments: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """:func:`~exomonad.server.tools.call_tool`, in a thread; a loop-safe tool judged by
    the built-in policy on the event loop (a thread hop and the GIL passed back and forth
    cost such a call more than the call itself: docs/performance.md, issue 14), but for
    waiting on an escalation's answer, which goes to a thread; a tool with a form the
    loop awaits (:data:`~exomonad.server.tools.ON_LOOP`: ``notify_parent``, whose append
    joins a group the group commit's thread writes) likewise."""
    on_loop = ON_LOOP.get(name)
    loaded = svc.gatekeeper.loop_policy() if on_loop or name in LOOP_SAFE else None
    if loaded is None:
        return await in_thread(call_tool, svc, who, name, arguments)
    tool, args, req = prepare_call(svc, who, name, arguments)
    ev = svc.gatekeeper.judge(req, who, loaded)
    if isinstance(ev.decision, Escalate):
        verdict = await in_thread(svc.gatekeeper.settle, ev, req, who, tool_mailbox(svc, who))
    else:
        verdict = svc.gatekeeper.settle(ev, req, who, None)
    if on_loop is None:
        return run_allowed(svc, who, tool, args, verdict)
    admit(svc, tool, verdict)
    return await on_loop(svc, who, args)


class ToolCatalog:
    """What ``tools/list`` answers each role: built once per role (the argument models'
    JSON schemas are not rebuilt per call), its wire form once per protocol version."""

    def __init__(self, svc: Services) -> None:
        self.svc = svc
        self._results: dict[str, types.ListToolsResult] = {}
        self._wire: dict[tuple[str, str], dict[str, Any]] = {}

    def result(self, role: str) -> types.ListToolsResult:
        """The role's tools (only those it may call)."""
        found = self._results.get(role)
        if found is None:
            found = self._results[role] = types.ListToolsResult(tools=[
                types.Tool(name=t.name, description=t.description,
                           input_schema=t.args.model_json_schema())
                for t in TOOLS.values() if self.svc.config.roles.allows(role, t.name)
            ])  # fmt: skip
        return found

    def wire(self, role: str, version: str) -> dict[str, Any]:
        """:meth:`result` as the SDK puts it on the wire at ``version`` (a copy)."""
        found = self._wire.get((role, version))
        if found is None:
            dumped = self.result(role).model_dump(by_alias=True, mode="json", exclude_none=True)
            found = self._wire[role, version] = methods.serialize_server_result(
                "tools/list", version, dumped
            )
        return dict(found)


def build_mcp_server(
    svc: Services, *, fixed_identity: Identity | None = None,
    catalog: ToolCatalog | None = None,
    on_served: Callable[[ServerRequestContext[Any]], None] | None = None,
) -> Server[Any]:  # fmt: skip
    """The MCP server for ``svc``.

    ``fixed_identity`` serves one known caller (stdio embedded mode, where requests carry
    no headers); otherwise each request is identified by its token header. ``catalog``
    is the tool lists to serve (shared with the fast path); ``on_served`` is told of
    every tool request the SDK hands to a handler (so past its initialization gate).
    """
    tools = catalog or ToolCatalog(svc)

    def caller(ctx: ServerRequestContext[Any]) -> Identity:
        if on_served is not None:
            on_served(ctx)
        return _seen(svc, fixed_identity) if fixed_identity else identity_of(svc, ctx)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return tools.result(caller(ctx).role)

    async def handle_call(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        answer = await answer_call(svc, caller(ctx), params.name, dict(params.arguments or {}))
        return types.CallToolResult.model_validate(answer, by_name=False)

    return Server(
        "exomonad",
        version=svc.version,
        instructions="ExoMonad: talk to your team (notify_parent, send_message) and its tasks.",
        on_list_tools=list_tools,
        on_call_tool=handle_call,
    )


def mcp_first(app: Starlette, path: str = MCP_PATH) -> ASGIApp:
    """``app``, with HTTP requests to ``path`` handed straight to the SDK's transport,
    through the fast path (:mod:`exomonad.server.mcp_fast`) when ``app.state.mcp_fast``
    makes one (given the SDK's endpoint).

    Starlette's router and its two middlewares (error page, HTTP exceptions) cost about
    6 % of a tool call's server CPU (docs/performance.md, issue 14) and do nothing for
    the MCP endpoint: the transport answers every error itself, and uvicorn answers 500
    for an exception that escapes. Every other request, and the lifespan (which runs
    the SDK's session manager), still go through ``app``.
    """
    endpoint: ASGIApp = next(r.app for r in app.routes if isinstance(r, Route) and r.path == path)
    fast: Callable[[ASGIApp], ASGIApp] | None = getattr(app.state, "mcp_fast", None)
    mcp = fast(endpoint) if fast is not None else endpoint

    async def asgi(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == path:
            await mcp(scope, receive, send)
        else:
            await app(scope, receive, send)

    return asgi
