"""Throughput: several writer processes appending to one inbox at once.

Every writer sends ``count`` messages back to back (no pause), all released at the same
moment; the wall time runs from that moment to the last writer's exit. Python writers
are ``tests/interop/py_writer.py`` (``Mailbox.send``, durable, member check on: what the
server does); Node writers are ``writer.js`` as Claude Code (no fsync), half in each
style. Afterwards the inbox must hold every message a writer reported as written,
exactly once. A Node lock failure is a message Claude Code would have dropped after its
~655 ms of retries.

Scenarios: ``4 py + 4 node`` (the mixed case); ``8 node``, Claude Code against itself,
the baseline for how often proper-lockfile's budget runs out at that load; and the mixed
case paced, a 100 ms pause after each message, writers' phases spread evenly over the
period (about 70 messages/s in all, far above a real team's rate), where the lock is
busy only part of the time and a drop means trouble.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table
from tests.interop import peers
from tests.interop.peers import Peer, Style

from benchmarks._common import Settings, fmt_ms, summarize, team_dir
from exomonad.teams import read_json_array

NAME = "throughput"
TITLE = "Throughput, concurrent writer processes on one inbox"


@dataclass(frozen=True)
class Scenario:
    """How many writers of each kind."""

    name: str
    py: int
    node: int
    delay_ms: float = 0
    count: int = 100  # messages per writer


SCENARIOS = (
    Scenario("4 py + 4 node", 4, 4),
    Scenario("8 node (baseline)", 0, 8),
    Scenario("4 py + 4 node, paced", 4, 4, delay_ms=100, count=50),
)
STYLES: tuple[Style, Style] = ("2.1.112", "2.1.330")


def _run_once(settings: Settings, sc: Scenario, count: int) -> dict[str, Any]:
    with team_dir(settings) as paths:
        inbox = paths.inbox("team-lead")
        writers: list[tuple[str, str, Peer]] = []
        n = sc.node + sc.py
        for k in range(sc.node):
            name, style, offset = f"node-{k}", STYLES[k % 2], k * sc.delay_ms / n
            peer = peers.node_writer(
                inbox, name, count, style, wait=True, delay_ms=sc.delay_ms, offset_ms=offset
            )
            writers.append(("node", name, peer))
        for k in range(sc.py):
            name, offset = f"py-{k}", (sc.node + k) * sc.delay_ms / n
            peer = peers.py_writer(
                paths.root, paths.team, "team-lead", name, count, "2.1.330",
                wait=True, delay_ms=sc.delay_ms, offset_ms=offset,
            )  # fmt: skip
            writers.append(("py", name, peer))
        try:
            peers.start_together(p for _, _, p in writers)
            t0 = time.perf_counter()
            summaries = [(kind, name, p.result(timeout=120)) for kind, name, p in writers]
            elapsed = time.perf_counter() - t0
        finally:
            for _, _, p in writers:
                p.kill()
        expected: Counter[str] = Counter()
        lat: dict[str, list[float]] = {"py": [], "node": []}
        node_failures = py_failures = 0
        for kind, name, s in summaries:
            skip = set(s["failed"])
            expected.update(f"{name}#{i}" for i in range(count) if i not in skip)
            lat[kind] += [float(x) for x in s["latencies_ms"]]
            if kind == "node":
                node_failures += int(s["lock_failures"])
            else:
                py_failures += int(s["failures"])
        found = Counter(str(e.get("text")) for e in read_json_array(inbox))
        written = sum(expected.values())
        return {
            "elapsed_s": elapsed,
            "written": written,
            "msgs_per_s": written / elapsed,
            "node_lock_failures": node_failures,
            "python_failures": py_failures,
            "all_present_once": found == expected,
            "latency_py": summarize(lat["py"]) if lat["py"] else None,
            "latency_node": summarize(lat["node"]) if lat["node"] else None,
        }


def run(settings: Settings, console: Console) -> dict[str, Any]:
    """Run every scenario ``rounds`` times."""
    rounds = settings.scale(2, 1)
    rows = []
    for sc in SCENARIOS:
        count = settings.scale(sc.count, 15)
        for r in range(rounds):
            console.log(f"throughput: {sc.name}, {count} msgs each, round {r + 1}/{rounds}")
            rows.append({"scenario": sc.name, "round": r + 1, "per_writer": count,
                         **_run_once(settings, sc, count)})  # fmt: skip
    return {
        "method": (
            "writers released together, back to back unless paced; wall time from release "
            "to last exit; Python durable with member check, Node as Claude Code (no fsync)"
        ),
        "rows": rows,
    }


def render(data: dict[str, Any], console: Console) -> None:
    """One row per scenario round."""
    table = Table(title=TITLE, caption=data["method"])
    cols = ("scenario", "round", "per writer", "msgs", "secs", "msgs/s", "node drops",
            "py fails", "all once", "py p50/p99/max", "node p50/p99/max")  # fmt: skip
    for col in cols:
        table.add_column(col, justify="right")

    def lat(s: dict[str, Any] | None) -> str:
        return "-" if s is None else "/".join(fmt_ms(s[k]) for k in ("p50", "p99", "max"))

    for r in data["rows"]:
        table.add_row(
            r["scenario"],
            str(r["round"]),
            str(r["per_writer"]),
            str(r["written"]),
            f"{r['elapsed_s']:.2f}",
            f"{r['msgs_per_s']:.0f}",
            str(r["node_lock_failures"]),
            str(r["python_failures"]),
            "yes" if r["all_present_once"] else "[bold red]NO[/]",
            lat(r["latency_py"]),
            lat(r["latency_node"]),
        )
    console.print(table)
    console.print("latencies in ms; 'node drops' = messages Claude Code would have lost")
