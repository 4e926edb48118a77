"""``exomonad mcp-stdio``: MCP over stdio for clients that only launch stdio servers.

With a server running, it is a proxy to it (:mod:`exomonad.server.stdio_proxy`, standard
library only: ``exomonad``'s entry point runs it before importing any of this). With no
server at start, it serves in-process (embedded mode) for a single session, with the MCP
SDK: same tools, no watcher.
"""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp.server.stdio import stdio_server

from exomonad.server.identity import Identity
from exomonad.server.mcp_app import build_mcp_server
from exomonad.server.services import Services
from exomonad.server.stdio_proxy import proxy_if_running

__all__ = ["run_stdio_bridge"]


async def _embedded(svc: Services, who: Identity) -> None:
    server = build_mcp_server(svc, fixed_identity=who)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def run_stdio_bridge(state_dir: Path, token: str | None, *, root: Path | None = None) -> str:
    """Bridge stdio to the project's server, or serve embedded; returns the mode used."""
    if proxy_if_running(str(state_dir), token):
        return "proxy"
    svc = Services(state_dir, root=root)
    try:
        anyio.run(_embedded, svc, svc.identify(token))
    finally:
        svc.close()
    return "embedded"
