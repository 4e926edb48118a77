"""Process ancestry, read off real processes: who is the lead's, who is an agent's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from exomonad import hookclient
from exomonad.ancestry import Proc, agent_session, claude_lead_ancestor, other_agent, reason_in
from exomonad.util.waiting import retry_until

PROBE = ("import json, sys; from exomonad.ancestry import agent_session, claude_lead_ancestor;"
         " print(json.dumps([agent_session(), claude_lead_ancestor()]))")  # fmt: skip


def _probe(parent: str, *args: str, env: dict[str, str] | None = None) -> list[str | None]:
    """Run the probe below a bash whose argv is `parent args...` (`exec -a`)."""
    inner = f"{sys.executable} -c '{PROBE}'; exit $?"
    wrapped = f'exec -a {parent} bash -c "{inner}" {" ".join(args)}'
    done = subprocess.run(["bash", "-c", wrapped], capture_output=True, text=True, check=True,
                          env={**os.environ, **(env or {})})  # fmt: skip
    result: list[str | None] = json.loads(done.stdout)
    return result


def test_a_plain_process_is_no_agent_and_not_the_lead() -> None:
    assert agent_session() is None  # the test runner
    assert claude_lead_ancestor() == "no Claude Code lead among its parents"


def test_below_the_lead_claude_is_the_lead() -> None:
    inside, not_lead = _probe("claude", "--permission-mode", "default")
    assert inside is not None  # an agent's session (a person's approval is refused there)
    assert not_lead is None  # but the lead's own: its MCP server and hooks are the lead


@pytest.mark.parametrize(
    ("parent", "args", "env", "why"),
    [
        ("claude", ("--agent-id", "w@t"), {}, "is an agent (claude)"),  # a Claude teammate
        ("gemini", (), {}, "is an agent (gemini)"),
        ("codex", (), {}, "is an agent (codex)"),
        ("bash", (), {"EXOMONAD_TOKEN": "exo_x"}, "runs with EXOMONAD_TOKEN"),
    ],
)
def test_agents_are_recognised(parent: str, args: tuple[str, ...], env: dict[str, str],
                               why: str) -> None:  # fmt: skip
    inside, not_lead = _probe(parent, *args, env=env)
    assert inside is not None
    assert why in inside
    assert not_lead is not None
    assert why in not_lead


def test_node_scripts_of_agents_are_recognised() -> None:
    chain = [Proc(5, "node", ("node", "/x/node_modules/@google/gemini-cli/dist/index.js"), {})]
    assert reason_in(chain) == "pid 5 is an agent (gemini-cli)"
    lead = [Proc(6, "node", ("node", "/x/node_modules/@anthropic-ai/claude-code/cli.js"), {})]
    assert reason_in(lead, allow_lead=True) is None


def test_a_tokenless_claude_hook_is_the_lead_only_below_the_lead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Measured (issue 10): a Claude Code hook with no EXOMONAD_TOKEN was judged as the
    lead, whoever ran it. Now the lead's token is sent only from the lead's session."""
    (tmp_path / "lead.token").write_text("exo_lead\n")
    monkeypatch.delenv("EXOMONAD_TOKEN", raising=False)
    assert hookclient._token(str(tmp_path), "claude") is None  # the test runner: no lead
    monkeypatch.setattr("exomonad.ancestry.claude_lead_ancestor", lambda pid=None: None)
    assert hookclient._token(str(tmp_path), "claude") == "exo_lead"
    assert hookclient._token(str(tmp_path), "gemini") is None  # never for Gemini


def test_other_agent_judges_a_process_by_its_parents_and_the_lead_token() -> None:
    """What the server asks of the process holding the lead's token (SO_PEERCRED)."""
    sleeper = subprocess.Popen(["bash", "-c", "exec -a gemini sleep 30"])
    plain = subprocess.Popen(["sleep", "30"], env={**os.environ, "EXOMONAD_TOKEN": "exo_lead"})
    marked = subprocess.Popen(["sleep", "30"], env={**os.environ, "EXOMONAD_TOKEN": "exo_w1"})
    try:
        assert other_agent(os.getpid()) is None  # a person's process (the test runner)
        retry_until(lambda: Path(f"/proc/{sleeper.pid}/cmdline").read_bytes().startswith(
            b"gemini"), timeout=30, message="bash exec'd `gemini`")  # fmt: skip
        assert other_agent(sleeper.pid) == f"pid {sleeper.pid} is an agent (gemini)"
        # A process just exec'd can show an empty environ for a moment (seen once in a
        # fresh-clone run): wait until both children's are there.
        retry_until(lambda: all(b"EXOMONAD_TOKEN=" in Path(f"/proc/{p.pid}/environ").read_bytes()
                                for p in (plain, marked)),
                    timeout=30, message="the children's environments")  # fmt: skip
        assert other_agent(plain.pid, "exo_lead") is None  # the lead's token: the lead's
        assert "EXOMONAD_TOKEN" in (other_agent(plain.pid) or "")
        assert "EXOMONAD_TOKEN" in (other_agent(marked.pid, "exo_lead") or "")
    finally:
        for proc in (sleeper, plain, marked):
            proc.kill()
            proc.wait()
    assert other_agent(sleeper.pid) is not None  # gone: cannot tell, so not the lead
    assert other_agent(0) is not None
