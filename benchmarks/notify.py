"""MCP tool calls against a real ``exomonad serve``: notify_parent end to end, throughput.

A real server process (``python -m exomonad serve``) on a temporary project; 16 worker
tokens issued before it starts (``TokenStore.issue``, role ``worker``, parent
``team-lead``); the lead's TeamCreate posted as a hook. Clients are the official MCP SDK
(``ClientSession`` over ``streamable_http_client``) connected **directly** to the Unix
socket, each with its own worker token, all on one event loop in the benchmark process;
and, for comparison, one session through ``exomonad mcp-stdio`` (the stdio proxy
process agents launch).

``notify_parent`` verifies its entry under the lead's inbox lock before answering, so a
call's latency (request → result) is the end-to-end figure. The lead's inbox is drained
the way Claude Code 2.1.330's poller does it (``drain.js``: every 1 s, lock, prune), so
it stays small and the calls meet real lock contention. Afterwards every returned
``messageId`` must be in the drained entries or the inbox, exactly once.

Throughput: 16 sessions calling a cheap read-only tool back to back (``team_status``:
config, presence, watcher stats; ``task_get``: one task file). Server CPU per call is
measured from ``/proc/<pid>/stat``, client CPU per call with ``getrusage`` (both sides
share this machine's two cores).
"""

from __future__ import annotations

import asyncio
import resource
import sys
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import orjson
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult
from rich.console import Console
from rich.table import Table
from tests.interop import peers

from benchmarks._common import Settings, fmt_ms, summarize
from benchmarks._live import ExoServer, exomonad_server, verdict
from benchmarks._mcp_peer import RawMcp
from exomonad.server.identity import TOKEN_HEADER
from exomonad.teams import Mailbox, message_identity
from exomonad.teams.tasks import TaskStore

NAME = "notify"
TITLE = "MCP tools on a real server: notify_parent end to end, throughput"

WORKERS = [f"worker-{k:02d}" for k in range(16)]
TARGET_NOTIFY_P50_MS = 5.0
TARGET_CALLS_PER_S = 1000.0
WARMUP = 10


def _raw_notify(server: ExoServer, name: str, count: int, lat: list[float], ids: list[str],
                warmup: int = 0) -> None:  # fmt: skip
    client = RawMcp(server.sock, server.workers[name])
    try:
        for i in range(-warmup, count):
            t0 = time.perf_counter()
            res = client.call("notify_parent", {"status": "success", "message": f"{name} raw {i}"})
            dt = (time.perf_counter() - t0) * 1000
            ids.append(str(res["messageId"]))
            if i >= 0:
                lat.append(dt)
    finally:
        client.close()


def _raw_cheap(server: ExoServer, tool: str, args: dict[str, Any], sessions: int, count: int
               ) -> tuple[list[float], dict[str, float]]:  # fmt: skip
    """``sessions`` raw clients on threads, ``count`` calls each, released together."""
    clients = [RawMcp(server.sock, server.workers[WORKERS[k]]) for k in range(sessions)]
    lat: list[float] = []
    go = threading.Barrier(sessions + 1)

    def work(client: RawMcp) -> list[float]:
        for _ in range(3):
            client.call(tool, args)  # warm-up
        go.wait()
        out = []
        for _ in range(count):
            t0 = time.perf_counter()
            client.call(tool, args)
            out.append((time.perf_counter() - t0) * 1000)
        return out

    try:
        with ThreadPoolExecutor(sessions) as pool:
            futures = [pool.submit(work, c) for c in clients]
            go.wait()
            s0, c0, t0 = server.cpu_seconds(), _client_cpu(), time.perf_counter()
            for f in futures:
                lat += f.result()
            elapsed = time.perf_counter() - t0
            s1, c1 = server.cpu_seconds(), _client_cpu()
    finally:
        for c in clients:
            c.close()
    return lat, {"elapsed_s": elapsed, "server_cpu_s": s1 - s0, "client_cpu_s": c1 - c0}


def _client_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


