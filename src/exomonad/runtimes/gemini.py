"""Gemini CLI: a worker (``spawn_workers``, ``exomonad worker start``, or a teammate the
lead spawns as ``subagent_type: "gemini-worker"``).

Hooks live in ``.gemini/settings.json`` (timeouts in ms) with the ``exo`` MCP server
(worker role, the token from ``$EXOMONAD_TOKEN``). Its events map onto ExoMonad's:
BeforeAgent → user-prompt-submit, BeforeTool → pre-tool-use, AfterAgent → stop (fired
every turn). A BeforeTool answer is ``{"decision": ..., "reason": ...}`` on stdout:
Gemini does not block on an exit 2 without output, so exit codes are never relied on.
MCP tools are named ``mcp_<server>_<tool>``, and server names may hold ``_`` too.

>>> GEMINI.decision_output("deny", "no")
{'decision': 'deny', 'reason': 'no'}
>>> GEMINI.event("before-tool"), GEMINI.mcp_tool("mcp_my_fs_write", ["my_fs"])
('pre-tool-use', ('my_fs', 'write'))
"""

from __future__ import annotations

from exomonad.runtimes.base import Runtime, hook_command, set_hooks, splits

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the hook client imports this module
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path
    from typing import Any, ClassVar

    from exomonad.setup import ProjectFiles

__all__ = ["GEMINI", "GEMINI_AGENT", "GeminiCli"]

#: The agent type ``init`` gives the lead (``.claude/agents/gemini-worker.md``).
GEMINI_AGENT = """---
name: gemini-worker
description: A Gemini CLI teammate run by ExoMonad. Give it a self-contained task; it
  reports back with notify_parent and can be messaged with SendMessage.
---
You are a Gemini CLI worker in a Claude Code agent team, run by ExoMonad.
"""

#: Settings event, matcher, the hook client's event name: the hooks ``init`` writes.
HOOKS = (
    ("SessionStart", None, "session-start"),
    ("BeforeAgent", None, "before-agent"),
    ("BeforeTool", "*", "before-tool"),
    ("AfterAgent", None, "after-agent"),
)
_PATH = ("file_path", "absolute_path", "path")
_DIR = ("path", "dir_path")


