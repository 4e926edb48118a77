"""Watcher CPU: 50 synthetic members, each receiving an idle notification every 2 s.

The watcher runs alone in its own process (``benchmarks/_watch_proc.py``): a real
:class:`InboxWatcher` (inotify, SQLite ledger, 2.1.330 prune, its default options) serving
50 synthetic members. Its sink is :class:`FakePaneBackend`, in-memory panes running the
real delivery algorithm, so this measures the watcher (events, passes, ledger, inbox
rewrites), **not** tmux (see ``watch_latency`` for the pane side).

A separate writer process (``benchmarks/_idle_writer.py``, so its CPU is not counted)
sends every member an ``idle_notification`` (``protocol.encode``, ``Mailbox.send``,
non-durable like Claude Code) once per 2 s period, the members' slots spread evenly
(25 messages/s in all). The watcher's CPU is user + system time from
``/proc/<pid>/stat``, over the whole writing window plus the tail until every message
was delivered, as a percentage of one core; also per 2 s window, and first with no
traffic at all (idle). A second, shorter run with ``mark_read=False`` (a diagnostic, not a
usable setting: the inboxes are never pruned) shows what marking read costs.
"""

from __future__ import annotations

import itertools
import sys
import threading
import time
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table
from tests.interop.peers import Peer

from benchmarks._common import Settings, fmt_ms, summarize, team_dir
from benchmarks._live import cpu_seconds, cpu_times, verdict
from exomonad.teams import register_synthetic
from exomonad.util.waiting import retry_until

NAME = "watch_cpu"
TITLE = "Watcher CPU: 50 members, an idle notification each every 2 s (FakePaneBackend sink)"

HERE = Path(__file__).resolve().parent
MEMBERS = 50
PERIOD_S = 2.0
TARGET_PCT = 5.0


class _Watcher:
    """The watcher process: ``stats`` on request, final stats when stdin closes."""

    def __init__(self, argv: list[str]) -> None:
        self.peer = Peer(argv, waits=True)

    @property
    def pid(self) -> int:
        return self.peer.proc.pid

    def stats(self) -> dict[str, Any]:
        stdin = self.peer.proc.stdin
        assert stdin is not None
        stdin.write(b"stats\n")
        stdin.flush()
        doc: dict[str, Any] = orjson.loads(self.peer.read_line(10))
        return doc

    def finish(self) -> dict[str, Any]:
        assert self.peer.proc.stdin is not None
        self.peer.proc.stdin.close()
        self.peer.proc.stdin = None
        return self.peer.result(timeout=30)


def _sample(pid: int, every: float, stop: threading.Event, out: list[tuple[float, float]]
            ) -> None:  # fmt: skip
    while not stop.wait(every):  # a sampling tick, not a wait on a condition
        out.append((time.monotonic(), cpu_seconds(pid)))


