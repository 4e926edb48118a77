"""The one client of the server's socket (``exomonad.uds``): HTTP by hand, finding the
server, the caller's token, and what it costs to import."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from exomonad import uds
from exomonad.errors import ExomonadError, ServerError, ServerNotRunningError
from tests.support.imports import imported_after
from tests.support.uds_server import Request, UdsServer, http_answer


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[[Callable[[Request], None]], UdsServer]]:
    servers: list[UdsServer] = []

    def start(handler: Callable[[Request], None]) -> UdsServer:
        server = UdsServer(tmp_path / f"s{len(servers)}.sock", handler)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def test_a_request_and_its_answer(serve: Callable[..., UdsServer]) -> None:
    server = serve(lambda r: r.send(http_answer(201, b'{"ok": true}', {"X-Thing": "a b"})))
    reply = uds.request(str(server.path), "POST", "/hook/stop?runtime=gemini", b"{}",
                        {uds.TOKEN_HEADER: "exo_t"}, timeout=10)  # fmt: skip
    assert (reply.status, reply.json(), reply.headers["x-thing"]) == (201, {"ok": True}, "a b")
    [req] = server.requests
    assert (req.method, req.target, req.body) == ("POST", "/hook/stop?runtime=gemini", b"{}")
    assert req.headers[uds.TOKEN_HEADER] == "exo_t"
    assert req.headers["connection"] == "close"


def test_a_chunked_answer_is_streamed_as_it_arrives(serve: Callable[..., UdsServer]) -> None:
    more = threading.Event()

    def chunked(r: Request) -> None:
        r.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n")
        more.wait(30)
        r.send(b"6;ext=1\r\nsecond\r\n0\r\n\r\n")

    conn = uds.Connection(str(serve(chunked).path))
    try:
        conn.send("GET", "/mcp")
        assert conn.head()[0] == 200
        chunks = conn.chunks()
        assert next(chunks) == b"first"  # before the server sent the rest
        more.set()
        assert list(chunks) == [b"second"]
    finally:
        conn.close()


def test_an_answer_without_a_length_runs_to_the_close(serve: Callable[..., UdsServer]) -> None:
    server = serve(lambda r: r.send(b"HTTP/1.1 200 OK\r\n\r\nall of it"))
    assert uds.request(str(server.path), "GET", "/", timeout=10).body == b"all of it"


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",  # closed mid-body
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",  # not a chunk size
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n9\r\nabc",  # closed mid-chunk
    b"SSH-2.0-OpenSSH\r\n\r\n",  # not HTTP
    b"HTTP/1.1 200",  # closed before the head ends
    b"",
])  # fmt: skip
def test_a_broken_answer_is_a_server_error(serve: Callable[..., UdsServer],
                                           answer: bytes) -> None:  # fmt: skip
    server = serve(lambda r: r.send(answer))
    with pytest.raises(ServerError):
        uds.request(str(server.path), "GET", "/", timeout=10)


def test_an_answer_above_the_limit_is_refused(serve: Callable[..., UdsServer]) -> None:
    server = serve(lambda r: r.send(http_answer(200, b"x" * 5000)))
    with pytest.raises(ServerError, match="too large"):
        uds.request(str(server.path), "GET", "/", timeout=10, limit=4096)


def test_no_listener_is_server_not_running(tmp_path: Path) -> None:
    with pytest.raises(ServerNotRunningError):
        uds.request(str(tmp_path / "nothing.sock"), "GET", "/", timeout=5)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(tmp_path / "stale.sock"))  # bound, never listening: refused
    try:
        with pytest.raises(ServerNotRunningError):
            uds.request(str(tmp_path / "stale.sock"), "GET", "/", timeout=5)
    finally:
        stale.close()


def test_a_server_that_never_answers_times_out(serve: Callable[..., UdsServer]) -> None:
    release = threading.Event()
    server = serve(lambda r: release.wait(30))
    try:
        with pytest.raises(TimeoutError):
            uds.request(str(server.path), "GET", "/", timeout=0.3)
    finally:
        release.set()


def test_a_header_with_a_line_break_is_never_sent(serve: Callable[..., UdsServer]) -> None:
    server = serve(lambda r: r.send(http_answer(200)))
    with pytest.raises(ExomonadError, match="line break"):
        uds.request(str(server.path), "GET", "/", headers={uds.TOKEN_HEADER: "t\r\nX-Role: tl"},
                    timeout=5)  # fmt: skip
    assert server.requests == []


# -- finding the server ---------------------------------------------------------------------


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_live_server_reads_the_pid_file_and_checks_the_process(tmp_path: Path) -> None:
    pid_file = tmp_path / "server.pid"
    assert uds.live_server(str(tmp_path)) is None  # no pid file
    pid_file.write_text(json.dumps({"pid": os.getpid(), "socket": "/x.sock"}))
    assert uds.live_server(str(tmp_path)) == (os.getpid(), "/x.sock")
    pid_file.write_text(json.dumps({"pid": _dead_pid(), "socket": "/x.sock"}))
    assert uds.live_server(str(tmp_path)) is None
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        os.waitid(os.P_PID, zombie.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped
        pid_file.write_text(json.dumps({"pid": zombie.pid, "socket": "/x.sock"}))
        assert uds.live_server(str(tmp_path)) is None
    finally:
        zombie.wait()
    for garbage in ("[]", "{nope", '{"pid": "x", "socket": "/s"}', '{"pid": 1}',
                    '{"pid": 1, "socket": 7}'):  # fmt: skip
        pid_file.write_text(garbage)
        assert uds.live_server(str(tmp_path)) is None, garbage


# -- the caller's token ---------------------------------------------------------------------


@pytest.fixture
def lead_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "lead.token").write_text("exo_lead\n")
    (tmp_path / "tokens.json").write_text(json.dumps({"exo_lead": {"name": "team-lead",
                                                                   "role": "tl"}}))  # fmt: skip
    monkeypatch.delenv("EXOMONAD_TOKEN", raising=False)
    return tmp_path


def test_the_agents_own_token_wins(lead_state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXOMONAD_TOKEN", "exo_worker")
    assert uds.caller_token(str(lead_state), may_lead=True, role="tl") == "exo_worker"


def test_the_leads_token_only_for_the_leads_role_and_session(
    lead_state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = str(lead_state)
    why: list[str] = []
    # The test runner is below no Claude Code lead: refused, and told why.
    assert uds.caller_token(state, may_lead=True, role="tl", refused=why.append) is None
    assert len(why) == 1
    assert "no Claude Code lead" in why[0]
    monkeypatch.setattr("exomonad.ancestry.claude_lead_ancestor", lambda pid=None: None)
    assert uds.caller_token(state, may_lead=True, role="tl") == "exo_lead"
    assert uds.caller_token(state, may_lead=True) == "exo_lead"  # a hook: no role asked
    assert uds.caller_token(state, may_lead=True, role="worker") is None  # not the lead's role
    assert uds.caller_token(state, may_lead=False, role="tl") is None  # a worker runtime
    (lead_state / "tokens.json").write_text("{broken")
    assert uds.caller_token(state, may_lead=True, role="tl") is None
    (lead_state / "lead.token").unlink()
    assert uds.caller_token(state, may_lead=True) is None


# -- start-up cost ----------------------------------------------------------------------------

#: Modules a hook process or an mcp-stdio proxy must not import (each costs a process
#: milliseconds of CPU; the SDK, the CLI and pydantic hundreds).
COSTLY = ("json", "re", "enum", "socket", "typing", "pathlib", "dataclasses", "http.client",
          "orjson", "pydantic", "typer", "anyio", "mcp", "httpx2", "logging")  # fmt: skip


@pytest.mark.parametrize("module", ["exomonad.hookclient", "exomonad.server.stdio_proxy"])
def test_the_clients_import_nothing_costly(module: str) -> None:
    assert imported_after(f"import {module}", COSTLY) == []
