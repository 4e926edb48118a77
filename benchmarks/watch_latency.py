"""Watch latency: inbox write → text in a real tmux pane → Enter confirmed.

The real path of a lead → worker message: an :class:`InboxWatcher` (real inotify, a
:class:`SqliteLedger`, the default 2 ms debounce, the default 2.1.330 dialect, so every
delivered entry is pruned) serves one synthetic member bound to a pane of a private tmux
server; the pane runs ``tests/support/reader.py``, which echoes what it reads (so the
backend's echo wait sees a change) and records wall-clock times per line. The sink is
the real :class:`TmuxBackend` (paste-buffer typing), wrapped to keep each
:class:`DeliveryReceipt`. The watcher runs on a thread of the benchmark process.

Writers:

* Python: ``Mailbox(durable=False).send`` from the benchmark process, closed loop: send,
  wait until the receipt for it exists, pause 20-50 ms (random), send the next, so every
  message is its own delivery. Origin: just *before* ``send`` (so the times include the
  write itself; its median is shown as ``send``).
* Node: ``writer.js`` in 2.1.330 style (Claude Code's own write), open loop with a fixed
  pause longer than one delivery. Origin: the entry's ``timestamp`` (taken by Node right
  before the write, ms resolution).

Per message, from the origin: ``detect`` (the pass called ``deliver``: inotify, debounce,
inbox read, ledger), ``typed`` (tmux accepted the text: :attr:`DeliveryReceipt.typed_at`,
the *text-in-pane* figure the targets apply to), ``in app`` (the reader read the first
character), ``submitted`` (Enter confirmed: ``submitted_at``) and ``line`` (the reader got
the Enter). ``submitted`` includes the echo wait and the deliberate enter delay
(``EXOMONAD_ENTER_DELAY``, default 0.12 s, pacing for Ink TUIs), so it is shown with the
delay at 0 and at its default.
"""

from __future__ import annotations

import random
import re
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table
from tests.interop import peers

from benchmarks._common import Settings, fmt_ms, summarize, team_dir
from benchmarks._live import Tmux, tmux_server, verdict
from benchmarks._watching import RecordingSink, watching
from exomonad.bridge.ledger import SqliteLedger
from exomonad.bridge.render import render as render_entry
from exomonad.bridge.watcher import InboxWatcher
from exomonad.panes import DEFAULT_ENTER_DELAY, TmuxBackend
from exomonad.teams import Mailbox, TeamPaths, register_synthetic
from exomonad.util.waiting import retry_until

NAME = "watch_latency"
TITLE = "Watch latency: inbox write → text in a tmux pane (InboxWatcher + TmuxBackend)"

READER = Path(__file__).parents[1] / "tests" / "support" / "reader.py"
MEMBER = "gemini-1"
TARGET_P50_MS, TARGET_P99_MS = 30.0, 100.0
WARMUP = 5
GAP_S = (0.020, 0.050)  # pause between closed-loop messages
METRICS = ("send", "detect", "typed", "in app", "submitted", "line")
_TAG = re.compile(r"(?:py|wu)-\d{4}|nd#\d+")


@dataclass(frozen=True)
class Case:
    """One configuration: writer and enter delay (None: the default)."""

    name: str
    writer: str  # "python" | "node"
    enter_delay: float | None
    full: int
    quick: int


CASES = (
    Case("python writer, enter delay 0", "python", 0.0, 200, 15),
    Case("node writer (Claude Code), enter delay 0", "node", 0.0, 100, 10),
    Case("python writer, enter delay default", "python", None, 100, 10),
)


class _Renderer:
    """The default renderer, remembering each rendered entry's ``timestamp`` by text."""

    def __init__(self) -> None:
        self.stamps: dict[str, str] = {}

    def __call__(self, entry: dict[str, Any]) -> str:
        self.stamps[str(entry.get("text"))] = str(entry.get("timestamp"))
        return render_entry(entry)


