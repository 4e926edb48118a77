"""``exomonad mcp-stdio``'s proxy against a stand-in MCP server that does what ExoMonad's
own server does not (answers as server-sent events, sends on its ``GET`` stream, forgets
a session): the SDK client over the real server is in ``test_stdio_bridge.py``,
``test_server_process.py`` and ``test_fault_injection.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from exomonad.server.stdio_proxy import Proxy, main
from exomonad.uds import TOKEN_HEADER
from tests.support.uds_server import Request, UdsServer, http_answer

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "0"}}}  # fmt: skip
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
NOTE = {"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": "from the server"}}  # fmt: skip


def tools_list(request_id: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}


def result(request_id: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"tools": []}}).encode()


def sse(*messages: bytes) -> bytes:
    return b"".join(b": ping\r\n\r\nevent: message\r\ndata: " + m + b"\r\n\r\n" for m in messages)


class Lines:
    """The proxy's stdout: lines, waited for."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self._cond = threading.Condition()

    def write(self, data: bytes) -> int:
        with self._cond:
            self.lines += [json.loads(line) for line in data.splitlines()]
            self._cond.notify_all()
        return len(data)

    def flush(self) -> None:
        pass

    def wait(self, count: int) -> list[dict[str, Any]]:
        with self._cond:
            assert self._cond.wait_for(lambda: len(self.lines) >= count, 30), self.lines
            return list(self.lines)


class Agent:
    """A proxy on a pipe, as an agent runs it."""

    def __init__(self, state: Path, token: str) -> None:
        self.out = Lines()
        read, self._write = os.pipe()
        self._stdin = os.fdopen(read, "rb")
        proxy = Proxy(str(state), token, self.out)  # type: ignore[arg-type]
        self.thread = threading.Thread(target=proxy.run, args=(self._stdin,), daemon=True)
        self.thread.start()

    def say(self, *messages: dict[str, Any]) -> None:
        os.write(self._write, b"".join(json.dumps(m).encode() + b"\n" for m in messages))

    def close(self) -> None:
        os.close(self._write)
        self.thread.join(60)
        assert not self.thread.is_alive(), "the proxy did not finish after stdin closed"


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Callable[[Callable[[Request], None]], UdsServer]]:
    servers: list[UdsServer] = []

    def start(handler: Callable[[Request], None]) -> UdsServer:
        server = UdsServer(tmp_path / "server.sock", handler)
        (tmp_path / "server.pid").write_text(json.dumps({"pid": os.getpid(),
                                                         "socket": str(server.path)}))  # fmt: skip
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def test_events_the_get_stream_and_the_sessions_end(project: Callable[..., UdsServer],
                                                     tmp_path: Path) -> None:  # fmt: skip
    streamed, ended = threading.Event(), threading.Event()

    def handler(r: Request) -> None:
        if r.method == "GET":  # what the server sends on its own, then nothing until the end
            r.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                   b"Transfer-Encoding: chunked\r\n\r\n")  # fmt: skip
            chunk = sse(json.dumps(NOTE).encode())
            r.send(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            streamed.set()
            ended.wait(30)
            return
        if r.method == "DELETE":
            ended.set()
            r.send(http_answer(200))
            return
        message = json.loads(r.body)
        if message.get("method") == "initialize":
            r.send(
                http_answer(
                    200,
                    sse(result(message["id"])),
                    {"Content-Type": "text/event-stream", "mcp-session-id": "s1"},
                )
            )
        elif "id" not in message:
            r.send(http_answer(202))
        else:  # answered once the GET stream has spoken
            streamed.wait(30)
            r.send(http_answer(200, result(message["id"]), {"Content-Type": "application/json"}))

    server = project(handler)
    agent = Agent(tmp_path, "exo_w")
    agent.say(INIT, INITIALIZED, tools_list(1))
    out = agent.out.wait(3)
    agent.close()
    assert out[0]["id"] == 0  # initialize: answered before anything else is sent
    assert sorted(json.dumps(m) for m in out[1:]) == sorted([json.dumps(NOTE),
                                                             result(1).decode()])  # fmt: skip
    kinds = [(r.method, json.loads(r.body).get("method") if r.body else None,
              r.headers.get("mcp-session-id")) for r in server.requests]  # fmt: skip
    assert kinds[0] == ("POST", "initialize", None)
    assert set(kinds[1:]) == {("POST", "notifications/initialized", "s1"), ("GET", None, "s1"),
                              ("POST", "tools/list", "s1"), ("DELETE", None, "s1")}  # fmt: skip
    assert {r.headers.get(TOKEN_HEADER) for r in server.requests} == {"exo_w"}


def test_a_forgotten_session_is_opened_again_with_the_clients_handshake(
    project: Callable[..., UdsServer], tmp_path: Path
) -> None:
    sessions: list[str] = []
    forgotten = {"s1"}

    def handler(r: Request) -> None:
        if r.method != "POST":
            r.send(http_answer(405))
            return
        message = json.loads(r.body)
        if message.get("method") == "initialize":
            sessions.append(f"s{len(sessions) + 1}")
            r.send(
                http_answer(
                    200,
                    result(message["id"]),
                    {"Content-Type": "application/json", "mcp-session-id": sessions[-1]},
                )
            )
        elif "id" not in message:
            r.send(http_answer(202))
        elif r.headers.get("mcp-session-id") in forgotten:
            error = {"jsonrpc": "2.0", "id": "server-error",
                     "error": {"code": -32600, "message": "Session not found"}}  # fmt: skip
            r.send(http_answer(404, json.dumps(error).encode()))
        elif message["id"] == 3:
            r.send(http_answer(500, b"Internal Server Error"))
        else:
            r.send(http_answer(200, result(message["id"]), {"Content-Type": "application/json"}))

    project(handler)
    agent = Agent(tmp_path, "exo_w")
    agent.say(INIT, INITIALIZED, tools_list(1))
    out = agent.out.wait(2)
    assert out[1] == {"jsonrpc": "2.0", "id": 1,
                      "error": {"code": -32600, "message": "Session not found"}}  # fmt: skip
    agent.say(tools_list(2), tools_list(3))  # a new session, the handshake replayed first
    out = agent.out.wait(4)
    agent.close()
    assert sessions == ["s1", "s2"]
    answers = {m["id"]: m for m in out[2:]}  # the two in any order
    assert answers[2] == json.loads(result(2))
    assert "HTTP 500" in answers[3]["error"]["message"]
    assert len(out) == 4  # the replayed initialize's answer is not the client's


@pytest.mark.parametrize("argv", [["--help"], ["--role"], ["--bogus", "x"], ["-h"]])
def test_anything_but_its_options_goes_to_the_full_cli(argv: list[str]) -> None:
    assert main(argv) is None


def test_no_server_is_the_embedded_mode(tmp_path: Path) -> None:
    assert main(["--state-dir", str(tmp_path), "--role=tl", "--name", "x"]) is None


def test_help_still_comes_from_the_cli() -> None:
    done = subprocess.run([sys.executable, "-m", "exomonad", "mcp-stdio", "--help"],
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "--role" in done.stdout
    assert "embedded" in done.stdout
