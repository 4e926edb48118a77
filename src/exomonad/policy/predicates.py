"""Ready-made, typed predicates for ``Grant(..., when=...)`` and ``Forbid(..., when=...)``.

Every predicate treats unknown values (``None``) conservatively: "inside the worktree"
is false for an unknown path, "unprotected branch" is false for an unknown branch.

>>> from exomonad.policy.actions import GitPush, WriteFile
>>> ctx = Context(role="dev", worktree="/w/dev1", branch="feat")
>>> in_worktree(WriteFile("/w/dev1/a.py"), ctx), own_branch(GitPush(branch="feat"), ctx)
(True, True)
>>> all_of(own_branch, no_blind_force)(GitPush(branch="feat", force=True), ctx)
False
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import TypeVar

from exomonad.policy.actions import (
    Action,
    DeleteBranch,
    DeleteFile,
    GitPush,
    McpTool,
    Network,
    Shell,
)
from exomonad.policy.credentials import secret_path
from exomonad.policy.mcp_names import own_tool, reads_only
from exomonad.policy.predicates_state import (
    HasPath,
    command_words,
    reads_others_mail,
    reads_others_spool,
    reads_state_dir,
    reads_state_tree,
    shell_touches_control_files,
    shell_touches_state,
    touches_control_files,
    touches_team_files,
)
from exomonad.policy.request import Context
from exomonad.policy.shell_classify import SHELLS
from exomonad.policy.state_reads import (
    STATE_FILES,
    STATE_NAMES,
    holds_state_dir,
)
from exomonad.util.selfexec import HOOK_FRONT

__all__ = [
    "STATE_FILES",
    "STATE_NAMES",
    "SYSTEM_DIRS",
    "HasPath",
    "all_of",
    "any_of",
    "catastrophic_delete",
    "exomonad_control",
    "holds_state_dir",
    "host_in",
    "in_project",
    "in_worktree",
    "known_host",
    "mcp_reads",
    "negate",
    "no_blind_force",
    "own_branch",
    "protected_branch",
    "reads_others_mail",
    "reads_others_spool",
    "reads_state_dir",
    "reads_state_tree",
    "secret_path",
    "shell_touches_control_files",
    "shell_touches_state",
    "touches_control_files",
    "touches_team_files",
    "unprivileged",
    "unprotected_branch",
]

A = TypeVar("A", bound=Action)
Pred = Callable[[A, Context], bool]

#: Top-level directories whose recursive deletion is never an agent's business.
SYSTEM_DIRS = frozenset(
    {
        "/",
        "/bin",
        "/boot",
        "/dev",
        "/etc",
        "/home",
        "/lib",
        "/lib32",
        "/lib64",
        "/opt",
        "/proc",
        "/root",
        "/run",
        "/sbin",
        "/srv",
        "/sys",
        "/usr",
        "/var",
        "/tmp",
        "/mnt",
        "/media",
        "/nix",
        "/snap",
    }
)


def in_worktree(action: HasPath, ctx: Context) -> bool:
    """The action's path is inside the agent's worktree."""
    return ctx.in_worktree(action.path)


def in_project(action: HasPath, ctx: Context) -> bool:
    """The action's path is inside the project root."""
    return ctx.in_project(action.path)


#: ``exomonad`` commands an agent may run (read-only); every other one is a person's.
AGENT_EXOMONAD_COMMANDS = frozenset({("version",), ("status",), ("doctor",), ("team", "list"),
                                     ("team", "show"), ("task", "list"), ("task", "get"),
                                     ("policy", "explain"), ("worker", "list"),
                                     ("notify",)})  # fmt: skip


def exomonad_control(action: Shell, ctx: Context) -> bool:
    """The command runs an ExoMonad command that is a person's or the server's to run
    (``approve``, ``deny``, ``inbox send``, ``mcp-stdio``, ``hook``, ``down``, ...), by
    its console script or a Python interpreter (``-m exomonad`` in any spelling, or the
    script by path); read-only ones are not. A module of ExoMonad run as a program
    (``python -m exomonad.hookclient``) is always one. The teammate
    bridge and the hook client's shell front are never an agent's to run (the front
    runs whatever words follow it when it does not answer: they would go unread)."""
    words = command_words(action)
    if not words:
        return False
    program = posixpath.basename(words[0])
    if program in ("exomonad-teammate", HOOK_FRONT):
        return True
    if program in SHELLS and any(posixpath.basename(w) == HOOK_FRONT for w in words[1:]):
        return True  # the front (a sh script) run by a shell: `sh $(command -v exomonad-hook) ...`
    if program.startswith("python"):
        target = _python_runs(words[1:])
        if target is None:
            return False
        program, words = target
        if program.startswith("exomonad.") and program != "exomonad.__main__":
            return True  # a module of ExoMonad's run as a program: no agent's business
        program = "exomonad" if program == "exomonad.__main__" else program
        if program in ("exomonad-teammate", HOOK_FRONT):
            return True
    if program != "exomonad":
        return False
    subs = [w for w in words[1:] if not w.startswith("-")][:2]
    return not any(tuple(subs[:n]) in AGENT_EXOMONAD_COMMANDS for n in (1, 2))


