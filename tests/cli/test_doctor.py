"""``exomonad init`` + ``exomonad doctor`` as a colleague meets them: real commands found
on PATH (the venv's bin dir, as after ``pip install``), a committed and cloned repository."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

BIN = Path(sys.executable).parent
#: An absolute path in a committed file: `/x...` at the start of a word or JSON string.
ABSOLUTE = re.compile(r"""(?:^|[\s"'=:])(/[A-Za-z][^\s"']*)""", re.MULTILINE)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The caller's env minus ExoMonad's and Claude's, with the venv's bin first on PATH."""
    for script in ("exomonad", "exomonad-teammate"):
        assert (BIN / script).exists(), f"{BIN / script} missing: pip install -e ."
    out = {k: v for k, v in os.environ.items()
           if not k.startswith(("EXOMONAD_", "CLAUDE", "TMUX", "GIT_"))}  # fmt: skip
    out["PATH"] = f"{BIN}{os.pathsep}{out.get('PATH', '/usr/bin:/bin')}"
    out.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")  # fmt: skip
    return out


def sh(argv: list[str], env: dict[str, str], cwd: Path, *, code: int | None = 0,
       stdin: str | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, input=stdin,
                          timeout=120, check=False)  # fmt: skip
    if code is not None:
        assert done.returncode == code, (argv, done.stdout, done.stderr)
    return done


def doctor(cwd: Path, env: dict[str, str]) -> tuple[int, dict[str, dict[str, Any]]]:
    done = sh(["exomonad", "doctor", "--json"], env, cwd, code=None)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, {c["name"]: c for c in json.loads(done.stdout)}


@pytest.fixture
def cloned(tmp_path: Path, env: dict[str, str]) -> Path:
    """`exomonad init` in a fresh repository, committed, then cloned elsewhere."""
    origin = tmp_path / "origin"
    origin.mkdir()
    sh(["git", "init", "-q"], env, origin)
    init = json.loads(sh(["exomonad", "init", "--json"], env, origin).stdout)
    assert init["warning"] is None, init
    sh(["git", "add", "-A"], env, origin)
    sh(["git", "commit", "-qm", "exomonad init"], env, origin)
    sh(["git", "clone", "-q", str(origin), str(tmp_path / "clone")], env, tmp_path)
    return tmp_path / "clone"


def test_a_clone_passes_doctor_and_commits_no_absolute_path(
    cloned: Path, env: dict[str, str]
) -> None:
    committed = sh(["git", "ls-files"], env, cloned).stdout.split()
    assert {
        ".mcp.json",
        ".claude/settings.json",
        ".gemini/settings.json",
        ".codex/config.toml",
    } <= set(committed)
    for rel in committed:
        found = ABSOLUTE.findall((cloned / rel).read_text("utf-8"))
        assert not found, f"{rel}: {found}"
    assert not (cloned / ".exomonad" / "bin").exists()
    _, checks = doctor(cloned, env)
    hooks = [c for name, c in checks.items() if name.startswith("hooks in ")]
    assert len(hooks) == 3, checks  # .claude/settings.json, .gemini/, .codex/config.toml
    assert all(c["status"] == "ok" for c in hooks), hooks
    for name in (
        "exomonad on PATH",
        "portable committed files",
        "MCP server in .mcp.json",
        "Gemini MCP server exo",
        "CLAUDE_CODE_TEAMMATE_COMMAND",
    ):
        assert checks[name]["status"] == "ok", checks[name]
    assert str(BIN / "exomonad-teammate") in checks["CLAUDE_CODE_TEAMMATE_COMMAND"]["detail"]
    assert checks["server"]["status"] == "warn"  # none runs: not a failure
    assert checks["server"]["fix"] == "exomonad up (or exomonad serve)"


def test_a_planted_absolute_path_fails_doctor_with_the_fix(
    cloned: Path, env: dict[str, str]
) -> None:
    mcp = cloned / ".mcp.json"
    data = json.loads(mcp.read_text())
    data["mcpServers"]["exomonad"]["command"] = str(BIN / "exomonad")  # this machine's venv
    mcp.write_text(json.dumps(data))
    code, checks = doctor(cloned, env)
    assert code == 1
    portable = checks["portable committed files"]
    assert portable["status"] == "fail", portable
    assert ".mcp.json mcpServers.exomonad.command" in portable["detail"]
    assert portable["fix"] == "exomonad init"
    assert checks["MCP server in .mcp.json"]["status"] == "ok"  # it does resolve, here
    sh(["exomonad", "init"], env, cloned)  # the fix works
    code, checks = doctor(cloned, env)
    assert checks["portable committed files"]["status"] == "ok", checks
    assert code == 0, checks


def test_human_output_marks_each_check(cloned: Path, env: dict[str, str]) -> None:
    out = sh(["exomonad", "doctor"], env, cloned, code=None).stdout
    assert "✓ exomonad on PATH" in out
    assert "! server: no server running" in out
    assert "    fix: exomonad up (or exomonad serve)" in out
    assert re.search(r"\d+ ok, \d+ warnings, \d+ failed", out)


def test_a_package_planted_in_the_cwd_is_not_run_by_the_hook(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """An agent writes exomonad/__main__.py where its hooks run: the console script
    ignores it (its own dir is first on sys.path); `python -m exomonad` would not."""
    cwd, marker = tmp_path / "agent-cwd", tmp_path / "planted-ran"
    (cwd / "exomonad").mkdir(parents=True)
    plant = f"open({str(marker)!r}, 'a').write('x')\n"
    (cwd / "exomonad" / "__init__.py").write_text(plant)
    (cwd / "exomonad" / "__main__.py").write_text(plant)
    hook = "exomonad hook session-end --runtime claude"
    done = subprocess.run(hook, shell=True, env=env, cwd=cwd, input="{}", capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    sh([sys.executable, "-I", "-m", "exomonad", "hook", "session-end"], env, cwd, stdin="{}")
    assert not marker.exists()  # how ExoMonad starts itself
    sh([sys.executable, "-m", "exomonad", "hook", "session-end"], env, cwd, code=None,
       stdin="{}")  # fmt: skip
    assert marker.exists()  # the plant is real: plain `-m` runs it


def test_doctor_fails_when_exomonad_is_not_on_path(cloned: Path, env: dict[str, str]) -> None:
    bare = {**env, "PATH": "/usr/bin:/bin"}
    done = sh([str(BIN / "exomonad"), "doctor", "--json"], bare, cloned, code=1)
    checks = {c["name"]: c for c in json.loads(done.stdout)}
    assert checks["exomonad on PATH"]["status"] == "fail"
    assert checks["exomonad on PATH"]["fix"] == f'export PATH="{BIN}:$PATH"'
    assert checks["hooks in .claude/settings.json"]["status"] == "fail"
    assert checks["CLAUDE_CODE_TEAMMATE_COMMAND"]["status"] == "fail"
    init = sh([str(BIN / "exomonad"), "init", "--json"], bare, cloned)
    assert "export PATH=" in json.loads(init.stdout)["warning"]
    assert "warning:" in init.stderr