class GeminiCli(Runtime):
    """Gemini CLI (npm ``@google/gemini-cli``)."""

    name = "gemini"
    title = "Gemini CLI"
    program = "gemini"
    npm_package = "@google/gemini-cli"
    worker_command = "gemini --yolo"
    #: Set for every Gemini worker with a worktree. Gemini loads the workspace's ``.env``
    #: into its environment, except a variable already set, and a folder it takes for
    #: untrusted runs no project hook: found probing, a worker's ``.env`` with
    #: ``GEMINI_RESTRICTED_MODE=true`` made its next session run every tool call with no
    #: ExoMonad hook. Set here, neither can be overridden; the worktree is ExoMonad's,
    #: and trusting it is what lets the project's hooks (the gate) run at all.
    TRUSTED_ENV: ClassVar[Mapping[str, str]] = {
        "GEMINI_RESTRICTED_MODE": "false",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    ready_marker = "Type your message or @path/to/file"
    #: The longest name Gemini CLI gives an MCP tool uncut (``MAX_FUNCTION_NAME_LENGTH``
    #: less one).
    MCP_NAME_MAX = 63
    settings_file = ".gemini/settings.json"
    events: ClassVar[Mapping[str, str]] = {
        "before-agent": "user-prompt-submit",
        "before-tool": "pre-tool-use",
        "after-tool": "post-tool-use",
        "after-agent": "stop",
    }
    tools: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "run_shell_command": ("shell", "command"),
        "read_file": ("read_at", "absolute_path", "file_path", "path"),
        "read_many_files": ("read_many", "include", "paths"),
        "write_file": ("write_at", *_PATH),
        "replace": ("edit_at", *_PATH),
        "edit": ("edit_at", *_PATH),
        "list_directory": ("list", "path", "dir_path", "absolute_path"),
        "glob": ("glob", "pattern", *_DIR),
        "search_file_content": ("grep_all", "include", *_DIR),
        "grep": ("grep_all", "include", *_DIR),
        "grep_search": ("grep_all", "include_pattern", *_DIR),
        "web_fetch": ("fetch",),
        "google_web_search": ("search",),
        "save_memory": ("fixed_write", "~/.gemini/GEMINI.md"),
        **dict.fromkeys(("write_todos", "activate_skill", "delegate_to_agent",
                         "codebase_investigator"), ("internal",)),
    }  # fmt: skip

    def check_gate(self, checkout: Path, *, consent: bool) -> dict[str, str]:
        """The environment that keeps the worktree's ``.env`` from turning the gate off
        (:attr:`TRUSTED_ENV`)."""
        del checkout, consent
        return dict(self.TRUSTED_ENV)

    def shell_commands(self, command: str) -> list[str]:
        """``command`` and what ``run_shell_command`` runs for it once it has taken a
        ``bash -c`` wrapper off (:mod:`exomonad.runtimes.gemini_shell`).

        >>> GEMINI.shell_commands("bash -c 'ls' 'x; rm y'")
        ["bash -c 'ls' 'x; rm y'", "ls' 'x; rm y"]
        """
        from exomonad.runtimes.gemini_shell import commands

        return commands(command)

    def decision_output(self, kind: str, reason: str) -> dict[str, Any]:
        """``decision`` and ``reason`` at the top level."""
        return {"decision": kind, "reason": reason}

    def mcp_readings(self, name: str, servers: Sequence[str] = ()) -> list[tuple[str, str]]:
        """``mcp_<server>_<tool>``: a known server name that fits first (the longest
        first), then each split at a ``_``, the first first (server names may hold ``_``
        too: ``mcp_code_search_run_command`` is ``code``'s ``search_run_command`` or
        ``code_search``'s ``run_command``). ``mcp__<server>__<tool>`` is read both ways.

        >>> GEMINI.mcp_readings("mcp_code_search_run")
        [('code', 'search_run'), ('code_search', 'run')]
        """
        if not name.startswith("mcp_"):
            return []
        rest = name[4:]
        known = [(s, rest[len(s) + 1 :]) for s in sorted(servers, key=len, reverse=True)
                 if s and rest.startswith(s + "_") and len(rest) > len(s) + 1]  # fmt: skip
        found = [*known, *super().mcp_readings(name), *splits(rest, "_")]
        return list(dict.fromkeys(found))

    def mcp_exact(self, name: str, server: str, tool: str) -> bool:
        """``name`` is ``mcp_<server>_<tool>`` as Gemini CLI makes it, nothing in it
        changed. Its ``generateValidName`` writes ``_`` for each character outside
        ``[A-Za-z0-9_.:-]``, cuts a name over 63 characters around ``...`` and gives a
        server named ``mcp_...`` no second prefix: a name so made is not what the server
        and tool say, and is split every way instead.

        >>> GEMINI.mcp_exact("mcp_github_get_merge_base", "github", "get_merge_base")
        True
        >>> GEMINI.mcp_exact("mcp_github_get_merge_base", "github_get", "get_merge_base")
        False
        >>> GEMINI.mcp_exact("mcp_my_srv_x", "my srv", "x")
        False
        >>> GEMINI.mcp_exact("mcp_mcp_a_b", "mcp_a", "b")  # Gemini's name for it: mcp_a_b
        False
        """
        return (
            bool(server) and bool(tool) and not server.startswith("mcp_")
            and len(name) <= self.MCP_NAME_MAX and name == f"mcp_{server}_{tool}"
            and all(c.isascii() and (c.isalnum() or c in "_-.:") for c in name)
        )  # fmt: skip

    def configure(self, files: ProjectFiles, exo: str, approval_timeout: float,
                  teammate: str) -> None:  # fmt: skip
        """The ``exo`` MCP server and ExoMonad's hooks; the lead's ``gemini-worker``."""
        import shlex

        del teammate
        data = files.json(self.settings_file or "")
        argv = shlex.split(exo)
        servers = data.setdefault("mcpServers", {})
        servers["exo"] = {"command": argv[0],
                          "args": [*argv[1:], "mcp-stdio", "--role", "worker"],
                          "env": {"EXOMONAD_TOKEN": "$EXOMONAD_TOKEN",
                                  "EXOMONAD_DIR": "$EXOMONAD_DIR"}}  # fmt: skip
        hooks = data.setdefault("hooks", {})
        wait_ms = (int(approval_timeout) + 30) * 1000  # Gemini hook timeouts are in ms
        for event, matcher, ours in HOOKS:
            set_hooks(hooks, event, matcher, hook_command(exo, ours, self, approval_timeout),
                      wait_ms)  # fmt: skip
        files.text_once(".claude/agents/gemini-worker.md", GEMINI_AGENT)


GEMINI = GeminiCli()
