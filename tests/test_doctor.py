"""``exomonad.doctor.run_checks``: each check against a real repository, server and PATH."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from exomonad import doctor
from exomonad.doctor import Check, run_checks
from exomonad.setup import init_project
from tests.e2e.harness import ExomonadServe
from tests.support.tmux import TmuxServer

BIN = Path(sys.executable).parent


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository set up by init, with this venv's console scripts first on PATH."""
    for name in [k for k in os.environ if k.startswith(("EXOMONAD_", "GIT_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}")
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    init_project(root)
    return root


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C",
                    str(root), *args], check=True, capture_output=True)  # fmt: skip


def checks(root: Path) -> dict[str, Check]:
    return {c.name: c for c in run_checks(root)}


def test_stale_worktree_is_a_warning_with_prune(repo: Path, tmp_path: Path) -> None:
    git(repo, "commit", "-q", "--allow-empty", "-m", "first")
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    found = checks(repo)["git worktrees"]
    assert (found.status, found.detail) == ("ok", "2 worktree(s), none stale")
    shutil.rmtree(tmp_path / "wt")
    found = checks(repo)["git worktrees"]
    assert found.status == "warn"
    assert str(tmp_path / "wt") in found.detail
    assert found.fix == "git worktree prune"


def test_old_absolute_hooks_fail_and_say_init(repo: Path) -> None:
    init_project(repo, exo="/gone/venv/bin/exomonad", teammate="/gone/exomonad-teammate")
    found = checks(repo)
    for name in (
        "hooks in .claude/settings.json",
        "hooks in .gemini/settings.json",
        "MCP server in .mcp.json",
        "CLAUDE_CODE_TEAMMATE_COMMAND",
    ):
        assert (found[name].status, found[name].fix) == ("fail", "exomonad init"), found[name]
    init_project(repo)
    found = checks(repo)
    assert found["hooks in .claude/settings.json"].status == "ok"
    assert found["CLAUDE_CODE_TEAMMATE_COMMAND"].status == "ok"


def test_a_hook_that_resolves_but_does_not_run_fails(repo: Path) -> None:
    init_project(repo, exo="sh -c 'echo broken >&2; exit 3' exomonad")
    hook = checks(repo)["hooks in .claude/settings.json"]
    assert hook.status == "fail"
    assert "exited 3: broken" in hook.detail
    assert "hook session-end --runtime claude" in hook.detail  # the harmless event


def test_local_settings_hooks_are_checked_too(repo: Path) -> None:
    local = repo / ".claude" / "settings.local.json"
    hook = {"type": "command", "command": "/gone/bin/exomonad hook stop --runtime claude"}
    local.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [hook]}]}}))
    found = checks(repo)["hooks in .claude/settings.local.json"]
    assert found.status == "fail"
    assert "does not resolve" in found.detail


def test_broken_settings_fail_with_the_file_named(repo: Path) -> None:
    (repo / ".gemini" / "settings.json").write_text("{oops")
    found = checks(repo)
    assert found["hooks in .gemini/settings.json"].status == "fail"
    assert "settings.json" in str(found["portable committed files"].fix)


def test_not_a_git_repository_is_a_warning(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    found = checks(tmp_path)["git worktrees"]
    assert found.status == "warn"
    assert str(found.fix).endswith(" init")


def test_a_running_server_answers_health(repo: Path, tmp_path: Path,
                                         tmux_server: TmuxServer) -> None:  # fmt: skip
    state = repo / ".exomonad"
    env = {**os.environ, "EXOMONAD_DIR": str(state), "CLAUDE_CONFIG_DIR": str(tmp_path / "c")}
    server = ExomonadServe(state=state, env=env, tmux_socket=tmux_server.socket,
                           log_path=tmp_path / "server.log", cwd=repo)  # fmt: skip
    server.start()
    try:
        found = checks(repo)["server"]
        assert found.status == "ok", (found, server.log())
        assert "/health ok" in found.detail
    finally:
        server.stop()
    assert checks(repo)["server"].status == "warn"


def test_the_hook_front_needs_netcat_openbsd(monkeypatch: pytest.MonkeyPatch) -> None:
    here = doctor._hook_front()
    assert here.status == "ok"
    assert "nc.openbsd" in here.detail
    monkeypatch.setattr(doctor, "NC_OPENBSD", ("/nonexistent/nc.openbsd",))
    gone = doctor._hook_front()
    assert gone.status == "warn"
    assert gone.fix == "apt-get install netcat-openbsd"


def test_committed_hooks_through_a_front_this_machine_lacks_fail_with_the_path_fix(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A colleague's install without ``exomonad-hook`` on PATH: each hook would be "command
    not found" (exit 127, a non-blocking error to the runtimes), so doctor fails it."""
    settings = (repo / ".claude" / "settings.json").read_text()
    assert '"exomonad-hook exomonad hook ' in settings  # init wrote the front (on PATH here)
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "exomonad").symlink_to(BIN / "exomonad")
    monkeypatch.setenv("PATH", f"{alone}:/usr/bin:/bin")
    hook = checks(repo)["hooks in .claude/settings.json"]
    assert hook.status == "fail"
    assert "does not resolve on PATH" in hook.detail
    assert hook.fix is not None
    assert hook.fix.startswith("export PATH=")