def _scenario(
    settings: Settings, console: Console, label: str, options: dict[str, Any], cycles: int,
    idle_s: float,
) -> dict[str, Any]:  # fmt: skip
    members = [f"gemini-{k:02d}" for k in range(MEMBERS)]
    with team_dir(settings) as paths:
        for m in members:
            register_synthetic(paths, m, pane=f"fake:{m}")
        root, team = str(paths.root), paths.team
        ledger = str(paths.root / "ledger.db")
        watcher = _Watcher([sys.executable, str(HERE / "_watch_proc.py"), root, team, ledger,
                            orjson.dumps(options).decode(), *members])  # fmt: skip
        writer: Peer | None = None
        try:
            watcher.peer.wait_ready(30)
            # The initial scan: one pass per member (empty inboxes).
            retry_until(lambda: watcher.stats()["passes"] >= MEMBERS, timeout=30, interval=0.05)
            idle_pct = None
            if idle_s:
                console.log(f"watch cpu: idle for {idle_s:g} s")
                c0, t0 = cpu_seconds(watcher.pid), time.monotonic()
                time.sleep(idle_s)  # the idle measurement window
                idle_pct = (cpu_seconds(watcher.pid) - c0) / (time.monotonic() - t0) * 100
            console.log(f"watch cpu: {MEMBERS} members x {cycles} idle notifications, {label}")
            writer = Peer([sys.executable, str(HERE / "_idle_writer.py"), root, team,
                           str(PERIOD_S), str(cycles), *members], waits=True)  # fmt: skip
            writer.wait_ready(30)
            samples: list[tuple[float, float]] = []
            stop = threading.Event()
            sampler = threading.Thread(target=_sample, args=(watcher.pid, PERIOD_S, stop, samples))
            (ua, sa), ta = cpu_times(watcher.pid), time.monotonic()
            samples.append((ta, ua + sa))
            sampler.start()
            writer.go()
            summary = writer.result(timeout=cycles * PERIOD_S + 60)
            sent = int(summary["sent"])
            retry_until(lambda: watcher.stats()["delivered"] >= sent, timeout=30, interval=0.05,
                        message="the watcher did not deliver every message")  # fmt: skip
            (ub, sb), tb = cpu_times(watcher.pid), time.monotonic()
            stop.set()
            sampler.join()
            final = watcher.finish()
        finally:
            for p in (writer, watcher.peer):
                if p is not None:
                    p.kill()
    windows = [
        (c2 - c1) / (t2 - t1) * 100
        for (t1, c1), (t2, c2) in itertools.pairwise(samples)
        if t2 - t1 > 0.5
    ]
    busy_s = (ub - ua) + (sb - sa)
    return {
        "watcher": label,
        "options": options,
        "messages": sent,
        "late_sends": summary["late"],
        "rate_per_s": sent / (tb - ta),
        "window_s": tb - ta,
        "idle_cpu_pct": idle_pct,
        "cpu_s": busy_s,
        "user_s": ub - ua,
        "system_s": sb - sa,
        "cpu_pct": busy_s / (tb - ta) * 100,
        "cpu_pct_windows": summarize(windows) if windows else None,
        "cpu_ms_per_message": busy_s * 1000 / sent,
        "passes": final["passes"],
        "delivered": final["delivered"],
        "failed_passes": final["failed_passes"],
        "submitted": final["submitted"],
        "latency_ms": summarize([float(x) for x in final["latencies_ms"]]),
        "writer_send_ms": summarize([float(x) for x in summary["send_ms"]]),
    }


def run(settings: Settings, console: Console) -> dict[str, Any]:
    """The server's configuration for ~30 s, after an idle window; then a short
    diagnostic run that never marks entries read: what the mark-read rewrite, and the
    pass its own rename wakes, cost."""
    rows = [
        _scenario(settings, console, "server defaults", {}, settings.scale(15, 3),
                  settings.scale(3, 1)),
        _scenario(settings, console, "mark_read=False *", {"mark_read": False},
                  settings.scale(5, 2), 0),
    ]  # fmt: skip
    return {
        "method": (
            "watcher alone in its own process, FakePaneBackend sink (in-memory panes, the real "
            "delivery algorithm: measures the watcher, not tmux); writer in another process, "
            f"{MEMBERS} members x 1 idle_notification per {PERIOD_S:g} s, slots spread evenly; "
            "CPU = utime + stime from /proc, % of one core, from the first send until all "
            "were delivered"
        ),
        "members": MEMBERS,
        "period_s": PERIOD_S,
        "target_pct": TARGET_PCT,
        "rows": rows,
    }


def render(data: dict[str, Any], console: Console) -> None:
    """One row per scenario."""
    table = Table(title=TITLE, caption=data["method"])
    cols = ("watcher", "msgs", "msgs/s", "idle", "CPU", "target", "2 s windows p50/max",
            "CPU/msg", "passes/deliv.", "write→deliver p50/p99/max")  # fmt: skip
    for col in cols:
        table.add_column(col, justify="right")
    for r in data["rows"]:
        w, lat = r["cpu_pct_windows"], r["latency_ms"]
        table.add_row(
            r["watcher"],
            str(r["messages"]),
            f"{r['rate_per_s']:.1f}",
            "-" if r["idle_cpu_pct"] is None else f"{r['idle_cpu_pct']:.2f} %",
            f"{r['cpu_pct']:.2f} %",
            verdict(f"< {TARGET_PCT:.0f} %", r["cpu_pct"] < TARGET_PCT),
            "-" if w is None else f"{w['p50']:.1f} / {w['max']:.1f} %",
            f"{r['cpu_ms_per_message']:.2f} ms",
            f"{r['passes']}/{r['delivered']}",
            "/".join(fmt_ms(lat[k]) for k in ("p50", "p99", "max")),
        )
    console.print(table)
    console.print(
        "latency in ms: entry timestamp (writer, ms resolution) → the pass starts typing it; "
        "passes include the initial scan (one per member); * diagnostic, not a server setting"
    )
