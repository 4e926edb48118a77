"""``exomonad mcp-stdio``: MCP over stdio for clients that only launch stdio servers.

With a server running, it is a proxy: every JSON-RPC message from stdin goes to the
server's streamable-HTTP endpoint over the Unix socket (with the agent's token), and
every answer back to stdout. The server may be killed or restarted meanwhile: a request
it cannot answer gets a JSON-RPC error at once, and the next one goes to the restarted
server in a new session (see :class:`_Upstream`). With no server at start, it serves
in-process (embedded mode) for a single session: same tools, no watcher.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anyio
import httpx2
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INTERNAL_ERROR, ErrorData, JSONRPCError

from exomonad.ancestry import claude_lead_ancestor
from exomonad.errors import ExomonadError
from exomonad.server.identity import TOKEN_HEADER, Identity
from exomonad.server.mcp_app import build_mcp_server
from exomonad.server.pidfile import ServerInfo, read_server_info
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
#: Seconds to wait for a restarted server to answer the client's replayed ``initialize``.
HANDSHAKE_TIMEOUT = 30.0

_NOT_RUNNING = ("no ExoMonad server is running for this project: start it (exomonad serve, "
                "or exomonad up), then call again")  # fmt: skip
_GONE = ("the ExoMonad server stopped before it answered (killed or restarted): the call "
         "may or may not have run; check before repeating it")  # fmt: skip


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

    def take_all(self) -> list[Any]:
        """Forget every pending id (they will be answered with an error); return them."""
        ids, self.ids = sorted(self.ids, key=str), set()
        self.empty.set()
        return ids


def _leaf(exc: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _method(item: SessionMessage) -> str | None:
    method = getattr(item.message, "method", None)
    return method if isinstance(method, str) else None


_Inbox = MemoryObjectReceiveStream[SessionMessage]


class _Upstream:
    """The proxy's side towards the server: one streamable-HTTP session at a time.

    The server may be killed or restarted under a running agent. A request the server can
    no longer answer is answered here with a JSON-RPC error at once (never left waiting
    for the agent's own time-out, often minutes). The next request finds the restarted
    server through the pid file and opens a new session on it, replaying the client's
    own ``initialize`` and ``notifications/initialized`` first, so the agent keeps its
    tools without reconnecting.
    """

    def __init__(self, state_dir: Path, token: str | None,
                 out: MemoryObjectSendStream[SessionMessage]) -> None:  # fmt: skip
        self.state_dir, self.token, self.out = state_dir, token, out
        self.inflight = _InFlight()
        self.handshake: list[SessionMessage] = []

    async def run(self, inbox: _Inbox) -> None:
        """Forward ``inbox`` (the client's messages) until it closes."""
        carry: SessionMessage | None = None
        while True:
            if carry is None:
                try:
                    carry = await inbox.receive()
                except anyio.EndOfStream:
                    return
                self._keep_handshake(carry)
            item, carry = carry, None
            info = read_server_info(self.state_dir)
            if info is None or not info.alive:
                await self._answer(item, _NOT_RUNNING)  # it never reached a server
                continue
            eof = False
            try:
                carry = await self._session(info, item, inbox)
                eof = carry is None
            except Exception as exc:  # killed mid-request, refused, closed the stream
                log.warning("lost the ExoMonad server (pid %s): %s", info.pid, _leaf(exc))
            for request_id in self.inflight.take_all():
                await self._answer_id(request_id, _GONE)
            if eof:
                return

    def _keep_handshake(self, item: SessionMessage) -> None:
        """Keep the client's ``initialize`` and ``notifications/initialized``."""
        method = _method(item)
        if method == "initialize":
            self.handshake = [item]
        elif method == "notifications/initialized" and len(self.handshake) == 1:
            self.handshake.append(item)

    async def _session(
        self, info: ServerInfo, first: SessionMessage, inbox: _Inbox
    ) -> SessionMessage | None:
        """Serve one session on ``info``'s server. Returns the next client message, not
        yet sent, once that server is gone or replaced (None once the client is done)."""
        headers = {TOKEN_HEADER: self.token} if self.token else {}
        transport = httpx2.AsyncHTTPTransport(uds=info.socket)
        async with (
            httpx2.AsyncClient(transport=transport, headers=headers, timeout=None) as client,
            streamable_http_client("http://localhost/mcp", http_client=client) as streams,
        ):
            read, write = streams[0], streams[1]
            if _method(first) != "initialize" and self.handshake:
                await self._replay(read, write)
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._to_client, read)
                item = first
                while True:
                    self.inflight.sent(item)
                    await write.send(item)
                    try:
                        item = await inbox.receive()
                    except anyio.EndOfStream:  # the client is done: answer what it asked
                        with anyio.move_on_after(DRAIN_TIMEOUT):
                            await self.inflight.empty.wait()
                        tg.cancel_scope.cancel()
                        return None
                    self._keep_handshake(item)
                    current = read_server_info(self.state_dir)
                    if current is None or current.pid != info.pid or not current.alive:
                        tg.cancel_scope.cancel()  # killed or restarted: not this session
                        return item
        raise ExomonadError("the server's session ended")  # only if an exit hid an error

    async def _replay(self, read: Any, write: Any) -> None:
        """Open the new session with the client's own handshake; its answer is dropped."""
        init, *rest = self.handshake
        await write.send(init)
        init_id = getattr(init.message, "id", None)
        with anyio.fail_after(HANDSHAKE_TIMEOUT):
            async for answer in read:
                msg = getattr(answer, "message", None)
                if getattr(msg, "method", None) is None and getattr(msg, "id", None) == init_id:
                    if getattr(msg, "error", None) is not None:
                        raise ExomonadError(f"the restarted server refused initialize: {msg}")
                    break
            else:
                raise ExomonadError("the restarted server closed the session")
        for note in rest:
            await write.send(note)

    async def _to_client(self, read: Any) -> None:
        async for item in read:
            if isinstance(item, SessionMessage):
                await self.out.send(item)
                self.inflight.answered(item)
            else:
                log.warning("from the server: %s", item)

    async def _answer(self, item: SessionMessage, reason: str) -> None:
        """Answer ``item`` with an error if it is a request (a notification needs none)."""
        request_id = getattr(item.message, "id", None)
        if _method(item) is not None and request_id is not None:
            await self._answer_id(request_id, reason)

    async def _answer_id(self, request_id: Any, reason: str) -> None:
        error = ErrorData(code=INTERNAL_ERROR, message=reason)
        await self.out.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id,
                                                        error=error)))  # fmt: skip


async def _proxy(state_dir: Path, token: str | None) -> None:
    send, receive = anyio.create_memory_object_stream[SessionMessage](0)
    async with stdio_server() as (stdin_read, stdout_write):
        upstream = _Upstream(state_dir, token, stdout_write)
        async with anyio.create_task_group() as tg:
            tg.start_soon(upstream.run, receive)
            async with send:
                async for item in stdin_read:
                    if isinstance(item, SessionMessage):
                        await send.send(item)
                    else:
                        log.warning("dropping unparsable MCP message from stdin: %s", item)
        await stdout_write.aclose()  # lets stdio_server's writer finish


async def _embedded(svc: Services, who: Identity) -> None:
    server = build_mcp_server(svc, fixed_identity=who)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def run_stdio_bridge(state_dir: Path, token: str | None, *, root: Path | None = None) -> str:
    """Bridge stdio to the project's server, or serve embedded; returns the mode used."""
    info = read_server_info(state_dir)
    if info is not None and info.alive and Path(info.socket).exists():
        anyio.run(_proxy, state_dir, token)
        return "proxy"
    svc = Services(state_dir, root=root)
    try:
        anyio.run(_embedded, svc, svc.identify(token))
    finally:
        svc.close()
    return "embedded"
