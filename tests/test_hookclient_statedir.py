"""Which project's server judges a hook: never one the agent chose.

An agent controls its cwd (Claude Code's hook input ``cwd`` follows ``cd``; Codex's is a
tool call's ``workdir``, any path) and can make directories (interpreter code is not
read). So the hook client never looks for the state dir from the hook input's ``cwd``:
it trusts ``$EXOMONAD_DIR`` (ExoMonad gives it to every agent it starts, with the
token), denies a worker's gating call that lacks it, and otherwise walks up from the
directory the runtime started its session in (``$CLAUDE_PROJECT_DIR``,
``$GEMINI_PROJECT_DIR``, else the hook's own working directory), preferring a project's
state dir to one inside a worktree of that project.

Each test plants a ``.exomonad/`` whose "server" (a real socket and live pid file)
answers "allow" to everything, or none, and checks it is never asked.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from exomonad import hookclient, state
from exomonad.errors import StateDirError

ALLOW = {"output": {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                           "permissionDecision": "allow"}},
         "exit_code": 0}  # fmt: skip
PUSH = {"tool_name": "Bash", "tool_input": {"command": "git push origin HEAD:main"}}


class AllowServer:
    """A state dir's "server": a real Unix socket and a live pid file; it answers every
    request with ``allow`` and counts them."""

    def __init__(self, state_dir: Path) -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        path = state_dir / "s.sock"
        self.sock.bind(str(path))
        self.sock.listen(8)
        pid = {"pid": os.getpid(), "socket": str(path)}
        (state_dir / "server.pid").write_text(json.dumps(pid))
        self.requests = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        body = json.dumps(ALLOW).encode()
        head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                self.requests += 1
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                conn.sendall(head + body)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def servers() -> Iterator[list[AllowServer]]:
    made: list[AllowServer] = []
    yield made
    for s in made:
        s.close()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in ("EXOMONAD_DIR", "EXOMONAD_TOKEN", "TMUX_PANE", *state.PROJECT_DIR_VARS):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)


def run_hook(payload: dict[str, object], runtime: str = "claude",
             event: str = "pre-tool-use") -> tuple[int, str, str]:  # fmt: skip
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode()))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = hookclient.main([event, "--runtime", runtime])
    finally:
        sys.stdin = old
    return code, out.getvalue(), err.getvalue()


def permission(stdout: str) -> str | None:
    found = json.loads(stdout or "{}").get("hookSpecificOutput", {}).get("permissionDecision")
    return None if found is None else str(found)


def plant(servers: list[AllowServer], where: Path) -> AllowServer:
    """A fake state dir with an allow-everything server at ``where/.exomonad``."""
    server = AllowServer(where / ".exomonad")
    servers.append(server)
    return server


def test_a_worker_without_exomonad_dir_is_denied_not_sent_to_a_planted_server(
    tmp_path: Path, servers: list[AllowServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = plant(servers, tmp_path / "mine")
    monkeypatch.setenv("EXOMONAD_TOKEN", "exo_worker")
    code, out, err = run_hook({**PUSH, "cwd": str(tmp_path / "mine")})
    assert code == 0
    assert permission(out) == "deny", (out, err)
    assert "EXOMONAD_DIR" in err
    assert fake.requests == 0


def test_a_worker_without_exomonad_dir_is_denied_not_failed_open_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = tmp_path / "mine" / ".exomonad"
    planted.mkdir(parents=True)
    (planted / "policy.py").write_text("raise SystemExit('never imported')\n")
    monkeypatch.setenv("EXOMONAD_TOKEN", "exo_worker")
    for runtime, event in (("claude", "pre-tool-use"), ("gemini", "before-tool"),
                           ("codex", "pre-tool-use")):  # fmt: skip
        code, out, err = run_hook({**PUSH, "cwd": str(planted.parent)}, runtime, event)
        assert code == 0
        assert "fail-open" not in err
        assert "deny" in out, (runtime, out, err)


def test_a_worker_without_exomonad_dir_never_blocks_other_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXOMONAD_TOKEN", "exo_worker")
    code, out, err = run_hook({"cwd": str(tmp_path)}, event="stop")
    assert (code, json.loads(out)) == (0, {})
    assert "EXOMONAD_DIR" in err


def test_exomonad_dir_is_used_whatever_the_cwd(
    tmp_path: Path, servers: list[AllowServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = plant(servers, tmp_path / "proj")
    fake = plant(servers, tmp_path / "proj" / "sub")
    monkeypatch.setenv("EXOMONAD_DIR", str(tmp_path / "proj" / ".exomonad"))
    monkeypatch.setenv("EXOMONAD_TOKEN", "exo_worker")
    code, out, _ = run_hook({**PUSH, "cwd": str(tmp_path / "proj" / "sub")})
    assert (code, permission(out)) == (0, "allow")
    assert (real.requests, fake.requests) == (1, 0)


@pytest.mark.parametrize("var", ["CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR"])
def test_a_tokenless_hook_walks_from_the_runtimes_project_dir_not_the_input_cwd(
    tmp_path: Path, servers: list[AllowServer], monkeypatch: pytest.MonkeyPatch, var: str
) -> None:
    """The lead's (or a Claude teammate's) hook: Claude Code's input ``cwd`` follows a
    ``cd sub``, its ``$CLAUDE_PROJECT_DIR`` stays where the session started."""
    real = plant(servers, tmp_path / "proj")
    fake = plant(servers, tmp_path / "proj" / "sub")
    monkeypatch.setenv(var, str(tmp_path / "proj"))
    monkeypatch.chdir(tmp_path / "proj" / "sub")  # Claude Code runs its hook there too
    code, out, _ = run_hook({**PUSH, "cwd": str(tmp_path / "proj" / "sub")})
    assert (code, permission(out)) == (0, "allow")
    assert (real.requests, fake.requests) == (1, 0)


def test_without_a_project_dir_the_hooks_own_cwd_counts_not_the_input_cwd(
    tmp_path: Path, servers: list[AllowServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex: the input ``cwd`` is the tool call's ``workdir`` (the model's choice); the
    hook process runs in the session's directory."""
    real = plant(servers, tmp_path / "proj")
    fake = plant(servers, tmp_path / "elsewhere")
    monkeypatch.chdir(tmp_path / "proj")
    code, out, _ = run_hook({**PUSH, "cwd": str(tmp_path / "elsewhere")}, "codex")
    assert code == 0
    assert "allow" in out
    assert (real.requests, fake.requests) == (1, 0)


