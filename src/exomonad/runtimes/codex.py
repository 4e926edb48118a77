"""Codex CLI: a worker (``spawn_workers``, ``exomonad worker start --runtime codex``, or a
teammate the lead spawns as ``subagent_type: "codex-worker"``).

Project config lives in ``.codex/config.toml``: the ``exo`` MCP server (worker role; Codex
passes the listed variables ``EXOMONAD_TOKEN`` / ``EXOMONAD_DIR`` through ``env_vars``)
and ExoMonad's hooks (``[[hooks.PreToolUse]]``, ``PermissionRequest``, ``Stop``, ...; no
matcher: every tool). Codex runs only hooks the user trusted (see
:mod:`exomonad.runtimes.codex_trust`): no gate, no start.

Answers (0.169): a PreToolUse block is ``hookSpecificOutput.permissionDecision: "deny"``
with its reason, exit 0; to let a call run the hook prints *nothing* (``"allow"`` without
``updatedInput`` and ``"ask"`` are invalid, and an invalid answer lets the call run). So
an ``ask`` ExoMonad could not settle (the server's cascade already waited for the lead
and a human) is a deny here: fail closed. A PermissionRequest (Codex's own approval
prompt) is judged by the same policy and answered ``decision.behavior`` allow / deny.
Shell runs as tool ``Bash`` (``command``), file edits as ``apply_patch`` (the whole patch
text in ``command``, read by :mod:`exomonad.policy.patch`), MCP tools as
``mcp__<server>__<tool>``.

>>> CODEX.decision_output("allow", "ok")
{}
>>> CODEX.answer("permission-request", "allow", "ok")["hookSpecificOutput"]["decision"]
{'behavior': 'allow'}
>>> CODEX.decision_output("ask", "lead?")["hookSpecificOutput"]["permissionDecision"]
'deny'
>>> CODEX.event("permission-request"), CODEX.gates("permission-request")
('pre-tool-use', True)
"""

from __future__ import annotations

from exomonad.runtimes.base import Runtime, hook_command, set_hooks

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the hook client imports this module
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any, ClassVar

    from exomonad.setup import ProjectFiles

__all__ = [
    "CODEX",
    "CODEX_AGENT",
    "CONFIG_FILE",
    "FEATURES",
    "HOOKS",
    "WORKER_INSTRUCTIONS",
    "CodexCli",
]

#: The project config ``init`` writes (MCP server and hooks), relative to the project.
CONFIG_FILE = ".codex/config.toml"

#: The agent type ``init`` gives the lead (``.claude/agents/codex-worker.md``).
CODEX_AGENT = """---
name: codex-worker
description: A Codex CLI teammate run by ExoMonad. Give it a self-contained task; it
  reports back with notify_parent and can be messaged with SendMessage.
---
You are a Codex CLI worker in a Claude Code agent team, run by ExoMonad.
To report to the lead, find ExoMonad's tools first: search your tools for
"notify_parent" (tool_search), then call notify_parent with your message.
"""

#: What a Codex worker is told (its ``developer_instructions``): its task arrives as a
#: teammate message, and ExoMonad's tools are deferred behind ``tool_search``.
WORKER_INSTRUCTIONS = (
    "You are a worker in a Claude Code agent team, run by ExoMonad. Messages from your lead "
    "arrive as your prompts. When you are done, or need something, report to the lead with "
    "the notify_parent tool of the exo MCP server: it is deferred, so search your tools for "
    "notify_parent (tool_search) first, then call it."
)

#: Codex event, the hook client's event name: the hooks ``init`` writes (no matcher).
HOOKS = (
    ("SessionStart", "session-start"),
    ("UserPromptSubmit", "user-prompt-submit"),
    ("PreToolUse", "pre-tool-use"),
    ("PermissionRequest", "permission-request"),
    ("Stop", "stop"),
)

#: Codex features ``init`` turns off for the project: a terminal session (``tty``) would
#: keep stdin open to ``write_stdin``, a tool Codex gives no ``PreToolUse`` hook.
FEATURES = {"unified_exec_tty": False}

#: Why an escalation that came back unanswered is a deny for Codex.
_ASK = ("needs an approval ExoMonad could not get (Codex cannot ask on a hook's behalf, "
        "so the call is refused)")  # fmt: skip


