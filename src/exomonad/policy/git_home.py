"""Whether a git command run inside a worker's worktree works on the worktree's own
repository, as git finds it on disk: the ``.git`` nearest above the directory, its
``gitdir:`` and ``commondir``, the work tree its config names.

Found trying the gate as a worker (a seventh round), each allowed and run for real in a
scratch project: a link ``up -> ../..`` made with git's own plumbing (``hash-object``,
``update-index --cacheinfo 120000,...``, ``checkout -- up``), then ``git -C up reset
--hard exo/w1`` moved the lead's ``main`` and reset its checkout (judged as a command in
the worktree, by the link's name); ``sub/.git`` saying ``gitdir: <project>/.git`` (from a
``tar xf``, allowed), then ``git -C sub commit`` committed onto the lead's ``main``; the
worktree's own ``.git`` file replaced the same way, then a plain ``git commit`` did too;
a directory holding ``HEAD`` (``ref: refs/heads/main``) and ``commondir`` (``../../../.git``),
two files ``echo`` wrote, is a git dir to git: ``git -C sub reset --soft exo/w1`` (and
``git --bare reset --soft exo/w1`` with them in the worktree's root) moved ``main``.

>>> foreign_repository("/nonexistent/w/sub", "/nonexistent/w")
False
"""

from __future__ import annotations

import os
import posixpath
import re
import stat

from exomonad.policy.shell_env import ShellEnv, git_dir_like, is_within
from exomonad.policy.shell_globs import shell_match
from exomonad.util.paths import real_path

__all__ = [
    "checked_out",
    "foreign_repository",
    "local_branch",
    "made_before",
    "tracks_another",
    "worktrees_ending",
]

#: A config line that points git at another work tree or pulls in another file's keys.
_ELSEWHERE = re.compile(r"^\s*(worktree|path)\s*=", re.IGNORECASE | re.MULTILINE)
#: More than this in one ``.git`` file or config is not one git wrote for a checkout.
_MAX_READ = 64 * 1024
#: More entries than this in a git dir is not one git made.
_MAX_ENTRIES = 256
#: The most of ``packed-refs`` read (a repository with more is asked about every name).
_MAX_PACKED = 16 * 1024 * 1024


def foreign_repository(where: str, home: str, git_dir: str | None = None) -> bool:
    """Whether git run in ``where`` (a directory inside the worktree ``home``; with
    ``--git-dir=git_dir``, that one) may work on a repository other than the worktree's
    own or a nested one wholly inside it: a link out of the worktree, a ``.git`` file or
    directory whose git dir, common dir or work tree lies elsewhere, or none at all where
    git would go on up to the lead's. True where that cannot be known."""
    real_home, real = real_path(home), real_path(where)
    if real_home is None or real is None:
        return True
    if not os.path.isdir(real_home):
        return False  # no checkout on disk (a unit test's /p): nothing git could find
    if not is_within(real, real_home):
        return True
    own = _own_git_dir(real_home)
    if git_dir is not None:
        found = real_path(git_dir)
        return found is None or not _contained(found, real_home, own)
    path = real
    while path != real_home and is_within(path, real_home):
        dotgit = posixpath.join(path, ".git")
        if os.path.lexists(dotgit):
            return not _nested(dotgit, real_home, own)
        if git_dir_like(path):  # git takes a directory that is one as a bare repository
            return not _contained(path, real_home, own)
        path = posixpath.dirname(path)
    return own is None and _above(real_home)


def made_before(where: str, home: str, git_dir: str | None, env: ShellEnv) -> bool:
    """Whether a command earlier in the line may have made git take ``where`` for another
    repository, files not there when the line is judged: a ``.git``, ``HEAD`` or
    ``commondir`` written or unpacked (``tar xf t.tar && git commit``), a path a ``mv`` or
    ``cp -r`` wrote or took away where git looks (``cp -r t/ . && git commit``: the
    ``.git`` of ``where`` or of a directory above it, or the git dir), or, for git in a
    subdirectory or with a git dir of its own, any links or files checked out."""
    if env.git_files or _reached(where, git_dir, env.trees_moved):
        return True
    elsewhere = git_dir is not None or posixpath.normpath(where) != posixpath.normpath(home)
    return env.links_made and elsewhere


