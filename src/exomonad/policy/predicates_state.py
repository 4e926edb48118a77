"""Predicates on ExoMonad's own state and the files that carry its gate: the state dir
(tokens, policy, databases), agents' hook/MCP settings, Claude Code's team files. Split
from :mod:`exomonad.policy.predicates`, which exports them.

>>> from exomonad.policy.actions import WriteFile
>>> ctx = Context(role="w", worktree="/p/w", project_root="/p", state_dir="/p/.exomonad")
>>> touches_control_files(WriteFile("/p/w/.claude/settings.json"), ctx)
True
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
from typing import Protocol

from exomonad.panes.spool import default_spool_dir, recipient_dir
from exomonad.policy.actions import ReadFile, Shell
from exomonad.policy.control_files import (
    CONTROL_DIRS,
    CONTROL_FILES,
    fold_glob,
    git_glob_reaches,
    is_glob,
    names_control,
    patterns_may_name_control,
    under_control_dir,
)
from exomonad.policy.request import Context
from exomonad.policy.shell_archive import ARCHIVERS, unpack_dirs
from exomonad.policy.shell_env import is_within
from exomonad.policy.shell_paths import may_climb
from exomonad.policy.shell_reads import packs
from exomonad.policy.state_built import names_built_state, printed_text
from exomonad.policy.state_reads import (
    STATE_NAMES,
    expands_state_var,
    glob_could_name,
    glob_names_state,
    glob_reaches_state,
    holds_state_dir,
    in_state_dir,
)
from exomonad.policy.state_reads import reads_state_tree as _reads_state_tree
from exomonad.util.paths import real_path

__all__ = [
    "HasPath",
    "command_words",
    "reads_others_mail",
    "reads_others_spool",
    "reads_state_dir",
    "reads_state_tree",
    "shell_touches_control_files",
    "shell_touches_state",
    "touches_control_files",
    "touches_team_files",
]


class HasPath(Protocol):
    """Any action with a ``path`` (ReadFile, WriteFile, DeleteFile)."""

    @property
    def path(self) -> str | None:
        """The absolute path, or None if unknown."""
        ...


def touches_control_files(action: HasPath, ctx: Context) -> bool:
    """The path is ExoMonad's state dir or an agent's hook/MCP settings (a policy bypass):
    a settings file, a directory holding them (``cp x/settings.json .claude/`` is a write
    of ``.claude``), a glob that could name one (``.claude/settings.js*``, case ignored)
    or, for a recursive delete, a checkout or a directory above it (``rm -rf .``).

    >>> from exomonad.policy.actions import DeleteFile, WriteFile
    >>> ctx = Context(role="w", worktree="/p/w", project_root="/p")
    >>> touches_control_files(WriteFile("/p/w/.claude"), ctx)
    True
    >>> touches_control_files(WriteFile("/p/w"), ctx)  # cp a.txt .
    False
    >>> touches_control_files(DeleteFile("/p/w", recursive=True), ctx)
    True
    """
    path = action.path
    if path is None:
        return False
    if _in_state_dir(path, ctx):
        return True
    real = real_path(path)  # a symlink to an agent's settings (None: not known, asked)
    both = {path} if real is None else {path, real}
    if any(names_control(p) for p in both):
        return True
    if any(_in_own_config(p, ctx) for p in both):
        return True  # .claude/skills/x/SKILL.md: a worker's skill runs unhooked commands
    recursive = bool(getattr(action, "recursive", False))
    only: tuple[str, ...] = getattr(action, "include", ())
    if only and not patterns_may_name_control(only):
        return False  # find . -name '*.pyc' -delete
    return recursive and any(_holds_checkout(p, ctx) for p in both)


def _in_own_config(path: str, ctx: Context) -> bool:
    """``path`` is in an agent's configuration directory inside a worker's worktree
    (:func:`~exomonad.policy.control_files.under_control_dir`); the lead, whose checkout
    is the project, may still write its skills and commands."""
    worktree = ctx.worktree
    if not worktree or worktree == ctx.project_root or not is_within(path, worktree):
        return False
    return under_control_dir(path[len(posixpath.normpath(worktree)) :])


def _checkouts(ctx: Context) -> tuple[str, ...]:
    """The checkouts whose root holds an agent's settings: its worktree, the project."""
    return tuple(posixpath.normpath(r) for r in (ctx.worktree, ctx.project_root) if r)


