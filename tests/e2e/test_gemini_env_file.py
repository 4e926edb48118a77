"""The real Gemini CLI 0.61 in a tmux pane with a worktree ``.env`` a worker wrote.

Found probing (a fourth round): Gemini loads the workspace's ``.env`` into its
environment at start (never a variable already set), and ``GEMINI_RESTRICTED_MODE=true``
there makes it take the folder for untrusted, where it runs no project hook: the next
session of that worker ran every tool call with no ExoMonad hook at all. ExoMonad now
starts a Gemini worker with :attr:`~exomonad.runtimes.gemini.GeminiCli.TRUSTED_ENV`
(what ``check_gate`` returns), which the ``.env`` cannot override. Both runs here use
the same ``.env`` and a project hook that logs and denies: without that environment the
hook never runs (the harm), with it the hook denies the read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from exomonad.runtimes.gemini import GEMINI
from exomonad.scripted.gemini import ScriptedGemini, function_call_reply
from tests.e2e.gemini_cli import (
    Tmux,
    gemini_install_problem,
    prepare_home,
    start_gemini_in_tmux,
    tmux_install_problem,
)
from tests.e2e.harness import fail_if_missing

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    fail_if_missing(gemini_install_problem, tmux_install_problem)
    with Tmux() as server:
        yield server


def _run(root: Path, tmux: Tmux, env: dict[str, str]) -> tuple[str, list[str]]:
    """Start Gemini in a workspace whose ``.env`` asks for restricted mode; the model
    reads a file. Returns the hook's log and the function responses the model got."""
    home = prepare_home(root)
    ws = home.workspace
    log, hook = root / "hook.log", root / "gate.sh"
    hook.write_text(f'#!/bin/sh\ncat >/dev/null; echo "$2" >> {log}\n'
                    'case "$2" in before-tool) echo \'{"decision": "deny", "reason": '
                    '"gate says no"}\' ;; *) echo \'{}\' ;; esac\n')  # fmt: skip
    hook.chmod(0o755)
    hooks = {event: [{"matcher": "*", "hooks": [{"type": "command", "timeout": 30000,
                                                  "command": f"{hook} hook {name}"}]}]
             for event, name in (("BeforeTool", "before-tool"),
                                 ("SessionStart", "session-start"))}  # fmt: skip
    (ws / ".gemini").mkdir(exist_ok=True)
    (ws / ".gemini" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    (ws / "creds.txt").write_text("s3cret\n")
    (ws / ".env").write_text("GEMINI_RESTRICTED_MODE=true\n")  # what the worker wrote
    read = function_call_reply("read_file", {"file_path": str(ws / "creds.txt")})
    with ScriptedGemini([read, "done"]) as model:
        pane = start_gemini_in_tmux(tmux, home, model.url, yolo=True, extra_env=env,
                                    session=root.name, ready_timeout=60)  # fmt: skip
        pane.type_message("go")
        model.wait_for_request(lambda r: bool(r.function_responses()), timeout=90)
        answers = [json.dumps(f) for r in model.agent_requests() for f in r.function_responses()]
    return (log.read_text() if log.exists() else ""), answers


def test_a_workers_env_file_does_not_turn_the_gate_off(tmp_path: Path, tmux: Tmux) -> None:
    log, answers = _run(tmp_path / "plain", tmux, {})
    assert "before-tool" not in log  # the harm: no hook ran at all
    assert any("s3cret" in a for a in answers)
    env = GEMINI.check_gate(tmp_path, consent=False)
    log, answers = _run(tmp_path / "exomonad", tmux, env)
    assert "before-tool" in log  # the model got its answer after the hook gave it
    assert not any("s3cret" in a for a in answers)
    assert any("gate says no" in a for a in answers)
