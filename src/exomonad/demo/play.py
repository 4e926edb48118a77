"""The demo's scene, hop by hop, on a :class:`~exomonad.demo.stage.Stage`.

``exomonad up`` starts the server and the lead (the real Claude Code 2.1.330 in tmux).
The person's prompts are typed into the lead's pane; the lead spawns each worker with
its ``Agent`` tool, Claude Code runs ``exomonad-teammate`` in a pane it splits, and the
server gives the teammate its own worktree and token. Every hop is read off what the
parts record themselves: the model servers' request and answer logs, the server's audit
log (``.exomonad/audit.jsonl``: every tool call it judged), the lead's inbox and the
worktrees on disk. Nothing here answers for a part that did not act.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.markup import escape

from exomonad.client import ServerClient
from exomonad.clis.claude import BLOCKING_DIALOGS, is_ready_screen
from exomonad.demo.script import CODEX, LEAD, PUSH, WORKERS, Worker
from exomonad.demo.stage import Models, Stage
from exomonad.demo.timeline import Timeline
from exomonad.errors import ExomonadError
from exomonad.panes import TmuxBackend
from exomonad.scripted.anthropic import RecordedRequest as LeadRequest
from exomonad.scripted.base import RecordedRequestBase, ScriptedServer
from exomonad.teams import Mailbox, TeamPaths
from exomonad.util.probe import Probe
from exomonad.util.waiting import retry_until

__all__ = ["Scene", "play"]

AnyModel = ScriptedServer[Any, Any, Any]
#: A model's call of notify_parent in its answer (Gemini names it mcp_exo_notify_parent).
NOTIFY = re.compile(r'"name":\s*"(mcp_exo_)?notify_parent"')


@dataclass
class Scene:
    """The running parts the hops are read from."""

    stage: Stage
    models: Models
    timeline: Timeline
    probe: Probe
    console: Console
    timeout: float  # for each hop
    lead_pane: str = ""
    team: str = ""

    def model_of(self, worker: Worker) -> AnyModel:
        return self.models.codex if worker.runtime == "codex" else self.models.gemini

    def audit(self) -> list[dict[str, Any]]:
        """The server's decisions so far (``audit.jsonl``)."""
        try:
            lines = (self.stage.state / "audit.jsonl").read_bytes().splitlines()
        except OSError:
            return []
        out = []
        for line in lines:
            try:
                entry = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue  # a line being written
            if isinstance(entry, dict):
                out.append(entry)
        return out

    def audited(self, match: Callable[[dict[str, Any]], bool]) -> Callable[[float], float]:
        """A hop finder: when the server judged the first call ``match`` accepts (its
        audit time, moved onto the monotonic clock)."""
        offset = time.monotonic() - time.time()
        found: list[dict[str, Any]] = []

        def find(timeout: float) -> float:
            def seen() -> bool:
                found[:] = [e for e in self.audit() if match(e)][:1]
                return bool(found)

            retry_until(seen, timeout=timeout, interval=0.05, message="not in the audit log")
            return float(found[0]["ts"]) + offset

        return find


def _agent_use_id(req: LeadRequest, name: str) -> str | None:
    """The id of the lead's ``Agent`` call that spawned ``name``, if in this request."""
    for block in req.tool_uses():
        tool_input = block.get("input")
        named = isinstance(tool_input, dict) and tool_input.get("name") == name
        if named and block.get("name") == "Agent":
            return str(block.get("id"))
    return None


def _reported(inbox: Mailbox, name: str) -> Callable[[], bool]:
    """Whether the lead's inbox holds ``name``'s notify_parent (2.1.330 prunes an entry
    once it has read it: the probe catches it in between)."""
    mark = f"[from: {name}]"
    return lambda: any(
        e.get("from") == name and str(e.get("text", "")).startswith(mark)
        for e in inbox.read_raw(LEAD)
    )


def _team(client: ServerClient) -> str:
    """The team the server serves now ("" while it cannot say)."""
    try:
        return str(client.health().get("team") or "")
    except ExomonadError:
        return ""


def start(scene: Scene) -> None:
    """``exomonad up`` with the lead; Claude Code's prompt; the server adopts its team."""
    stage = scene.stage
    done = stage.exo(
        "up", "--tmux-socket", stage.socket, "--lead", shlex.quote(stage.lead_command), "--json"
    )
    if done.returncode != 0:
        raise ExomonadError(f"exomonad up failed: {done.stderr.strip()}")
    scene.timeline.record("lead", "exomonad up: server healthy, lead started", time.monotonic())
    tmux = TmuxBackend(stage.socket)
    path = Path(tmux.run("display-message", "-p", "#{socket_path}").strip())
    stage.socket_path = path if path.name == stage.socket else None
    scene.lead_pane = tmux.run(
        "list-panes", "-t", f"={stage.session}:lead", "-F", "#{pane_id}"
    ).split()[0]

    def ready(timeout: float) -> float:
        def shown() -> bool:
            screen = tmux.capture(scene.lead_pane)
            for marker, hint in BLOCKING_DIALOGS.items():
                if marker in screen:
                    raise ExomonadError(f"Claude Code shows a dialog: {hint}")
            return is_ready_screen(screen)

        retry_until(shown, timeout=timeout, interval=0.1, message="no prompt")
        return time.monotonic()

    scene.timeline.wait("lead", "Claude Code 2.1.330 shows its prompt", ready, scene.timeout)
    client = ServerClient(stage.state, timeout=5)

    def adopted(timeout: float) -> float:
        retry_until(
            lambda: _team(client).startswith("session-"),
            timeout=timeout,
            interval=0.05,
            message="no session team",
        )
        return time.monotonic()

    scene.timeline.wait("lead", "the server adopts its session team", adopted, scene.timeout)
    scene.team = _team(client)
    inbox = Mailbox(TeamPaths(scene.team, stage.claude.config_dir))
    for w in WORKERS:
        tree = stage.project / ".worktrees" / w.name / ".git"
        scene.probe.watch(f"{w.name} worktree", tree.exists)
        scene.probe.watch(f"{w.name} report", _reported(inbox, w.name))


