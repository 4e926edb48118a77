"""The real Gemini CLI 0.61's ``glob`` expands braces into paths above its workspace.

Found trying the gate as a worker: ``glob {"pattern": "{../..,x}/.exomonad/*"}`` listed
the state dir two levels up (``lead.token``, ``tokens.json``, ``approvals.db``: their
names, sizes aside), allowed as a listing of the worktree, while ``../../.exomonad/*``
was refused. Here the listing happens for real, and the policy's verdict on that exact
input is now the refusal ``../../.exomonad/*`` gets.
"""

from __future__ import annotations

import json
from pathlib import Path

from exomonad.policy.decisions import Deny
from exomonad.scripted.gemini import ScriptedGemini, function_call_reply
from tests.e2e.gemini_cli import Tmux, start_gemini_in_tmux
from tests.e2e.test_gemini_shell_wrapper import _hooked, pytestmark, tmux
from tests.policy.worker import decide

__all__ = ["pytestmark", "tmux"]


def test_a_brace_pattern_lists_the_state_dir_and_is_refused(tmp_path: Path, tmux: Tmux) -> None:
    home = _hooked(tmp_path / "g")  # its workspace: tmp_path/g/workspace
    state = tmp_path / ".exomonad"  # two levels up, as the project's is from a worktree
    state.mkdir()
    (state / "lead.token").write_text("t0k3n\n")
    args = {"pattern": "{../..,x}/.exomonad/*"}
    with ScriptedGemini([function_call_reply("glob", args), "done"]) as model:
        pane = start_gemini_in_tmux(tmux, home, model.url, yolo=True, session="glob",
                                    ready_timeout=60)  # fmt: skip
        pane.type_message("go")
        model.wait_for_request(lambda r: bool(r.function_responses()), timeout=90)
        answers = [json.dumps(f) for r in model.agent_requests() for f in r.function_responses()]
    assert any(str(state / "lead.token") in a for a in answers), answers  # the harm
    [seen] = [json.loads(line) for line in (home.root / "hook.log").read_text().splitlines()
              if line.strip()]  # fmt: skip
    assert (seen["tool_name"], seen["tool_input"]) == ("glob", args)

    verdict = decide("glob", seen["tool_input"], runtime="gemini")
    assert isinstance(verdict, Deny), verdict
    plain = decide("glob", {"pattern": "src/**/*.{py,md}"}, runtime="gemini")
    assert not isinstance(plain, Deny), plain
