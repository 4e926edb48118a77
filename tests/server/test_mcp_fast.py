"""The MCP fast path answers exactly what the SDK answers, and leaves it everything else.

Two live servers over one ``Services`` (uvicorn, httptools, uvloop, a Unix socket, as
``exomonad serve`` runs them): one with the fast path, one without (the SDK alone). The
same requests go to both over raw HTTP; the answers must mean the same (status, the
headers that matter, the JSON-RPC body), and the fast server's ``mcp_fast`` counter says
which of them it answered itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

import anyio
import httpx2
import orjson
import pytest
import uvicorn
import uvloop
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types import methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import Message, Receive, Scope, Send

from exomonad.server import mcp_app, mcp_fast
from exomonad.server.app import build_app
from exomonad.server.identity import TOKEN_HEADER, Identity
from exomonad.server.mcp_app import mcp_first
from exomonad.server.peer import PeerHttpToolsProtocol
from exomonad.server.services import Services
from exomonad.teams.tasks import TaskStore
from exomonad.util.waiting import retry_until

_INIT = {"protocolVersion": "2025-06-18", "capabilities": {},
         "clientInfo": {"name": "test", "version": "0"}}  # fmt: skip


@dataclass
class Live:
    sock: Path
    manager: StreamableHTTPSessionManager


def _listen(path: Path) -> socket.socket:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(64)
    return listener


def _server(asgi: Any, lifespan: Literal["on", "off"]) -> uvicorn.Server:
    config = uvicorn.Config(asgi, http=PeerHttpToolsProtocol, lifespan=lifespan,
                            log_level="warning")  # fmt: skip
    return uvicorn.Server(config)


@pytest.fixture
def servers(svc: Services, tmp_path: Path) -> Iterator[tuple[Live, Live]]:
    """The app served twice on one event loop: with the fast path (it runs the lifespan,
    so the SDK's session manager) and without it (the SDK alone)."""
    app = build_app(svc)
    manager = app.state.mcp_fast.keywords["manager"]
    with_fast = mcp_first(app)
    app.state.mcp_fast = None
    sdk_only = mcp_first(app)
    paths = (tmp_path / "fast.sock", tmp_path / "sdk.sock")
    running = [_server(with_fast, "on"), _server(sdk_only, "off")]

    async def main() -> None:
        await asyncio.gather(
            *(s.serve(sockets=[_listen(p)]) for s, p in zip(running, paths, strict=True))
        )

    def run() -> None:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(main())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    retry_until(lambda: all(s.started for s in running), timeout=30, message="no server")
    yield Live(paths[0], manager), Live(paths[1], manager)
    for s in running[::-1]:
        s.should_exit = True
    thread.join(30)
    assert not thread.is_alive()


@pytest.fixture
def fast(servers: tuple[Live, Live]) -> Live:
    return servers[0]


@pytest.fixture
def sdk(servers: tuple[Live, Live]) -> Live:
    return servers[1]


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: Any


class Client:
    """Raw MCP over one keep-alive connection: what the benchmark's sessions speak."""

    def __init__(self, sock: Path, token: str | None, *, init: bool = True) -> None:
        self.conn = http.client.HTTPConnection("localhost", timeout=30)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(str(sock))
        self.conn.sock = s
        self.headers = {"Content-Type": "application/json", "Host": "localhost",
                        "Accept": "application/json, text/event-stream"}  # fmt: skip
        if token:
            self.headers[TOKEN_HEADER] = token
        if init:
            opened = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                "params": _INIT})  # fmt: skip
            assert opened.status == 200
            self.headers["mcp-session-id"] = opened.headers["mcp-session-id"]
            self.headers["mcp-protocol-version"] = "2025-06-18"
            assert (
                self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status == 202
            )

    def post(self, doc: Any, headers: dict[str, str] | None = None, raw: bytes | None = None,
             method: str = "POST") -> Answer:  # fmt: skip
        hs = {**self.headers, **(headers or {})}
        hs = {k: v for k, v in hs.items() if v}  # "" drops a header
        body = raw if raw is not None else (orjson.dumps(doc) if doc is not None else None)
        self.conn.request(method, "/mcp", body, hs)
        resp = self.conn.getresponse()
        data = resp.read()
        headers = {k.lower(): v for k, v in resp.getheaders()}
        json = headers.get("content-type") == "application/json" and data
        return Answer(resp.status, headers, orjson.loads(data) if json else data)

    @property
    def session(self) -> str:
        return self.headers["mcp-session-id"]


