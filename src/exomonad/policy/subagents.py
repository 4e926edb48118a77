"""Claude Code's ``Agent`` (``Task``) tool: a subagent, and where its isolation writes.

A subagent runs in the same process as the agent that starts it, its tool calls passing
the same hooks: the call itself is the runtime's bookkeeping (:class:`Internal`). Not
with ``isolation``: ``"worktree"`` makes Claude Code (2.1.330) run ``git worktree add``
for the subagent at ``<main checkout>/.claude/worktrees/agent-<id>`` on a new branch
``worktree-agent-<id>``, the main checkout found through the worktree's ``.git`` file
(found trying the gate as a worker: a worker's ``Agent {"isolation": "worktree"}``,
allowed as bookkeeping, checked its branch out into the lead's checkout); ``"remote"``
runs the subagent in a cloud environment, where no hook of this machine sees its calls.
So ``"worktree"`` is also a write of that directory (the lead's checkout: asked of the
lead when a worker does it), any other isolation is :class:`Unknown`.

>>> from exomonad.policy.request import ToolRequest
>>> agent(ToolRequest("claude", "worker", "w1", "Agent", {"prompt": "x"}, cwd="/nonexistent"))
[Internal(tool='Agent')]
>>> agent(ToolRequest("claude", "worker", "w1", "Agent", {"isolation": "worktree"},
...                   cwd="/nonexistent"))
[Internal(tool='Agent'), WriteFile(path=None)]
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from exomonad.gitlink import private_dir, read_small
from exomonad.policy.actions import Action, Internal, Unknown, WriteFile
from exomonad.policy.request import ToolRequest

__all__ = ["agent", "main_checkout"]

#: Where Claude Code puts a subagent's worktree, below the main checkout.
WORKTREES = ".claude/worktrees"
#: How many directories up from the cwd a ``.git`` is looked for.
_MAX_UP = 64


def agent(req: ToolRequest) -> list[Action]:
    """The actions of an ``Agent``/``Task`` call (see the module doc)."""
    found: list[Action] = [Internal(req.tool_name)]
    isolation = req.tool_input.get("isolation")
    if isolation is None:
        return found
    if isolation != "worktree":
        why = f"{req.tool_name} with isolation {str(isolation)[:40]!r}: a subagent run elsewhere"
        return [*found, Unknown(why)]
    root = main_checkout(req.cwd) if req.cwd else None
    return [*found, WriteFile(posixpath.join(root, WORKTREES) if root else None)]


def main_checkout(cwd: str) -> str | None:
    """The main checkout of the repository ``cwd`` is in, as Claude Code finds it for a
    subagent's worktree: the directory holding the common ``.git``, also from a linked
    worktree (its ``.git`` file names ``<common>/worktrees/<id>``, whose ``commondir``
    names the common dir). None where that cannot be read (a bare repository, no
    ``.git``, a file that is not so).

    >>> main_checkout("/nonexistent/x") is None
    True
    """
    here = posixpath.normpath(cwd)
    for _ in range(_MAX_UP):
        dot_git = posixpath.join(here, ".git")
        if os.path.isdir(dot_git):
            return os.path.realpath(here)
        if os.path.isfile(dot_git):
            return _common_parent(here)
        if here == "/":
            return None
        here = posixpath.dirname(here)
    return None


def _common_parent(checkout: str) -> str | None:
    """The main checkout a linked worktree's ``.git`` file leads to, or None."""
    private = private_dir(Path(checkout))
    if private is None:
        return None
    named = read_small(private / "commondir")
    common = os.path.realpath(private / named.strip()) if named else str(private)
    return posixpath.dirname(common) if posixpath.basename(common) == ".git" else None
