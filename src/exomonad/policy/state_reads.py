"""Where ExoMonad's state dir is, seen from a path: in it, named by a glob, or below it.

Agents never read ``.exomonad/`` (tokens, databases, policy): not by naming it, and not by
reading a directory tree that holds it (``grep -r token ../..`` from a worktree).

>>> ctx = Context(role="w", state_dir="/p/.exomonad")
>>> in_state_dir("/p/.exo*/lead.token", ctx), holds_state_dir("/p", ctx)
(True, True)
"""

from __future__ import annotations

import os
import posixpath
import re

from exomonad.policy.actions import ReadFile
from exomonad.policy.request import Context
from exomonad.policy.shell_env import is_within
from exomonad.policy.shell_globs import shell_match
from exomonad.policy.shell_paths import may_climb
from exomonad.util.paths import real_path

__all__ = [
    "EXPAND_AT_MOST",
    "STATE_FILES",
    "STATE_NAMES",
    "expand_now",
    "expands_state_var",
    "glob_could_name",
    "glob_names_state",
    "glob_reaches_state",
    "holds_state_dir",
    "in_state_dir",
    "reads_state_tree",
    "shell_glob_matches",
]

#: Names in ExoMonad's state dir that say "token" or "database" on their own.
STATE_NAMES = (".exomonad", "lead.token", "tokens.json", "approvals.db", "ledger.db")

#: An expansion of ``$EXOMONAD_DIR``, the state dir ExoMonad gives every agent it starts
#: (``$EXOMONAD_DIR``, ``${EXOMONAD_DIR}``, ``${EXOMONAD_DIR:-x}``, ``${!EXOMONAD_DIR}``).
_STATE_VAR = re.compile(r"\$\{?[!#]?EXOMONAD_DIR(?![A-Za-z0-9_])")
#: The variable's name standing alone: after a command substitution's start, it names
#: the state dir (``$(printenv EXOMONAD_DIR)``). Searched from there, not by a lazy
#: ``$(.*?NAME`` (quadratic: 30 KB of ``$(x`` took 5.6 s of the server's time).
_STATE_VAR_NAME = re.compile(r"(?<![A-Za-z0-9_])EXOMONAD_DIR(?![A-Za-z0-9_])")


def expands_state_var(text: str) -> bool:
    """Whether shell text expands ``$EXOMONAD_DIR`` (found probing as a worker: ``cat
    $EXOMONAD_DIR/config.toml`` and ``cat <"$EXOMONAD_DIR/lead.token"`` were allowed),
    or holds a command substitution naming it (``cat "$(printenv
    EXOMONAD_DIR)/$(echo lead).token"`` printed the lead's token, allowed).

    >>> expands_state_var('cat "${EXOMONAD_DIR}"/x'), expands_state_var("$EXOMONAD_DIRS")
    (True, False)
    >>> expands_state_var("$(printenv EXOMONAD_DIR)/x"), expands_state_var("EXOMONAD_DIR")
    (True, False)
    """
    if _STATE_VAR.search(text) is not None:
        return True
    opened = [i for i in (text.find("$("), text.find("`")) if i >= 0]  # a substitution,
    return bool(opened) and _STATE_VAR_NAME.search(text, min(opened)) is not None  # linear


def in_state_dir(path: str, ctx: Context) -> bool:
    """``path`` is in the state dir, or names it (``/.exomonad/``, a glob like ``.exo*``).

    >>> ctx = Context(role="w", state_dir="/p/.exomonad")
    >>> [in_state_dir(p, ctx) for p in ("/p/w/src/**/*.py", "/p/**/lead.token", "/p/w/**/*.token")]
    [False, True, True]
    """
    return ctx.in_state_dir(path) or "/.exomonad/" in path + "/" or _glob_reaches(path, ctx)


def _glob_reaches(path: str, ctx: Context) -> bool:
    """:func:`glob_names_state`, but a ``**`` that starts below a directory which neither
    holds the state dir nor lies in it reaches nothing of it, lexically, as every tree
    read is judged (a worktree's ``src/**/*.py``: Gemini's ``read_many_files``), unless
    its last part could name one of the state's files: a symlink below could lead into
    the state dir, and the last part decides which files a glob reads
    (``<worktree>/**/lead.token`` counts); the rest of the glob still counts too."""
    if not glob_names_state(path):
        return False
    parts = path.split("/")
    deep = next((k for k, part in enumerate(parts) if "**" in part), None)
    if ctx.state_dir is None or not path.startswith("/"):
        return True
    if deep is None:  # a part that may match `..` climbs where the text cannot tell
        return (
            glob_names_state(path) if may_climb(path) else glob_reaches_state(path, ctx.state_dir)
        )
    last = parts[-1]
    if "{" in last or any(shell_match(n, last) for n in (*STATE_NAMES, *STATE_FILES)):
        return True
    prefix = "/".join(parts[:deep]) or "/"
    if any(glob_could_name(ctx.state_dir, prefix, below=b) for b in (False, True)):
        return True
    return glob_names_state("/".join(part for part in parts if "**" not in part))


#: How many names the policy looks at to expand a glob (directory entries read and
#: names tried; beyond, it is judged by its text alone: :func:`glob_names_state`).
EXPAND_AT_MOST = 10_000


