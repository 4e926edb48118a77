"""The built-in policy's decision on a call by worker ``w1`` in its worktree: the one
place the policy tests build that request.

>>> type(bash("ls")).__name__
'Allow'
"""

from __future__ import annotations

import subprocess
from functools import cache
from pathlib import Path
from typing import Any

from exomonad.policy.decisions import Decision
from exomonad.policy.engine import PolicyEngine
from exomonad.policy.request import ToolRequest

__all__ = ["ROOT", "WT", "bash", "decide", "engine_for", "request", "run_bash", "scratch_worktree"]

#: The project (its state dir is ``ROOT/.exomonad``) and the worker's worktree in it.
ROOT = "/p"
WT = f"{ROOT}/.worktrees/w1"


@cache
def engine_for(root: str) -> PolicyEngine:
    """A policy engine for the project at ``root`` (built-in policy)."""
    return PolicyEngine(state_dir=f"{root}/.exomonad")


def decide(tool: str, data: dict[str, Any], *, role: str = "worker", root: str = ROOT,
           runtime: str = "claude") -> Decision:  # fmt: skip
    """The decision on ``tool`` called with ``data``: by ``w1`` in its worktree
    ``root/.worktrees/w1`` on ``exo/w1``, or with another ``role`` in ``root``."""
    cwd = f"{root}/.worktrees/w1" if role == "worker" else root
    return engine_for(root).decide(request(tool, data, cwd, role=role, runtime=runtime))


def request(tool: str, data: dict[str, Any], worktree: str = WT, *, role: str = "worker",
            runtime: str = "claude") -> ToolRequest:  # fmt: skip
    """``w1``'s call of ``tool`` with ``data``, in ``worktree`` on ``exo/w1``."""
    return ToolRequest(runtime, role, "w1", tool, data, cwd=worktree, worktree=worktree,
                       branch="exo/w1")  # fmt: skip


def bash(command: str, *, role: str = "worker", root: str = ROOT) -> Decision:
    """:func:`decide` on a Claude Code ``Bash`` call running ``command``."""
    return decide("Bash", {"command": command}, role=role, root=root)


def scratch_worktree(
    tmp_path: Path, project: str = "p", *, token: str | None = None
) -> tuple[Path, Path]:
    """A project ``tmp_path/project`` and its worker's worktree ``.worktrees/w1`` (made),
    laid out as :data:`ROOT` and :data:`WT` are: where a real-effect test runs a command,
    then asks :func:`bash` about it with ``root=str(project)``; with ``token``, the lead's
    ``.exomonad/lead.token`` holding it."""
    root = tmp_path / project
    wt = root / ".worktrees" / "w1"
    wt.mkdir(parents=True)
    if token is not None:
        (root / ".exomonad").mkdir()
        (root / ".exomonad" / "lead.token").write_text(token + "\n")
    return root, wt


def run_bash(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` run for real by ``bash -c`` in ``cwd`` (10 s at most), its output kept:
    the harm a real-effect test shows before asking :func:`bash` about it."""
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True,
                          check=False, timeout=10)  # fmt: skip