def _holds_checkout(path: str, ctx: Context) -> bool:
    """``path`` is a checkout's root or a directory above it, or a glob that could name
    one (case ignored; ``*`` skips dot names): the tree below it holds the settings."""
    roots = _checkouts(ctx)
    if any(is_within(root, path) for root in roots):
        return True
    if not is_glob(path):
        return False
    inside = (*CONTROL_DIRS, *(f for f in CONTROL_FILES if "/" not in f))
    return any(glob_could_name(f"{root}/{name}".lower(), path.lower(), below=False)
               for root in roots for name in inside)  # fmt: skip


def _folded(ctx: Context) -> Context:
    """``ctx`` with its state dir lowered, to judge a lowered glob (see :func:`fold_glob`)."""
    state = ctx.state_dir
    return dataclasses.replace(ctx, state_dir=state.lower()) if state else ctx


def _in_state_dir(path: str, ctx: Context) -> bool:
    """:func:`in_state_dir`, a glob's names matched whatever their case."""
    return in_state_dir(path, ctx) or (is_glob(path) and in_state_dir(path.lower(), _folded(ctx)))


def _holds_state_dir(path: str | None, ctx: Context) -> bool:
    """:func:`holds_state_dir`, a glob's names matched whatever their case."""
    if holds_state_dir(path, ctx):
        return True
    return path is not None and is_glob(path) and holds_state_dir(path.lower(), _folded(ctx))


def reads_state_dir(action: HasPath, ctx: Context) -> bool:
    """The path is inside ExoMonad's state dir (tokens, databases, policy, config), or a
    glob that could name it (``/p/.exo*/lead.token``, ``/p/.EXOMONA[D]/LEAD.TOKE[N]``:
    bash with ``nocaseglob`` matches it)."""
    path = action.path
    return path is not None and _in_state_dir(path, ctx)


def reads_state_tree(action: ReadFile, ctx: Context) -> bool:
    """:func:`exomonad.policy.state_reads.reads_state_tree`, a glob naming the tree
    whatever its case (``tar cf - ~/PRO[J]`` with ``nocaseglob`` reads ``~/proj``)."""
    if _reads_state_tree(action, ctx):
        return True
    path = action.path
    if path is None or not is_glob(path):
        return False
    folded = ReadFile(path.lower(), action.recursive, action.include)
    return _reads_state_tree(folded, _folded(ctx))


def _team_dirs(ctx: Context) -> tuple[str, str]:
    root = os.environ.get("CLAUDE_CONFIG_DIR") or posixpath.join(ctx.home, ".claude")
    root = posixpath.normpath(root)
    return posixpath.join(root, "teams"), posixpath.join(root, "tasks")


def touches_team_files(action: HasPath, ctx: Context) -> bool:
    """The path is under Claude Code's ``teams/`` or ``tasks/`` (inboxes, team configs,
    task files): agents talk through their tools, never by writing those files (a written
    ``permission_response`` "from" the lead would answer an escalation)."""
    path = action.path
    return path is not None and any(path == d or path.startswith(d + "/")
                                    for d in _team_dirs(ctx))  # fmt: skip


