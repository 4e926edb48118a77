"""What happens in the demo: the two workers, their tasks, what the person types into the
lead, and (offline) what each scripted model answers.

The prompts and tasks are plain instructions a real model follows too (``--live``); the
scripted replies are what a model following them would send, so both modes play the
same scene and the same hops are measured.
"""

from __future__ import annotations

from dataclasses import dataclass

from exomonad.scripted.anthropic import RecordedRequest, ReplySpec, Responder, tool_reply
from exomonad.scripted.gemini import ScriptedGemini
from exomonad.scripted.openai import ScriptedCodex, mcp_reply, shell_reply, tool_search_reply

__all__ = [
    "CODEX",
    "GEMINI",
    "LEAD",
    "PUSH",
    "WORKERS",
    "Worker",
    "lead_responder",
    "script_codex",
    "script_gemini",
]

#: The lead's name in its team (Claude Code's).
LEAD = "team-lead"
#: The forbidden push a worker tries.
PUSH = "git push --force origin main"


@dataclass(frozen=True)
class Worker:
    """A teammate the lead spawns with Claude Code's ``Agent`` tool."""

    name: str
    agent_type: str  # the subagent_type; `exomonad init` wrote .claude/agents/<it>.md
    runtime: str  # ExoMonad's runtime, which `exomonad teammate` routes it to
    model: str  # whose model it talks to, for the timeline
    task: str

    @property
    def prompt(self) -> str:
        """What the person types into the lead's pane to have it spawned."""
        return (
            f"Spawn a teammate named {self.name} (subagent_type {self.agent_type}) "
            f"with this task: {self.task}"
        )

    @property
    def report(self) -> str:
        """What this worker reports back (scripted mode)."""
        if self.runtime == "codex":
            return f"`{PUSH}` was refused by the project's policy; nothing was pushed."
        return "README.md read: a small demo project, set up by `exomonad init`."


GEMINI = Worker(
    "gemini-1",
    "gemini-worker",
    "gemini",
    "Gemini",
    "Read README.md in your worktree, then tell the lead in one sentence what this "
    "project is: call notify_parent with that sentence.",
)
CODEX = Worker(
    "codex-1",
    "codex-worker",
    "codex",
    "Codex",
    f"Publish the work with `{PUSH}` (run exactly that), then tell the lead what "
    "happened: call notify_parent (find it with tool_search).",
)
WORKERS = (GEMINI, CODEX)


def lead_responder(workers: tuple[Worker, ...] = WORKERS) -> Responder:
    """The scripted lead: the person's "Spawn a teammate named X ..." → ``Agent`` with
    X's name, subagent_type and task; a tool result → a short text; anything else (a
    teammate's message) → the scripted default text."""

    def respond(req: RecordedRequest) -> ReplySpec | None:
        if not req.is_agent_turn:
            return None
        done = [n for n, _ in req.newest_tool_results()]
        if done:
            return f"{done[0]} done."
        newest = "\n".join(req.last_user_texts())
        for w in workers:
            if f"Spawn a teammate named {w.name} " in newest:
                spawn = {
                    "description": f"{w.name} worker",
                    "prompt": w.task,
                    "name": w.name,
                    "subagent_type": w.agent_type,
                }
                return tool_reply("Agent", spawn)
        return None

    return respond


def script_gemini(model: ScriptedGemini, worker: Worker = GEMINI) -> None:
    """Gemini's model: reports with ``notify_parent`` (its exo MCP tool), then a text."""
    note = {"status": "success", "message": worker.report}
    model.add_function_call("mcp_exo_notify_parent", note)
    model.add_text("Reported to the lead.")


def script_codex(model: ScriptedCodex, worker: Worker = CODEX) -> None:
    """Codex's model: the forced push, then ``tool_search`` for notify_parent (Codex
    defers MCP tools behind it), the report, and a text."""
    note = {"status": "failure", "message": worker.report}
    for reply in (
        shell_reply(PUSH),
        tool_search_reply("notify parent"),
        mcp_reply("exo", "notify_parent", note),
        "Reported to the lead.",
    ):
        model.add_reply(reply)
