"""Real Claude Code 2.1.330: a ``cd`` into a directory holding a planted ``.exomonad/``
does not change who judges its next tool call.

Claude Code's hook input ``cwd`` (and its hook process's working directory) follow a
``cd`` below the project; ``$CLAUDE_PROJECT_DIR`` stays where the session started. A
tokenless Claude Code (the lead started by hand, or a Claude teammate, which gets no
``EXOMONAD_DIR`` unless ``exomonad up`` made its tmux session) runs the committed hook
command (the console script ``exomonad hook pre-tool-use``). The scripted model runs
``cd sub``, where a ``.exomonad/`` with its own permissive ``exomonad serve`` was planted,
then ``git push origin HEAD:main``. The project's real server judges the push (a human's
call, unanswered: denied), the planted server is never asked, and the bare remote's
``main`` does not move.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from exomonad.scripted.anthropic import ReplySpec, ScriptedClaude, tool_reply
from exomonad.teams import TeamPaths, create_team
from tests.e2e.claude_cli import CLAUDE_330, prepare_home, start_headless
from tests.e2e.harness import fail_if_missing
from tests.support.git import GIT_ENV, git, make_repo
from tests.support.tmux import TmuxServer
from tests.test_statedir_live import CONFIG, PLANTED_POLICY, audit, serve

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

STEP = 60.0
PUSH = "git push origin HEAD:main"


def test_cd_into_a_planted_state_dir_does_not_move_the_judge(
    tmp_path: Path, tmux_server: TmuxServer
) -> None:
    fail_if_missing(CLAUDE_330.install_problem)
    hook = f"{Path(sys.executable).parent / 'exomonad'} hook pre-tool-use --runtime claude"
    command = {"type": "command", "command": hook, "timeout": 60}
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [command]}]}
    home = prepare_home(tmp_path, settings={"hooks": hooks})
    remote = tmp_path / "remote.git"
    project = make_repo(home.workspace, remote=remote)
    git(project, "commit", "-q", "--allow-empty", "-m", "not for main")
    main = git(remote, "rev-parse", "main").strip()
    state = project / ".exomonad"
    state.mkdir()
    (state / "config.toml").write_text(CONFIG)
    create_team(TeamPaths("proj", home.config_dir))
    planted = project / "sub" / ".exomonad"  # what the agent's code made
    planted.mkdir(parents=True)
    (planted / "policy.py").write_text(PLANTED_POLICY)
    (planted / "config.toml").write_text(CONFIG)
    fake_claude = tmp_path / "fake-claude"
    create_team(TeamPaths("mine", fake_claude))
    servers = [serve(state, home.config_dir, tmux_server, tmp_path / "serve.log"),
               serve(planted, fake_claude, tmux_server, tmp_path / "fake.log")]  # fmt: skip
    script: list[ReplySpec] = [
        tool_reply("Bash", {"command": "cd sub && pwd", "description": "cd"}),
        tool_reply("Bash", {"command": PUSH, "description": "push"}),
        "done",
    ]
    env = {"PYTHONPATH": os.environ.get("PYTHONPATH", ""), **GIT_ENV,
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}  # fmt: skip
    try:
        with ScriptedClaude(script) as model, start_headless(
            CLAUDE_330, home, model.url, prompt="push it", extra_env=env
        ) as run:  # fmt: skip
            assert run.wait(STEP * 2) == 0, run.stderr_tail()
            results = [(n, t) for r in model.agent_requests() for n, t in r.newest_tool_results()]
    finally:
        for s in servers:
            s.stop()
    assert len(results) == 2, results
    assert results[0][1].strip().endswith("/sub"), results  # the cd took effect
    assert "asks: git push origin main" in results[1][1], results  # the real server's words
    assert git(remote, "rev-parse", "main").strip() == main  # main never moved
    judged = [e for e in audit(state) if "GitPush" in json.dumps(e.get("actions"))]
    assert judged, audit(state)
    assert all(e["decision"] != "allow" for e in judged), judged
    assert audit(planted) == []  # the planted server was never asked
