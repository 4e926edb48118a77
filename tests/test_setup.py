"""`exomonad init`: idempotent, merging, never clobbering, portable (commands from PATH)."""

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

EXO = "exomonad"
OLD = "/home/someone/.venv/bin/exomonad"  # what init wrote before it was portable


def _json(path: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(path.read_text())
    return data


def test_fresh_repository(tmp_path: Path) -> None:
    report = init_project(tmp_path)
    assert set(report.files.values()) == {"created"}
    assert load_project_config(tmp_path / ".exomonad").lead.role == "tl"  # template parses
    mcp = _json(tmp_path / ".mcp.json")["mcpServers"]
    assert mcp == {"exomonad": {"type": "stdio", "command": EXO,
                                "args": ["mcp-stdio", "--role", "tl"]}}  # fmt: skip
    claude = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    # One program, no arguments: Claude Code 2.1.330 quotes the value as a single word.
    assert claude["env"]["CLAUDE_CODE_TEAMMATE_COMMAND"] == "exomonad-teammate"
    assert not (tmp_path / ".exomonad" / "bin").exists()
    assert claude["teammateMode"] == "tmux"
    pre = claude["hooks"]["PreToolUse"][0]
    # The client answers (fail-closed) before Claude Code's time-out lets the call through.
    assert pre["hooks"][0]["command"] == f"{EXO} hook pre-tool-use --runtime claude --timeout 70"
    assert pre["hooks"][0]["timeout"] == 80
    gemini = json.loads((tmp_path / ".gemini" / "settings.json").read_text())
    assert gemini["mcpServers"]["exo"] == {
        "command": "exomonad", "args": ["mcp-stdio", "--role", "worker"],
        "env": {"EXOMONAD_TOKEN": "$EXOMONAD_TOKEN", "EXOMONAD_DIR": "$EXOMONAD_DIR"}}  # fmt: skip
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
    init_project(tmp_path, exo=OLD)
    init_project(tmp_path)  # an older, absolute ExoMonad entry: replaced, not duplicated
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


def test_old_absolute_form_is_replaced_everywhere(tmp_path: Path) -> None:
    """What init wrote before: absolute hooks, MCP commands and a teammate wrapper."""
    init_project(tmp_path, exo=OLD, teammate=str(tmp_path / ".exomonad/bin/exomonad-teammate"))
    wrapper = tmp_path / ".exomonad" / "bin" / "exomonad-teammate"
    wrapper.parent.mkdir()
    wrapper.write_text("#!/bin/sh\n# Written by `exomonad init`: Claude Code runs ...\n"
                       f'exec {OLD} teammate "$@"\n')  # fmt: skip
    report = init_project(tmp_path)
    assert report.files[".exomonad/bin/exomonad-teammate"] == "removed"
    assert not wrapper.parent.exists()
    for rel in (".claude/settings.json", ".mcp.json", ".gemini/settings.json"):
        text = (tmp_path / rel).read_text()
        assert OLD not in text, rel
        assert str(tmp_path) not in text, rel
    claude = _json(tmp_path / ".claude" / "settings.json")["hooks"]
    assert isinstance(claude, dict)
    assert all(len(entries) == 1 for entries in claude.values())  # replaced, not duplicated


def test_a_teammate_file_that_is_not_ours_is_kept(tmp_path: Path) -> None:
    mine = tmp_path / ".exomonad" / "bin" / "exomonad-teammate"
    mine.parent.mkdir(parents=True)
    mine.write_text("#!/bin/sh\nexec my-own-thing\n")
    assert ".exomonad/bin/exomonad-teammate" not in init_project(tmp_path).files
    assert mine.read_text() == "#!/bin/sh\nexec my-own-thing\n"


def test_teammate_command_passes_claude_codes_arguments_on(tmp_path: Path) -> None:
    """The console script, run as Claude Code runs the value: one quoted word from PATH,
    then its arguments (they reach `exomonad teammate`, which routes gemini-1 to Gemini
    and asks the server for its token: there is none, so it says so)."""
    bin_dir = Path(sys.executable).parent
    assert (bin_dir / "exomonad-teammate").exists(), f"pip install -e . into {bin_dir.parent}"
    init_project(tmp_path)
    env = _json(tmp_path / ".claude" / "settings.json")["env"]
    assert isinstance(env, dict)
    program = env["CLAUDE_CODE_TEAMMATE_COMMAND"]
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    out = subprocess.run(
        f"{shlex.quote(program)} --agent-id 'gemini-1@t' --agent-name gemini-1 --team-name t",
        shell=True, capture_output=True, text=True, cwd=tmp_path, check=False,
        env={**os.environ, "PATH": path, "EXOMONAD_DIR": str(tmp_path / ".exomonad"),
             "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")},
    )  # fmt: skip
    assert out.returncode == 1, out
    assert "no ExoMonad server runs" in out.stderr, out.stderr


_ARCH = {"x86_64": "x64", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine)
#: The ripgrep Claude Code's Grep runs (``rg --hidden``), from the pinned npm package.
RG = (Path(__file__).parent / "e2e/claude/node_modules/claude-code-112/vendor/ripgrep"
      / f"{_ARCH}-linux" / "rg")  # fmt: skip


def test_searches_skip_the_state_dir_even_outside_git(tmp_path: Path) -> None:
    """Outside a git repository ``.exomonad/.gitignore`` means nothing to ripgrep;
    ``.exomonad/.ignore`` keeps the tokens out of ``rg --hidden`` (Claude Code's Grep)."""
    assert RG.exists(), f"Claude Code's ripgrep is missing: {RG} (npm ci in tests/e2e/claude)"
    init_project(tmp_path, exo=EXO)
    assert (tmp_path / ".exomonad" / ".ignore").read_text().splitlines()[-1] == "*"
    (tmp_path / ".exomonad" / "tokens.json").write_text('{"exo_secret": {}}\n')
    (tmp_path / "src.py").write_text("exo_ in the source\n")

    def rg(*flags: str) -> str:
        done = subprocess.run([str(RG), *flags, "exo_", "."], cwd=tmp_path, capture_output=True,
                              text=True, check=False, timeout=60)  # fmt: skip
        return done.stdout

    assert "src.py" in rg("--hidden")
    assert "exo_secret" not in rg("--hidden")
    assert "exo_secret" in rg("-uu")  # what the policy refuses (a tree read)
