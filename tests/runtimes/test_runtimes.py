"""The runtime contract: Claude Code and Gemini CLI through it, and a new runtime added
with one module and one registration (here a toy one, registered for the test)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest

from exomonad import hookclient, runtimes
from exomonad.errors import UnknownRuntimeError
from exomonad.policy import Deny, ToolRequest
from exomonad.policy.actions import GitPush, ReadFile, Unknown
from exomonad.policy.classify import classify
from exomonad.policy.hook_output import hook_output
from exomonad.runtimes.base import Runtime, hook_command, set_hooks
from exomonad.server.config import TeammateConfig, WorkersConfig
from exomonad.setup import ProjectFiles, init_project
from tests.support.git import make_repo


class Toy(Runtime):
    """A runtime with hooks of its own shape and two tools."""

    name = "toy"
    title = "Toy CLI"
    program = "toy"
    npm_package = "toy-cli"
    worker_command = "toy --auto"
    settings_file = ".toy/settings.json"
    events: ClassVar[Mapping[str, str]] = {"before": "pre-tool-use", "done": "stop"}
    tools: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "sh": ("shell", "cmd"),
        "cat": ("read", "file"),
    }

    def decision_output(self, kind: str, reason: str) -> dict[str, Any]:
        return {"verdict": kind, "why": reason}

    def configure(
        self, files: ProjectFiles, exo: str, approval_timeout: float, teammate: str
    ) -> None:
        hooks = files.json(".toy/settings.json").setdefault("hooks", {})
        for event, ours in (("Before", "before"), ("Done", "done")):
            set_hooks(hooks, event, None, hook_command(exo, ours, self, approval_timeout), 60)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Toy:
    runtime = Toy()
    monkeypatch.setitem(runtimes.RUNTIMES, "toy", runtime)  # the one registration
    return runtime


def test_registry() -> None:
    assert runtimes.names() == ("claude", "gemini", "codex", "terminal")
    assert runtimes.get("gemini") is runtimes.GEMINI
    assert runtimes.get("command") is runtimes.TERMINAL  # its older name
    assert [r.name for r in runtimes.RUNTIMES.values() if not r.gated] == ["terminal"]
    assert [r.name for r in runtimes.RUNTIMES.values() if r.gate_probe] == ["codex"]
    with pytest.raises(UnknownRuntimeError, match="unknown runtime 'nope'"):
        runtimes.get("nope")
    assert runtimes.CLAUDE.can_lead
    assert not runtimes.GEMINI.can_lead
    assert runtimes.CLAUDE.shell_tool() == "Bash"
    assert runtimes.GEMINI.shell_tool() == "run_shell_command"
    assert all(
        spec[0] in runtimes.base.TOOL_KINDS
        for r in runtimes.RUNTIMES.values()
        for spec in r.tools.values()
    )


def test_a_new_runtime_is_a_module_and_a_registration(toy: Toy, tmp_path: Path) -> None:
    # The classifier reads its tools...
    push = ToolRequest("toy", "dev", "d", "sh", {"cmd": "git push -f origin main"}, cwd="/w")
    assert classify(push) == [
        GitPush(remote="origin", branch="main", force=True, lease=False, repo="/w")
    ]
    assert classify(ToolRequest("toy", "dev", "d", "cat", {"file": "x"}, cwd="/w")) == [
        ReadFile("/w/x")
    ]
    assert isinstance(classify(ToolRequest("toy", "dev", "d", "rm", {}))[0], Unknown)
    # ...its hook answers take its shape, in the server and in the hook client...
    assert hook_output("toy", Deny("no")) == {"verdict": "deny", "why": "no"}
    assert hookclient.decision_output("toy", "ask", "why") == {"verdict": "ask", "why": "why"}
    assert hookclient._parse_args(["before", "--runtime", "toy"])[1] == "toy"
    assert hookclient._gates("before", "toy")
    assert not hookclient._gates("done", "toy")
    # ...and `init` writes its settings next to the others'.
    root = make_repo(tmp_path / "p")
    init_project(root)
    toy_settings = json.loads((root / ".toy" / "settings.json").read_text())
    [before] = toy_settings["hooks"]["Before"]
    assert before["hooks"][0]["command"] == "exomonad hook before --runtime toy --timeout 70"
    assert (root / ".gemini" / "settings.json").exists()
    # ...`exomonad teammate` routes its agent type and names to it, `spawn_workers`
    # knows its command and program.
    teammate = TeammateConfig()
    assert teammate.route("toy-worker", "x").runtime == "toy"
    assert teammate.route(None, "toy-2").runtime == "toy"
    assert teammate.route("general-purpose", "x").runtime == "claude"
    workers = WorkersConfig()
    assert workers.runtime_of("toy --auto --fast") == "toy"
    assert workers.command_for("toy") == "toy --auto"


def test_an_unknown_runtime_still_gets_a_closed_gate() -> None:
    """A hook for a runtime nobody registered: its gating events deny in Claude Code's
    shape (never a crash, never an allow)."""
    assert hookclient._gates("pre-tool-use", "nosuch")
    assert "hookSpecificOutput" in hookclient.decision_output("nosuch", "deny", "x")