def _ageless(value: Any) -> Any:
    """``value`` without ``lastEventAge`` (team_status: seconds since a member's last
    event, rounded to 0.1, so two calls a moment apart can straddle a rounding step),
    also inside a tool result's JSON text."""
    if isinstance(value, dict):
        out = {k: _ageless(v) for k, v in value.items() if k != "lastEventAge"}
        if out.get("type") == "text" and isinstance(out.get("text"), str):
            with contextlib.suppress(orjson.JSONDecodeError):
                out["text"] = _ageless(orjson.loads(out["text"]))
        return out
    if isinstance(value, list):
        return [_ageless(v) for v in value]
    return value


def _same(svc: Services, fast: Live, sdk: Live, token: str | None, doc: Any, *,
          answered_fast: bool, headers: dict[str, str] | None = None) -> Answer:  # fmt: skip
    """Send ``doc`` on an established session of each server; both answers must match."""
    answers = []
    for live in (fast, sdk):
        client = Client(live.sock, token)
        client.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})  # the SDK first
        before = svc.counters["mcp_fast"]
        answer = client.post(doc, headers)
        if live is fast:
            assert svc.counters["mcp_fast"] - before == int(answered_fast)
        session = answer.headers.pop("mcp-session-id", None)
        if session is not None and (headers or {}).get("mcp-session-id") is None:
            assert session == client.session
        answers.append((answer, session is not None))
    (quick, quick_session), (slow, slow_session) = answers
    assert (quick.status, _ageless(quick.body), quick_session) == \
        (slow.status, _ageless(slow.body), slow_session)  # fmt: skip
    assert quick.headers.get("content-type") == slow.headers.get("content-type")
    return quick


@pytest.fixture
def worker(svc: Services) -> str:
    return svc.tokens.issue(Identity("w1", "worker", "proj", parent="team-lead"))


def _call(name: str, arguments: Any, rid: Any = 7) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}  # fmt: skip


def test_fast_answers_match_the_sdk(svc: Services, fast: Live, sdk: Live, worker: str) -> None:
    TaskStore(svc.paths("proj")).create("write the docs", "all of them")
    listed = _same(svc, fast, sdk, worker, {"jsonrpc": "2.0", "id": "a", "method": "tools/list"},
                   answered_fast=True)  # fmt: skip
    names = {t["name"] for t in listed.body["result"]["tools"]}
    assert "notify_parent" in names
    assert "spawn_workers" not in names
    assert listed.headers["content-type"] == "application/json"
    ok = _same(svc, fast, sdk, worker, _call("task_get", {"task_id": "1"}), answered_fast=True)
    assert ok.body["result"]["structuredContent"]["subject"] == "write the docs"
    assert ok.body["result"]["isError"] is False
    missing = _same(svc, fast, sdk, worker, _call("task_get", {"task_id": "99"}, "x"),
                    answered_fast=True)  # fmt: skip
    assert missing.body["result"]["isError"] is True
    bad = _same(svc, fast, sdk, worker, _call("task_get", {"nope": 1}), answered_fast=True)
    assert "invalid arguments for task_get" in bad.body["result"]["content"][0]["text"]
    for forbidden in ("spawn_workers", "no_such_tool"):
        refused = _same(svc, fast, sdk, worker, _call(forbidden, {"workers": []}),
                        answered_fast=True)  # fmt: skip
        assert refused.body["result"]["isError"] is True
        assert "not available to role 'worker'" in refused.body["result"]["content"][0]["text"]
    ping = _same(svc, fast, sdk, worker, {"jsonrpc": "2.0", "id": 3, "method": "ping"},
                 answered_fast=True)  # fmt: skip
    assert ping.body == {"jsonrpc": "2.0", "id": 3, "result": {}}
    status = _same(svc, fast, sdk, worker, _call("team_status", {}), answered_fast=True)
    assert status.body["result"]["structuredContent"]["you"] == "w1"
    lead = status.body["result"]["structuredContent"]["members"][0]
    assert isinstance(lead["lastEventAge"], float)  # compared without it: it is a clock


def test_a_guest_without_a_token_gets_a_guests_answers(
    svc: Services, fast: Live, sdk: Live
) -> None:
    listed = _same(svc, fast, sdk, None, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                   answered_fast=True)  # fmt: skip
    assert "notify_parent" not in {t["name"] for t in listed.body["result"]["tools"]}
    refused = _same(svc, fast, sdk, None, _call("notify_parent", {"status": "success",
                                                                   "message": "hi"}),
                    answered_fast=True)  # fmt: skip
    assert refused.body["result"]["isError"] is True


