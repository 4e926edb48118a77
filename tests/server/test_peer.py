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

from exomonad.server.peer import PeerH11Protocol, PeerHttpToolsProtocol, peer_pid


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