def expand_now(pattern: str) -> list[str] | None:
    """What the absolute shell glob ``pattern`` may expand to now, each name with the
    links on it followed (dot names too: ``shopt -s dotglob`` may be on); None if that
    takes reading more than :data:`EXPAND_AT_MOST` names, or a name's links cannot be
    followed (:func:`~exomonad.util.paths.follow`). The work is bounded, not only
    the result: found trying the gate as a worker, ``cat /usr/*/*/*/*/*/*/nope`` made
    the policy walk all of ``/usr`` for a name that is nowhere (2 s a call).

    >>> expand_now("/proc/self/nope*"), expand_now("/") == ["/"]
    ([], True)
    """
    paths, budget = ["/"], EXPAND_AT_MOST
    for part in (p for p in pattern.split("/") if p):
        found: list[str] = []
        for path in paths:
            if budget <= 0:
                return None
            if not any(c in part for c in "*?["):  # a plain name: is it there?
                budget -= 1
                if os.path.lexists(os.path.join(path, part)):
                    found.append(os.path.join(path, part))
                continue
            try:
                with os.scandir(path) as entries:
                    for entry in entries:
                        budget -= 1
                        if budget < 0:
                            return None
                        if shell_match(entry.name, part):
                            found.append(entry.path)
            except OSError:  # not a directory, or not readable: names nothing
                continue
        paths = found
    real = [real_path(p) for p in paths]  # a name whose links cannot be followed: the
    return None if None in real else [p for p in real if p is not None]  # glob unknown


def glob_reaches_state(pattern: str, state: str) -> bool:
    """Whether the absolute shell glob ``pattern`` could name the state dir or a path in
    it: by its text (``*`` matching dot names too, as with ``shopt -s dotglob``; a
    worktree's ``*`` names none of it: found as a worker, ``ls *`` and ``grep -n x *``
    were refused as the state's), or now through a link among the names it expands to
    (``st -> ../../.exomonad``: ``cat st/*``).

    >>> glob_reaches_state("/p/.worktrees/w/*", "/p/.exomonad")
    False
    >>> [glob_reaches_state(p, "/p/.exomonad") for p in ("/p/.exo*/*", "/p/*", "/p/.*")]
    [True, True, True]
    """
    if glob_could_name(state, pattern, below=True, dotglob=True):
        return True
    names = expand_now(pattern)
    if names is None:
        return glob_names_state(pattern)
    real = real_path(state)
    return real is None or any(is_within(name, real) for name in names)


def glob_names_state(text: str) -> bool:
    """A ``/``-separated part of ``text`` is a glob that could match one of STATE_NAMES."""
    for part in text.split("/"):
        if any(c in part for c in "*?[") and any(shell_match(n, part) for n in STATE_NAMES):
            return True
    return False


def holds_state_dir(path: str | None, ctx: Context) -> bool:
    """``path`` is ExoMonad's state dir, its parent or an ancestor (``../..`` from a
    worktree, the project root, ``~``, ``/``): the tree below it holds the state. A glob
    counts if, expanded as a shell would (``*`` skips dot names), it could name one.

    >>> ctx = Context(role="w", state_dir="/p/.exomonad")
    >>> [holds_state_dir(p, ctx) for p in ("/", "/p", "/p/src", "/p/.*", "/p/*", None)]
    [True, True, False, True, False, False]
    """
    state = ctx.state_dir
    if path is None or state is None:
        return False
    if is_within(state, path):
        return True
    if not any(c in path for c in "*?[{"):
        return False
    return glob_could_name(state, path, below=False)


def glob_could_name(target: str, pattern: str, *, below: bool, dotglob: bool = False) -> bool:
    """Whether the shell glob ``pattern`` (``*`` skips dot names, unless ``dotglob``)
    could name ``target`` itself and, with ``below``, a path under it; without, a
    directory above it.

    >>> glob_could_name("/h/.ssh", "/h/.ss?/id_rsa", below=True)
    True
    >>> glob_could_name("/h/.ssh", "/h/*/id_rsa", below=True)
    False
    >>> glob_could_name("/p/.exomonad", "/p", below=False)
    True
    """
    parts, names = pattern.rstrip("/").split("/"), posixpath.normpath(target).split("/")
    if (len(parts) < len(names)) if below else (len(parts) > len(names)):
        return False
    return all(shell_glob_matches(p, n, dotglob=dotglob)
               for p, n in zip(parts, names, strict=False))  # fmt: skip


def shell_glob_matches(pattern: str, name: str, *, dotglob: bool = False) -> bool:
    """A shell glob's matching of one path part (braces and ``**`` match)."""
    if "{" in pattern or "**" in pattern:
        return True
    if name.startswith(".") and not pattern.startswith(".") and not dotglob:
        return False
    return shell_match(name, pattern)


#: The runtime files of the state dir (``.exomonad/.gitignore`` keeps them out of git):
#: tokens, databases, the audit log, the socket. Its committed files (``config.toml``,
#: ``policy.py``) are in every checkout of the project anyway.
STATE_FILES = ("tokens.json", "lead.token", "approvals.db", "approvals.db-wal",
               "approvals.db-shm", "ledger.db", "ledger.db-wal", "ledger.db-shm",
               "audit.jsonl", "teams.json", "server.pid", "server.sock")  # fmt: skip


def reads_state_tree(action: ReadFile, ctx: Context) -> bool:
    """A recursive read (hidden and ignored files included) of a directory holding the
    state dir (:func:`holds_state_dir`): ``grep -r token ../..``, ``tar cf - ~``,
    ``cp -r <project> /tmp``, unless its ``include`` globs match none of the state's
    files (``grep -r --include='*.py' foo .``)."""
    if not action.recursive or not holds_state_dir(action.path, ctx):
        return False
    if not action.include:
        return True
    return any(
        "{" in glob or shell_match(name, glob.rsplit("/", 1)[-1])
        for glob in action.include
        for name in STATE_FILES
    )
