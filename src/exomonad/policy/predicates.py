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

import functools
import posixpath
from collections.abc import Callable
from typing import Protocol, TypeVar

from exomonad.policy.actions import Action, DeleteBranch, DeleteFile, GitPush, Network, Shell
from exomonad.policy.request import Context

__all__ = [
    "SYSTEM_DIRS",
    "HasPath",
    "all_of",
    "any_of",
    "catastrophic_delete",
    "host_in",
    "in_project",
    "in_worktree",
    "known_host",
    "negate",
    "no_blind_force",
    "own_branch",
    "protected_branch",
    "secret_path",
    "touches_control_files",
    "unprivileged",
    "unprotected_branch",
]

A = TypeVar("A", bound=Action)
Pred = Callable[[A, Context], bool]

#: Top-level directories whose recursive deletion is never an agent's business.
SYSTEM_DIRS = frozenset({"/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32",
                         "/lib64", "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys",
                         "/usr", "/var", "/tmp", "/mnt", "/media", "/nix", "/snap"})
_SECRET_HOME = (".ssh", ".aws", ".gnupg", ".config/gh", ".netrc", ".docker/config.json",
                ".kube/config", ".pypirc", ".npmrc", ".git-credentials", ".claude.json",
                ".config/gcloud", ".azure")
_CONTROL_FILES = (".claude/settings.json", ".claude/settings.local.json",
                  ".gemini/settings.json", ".mcp.json")


@functools.lru_cache(maxsize=8)
def _secret_roots(home: str) -> tuple[str, ...]:
    return tuple(posixpath.normpath(posixpath.join(home, s)) for s in _SECRET_HOME)


class HasPath(Protocol):
    """Any action with a ``path`` (ReadFile, WriteFile, DeleteFile)."""

    @property
    def path(self) -> str | None:
        """The absolute path, or None if unknown."""
        ...


def in_worktree(action: HasPath, ctx: Context) -> bool:
    """The action's path is inside the agent's worktree."""
    return ctx.in_worktree(action.path)


def in_project(action: HasPath, ctx: Context) -> bool:
    """The action's path is inside the project root."""
    return ctx.in_project(action.path)


def secret_path(action: HasPath, ctx: Context) -> bool:
    """The path is a credential store (``~/.ssh``, ``~/.aws``, ``/etc/shadow``, ``.env``...)."""
    path = action.path
    if path is None:
        return False
    if any(path == root or path.startswith(root + "/") for root in _secret_roots(ctx.home)):
        return True
    base = posixpath.basename(path)
    return path in ("/etc/shadow", "/etc/gshadow", "/etc/sudoers") or base == ".env" or \
        base.startswith(".env.")


def touches_control_files(action: HasPath, ctx: Context) -> bool:
    """The path is ExoMonad's state dir or an agent's hook/MCP settings (a policy bypass)."""
    path = action.path
    if path is None:
        return False
    if ctx.in_state_dir(path) or "/.exomonad/" in path + "/":
        return True
    return any(path.endswith("/" + name) for name in _CONTROL_FILES)


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
