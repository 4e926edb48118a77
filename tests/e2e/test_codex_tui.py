"""The real Codex CLI 0.169 TUI in a private tmux server, against the scripted model.

* Untrusted project hooks make the TUI stop at "Hooks need review"; "Trust all and
  continue" writes `[hooks.state]` entries whose hashes are exactly the ones
  `codex_trust` computes, and the hook then gates the next shell call.
* With `-a on-request`, a shell call asking to leave the sandbox goes to the
  `PermissionRequest` hook, whose answer decides it (`codex exec` never asks).
* The TUI runs its sessions in an app-server daemon under `~/.codex/packages` that
  outlives the pane and keeps the environment of the TUI that started it: a later TUI's
  hooks run with the first one's variables. `--no-daemon` gives each TUI its own
  environment and leaves nothing behind.

These tests never skip: a missing CLI or tmux is a setup error, reported with the fix.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from exomonad.scripted.openai import ScriptedCodex, shell_reply
from exomonad.util.waiting import retry_until
from tests.e2e.codex_cli import (
    READY_MARKER,
    CodexHome,
    Tmux,
    codex_install_problem,
    codex_processes,
    command_hook,
    hook_calls,
    kill_codex_processes,
    prepare_home,
    probe_command,
    start_codex_in_tmux,
    stub_mcp_server,
    tmux_install_problem,
)
from tests.e2e.codex_fixtures import check_fixture
from tests.e2e.codex_trust import hook_trust_entries
from tests.e2e.harness import fail_if_missing

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

MakeHome = Callable[..., CodexHome]
REQUEST_TIMEOUT = 45.0
SELECTED = "\u203a"  # the TUI's selection marker


def _select(pane: Any, option: int) -> bool:
    """Whether the dialog shows ``option`` selected; else one key towards it (a key the
    TUI dropped is sent again on the next call)."""
    shown = pane.capture()
    if f"{SELECTED} {option}." in shown:
        return True
    current = next((k for k in range(1, 10) if f"{SELECTED} {k}." in shown), None)
    if current is not None:
        pane.send_key("Down" if current < option else "Up")
    return False


@pytest.fixture
def model() -> Iterator[ScriptedCodex]:
    fail_if_missing(codex_install_problem, tmux_install_problem)
    with ScriptedCodex() as server:
        yield server


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    with Tmux() as server:
        yield server


@pytest.fixture
def make_home(tmp_path: Path, model: ScriptedCodex, tmux: Tmux) -> Iterator[MakeHome]:
    """`prepare_home` on the scripted server; at teardown the tmux server goes first,
    then whatever Codex left running (its daemon ignores SIGTERM: SIGKILL)."""
    made: list[CodexHome] = []

    def make(**kwargs: Any) -> CodexHome:
        home = prepare_home(tmp_path / f"codex{len(made)}", model.base_url, **kwargs)
        made.append(home)
        return home

    yield make
    tmux.kill()
    for home in made:
        kill_codex_processes(home)
        assert codex_processes(home) == []


def _shell_turn(model: ScriptedCodex, cmd: str, **extra: Any) -> str:
    """Queue a shell call and a final text; returns the call id."""
    reply = shell_reply(cmd, **extra)
    model.add_reply(reply)
    model.add_text(f"finished {cmd}")
    return reply.call_ids()[0]


def test_tui_trust_all_records_the_hashes_we_compute_and_the_hook_then_gates(
    model: ScriptedCodex, make_home: MakeHome, tmux: Tmux, tmp_path: Path
) -> None:
    log = tmp_path / "hooks.jsonl"
    hooks = {
        "PreToolUse": [
            command_hook(probe_command(log, "deny", "gated after trust"), matcher="^Bash$"),
            command_hook(probe_command(log, "record"), timeout=30, status_message="checking"),
        ],
        "PermissionRequest": [command_hook(probe_command(log, "allow"), matcher="Bash|mcp__.*")],
        "Stop": [command_hook(probe_command(log, "record"), matcher="ignored for Stop")],
    }
    home = make_home(project_hooks=hooks, trust_project_hooks=False)
    pane = start_codex_in_tmux(tmux, home, wait_ready=False)

    pane.wait_for_text("Hooks need review", 60)
    print(f"codex TUI: hooks dialog {time.monotonic() - pane.started_at:.1f}s after launch")
    assert "4 hooks are new or changed" in pane.capture()
    # 1. Review hooks -> 2. Trust all and continue. A key sent while the dialog is still
    # being drawn can be lost (seen once in a fresh-clone run: option 1 stayed selected),
    # so the selection is moved until it shows option 2. (Not pane.wait_for: it fails
    # fast on this very dialog, a BLOCKING_DIALOGS entry.)
    retry_until(
        lambda: _select(pane, 2),
        timeout=20,
        interval=0.5,
        message=f"option 2 not selected:\n{pane.capture()}",
    )
    assert f"{SELECTED} 2. Trust all and continue" in pane.capture()
    pane.send_key("Enter")

    def trusted() -> dict[str, str]:
        state = home.config().get("hooks", {}).get("state", {})
        return {key: entry.get("trusted_hash", "") for key, entry in state.items()}

    retry_until(lambda: len(trusted()) == 4, timeout=20, message="Codex wrote no hooks.state")
    assert trusted() == hook_trust_entries(home.project_config_path)

    call_id = _shell_turn(model, "touch after-trust.txt")
    retry_until(  # "Trusting hooks..." stays up a moment after the state is written
        lambda: READY_MARKER in (screen := pane.capture()) and "Hooks need review" not in screen,
        timeout=30,
        message="the hooks dialog did not close",
    )
    pane.type_message("make the file now that the hooks are trusted")
    seen = model.wait_for_output(call_id, REQUEST_TIMEOUT).output_text(call_id)
    assert seen == (
        "Command blocked by PreToolUse hook: gated after trust. Command: touch after-trust.txt"
    )
    assert not (home.workspace / "after-trust.txt").exists()


@pytest.mark.parametrize("mode", ["allow", "deny"])
def test_tui_permission_request_hook_decides_leaving_the_sandbox(
    model: ScriptedCodex, make_home: MakeHome, tmux: Tmux, tmp_path: Path, mode: str
) -> None:
    log = tmp_path / "hooks.jsonl"
    hook = command_hook(probe_command(log, mode, "the lead said no"), matcher="^Bash$")
    home = make_home(project_hooks={"PermissionRequest": [hook]})
    call_id = _shell_turn(
        model,
        "touch escalated.txt",
        sandbox_permissions="require_escalated",
        justification="needs to write outside the sandbox",
    )
    pane = start_codex_in_tmux(
        tmux, home, bypass=False, extra_args=["-a", "on-request", "-s", "workspace-write"]
    )
    print(f"codex TUI: composer ready {pane.ready_after:.2f}s after launch")

    pane.type_message("touch the escalated file")
    seen = model.wait_for_output(call_id, REQUEST_TIMEOUT).output_text(call_id) or ""

    [call] = hook_calls(log, "PermissionRequest")
    assert call["stdin"]["tool_input"] == {
        "command": "touch escalated.txt",
        "description": "needs to write outside the sandbox",
    }
    assert call["stdin"]["permission_mode"] == "default"
    if mode == "allow":
        assert (home.workspace / "escalated.txt").exists()
        check_fixture("permission_request_shell", call["stdin"], home)
    else:
        assert not (home.workspace / "escalated.txt").exists()
        assert "the lead said no" in seen, seen


def _run_tui_session(
    model: ScriptedCodex, tmux: Tmux, home: CodexHome, name: str, value: str, daemon: bool
) -> None:
    """One TUI in its own tmux session with `EXO_PROBE_VAR=value`: one shell call, then
    the session is killed and its TUI process waited for."""
    call_id = _shell_turn(model, f"echo {value} > {name}.txt")
    pane = start_codex_in_tmux(
        tmux,
        home,
        session=name,
        extra_args=[] if daemon else ["--no-daemon"],
        extra_env={"EXO_PROBE_VAR": value},
    )
    pane.type_message(f"write {name}")
    model.wait_for_output(call_id, REQUEST_TIMEOUT)
    pane.wait_for_text(f"finished echo {value}", 30)
    tmux.run("kill-session", "-t", name)

    def tui_gone() -> bool:
        return not any("app-server" not in cmd and "codex" in cmd for _, cmd in _codex(home))

    retry_until(tui_gone, timeout=15, message="the Codex TUI outlived its tmux session")


def _codex(home: CodexHome) -> list[tuple[int, str]]:
    """Codex processes of `home` other than the MCP stub."""
    return [(pid, cmd) for pid, cmd in codex_processes(home) if "exo_mcp_stub" not in cmd]


@pytest.mark.parametrize("daemon", [True, False], ids=["daemon", "no-daemon"])
def test_tui_daemon_outlives_the_pane_and_keeps_the_first_environment(
    model: ScriptedCodex, make_home: MakeHome, tmux: Tmux, tmp_path: Path, daemon: bool
) -> None:
    log, calls = tmp_path / "hooks.jsonl", tmp_path / "mcp-calls.jsonl"
    home = make_home(
        mcp_servers={"exo": stub_mcp_server(calls)},
        project_hooks={"PreToolUse": [command_hook(probe_command(log, "record"))]},
    )
    first, second = f"first-{secrets.token_hex(3)}", f"second-{secrets.token_hex(3)}"

    _run_tui_session(model, tmux, home, "one", first, daemon)
    _run_tui_session(model, tmux, home, "two", second, daemon)

    assert (home.workspace / "one.txt").read_text() == f"{first}\n"
    assert (home.workspace / "two.txt").read_text() == f"{second}\n"
    seen_by_hooks = [c["env"].get("EXO_PROBE_VAR") for c in hook_calls(log, "PreToolUse")]
    left = codex_processes(home)
    if daemon:
        # The second TUI's hook ran in the daemon the first TUI started, with its env.
        assert seen_by_hooks == [first, first]
        assert any("app-server" in cmd and "--managed-daemon" in cmd for _, cmd in left), left
        assert any("pid-update-loop" in cmd for _, cmd in left), left
        assert str(home.codex_home / "packages" / "app-server-daemon") in " ".join(
            cmd for _, cmd in left
        )
        assert sum("exo_mcp_stub" in cmd for _, cmd in left) == 2, left  # one per session
        assert kill_codex_processes(home)
    else:
        assert seen_by_hooks == [first, second]
        retry_until(lambda: codex_processes(home) == [], timeout=10, message=f"left: {left}")
