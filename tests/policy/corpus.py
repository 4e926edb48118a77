"""Shared vocabulary for the classifier corpus: where the agent is, and action shorthands."""

from __future__ import annotations

from typing import Any

from exomonad.policy.actions import Action, DeleteBranch, GitPush, Shell, Unknown
from exomonad.policy.request import Runtime

#: The agent's worktree (and starting cwd) and branch in every corpus case.
W = "/w/repo"
BR = "feat/x"
HOME = "/home/agent"

#: Matches any Unknown (its raw text is not part of the contract).
ANY_UNKNOWN = Unknown("*")

Case = tuple[Runtime, str, dict[str, Any], list[Action]]


def sh(*argv: str, cwd: str | None = W, priv: bool = False) -> Shell:
    """A plain shell action."""
    return Shell(tuple(argv), cwd, priv)


def push(
    remote: str | None = "origin",
    branch: str | None = None,
    force: bool = False,
    lease: bool = False,
    repo: str | None = W,
) -> GitPush:
    """A push."""
    return GitPush(remote, branch, force, lease, repo)


def delbr(name: str | None, remote: str | None = None, force: bool = True) -> DeleteBranch:
    """A branch deletion."""
    return DeleteBranch(name, remote, force)


def bash(command: str, *actions: Action) -> Case:
    """A Claude Code Bash call."""
    return ("claude", "Bash", {"command": command, "description": "x"}, list(actions))


def gsh(command: str, *actions: Action, directory: str | None = None) -> Case:
    """A Gemini CLI run_shell_command call."""
    data: dict[str, Any] = {"command": command}
    if directory is not None:
        data["directory"] = directory
    return ("gemini", "run_shell_command", data, list(actions))


def tool(runtime: Runtime, name: str, data: dict[str, Any], *actions: Action) -> Case:
    """Any other tool call."""
    return (runtime, name, data, list(actions))


def same(actual: list[Action], expected: list[Action]) -> bool:
    """Equal, where ANY_UNKNOWN matches any Unknown."""
    if len(actual) != len(expected):
        return False
    return all(
        e == a or (e == ANY_UNKNOWN and isinstance(a, Unknown))
        for a, e in zip(actual, expected, strict=True)
    )
