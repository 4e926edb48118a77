"""Links in a worker's worktree that lead to what no agent may read: the state dir, a
credential store.

The policy judges the paths a call names. A link already in the tree, named innocently,
is not named. Found trying the gate as a worker: ``notes.txt ->
../../.exomonad/lead.token``, made with git plumbing from a blob whose text the command
line never spells (``git update-index --cacheinfo 120000,<blob>,notes.txt`` and
``git checkout-index``). After that, readers of the tree printed the lead's token:
``grep -R . .``, ``find . -exec cat {} +``, ``git ls-files | xargs cat``, ``zip -r``,
``echo notes.txt | xargs cat``. Each was allowed, and a worker holding the lead's token
answers its own escalations.

So a worker's call that may read files it does not name looks through its worktree
(:func:`planted_reads`): a tree read (``grep -r``, ``tar c``, ``zip -r``, ``find
-exec``), a directory searched (``rg -L . .``, ``rg -L x`` in the working directory,
``fd -L -x cat``), a glob (``cat < no*``), a name made at run time (a variable, a command
substitution, what ``xargs`` or ``find`` hand on), or names in a list (``wc
--files0-from=-``, ``tar -T``, ``tar chfT``, ``xz --files``, ``zip -@``, ``cpio -o``).
Each link there that leads out of the worktree is read: the file it leads to, or the
tree (``up -> ../..`` holds the state dir). The policy refuses that read as it refuses
naming the target, so the worker reads nothing that way until a person removes the link.
A link that cannot be followed (a loop, a name not UTF-8, too deep) and a link to a
directory outside the project (whose own links are not looked through) are asked. A link
that stays in the worktree changes nothing: what it leads to is judged by its own name.

Every call's words are looked at too: a word that leads through a link (``zgrep .
notes.txt``, ``diff --to-file=notes.txt``, a program the policy does not model as a
reader) is a read of it. Found reviewing this fix: each of those printed the token.
A program that runs code (``python3 x.py``) reads what it likes, with or without a link:
that is the gate's documented limit, and the sandbox's to stop.

The census (:func:`links_below`) walks the worktree once. After that, each such call
stats every directory (about 3 µs each here: 3 ms for 1,000, 150 ms for 50,000). A
directory whose inode and ctime have not changed keeps the links and subdirectories
listed before: no entry was added, removed or renamed in it, and a user cannot set a
ctime back. A directory that changed is listed again. So is one that changed within
:data:`_SETTLE_NS` of being listed, because a coarse clock could give a later change
the same ctime. Every link found is resolved again on each call, since what it leads to
may change elsewhere. Above :data:`MAX_DIRS` directories the census is not taken, and
the call is asked (:class:`~exomonad.policy.actions.Unknown`).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple

from exomonad.policy.actions import Action, ReadFile, Shell, Unknown
from exomonad.policy.control_files import is_glob
from exomonad.policy.shell_env import is_within
from exomonad.policy.shell_paths import may_name
from exomonad.util.paths import real_path

__all__ = ["MAX_DIRS", "links_below", "planted_reads", "reads_unnamed"]

#: Directories a worktree may hold for its census to be taken, each call.
MAX_DIRS = 50_000
#: A directory changed this recently when it was listed is listed again next time.
_SETTLE_NS = 50_000_000


class _Listing(NamedTuple):
    stamp: tuple[int, int]  # inode, ctime
    dirs: tuple[str, ...]
    links: tuple[str, ...]
    settled: bool


_censuses: dict[str, dict[str, _Listing]] = {}
_lock = threading.Lock()


def _list(path: str) -> _Listing | None:
    try:
        stat = os.stat(path, follow_symlinks=False)
        dirs, links = [], []
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.is_symlink():
                    links.append(entry.path)
                elif entry.is_dir(follow_symlinks=False):
                    dirs.append(entry.path)
    except (FileNotFoundError, NotADirectoryError):  # gone: nothing below it
        return None  # (any other error, a name too long or a directory closed to us,
    # leaves what is below unknown: the caller's; found probing, a link 6,000 characters
    # deep, past PATH_MAX, was skipped, and `tar -ch .` read it relative and printed it)
    settled = time.time_ns() - stat.st_ctime_ns > _SETTLE_NS
    return _Listing((stat.st_ino, stat.st_ctime_ns), tuple(dirs), tuple(links), settled)


def links_below(root: str) -> list[str] | None:
    """Every symbolic link below directory ``root`` (links are not followed); None if
    ``root`` holds more than :data:`MAX_DIRS` directories or one that cannot be listed.
    A ``root`` that is not a directory holds none."""
    try:
        return _links_below(root)
    except OSError:
        with _lock:
            _censuses.pop(root, None)
        return None


def _links_below(root: str) -> list[str] | None:
    with _lock:
        known = _censuses.setdefault(root, {})
        now: dict[str, _Listing] = {}
        links: list[str] = []
        todo = [root]
        while todo:
            if len(now) >= MAX_DIRS:
                _censuses.pop(root, None)
                return None
            path = todo.pop()
            listing = known.get(path)
            if listing is None or not listing.settled or _stamp(path) != listing.stamp:
                listing = _list(path)
                if listing is None:
                    continue
            now[path] = listing
            links += listing.links
            todo += listing.dirs
        if now:
            _censuses[root] = now
        else:
            _censuses.pop(root, None)
        return links


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        stat = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return stat.st_ino, stat.st_ctime_ns


#: What in a command's words stands for a name made at run time.
_MADE_AT_RUN_TIME = ("$", "`", "<xargs input>", "{}")
#: Programs that read a tree they are not given (the working directory), or the files a
#: listing names (stdin, a file): searchers, exec-ers over a listing, archivers of one.
_TREE_READERS = frozenset(
    {"rg", "ag", "ack", "ack-grep", "pt", "ugrep", "ug", "sift", "fd", "fdfind", "parallel",
     "cpio", "pax", "7z", "7za", "7zr", "rsync", "afio", "tar", "gtar", "bsdtar", "star"}
)  # fmt: skip
#: Options that hand a program the names of the files it reads in a list.
_NAMES_FROM = ("--files", "-T", "-@", "--names")  # --files0-from, tar's --files=, xz's --files


def reads_unnamed(actions: Sequence[Action]) -> bool:
    """Whether a call may read files it does not name: a tree read, a directory searched,
    a glob, or a program given a name made at run time or a list of names.

    >>> reads_unnamed([ReadFile("/w", True)]), reads_unnamed([Shell(("cat", "$f"))])
    (True, True)
    >>> reads_unnamed([Shell(("rg", "-L", "x"))]), reads_unnamed([Shell(("wc", "--files0-from=-"))])
    (True, True)
    >>> reads_unnamed([ReadFile("/nonexistent/a.txt"), Shell(("git", "status"))])
    False
    """
    for action in actions:
        if isinstance(action, ReadFile) and (
            action.recursive
            or action.path is None
            or is_glob(action.path)
            or os.path.isdir(action.path)
        ):
            return True
        if isinstance(action, Shell) and _names_unjudged(action.argv):
            return True
    return False


def _names_unjudged(argv: Sequence[str]) -> bool:
    for word in argv:
        if any(mark in word for mark in _MADE_AT_RUN_TIME):
            return True
        if os.path.basename(word) in _TREE_READERS or word.startswith(_NAMES_FROM):
            return True
        if word.startswith("-") and not word.startswith("--") and ("T" in word or "@" in word):
            return True  # tar -chT -, zip -q@: a list of names in a cluster
    return False


def planted_reads(worktree: str | None, actions: Sequence[Action], project: str | None,
                  refused: Callable[[ReadFile], bool]) -> list[Action]:  # fmt: skip
    """What a worker's call reads through links, beside what it names: for each word of
    a command that leads through a link, a read of it (``zgrep . notes.txt``,
    ``diff --to-file=notes.txt``); for a call that may read files it does not name
    (:func:`reads_unnamed`), each link below ``worktree`` that leads out of it
    (:func:`_through`). Only those ``refused`` refuses are kept (they lead into the state
    dir or a credential store); an :class:`~exomonad.policy.actions.Unknown` where it
    cannot be known. Nothing for no worktree (the lead's checkout)."""
    if worktree is None:
        return []
    out: list[Action] = [read for read in _named(actions) if refused(read)]
    if not reads_unnamed(actions):
        return out
    links = links_below(worktree)
    if links is None:
        return [*out, Unknown(f"{worktree}: more than {MAX_DIRS} directories, or one that "
                              "cannot be listed, to look through for links into "
                              "ExoMonad's state")]  # fmt: skip
    for link in links:
        out += _through(link, worktree, project, refused)
    return out


def _named(actions: Sequence[Action]) -> list[ReadFile]:
    """A read of each path a command's word names (itself, an option's value after
    ``=``, after ``<`` or ``@``) that is a link: the program may read it whether or not
    the policy models it as a reader. (A link earlier in the path, ``st/lead.token``,
    leaves the state's own names in the word, which the policy reads as the state's.)"""
    reads: list[ReadFile] = []
    for action in actions:
        if not isinstance(action, Shell) or action.cwd is None:
            continue
        for word in action.argv[1:]:
            if word.startswith("-") and "=" not in word:
                continue  # an option (a value glued to a letter is rarely a file)
            for text in may_name(word):
                if not text or "$" in text or is_glob(text) or len(text) > 4096:
                    continue
                path = os.path.normpath(os.path.join(action.cwd, text))
                if os.path.islink(path):  # one lstat: the name itself is a link
                    reads.append(ReadFile(path))
    return reads


def _through(link: str, worktree: str, project: str | None,
             refused: Callable[[ReadFile], bool]) -> list[Action]:  # fmt: skip
    """What reading through ``link`` may reach, if it leads out of ``worktree``: a read
    of the file, or of the tree, it leads to; an Unknown if that cannot be known (its
    links cannot be followed, or it is a directory outside the project, whose own links
    are not looked through)."""
    real = real_path(link)
    if real is None:
        return [Unknown(f"{link}: a link in the worktree that cannot be followed")]
    if is_within(real, worktree):
        return []  # read by its own name there, judged as such
    tree = os.path.isdir(real)
    read = ReadFile(real if tree else link, recursive=tree)
    if refused(read):
        return [read]
    if tree and project is not None and not is_within(real, project):
        return [Unknown(f"{link}: a link to a directory outside the project ({real}): "
                        "its links are not looked through")]  # fmt: skip
    return []
