"""Claude Code: the lead, and teammates it spawns (through ``exomonad teammate``).

Hooks live in ``.claude/settings.json`` and use ExoMonad's event names directly. A
PreToolUse answer is ``hookSpecificOutput.permissionDecision`` (allow / deny / ask)
with its reason, exit 0. MCP tools are named ``mcp__<server>__<tool>``.
``init`` also turns agent teams on, sets ``teammateMode: "tmux"`` and names
``exomonad-teammate`` in ``CLAUDE_CODE_TEAMMATE_COMMAND``: Claude Code (2.1.330) runs
that variable as *one program*, shell-quoted, before its own arguments, so the two
words ``exomonad teammate`` would be looked up as a file of that name.

>>> CLAUDE.decision_output("deny", "no")["hookSpecificOutput"]["permissionDecision"]
'deny'
>>> CLAUDE.mcp_tool("mcp__exo__notify_parent")
('exo', 'notify_parent')
"""

from __future__ import annotations

from exomonad.runtimes.base import Runtime, hook_command, set_hooks

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the hook client imports this module
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, ClassVar

    from exomonad.setup import ProjectFiles

__all__ = ["CLAUDE", "ClaudeCode"]

_INTERNAL = ("TodoWrite", "TodoRead", "SendMessage", "ExitPlanMode",
             "EnterPlanMode", "BashOutput", "KillShell", "KillBash", "TeamCreate",
             "TeamDelete", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet", "TaskOutput",
             "TaskStop", "Skill", "SlashCommand", "AskUserQuestion", "ListMcpResourcesTool",
             "ReadMcpResourceTool")  # fmt: skip

#: Settings event, matcher, ExoMonad's event: the hooks ``init`` writes.
HOOKS = (
    ("SessionStart", None, "session-start"),
    ("UserPromptSubmit", None, "user-prompt-submit"),
    ("PreToolUse", "*", "pre-tool-use"),
    ("PostToolUse", "TeamCreate|TeamDelete", "post-tool-use"),
    ("Stop", None, "stop"),
)


class ClaudeCode(Runtime):
    """Claude Code (npm ``@anthropic-ai/claude-code``)."""

    name = "claude"
    title = "Claude Code"
    program = "claude"
    npm_package = "@anthropic-ai/claude-code"
    can_lead = True
    #: The lead's prompt is the user's terminal; a teammate's goes to the lead's.
    prompt_reaches_person = True
    native_teammate = True
    settings_file = ".claude/settings.json"
    tools: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "Bash": ("shell", "command"),
        "Read": ("read", "file_path"),
        "NotebookRead": ("read", "notebook_path"),
        "Write": ("write", "file_path"),
        "Edit": ("write", "file_path"),
        "MultiEdit": ("write", "file_path"),
        "NotebookEdit": ("write", "notebook_path"),
        "Glob": ("glob", "pattern", "path"),
        "Grep": ("grep", "glob", "path"),
        "LS": ("list", "path"),
        "WebFetch": ("fetch",),
        "WebSearch": ("search",),
        **dict.fromkeys(("Task", "Agent"), ("agent",)),
        **dict.fromkeys(_INTERNAL, ("internal",)),
    }

    def decision_output(self, kind: str, reason: str) -> dict[str, Any]:
        """``hookSpecificOutput`` with the permission decision and its reason."""
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                       "permissionDecision": kind,
                                       "permissionDecisionReason": reason}}  # fmt: skip

    def configure(self, files: ProjectFiles, exo: str, approval_timeout: float,
                  teammate: str) -> None:  # fmt: skip
        """Agent teams on, the teammate command, and ExoMonad's hooks."""
        data = files.json(self.settings_file or "")
        env = data.setdefault("env", {})
        env["CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS"] = "1"
        env["CLAUDE_CODE_TEAMMATE_COMMAND"] = teammate
        data["teammateMode"] = "tmux"
        hooks = data.setdefault("hooks", {})
        wait = int(approval_timeout) + 30  # the hook may wait for an approval
        for event, matcher, ours in HOOKS:
            set_hooks(hooks, event, matcher, hook_command(exo, ours, self, approval_timeout),
                      wait)  # fmt: skip


CLAUDE = ClaudeCode()
