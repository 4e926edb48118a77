"""Real-client round trips: a Claude Code 2.1.330 lead and a Gemini CLI 0.61.0 worker.

Both models are scripted (the e2e tests' model servers, :mod:`exomonad.scripted`);
everything else is real: ``exomonad init``, ``exomonad serve``, Claude Code in tmux,
``Agent(subagent_type="gemini-worker")`` → ``exomonad-teammate`` → Gemini CLI on the
teammate's pty, Gemini's ``exo`` MCP server (``exomonad mcp-stdio``) and hooks.

The lead spawns the worker with ``round 0``; the worker's model answers every ``round k``
it is given with ``notify_parent("round k done")``; the lead's model answers each such
``<teammate-message>`` with ``SendMessage("round k+1")``, for N rounds. Per round:

* **lead → worker**: the lead's model reply carrying ``SendMessage`` → the worker's
  model request carrying the message; split at the entry's appearance in the worker's
  inbox (before it: Claude Code running the tool; after it: ExoMonad's teammate typing
  into Gemini, Gemini submitting);
* **worker → lead**: the worker's model reply carrying ``notify_parent`` → the lead's
  next model request carrying the ``<teammate-message>``; split at the entry's
  appearance in the lead's inbox (before it: Gemini calling the tool through
  ``mcp-stdio`` and the server's verified append; after it: Claude Code's own inbox poll,
  once a second, and its turn).

Inbox appearances are polled every 20 ms (``exomonad.util.probe.Probe``); model
requests are timed where the scripted servers receive them. Round 0 (the spawn) is left
out of the figures.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from tests.e2e.claude_cli import CLAUDE_330, tmux_install_problem
from tests.e2e.claude_team import (
    LEAD,
    READY,
    STEP,
    has_text,
    last_tool,
    open_project,
    start_lead,
)
from tests.e2e.gemini_cli import gemini_install_problem
from tests.e2e.gemini_cli import prepare_home as prepare_gemini_home

from benchmarks._common import Settings, fmt_ms, summarize
from benchmarks._live import temp_root
from exomonad.clis.launchers import write_gemini_launcher
from exomonad.scripted.anthropic import RecordedRequest, ReplySpec, ScriptedClaude, tool_reply
from exomonad.scripted.gemini import Part, ScriptedGemini, function_call_reply, text_reply
from exomonad.scripted.gemini import RecordedRequest as GeminiRequest
from exomonad.util.probe import Probe

NAME = "roundtrip"
TITLE = "Round trips through real clients: Claude Code 2.1.330 lead ↔ Gemini CLI worker"

WORKER = "gemini-1"
_DONE = re.compile(r"round (\d+) done")


class LeadModel:
    """The lead's model: ``spawn`` → Agent(round 0); a worker's ``round k done`` →
    SendMessage(round k+1) until ``rounds``; a tool result → a short text."""

    def __init__(self, tag: str, rounds: int) -> None:
        self.tag, self.rounds = tag, rounds
        self.sent: dict[int, float] = {}  # round → when the reply carrying it was made
        self.back: dict[int, RecordedRequest] = {}  # round → request carrying its report

    def __call__(self, req: RecordedRequest) -> ReplySpec | None:
        if not req.is_agent_turn:
            return None
        last = "\n".join(req.last_user_texts())
        fresh = [int(k) for k in _DONE.findall(last) if int(k) not in self.back]
        if fresh and self.tag in last:
            return self._next_round(req, max(fresh))
        names = [n for n, _ in req.newest_tool_results()]
        if names:
            return f"{names[0]} done {self.tag}"
        if f"spawn {WORKER} {self.tag}" in last:
            self.sent[0] = time.monotonic()
            return tool_reply("Agent", {"description": "gemini worker", "name": WORKER,
                                        "prompt": f"round 0 {self.tag}",
                                        "subagent_type": "gemini-worker"})  # fmt: skip
        return None

    def _next_round(self, req: RecordedRequest, k: int) -> ReplySpec:
        self.back[k] = req
        if k >= self.rounds:
            return f"all rounds done {self.tag}"
        self.sent[k + 1] = time.monotonic()
        return tool_reply("SendMessage", {"to": WORKER, "summary": f"round {k + 1}",
                                          "message": f"round {k + 1} {self.tag}"})  # fmt: skip


class WorkerModel(ScriptedGemini):
    """The worker's model: ``round k`` → notify_parent("round k done"); its result → a
    short text."""

    def __init__(self, tag: str) -> None:
        super().__init__()
        self.tag = tag
        self.asked: dict[int, GeminiRequest] = {}  # round → request carrying the message
        self.notified: dict[int, float] = {}  # round → when the notify reply was made

    def _next_parts(self, req: GeminiRequest) -> list[Part]:
        if not req.has_tools:
            return super()._next_parts(req)
        newest = req.contents[-1].get("parts") if req.contents else None
        if any(isinstance(p, dict) and "functionResponse" in p for p in newest or []):
            return text_reply(f"reported {self.tag}")  # the tool's result: the turn ends
        found = re.findall(rf"round (\d+) {self.tag}", "\n".join(req.last_user_texts()))
        fresh = [int(k) for k in found if int(k) not in self.asked]
        if not fresh:
            return text_reply(f"nothing to do {self.tag}")
        k = max(fresh)
        self.asked[k] = req
        self.notified[k] = time.monotonic()
        note = {"status": "success", "message": f"round {k} done {self.tag}"}
        return function_call_reply("mcp_exo_notify_parent", note)


def _check_installed() -> None:
    for check in (CLAUDE_330.install_problem, gemini_install_problem, tmux_install_problem):
        problem = check()
        if problem:
            raise RuntimeError(problem)


def _rounds(console: Console, root: Path, rounds: int) -> dict[str, Any]:
    tag = os.urandom(4).hex()
    lead_model, worker_model = LeadModel(tag, rounds), WorkerModel(tag)
    with (
        open_project(root) as p,
        ScriptedClaude(responder=lead_model) as model,
        worker_model,
        Probe() as probe,
    ):
        launcher = write_gemini_launcher(prepare_gemini_home(root / "gem"), worker_model.url,
                                         p.bin_dir)  # fmt: skip
        p.configure('[lead]\npoll_grace = 20.0\n\n[[teammate.routes]]\nagent_type = "gemini*"\n'
                    f'runtime = "gemini"\ncommand = {json.dumps(str(launcher))}\n')  # fmt: skip
        p.start_server()
        lead = start_lead(p, model, probe)
        for k in range(rounds + 1):
            probe.watch(f"in worker inbox {k}", has_text(lead.paths.inbox(WORKER),
                                                         f"round {k} {tag}"))  # fmt: skip
            probe.watch(f"in lead inbox {k}", has_text(lead.paths.inbox(LEAD),
                                                       f"round {k} done {tag}"))  # fmt: skip
        console.log(f"roundtrip: lead up (team {lead.team}); spawning {WORKER}, {rounds} rounds")
        lead.pane.type_message(f"spawn {WORKER} {tag}")
        model.wait_for_request(last_tool("Agent"), STEP)
        model.wait_for_teammate_message(WORKER, f"round {rounds} done {tag}",
                                        READY + STEP * rounds)  # fmt: skip
        counters = p.status()["counters"]
    return {"lead": lead_model, "worker": worker_model, "seen": dict(probe.seen),
            "counters": counters}  # fmt: skip


def _hops(run: dict[str, Any], rounds: int) -> dict[str, list[float]]:
    lead_model: LeadModel = run["lead"]
    worker_model: WorkerModel = run["worker"]
    seen: dict[str, float] = run["seen"]
    hops: dict[str, list[float]] = {k: [] for k in (
        "send_to_request", "send_to_inbox", "inbox_to_request",
        "notify_to_request", "notify_to_inbox", "inbox_to_lead")}  # fmt: skip
    for k in range(1, rounds + 1):
        sent, asked = lead_model.sent[k], worker_model.asked[k].received_at
        notified, back = worker_model.notified[k], lead_model.back[k].received_at
        hops["send_to_request"].append(asked - sent)
        hops["notify_to_request"].append(back - notified)
        if f"in worker inbox {k}" in seen:  # an entry typed and pruned within 20 ms
            hops["send_to_inbox"].append(seen[f"in worker inbox {k}"] - sent)
            hops["inbox_to_request"].append(asked - seen[f"in worker inbox {k}"])
        if f"in lead inbox {k}" in seen:
            hops["notify_to_inbox"].append(seen[f"in lead inbox {k}"] - notified)
            hops["inbox_to_lead"].append(back - seen[f"in lead inbox {k}"])
    return {k: [v * 1000 for v in vs] for k, vs in hops.items()}


def run(settings: Settings, console: Console) -> dict[str, Any]:
    """Start the team, run the rounds, split each hop."""
    _check_installed()
    rounds = settings.scale(20, 3)
    with temp_root(settings, prefix="exomonad-roundtrip-") as root:
        result = _rounds(console, root, rounds)
    hops = _hops(result, rounds)
    kept = ("tool:notify_parent", "lead_pane_fallback", "delivered")
    return {
        "method": (
            "real Claude Code 2.1.330 lead (tmux) and Gemini CLI 0.61.0 worker (exomonad-teammate"
            "), scripted models; times from the scripted model servers (replies made, requests "
            "received) and inbox entries first seen (polled every 20 ms); rounds 1..N"
        ),
        "rounds": rounds,
        "hops": {k: {**summarize(v), "min": min(v, default=float("nan"))} for k, v in hops.items()},
        "counters": {k: v for k, v in result["counters"].items() if k in kept},
    }


_ROWS = [
    ("send_to_request", "lead's SendMessage → worker's model request", ""),
    ("send_to_inbox", "  Claude Code runs SendMessage (→ worker inbox)", "Claude Code"),
    ("inbox_to_request", "  ExoMonad teammate types it, Gemini submits", "ExoMonad + Gemini"),
    ("notify_to_request", "worker's notify_parent → lead's next model request", ""),
    ("notify_to_inbox", "  Gemini → mcp-stdio → server → lead inbox", "Gemini + ExoMonad"),
    ("inbox_to_lead", "  Claude Code's 1 s inbox poll and turn", "Claude Code"),
]


def render(data: dict[str, Any], console: Console) -> None:
    """One row per hop and its parts: median, p99, min, max, share of the whole."""
    table = Table(title=TITLE, caption=data["method"])
    for col in ("hop", "whose", "n", "p50", "p99", "min", "max", "share of p50"):
        table.add_column(col, justify="right")
    hops = data["hops"]
    for key, label, whose in _ROWS:
        h = hops[key]
        whole = hops["send_to_request" if key.startswith(("send", "inbox_to_r")) else
                     "notify_to_request"]["p50"]  # fmt: skip
        share = f"{100 * h['p50'] / whole:.0f} %" if whose and whole else ""
        table.add_row(label, whose, str(h["n"]), fmt_ms(h["p50"]), fmt_ms(h["p99"]),
                      fmt_ms(h["min"]), fmt_ms(h["max"]), share)  # fmt: skip
    console.print(table)
    console.print(f"times in ms; {data['rounds']} rounds; server counters {data['counters']}")