def reads_others_mail(action: ReadFile, ctx: Context) -> bool:
    """An agent other than the lead reads Claude Code's inboxes (a file in a team's
    ``inboxes/`` but its own, or a recursive read of a directory holding them): every message the
    team sends, pending permission requests and their ids (found probing: a worker
    read the lead's inbox, which ``/events`` and ``/status`` keep from workers). A glob
    that could name anything below ``teams/`` counts (:func:`_reaches`: ``cat
    ~/.claude/team[s]/T/inboxes/w2.json`` printed another worker's inbox, allowed)."""
    if ctx.role == "tl" or action.path is None:
        return False
    teams, _ = _team_dirs(ctx)
    real = real_path(action.path)
    own = f"/inboxes/{ctx.agent}.json"
    for path in {action.path} if real is None else {action.path, real}:
        inside = path.startswith(teams + "/") and "/inboxes/" in path[len(teams) :] + "/"
        if inside and not (path.endswith(own) and path.count("/inboxes/") == 1):
            return True
        if action.recursive and not action.include and is_within(teams, path):
            return True
        if is_glob(path) and _reaches(path, teams, recursive=action.recursive):
            return True
    return False


def reads_others_spool(action: ReadFile, ctx: Context) -> bool:
    """An agent other than the lead reads messages parked for someone else: a path in the
    spool directory (where a message too long to type into a pane is written, and a
    pointer to it typed: :mod:`exomonad.panes.spool`) outside its own recipient
    directory, or a recursive read of a directory holding the spool. Found probing: a
    worker's ``cat /tmp/exomonad-<uid>/spool/*.md``, allowed, printed the lead's task
    for another worker, whose inbox it may not read (:func:`reads_others_mail`)."""
    if ctx.role == "tl" or action.path is None:
        return False
    root = str(default_spool_dir())
    try:
        own = str(recipient_dir(root, ctx.team, ctx.agent)) if ctx.team else None
    except ValueError:
        own = None
    real = real_path(action.path)
    for path in {action.path, posixpath.normpath(action.path), real} - {None}:
        assert path is not None
        if not is_within(path, own) and _reaches(path, root, recursive=action.recursive):
            return True
    return False


def _reaches(path: str, root: str, *, recursive: bool) -> bool:
    """``path`` is ``root`` or below it, or (``recursive``) above it; a glob when, in any
    case (``nocaseglob``), it could name such a path."""
    if is_within(path, root) or (recursive and is_within(root, path)):
        return True
    if not is_glob(path):
        return False
    pattern, target = path.lower(), root.lower()
    return glob_could_name(target, pattern, below=True) or (
        recursive and glob_could_name(target, pattern, below=False)
    )


def shell_touches_state(action: Shell, ctx: Context) -> bool:
    """A shell command names ExoMonad's state dir or one of its secrets, literally or by
    a glob that could match it (``cat .exo*/lead.token``, ``cat */*.token``): whatever
    the program, it may read or write them. A glob's names count whatever their case
    (``cat ../../.EXOMONA[D]/LEAD.TOKE[N]`` after ``shopt -s nocaseglob``). Errs on the
    side of refusing. So does a path built at run time from pieces that name it
    (``.exo$(echo mo)nad``, ``${d}omonad``: :func:`names_built_state`), and what
    ``printf`` or ``echo`` prints (``printf '../../.exo%snad' mo``, ``\x2e`` escapes).
    A state name counts in any case (found probing: ``g=${PWD%/*/*}/.EXOMONAD/LEAD.TOKEN;
    head "${g,,}"`` printed the token, allowed)."""
    words = command_words(action)
    builds = bool(words) and posixpath.basename(words[0]) in _PRINTERS
    for given in action.argv:
        if _word_touches_state(given, action.cwd, ctx):
            return True
        if builds and _word_touches_state(printed_text(given), action.cwd, ctx):
            return True
    return False


#: Programs that print their words with escapes and conversions decoded.
_PRINTERS = frozenset({"printf", "echo"})


