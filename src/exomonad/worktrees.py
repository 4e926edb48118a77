"""One ``git worktree`` per worker: made on its own branch, removed only when nothing is lost.

Each worker ExoMonad starts gets ``<project>/<worktree_dir>/<name>`` (default
``.worktrees/<name>``) on branch ``<branch_prefix><name>`` (default ``exo/<name>``), made
from the lead's current ``HEAD``. The directory is added to the repository's local
``.git/info/exclude`` (never to a committed ``.gitignore``), so the lead's checkout does
not show it as untracked.

Each worktree gets a second gate in git: its own ``core.hooksPath`` points at a
``pre-push`` hook that asks the project's policy (see :mod:`exomonad.gitgate`), so a
script that ends in ``git push`` still meets the policy.

Removal is safe by construction: a worktree is removed only when it is clean (no
uncommitted or untracked file) and its branch is merged into the lead's ``HEAD`` or
pushed (a remote-tracking branch contains its tip). Otherwise it is kept, and the
:class:`Removal` says where it is and what is uncommitted.

>>> WorktreeState(Path("/w"), "exo/a", uncommitted=(), merged=False, pushed=True).removable
True
>>> WorktreeState(Path("/w"), "exo/a", uncommitted=("x.py",), merged=True, pushed=True).removable
False
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from exomonad.errors import ExomonadError
from exomonad.gitlink import link_fault
from exomonad.teams.paths import sanitize_path_name

__all__ = [
    "GATE_DIR",
    "PRE_PUSH",
    "Removal",
    "Worktree",
    "WorktreeError",
    "WorktreeManager",
    "WorktreeState",
]

_GIT_TIMEOUT = 60.0
#: In the common ``.git``: ExoMonad's hooks for the workers' worktrees.
GATE_DIR = "exomonad-hooks"
PRE_PUSH = """#!/bin/sh
# ExoMonad's second gate (written by ExoMonad for its workers' worktrees): every push
# asks the project's policy with the pushing agent's identity.
exec exomonad git-gate pre-push "$@"
"""


class WorktreeError(ExomonadError):
    """A worktree could not be made, inspected or removed (git's message included)."""


@dataclass(frozen=True)
class Worktree:
    """A worker's checkout: where it is and which branch it has."""

    name: str
    path: Path
    branch: str
    #: ExoMonad's hooks dir (the pre-push gate) this worktree's ``core.hooksPath`` names.
    hooks: Path


@dataclass(frozen=True)
class WorktreeState:
    """What a worktree holds that removing it could lose."""

    path: Path
    branch: str | None
    uncommitted: tuple[str, ...] = ()
    merged: bool = False
    pushed: bool = False
    exists: bool = True
    #: What is wrong with its link to the repository (:mod:`exomonad.gitlink`): git is
    #: not run there, and it is kept for a person to look at.
    tampered: str | None = None

    @property
    def removable(self) -> bool:
        """Clean, and its branch is merged or pushed (or it is already gone)."""
        if self.tampered is not None:
            return False
        return not self.exists or (not self.uncommitted and (self.merged or self.pushed))

    def why_kept(self) -> str:
        """Why removing it would lose work ("" when it is removable)."""
        if self.tampered is not None:
            return f"its git link was changed ({self.tampered}): not inspected; repair it " \
                   "(`git worktree repair`) or remove it by hand"  # fmt: skip
        if self.removable:
            return ""
        if self.uncommitted:
            shown = ", ".join(self.uncommitted[:5])
            more = f" and {len(self.uncommitted) - 5} more" if len(self.uncommitted) > 5 else ""
            return f"{len(self.uncommitted)} uncommitted file(s): {shown}{more}"
        return f"branch {self.branch} is neither merged nor pushed"

    def to_json(self) -> dict[str, object]:
        """JSON-ready form."""
        return {"path": str(self.path), "branch": self.branch, "exists": self.exists,
                "uncommitted": list(self.uncommitted), "merged": self.merged,
                "pushed": self.pushed, "removable": self.removable,
                "tampered": self.tampered}  # fmt: skip


@dataclass(frozen=True)
class Removal:
    """What :meth:`WorktreeManager.remove` did."""

    removed: bool
    state: WorktreeState
    reason: str = ""

    def message(self) -> str:
        """One line for a person or the lead."""
        if self.removed:
            return f"removed worktree {self.state.path} ({self.state.branch})"
        return f"kept worktree {self.state.path} ({self.state.branch}): {self.reason}"

    def to_json(self) -> dict[str, object]:
        """JSON-ready form."""
        return {"removed": self.removed, "reason": self.reason, "message": self.message(),
                **self.state.to_json()}  # fmt: skip


def _git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        # No fsmonitor for the server's own git: a program named in a config it reads.
        done = subprocess.run(["git", "-C", str(cwd), "-c", "core.fsmonitor=false", *args],
                              capture_output=True, text=True,
                              timeout=_GIT_TIMEOUT, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise WorktreeError(f"git {' '.join(args)} in {cwd}: {exc}") from exc
    if check and done.returncode != 0:
        raise WorktreeError(f"git {' '.join(args)} in {cwd}: {done.stderr.strip()}")
    return done


def _nested_repositories(path: Path) -> tuple[str, ...]:
    """The gitlinks (submodules, nested repositories) of ``path``'s index that are
    populated, each named as work not inspected; from the index alone (no git there)."""
    staged = _git(path, "ls-files", "--stage", "-z")
    links = [e.split("\t", 1)[1] for e in staged.stdout.split("\0") if e.startswith("160000 ")]
    return tuple(f"{link} (a nested repository, not inspected)" for link in links
                 if os.path.lexists(path / link / ".git"))  # fmt: skip


class WorktreeManager:
    """Makes, inspects and removes the workers' worktrees of one repository.

    Parameters
    ----------
    project_root:
        The lead's checkout (the directory holding ``.exomonad/``).
    worktree_dir:
        Where worktrees go: relative to ``project_root``, or absolute (``~`` expanded).
    branch_prefix:
        A worker's branch is ``branch_prefix + name``.
    """

    def __init__(self, project_root: Path, *, worktree_dir: str = ".worktrees",
                 branch_prefix: str = "exo/") -> None:  # fmt: skip
        self.project_root = project_root.resolve()
        self.base_dir = (self.project_root / Path(worktree_dir).expanduser()).resolve()
        self.branch_prefix = branch_prefix
        self._common: Path | None = None

    def _toplevel(self) -> Path:
        done = _git(self.project_root, "rev-parse", "--show-toplevel", check=False)
        if done.returncode != 0:
            raise WorktreeError(
                f"{self.project_root} is not a git repository, so workers cannot get their "
                "own worktree: run `git init` and commit, or set [workers] worktree = false"
            )
        return Path(done.stdout.strip())

    def path_of(self, name: str) -> Path:
        """Where worker ``name``'s worktree is (or would be); the name is sanitised as
        Claude Code sanitises inbox names (``[A-Za-z0-9_-]``), so it is a safe path and ref."""
        return self.base_dir / sanitize_path_name(name)

    def branch_of(self, name: str) -> str:
        """Worker ``name``'s branch."""
        return self.branch_prefix + sanitize_path_name(name)

    def create(self, name: str) -> Worktree:
        """Worker ``name``'s worktree on its branch from the lead's ``HEAD``.

        Idempotent: an existing worktree of that name is reused, and an existing branch
        (e.g. from a kept worktree) is checked out rather than reset.
        """
        path, branch = self.path_of(name), self.branch_of(name)
        top = self._toplevel()
        if _git(top, "rev-parse", "--verify", "--quiet", "HEAD", check=False).returncode != 0:
            raise WorktreeError(f"{top} has no commit yet: commit once so workers can branch")
        # A symbolic ref where the branch should be (a sandboxed worker can write the
        # workers' ref directory): the worker's commits would move what it names, main.
        target = _git(top, "symbolic-ref", "--quiet", f"refs/heads/{branch}", check=False)
        if target.returncode == 0:
            raise WorktreeError(f"refs/heads/{branch} is a symbolic ref to "
                                f"{target.stdout.strip()}, not a branch: delete it")  # fmt: skip
        if (path / ".git").exists():
            # Checked before any git runs there: its config is read, and written (found
            # probing: a .git naming a made-up git dir whose config.worktree linked to
            # ~/.gitconfig made the gate's `git config --worktree` write the user's).
            fault = self.fault(path)
            if fault is not None:
                raise WorktreeError(f"{path}: {fault}: a person must look at it")
            current = _git(path, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
            if current.stdout.strip() != branch:
                raise WorktreeError(f"{path} exists but is not on {branch}: move it away")
            return Worktree(name, path, branch, self._install_gate(top, path))
        if path.exists() and any(path.iterdir()):
            raise WorktreeError(f"{path} exists and is not a worktree: move it away")
        self._exclude(top)
        path.parent.mkdir(parents=True, exist_ok=True)
        _git(top, "worktree", "prune")  # a worktree deleted by hand keeps its branch busy
        has_branch = _git(top, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}",
                          check=False).returncode == 0  # fmt: skip
        if has_branch:
            _git(top, "worktree", "add", str(path), branch)
        else:
            _git(top, "worktree", "add", "-b", branch, str(path), "HEAD")
        return Worktree(name, path, branch, self._install_gate(top, path))

    def _install_gate(self, top: Path, path: Path) -> Path:
        """The second gate: this worktree's ``core.hooksPath`` (its own config, through
        ``extensions.worktreeConfig``) names ExoMonad's hooks dir in the common ``.git``,
        whose ``pre-push`` asks the project's policy (``exomonad git-gate``)."""
        common = Path(_git(top, "rev-parse", "--git-common-dir").stdout.strip())
        hooks = (common if common.is_absolute() else top / common) / GATE_DIR
        hooks.mkdir(exist_ok=True)
        script = hooks / "pre-push"
        if not script.exists() or script.read_text("utf-8") != PRE_PUSH:
            script.write_text(PRE_PUSH, "utf-8")
            script.chmod(0o755)
        _git(top, "config", "extensions.worktreeConfig", "true")
        _git(path, "config", "--worktree", "core.hooksPath", str(hooks))
        return hooks

    def _exclude(self, top: Path) -> None:
        """List the worktree dir in ``info/exclude`` when it lies inside the checkout."""
        try:
            rel = self.base_dir.relative_to(top)
        except ValueError:
            return
        common = Path(_git(top, "rev-parse", "--git-common-dir").stdout.strip())
        exclude = (top / common if not common.is_absolute() else common) / "info" / "exclude"
        line = f"/{rel.as_posix()}/"
        text = exclude.read_text("utf-8") if exclude.exists() else ""
        if line not in text.splitlines():
            exclude.parent.mkdir(parents=True, exist_ok=True)
            sep = "" if not text or text.endswith("\n") else "\n"
            exclude.write_text(f"{text}{sep}{line}\n", "utf-8")

    def common_dir(self) -> Path:
        """The repository's common git dir (absolute, symlinks resolved)."""
        if self._common is None:
            top = self._toplevel()
            common = Path(_git(top, "rev-parse", "--git-common-dir").stdout.strip())
            self._common = Path(os.path.realpath(common if common.is_absolute() else top / common))
        return self._common

    def committed(self, rel: str) -> str | None:
        """File ``rel`` as the lead's ``HEAD`` holds it (None if it holds none)."""
        done = _git(self._toplevel(), "show", f"HEAD:{rel}", check=False)
        return done.stdout if done.returncode == 0 else None

    def fault(self, path: Path, *, config: bool = True) -> str | None:
        """What is wrong with worktree ``path``'s link to the repository, or None
        (:func:`exomonad.gitlink.link_fault`)."""
        return link_fault(path, self.common_dir(), config=config)

    def state(self, path: Path) -> WorktreeState:
        """What ``path`` holds (uncommitted files, merged, pushed). A worktree whose link
        to the repository was changed is not inspected: git there would read the
        worker's files as its configuration (``core.fsmonitor`` runs a program)."""
        if not os.path.lexists(path / ".git"):
            return WorktreeState(path, None, exists=False)
        tampered = self.fault(path)
        if tampered is not None:
            return WorktreeState(path, None, tampered=tampered)
        head = _git(path, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
        branch = head.stdout.strip() or None
        # Not into nested repositories: their config is the worker's (a clean filter
        # there ran as the server). Populated ones count as work not looked at.
        status = _git(path, "status", "--porcelain=v1", "-z", "--untracked-files=all",
                      "--ignore-submodules=all")  # fmt: skip
        uncommitted = tuple(e[3:] for e in status.stdout.split("\0") if len(e) > 3)
        uncommitted += _nested_repositories(path)
        tip = _git(path, "rev-parse", "HEAD", check=False).stdout.strip()
        lead = _git(self.project_root, "rev-parse", "HEAD", check=False).stdout.strip()
        merged = (
            bool(tip and lead)
            and _git(path, "merge-base", "--is-ancestor", tip, lead, check=False).returncode == 0
        )
        remotes = _git(path, "branch", "-r", "--contains", tip, check=False) if tip else None
        pushed = bool(remotes is not None and remotes.returncode == 0 and remotes.stdout.strip())
        return WorktreeState(path, branch, uncommitted, merged, pushed)

    def remove(self, name: str, *, force: bool = False) -> Removal:
        """Remove worker ``name``'s worktree if nothing would be lost (or ``force``).

        A merged branch is deleted with it (``git branch -d``); a pushed, unmerged one
        is kept locally too.
        """
        path = self.path_of(name)
        state = self.state(path)
        if not state.exists:
            return Removal(True, state, "already gone")
        if not state.removable and not force:
            return Removal(False, state, state.why_kept())
        top = self._toplevel()
        _git(top, "worktree", "remove", *(["--force"] if force else []), str(path))
        if state.branch and state.merged:
            _git(top, "branch", "-d", state.branch, check=False)
        return Removal(True, state)

    def list(self) -> list[WorktreeState]:
        """Every worktree under the worktree dir, with its state."""
        try:
            top = self._toplevel()
        except WorktreeError:
            return []
        porcelain = _git(top, "worktree", "list", "--porcelain").stdout
        paths = [Path(line[9:]) for line in porcelain.splitlines() if line.startswith("worktree ")]
        return [self.state(p) for p in paths if p.parent == self.base_dir]

    def names(self) -> Sequence[str]:
        """Names of the workers that have a worktree here."""
        return [s.path.name for s in self.list()]
