"""What the server hands the engine (:class:`ToolRequest`) and what rules see (:class:`Context`).

>>> req = ToolRequest.from_hook("claude", {"tool_name": "Bash", "cwd": "/w",
...     "tool_input": {"command": "ls"}}, role="dev", agent="dev1")
>>> req.tool_name, req.cwd, req.role
('Bash', '/w', 'dev')
>>> ctx = Context(role="dev", agent="dev1", worktree="/w/a", branch="feat",
...               protected_branches=("main", "release/*"))
>>> ctx.in_worktree("/w/a/x.py"), ctx.is_protected("release/1.2"), ctx.is_own_branch("feat")
(True, True, True)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from exomonad import runtimes
from exomonad.policy.shell_env import is_within
from exomonad.util.paths import real_path

__all__ = ["MCP_CONTEXT_MAX", "RUNTIMES", "Context", "Runtime", "ToolRequest", "mcp_context_of"]

#: A runtime's name (:mod:`exomonad.runtimes`), or ``"mcp"``: a call to ExoMonad's own
#: MCP tools.
Runtime = str
#: The runtimes the classifier knows.
RUNTIMES: tuple[Runtime, ...] = (*runtimes.names(), "mcp")
#: The longest server or tool name taken from a hook's ``mcp_context`` (Gemini CLI's
#: names of its tools are at most 63 characters): a longer one is not taken.
MCP_CONTEXT_MAX = 64


@dataclass(frozen=True)
class ToolRequest:
    """One raw tool call to judge.

    ``runtime`` names whose tool vocabulary ``tool_name`` is in: a runtime of
    :mod:`exomonad.runtimes` (``"claude"``: Claude Code's PreToolUse hook, ``"gemini"``:
    Gemini CLI's BeforeTool hook...) or ``"mcp"`` (a call to one of ExoMonad's own MCP
    tools). ``worktree``/``branch`` are the agent's checkout
    and branch when the server knows them; without them ``git push`` with no refspec has
    an unknown branch, and the built-in policy escalates it.

    ``mcp_context`` is the ``(server, tool)`` the runtime itself says an MCP call goes to
    (Gemini CLI's BeforeTool input carries ``mcp_context``, made by the CLI from the tool
    it is about to run, not by the model); it counts only where the runtime spells
    ``tool_name`` from it exactly (:meth:`exomonad.runtimes.base.Runtime.mcp_exact`),
    else the name is split every way it may (:func:`~exomonad.policy.mcp_names.riskiest`).
    """

    runtime: Runtime
    role: str
    agent: str
    tool_name: str
    tool_input: Mapping[str, Any] = field(default_factory=dict, hash=False)
    cwd: str | None = None
    worktree: str | None = None
    branch: str | None = None
    team: str | None = None
    mcp_context: tuple[str, str] | None = None

    @classmethod
    def from_hook(
        cls,
        runtime: Runtime,
        payload: Mapping[str, Any],
        *,
        role: str,
        agent: str,
        worktree: str | None = None,
        branch: str | None = None,
        team: str | None = None,
    ) -> ToolRequest:
        """Build from a PreToolUse / BeforeTool hook's stdin JSON (``tool_name``,
        ``tool_input``, ``cwd``, ``mcp_context``: :func:`mcp_context_of`)."""
        tool_input = payload.get("tool_input")
        return cls(
            runtime=runtime,
            role=role,
            agent=agent,
            tool_name=str(payload.get("tool_name", "")),
            tool_input=tool_input if isinstance(tool_input, Mapping) else {},
            cwd=payload.get("cwd") if isinstance(payload.get("cwd"), str) else None,
            worktree=worktree,
            branch=branch,
            team=team,
            mcp_context=mcp_context_of(payload),
        )


def mcp_context_of(payload: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(server_name, tool_name)`` of a hook input's ``mcp_context`` (Gemini CLI's
    BeforeTool: ``{server_name, tool_name, command, args, cwd, url, tcp}``), or None if
    it is missing or not so: not an object, either name not a string, empty or longer
    than :data:`MCP_CONTEXT_MAX`.

    >>> mcp_context_of({"mcp_context": {"server_name": "github", "tool_name": "get_me"}})
    ('github', 'get_me')
    >>> mcp_context_of({"mcp_context": {"server_name": "github", "tool_name": 1}}) is None
    True
    """
    told = payload.get("mcp_context")
    if not isinstance(told, Mapping):
        return None
    server, tool = told.get("server_name"), told.get("tool_name")
    if not isinstance(server, str) or not isinstance(tool, str):
        return None
    if not 0 < len(server) <= MCP_CONTEXT_MAX or not 0 < len(tool) <= MCP_CONTEXT_MAX:
        return None
    return server, tool


