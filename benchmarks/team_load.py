"""Performance under a full team (issue 14): 16 sessions at once against one server.

A real ``exomonad serve`` on a temporary project, 16 worker tokens. Each session is a
process of its own (``benchmarks/_mcp_peer.py``: MCP's JSON-RPC over one keep-alive HTTP
connection on the Unix socket, no SDK, so on a 2-core machine the clients' CPU stays
small next to the server's), all released at the same moment, calls back to back.

* ``notify_parent``: every call appends to the lead's inbox (one file for all 16) and
  answers once its entry is verified there. Beside them, in the same run, Claude Code's
  own writers (``writer.js``, one per style, a message every 20 ms each, Claude Code's
  lock settings) append to that inbox, and Claude Code 2.1.330's poller (``drain.js``,
  1 s, prune) empties it. The writers' lock waits and drops (a message Claude Code would
  lose) are what the server must not make worse: the same writers alone, first, are the
  reference. Every message, the sessions' and the writers', must be found exactly once
  in what was drained plus what is left, or the benchmark fails.
* ``team_status`` and ``task_get``: read-only calls.

Server CPU per call from ``/proc``; latency is call → result in the client process.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table
from tests.interop import peers
from tests.interop.peers import Peer, Style

from benchmarks._common import Settings, fmt_ms, summarize
from benchmarks._live import (
    ExoServer,
    cpu_seconds,
    exomonad_server,
    machine_cpu_seconds,
    verdict,
)
from exomonad.teams import Mailbox, message_identity
from exomonad.teams.tasks import TaskStore

NAME = "team_load"
TITLE = "Performance under a full team (issue 14): 16 sessions at once"

PEER = Path(__file__).resolve().parent / "_mcp_peer.py"
WORKERS = [f"worker-{k:02d}" for k in range(16)]
WRITER_PACE_MS = 20.0
STYLES: tuple[Style, Style] = ("2.1.112", "2.1.330")
#: case → (p50 ms, p99 ms, calls/s) targets; None: no target.
TARGETS: dict[str, tuple[float | None, float | None, float | None]] = {
    "notify_parent": (5.0, 20.0, None),
    "team_status": (None, 20.0, 2000.0),
    "task_get": (None, None, 3000.0),
}
NOTIFY: dict[str, Any] = {"status": "success", "message": "?"}
#: (tool, arguments, sessions); the 1-session row is the reference for one append alone.
CASES: tuple[tuple[str, dict[str, Any], int], ...] = (
    ("notify_parent", NOTIFY, 1),
    ("notify_parent", NOTIFY, 16),
    ("team_status", {}, 16),
    ("task_get", {"task_id": "1"}, 16),
)


def _session(server: ExoServer, worker: str, tool: str, args: dict[str, Any], count: int) -> Peer:
    argv = [
        sys.executable,
        str(PEER),
        "--sock",
        str(server.sock),
        "--token",
        server.workers[worker],
        "--tool",
        tool,
        "--args",
        orjson.dumps(args).decode(),
        "--count",
        str(count),
        "--wait",
    ]
    return Peer(argv, waits=True)


@contextmanager
def _reaped(procs: list[Peer]) -> Iterator[list[Peer]]:
    try:
        yield procs
    finally:
        for p in procs:
            p.kill()


def _writers(server: ExoServer, count: int, stop: Path | None, tag: str) -> list[Peer]:
    """Claude Code's inbox writers on the lead's inbox, one per style, paced."""
    inbox = server.paths.inbox("team-lead")
    return [
        peers.node_writer(
            inbox,
            f"claude-{k}",
            count,
            style,
            wait=True,
            delay_ms=WRITER_PACE_MS,
            offset_ms=k * WRITER_PACE_MS / 2,
            prefix=f"claude-{k}-{tag}",
            stop_file=stop,
        )
        for k, style in enumerate(STYLES)
    ]


def _writer_row(case: str, summaries: list[dict[str, Any]], tag: str) -> dict[str, Any]:
    waits = [float(x) for s in summaries for x in s["lock_waits_ms"]]
    texts = [
        f"claude-{k}-{tag}#{i}"
        for k, s in enumerate(summaries)
        for i in range(s["written"] + s["lock_failures"])
        if i not in set(s["failed"])
    ]
    return {
        "case": case,
        "messages": len(waits),
        "drops": sum(s["lock_failures"] for s in summaries),
        "lock_wait": summarize(waits),
        "texts": texts,
    }


def _sessions_row(
    server: ExoServer,
    tool: str,
    args: dict[str, Any],
    n_sessions: int,
    count: int,
    writers: list[Peer],
    stop: Path | None,
) -> tuple[dict[str, Any], list[Any]]:
    """``n_sessions`` sessions (and ``writers``) released together; the sessions' row
    (with the server's group writes meanwhile) and the writers' summaries."""
    sessions = [_session(server, w, tool, args, count) for w in WORKERS[:n_sessions]]
    commits0 = server.health().get("inbox_commits") or {}
    appender = ((server.health().get("services") or {}).get("inbox_appender") or {}).get("pid")
    with _reaped(sessions + writers):
        peers.start_together(writers + sessions, timeout=60)
        s0, m0 = server.cpu_seconds(), machine_cpu_seconds()
        a0 = cpu_seconds(appender) if appender else 0.0
        results = [p.result(timeout=600) for p in sessions]
        s1, m1 = server.cpu_seconds(), machine_cpu_seconds()
        a1 = cpu_seconds(appender) if appender else 0.0
        if stop is not None:
            stop.touch()
        written = [p.result(timeout=60) for p in writers]
    commits1 = server.health().get("inbox_commits") or {}
    lat = [float(x) for r in results for x in r["latencies_ms"]]
    elapsed = max(r["finished"] for r in results) - min(r["started"] for r in results)
    row = {
        "case": tool,
        "sessions": len(sessions),
        "calls": len(lat),
        "calls_per_s": len(lat) / elapsed,
        "latency": summarize(lat),
        "server_cpu_ms_per_call": (s1 - s0) * 1000 / len(lat),
        "client_cpu_ms_per_call": sum(r["cpu_s"] for r in results) * 1000 / len(lat),
        "appender_cpu_ms_per_call": (a1 - a0) * 1000 / len(lat) if appender else None,
        "machine_cpu_ms_per_call": (m1 - m0) * 1000 / len(lat),
        "cores": os.cpu_count() or 1,
        "ids": [i for r in results for i in r["message_ids"]],
        "commits": _delta(commits0, commits1),
    }
    return row, written


def _delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any] | None:
    """Group writes between two ``inbox_commits`` snapshots (None: none, or not reported)."""
    groups = after.get("groups", 0) - before.get("groups", 0)
    if groups <= 0:
        return None
    return {
        "groups": groups,
        "entries": after["entries"] - before["entries"],
        "hold_mean_ms": (after["hold_total_ms"] - before["hold_total_ms"]) / groups,
    }


def _inbox_seen(server: ExoServer, drained_out: Path) -> list[dict[str, Any]]:
    drained = (
        [
            orjson.loads(line)["entry"]
            for line in drained_out.read_bytes().splitlines()
            if line.strip()
        ]
        if drained_out.exists()
        else []
    )
    return [*drained, *Mailbox(server.paths).read_raw("team-lead")]


def _exactly_once(
    entries: list[dict[str, Any]], ids: list[str], texts: list[str]
) -> dict[str, int]:
    by_id = Counter(message_identity(e) for e in entries)
    by_text = Counter(str(e.get("text")) for e in entries)
    counts = [by_id[i] for i in ids] + [by_text[t] for t in texts]
    return {
        "checked": len(counts),
        "missing": counts.count(0),
        "duplicated": sum(1 for c in counts if c > 1),
    }


#: Who writes the server's appends the event loop awaits: the inbox appender process
#: (what ``exomonad serve`` runs), and the server's own group commit thread (before it;
#: ``EXOMONAD_INBOX_APPENDER=thread``), measured in the same run.
WRITERS = {"process": "the appender process", "thread": "the server's thread (before)"}


def run(settings: Settings, console: Console) -> dict[str, Any]:
    """Measure each case on a server with the appender process, then the 16 sessions'
    notify_parent again with the server's own thread writing; check every message."""
    per = settings.scale(150, 8)
    ref_count = settings.scale(100, 10)
    now = _measure(settings, console, CASES, per, ref_count, "process")
    before = _measure(settings, console, CASES[1:2], per, ref_count, "thread")
    return {
        "method": (
            "real `exomonad serve`; 16 client processes (plain JSON-RPC over keep-alive HTTP "
            "on the Unix socket), released together; Claude Code's writers (writer.js, both "
            f"styles, every {WRITER_PACE_MS:.0f} ms) and poller (drain.js, 1 s, prune) on the "
            "lead's inbox; the notify_parent row again with the server's own thread writing"
        ),
        "rows": now["rows"] + before["rows"],
        "writers": now["writers"] + before["writers"][1:],
        "exactly_once": _sum(now["exactly_once"], before["exactly_once"]),
        "drain": _sum(now["drain"], before["drain"], ("polls", "lock_failures")),
        "inbox_commits": now["inbox_commits"],
        "appender": now["appender"],
        "mcp_fast": now["mcp_fast"],
        "targets": {k: list(v) for k, v in TARGETS.items()},
    }


def _sum(a: dict[str, Any], b: dict[str, Any], keys: Iterable[str] | None = None) -> dict[str, int]:
    """The counts of ``a`` and ``b`` added up (``keys``: only those)."""
    return {k: int(a.get(k, 0)) + int(b.get(k, 0)) for k in (keys or a)}


def _measure(
    settings: Settings,
    console: Console,
    cases: tuple[tuple[str, dict[str, Any], int], ...],
    per: int,
    ref_count: int,
    appender: str,
) -> dict[str, Any]:
    """``cases`` against one server whose loop's appends ``appender`` writes, beside
    Claude Code's poller (and its writers during the 16 sessions' notify_parent)."""
    env = {"EXOMONAD_INBOX_APPENDER": appender}
    with exomonad_server(settings, workers=WORKERS, extra_env=env) as server:
        TaskStore(server.paths).create("benchmark task", "read by task_get")
        drained_out, drain_stop = server.root / "drained.jsonl", server.root / "drain.stop"
        drain = peers.drain(
            server.paths.inbox("team-lead"), "prune", 1000, drained_out, drain_stop, wait=True
        )
        with _reaped([drain]):
            peers.start_together([drain])
            console.log(f"team_load ({appender}): Claude Code's writers alone, {ref_count} each")
            ref = _writers(server, ref_count, None, "alone")
            with _reaped(ref):
                peers.start_together(ref)
                ref_row = _writer_row(
                    "Claude Code's writers alone", [p.result() for p in ref], "alone"
                )
            rows: list[dict[str, Any]] = []
            ids: list[str] = []
            beside: dict[str, Any] | None = None
            for tool, args, n in cases:
                console.log(f"team_load ({appender}): {n} session(s) x {per} {tool}")
                beside_them = tool == "notify_parent" and n == len(WORKERS)
                stop = server.root / f"{tool}.stop" if beside_them else None
                writers = _writers(server, 100_000, stop, "beside") if stop else []
                row, written = _sessions_row(server, tool, args, n, per, writers, stop)
                row["writer"] = appender
                ids += row.pop("ids") if tool == "notify_parent" else []
                rows.append(row)
                if written:
                    case = f"... beside 16 notify_parent sessions, {WRITERS[appender]}"
                    beside = _writer_row(case, written, "beside")
            drain_stop.touch()
            drain_summary = drain.result(timeout=30)
        health = server.health()
        seen = _inbox_seen(server, drained_out)
    assert beside is not None, "the notify_parent case ran no writers beside it"
    check = _exactly_once(seen, ids, ref_row.pop("texts") + beside.pop("texts"))
    if check["missing"] or check["duplicated"]:
        raise AssertionError(f"team_load ({appender}): messages not found exactly once: {check}")
    return {
        "rows": rows,
        "writers": [ref_row, beside],
        "exactly_once": check,
        "drain": drain_summary,
        "inbox_commits": health.get("inbox_commits"),
        "appender": (health.get("services") or {}).get("inbox_appender"),
        "mcp_fast": (health.get("counters") or {}).get("mcp_fast", 0),
    }


def _verdicts(row: dict[str, Any]) -> str:
    if row["sessions"] != len(WORKERS) or row.get("writer", "process") != "process":
        return ""
    p50, p99, rate = TARGETS[row["case"]]
    lat, out = row["latency"], []
    if p50 is not None:
        out.append(verdict(f"p50 < {p50:.0f}", lat["p50"] < p50))
    if p99 is not None:
        out.append(verdict(f"p99 < {p99:.0f}", lat["p99"] < p99))
    if rate is not None:
        out.append(verdict(f"≥ {rate:.0f}/s", row["calls_per_s"] >= rate))
    return ", ".join(out)


def _floor_line(row: dict[str, Any]) -> str:
    """Where a 16-session row's CPU goes, and the mean latency it cannot beat: n sessions
    calling back to back have n calls in flight, so their mean latency is n / rate
    (Little's law). The rate is at most cores / the machine's CPU per call on this
    machine, and at most 1 / the server's CPU per call on any: the server's calls run on
    one event loop, one interpreter lock, however many cores there are."""
    n, cpu, cores = row["sessions"], row["machine_cpu_ms_per_call"], row["cores"]
    parts = {"server": row["server_cpu_ms_per_call"], "appender": row["appender_cpu_ms_per_call"],
             "sessions": row["client_cpu_ms_per_call"]}  # fmt: skip
    known = {k: v for k, v in parts.items() if v is not None}
    rest = cpu - sum(known.values())
    split = ", ".join(f"{k} {v:.2f}" for k, v in known.items())
    who = f" ({WRITERS[row['writer']]})" if row["case"] == "notify_parent" else ""
    return (
        f"{row['case']}{who}: the machine's CPU per call {cpu:.2f} ms ({split}, the rest "
        f"{rest:.2f}: other processes, the kernel); mean latency {row['latency']['mean']:.2f} "
        f"ms ({n} / rate: {n * 1000 / row['calls_per_s']:.2f}); at this CPU per call, with "
        f"every core busy all the time, the mean is at least {n} x {cpu:.2f} / {cores} = "
        f"{n * cpu / cores:.2f} ms here, and {n} x {parts['server']:.2f} = "
        f"{n * parts['server']:.2f} ms on any number of cores (the server's one event loop)"
    )


def render(data: dict[str, Any], console: Console) -> None:
    """The issue's table (and one session alone), then Claude Code's writers beside it;
    'lock held' is the server's mean per group write."""
    table = Table(title=TITLE, caption=data["method"])
    for col in (
        "case",
        "calls",
        "p50",
        "p90",
        "p99",
        "max",
        "calls/s",
        "server CPU/call",
        "client CPU/call",
        "appends/write, lock held",
        "target",
    ):
        table.add_column(col, justify="right")
    for r in data["rows"]:
        lat, g = r["latency"], r.get("commits")
        groups = f"{g['entries'] / g['groups']:.1f}, {g['hold_mean_ms']:.2f} ms" if g else ""
        who = f" ({WRITERS[r['writer']]})" if r["case"] == "notify_parent" else ""
        table.add_row(
            f"{r['case']}, {r['sessions']} session{'s' if r['sessions'] > 1 else ''}{who}",
            str(r["calls"]),
            fmt_ms(lat["p50"]),
            fmt_ms(lat["p90"]),
            fmt_ms(lat["p99"]),
            fmt_ms(lat["max"]),
            f"{r['calls_per_s']:.0f}",
            f"{r['server_cpu_ms_per_call']:.2f} ms",
            f"{r['client_cpu_ms_per_call']:.2f} ms" if "client_cpu_ms_per_call" in r else "",
            groups,
            _verdicts(r),
        )
    console.print(table)
    for r in data["rows"]:
        if r["sessions"] == len(WORKERS) and "machine_cpu_ms_per_call" in r:
            console.print(_floor_line(r))
    writers = Table(title="Claude Code's writers on the lead's inbox (lock wait, ms)")
    for col in ("case", "messages", "p50", "p99", "max", "drops"):
        writers.add_column(col, justify="right")
    for w in data["writers"]:
        lat = w["lock_wait"]
        writers.add_row(
            w["case"],
            str(w["messages"]),
            fmt_ms(lat["p50"]),
            fmt_ms(lat["p99"]),
            fmt_ms(lat["max"]),
            str(w["drops"]),
        )
    console.print(writers)
    c, d, g, a = data["exactly_once"], data["drain"], data["inbox_commits"], data.get("appender")
    groups = (
        ""
        if not g
        else (
            f"; server: {g['entries']} appends in {g['groups']} group writes (largest "
            f"{g['largest']}), lock held max {g['hold_max_ms']:.2f} ms"
        )
    )
    console.print(
        f"{c['checked']} messages checked in the lead's inbox + drained: {c['missing']} "
        f"missing, {c['duplicated']} duplicated; drain {d['polls']} polls, "
        f"{d['lock_failures']} lock failures{groups}; "
        f"{data.get('mcp_fast', 0)} MCP requests answered by the fast path"
        + (
            f"; the appender process wrote {a['appended']} appends, the server "
            f"{a['by_the_server']} (before it was ready)"
            if a
            else ""
        )
    )
