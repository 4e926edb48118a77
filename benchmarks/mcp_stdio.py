"""``exomonad mcp-stdio`` session start: what every agent session waits for.

Claude Code (the lead, ``--role tl``), Gemini CLI and Codex CLI (workers, with
``EXOMONAD_TOKEN``) each start ``exomonad mcp-stdio`` as their MCP server and wait for
its ``initialize`` answer before the session is usable. Measured with the official SDK
client (``stdio_client`` + ``ClientSession``) against a real ``exomonad serve``, per
session: process start → ``initialize`` answered, → first ``tools/list`` answered, and
the stdin close → process exit. The installed console script is run, as the agents'
MCP configs name it. The lead's variant (``--role tl``, no token) reads ``lead.token``
and walks its parents; not being below Claude Code here, it connects as a guest.
Variants are interleaved so load drift hits all alike; then 16 sessions start at once (a
team starting). For reference: ``notify_parent`` calls through one proxied session (the
proxy's per-call cost, next to ``notify``'s direct sessions).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from rich.console import Console
from rich.table import Table

from benchmarks._common import Settings, fmt_ms, summarize
from benchmarks._live import ExoServer, exomonad_server, verdict

NAME = "mcp_stdio"
TITLE = "`exomonad mcp-stdio` session start (the agent's MCP server) against a running server"

TARGET_START_MS = 150.0
WORKERS = [f"worker-{k:02d}" for k in range(16)]
WORKER_TOOLS = 7  # what a worker's token lists (checked: the session is the worker's)


@dataclass(frozen=True)
class Variant:
    """One way an agent starts its MCP server."""

    name: str
    params: StdioServerParameters
    tools: int | None  # tools the session must list (None: whatever its role gets)


def _params(server: ExoServer, role: str, token: str | None) -> StdioServerParameters:
    env = dict(server.env)
    if token is not None:
        env["EXOMONAD_TOKEN"] = token
    script = str(Path(sys.executable).parent / "exomonad")
    return StdioServerParameters(command=script, args=["mcp-stdio", "--role", role], env=env,
                                 cwd=server.state.parent)  # fmt: skip


def _variants(server: ExoServer) -> list[Variant]:
    return [
        Variant("worker (EXOMONAD_TOKEN)", _params(server, "worker", server.workers[WORKERS[0]]),
                WORKER_TOOLS),
        Variant("lead (--role tl, no token)", _params(server, "tl", None), None),
    ]  # fmt: skip


async def _session(params: StdioServerParameters, tools: int | None,
                   body: Callable[[ClientSession], Awaitable[None]] | None = None,
                   ) -> dict[str, float]:  # fmt: skip
    """One session: ms to ``initialize`` answered, to ``tools/list`` answered, to exit."""
    t0 = time.perf_counter()
    async with AsyncExitStack() as stack:
        read, write = await stack.enter_async_context(stdio_client(params))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        t_init = time.perf_counter()
        listed = await session.list_tools()
        t_list = time.perf_counter()
        if tools is not None and len(listed.tools) != tools:
            raise RuntimeError(f"listed {len(listed.tools)} tools, expected {tools}")
        if body is not None:
            await body(session)
        t_close = time.perf_counter()
    t_exit = time.perf_counter()
    return {"initialize": (t_init - t0) * 1000, "tools_list": (t_list - t0) * 1000,
            "close": (t_exit - t_close) * 1000}  # fmt: skip


async def _together(server: ExoServer) -> list[dict[str, float]]:
    results: list[dict[str, float]] = []

    async def one(k: int) -> None:
        params = _params(server, "worker", server.workers[WORKERS[k]])
        results.append(await _session(params, WORKER_TOOLS))

    async with anyio.create_task_group() as tg:
        for k in range(len(WORKERS)):
            tg.start_soon(one, k)
    return results


async def _calls(server: ExoServer, n: int) -> list[float]:
    lat: list[float] = []

    async def body(session: ClientSession) -> None:
        for i in range(-5, n):
            t0 = time.perf_counter()
            res = await session.call_tool("notify_parent", {"status": "success",
                                                            "message": f"bench {i}"})  # fmt: skip
            if res.is_error:
                raise RuntimeError(f"notify_parent failed: {res.content}")
            if i >= 0:
                lat.append((time.perf_counter() - t0) * 1000)

    await _session(_params(server, "worker", server.workers[WORKERS[1]]), WORKER_TOOLS, body)
    return lat


def run(settings: Settings, console: Console) -> dict[str, Any]:
    """Sequential starts (interleaved variants), 16 at once, calls through one session."""
    rounds = settings.scale(30, 3)
    together = settings.scale(3, 1)
    calls = settings.scale(200, 10)
    rows: list[dict[str, Any]] = []
    with exomonad_server(settings, workers=WORKERS) as server:
        variants = _variants(server)
        for v in variants:  # warm the page cache and .pyc files, untimed
            anyio.run(_session, v.params, v.tools)
        console.log(f"mcp_stdio: {rounds} rounds of {len(variants)} variants, sequential")
        seq: dict[str, list[dict[str, float]]] = {v.name: [] for v in variants}
        for _ in range(rounds):
            for v in variants:
                seq[v.name].append(anyio.run(_session, v.params, v.tools))
        for v in variants:
            rows.append(_row(v.name, "sequential", seq[v.name]))
        console.log(f"mcp_stdio: {together} x {len(WORKERS)} worker sessions starting at once")
        many: list[dict[str, float]] = []
        for _ in range(together):
            many += anyio.run(_together, server)
        rows.append(_row("worker (EXOMONAD_TOKEN)", f"{len(WORKERS)} at once", many))
        console.log(f"mcp_stdio: {calls} notify_parent through one session")
        lat = anyio.run(_calls, server, calls)
    return {
        "method": (
            "official MCP SDK client (stdio_client + ClientSession) starting the installed "
            "console script `exomonad mcp-stdio` against a real `exomonad serve`; times from "
            "process start; close = stdin closed → process exited"
        ),
        "rows": rows,
        "calls": {"tool": "notify_parent", "latency": summarize(lat)},
        "target_start_ms": TARGET_START_MS,
    }


def _row(case: str, mode: str, runs: list[dict[str, float]]) -> dict[str, Any]:
    stats = {k: summarize([r[k] for r in runs]) for k in ("initialize", "tools_list", "close")}
    return {"case": case, "mode": mode, "runs": len(runs), **stats}


def render(data: dict[str, Any], console: Console) -> None:
    """One row per (variant, mode): initialize, first tools/list, close."""
    table = Table(title=TITLE, caption=data["method"])
    for col in ("session", "mode", "runs", "initialize p50", "p99", "tools/list p50", "p99",
                "close p50", "target"):  # fmt: skip
        table.add_column(col, justify="right")
    for r in data["rows"]:
        init, listed, close = r["initialize"], r["tools_list"], r["close"]
        ok = listed["p50"] < data["target_start_ms"]
        table.add_row(r["case"], r["mode"], str(r["runs"]), fmt_ms(init["p50"]),
                      fmt_ms(init["p99"]), fmt_ms(listed["p50"]), fmt_ms(listed["p99"]),
                      fmt_ms(close["p50"]),
                      verdict(f"tools/list p50 < {data['target_start_ms']:.0f}", ok))  # fmt: skip
    console.print(table)
    lat = data["calls"]["latency"]
    console.print(
        f"times in ms; {lat['n']} {data['calls']['tool']} calls through one mcp-stdio session: "
        f"p50 {fmt_ms(lat['p50'])}, p99 {fmt_ms(lat['p99'])}"
    )
