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

__all__ = ["PEER_HOST", "PeerH11Protocol", "PeerHttpToolsProtocol", "peer_pid"]

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
    """uvicorn's httptools protocol, with the peer's pid as the request's client address."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Record the peer's pid where the ASGI scope's ``client`` comes from."""
        super().connection_made(transport)
        self.client = _peer_client(transport, self.client)


def peer_pid(scope: Any) -> int | None:
    """The connecting process of an ASGI ``scope`` (None: not known, e.g. in-process).

    >>> peer_pid({"client": ("unix-peer", 42)}), peer_pid({"client": None})
    (42, None)
    """
    client = scope.get("client") if isinstance(scope, dict) else None
    if isinstance(client, (tuple, list)) and len(client) == 2 and client[0] == PEER_HOST:
        return int(client[1])
    return None