def _reached(where: str, git_dir: str | None, moved: tuple[str, ...]) -> bool:
    """Whether one of the ``moved`` paths (globs as written) is, or holds, the ``.git``
    git looks for from ``where`` up, or is, holds or lies in ``git_dir``.

    >>> _reached("/w", None, ("/w/new.py", "/w/old.py")), _reached("/w/a", None, ("/w",))
    (False, True)
    >>> _reached("/w", None, ("/w/*",)), _reached("/w", None, ("/w/*.py",))
    (True, False)
    >>> _reached("/w", "/w/g", ("/w/g/HEAD",)), _reached("/w/s", None, ("/w/s/.git",))
    (True, True)
    """
    if not moved:
        return False
    looked = [posixpath.normpath(where), real_path(where)]
    if git_dir is not None:
        looked += [posixpath.normpath(git_dir), real_path(git_dir)]
    moves = [p for m in moved for p in (posixpath.normpath(m), real_path(m))]
    starts = [p for p in looked[:2] if p is not None]
    dirs = [p for p in looked[2:] if p is not None]
    paths = [p for p in moves if p is not None]
    if len(starts) + len(dirs) < len(looked) or len(paths) < len(moves):
        return True  # a path whose links cannot be followed: where it leads is not known
    spots: list[str] = []
    for start in starts:
        here = start
        while True:
            spots.append(posixpath.join(here, ".git"))
            if here in ("/", ""):
                break
            here = posixpath.dirname(here)
    return any(_holds(p, s) or is_within(p, s) for p in paths for s in (*spots, *dirs))


def _holds(pattern: str, path: str) -> bool:
    """Whether ``pattern`` (a path, its names maybe globs) is ``path`` or above it."""
    want, have = pattern.split("/"), path.split("/")
    if len(want) > len(have):
        return False
    return all(w == h or (any(c in w for c in "*?[") and shell_match(h, w))
               for w, h in zip(want, have[: len(want)], strict=True))  # fmt: skip


def local_branch(home: str, name: str, kind: str = "heads") -> bool:
    """Whether ``name`` is a local branch (``kind`` "tags": a tag) that exists in the
    repository the worktree ``home`` shares (a loose ref, or a packed one; True where
    ``packed-refs`` is too big to read). False where ``home`` is no worktree ``git
    worktree add`` made.

    >>> local_branch("/nonexistent/w", "main")
    False
    """
    own = _worktree_git_dir(home)
    if own is None or not name or name.startswith("-") or ".." in name:
        return False
    common, ref = posixpath.dirname(posixpath.dirname(own)), f"refs/{kind}/{name}"
    if os.path.lexists(posixpath.join(common, ref)):
        return True
    packed = posixpath.join(common, "packed-refs")
    if not os.path.lexists(packed):
        return False
    text = _read(packed, _MAX_PACKED)
    return text is None or any(line.endswith(" " + ref) for line in text.splitlines())


def checked_out(home: str | None, branch: str | None) -> bool:
    """Whether the worktree ``home`` has the agent's ``branch`` (as its identity names
    it) checked out, as the ``HEAD`` of its git dir on disk says: not once ``HEAD`` names
    another branch or none (detached). Found as a worker: ``git branch -m release`` (or
    ``git checkout -b release``), a commit, then ``git push origin HEAD``, judged as a push
    of its own ``exo/w1``, moved the remote's ``release``. True where ``home`` is no
    worktree ``git worktree add`` made (nothing on disk to read: a unit test's ``/p``).

    >>> checked_out("/nonexistent/w", "exo/w1")
    True
    """
    own = _worktree_git_dir(home)
    if own is None or branch is None:
        return True
    head = (_read(posixpath.join(own, "HEAD")) or "").strip()
    return head == f"ref: refs/heads/{branch}"