@asynccontextmanager
async def direct_session(sock: Path, token: str) -> AsyncIterator[ClientSession]:
    """An initialized SDK session on the server's socket, presenting ``token``."""
    client = httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(uds=str(sock)),
                                headers={TOKEN_HEADER: token}, timeout=None)  # fmt: skip
    async with (
        client,
        streamable_http_client("http://localhost/mcp", http_client=client) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def stdio_session(server: ExoServer, token: str) -> AsyncIterator[ClientSession]:
    """An initialized SDK session through ``exomonad mcp-stdio`` (a proxy process)."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "exomonad", "mcp-stdio", "--role", "worker"],
        env={**server.env, "EXOMONAD_TOKEN": token}, cwd=server.state.parent,
    )  # fmt: skip
    async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        yield session


def _check(res: Any, what: str) -> CallToolResult:
    if not isinstance(res, CallToolResult) or res.is_error:
        raise RuntimeError(f"{what} failed: {res!r}")
    return res


async def _notify_loop(session: ClientSession, name: str, count: int, lat: list[float],
                       ids: list[str], warmup: int = 0) -> None:  # fmt: skip
    for i in range(-warmup, count):
        t0 = time.perf_counter()
        res = _check(await session.call_tool(
            "notify_parent", {"status": "success", "message": f"{name} step {i} done"}
        ), "notify_parent")  # fmt: skip
        dt = (time.perf_counter() - t0) * 1000
        ids.append(str((res.structured_content or {})["messageId"]))
        if i >= 0:
            lat.append(dt)


async def _cheap_loop(session: ClientSession, tool: str, args: dict[str, Any], count: int,
                      lat: list[float]) -> None:  # fmt: skip
    for _ in range(count):
        t0 = time.perf_counter()
        _check(await session.call_tool(tool, args), tool)
        lat.append((time.perf_counter() - t0) * 1000)


Body = Callable[[int, ClientSession], Awaitable[None]]


async def _phase(server: ExoServer, n_sessions: int, body: Body) -> dict[str, float]:
    """Open ``n_sessions`` direct sessions, then run ``body`` on all at once, timed."""
    async with anyio.create_task_group() as tg:
        sessions: list[ClientSession] = []
        opened, go, finished = anyio.Event(), anyio.Event(), anyio.Event()
        remaining = [n_sessions]

        async def one(k: int) -> None:
            async with direct_session(server.sock, server.workers[WORKERS[k]]) as s:
                sessions.append(s)
                if len(sessions) == n_sessions:
                    opened.set()
                await go.wait()
                await body(k, s)
                remaining[0] -= 1
                if remaining[0] == 0:
                    finished.set()
                await finished.wait()  # keep every session open until all are done

        for k in range(n_sessions):
            tg.start_soon(one, k)
        await opened.wait()
        s0, c0, t0 = server.cpu_seconds(), _client_cpu(), time.perf_counter()
        go.set()
        await finished.wait()
        elapsed = time.perf_counter() - t0
        s1, c1 = server.cpu_seconds(), _client_cpu()
    return {"elapsed_s": elapsed, "server_cpu_s": s1 - s0, "client_cpu_s": c1 - c0}


async def _measure(settings: Settings, server: ExoServer, console: Console) -> dict[str, Any]:
    single_n = settings.scale(300, 20)
    per_session = settings.scale(40, 5)
    cheap_per_session = settings.scale(60, 5)
    stdio_n = settings.scale(200, 20)
    ids: list[str] = []
    rows: list[dict[str, Any]] = []
    quirks = _quiet_close_race()

    console.log(f"notify: 1 direct session, {single_n} notify_parent")
    lat1: list[float] = []
    cost = await _phase(server, 1, lambda k, s: _notify_loop(s, WORKERS[k], single_n, lat1,
                                                             ids, WARMUP))  # fmt: skip
    rows.append({"case": "notify_parent, 1 session (direct)", "tool": "notify_parent",
                 "sessions": 1, "calls": single_n, **cost, "latency": summarize(lat1)})  # fmt: skip

    console.log(f"notify: 16 direct sessions x {per_session} notify_parent")
    lat16: list[float] = []
    cost = await _phase(server, 16, lambda k, s: _notify_loop(s, WORKERS[k], per_session,
                                                              lat16, ids, 2))  # fmt: skip
    rows.append({"case": "notify_parent, 16 sessions (direct)", "tool": "notify_parent",
                 "sessions": 16, "calls": 16 * per_session, **cost,
                 "latency": summarize(lat16)})  # fmt: skip

    for tool, args in (("team_status", {}), ("task_get", {"task_id": "1"})):
        console.log(f"notify: throughput, 16 direct sessions x {cheap_per_session} {tool}")
        lat: list[float] = []

        async def cheap(k: int, s: ClientSession, tool: str = tool,
                        args: dict[str, Any] = args, lat: list[float] = lat) -> None:  # fmt: skip
            await _cheap_loop(s, tool, args, 3, [])  # warm-up
            await _cheap_loop(s, tool, args, cheap_per_session, lat)

        cost = await _phase(server, 16, cheap)
        rows.append({"case": f"{tool}, 16 sessions (direct)", "tool": tool, "sessions": 16,
                     "calls": 16 * (cheap_per_session + 3), **cost,
                     "latency": summarize(lat)})  # fmt: skip

    console.log(f"notify: 1 session through `exomonad mcp-stdio`, {stdio_n} notify_parent")
    lat_stdio: list[float] = []
    t_open = time.perf_counter()
    async with stdio_session(server, server.workers[WORKERS[0]]) as s:
        opened_ms = (time.perf_counter() - t_open) * 1000
        s0, c0, t0 = server.cpu_seconds(), _client_cpu(), time.perf_counter()
        await _notify_loop(s, WORKERS[0], stdio_n, lat_stdio, ids, WARMUP)
        elapsed = time.perf_counter() - t0
        s1, c1 = server.cpu_seconds(), _client_cpu()
    rows.append({"case": "notify_parent, 1 session (mcp-stdio proxy)", "tool": "notify_parent",
                 "sessions": 1, "calls": stdio_n + WARMUP, "elapsed_s": elapsed,
                 "server_cpu_s": s1 - s0, "client_cpu_s": c1 - c0,
                 "latency": summarize(lat_stdio), "session_open_ms": opened_ms})  # fmt: skip
    return {"rows": rows, "ids": ids, "close_races": quirks[0]}


def _quiet_close_race() -> list[int]:
    """Count, rather than print, one known anyio/httpcore2 race at session close: a
    socket's read waiter is cancelled, then its fd turns readable, and asyncio reports
    ``InvalidStateError`` from ``Future.set_result`` (harmless)."""
    loop = asyncio.get_running_loop()
    count = [0]

    def handler(loop: asyncio.AbstractEventLoop, ctx: dict[str, Any]) -> None:
        if isinstance(ctx.get("exception"), asyncio.InvalidStateError):
            count[0] += 1
            return
        loop.default_exception_handler(ctx)

    loop.set_exception_handler(handler)
    return count


def _raw_rows(settings: Settings, server: ExoServer, console: Console, ids: list[str]
              ) -> list[dict[str, Any]]:  # fmt: skip
    """The same calls without the MCP SDK: plain JSON-RPC over keep-alive HTTP."""
    rows: list[dict[str, Any]] = []
    n = settings.scale(300, 20)
    console.log(f"notify: 1 raw JSON-RPC client (no SDK), {n} notify_parent")
    lat: list[float] = []
    s0, c0, t0 = server.cpu_seconds(), _client_cpu(), time.perf_counter()
    _raw_notify(server, WORKERS[1], n, lat, ids, WARMUP)
    elapsed = time.perf_counter() - t0
    s1, c1 = server.cpu_seconds(), _client_cpu()
    rows.append({"case": "notify_parent, 1 raw client (no SDK)", "tool": "notify_parent",
                 "sessions": 1, "calls": n + WARMUP, "elapsed_s": elapsed,
                 "server_cpu_s": s1 - s0, "client_cpu_s": c1 - c0,
                 "latency": summarize(lat)})  # fmt: skip
    per = settings.scale(100, 5)
    console.log(f"notify: throughput, 16 raw clients (threads) x {per} team_status")
    lat, cost = _raw_cheap(server, "team_status", {}, 16, per)
    rows.append({"case": "team_status, 16 raw clients (no SDK)", "tool": "team_status",
                 "sessions": 16, "calls": 16 * per, **cost, "latency": summarize(lat)})  # fmt: skip
    return rows


def run(settings: Settings, console: Console) -> dict[str, Any]:
    """Start the server and the lead's drain, measure, verify every notify landed once."""
    with exomonad_server(settings, workers=WORKERS) as server:
        TaskStore(server.paths).create("benchmark task", "read by task_get")
        inbox = server.paths.inbox("team-lead")
        drained_out, stop = server.root / "drained.jsonl", server.root / "drain.stop"
        drain = peers.drain(inbox, "prune", 1000, drained_out, stop, wait=True)
        try:
            peers.start_together([drain])
            measured = anyio.run(_measure, settings, server, console)
            measured["rows"] += _raw_rows(settings, server, console, measured["ids"])
            stop.touch()
            drain_summary = drain.result(timeout=30)
        finally:
            drain.kill()
        drained = [orjson.loads(line)["entry"] for line in drained_out.read_bytes().splitlines()
                   if line.strip()] if drained_out.exists() else []  # fmt: skip
        remaining = Mailbox(server.paths).read_raw("team-lead")
        health = server.health()
    found = Counter(message_identity(e) for e in [*drained, *remaining])
    ids: list[str] = measured["ids"]
    missing = sum(1 for i in ids if found[i] == 0)
    duplicated = sum(1 for i in ids if found[i] > 1)
    rows: list[dict[str, Any]] = measured["rows"]
    for r in rows:
        r["calls_per_s"] = r["calls"] / r["elapsed_s"]
        r["server_cpu_ms_per_call"] = r["server_cpu_s"] * 1000 / r["calls"]
        r["client_cpu_ms_per_call"] = r["client_cpu_s"] * 1000 / r["calls"]
    return {
        "method": (
            "real `exomonad serve`; MCP SDK ClientSessions over the Unix socket (distinct worker "
            "tokens, one event loop in the benchmark process) or via `exomonad mcp-stdio`; "
            "lead inbox drained like Claude Code 2.1.330 (1 s poll, prune); latency = call → "
            "result; CPU from /proc (server) and getrusage (clients)"
        ),
        "rows": rows,
        "notify_calls": len(ids),
        "missing": missing,
        "close_races": measured["close_races"],
        "duplicated": duplicated,
        "drain": drain_summary,
        "server_counters": health.get("counters", {}),
        "targets": {"notify_p50_ms": TARGET_NOTIFY_P50_MS, "calls_per_s": TARGET_CALLS_PER_S},
    }


def render(data: dict[str, Any], console: Console) -> None:
    """One row per case: latency, throughput and CPU per call."""
    table = Table(title=TITLE, caption=data["method"])
    cols = ("case", "calls", "p50", "p90", "p99", "max", "calls/s", "server CPU/call",
            "client CPU/call", "target")  # fmt: skip
    for col in cols:
        table.add_column(col, justify="right")
    for r in data["rows"]:
        lat = r["latency"]
        target = ""
        if r["tool"] == "notify_parent" and "stdio" not in r["case"]:
            target = verdict(f"p50 < {TARGET_NOTIFY_P50_MS:.0f}", lat["p50"] < TARGET_NOTIFY_P50_MS)
        elif r["tool"] != "notify_parent":
            target = verdict(f"≥ {TARGET_CALLS_PER_S:.0f}/s",
                             r["calls_per_s"] >= TARGET_CALLS_PER_S)  # fmt: skip
        table.add_row(r["case"], str(r["calls"]), fmt_ms(lat["p50"]), fmt_ms(lat["p90"]),
                      fmt_ms(lat["p99"]), fmt_ms(lat["max"]), f"{r['calls_per_s']:.0f}",
                      f"{r['server_cpu_ms_per_call']:.2f} ms",
                      f"{r['client_cpu_ms_per_call']:.2f} ms", target)  # fmt: skip
    console.print(table)
    stdio = next((r for r in data["rows"] if "stdio" in r["case"]), None)
    d = data["drain"]
    console.print(
        f"latencies in ms; {data['notify_calls']} notify_parent entries checked in the lead's "
        f"inbox + drained: {data['missing']} missing, {data['duplicated']} duplicated; drain "
        f"{d['polls']} polls, {d['drained']} entries, {d['lock_failures']} lock failures; "
        f"{data['close_races']} anyio/httpcore2 close races (harmless, counted)"
        + (f"; mcp-stdio session start {stdio['session_open_ms']:.0f} ms" if stdio else "")
    )
