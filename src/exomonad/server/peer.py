"""Who is on the other end of the socket: the connecting process, from the kernel.

The Unix socket is 0600, so every caller is the project's user; which *process* it is
comes from ``SO_PEERCRED`` (the pid the kernel recorded at ``connect``, in the server's
pid namespace even for a sandboxed caller). uvicorn does not put it in the ASGI scope,
so its HTTP protocols are subclassed to do it: ``scope["client"]`` becomes
``("unix-peer", pid)``. The server runs :class:`PeerHttpToolsProtocol` (httptools, the
C parser); :class:`PeerH11Protocol` (pure Python) does the same for uvicorn's other
parser.

The lead's token is worth more than any other (it answers lead-level escalations and
spawns workers), and a worker's code can read ``.exomonad/lead.token`` outside a
sandbox. So a request carrying it counts as the lead's only from a process that is no
other agent's (:func:`exomonad.ancestry.other_agent`): the lead's own Claude Code and
what it runs (its hooks, its ``exomonad mcp-stdio``), or a person's terminal
(``exomonad worker start``).
"""

from __future__ import annotations

import asyncio
import socket
import struct
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["PEER_HOST", "CoalescingTransport", "PeerH11Protocol", "PeerHttpToolsProtocol",
           "peer_pid"]  # fmt: skip

#: ``scope["client"][0]`` of a connection whose peer pid is known.
PEER_HOST = "unix-peer"
_UCRED = struct.Struct("3i")  # pid, uid, gid


def _socket_pid(transport: asyncio.BaseTransport) -> int | None:
    """The peer's pid on a Unix socket (0: it could not be read), None on any other."""
    sock = transport.get_extra_info("socket")
    if sock is None or sock.family != socket.AF_UNIX:
        return None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    except OSError:
        return 0
    pid: int = _UCRED.unpack(raw)[0]
    return max(pid, 0)


def _peer_client(transport: asyncio.BaseTransport, client: Any) -> Any:
    """What a protocol's ``client`` (the ASGI scope's) becomes: the peer's pid on a Unix
    socket, else uvicorn's own value."""
    pid = _socket_pid(transport)
    return client if pid is None else (PEER_HOST, pid)


class PeerH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, with the peer's pid as the request's client address."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Record the peer's pid where the ASGI scope's ``client`` comes from."""
        super().connection_made(transport)
        self.client = _peer_client(transport, self.client)


class PeerHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, with the peer's pid as the request's client address,
    writing through a :class:`CoalescingTransport`."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Record the peer's pid where the ASGI scope's ``client`` comes from."""
        super().connection_made(CoalescingTransport(transport))
        self.client = _peer_client(transport, self.client)


class CoalescingTransport(asyncio.Transport):
    """A transport whose writes within one turn of the event loop leave as one write.

    uvicorn writes a response's head and its body separately: two system calls, and a
    client that reads the head wakes up twice per call (docs/performance.md, issue 14).
    Here the writes are joined and handed to the real transport once the current
    callback is done (``call_soon``); ``close`` and ``write_eof`` send what is pending
    first, and the pending bytes count in the write buffer's size.
    """

    def __init__(self, transport: asyncio.Transport) -> None:
        super().__init__()
        self._inner = transport
        self._loop = asyncio.get_running_loop()
        self._pending: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Queue ``data`` for this turn's one write."""
        if not data:
            return
        if not self._pending:
            self._loop.call_soon(self._flush)
        self._pending.append(bytes(data))

    def _flush(self) -> None:
        if self._pending:
            data = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
            self._pending = []
            if not self._inner.is_closing():
                self._inner.write(data)

    def get_write_buffer_size(self) -> int:
        """The real transport's buffer plus what waits for this turn's write."""
        return self._inner.get_write_buffer_size() + sum(map(len, self._pending))

    def close(self) -> None:
        """Send what is pending, then close."""
        self._flush()
        self._inner.close()

    def write_eof(self) -> None:
        """Send what is pending, then half-close."""
        self._flush()
        self._inner.write_eof()

    def abort(self) -> None:
        """Drop what is pending and close at once."""
        self._pending = []
        self._inner.abort()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        """The real transport's (its socket, addresses)."""
        return self._inner.get_extra_info(name, default)

    def is_closing(self) -> bool:
        """Whether the real transport is closing."""
        return self._inner.is_closing()

    def pause_reading(self) -> None:
        """Pause the real transport's reading."""
        self._inner.pause_reading()

    def resume_reading(self) -> None:
        """Resume the real transport's reading."""
        self._inner.resume_reading()

    def is_reading(self) -> bool:
        """Whether the real transport reads."""
        return self._inner.is_reading()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        """Hand the real transport to another protocol (after what is pending)."""
        self._flush()
        self._inner.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        """The real transport's protocol."""
        return self._inner.get_protocol()

    def can_write_eof(self) -> bool:
        """Whether the real transport can half-close."""
        return self._inner.can_write_eof()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        """Set the real transport's flow-control limits."""
        self._inner.set_write_buffer_limits(high, low)

    def get_write_buffer_limits(self) -> tuple[int, int]:
        """The real transport's flow-control limits."""
        return self._inner.get_write_buffer_limits()


def peer_pid(scope: Any) -> int | None:
    """The connecting process of an ASGI ``scope`` (None: not known, e.g. in-process).

    >>> peer_pid({"client": ("unix-peer", 42)}), peer_pid({"client": None})
    (42, None)
    """
    client = scope.get("client") if isinstance(scope, dict) else None
    if isinstance(client, (tuple, list)) and len(client) == 2 and client[0] == PEER_HOST:
        return int(client[1])
    return None
