"""The connecting process's pid reaches the ASGI scope (``SO_PEERCRED``), with uvicorn's
httptools protocol on uvloop (what ``exomonad serve`` runs) and with its h11 protocol."""

from __future__ import annotations

import asyncio
import http.client
import os
import socket
from pathlib import Path
from typing import Any

import pytest
import uvicorn
import uvloop

from exomonad.server.peer import (
    CoalescingTransport,
    PeerH11Protocol,
    PeerHttpToolsProtocol,
    peer_pid,
)


async def _app(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = str(peer_pid(scope)).encode()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


def _get(sock: Path) -> str:
    conn = http.client.HTTPConnection("localhost", timeout=30)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(sock))
    conn.sock = s
    try:
        conn.request("GET", "/")
        return conn.getresponse().read().decode()
    finally:
        conn.close()


@pytest.mark.parametrize("protocol", [PeerHttpToolsProtocol, PeerH11Protocol])
def test_the_peer_pid_is_the_scope_client(tmp_path: Path, protocol: type[Any]) -> None:
    sock_path = tmp_path / "s.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(sock_path))
    listener.listen(8)
    config = uvicorn.Config(_app, http=protocol, lifespan="off", log_level="warning")
    server = uvicorn.Server(config)

    async def main() -> str:
        serving = asyncio.create_task(server.serve(sockets=[listener]))
        while not server.started:
            await asyncio.sleep(0.01)
        try:
            return await asyncio.to_thread(_get, sock_path)
        finally:
            server.should_exit = True
            await serving

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        answer = runner.run(main())
    assert answer == str(os.getpid())  # this process connected: the kernel says so


class _Recorder(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[Any] = []
        self.closing = False

    def write(self, data: Any) -> None:
        self.calls.append(("write", bytes(data)))

    def close(self) -> None:
        self.calls.append(("close",))
        self.closing = True

    def is_closing(self) -> bool:
        return self.closing

    def get_write_buffer_size(self) -> int:
        return 0


def test_writes_in_one_turn_leave_as_one_and_close_sends_what_is_pending() -> None:
    async def main() -> list[Any]:
        inner = _Recorder()
        corked = CoalescingTransport(inner)
        corked.write(b"HTTP/1.1 200 OK\r\n\r\n")
        corked.write(b"body")
        assert corked.get_write_buffer_size() == 23
        assert inner.calls == []  # nothing yet: the turn is not over
        await asyncio.sleep(0)
        corked.write(b"next")
        corked.close()  # the pending write goes first
        corked.write(b"late")  # after close: dropped by the real transport's rule
        await asyncio.sleep(0)
        return inner.calls

    calls = asyncio.run(main())
    assert calls == [("write", b"HTTP/1.1 200 OK\r\n\r\nbody"), ("write", b"next"), ("close",)]
