"""`exomonad init`: idempotent, merging, never clobbering."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from exomonad.errors import ExomonadError
from exomonad.server.config import load_project_config
from exomonad.setup import init_project

EXO = "/opt/exo/bin/exomonad"


def _json(path: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(path.read_text())
    return data


def test_fresh_repository(tmp_path: Path) -> None:
    report = init_project(tmp_path, exo=EXO)
    assert set(report.files.values()) == {"created"}
    assert load_project_config(tmp_path / ".exomonad").lead.role == "tl"  # template parses
    mcp = _json(tmp_path / ".mcp.json")["mcpServers"]
    assert mcp == {"exomonad": {"type": "stdio", "command": EXO,
                                "args": ["mcp-stdio", "--role", "tl"]}}  # fmt: skip
    claude = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    # One program, no arguments: Claude Code 2.1.330 quotes the value as a single word.
    wrapper = tmp_path / ".exomonad" / "bin" / "exomonad-teammate"
    assert claude["env"]["CLAUDE_CODE_TEAMMATE_COMMAND"] == str(wrapper.resolve())
    assert os.access(wrapper, os.X_OK)
    assert f'exec {EXO} teammate "$@"' in wrapper.read_text()
    assert claude["teammateMode"] == "tmux"
    pre = claude["hooks"]["PreToolUse"][0]
    # The client answers (fail-closed) before Claude Code's time-out lets the call through.
    assert pre["hooks"][0]["command"] == f"{EXO} hook pre-tool-use --runtime claude --timeout 70"
    assert pre["hooks"][0]["timeout"] == 80
    gemini = json.loads((tmp_path / ".gemini" / "settings.json").read_text())
    assert gemini["mcpServers"]["exo"]["args"] == ["mcp-stdio", "--role", "worker"]
    before = gemini["hooks"]["BeforeTool"][0]["hooks"][0]
    assert before["command"] == f"{EXO} hook before-tool --runtime gemini --timeout 70"
    assert before["timeout"] >= 60000  # Gemini hook timeouts are milliseconds
    assert "gemini-worker" in (tmp_path / ".claude/agents/gemini-worker.md").read_text()


def test_second_run_changes_nothing(tmp_path: Path) -> None:
    init_project(tmp_path, exo=EXO)
    again = init_project(tmp_path, exo=EXO)
    assert set(again.files.values()) == {"unchanged"}


def test_user_content_is_kept_and_our_hooks_replaced(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = {"type": "command", "command": "echo mine"}
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(ls)"]},
                                    "hooks": {"Stop": [{"hooks": [mine]}]}}))  # fmt: skip
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    init_project(tmp_path, exo="/old/exomonad")
    init_project(tmp_path, exo=EXO)  # e.g. the install moved: ours updated, not duplicated
    data = json.loads(settings.read_text())
    assert data["permissions"] == {"allow": ["Bash(ls)"]}
    stop = [h for e in data["hooks"]["Stop"] for h in e["hooks"]]
    assert stop == [mine, {"type": "command", "timeout": 80,
                           "command": f"{EXO} hook stop --runtime claude"}]  # fmt: skip
    assert set(json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]) == {
        "other", "exomonad"}  # fmt: skip


@pytest.mark.parametrize("content", ["{bad", "[1, 2]"])
def test_broken_json_is_refused_and_kept(tmp_path: Path, content: str) -> None:
    (tmp_path / ".mcp.json").write_text(content)
    with pytest.raises(ExomonadError, match=r"\.mcp\.json"):
        init_project(tmp_path, exo=EXO)
    assert (tmp_path / ".mcp.json").read_text() == content


def test_teammate_wrapper_passes_claude_codes_arguments_on(tmp_path: Path) -> None:
    echo = shlex.quote(sys.executable) + " -c " + shlex.quote("import sys; print(sys.argv[1:])")
    init_project(tmp_path, exo=echo)
    command = _json(tmp_path / ".claude" / "settings.json")["env"]
    assert isinstance(command, dict)
    program = command["CLAUDE_CODE_TEAMMATE_COMMAND"]
    # As Claude Code runs it: the value quoted as one word, then its arguments.
    out = subprocess.run(f"{shlex.quote(program)} --agent-id 'g@t' --agent-name g",
                         shell=True, capture_output=True, text=True, check=True)  # fmt: skip
    assert out.stdout.strip() == "['teammate', '--agent-id', 'g@t', '--agent-name', 'g']"