def spawn(scene: Scene, worker: Worker) -> None:
    """The person asks the lead for ``worker``: Agent → teammate → task at its model."""
    tl, lead, model = scene.timeline, scene.models.lead, scene.model_of(worker)
    chain = worker.name
    since = lead.next_index
    TmuxBackend(scene.stage.socket).deliver(scene.lead_pane, worker.prompt)
    tl.record(chain, "the person's prompt typed into the lead", time.monotonic())

    def agent(timeout: float) -> float:
        req = lead.wait_for_request(
            lambda r: r.is_agent_turn and _agent_use_id(r, worker.name) is not None,
            timeout,
            since=since,
        )
        use_id = _agent_use_id(req, worker.name) or ""
        return lead.wait_for_answer(lambda a: use_id in a.body, timeout).sent_at

    tl.wait(chain, f"lead's model: Agent(name={worker.name})", agent, scene.timeout)
    tl.wait(
        chain,
        f"teammate spawned, in its worktree .worktrees/{worker.name}",
        lambda t: scene.probe.at(f"{worker.name} worktree", t),
        scene.timeout,
    )

    def task(timeout: float) -> float:
        typed = f"[from {LEAD}]"
        req = model.wait_for_request(lambda r: r.is_agent_turn and r.mentions(typed), timeout)
        return float(req.received_at)

    tl.wait(chain, f"its task reaches {worker.model}'s model", task, scene.timeout)
    try:  # the next prompt is typed once the lead's turn is over
        lead.wait_for_answer(lambda a: "end_turn" in a.body, scene.timeout, since=since)
    except TimeoutError as exc:
        raise ExomonadError(f"the lead's turn did not end after spawning {worker.name}") from exc


def push(scene: Scene, worker: Worker = CODEX) -> None:
    """``worker``'s model runs the forced push: denied, the reason back at its model."""
    tl, model, chain = scene.timeline, scene.model_of(worker), f"{worker.name} push"
    answered: list[int] = []

    def asked(timeout: float) -> float:
        answer = model.wait_for_answer(lambda a: PUSH in a.body, timeout)
        answered.append(answer.index)
        return answer.sent_at

    tl.wait(chain, f"{worker.model}'s model: `{PUSH}`", asked, scene.timeout)

    def denial(e: dict[str, Any]) -> bool:
        pushes = [a for a in e.get("actions") or [] if a.get("type") == "GitPush"]
        return e.get("agent") == worker.name and e.get("decision") == "deny" and bool(pushes)

    tl.wait(chain, "ExoMonad's policy denies it", scene.audited(denial), scene.timeout)
    reason = str(next(e for e in scene.audit() if denial(e)).get("reason", ""))

    def back(timeout: float) -> float:
        req: RecordedRequestBase = model.wait_for_request(
            lambda r: r.is_agent_turn and reason in r.body_text(), timeout, since=answered[0] + 1
        )
        return req.received_at

    tl.wait(chain, f"the reason reaches {worker.model}'s model", back, scene.timeout)
    scene.console.print(f"policy: [bold]{escape(reason)}[/bold]")
    now = scene.stage.git("rev-parse", "main", cwd=scene.stage.remote)
    if now != scene.stage.origin_main:
        raise ExomonadError(f"origin's main moved: {scene.stage.origin_main[:8]} → {now[:8]}")
    tl.record(chain, f"origin's main unmoved ({now[:8]})", time.monotonic())


def report(scene: Scene, worker: Worker) -> None:
    """``worker``'s notify_parent → the lead's inbox → the lead's next model request."""
    tl, chain = scene.timeline, f"{worker.name} report"
    model = scene.model_of(worker)
    tl.wait(
        chain,
        f"{worker.model}'s model: notify_parent",
        lambda t: model.wait_for_answer(lambda a: NOTIFY.search(a.body) is not None, t).sent_at,
        scene.timeout,
    )
    tl.wait(
        chain,
        "ExoMonad's server runs notify_parent",
        scene.audited(
            lambda e: (
                e.get("agent") == worker.name
                and e.get("tool") == "notify_parent"
                and e.get("runtime") == "mcp"
            )
        ),
        scene.timeout,
    )
    tl.wait(
        chain,
        "in the lead's inbox (under Claude Code's lock)",
        lambda t: scene.probe.at(f"{worker.name} report", t),
        scene.timeout,
    )
    seen: list[str] = []

    def lead_reads(timeout: float) -> float:
        req = scene.models.lead.wait_for_teammate_message(
            worker.name, f"[from: {worker.name}]", timeout
        )
        mark = f"[from: {worker.name}]"
        seen[:] = [m.text for m in req.teammate_messages() if m.text.startswith(mark)]
        return req.received_at

    tl.wait(chain, "the lead's next model request carries it", lead_reads, scene.timeout)
    scene.console.print(f"{worker.name} → lead: [bold]{escape(seen[-1][:200])}[/bold]")


def play(scene: Scene) -> None:
    """The whole scene; raises :class:`~exomonad.demo.timeline.MissingHop` at the first
    hop that does not happen."""
    start(scene)
    for worker in WORKERS:
        spawn(scene, worker)
    push(scene)
    for worker in WORKERS:
        report(scene, worker)