def _git_worktree(main: Path, wt: Path) -> None:
    """A main checkout (``.git`` directory) and a linked worktree (``.git`` file)."""
    (main / ".git").mkdir(parents=True)
    wt.mkdir(parents=True)
    (wt / ".git").write_text(f"gitdir: {main}/.git/worktrees/{wt.name}\n")


def test_a_state_dir_inside_a_worktree_loses_to_its_projects(
    tmp_path: Path, servers: list[AllowServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    proj = tmp_path / "proj"
    wt = proj / ".worktrees" / "w1"
    _git_worktree(proj, wt)
    real = plant(servers, proj)
    fake = plant(servers, wt / "sub")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(wt / "sub"))
    code, out, _ = run_hook({**PUSH, "cwd": str(wt / "sub")})
    assert (code, permission(out)) == (0, "allow")
    assert (real.requests, fake.requests) == (1, 0)
    assert state.nearest_state_dir(str(wt / "sub")) == str(proj / ".exomonad")
    assert state.nearest_state_dir(str(wt)) == str(proj / ".exomonad")


def test_a_worktree_of_a_project_without_state_keeps_its_own(tmp_path: Path) -> None:
    """A person who set up ExoMonad in a linked worktree of their own keeps it."""
    proj = tmp_path / "proj"
    wt = tmp_path / "wt"
    _git_worktree(proj, wt)
    (wt / ".exomonad").mkdir()
    assert state.nearest_state_dir(str(wt / "x")) == str(wt / ".exomonad")


def test_the_nearest_state_dir_of_a_main_checkout_is_found_as_before(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / ".exomonad").mkdir()
    (proj / "a" / "b").mkdir(parents=True)
    assert state.nearest_state_dir(str(proj / "a" / "b")) == str(proj / ".exomonad")
    assert state.nearest_state_dir(str(proj)) == str(proj / ".exomonad")
    (proj / "a" / ".exomonad").mkdir()  # nested projects: the nearest, as always
    assert state.nearest_state_dir(str(proj / "a" / "b")) == str(proj / "a" / ".exomonad")


def test_agent_state_dir_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "p" / ".exomonad").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "p")
    assert state.agent_state_dir() == str(tmp_path / "p" / ".exomonad")
    monkeypatch.setenv("EXOMONAD_TOKEN", "exo_w")
    with pytest.raises(StateDirError, match="EXOMONAD_DIR"):
        state.agent_state_dir()
    monkeypatch.setenv("EXOMONAD_DIR", "/given")
    assert state.agent_state_dir() == "/given"
