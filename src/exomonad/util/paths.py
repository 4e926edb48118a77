"""Where a path leads once its symbolic links are followed, for judging it: never an error.

The system reads a path one name at a time, a link replaced by its target as soon as it
is met, so a ``..`` after a link climbs from where the link led, not from the link's own
directory: with ``s -> .`` in a worktree, ``s/s/../../Makefile`` is two levels above the
worktree (found trying the gate as a worker: it was judged as ``<worktree>/Makefile``,
allowed, and ``cp`` overwrote the lead's ``Makefile``). :func:`follow` reads a path the
same way; ``posixpath.normpath`` (taking ``..`` off the name before it) is only right
where no link comes before a ``..``.

Following never raises: a name the system will not let ExoMonad look at (``/proc/1/root``
of another user's process: ``PermissionError``) leaves the rest of the path as written,
and is refused by its name; a ``..`` after such a name, or a path that crosses more than
:data:`MAX_LINKS` links (the system's own limit: a program opening the path in one call
gets ``ELOOP``, but one walking it a name at a time, such as ``mkdir -p``, does not) or
runs deeper than :data:`PATH_MAX` through directories that exist, cannot be known
(:func:`follow` gives None), nor a path longer than :data:`PATH_MAX` with a ``..`` in it
(no program opens it in one call, one walking it a name at a time goes where its links
lead). The work is one look per name while its names exist, and bounded (``realpath``
looked up every prefix: 4.7 s for a 320 KB path in a worker's command).

One judgement (:func:`judging`) looks each path up once: what :func:`follow` found and
what each name was are kept for it, and all its walks share one budget (found trying the
gate as a worker: ``cat L/x0 ... L/x49`` through a link ``L`` to directories 1900 deep
took 4 s, each word followed several times, each with a megabyte of its own); past the
budget, what is left cannot be known. A path with a lone surrogate (``\udc80``) or a
name that is not UTF-8 cannot be known either: Python looks up byte ``0x80`` where the
agent's runtime (Node) writes U+FFFD, another name.

>>> real_path("/nonexistent/a/../b")
'/nonexistent/b'
>>> real_path("/x" * 5000) == "/x" * 5000
True
>>> follow("/proc/self/root/etc/../etc")
'/etc'
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["MAX_LINKS", "PATH_MAX", "follow", "judging", "real_path"]

#: The longest path a program may name in one system call (Linux's ``PATH_MAX``).
PATH_MAX = 4096
#: The longest name a directory may hold (Linux's ``NAME_MAX``, in bytes): a longer one
#: is not there.
NAME_MAX = 255
#: How many links the system follows in one path before it gives up (Linux's
#: ``MAXSYMLINKS``).
MAX_LINKS = 40

#: How much path text one walk may hand the system to look up (each lookup costs the
#: length of its path): ordinary paths use a few KB; past this, a crafted one (links
#: whose targets climb and descend a tree thousands deep) is not known.
_LOOKED = 1 << 20
#: How much path text one judgement may look up in all (the system's work, about 27 ms
#: a megabyte here), and walk in all (names it already looked up: memory's work).
_JUDGEMENT_LOOKED = 4 << 20
_JUDGEMENT_WALKED = 32 << 20
#: What each name taken counts towards the walking, besides its path's length if looked
#: up (a link's target of ``a/..`` repeated is thousands of names looked up in no time).
_STEP = 64
#: Errors that say a name is not there (nor anything below it).
_ABSENT = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG})


@dataclass
class _Judgement:
    """What one judgement found: each path followed, each name looked up (its mode and
    link target, or the error's number), and how much it looked up and walked."""

    found: dict[str, str | None] = field(default_factory=dict)
    names: dict[str, tuple[int, str | None] | int] = field(default_factory=dict)
    looked: int = 0
    walked: int = 0


_JUDGEMENT: ContextVar[_Judgement | None] = ContextVar("exomonad_paths_judgement", default=None)


@contextmanager
def judging() -> Iterator[None]:
    """Within it, :func:`follow` looks each path and name up once and all its walks
    share one budget: one judgement of one tool call, the filesystem taken as it stands
    (a nested one joins the outer)."""
    if _JUDGEMENT.get() is not None:
        yield
        return
    token = _JUDGEMENT.set(_Judgement())
    try:
        yield
    finally:
        _JUDGEMENT.reset(token)


def real_path(path: str) -> str | None:
    """``path`` with its links followed as the system follows them (:func:`follow`);
    None where that cannot be known (never the path as written: a link before a ``..``
    may take it elsewhere)."""
    return follow(path)


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: a name not UTF-8, or not one at all
        return False
    return True


def follow(path: str) -> str | None:
    """Where absolute ``path`` leads: its names taken in order, each link replaced by its
    target before what follows it is read (a ``..`` after a link climbs from the link's
    target); names that do not exist stay as written, a ``..`` taking off the one before
    it. None when it cannot be known: more than :data:`MAX_LINKS` links (a loop), a
    ``..`` after a name that could not be looked at, a directory that exists deeper
    than :data:`PATH_MAX`, a path longer than that with a ``..``, or more looking up than
    any ordinary path takes (a megabyte of path text; within :func:`judging`, also past
    the judgement's budget), a name that is not UTF-8 (a lone surrogate). A relative
    ``path`` is the process's working directory's.

    >>> follow("/nonexistent/a/../../b"), follow("/")
    ('/b', '/')
    >>> follow("/nonexistent" * 500 + "/..") is None
    True
    """
    if len(path) > PATH_MAX and ".." in path.split("/"):
        return None
    try:
        if not path.startswith("/"):
            path = posixpath.join(os.getcwd(), path)
        if not _utf8(path):
            return None
        judgement = _JUDGEMENT.get()
        if judgement is None:
            return _walk(path, _Judgement())
        if path not in judgement.found:
            judgement.found[path] = _walk(path, judgement)
        return judgement.found[path]
    except (OSError, ValueError):  # the working directory gone, a NUL in the path
        return None


def _lookup(full: str, judgement: _Judgement) -> tuple[int, str | None] | int:
    """``full``'s mode and link target, or the error's number, once a judgement."""
    known = judgement.names.get(full)
    if known is not None:
        return known
    judgement.looked += len(full)
    try:
        st = os.lstat(full)
        found: tuple[int, str | None] | int = (
            st.st_mode,
            os.readlink(full) if stat.S_ISLNK(st.st_mode) else None,
        )
    except OSError as err:
        found = err.errno or errno.EIO
    judgement.names[full] = found
    return found


def _walk(path: str, judgement: _Judgement) -> str | None:
    todo = _names(path)
    names: list[str] = []  # the names reached, links replaced; the first `exists` are
    exists, here = 0, ""  # directories that are there, `here` (their path)
    blind = False  # a name could not be looked at: the rest is taken as written
    links = looked = 0
    while todo:
        name = todo.pop()
        judgement.walked += _STEP  # a `..`, a name below one not there: work too
        if judgement.walked > _JUDGEMENT_WALKED:
            return None
        if name == "..":
            if blind:
                return None
            if len(names) > exists:  # below a name that is not there: as written
                names.pop()
            elif names:
                names.pop()
                exists -= 1
                here = here[: here.rfind("/")]
            continue
        if blind or len(names) > exists or len(name.encode()) > NAME_MAX:
            names.append(name)  # below a name not there, or one too long to be
            continue
        full = here + "/" + name
        looked += len(full)
        judgement.walked += len(full)
        if looked > _LOOKED or len(full) >= PATH_MAX:  # a name too deep to look at by
            return None  # its path, which a walk a name at a time reaches
        fresh = full not in judgement.names
        if judgement.walked > _JUDGEMENT_WALKED or (
            fresh and judgement.looked + len(full) > _JUDGEMENT_LOOKED
        ):
            return None  # the judgement's budget spent: what is left is not known
        found = _lookup(full, judgement)
        if isinstance(found, int):
            blind = found not in _ABSENT
            names.append(name)  # not there, or not to be looked at: taken as written
            continue
        mode, target = found
        if target is not None:
            links += 1
            if links > MAX_LINKS or not _utf8(target):
                return None
            if target.startswith("/"):
                names, exists, here = [], 0, ""
            todo += _names(target)
            continue
        names.append(name)  # a file: nothing below it is there
        if stat.S_ISDIR(mode):
            exists, here = exists + 1, full
    return "/" + "/".join(names)


def _names(path: str) -> list[str]:
    """``path``'s names, last first (a stack), without empty ones and ``.``."""
    return [n for n in reversed(path.split("/")) if n and n != "."]