@pytest.mark.parametrize(("doc", "headers"), [
    ({"jsonrpc": "2.0", "method": "notifications/initialized"}, None),  # a notification
    ([{"jsonrpc": "2.0", "id": 1, "method": "ping"}], None),  # a batch
    ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _INIT}, None),
    ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"Host": "evil.example"}),
    ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"Origin": "http://evil.example"}),
    ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"Accept": "text/html"}),
    ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"Content-Type": "text/plain"}),
    ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"mcp-protocol-version": "1999-01-01"}),
    ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"mcp-session-id": "no-such-session"}),
    ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"mcp-session-id": ""}),  # missing
    ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}}, None),
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "task_get",
                                                                   "arguments": [1]}}, None),
    ({"jsonrpc": "2.0", "id": 1, "method": "resources/list"}, None),
])  # fmt: skip
def test_everything_else_gets_the_sdks_answer(
    svc: Services, fast: Live, sdk: Live, worker: str, doc: Any, headers: dict[str, str] | None
) -> None:
    answer = _same(svc, fast, sdk, worker, doc, answered_fast=False, headers=headers)
    assert answer.status != 200 or "error" in answer.body or \
        "protocolVersion" in answer.body["result"]  # fmt: skip


def test_a_body_that_is_not_json_gets_the_sdks_answer(
    svc: Services, fast: Live, sdk: Live, worker: str
) -> None:
    answers = []
    for live in (fast, sdk):
        client = Client(live.sock, worker)
        client.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        before = svc.counters["mcp_fast"]
        client.conn.request("POST", "/mcp", b"{not json", client.headers)
        resp = client.conn.getresponse()
        answers.append((resp.status, resp.read()[:40]))
        assert svc.counters["mcp_fast"] == before
    assert answers[0] == answers[1]
    assert answers[0][0] == 400


def test_a_session_is_fast_only_once_the_sdk_has_served_it(
    svc: Services, fast: Live, worker: str
) -> None:
    client = Client(fast.sock, worker)
    before = svc.counters["mcp_fast"]
    client.post(_call("team_status", {}))  # the SDK's: its first tool request
    assert svc.counters["mcp_fast"] == before
    client.post(_call("team_status", {}))
    assert svc.counters["mcp_fast"] == before + 1
    ended = client.post(None, method="DELETE")
    assert ended.status == 200
    gone = client.post(_call("team_status", {}))  # the SDK's answer for an ended session
    assert gone.status == 404
    assert svc.counters["mcp_fast"] == before + 1


def test_a_fast_request_holds_the_sessions_idle_countdown(
    svc: Services, fast: Live, worker: str
) -> None:
    client = Client(fast.sock, worker)
    client.post(_call("team_status", {}))
    answered = time.monotonic()
    scope = fast.manager._server_instances[client.session].idle_scope
    assert scope is not None
    before = scope.deadline
    # uvloop's clock moves in whole milliseconds, and a fast team_status round trip can
    # take less: let it move on, or a restarted countdown has the same deadline.
    retry_until(lambda: time.monotonic() > answered + 0.002, timeout=5)
    client.post(_call("team_status", {}))  # fast: the countdown restarts after it
    assert scope.deadline > before
    assert scope.deadline != float("inf")


def test_the_sdk_client_works_through_the_fast_path(svc: Services, fast: Live, worker: str) -> None:
    async def session() -> tuple[list[str], Any, Any]:
        transport = httpx2.AsyncHTTPTransport(uds=str(fast.sock))
        async with (
            httpx2.AsyncClient(transport=transport, headers={TOKEN_HEADER: worker}) as http,
            streamable_http_client("http://localhost/mcp", http_client=http) as (r, w),
            ClientSession(r, w) as s,
        ):
            await s.initialize()
            first = await s.list_tools()
            await s.send_ping()
            listed = await s.list_tools()
            status = await s.call_tool("team_status", {})
            refused = await s.call_tool("spawn_workers", {"workers": []})
            assert [t.name for t in first.tools] == [t.name for t in listed.tools]
            return [t.name for t in listed.tools], status, refused

    before = svc.counters["mcp_fast"]
    names, status, refused = anyio.run(session)
    assert "notify_parent" in names
    assert "spawn_workers" not in names
    assert status.structured_content["you"] == "w1"
    assert not status.is_error
    assert refused.is_error
    assert svc.counters["mcp_fast"] - before == 4  # all but the first tools/list


def test_a_session_ended_while_a_fast_call_runs_gets_the_sdks_answer(
    svc: Services, fast: Live, sdk: Live, worker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered, release = threading.Event(), threading.Event()
    real = mcp_app.answer_call

    async def held(*args: Any) -> dict[str, Any]:
        entered.set()
        await anyio.to_thread.run_sync(release.wait)
        return await real(*args)

    monkeypatch.setattr(mcp_fast, "answer_call", held)
    monkeypatch.setattr(mcp_app, "answer_call", held)
    answers = []
    for live in (fast, sdk):
        entered.clear()
        release.clear()
        client = Client(live.sock, worker)
        client.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})  # the SDK first
        before = svc.counters["mcp_fast"]
        client.conn.request("POST", "/mcp", orjson.dumps(_call("team_status", {})),
                            client.headers)  # fmt: skip
        retry_until(entered.is_set, timeout=30, message="the call did not start")
        other = Client(live.sock, worker, init=False)
        other.headers["mcp-session-id"] = client.session
        assert other.post(None, method="DELETE").status == 200
        release.set()
        resp = client.conn.getresponse()
        answers.append((resp.status, resp.getheader("content-type"), orjson.loads(resp.read())))
        assert svc.counters["mcp_fast"] == before  # not counted as a fast answer
    assert answers[0] == answers[1]
    assert answers[0][0] == 500
    assert answers[0][2]["error"]["message"] == "Session terminated before the request completed"


