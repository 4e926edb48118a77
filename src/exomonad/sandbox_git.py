"""What a sandboxed worker may write of the repository's shared ``.git``.

A linked worktree's commits land in the common git dir, which the lead's checkout and
every other worktree share: its objects, its refs (``main`` among them), ``packed-refs``,
``refs/replace`` (what any commit appears to contain), ``refs/stash``, tags. Binding
the whole of it read-write let code run inside the sandbox move the lead's ``main``
(``git update-ref refs/heads/main``, a rewritten ``packed-refs``), replace what its
commits show, or drop its stash. :func:`git_binds` binds the common dir read-only and
gives back only what the worker's own git needs:

- ``objects/``: new objects (commits, trees, blobs);
- the directory of the worker's branch ref (``refs/heads/exo/`` for ``exo/<name>``): git
  writes a ref through a lock file beside it and a rename, so the directory, not the
  file, must be writable;
- the branch's reflog, the file alone (git appends to it in place): with the directory
  writable, a link planted there (``logs/refs/heads/exo/w3`` to any file) made the
  server's ``git worktree add -b exo/w3`` for the next worker append to a file of the
  worker's choosing outside the sandbox;
- its private git dir ``worktrees/<id>/`` (its ``HEAD``, index, reflog, rebase state),
  with its ``config.worktree`` read-only when it exists (the push gate's ``core.hooksPath``).

The branch's directory gets a placeholder (:data:`KEEP`, a dot-name git ignores) so that
the lead's ``git pack-refs`` or ``gc`` never removes it while a sandbox has it bound:
the sandbox would go on writing the worker's commits into a directory the host no longer
has. A worker commits on its own branch only (another branch would need a reflog of its
own); other workers' branches in the same directory stay writable to it, so a branch
planted there as a symbolic ref (``ref: refs/heads/main``: its worker's commits would
move ``main``) is refused at the spawn, as the server's ``WorktreeManager.create``
refuses it.

A branch directly under ``refs/heads/`` (an empty ``branch_prefix``) would make all of
``refs/heads`` writable, ``main`` included, so it is refused, as is a repository whose
refs are a ``reftable`` (one directory for every ref). The object store stays writable:
see ``docs/sandbox.md`` for what that leaves open.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from exomonad.errors import SandboxError
from exomonad.gitlink import link_fault, private_dir, read_small

__all__ = ["KEEP", "git_binds"]

#: Kept in the writable ref and reflog directories; git skips names starting with a dot.
KEEP = ".exomonad-keep"
_HEADS = "refs/heads/"


def _branch(private: Path) -> str | None:
    """The branch checked out in the git dir ``private`` (``exo/w1``), or None (a
    detached ``HEAD``)."""
    raw = read_small(private / "HEAD")  # never through a link, never a FIFO's wait
    if raw is None:
        raise SandboxError(f"sandbox: {private / 'HEAD'} is not a regular file")
    text = raw.strip()
    ref = text.removeprefix("ref: ").strip()
    return ref.removeprefix(_HEADS) if text.startswith("ref: " + _HEADS) else None


def _own_dir(common: str, sub: str, *, keep: bool = True) -> str:
    """``<common>/<sub>`` made (with :data:`KEEP` in it, unless not ``keep``) if missing;
    it must resolve to itself, so no symbolic link in ``.git`` widens what is bound."""
    if any(part in ("", ".", "..") for part in sub.split("/")):
        raise SandboxError(f"sandbox: {sub!r} is not a plain path in {common}")
    path = os.path.join(common, sub)
    os.makedirs(path, exist_ok=True)
    if os.path.realpath(path) != path:
        raise SandboxError(f"sandbox: {path} goes through a symbolic link")
    if not keep:
        return path
    keep_file = os.path.join(path, KEEP)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(keep_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644))
    return path


def _own_log(common: str, branch: str) -> str:
    """The reflog of ``branch``, made empty if missing; a regular file reached through
    no symbolic link."""
    folder = _own_dir(common, os.path.dirname("logs/" + _HEADS + branch), keep=False)
    path = os.path.join(folder, os.path.basename(branch))
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK
        fd = os.open(path, flags, 0o644)  # a FIFO fails (ENXIO) rather than wait
    except OSError as exc:
        raise SandboxError(f"sandbox: {path} is not a reflog git could append to: {exc}") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SandboxError(f"sandbox: {path} is not a regular file")
    finally:
        os.close(fd)
    return path


def _not_symbolic(ref: str) -> None:
    """Refuse a branch ref that is a link or a symbolic ref (``ref: refs/heads/main``,
    which the workers' writable ref directory lets one worker plant for another): the
    worker's commits would move what it names."""
    if not os.path.lexists(ref):  # packed, or not made yet: never symbolic
        return
    text = read_small(Path(ref))  # a link, a FIFO (whose open would wait), a directory
    if text is None or text.startswith("ref: "):
        raise SandboxError(f"sandbox: {ref} is not a plain branch ref (a symbolic ref, a "
                           "link or no regular file)")  # fmt: skip


def git_binds(worktree: str, common: str, branch: str | None = None) -> list[str]:
    """bwrap arguments for the shared git dir ``common`` of ``worktree`` (both real);
    ``branch``, when given, is the one the worker was given: its private ``HEAD`` (which
    it can write) must name it (found probing: a ``HEAD`` naming ``release/evil`` made the
    next spawn bind ``refs/heads/release/`` writable, and ``release/1.0`` moved).

    Raises
    ------
    SandboxError
        The worktree's link to ``common`` is not intact, its ``HEAD`` does not name
        ``branch``, its branch is not in a
        directory of its own below ``refs/heads/``, the lead's branch shares that
        directory, or the repository keeps its refs in a ``reftable``.
    """
    if os.path.isdir(os.path.join(common, "reftable")):
        raise SandboxError(
            f'sandbox = "bwrap" cannot protect the refs of {common}: they are a reftable '
            "(one directory for all refs, main included)"
        )
    fault = link_fault(Path(worktree), Path(common), config=False)
    private = private_dir(Path(worktree))
    if fault is not None or private is None:
        raise SandboxError(f"sandbox: the worktree {worktree}: {fault}")
    args = ["--ro-bind", common, common, "--bind", *[os.path.join(common, "objects")] * 2]
    given, branch = branch, _branch(private)
    if given is not None and branch != given:
        raise SandboxError(f"sandbox: {private / 'HEAD'} names {branch!r}, not the worker's "
                           f"branch {given!r}")  # fmt: skip
    if branch is not None:
        folder = os.path.dirname(branch)
        lead = _branch(Path(common))
        if not folder:
            raise SandboxError(
                f"sandbox: the worker's branch {branch!r} is directly in refs/heads, which "
                'would make main writable: give workers a branch_prefix such as "exo/"'
            )
        if lead is not None and os.path.dirname(lead) == folder:
            raise SandboxError(
                f"sandbox: the lead's branch {lead!r} shares refs/heads/{folder}/ with the "
                f"worker's {branch!r}: give workers a branch_prefix of their own"
            )
        refs, log = _own_dir(common, _HEADS + folder), _own_log(common, branch)
        _not_symbolic(os.path.join(common, _HEADS + branch))
        args += ["--bind", refs, refs, "--bind", log, log]
    args += ["--bind", str(private), str(private)]
    config = private / "config.worktree"
    if config.exists():  # core.hooksPath of the worker's worktree: the pre-push gate
        args += ["--ro-bind", str(config), str(config)]
    return args
