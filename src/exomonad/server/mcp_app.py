"""MCP over the server's socket: each caller sees and may call only its role's tools.

Built on the official SDK's low-level server. The caller is identified per request by
the token header (see :mod:`exomonad.server.identity`); a tool outside the caller's role
is neither listed nor callable. Tool code is synchronous (file locks, SQLite, tmux) and
runs in a worker thread.
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread
import mcp_types as types
import orjson
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from exomonad.errors import ExomonadError
from exomonad.server.identity import TOKEN_HEADER, Identity
from exomonad.server.peer import peer_pid
from exomonad.server.services import Services
from exomonad.server.tools import TOOLS, call_tool

__all__ = ["build_mcp_server", "identity_of", "mcp_first"]

#: Where the SDK's streamable HTTP app serves MCP.
MCP_PATH = "/mcp"


def identity_of(svc: Services, ctx: ServerRequestContext[Any]) -> Identity:
    """The caller of this request (least role without a valid token)."""
    headers = getattr(ctx.request, "headers", None)
    token = headers.get(TOKEN_HEADER) if headers is not None else None
    return svc.identify(token, peer_pid(getattr(ctx.request, "scope", None)))


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)],
                                is_error=True)  # fmt: skip


def build_mcp_server(svc: Services, *, fixed_identity: Identity | None = None) -> Server[Any]:
    """The MCP server for ``svc``.

    ``fixed_identity`` serves one known caller (stdio embedded mode, where requests carry
    no headers); otherwise each request is identified by its token header.
    """

    def caller(ctx: ServerRequestContext[Any]) -> Identity:
        who = fixed_identity or identity_of(svc, ctx)
        if who.authenticated:
            svc.mcp_seen.add((who.team, who.name))  # its MCP client is up (mcp_ready)
        return who

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        who = caller(ctx)
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=t.name,
                    description=t.description,
                    input_schema=t.args.model_json_schema(),
                )
                for t in TOOLS.values()
                if svc.config.roles.allows(who.role, t.name)
            ]
        )

    async def handle_call(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        who = caller(ctx)
        arguments = dict(params.arguments or {})
        try:
            result = await anyio.to_thread.run_sync(call_tool, svc, who, params.name, arguments)
        except ValidationError as exc:
            return _error(f"invalid arguments for {params.name}: {exc.errors()}")
        except ExomonadError as exc:
            svc.counters["tool_errors"] += 1
            return _error(str(exc))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=orjson.dumps(result).decode())],
            structured_content=result,
        )

    return Server(
        "exomonad",
        version=svc.version,
        instructions="ExoMonad: talk to your team (notify_parent, send_message) and its tasks.",
        on_list_tools=list_tools,
        on_call_tool=handle_call,
    )


def mcp_first(app: Starlette, path: str = MCP_PATH) -> ASGIApp:
    """``app``, with HTTP requests to ``path`` handed straight to the SDK's transport.

    Starlette's router and its two middlewares (error page, HTTP exceptions) cost about
    6 % of a tool call's server CPU (docs/performance.md, issue 14) and do nothing for
    the MCP endpoint: the transport answers every error itself, and uvicorn answers 500
    for an exception that escapes. Every other request, and the lifespan (which runs
    the SDK's session manager), still go through ``app``.
    """
    endpoint = next(r.app for r in app.routes if isinstance(r, Route) and r.path == path)

    async def asgi(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == path:
            await endpoint(scope, receive, send)
        else:
            await app(scope, receive, send)

    return asgi