def test_without_the_sdks_private_registries_every_request_goes_to_the_sdk(
    svc: Services,
) -> None:
    seen: list[Scope] = []

    async def sdk_app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(scope)

    other_sdk = SimpleNamespace(json_response=True, stateless=False)  # no _server_instances
    path = build_app(svc).state.mcp_fast(sdk_app, manager=other_sdk)
    headers = [(b"host", b"localhost"), (b"content-type", b"application/json"),
               (b"accept", b"application/json"), (b"mcp-session-id", b"s1")]  # fmt: skip
    scope: Scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}

    async def nothing() -> Message:
        raise AssertionError("the fast path read the body")

    async def no_send(message: Message) -> None:
        raise AssertionError("the fast path answered")

    anyio.run(path, scope, nothing, no_send)
    assert seen == [scope]

    class Bare:  # a transport without the idle-countdown attributes
        idle_scope = None

    with mcp_fast._in_flight(Bare()) as held:  # type: ignore[arg-type]
        assert held is False


@pytest.mark.parametrize("version", sorted(HANDSHAKE_PROTOCOL_VERSIONS))
@pytest.mark.parametrize(
    "structured",
    [
        {"team": "t", "members": [{"name": "w1", "lastEvent": None, "age": 1.5, "ok": True}]},
        {"text": "déjà vu \u2603 \U0001f600", "n": [1, [2, {"x": None}]], "e": {}, "z": -0.0},
        {},
        None,
    ],
)
def test_a_call_results_structured_content_passes_the_sieve_as_the_sdk_shapes_it(
    version: str, structured: dict[str, Any] | None
) -> None:
    """The fast path's sieve of a tools/call result (its structuredContent passed
    through) gives what the SDK's sieve gives, byte for byte on the wire."""
    text = orjson.dumps(structured).decode()
    call: dict[str, Any] = {"content": [{"type": "text", "text": text}],
                            "isError": structured is None}  # fmt: skip
    if structured is not None:
        call["structuredContent"] = structured
    odd = {**call, "content": [*call["content"], {"type": "text", "text": ""}]}
    for result in (call, odd, {**call, "content": [{"type": "text", "text": ""}]}):
        ours = mcp_fast._sieve_call(version, result)
        sdks = mcp_fast._sieve("tools/call", version, result)
        assert orjson.dumps(ours) == orjson.dumps(sdks)


@pytest.mark.parametrize("version", [*sorted(HANDSHAKE_PROTOCOL_VERSIONS), "1999-01-01"])
@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {"name": "task_get", "arguments": {"task_id": "1"}}),
        ("tools/call", {"name": "", "arguments": None}),
        ("tools/call", {"name": "x"}),
        ("tools/call", {"name": "x", "arguments": {"a": [None, {"b": 1.5}]}}),
        ("tools/call", {"name": "x", "arguments": {}, "_meta": {"progressToken": 1}}),
        ("tools/call", {"name": "x", "arguments": {}, "_meta": "not an object"}),
        ("tools/call", {"name": 3, "arguments": {}}),
        ("tools/call", {"name": "x", "arguments": []}),
        ("tools/call", None),
        ("tools/list", None),
        ("tools/list", {}),
        ("tools/list", {"cursor": "abc"}),
        ("tools/list", {"cursor": 5}),
        ("ping", None),
        ("ping", {}),
        ("ping", {"_meta": []}),
    ],
)
def test_the_fast_paths_request_check_agrees_with_the_sdks(
    version: str, method: str, params: dict[str, Any] | None
) -> None:
    """Where the fast path skips the SDK's schema check (the requests agents send),
    the SDK's check passes too; elsewhere the SDK's check decides."""
    try:
        methods.validate_client_request(method, version, params)
        sdk_accepts = True
    except (KeyError, ValueError):
        sdk_accepts = False
    if method == "tools/call" and params is not None:  # the fast path's own extra rule
        arguments = params.get("arguments")
        sdk_accepts = sdk_accepts and isinstance(params.get("name"), str) and (
            arguments is None or isinstance(arguments, dict))  # fmt: skip
    assert mcp_fast._valid(method, version, params) is sdk_accepts
