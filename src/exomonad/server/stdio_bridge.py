"""``exomonad mcp-stdio``: MCP over stdio for clients that only launch stdio servers.

With a server running, it is a proxy: every JSON-RPC message from stdin goes to the
server's streamable-HTTP endpoint over the Unix socket (with the agent's token), and
every answer back to stdout. With no server, it serves in-process (embedded mode) for a
single session: same tools, no watcher.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from exomonad.ancestry import claude_lead_ancestor
from exomonad.server.identity import TOKEN_HEADER, Identity
from exomonad.server.mcp_app import build_mcp_server
from exomonad.server.pidfile import read_server_info
from exomonad.server.services import Services

__all__ = ["resolve_token", "run_stdio_bridge"]

log = logging.getLogger("exomonad.server")


def resolve_token(state_dir: Path, env_token: str | None, role: str, lead_role: str) -> str | None:
    """The token to present: ``$EXOMONAD_TOKEN``, else the lead's, if the lead role is
    asked *and* this process belongs to the lead's Claude Code session (a descendant of
    a Claude Code lead process and of no other agent: a worker running ``mcp-stdio
    --role tl`` itself stays a guest)."""
    if env_token:
        return env_token
    lead = state_dir / "lead.token"
    if role != lead_role or not lead.exists():
        return None
    why_not = claude_lead_ancestor()
    if why_not is not None:
        log.warning("not the lead's session (%s): connecting without the lead's token", why_not)
        return None
    return lead.read_text().strip() or None


#: Seconds to wait, after stdin closed, for answers to requests already forwarded.
DRAIN_TIMEOUT = 30.0


class _InFlight:
    """Request ids forwarded to the server and not answered yet."""

    def __init__(self) -> None:
        self.ids: set[Any] = set()
        self.empty = anyio.Event()
        self.empty.set()

    def sent(self, item: SessionMessage) -> None:
        msg = item.message
        request_id = getattr(msg, "id", None)
        if getattr(msg, "method", None) is not None and request_id is not None:
            self.ids.add(request_id)
            self.empty = anyio.Event()

    def answered(self, item: SessionMessage) -> None:
        msg = item.message
        if getattr(msg, "method", None) is None:
            self.ids.discard(getattr(msg, "id", None))
            if not self.ids:
                self.empty.set()


async def _proxy(socket_path: str, token: str | None) -> None:
    headers = {TOKEN_HEADER: token} if token else {}
    client = httpx2.AsyncClient(
        transport=httpx2.AsyncHTTPTransport(uds=socket_path), headers=headers, timeout=None
    )
    inflight = _InFlight()

    async def to_server(source: Any, sink: Any) -> None:
        async for item in source:
            if isinstance(item, SessionMessage):
                inflight.sent(item)
                await sink.send(item)
            else:
                log.warning("dropping unparsable MCP message from stdin: %s", item)

    async def to_client(source: Any, sink: Any) -> None:
        async for item in source:
            if isinstance(item, SessionMessage):
                await sink.send(item)
                inflight.answered(item)

    async with (
        client,
        stdio_server() as (stdin_read, stdout_write),
        streamable_http_client("http://localhost/mcp", http_client=client) as streams,
    ):
        server_read, server_write = streams[0], streams[1]
        async with anyio.create_task_group() as tg:
            tg.start_soon(to_client, server_read, stdout_write)
            await to_server(stdin_read, server_write)  # stdin closed: the client is done
            with anyio.move_on_after(DRAIN_TIMEOUT):
                await inflight.empty.wait()  # ...but answer what it already asked
            tg.cancel_scope.cancel()
        await stdout_write.aclose()  # lets stdio_server's writer finish


async def _embedded(svc: Services, who: Identity) -> None:
    server = build_mcp_server(svc, fixed_identity=who)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def run_stdio_bridge(state_dir: Path, token: str | None, *, root: Path | None = None) -> str:
    """Bridge stdio to the project's server, or serve embedded; returns the mode used."""
    info = read_server_info(state_dir)
    if info is not None and info.alive and Path(info.socket).exists():
        anyio.run(_proxy, info.socket, token)
        return "proxy"
    svc = Services(state_dir, root=root)
    try:
        anyio.run(_embedded, svc, svc.identify(token))
    finally:
        svc.close()
    return "embedded"