def _tag(text: str) -> str | None:
    m = _TAG.search(text)
    return m.group(0) if m else None


def _reader_lines(out: Path) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for raw in out.read_bytes().splitlines():
        rec = orjson.loads(raw)
        tag = _tag(str(rec.get("line", "")))
        if tag is not None:
            found[tag] = rec
    return found


def _send_closed_loop(
    mailbox: Mailbox, sink: RecordingSink, tags: list[str], origins: dict[str, float],
    sends: dict[str, float],
) -> None:  # fmt: skip
    for tag in tags:
        n = sink.count()
        t0 = time.time()
        mailbox.send(MEMBER, sender="team-lead", check_member=False,
                     text=f"{tag}: please look at src/exomonad/teams/mailbox.py")  # fmt: skip
        sends[tag] = (time.time() - t0) * 1000
        origins[tag] = t0
        if not sink.wait_count(n + 1, timeout=15):
            raise RuntimeError(f"message {tag} was not delivered within 15 s")
        time.sleep(random.uniform(*GAP_S))  # pacing between messages, not a wait


def _run_case(settings: Settings, tmux: Tmux, case: Case) -> dict[str, Any]:
    count = settings.scale(case.full, case.quick)
    with team_dir(settings) as paths:
        out = paths.root / "reader.jsonl"
        pane = tmux.new_pane(sys.executable, str(READER), str(out))
        retry_until(lambda: out.exists() and b'"ready"' in out.read_bytes(), timeout=15,
                    message="the reader pane did not start")  # fmt: skip
        register_synthetic(paths, MEMBER, pane=pane)
        backend = TmuxBackend(
            tmux.socket,
            enter_delay=case.enter_delay,
            lock_dir=paths.root / "locks",
            spool_dir=paths.root / "spool",
        )
        sink = RecordingSink(backend)
        ledger = SqliteLedger(paths.root / "ledger.db")
        renderer = _Renderer()
        watcher = InboxWatcher(ledger, sink, root=paths.root, teams=[paths.team],
                               renderer=renderer)  # fmt: skip
        origins: dict[str, float] = {}
        sends: dict[str, float] = {}
        try:
            with watching(watcher):
                mailbox = Mailbox(paths, durable=False)
                _send_closed_loop(mailbox, sink, [f"wu-{i:04d}" for i in range(WARMUP)], {}, {})
                t_start = time.perf_counter()
                if case.writer == "python":
                    tags = [f"py-{i:04d}" for i in range(count)]
                    _send_closed_loop(mailbox, sink, tags, origins, sends)
                else:
                    tags = [f"nd#{i}" for i in range(count)]
                    _node(paths, sink, count)
                    for tag in tags:
                        origins[tag] = _epoch(renderer.stamps[tag])
                elapsed = time.perf_counter() - t_start
                retry_until(lambda: len(_reader_lines(out)) >= WARMUP + count, timeout=15,
                            message="the reader did not receive every line")  # fmt: skip
            stats = watcher.stats
        finally:
            ledger.close()
            tmux.run("kill-pane", "-t", pane)
        lines = _reader_lines(out)
        receipts = {t: r for r in sink.receipts if (t := _tag(r.typed)) is not None}
        series: dict[str, list[float]] = {m: [] for m in METRICS}
        unconfirmed = extra_enters = 0
        for tag in tags:
            t0, r, line = origins[tag], receipts[tag], lines[tag]
            if tag in sends:
                series["send"].append(sends[tag])
            series["detect"].append((r.started_at - t0) * 1000)
            series["typed"].append((r.typed_at - t0) * 1000)
            series["in app"].append((float(line["t_first"]) - t0) * 1000)
            series["line"].append((float(line["t_end"]) - t0) * 1000)
            if r.submitted_at is None:
                unconfirmed += 1
            else:
                series["submitted"].append((r.submitted_at - t0) * 1000)
            extra_enters += r.enter_attempts - 1
    return {
        "case": case.name,
        "writer": case.writer,
        "enter_delay_s": backend.enter_delay,
        "messages": count,
        "elapsed_s": elapsed,
        "unconfirmed": unconfirmed,
        "extra_enters": extra_enters,
        "watcher_passes": stats.passes,
        "watcher_delivered": stats.delivered,
        "metrics": {m: summarize(v) for m, v in series.items() if v},
    }


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def _node(paths: TeamPaths, sink: RecordingSink, count: int) -> None:
    # Open loop: a pause longer than one delivery (~2.5x the warm-up's), so each message
    # is its own delivery.
    durations = sorted(r.duration for r in sink.receipts)
    pause_ms = max(100.0, 2.5 * 1000 * durations[len(durations) // 2])
    before = sink.count()
    writer = peers.node_writer(paths.inbox(MEMBER), "team-lead", count, "2.1.330",
                               delay_ms=pause_ms, prefix="nd")  # fmt: skip
    try:
        summary = writer.result(timeout=count * (pause_ms / 1000 + 1) + 30)
    finally:
        writer.kill()
    if summary["written"] != count:
        raise RuntimeError(f"node writer did not write everything: {summary}")
    if not sink.wait_count(before + count, timeout=30):
        raise RuntimeError("not every node message was delivered")


def run(settings: Settings, console: Console) -> dict[str, Any]:
    """Every case on one private tmux server (a fresh pane, team and ledger each)."""
    cases = []
    with tmux_server() as tmux:
        for case in CASES:
            console.log(f"watch latency: {case.name}")
            cases.append(_run_case(settings, tmux, case))
    return {
        "method": (
            "InboxWatcher (inotify, SQLite ledger, 2.1.330 prune) + TmuxBackend (paste-buffer) "
            "into a pane running a timing reader; python writer closed loop (receipt, then "
            f"{GAP_S[0] * 1000:.0f}-{GAP_S[1] * 1000:.0f} ms pause), node writer open loop; "
            f"{WARMUP} warm-up messages per case; times from the inbox write"
        ),
        "default_enter_delay_s": DEFAULT_ENTER_DELAY,
        "targets_ms": {"typed_p50": TARGET_P50_MS, "typed_p99": TARGET_P99_MS},
        "cases": cases,
    }


def render(data: dict[str, Any], console: Console) -> None:
    """One row per (case, metric)."""
    table = Table(title=TITLE, caption=data["method"])
    for col in ("case", "metric", "n", "p50", "p90", "p99", "max", "target"):
        table.add_column(col, justify="right")
    for c in data["cases"]:
        for k, (metric, s) in enumerate(c["metrics"].items()):
            target = ""
            if metric == "typed":
                p50 = verdict(f"p50 < {TARGET_P50_MS:.0f}", s["p50"] < TARGET_P50_MS)
                p99 = verdict(f"p99 < {TARGET_P99_MS:.0f}", s["p99"] < TARGET_P99_MS)
                target = f"{p50}, {p99}"
            label = c["case"].replace("default", f"default ({c['enter_delay_s']:g} s)")
            label = label if k == 0 else ""
            table.add_row(label, metric, str(s["n"]), fmt_ms(s["p50"]), fmt_ms(s["p90"]),
                          fmt_ms(s["p99"]), fmt_ms(s["max"]), target)  # fmt: skip
        table.add_section()
    console.print(table)
    notes = [
        f"{c['case']}: {c['messages']} msgs in {c['elapsed_s']:.1f} s, "
        f"{c['watcher_passes']} watcher passes for {c['watcher_delivered']} deliveries, "
        f"{c['unconfirmed']} unconfirmed, {c['extra_enters']} extra Enter presses"
        for c in data["cases"]
    ]
    console.print(
        "times in ms from the inbox write: (a) 'typed' = text in the pane (targets), "
        "(b) 'submitted' = Enter confirmed (includes the echo wait and the enter delay)\n"
        + "\n".join(notes)
    )