def tracks_another(home: str | None, branch: str | None) -> bool:
    """Whether the repository's config (the common ``config``, the worktree's
    ``config.worktree``) may give the agent's ``branch`` an upstream of another name
    (``branch.<branch>.merge``): a push without a refspec goes there where the user's
    ``push.default`` is ``upstream``. Found as a worker: ``git branch -u origin/main``,
    then ``git push``, judged as a push of its own branch, moved the remote's ``main``.
    True where a config cannot be read; False where ``home`` is no worktree ``git
    worktree add`` made.

    >>> tracks_another("/nonexistent/w", "exo/w1")
    False
    """
    own = _worktree_git_dir(home)
    if own is None or branch is None:
        return False
    common = posixpath.dirname(posixpath.dirname(own))
    for path in (posixpath.join(common, "config"), posixpath.join(own, "config.worktree")):
        if not os.path.lexists(path):
            continue
        text = _read(path)
        if text is None:
            return True
        section = ""
        for line in text.splitlines():
            header = _SECTION.match(line)
            if header is not None:
                section = header.group(1)
            key, eq, value = line[header.end() if header else 0 :].partition("=")
            if eq and key.strip().lower() == "merge" and _names(section, branch):
                merge = value.split("#")[0].split(";")[0].strip().strip('"')
                if merge not in (branch, f"refs/heads/{branch}"):
                    return True
    return False


#: A config section header, ``[branch "exo/w1"]`` (or ``[branch.exo/w1]``).
_SECTION = re.compile(r"^\s*\[([^\]]*)\]")


def _names(section: str, branch: str) -> bool:
    """Whether config section ``section`` (a header's inside) may be ``branch``'s."""
    kind, _, sub = section.strip().partition(" ")
    if sub:
        name = sub.strip().strip('"').replace('\\"', '"').replace("\\\\", "\\")
        return kind.lower() == "branch" and name == branch
    return section.strip().lower() == f"branch.{branch}".lower()


def worktrees_ending(start: str, ending: str) -> list[str]:
    """The worktrees of the repository git finds from ``start`` (the main one and each
    linked one ``<common>/worktrees/*/gitdir`` names) whose path ends in ``/ending``: git
    looks a ``git worktree lock/unlock/move/remove`` argument up that way before it reads
    it as a path, and takes the worktree when exactly one matches. Found as a worker:
    ``git worktree remove --force w2`` (and ``move w2 moved``, ``lock .worktrees/w2``),
    judged as acting on ``w2`` inside its own worktree, removed worker w2's worktree.

    >>> worktrees_ending("/nonexistent/w", "w2")
    []
    """
    common = _common_dir(start)
    if common is None or not ending or ending.startswith("/"):
        return []
    paths = [common.removesuffix("/.git")]
    listed = posixpath.join(common, "worktrees")
    try:
        names = os.listdir(listed)
    except OSError:
        names = []
    for name in names:
        back = (_read(posixpath.join(listed, name, "gitdir")) or "").rstrip()
        if back:
            path = posixpath.normpath(posixpath.join(listed, name, back))
            paths.append(path.removesuffix("/.git"))
    return [p for p in paths if p.endswith("/" + ending)]


def _common_dir(start: str) -> str | None:
    """The common git dir of the repository git finds from ``start`` (links followed):
    the nearest ``.git`` directory, or the ``commondir`` of the git dir a ``.git`` file
    names; None where there is none or it cannot be read."""
    path = real_path(start)
    while path is not None:
        dotgit = posixpath.join(path, ".git")
        if os.path.isdir(dotgit):
            return dotgit
        if os.path.isfile(dotgit):
            git_dir = _gitfile(dotgit)
            if git_dir is None:
                return None
            common = (_read(posixpath.join(git_dir, "commondir")) or "").strip()
            return real_path(posixpath.join(git_dir, common)) if common else git_dir
        if path == "/":
            return None
        path = posixpath.dirname(path)
    return None


def _read(path: str, limit: int = _MAX_READ) -> str | None:
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError:
        return None
    return data.decode("utf-8", "replace") if len(data) <= limit else None


def _gitfile(dotgit: str) -> str | None:
    """Where a ``.git`` file's ``gitdir:`` leads (links followed), or None."""
    text = _read(dotgit)
    if text is None or not text.startswith("gitdir: "):
        return None
    target = text[len("gitdir: ") :].strip()
    return real_path(posixpath.join(posixpath.dirname(dotgit), target)) if target else None


def _worktree_git_dir(home: str | None) -> str | None:
    """:func:`_own_git_dir` of ``home`` with its links followed (None: no ``home``)."""
    real_home = real_path(home) if home is not None else None
    return _own_git_dir(real_home) if real_home is not None else None