class CodexCli(Runtime):
    """Codex CLI (npm ``@openai/codex``)."""

    name = "codex"
    title = "Codex CLI"
    program = "codex"
    npm_package = "@openai/codex"
    # --no-daemon: the TUI's background daemon is shared between sessions (environment
    # included); bypass: Codex's sandbox would stop git in a worktree (its git dir is the
    # main repository's), and its approvals would stop an unattended worker. ExoMonad's
    # policy, through the hooks, is the gate.
    # features.unified_exec_tty off: a terminal session's stdin takes `write_stdin`, which
    # Codex runs no hook for (found probing: `exec_command bash` with `tty`, then
    # `write_stdin` typed commands no policy saw); without a terminal, stdin is closed.
    worker_command = (
        "codex --no-daemon --dangerously-bypass-approvals-and-sandbox "
        "-c features.unified_exec_tty=false "
        f"-c 'developer_instructions=\"{WORKER_INSTRUCTIONS}\"'"
    )
    ready_marker = "Ask Codex to do anything"
    #: Its prompt shows before its MCP servers are up, and a ``tool_search`` made before
    #: then finds no ``notify_parent`` (seen with 0.169 in a mixed team's e2e test).
    waits_for_mcp = True
    settings_file = CONFIG_FILE
    silent_empty = True
    #: Codex skips a hook it does not trust, or runs none with ``features.hooks`` off,
    #: and a hook that fails lets the call through: trust alone proves nothing live.
    gate_probe = True
    gate_fix = (
        "check that Codex runs hooks (`codex features list` shows hooks true: no "
        "`[features] hooks = false` in $CODEX_HOME/config.toml, no `-c features.hooks=false` "
        "in the worker command), that ExoMonad's hooks are trusted (`exomonad init "
        "--trust-codex-hooks`), and that the `exomonad` command in .codex/config.toml runs "
        "in the worker's environment"
    )
    events: ClassVar[Mapping[str, str]] = {"permission-request": "pre-tool-use"}
    tools: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "Bash": ("shell", "command"),
        "apply_patch": ("patch", "command"),
        "view_image": ("read", "path"),  # its hook sees {"path"}: a read of the file
    }

    def decision_output(self, kind: str, reason: str) -> dict[str, Any]:
        """Nothing to allow, ``permissionDecision: "deny"`` otherwise (``ask`` included)."""
        if kind == "allow":
            return {}
        if kind == "ask":
            reason = f"{reason} ({_ASK})"
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                       "permissionDecision": "deny",
                                       "permissionDecisionReason": reason}}  # fmt: skip

    def answer(self, event: str, kind: str, reason: str) -> dict[str, Any]:
        """A PermissionRequest gets ``decision.behavior``; a PreToolUse as above."""
        if event != "permission-request":
            return self.decision_output(kind, reason)
        decision: dict[str, Any] = {"behavior": "allow"}
        if kind != "allow":
            message = reason if kind == "deny" else f"{reason} ({_ASK})"
            decision = {"behavior": "deny", "message": message}
        return {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                       "decision": decision}}  # fmt: skip

    def configure(self, files: ProjectFiles, exo: str, approval_timeout: float,
                  teammate: str) -> None:  # fmt: skip
        """The ``exo`` MCP server and ExoMonad's hooks; the lead's ``codex-worker``."""
        import shlex

        del teammate
        data = files.toml(CONFIG_FILE)
        argv = shlex.split(exo)
        servers = data.setdefault("mcp_servers", {})
        servers["exo"] = {"command": argv[0],
                          "args": [*argv[1:], "mcp-stdio", "--role", "worker"],
                          "env_vars": ["EXOMONAD_TOKEN", "EXOMONAD_DIR"],
                          "startup_timeout_sec": 30,
                          # ExoMonad's policy judges each call (hook and server): no
                          # Codex dialog for an unattended worker.
                          "default_tools_approval_mode": "approve"}  # fmt: skip
        found = data.get("hooks")  # rebuilt as plain data: the same text on every run
        hooks: dict[str, Any] = found.unwrap() if hasattr(found, "unwrap") else {}
        wait = int(approval_timeout) + 30  # seconds; the hook may wait for an approval
        for event, ours in HOOKS:
            set_hooks(hooks, event, None, hook_command(exo, ours, self, approval_timeout),
                      wait)  # fmt: skip
        data["hooks"] = hooks
        features = data.setdefault("features", {})
        features.update(FEATURES)  # also for a worker command of the user's
        files.text_once(".claude/agents/codex-worker.md", CODEX_AGENT)

    def check_gate(self, checkout: Path, *, consent: bool) -> dict[str, str]:
        """Record (with ``consent``) and verify trust of ExoMonad's hooks in ``checkout``
        for the Codex home the worker will use; returns the environment that pins it."""
        from exomonad.runtimes import codex_trust

        home = codex_trust.codex_home()
        hooks_file = checkout / CONFIG_FILE
        if consent:
            codex_trust.record_trust(home, hooks_file, checkout)
        codex_trust.require_trusted(home, hooks_file, checkout)
        return {"CODEX_HOME": str(home)}


CODEX = CodexCli()