def _word_touches_state(given: str, cwd: str | None, ctx: Context) -> bool:
    """One word of :func:`shell_touches_state`."""
    word, state = fold_glob(given), ctx.state_dir
    if state and word != given:
        state = state.lower()
    low = given.lower()  # in any case: `${g,,}`, `declare -l` lower it when the line runs
    if any(name in low for name in STATE_NAMES) or expands_state_var(given):
        return True
    if state and posixpath.normpath(posixpath.join(cwd or "/", word)).startswith(state):
        return True
    if _glob_names_state(given, word, cwd, ctx.state_dir):
        return True
    return names_built_state(given, cwd, ctx.state_dir)


def _glob_names_state(given: str, word: str, cwd: str | None, state: str | None) -> bool:
    """A glob among a command's words that could name the state: where it points from
    ``cwd`` (``*`` matching dot names too, for ``dotglob``: ``ls *`` in a worktree names
    none of it, ``ls ../../*`` does), and now through a link; by its text alone
    (:func:`glob_names_state`) when the cwd or the state dir is unknown, the glob
    expands a variable (``cat $X/*``) or may match ``..`` (``.*/.*/.*/*``). ``word`` is
    ``given`` with its case folded for ``nocaseglob``."""
    if not is_glob(word):
        return False
    if cwd is None or state is None or "$" in word or "`" in word or may_climb(word):
        return glob_names_state(word)
    if word != given:  # its case folded: the lexical check again, on the folded names
        folded = posixpath.normpath(posixpath.join(cwd, word))
        if glob_could_name(state.lower(), folded, below=True, dotglob=True):
            return True
    return glob_reaches_state(posixpath.normpath(posixpath.join(cwd, given)), state)


#: Programs that only read the files they are given.
_READERS = frozenset({"cat", "head", "tail", "less", "more", "grep", "rg", "jq", "wc", "diff",
                      "ls", "stat", "file", "md5sum", "sha256sum", "cmp"})  # fmt: skip
#: git subcommands that read or stage files without rewriting them.
_GIT_READS = frozenset({"add", "diff", "log", "status", "show", "blame", "ls-files"})
#: Programs that only print names or sizes of the paths they are given, or whose writes
#: the classifier models as actions of their own (``find -delete``): a control directory
#: in their words is no write.
_LISTERS = frozenset({"find", "du", "tree", "echo", "printf", "realpath", "readlink",
                      "basename", "dirname", "test", "["})  # fmt: skip
#: Programs that write whatever an archive (or a source tree) holds into a directory.
_UNPACKERS = ARCHIVERS | {"pax", "rsync"}


def command_words(action: Shell) -> list[str]:
    """The command's words after leading wrappers and variable assignments."""
    words = list(action.argv)
    while words and (words[0] in ("env", "command", "exec", "nohup") or "=" in words[0]):
        words = words[1:]
    return words


def shell_touches_control_files(action: Shell, ctx: Context) -> bool:
    """A shell command that may rewrite an agent's hook/MCP settings or Claude Code's
    team files (``perl -pi``, ``sort -o``, ``git checkout REV -- .mcp.json``, ``python -c
    "open(...)"``, ``patch``: any program but a plain reader naming one, its directory
    (``git rm -r .claude``) or a glob that could name one, case ignored; a forged inbox
    entry "from" the lead would answer an escalation), rewrite a checkout from a revision
    (``git checkout REV -- .``, ``git rm -r .``), or unpack an archive where ExoMonad's
    state dir lives or into an agent's settings directory (``tar -xf x.tar -C <project>``
    could plant ``.exomonad/policy.py``, ``rsync x/ .claude`` a ``settings.json``)."""
    words = command_words(action)
    if not words:
        return False
    program = posixpath.basename(words[0])
    sub = next((w for w in words[1:] if not w.startswith("-")), "")
    reads = program in _READERS or (program == "git" and sub in _GIT_READS)
    names = (*CONTROL_FILES, ".claude/teams/", ".claude/tasks/",
             *(d + "/" for d in _team_dirs(ctx)))  # fmt: skip
    if not reads and any(name in word for word in words[1:] for name in names):
        return True
    lists = reads or program in _LISTERS
    if not lists and any(_names_control_word(w, action.cwd) for w in words[1:]):
        return True
    named = [posixpath.normpath(posixpath.join(action.cwd or "/", w)) for w in words[1:]]
    if not lists and any(_in_own_config(p, ctx) for p in named):
        return True
    if program == "git" and _git_rewrites_checkout(words[1:], action.cwd, ctx):
        return True
    if program in _UNPACKERS and not packs(program, words[1:]):
        operands = [w for w in words[1:] if not w.startswith("-")]
        if program == "rsync":  # it writes into its destination only
            operands, places = operands[-1:], []
        else:
            places = [action.cwd]
        into = [posixpath.normpath(posixpath.join(action.cwd or "/", w)) for w in operands]
        dirs = unpack_dirs(program, words[1:], action.cwd)  # -C DIR, --directory=DIR, -dDIR
        if ctx.state_dir and any(_holds_state_dir(p, ctx) for p in [*places, *into, *dirs]):
            return True
        into = into if program == "rsync" else dirs  # where it writes the files it holds
        return any(names_control(p) for p in into)
    return False