@dataclass(frozen=True)
class Context:
    """What a rule knows about who is acting, and where.

    ``on_behalf_of`` is set while the lead's permission set is consulted for another
    agent's request (the cascade's second step); it names the lead role, and ``role``,
    ``agent``, ``worktree`` and ``branch`` are still the requester's.
    """

    role: str
    agent: str = ""
    runtime: Runtime = "claude"
    cwd: str | None = None
    worktree: str | None = None
    branch: str | None = None
    team: str | None = None
    project_root: str | None = None
    state_dir: str | None = None
    protected_branches: tuple[str, ...] = ("main", "master")
    on_behalf_of: str | None = None

    def in_worktree(self, path: str | None) -> bool:
        """``path`` is inside the agent's worktree (False if either is unknown), also once
        the symlinks on it are followed (``ln -s ../../.git/exomonad-hooks hk``, then
        ``Write hk/pre-push``: lexically inside, really the lead's hooks). A ``.git``
        on the path is not the agent's to write: the worktree's ``.git`` file names the
        repository git works on (``echo 'gitdir: ../../.git' > .git``, then ``git
        commit`` commits onto the lead's ``main``; removed, git finds the project's)."""
        return (
            is_within(path, self.worktree)
            and really_within(path, self.worktree)
            and not git_metadata(path)
        )

    def in_project(self, path: str | None) -> bool:
        """``path`` is inside the project (the directory holding ``.exomonad/``), also
        once the symlinks on it are followed."""
        return is_within(path, self.project_root) and really_within(path, self.project_root)

    def in_state_dir(self, path: str | None) -> bool:
        """``path`` is inside ``.exomonad/`` (where the policy itself lives), lexically or
        once the symlinks on it are followed."""
        return is_within(path, self.state_dir) or really_within(path, self.state_dir)

    def is_protected(self, branch: str | None) -> bool:
        """``branch`` matches a protected pattern; an unknown branch counts as protected."""
        if branch is None:
            return True
        return any(fnmatchcase(branch, pattern) for pattern in self.protected_branches)

    def is_own_branch(self, branch: str | None) -> bool:
        """``branch`` is the agent's own (known, unprotected) branch."""
        return branch is not None and branch == self.branch and not self.is_protected(branch)

    @property
    def home(self) -> str:
        """The user's home directory (``~``)."""
        return os.path.expanduser("~")


def really_within(path: str | None, root: str | None) -> bool:
    """Whether ``path`` with its symlinks followed lies in ``root`` with its own followed
    (False if either is unknown, or where its links lead cannot be known).

    >>> really_within("/nonexistent/a/b", "/nonexistent/a"), really_within("/etc", "/usr")
    (True, False)
    """
    if path is None or root is None:
        return False
    real = real_path(path)
    return real is not None and is_within(real, real_path(root))


def git_metadata(path: str | None) -> bool:
    """Whether ``path`` is a ``.git`` (file or directory) or lies below one.

    >>> git_metadata("/w/.git"), git_metadata("/w/.git/config"), git_metadata("/w/.gitignore")
    (True, True, False)
    """
    return path is not None and "/.git/" in path + "/"
