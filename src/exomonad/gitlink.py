"""Whether a worker's worktree is still linked to the project's repository as git made it.

A linked worktree's ``.git`` is a file naming its private git dir
(``<common>/worktrees/<id>``), which names the common dir back (``commondir``) and the
worktree (``gitdir``); with ``extensions.worktreeConfig`` (ExoMonad sets it for the push
gate) git also reads that dir's ``config.worktree``. All of these are ordinary files a
worker's program can rewrite (the private dir is writable in the sandbox, as git needs).

Found probing as a worker (a third round): ``gunzip -f .git.gz`` (the name without its
suffix) replaced ``.git`` with ``gitdir: <project>/.git``, and the worker's next ``git
commit`` moved the lead's ``main`` and replaced its index; from inside the sandbox, a
``.git`` naming a made-up git dir whose ``config.worktree`` set ``core.fsmonitor`` made
the server's own ``git status`` (removing the worker) run the worker's command outside
the sandbox. So the server asks :func:`link_fault` before it answers a worker's hook and
before it runs git in a worktree: a fault refuses both, and a person repairs it.

>>> link_fault(Path("/nonexistent/w1"), Path("/nonexistent/.git"))
'its .git is missing or unreadable'
"""

from __future__ import annotations

import os
import posixpath
import stat
import subprocess
from pathlib import Path

__all__ = ["WORKTREE_CONFIG_KEYS", "config_fault", "link_fault", "private_dir", "read_small"]

#: Keys a worktree's ``config.worktree`` may hold for the server to run git there:
#: ExoMonad's push gate and sparse checkout's own. Anything else (``core.fsmonitor``, a
#: filter or diff driver, ``include.path``...) could make git run a program.
WORKTREE_CONFIG_KEYS = frozenset(
    {"core.hookspath", "core.sparsecheckout", "core.sparsecheckoutcone", "index.sparse"}
)
_SMALL = 4096


def read_small(path: Path, limit: int = _SMALL) -> str | None:
    """A small regular file's text (not through a symlink), its first ``limit`` bytes;
    None if it is not one."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit).decode("utf-8", "replace")
    finally:
        os.close(fd)


def _plain(path: str) -> str | None:
    """``path`` normalised when that cannot change which file it names (no ``..``: a
    ``..`` after a symbolic link is not its lexical parent), else None."""
    return None if ".." in path.split("/") else posixpath.normpath(path)


def _same(path: str, real: str) -> bool:
    """Whether ``path`` names the file at ``real`` (a path with no symbolic link in it):
    spelled the same (no syscall: this runs on every worker hook), or resolved."""
    return _plain(path) == real or os.path.realpath(path) == real


def _up(real: str, name: str) -> str:
    """``os.path.realpath(real/name)`` for a directory ``real`` with no symbolic link in
    it; without syscalls when ``name`` only climbs (``../..``, what git writes in
    ``commondir``): a real directory's parents are real."""
    path = posixpath.join(real, name)
    climbs = all(part == ".." for part in name.split("/"))
    return posixpath.normpath(path) if climbs else os.path.realpath(path)


def _named_dir(worktree: Path) -> tuple[str | None, str]:
    """The private git dir ``worktree``'s ``.git`` names (joined, not resolved), or None
    and what is wrong with that file."""
    text = read_small(worktree / ".git")
    if text is None:
        return None, "its .git is missing or unreadable"
    if not text.startswith("gitdir: ") or text.count("\n") > 1:
        return None, "its .git is not a worktree link"
    return posixpath.join(worktree, text[len("gitdir: ") :].strip()), ""


def private_dir(worktree: Path) -> Path | None:
    """The private git dir ``worktree``'s ``.git`` names, resolved; None if ``.git`` is
    not a worktree link. Whether that dir links back is :func:`link_fault`'s question."""
    named, _ = _named_dir(worktree)
    return None if named is None else Path(os.path.realpath(named))


def link_fault(worktree: Path, common: Path, *, config: bool = True) -> str | None:
    """What is wrong with ``worktree``'s link to the repository whose common git dir is
    ``common`` (both real paths, as :class:`~exomonad.worktrees.WorktreeManager` gives
    them); None when ``.git``, ``commondir`` and ``gitdir`` agree (and, with ``config``,
    :func:`config_fault` finds nothing: a ``git`` process, so the hook path, which runs
    for every call, leaves it out). An intact link costs a few ``open``s, no ``realpath``."""
    named_dir, fault = _named_dir(worktree)
    if named_dir is None:
        return fault
    worktrees = posixpath.join(common, "worktrees")
    private = _plain(named_dir)  # <common>/worktrees/<id>, neither of its last two a link
    if (
        private is None
        or posixpath.dirname(private) != worktrees
        or any(os.path.islink(p) for p in (worktrees, private))
    ):
        private = os.path.realpath(named_dir)
    if posixpath.dirname(private) != worktrees:
        return f"its .git names {private}, not a worktree of {common}"
    named = read_small(Path(private, "commondir"))
    back = read_small(Path(private, "gitdir"))
    if named is None or _up(private, named.strip()) != str(common):
        return f"{private}/commondir does not name {common}"
    if back is None or not _same(back.strip(), str(worktree / ".git")):
        return f"{private}/gitdir does not name this worktree"
    return config_fault(Path(private)) if config else None


def config_fault(private: Path) -> str | None:
    """What in ``private``'s ``config.worktree`` the server's git must not read (a key
    outside :data:`WORKTREE_CONFIG_KEYS`), or None. Read by git itself, file only
    (``--file``: no include, no program run)."""
    config = private / "config.worktree"
    if not os.path.lexists(config):
        return None
    if read_small(config) is None:
        return f"{config} is not a regular file"
    done = subprocess.run(["git", "config", "--file", str(config), "--null", "--list"],
                          capture_output=True, text=True, timeout=30, check=False)  # fmt: skip
    if done.returncode != 0:
        return f"{config} does not parse: {done.stderr.strip()[:200]}"
    keys = {entry.split("\n", 1)[0].lower() for entry in done.stdout.split("\0") if entry}
    extra = sorted(keys - WORKTREE_CONFIG_KEYS)
    return f"{config} sets {', '.join(extra)}" if extra else None
