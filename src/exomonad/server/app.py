"""The server process: Starlette app (MCP, ``/health``, ``/hook/{event}``, ``/events``,
``/status``) on a Unix socket.

``run_server`` claims the pid file, binds ``.exomonad/server.sock`` with mode 0600,
starts the background services (:attr:`Services.services`: event bus, lead link,
watcher), runs uvicorn, and on SIGTERM/SIGINT ends every wait for an approval (the
escalated call gets no answer, as at its time-out: denied, or handed to Claude Code's
own prompt) and stops the services (so event streams end and uvicorn's graceful
shutdown has no request or stream to wait for), then uvicorn; then it closes the ledger
and removes the socket and pid file.
uvicorn parses HTTP with httptools and the event loop is uvloop's (both C): per
MCP call they cost a fraction of h11 on asyncio's pure-Python loop
(docs/performance.md, issue 14).
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import os
import signal
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import uvicorn
import uvloop
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route

from exomonad.errors import ExomonadError
from exomonad.hookclient import MAX_BODY
from exomonad.policy import ToolRequest
from exomonad.policy.decisions import label
from exomonad.server.dashboard import dashboard
from exomonad.server.hooks import CLAIM_HEADER, hook_request
from exomonad.server.identity import TOKEN_HEADER
from exomonad.server.mcp_app import ToolCatalog, build_mcp_server, mcp_first
from exomonad.server.mcp_fast import Established, FastPath
from exomonad.server.observe import observe_routes
from exomonad.server.peer import PeerHttpToolsProtocol, peer_pid
from exomonad.server.pidfile import PidFile
from exomonad.server.services import Services
from exomonad.server.snapshot import health
from exomonad.server.teammates import caller, teammate_routes
from exomonad.server.threads import in_thread
from exomonad.server.tools import call_tool
from exomonad.util.digits import is_number

__all__ = ["build_app", "health", "run_server"]

log = logging.getLogger("exomonad.server")

#: Requests arrive over the Unix socket with ``Host: localhost``; the socket's file mode
#: (0600) is the access control.
_SECURITY = TransportSecuritySettings(
    enable_dns_rebinding_protection=True, allowed_hosts=["localhost"], allowed_origins=[]
)


def build_app(
    svc: Services, *, dashboard_port: int | None = None,
    announce: Callable[[str], None] | None = None,
) -> Starlette:  # fmt: skip
    """The ASGI app: MCP at ``/mcp`` plus the health, hook, tool, event and status
    routes, and the dashboard at ``/dashboard/``; registers the dashboard's TCP listener
    with the services (opened at start on ``dashboard_port`` if given, its URL handed to
    ``announce``)."""

    async def health_route(_: Request) -> Response:
        return JSONResponse(health(svc))

    async def hook_route(request: Request) -> Response:
        """Always a 200 with the client's envelope: bad input and failures are answered
        in it (escalate / deny a gating hook), never as an HTTP error."""
        event = request.path_params["event"]
        runtime = request.query_params.get("runtime", "claude")
        body = await _bounded_body(request, MAX_BODY)
        token, pane = request.headers.get(TOKEN_HEADER), request.headers.get("x-exomonad-pane")
        claim = request.headers.get(CLAIM_HEADER) == "lead"  # the front's lead.token
        answer = await in_thread(
            hook_request, svc, event, runtime, body, token, pane, peer_pid(request.scope), claim
        )
        if request.query_params.get("reply") == "text":  # the shell front, exomonad-hook
            svc.counters["hook_front"] += 1
            return PlainTextResponse(answer.as_text(runtime))
        return JSONResponse(
            {"output": answer.output, "exit_code": answer.exit_code, "stderr": answer.stderr}
        )

    async def tool_route(request: Request) -> Response:
        """One ExoMonad tool as plain JSON (for the CLI): the same role and policy checks
        as over MCP; the caller is whoever its token says."""
        who = caller(svc, request)
        try:
            args = orjson.loads(await request.body() or b"{}")
            if not isinstance(args, dict):
                raise TypeError("arguments are not an object")
            result = await in_thread(call_tool, svc, who, request.path_params["name"], args)
        except (orjson.JSONDecodeError, TypeError, ValidationError) as exc:
            return JSONResponse({"error": f"bad request: {exc}"}, status_code=400)
        except ExomonadError as exc:
            return JSONResponse({"error": str(exc)}, status_code=403)
        return JSONResponse(result)

    async def gate_route(request: Request) -> Response:
        """``exomonad git-gate``: a push from a worker's worktree, judged as its tool call."""
        who = caller(svc, request)
        try:
            body = orjson.loads(await request.body())
            command, cwd = body["command"], body.get("cwd")
            if not isinstance(command, str) or not (cwd is None or isinstance(cwd, str)):
                raise TypeError("command and cwd must be strings")
        except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
            return JSONResponse({"error": f"bad request: {exc}"}, status_code=400)
        req = ToolRequest("claude", role=who.role, agent=who.name, tool_name="Bash",
                          tool_input={"command": command}, cwd=cwd, worktree=who.worktree,
                          branch=who.branch, team=who.team)  # fmt: skip
        mailbox = svc.mailbox(who.team) if who.team else None
        verdict = await in_thread(svc.gatekeeper.check, req, who, mailbox)
        svc.counters["git_pre_push"] += 1
        return JSONResponse(
            {"decision": label(verdict.decision), "reason": verdict.decision.reason}
        )

    routes = [
        Route("/health", health_route, methods=["GET"]),
        *observe_routes(svc),
        *teammate_routes(svc),
        Route("/tool/{name}", tool_route, methods=["POST"]),
        Route("/gate/pre-push", gate_route, methods=["POST"]),
        Route("/hook/{event}", hook_route, methods=["POST"]),
    ]
    catalog, established = ToolCatalog(svc), Established()
    server = build_mcp_server(svc, catalog=catalog, on_served=established.note)
    app = server.streamable_http_app(
        json_response=True, transport_security=_SECURITY, custom_starlette_routes=routes
    )
    app.state.mcp_fast = functools.partial(FastPath, svc, manager=server.session_manager,
                                           security=_SECURITY, catalog=catalog,
                                           established=established)  # fmt: skip
    listener, person_app = dashboard(svc, port=dashboard_port, announce=announce)
    svc.services.register(listener)
    app.router.routes.append(Mount("/dashboard", app=person_app))
    return app