def _own_git_dir(real_home: str) -> str | None:
    """The worktree's own git dir, if its ``.git`` is what ``git worktree add`` made: a
    file naming ``<common>/worktrees/<name>``, whose ``commondir`` is that ``<common>``
    and whose ``gitdir`` names this ``.git`` back (a git dir the worker made elsewhere
    has neither)."""
    dotgit = posixpath.join(real_home, ".git")
    try:
        if not stat.S_ISREG(os.lstat(dotgit).st_mode):
            return None
    except OSError:
        return None
    git_dir = _gitfile(dotgit)
    if git_dir is None or posixpath.basename(posixpath.dirname(git_dir)) != "worktrees":
        return None
    common = (_read(posixpath.join(git_dir, "commondir")) or "").strip()
    back = (_read(posixpath.join(git_dir, "gitdir")) or "").strip()
    if not common or not back:
        return None
    if real_path(posixpath.join(git_dir, common)) != posixpath.dirname(posixpath.dirname(git_dir)):
        return None
    return git_dir if real_path(posixpath.join(git_dir, back)) == dotgit else None  # relative: 2.48


def _above(real_home: str) -> bool:
    """Whether a ``.git`` lies above the worktree (git, finding none in it, goes on up:
    to the lead's checkout)."""
    path = posixpath.dirname(real_home)
    while True:
        if os.path.lexists(posixpath.join(path, ".git")):
            return True
        if path == "/":
            return False
        path = posixpath.dirname(path)


def _nested(dotgit: str, real_home: str, own: str | None) -> bool:
    """A ``.git`` inside the worktree names a repository wholly its own: a directory in
    it, or a file naming one there or a submodule's in the worktree's own git dir."""
    if os.path.islink(dotgit):
        found = real_path(dotgit)
        return found is not None and _contained(found, real_home, own)
    if os.path.isdir(dotgit):
        return _contained(dotgit, real_home, own)
    git_dir = _gitfile(dotgit)
    return git_dir is not None and _contained(git_dir, real_home, own)


def _contained(git_dir: str, real_home: str, own: str | None) -> bool:
    """``git_dir`` lies in the worktree (or is a submodule's in its own git dir's
    ``modules``), shares no other's refs (no ``commondir``) and names no work tree or
    config file elsewhere (``core.worktree``, ``include.path``: any such line)."""
    modules = posixpath.join(own, "modules") if own is not None else None
    if not is_within(git_dir, real_home) and not is_within(git_dir, modules):
        return False
    if os.path.lexists(posixpath.join(git_dir, "commondir")) or not _entries_inside(git_dir):
        return False
    for name in ("config", "config.worktree"):
        path = posixpath.join(git_dir, name)
        if not os.path.lexists(path):
            continue
        text = _read(path)
        elsewhere = text is None or _ELSEWHERE.search(text) is not None
        if elsewhere and not (is_within(git_dir, modules)
                              and _submodule_tree(text, git_dir, real_home)):  # fmt: skip
            return False
    return True


def _entries_inside(git_dir: str) -> bool:
    """Each entry of ``git_dir`` (``refs``, ``objects``, ``HEAD``...) lies where it is,
    not behind a link to another repository's (``refs -> <project>/.git/refs``)."""
    try:
        names = os.listdir(git_dir)
    except OSError:
        return False
    if len(names) > _MAX_ENTRIES:
        return False
    for name in names:
        path = posixpath.join(git_dir, name)
        if os.path.islink(path) and real_path(path) != path:
            return False
    return True


def _submodule_tree(text: str | None, git_dir: str, real_home: str) -> bool:
    """A submodule's config: its one ``core.worktree`` leads into the worktree, and it
    includes no file."""
    if text is None or re.search(r"^\s*path\s*=", text, re.IGNORECASE | re.MULTILINE):
        return False
    trees = re.findall(r"^\s*worktree\s*=\s*(.*?)\s*$", text, re.IGNORECASE | re.MULTILINE)
    found = [real_path(posixpath.join(git_dir, t.strip('"'))) for t in trees]
    return all(f is not None and is_within(f, real_home) for f in found)
