"""The real Codex CLI 0.169 (`codex exec`) against the scripted Responses API, offline.

* a prompt reaches the scripted server as the first request, and a scripted shell call
  really runs (its file appears); `codex exec` leaves no process behind;
* a trusted project `PreToolUse` hook sees every shell, apply_patch and MCP call and can
  block it (JSON `permissionDecision: "deny"`, exit 2 + stderr, or the legacy
  `decision: "block"`); the reason reaches the model as the tool's output;
* the same hook untrusted, or changed since it was trusted, does not run at all (unless
  `--dangerously-bypass-hook-trust`), and a failing hook stops nothing (exit 1 fails
  open);
* an MCP server in config.toml is reached through `tool_search`, then a namespaced
  `function_call`; `PermissionRequest` decides an MCP call that needs approval;
* a blocking `Stop` hook feeds its reason back to the model as a `<hook_prompt>`.

The payloads Codex writes to the hooks are compared with captured samples in
tests/e2e/fixtures/codex/ (`codex_fixtures`). These tests never skip: a missing CLI is
a setup error, reported with the fix.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import shlex
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from exomonad.runtimes.codex import CODEX, FEATURES
from exomonad.scripted.openai import (
    ScriptedCodex,
    apply_patch_reply,
    error_reply,
    mcp_reply,
    tool_search_reply,
)
from tests.e2e.codex_cli import (
    DEFAULT_MODEL,
    CodexHome,
    codex_install_problem,
    codex_processes,
    command_hook,
    hook_calls,
    kill_codex_processes,
    mcp_calls,
    prepare_home,
    probe_command,
    run_exec,
    stub_mcp_server,
)
from tests.e2e.codex_fixtures import check_fixture
from tests.e2e.harness import fail_if_missing

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

MakeHome = Callable[..., CodexHome]
NOTIFY_ARGS = {"status": "success", "message": "hello from codex"}
PATCH = "*** Begin Patch\n*** Add File: patched.txt\n+patched by codex\n*** End Patch\n"


@pytest.fixture
def model() -> Iterator[ScriptedCodex]:
    fail_if_missing(codex_install_problem)
    with ScriptedCodex() as server:
        yield server


@pytest.fixture
def make_home(tmp_path: Path, model: ScriptedCodex) -> Iterator[MakeHome]:
    """`prepare_home` on the scripted server; whatever Codex left running is killed."""
    made: list[CodexHome] = []

    def make(**kwargs: Any) -> CodexHome:
        home = prepare_home(tmp_path / f"codex{len(made)}", model.base_url, **kwargs)
        made.append(home)
        return home

    yield make
    for home in made:
        kill_codex_processes(home)


def _probe_hooks(log: Path, modes: dict[str, str], reason: str = "") -> dict[str, Any]:
    """One probe hook per event: `{event: mode}`."""
    return {
        ev: [command_hook(probe_command(log, mode, reason or None))] for ev, mode in modes.items()
    }


def _header(headers: dict[str, str], name: str) -> str | None:
    return next((v for k, v in headers.items() if k.lower() == name), None)


def test_exec_sends_the_prompt_and_runs_the_scripted_shell_command(
    model: ScriptedCodex, make_home: MakeHome
) -> None:
    token = secrets.token_hex(4)
    home = make_home()
    shell = model.add_shell(f"printf {token} > marker.txt")
    model.add_text(f"All done {token}.")
    prompt = f"write the marker {token}"

    result = run_exec(home, prompt)

    assert result.returncode == 0, result.output()
    first = model.agent_requests()[0]
    assert first.index == 0, model.describe()  # nothing is asked before the turn
    assert first.last_user_texts() == [prompt]
    assert first.model == DEFAULT_MODEL
    assert first.streaming
    assert {"exec_command", "apply_patch", "tool_search"} <= set(first.tool_names())
    assert _header(first.headers, "authorization") == "Bearer exo-e2e-offline-key"
    assert (home.workspace / "marker.txt").read_text() == token
    [call_id] = shell.call_ids()
    assert "Process exited with code 0" in (
        model.wait_for_output(call_id).output_text(call_id) or ""
    )
    assert f"All done {token}." in result.stdout
    latency = first.received_at - result.started_at
    print(f"codex exec: first request {latency:.2f}s after launch, done in {result.elapsed:.2f}s")
    assert codex_processes(home) == []  # exec leaves no daemon behind


def test_a_model_error_or_a_dead_server_ends_the_run_at_once(
    model: ScriptedCodex, make_home: MakeHome, tmp_path: Path
) -> None:
    """No retries (offline_config): a failing test fails in a second, not in minutes.
    Counted, not timed: with two retries of each kind a dropped connection is tried 9
    times (measured); with none, once."""
    model.add_reply(error_reply(500, "scripted outage"))
    result = run_exec(make_home(), "hi", timeout=60)
    assert result.returncode == 1, result.output()
    assert len(model.requests) == 1

    with ScriptedCodex() as gone:
        base_url = gone.base_url
    dead = prepare_home(tmp_path / "dead", base_url)
    result = run_exec(dead, "hi", timeout=60)
    assert result.returncode == 1, result.output()
    assert "Connection failed" in result.stderr

    with _dropping_listener() as (port, accepted):  # answers every connection by closing it
        dropped = prepare_home(tmp_path / "dropped", f"http://127.0.0.1:{port}/v1")
        result = run_exec(dropped, "hi", timeout=60)
    assert result.returncode == 1, result.output()
    assert "stream disconnected" in result.stderr
    assert accepted == [1]


@contextlib.contextmanager
def _dropping_listener() -> Iterator[tuple[int, list[int]]]:
    """A loopback port that accepts each connection and closes it at once; the list
    holds how many it accepted."""
    accepted = [0]
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(0.2)

        def serve() -> None:
            while not done.is_set():
                with contextlib.suppress(TimeoutError):
                    server.accept()[0].close()
                    accepted[0] += 1

        done = threading.Event()
        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        try:
            yield server.getsockname()[1], accepted
        finally:
            done.set()
            thread.join(5)


@pytest.mark.parametrize("mode", ["deny", "exit2", "legacy-block"])
def test_trusted_pre_tool_use_hook_blocks_shell_and_the_model_sees_why(
    model: ScriptedCodex, make_home: MakeHome, tmp_path: Path, mode: str
) -> None:
    log, reason = tmp_path / "hooks.jsonl", f"policy says no ({mode})"
    hooks = {"PreToolUse": [command_hook(probe_command(log, mode, reason), matcher="^Bash$")]}
    home = make_home(project_hooks=hooks)
    shell = model.add_shell("touch forbidden.txt")
    model.add_text("understood")

    result = run_exec(home, "make the forbidden file")

    assert result.returncode == 0, result.output()
    assert not (home.workspace / "forbidden.txt").exists()
    [call_id] = shell.call_ids()
    seen = model.wait_for_output(call_id).output_text(call_id)
    assert seen == f"Command blocked by PreToolUse hook: {reason}. Command: touch forbidden.txt"
    [call] = hook_calls(log, "PreToolUse")
    assert call["stdin"]["tool_use_id"] == call_id
    assert call["env"]["CODEX_HOME"] == str(home.codex_home)
    if mode == "deny":
        check_fixture("pre_tool_use_shell", call["stdin"], home)


@pytest.mark.parametrize("state", ["untrusted", "changed-since-trusted"])
def test_a_hook_codex_does_not_trust_is_skipped_silently(
    model: ScriptedCodex, make_home: MakeHome, tmp_path: Path, state: str
) -> None:
    """What ExoMonad has to detect: no error, no warning, and the command runs ungated."""
    log = tmp_path / "hooks.jsonl"
    hooks = {"PreToolUse": [command_hook(probe_command(log, "deny", "blocked"))]}
    home = make_home(project_hooks=hooks, trust_project_hooks=state != "untrusted")
    if state == "changed-since-trusted":  # the recorded hash no longer matches
        changed = {"PreToolUse": [command_hook(probe_command(log, "deny", "blocked now"))]}
        home.write_project_config({"hooks": changed})
    model.add_shell("touch ungated.txt")
    model.add_text("done")

    result = run_exec(home, "make the file")

    assert result.returncode == 0, result.output()
    assert (home.workspace / "ungated.txt").exists()
    assert hook_calls(log) == []
    assert not [line for line in result.stderr.splitlines() if line.startswith("hook:")]


def test_bypass_hook_trust_flag_runs_an_untrusted_hook(
    model: ScriptedCodex, make_home: MakeHome, tmp_path: Path
) -> None:
    """`--dangerously-bypass-hook-trust` (0.169): enabled hooks run without recorded
    trust, for this invocation only (every hook of every layer, not just ours)."""
    log = tmp_path / "hooks.jsonl"
    hooks = {"PreToolUse": [command_hook(probe_command(log, "deny", "gated without trust"))]}
    home = make_home(project_hooks=hooks, trust_project_hooks=False)
    shell = model.add_shell("touch gated.txt")
    model.add_text("done")

    result = run_exec(home, "make the file", extra_args=["--dangerously-bypass-hook-trust"])

    assert result.returncode == 0, result.output()
    assert not (home.workspace / "gated.txt").exists()
    [call_id] = shell.call_ids()
    assert "gated without trust" in (model.wait_for_output(call_id).output_text(call_id) or "")
    assert "hooks" not in home.config()  # nothing was recorded as trusted


def test_a_hook_that_exits_1_fails_open(
    model: ScriptedCodex, make_home: MakeHome, tmp_path: Path
) -> None:
    """Only exit 2 (or a JSON decision) blocks: a crashing hook lets the command run."""
    log = tmp_path / "hooks.jsonl"
    home = make_home(project_hooks=_probe_hooks(log, {"PreToolUse": "exit1"}, "crashed"))
    model.add_shell("touch ran-anyway.txt")
    model.add_text("done")

    result = run_exec(home, "make the file")

    assert (home.workspace / "ran-anyway.txt").exists()
    assert len(hook_calls(log, "PreToolUse")) == 1
    assert "hook: PreToolUse Failed" in result.stderr, result.output()


@pytest.mark.parametrize("mode", ["record", "deny"])
def test_pre_tool_use_hook_sees_and_gates_apply_patch(
    model: ScriptedCodex, make_home: MakeHome, tmp_path: Path, mode: str
) -> None:
    log = tmp_path / "hooks.jsonl"
    home = make_home(project_hooks=_probe_hooks(log, {"PreToolUse": mode}, "no patching"))
    patch = apply_patch_reply(PATCH)
    model.add_reply(patch)
    model.add_text("done")

    result = run_exec(home, "patch it")

    assert result.returncode == 0, result.output()
    [call] = hook_calls(log, "PreToolUse")
    assert call["stdin"]["tool_name"] == "apply_patch"
    assert call["stdin"]["tool_input"] == {"command": PATCH}
    [call_id] = patch.call_ids()
    seen = model.wait_for_output(call_id).output_text(call_id) or ""
    patched = home.workspace / "patched.txt"
    if mode == "record":
        assert patched.read_text() == "patched by codex\n"
        assert "Success. Updated the following files:\nA patched.txt" in seen
        check_fixture("pre_tool_use_apply_patch", call["stdin"], home)
    else:
        assert not patched.exists()
        assert seen == f"Command blocked by PreToolUse hook: no patching. Command: {PATCH}"


def test_mcp_tool_is_reached_through_tool_search(
    model: ScriptedCodex, make_home: MakeHome, tmp_path: Path
) -> None:
    log, calls = tmp_path / "hooks.jsonl", tmp_path / "mcp-calls.jsonl"
    home = make_home(
        mcp_servers={"exo": stub_mcp_server(calls)},
        project_hooks=_probe_hooks(log, {"PreToolUse": "record", "PostToolUse": "record"}),
    )
    search = tool_search_reply("notify parent status")
    notify = mcp_reply("exo", "notify_parent", NOTIFY_ARGS)
    for reply in (search, notify, "reported"):
        model.add_reply(reply)

    result = run_exec(home, "report to your parent")

    assert result.returncode == 0, result.output()
    first = model.agent_requests()[0]
    assert "mcp__exo" not in json.dumps(first.tools)  # deferred: not offered up front
    [search_id], [call_id] = search.call_ids(), notify.call_ids()
    after_search = model.wait_for_output(search_id)
    # BM25 over every deferred tool: other namespaces (multi_agent_v1) may match too
    found = {t["name"]: t for t in after_search.tool_search_tools(search_id)}
    namespace = found["mcp__exo"]
    assert [t["name"] for t in namespace["tools"]] == ["notify_parent"]
    [search_output] = after_search.outputs(search_id)
    check_fixture("wire_tool_search_output", search_output, home, stable=("type", "tools"))
    assert [c["args"] for c in mcp_calls(calls)] == [NOTIFY_ARGS]
    after_call = model.wait_for_output(call_id)
    assert "notified parent: success" in (after_call.output_text(call_id) or "")
    [echoed] = [c for c in after_call.calls() if c.get("call_id") == call_id]
    assert (echoed["namespace"], echoed["name"]) == ("mcp__exo", "notify_parent")
    [call_output] = after_call.outputs(call_id)
    check_fixture("wire_mcp_function_call_output", call_output, home, stable=("type",))
    [pre] = hook_calls(log, "PreToolUse")
    assert pre["stdin"]["tool_name"] == "mcp__exo__notify_parent"
    check_fixture("pre_tool_use_mcp", pre["stdin"], home)
    [post] = hook_calls(log, "PostToolUse")
    check_fixture("post_tool_use_mcp", post["stdin"], home)


def test_pre_tool_use_hook_blocks_an_mcp_call(
    model: ScriptedCodex, make_home: MakeHome, tmp_path: Path
) -> None:
    log, calls = tmp_path / "hooks.jsonl", tmp_path / "mcp-calls.jsonl"
    home = make_home(
        mcp_servers={"exo": stub_mcp_server(calls)},
        project_hooks=_probe_hooks(log, {"PreToolUse": "deny"}, "not to your parent"),
    )
    notify = mcp_reply("exo", "notify_parent", NOTIFY_ARGS)
    for reply in (tool_search_reply("notify parent"), notify, "ok"):
        model.add_reply(reply)

    run_exec(home, "report to your parent")

    [call_id] = notify.call_ids()
    seen = model.wait_for_output(call_id).output_text(call_id)
    assert seen == (
        "Tool call blocked by PreToolUse hook: not to your parent. Tool: mcp__exo__notify_parent"
    )
    assert mcp_calls(calls) == []


@pytest.mark.parametrize("mode", ["allow", "deny", "record"])
def test_permission_request_hook_decides_an_mcp_call_that_needs_approval(
    model: ScriptedCodex, make_home: MakeHome, tmp_path: Path, mode: str
) -> None:
    """`default_tools_approval_mode = "prompt"` and no bypass flag: Codex asks the hook;
    a hook that decides nothing leaves it to the approval policy (`never` under exec)."""
    log, calls = tmp_path / "hooks.jsonl", tmp_path / "mcp-calls.jsonl"
    server = {**stub_mcp_server(calls), "default_tools_approval_mode": "prompt"}
    home = make_home(
        mcp_servers={"exo": server},
        project_hooks=_probe_hooks(log, {"PermissionRequest": mode}, "the lead said no"),
    )
    notify = mcp_reply("exo", "notify_parent", NOTIFY_ARGS)
    for reply in (tool_search_reply("notify parent"), notify, "ok"):
        model.add_reply(reply)

    result = run_exec(home, "report to your parent", bypass=False)

    assert result.returncode == 0, result.output()
    [call] = hook_calls(log, "PermissionRequest")
    [call_id] = notify.call_ids()
    seen = model.wait_for_output(call_id).output_text(call_id) or ""
    if mode == "allow":
        assert [c["args"] for c in mcp_calls(calls)] == [NOTIFY_ARGS]
        check_fixture("permission_request_mcp", call["stdin"], home)
    elif mode == "deny":
        assert mcp_calls(calls) == []
        assert seen.endswith("the lead said no"), seen
    else:  # no decision: Codex's own approval policy, `never` under exec, refuses
        assert mcp_calls(calls) == []
        assert seen.endswith("MCP tool call requires approval, but approval policy is never")


def test_stop_hook_can_send_the_model_back_to_work(
    model: ScriptedCodex, make_home: MakeHome, tmp_path: Path
) -> None:
    log = tmp_path / "hooks.jsonl"
    modes = {"SessionStart": "record", "UserPromptSubmit": "record", "Stop": "once-deny"}
    home = make_home(project_hooks=_probe_hooks(log, modes, "run the tests first"))
    model.add_text("first final answer")
    model.add_text("second final answer")

    result = run_exec(home, "finish up")

    assert result.returncode == 0, result.output()
    assert "second final answer" in result.stdout
    again = model.agent_requests()[1]
    # hook_run_id = <event label>:<display order of the handler among all hooks>:<file>
    [text] = again.last_user_texts()
    assert re.fullmatch(
        rf'<hook_prompt hook_run_id="stop:2:{re.escape(str(home.project_config_path))}">'
        r"run the tests first</hook_prompt>",
        text,
    ), text
    first, second = hook_calls(log, "Stop")
    assert (first["stdin"]["stop_hook_active"], second["stdin"]["stop_hook_active"]) == (
        False,
        True,
    )
    check_fixture("stop", first["stdin"], home)
    [start] = hook_calls(log, "SessionStart")
    check_fixture("session_start", start["stdin"], home)
    [prompt] = hook_calls(log, "UserPromptSubmit")
    check_fixture("user_prompt_submit", prompt["stdin"], home)


@pytest.mark.parametrize("where", ["project config", "worker command"])
def test_a_worker_gets_no_terminal_session_to_type_into(
    model: ScriptedCodex, make_home: MakeHome, where: str
) -> None:
    """Found probing (a fourth round): `exec_command {"cmd": "bash", "tty": true}` passed
    the hook as `bash`, and `write_stdin` (which Codex runs no hook for) then typed
    commands into it that moved the lead's `main` and read its token. With what `exomonad
    init` writes to the project's `.codex/config.toml`, or the `-c` of the worker command,
    Codex refuses the terminal; without one a session's stdin is closed. Here the real
    Codex is asked for the terminal, and a marker shows whether the shell started."""
    home = make_home()
    args: list[str] = []
    if where == "project config":
        home.write_project_config({"features": dict(FEATURES)})
    else:
        command = shlex.split(CODEX.worker_command or "")
        i = command.index("features.unified_exec_tty=false")
        args = command[i - 1 : i + 1]
    shell = model.add_shell("touch started; bash", tty=True, yield_time_ms=500)
    model.add_text("no terminal then")

    result = run_exec(home, "open a shell", extra_args=args)

    assert result.returncode == 0, result.output()
    [call_id] = shell.call_ids()
    seen = model.wait_for_output(call_id).output_text(call_id) or ""
    assert "TTY execution is disabled by config" in seen, seen
    assert not (home.workspace / "started").exists()