async def _bounded_body(request: Request, limit: int) -> bytes | None:
    """The request body, or None as soon as it is larger than ``limit`` bytes."""
    declared = request.headers.get("content-length", "")
    if is_number(declared) and int(declared) > limit:
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
    """uvicorn, minus re-raising SIGTERM/SIGINT after shutdown (it would skip our cleanup),
    and calling ``before_shutdown`` first when it shuts down.

    Once uvicorn has stopped, further SIGTERM/SIGINT are ignored (``SIG_IGN``, which,
    unlike a Python handler, the interpreter keeps through its own finalization) instead
    of the default handlers coming back: the process is on its way out (closing the
    ledger, removing the socket and pid file, joining threads), and a second signal then
    killed it with -15.
    """

    def __init__(self, config: uvicorn.Config,
                 before_shutdown: Callable[[], Awaitable[None]]) -> None:  # fmt: skip
        super().__init__(config)
        self.before_shutdown = before_shutdown

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await self.before_shutdown()
        await super().shutdown(sockets)

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self.handle_exit)
        try:
            yield
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, signal.SIG_IGN)


async def _serve(svc: Services, sock: socket.socket, app: Starlette) -> None:
    # No proxy fronts a Unix socket: X-Forwarded-For must never stand in for the peer.
    config = uvicorn.Config(mcp_first(app), log_level="warning", lifespan="on",
                            http=PeerHttpToolsProtocol, proxy_headers=False)  # fmt: skip

    async def before_shutdown() -> None:
        svc.approvals.stop_waiting()  # an escalated call gets no answer: it is not kept
        await svc.services.stop()  # waiting (and the server alive) to its time-out

    server = _Server(config, before_shutdown)
    await svc.services.start()
    _freeze_heap()
    try:
        await server.serve(sockets=[sock])
    finally:
        await svc.services.stop()  # done already unless uvicorn failed before its shutdown


def _freeze_heap() -> None:
    """Leave what start-up built out of the garbage collector's full collections.

    Start-up (the MCP SDK, pydantic's schemas, the policy, the CLI) leaves ~100,000
    objects that live as long as the server, and a full collection walks every one:
    under a full team one came every ~2 s and stopped every call for 70-100 ms
    (``notify_parent`` p99 at 16 sessions: 102 ms, 35 once frozen; docs/performance.md).
    Garbage is collected first, so none of it is kept.
    """
    gc.collect()
    gc.freeze()


def _report_recovery(svc: Services) -> None:
    """Say what a killed ExoMonad left behind (also in ``/health``)."""
    for lock in svc.recovered_locks:
        log.warning("removed an inbox lock left by a killed ExoMonad: %s", lock)
    if svc.ledger.recovered_in_flight:
        log.warning(
            "%d message(s) were being typed when ExoMonad last stopped; they are typed again "
            "(possible duplicates)",
            svc.ledger.recovered_in_flight,
        )


def run_server(
    svc: Services, *, dashboard_port: int | None = None,
    announce: Callable[[str], None] | None = None,
) -> None:  # fmt: skip
    """Serve until SIGTERM/SIGINT; refuses if another server owns the project.

    The dashboard's TCP listener opens at start on ``dashboard_port``, else on
    ``[dashboard] port``, if either is set; its URL with a token goes to ``announce``
    only (the serve command's terminal).
    """
    port = dashboard_port if dashboard_port is not None else svc.config.dashboard.port
    pid = PidFile(svc.state_dir)
    pid.acquire()
    try:
        sock = _bind(pid.socket)
        log.info("serving on %s (pid %s)", pid.socket, os.getpid())
        _report_recovery(svc)
        app = build_app(svc, dashboard_port=port, announce=announce)
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(_serve(svc, sock, app))
    except OSError as exc:
        raise ExomonadError(f"cannot serve on {pid.socket}: {exc}") from exc
    finally:
        svc.close()
        pid.release()
