"""The server process: Starlette app (MCP, ``/health``, ``/hook/{event}``) on a Unix socket.

``run_server`` claims the pid file, binds ``.exomonad/server.sock`` with mode 0600, runs
uvicorn and the inbox watcher side by side, and on SIGTERM/SIGINT stops both, closes the
ledger, and removes the socket and pid file.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio.to_thread
import orjson
import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from exomonad.errors import ExomonadError
from exomonad.hookclient import MAX_BODY
from exomonad.server.hooks import hook_request
from exomonad.server.identity import TOKEN_HEADER, Identity
from exomonad.server.mcp_app import build_mcp_server
from exomonad.server.pidfile import PidFile
from exomonad.server.services import Services

__all__ = ["build_app", "health", "run_server"]

log = logging.getLogger("exomonad.server")

#: Requests arrive over the Unix socket with ``Host: localhost``; the socket's file mode
#: (0600) is the access control.
_SECURITY = TransportSecuritySettings(
    enable_dns_rebinding_protection=True, allowed_hosts=["localhost"], allowed_origins=[]
)


def health(svc: Services) -> dict[str, Any]:
    """The ``/health`` document."""
    stats = svc.watcher.stats
    return {
        "status": "ok",
        "version": svc.version,
        "pid": os.getpid(),
        "uptime": round(time.time() - svc.started_at, 3),
        "policy": svc.gatekeeper.engine.health(),
        "approvals_pending": len(svc.approvals.list_pending()),
        "team": svc.registry.current,
        "watched": svc.watcher.watched(),
        "counters": {
            "delivered": stats.delivered,
            "failed": stats.failed_passes,
            "pending": sum(stats.pending.values()),
            "possible_duplicates": stats.possible_duplicates,
            **dict(svc.counters),
        },
        "ledger": svc.ledger.counts(),
    }


def build_app(svc: Services) -> Starlette:
    """The ASGI app: MCP at ``/mcp`` plus the health and hook routes."""

    async def health_route(_: Request) -> Response:
        return JSONResponse(health(svc))

    async def hook_route(request: Request) -> Response:
        """Always a 200 with the client's envelope: bad input and failures are answered
        in it (escalate / deny a gating hook), never as an HTTP error."""
        event = request.path_params["event"]
        runtime = request.query_params.get("runtime", "claude")
        body = await _bounded_body(request, MAX_BODY)
        token, pane = request.headers.get(TOKEN_HEADER), request.headers.get("x-exomonad-pane")
        answer = await anyio.to_thread.run_sync(
            hook_request, svc, event, runtime, body, token, pane
        )
        return JSONResponse(
            {"output": answer.output, "exit_code": answer.exit_code, "stderr": answer.stderr}
        )

    async def teammate_token(request: Request) -> Response:
        """A worker token for a teammate Claude Code spawned (``exomonad teammate``).

        The socket is 0600: whoever can connect is the project's user.
        """
        try:
            body = orjson.loads(await request.body())
            who = Identity(
                name=str(body["name"]),
                role=str(body.get("role", "worker")),
                team=str(body["team"]),
                parent=str(body.get("parent", "team-lead")),
            )
        except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
            return JSONResponse({"error": f"bad request: {exc}"}, status_code=400)
        if who.role == svc.config.lead.role:
            return JSONResponse({"error": "a teammate cannot take the lead's role"}, 403)
        return JSONResponse({"token": svc.tokens.issue(who)})

    routes = [
        Route("/health", health_route, methods=["GET"]),
        Route("/teammate/token", teammate_token, methods=["POST"]),
        Route("/hook/{event}", hook_route, methods=["POST"]),
    ]
    return build_mcp_server(svc).streamable_http_app(
        json_response=True, transport_security=_SECURITY, custom_starlette_routes=routes
    )


async def _bounded_body(request: Request, limit: int) -> bytes | None:
    """The request body, or None as soon as it is larger than ``limit`` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _bind(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # the socket is created 0600: no window with wider permissions
    try:
        sock.bind(str(path))
    finally:
        os.umask(old)
    sock.listen(128)
    return sock


class _Server(uvicorn.Server):
    """uvicorn, minus re-raising SIGTERM/SIGINT after shutdown (it would skip our cleanup)."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        old = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)


async def _serve(svc: Services, sock: socket.socket) -> None:
    config = uvicorn.Config(build_app(svc), log_level="warning", lifespan="on")
    server = _Server(config)
    watcher_ready = asyncio.Event()
    watcher = asyncio.create_task(svc.watcher.run(watcher_ready))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    await watcher_ready.wait()
    try:
        await serving
    finally:
        svc.watcher.request_stop()
        await watcher


def run_server(svc: Services) -> None:
    """Serve until SIGTERM/SIGINT; refuses if another server owns the project."""
    pid = PidFile(svc.state_dir)
    pid.acquire()
    try:
        sock = _bind(pid.socket)
        log.info("serving on %s (pid %s)", pid.socket, os.getpid())
        asyncio.run(_serve(svc, sock))
    except OSError as exc:
        raise ExomonadError(f"cannot serve on {pid.socket}: {exc}") from exc
    finally:
        svc.close()
        pid.release()