def _names_control_word(word: str, cwd: str | None) -> bool:
    """A command's word (or an option's value, ``--file=X``) names a control file or
    directory, or is a glob that could name one (see :func:`names_control`)."""
    values = [word, word.split("=", 1)[1]] if "=" in word else [word]
    return any(names_control(posixpath.normpath(posixpath.join(cwd or "/", v)))
               for v in values if v)  # fmt: skip


#: git's options before its subcommand that take a value.
_GIT_GLOBAL_ARG = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})


def _git_rewrites_checkout(args: list[str], cwd: str | None, ctx: Context) -> bool:
    """``git ARGS`` writes files of a checkout from a revision (``checkout REV --
    PATHS``, ``restore --source REV PATHS``) or deletes them (``rm -r PATHS``), and a
    pathspec may reach an agent's settings: a checkout root or a directory above it
    (``.``), magic (``:/``, ``:!src``), or a glob that could match one (git's ``*``
    crosses ``/``: ``'*.json'``). From the index (``git checkout -- .``) it restores
    what is committed."""
    while args and args[0].startswith("-"):
        if args[0] in _GIT_GLOBAL_ARG and len(args) > 1:
            if args[0] == "-C":
                cwd = posixpath.join(cwd or "/", args[1])
            args = args[2:]
        else:
            args = args[1:]
    if not args or args[0] not in ("checkout", "restore", "rm"):
        return False
    sub, rest = args[0], args[1:]
    dashes = rest.index("--") if "--" in rest else len(rest)
    before, after = rest[:dashes], rest[dashes + 1 :]
    opts = [w for w in before if w.startswith("-")]
    plain = [w for w in before if not w.startswith("-")]
    listed = any(o.startswith(("--pathspec-fr", "--pathspec-from")) for o in opts)
    if sub == "rm":  # its paths from a file: any of them, a settings file included
        rewrites = listed or any(o == "--recursive" or (o[1:2] != "-" and "r" in o) for o in opts)
    elif sub == "checkout":  # `checkout REV -- PATHS`, `checkout REV PATHS`
        rewrites = bool(plain) if "--" in rest or listed else len(plain) > 1
        plain = plain[1:]
    else:  # restore: the revision (-s REV) is judged as a path too; it names none
        rewrites = any(o == "--source" or o.startswith(("--source=", "-s")) for o in opts)
    paths = [*plain, *after]
    if not rewrites:
        return False
    if listed:
        return True  # --pathspec-from-file: the paths are not on the command line
    roots = _checkouts(ctx)
    for path in paths:
        full = posixpath.normpath(posixpath.join(cwd or "/", path))
        if "$" in path or "`" in path:
            return True  # known when it runs: `$(cat f)`, `$P`
        if path.startswith(":") or _holds_checkout(full, ctx):
            return True
        if is_glob(path) and git_glob_reaches(full, roots):
            return True
    return False