def _python_runs(args: list[str]) -> tuple[str, list[str]] | None:
    """What a Python interpreter given ``args`` runs: ``(module, [module, *its args])``
    for ``-m`` in any spelling (``-mexomonad``, ``-Im exomonad``), ``(basename of the
    script, [script, *its args])`` for a script; None for ``-c``, stdin or nothing."""
    it = iter(enumerate(args))
    for i, word in it:
        if not word.startswith("-") or word == "-":
            return (posixpath.basename(word), args[i:]) if word != "-" else None
        if word == "--":
            return (posixpath.basename(args[i + 1]), args[i + 1 :]) if i + 1 < len(args) else None
        if word.startswith("--"):
            continue
        for k, flag in enumerate(word[1:], 2):
            attached = word[k:]
            if flag == "c":
                return None
            if flag == "m":
                if attached:
                    return attached, [attached, *args[i + 1 :]]
                return (args[i + 1], args[i + 1 :]) if i + 1 < len(args) else None
            if flag in "WX":  # an option with a value: the rest of the word, or the next
                if not attached:
                    next(it, None)
                break
    return None


def catastrophic_delete(action: DeleteFile, ctx: Context) -> bool:
    """Deleting ``/``, a system directory, a home directory or the whole project."""
    path = action.path
    if path is None:
        return False
    path = path.rstrip("/") or "/"
    while path.endswith(("/*", "/.*")):
        path = posixpath.dirname(path) or "/"
    if path in SYSTEM_DIRS or path == ctx.home:
        return True
    if action.recursive and posixpath.dirname(path) in ("/", "/home"):
        return True
    return ctx.project_root is not None and path == posixpath.normpath(ctx.project_root)


def own_branch(action: GitPush, ctx: Context) -> bool:
    """Pushing to the agent's own (known, unprotected) branch."""
    return ctx.is_own_branch(action.branch)


def unprotected_branch(action: GitPush, ctx: Context) -> bool:
    """Pushing to a known branch that is not protected."""
    return not ctx.is_protected(action.branch)


def protected_branch(action: GitPush | DeleteBranch, ctx: Context) -> bool:
    """The push or branch deletion targets a *known* protected branch."""
    name = action.branch if isinstance(action, GitPush) else action.name
    return name is not None and ctx.is_protected(name)


def no_blind_force(action: GitPush, ctx: Context) -> bool:
    """Not a force push, or a ``--force-with-lease`` one."""
    del ctx
    return not action.force or action.lease


def unprivileged(action: Shell, ctx: Context) -> bool:
    """Not run under ``sudo``/``doas``/``su``."""
    del ctx
    return not action.privileged


def known_host(action: Network, ctx: Context) -> bool:
    """The host could be determined."""
    del ctx
    return action.host is not None


def mcp_reads(action: McpTool, ctx: Context) -> bool:
    """ExoMonad's own tool (the server gates those by role and judges their arguments),
    or another server's tool whose name says it only reads (``get_issue``, ``list_files``,
    ``search_code``: :func:`~exomonad.policy.mcp_names.reads_only`); not
    ``merge_pull_request``, ``run_command`` nor ``fetch``."""
    return own_tool(action.server, action.tool) or reads_only(action.tool)


def host_in(*domains: str) -> Callable[[Network, Context], bool]:
    """A predicate: the host is one of ``domains`` or a subdomain of one."""
    wanted = tuple(d.lower().lstrip(".") for d in domains)

    def check(action: Network, ctx: Context) -> bool:
        del ctx
        host = action.host
        return host is not None and any(host == d or host.endswith("." + d) for d in wanted)

    return check


def all_of(*preds: Pred[A]) -> Pred[A]:
    """A predicate that holds when every one of ``preds`` does."""
    return lambda action, ctx: all(p(action, ctx) for p in preds)


def any_of(*preds: Pred[A]) -> Pred[A]:
    """A predicate that holds when at least one of ``preds`` does."""
    return lambda action, ctx: any(p(action, ctx) for p in preds)


def negate(pred: Pred[A]) -> Pred[A]:
    """The opposite of ``pred``."""
    return lambda action, ctx: not pred(action, ctx)
