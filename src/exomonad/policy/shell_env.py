"""Shared state and small helpers for the shell classifiers (what the agent's checkout is)."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TypeVar, overload

from exomonad.policy.shell_lex import Word

T = TypeVar("T")

__all__ = [
    "EXACT_FLAGS",
    "Options",
    "ShellEnv",
    "git_dir_like",
    "in_a_row",
    "is_within",
    "nested_repo",
    "scan_options",
    "short_cluster",
]


def in_a_row(seq: tuple[str, ...], texts: list[str]) -> bool:
    """Whether a program's verbs ``seq`` stand in its arguments ``texts``: two or more in
    a row anywhere among the words that are not options (``aws --profile p configure
    get``); a single one as the program's verb, the first word that does not follow an
    option (which may take it as its value: ``npm --registry R login``, ``op --account A
    read``; a word right after an option that is the verb counts too). ``npm test --
    --grep login`` and ``docker run img login`` are no login.

    >>> in_a_row(("configure", "get"), ["--profile", "p", "configure", "get", "x"])
    True
    >>> [in_a_row(("login",), t.split()) for t in ("login", "--registry r login",
    ...                                          "--global login", "test -- --grep login")]
    [True, True, True, False]
    """
    if len(seq) > 1:
        words = [t for t in texts if not t.startswith("-")]
        return any(tuple(words[i : i + len(seq)]) == seq for i in range(len(words)))
    valued = False  # the word before was an option that may take this one as its value
    for text in texts:
        if text == "--":
            return False
        if text.startswith("-"):
            valued = "=" not in text
            continue
        if text == seq[0]:
            return True
        if not valued:
            return False
        valued = False
    return False


def is_within(path: str | None, root: str | None) -> bool:
    """True if ``path`` is ``root`` or below it (lexically); False if either is unknown.

    >>> is_within("/w/a/b", "/w/a"), is_within("/w/ab", "/w/a"), is_within(None, "/w")
    (True, False, False)
    """
    if path is None or root is None:
        return False
    root = posixpath.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


@dataclass
class ShellEnv:
    """What one classification knows about the agent's checkout; mutable per command line.

    ``branch`` is the branch checked out in ``worktree`` (or in ``start_cwd`` when the
    worktree is unknown). A ``git checkout``/``switch`` earlier in the same command line,
    or a ``HEAD`` on disk that names another (``head_on_disk``), makes it unknown
    (``branch_moved``).
    """

    worktree: str | None = None
    branch: str | None = None
    start_cwd: str | None = None
    branch_moved: bool = False
    commands_seen: int = 0
    stdin_redirected: bool = False
    #: An ``exec`` of the line so far sent its output where another command reads it
    #: (``exec > >(xargs cat)``): see :func:`~exomonad.policy.shell_stdin.passes_on`.
    stdout_redirected: bool = False
    #: The policy's protected branch patterns (``fnmatch``), for local ref moves.
    protected: tuple[str, ...] = ("main", "master")
    #: ``CDPATH`` may be set by the command line so far (a nested shell inherits it).
    cdpath: bool = False
    #: The line may change this shell's directory: a ``trap``'s command, run later, runs
    #: where nobody knows (:mod:`~exomonad.policy.shell_cd`).
    moves: bool = False
    #: A command of the line so far may have made symbolic links (``shell_links``).
    links_made: bool = False
    #: ... or a ``.git``, ``HEAD`` or ``commondir``: git may then take a directory of the
    #: worktree for another repository (``shell_links.note_writes``, ``vcs``).
    git_files: bool = False
    #: ... or, from a plain ``mv`` or ``cp -r``, only what lies below these paths (and
    #: they themselves: globs kept as written): git run elsewhere is not reached.
    trees_moved: tuple[str, ...] = ()
    #: ... or, from an unzip first in the line, none (its archive listed when judged:
    #: ``shell_unpacked``), while no later command may have rewritten the archive.
    archives_listed: tuple[str, ...] = ()
    #: The line may point HTTP clients at another configuration (``HOME=.``,
    #: ``XDG_CONFIG_HOME=``, ``CURL_HOME=``...: ``shell_network.sets_client_config``).
    client_config: bool = False
    #: A reader of the line so far was given a name made at run time (its command):
    #: see :mod:`~exomonad.policy.shell_names`.
    made_name_read: str | None = None
    #: Whether the worktree's ``HEAD`` on disk still names ``branch``
    #: (``git_home.checked_out``): asked the first time the branch is needed.
    head_on_disk: Callable[[], bool] | None = None

    def protects(self, name: Word | None) -> bool:
        """Whether branch ``name`` may be a protected one: it matches a pattern (also
        spelled ``refs/heads/NAME``), or is not known until git runs (``$B``,
        ``@{-1}``, ``-``: the branch checked out before).

        >>> env = ShellEnv()
        >>> [env.protects(Word(t)) for t in ("main", "refs/heads/main", "feature", "@{-1}")]
        [True, True, False, True]
        """
        if name is None or name.dynamic or name.glob or "@{" in name.text or name.text == "-":
            return True
        text = name.text.removeprefix("refs/heads/")
        return any(fnmatchcase(text, pattern) for pattern in self.protected)

    def branch_in(self, repo: str | None) -> str | None:
        """The branch checked out in ``repo``, if known.

        A directory below the worktree counts only if no ``.git`` lies between them and
        nothing else ran before in the same command line (it may have made a repository
        there: ``git clone ... sub && cd sub && git push origin HEAD``).
        """
        if self.head_on_disk is not None:
            self.branch_moved |= not self.head_on_disk()
            self.head_on_disk = None
        if self.branch_moved or self.branch is None:
            return None
        if self.worktree is not None:
            if not is_within(repo, self.worktree) or repo is None:
                return None
            root = posixpath.normpath(self.worktree)
            if repo != root and (self.commands_seen or nested_repo(repo, root)):
                return None
            return self.branch
        return self.branch if repo is not None and repo == self.start_cwd else None


def nested_repo(path: str, root: str) -> bool:
    """True if a ``.git`` exists in ``path`` or a directory between it and ``root``, or
    one of them is what git takes for a git dir (:func:`git_dir_like`)."""
    while path != root and len(path) > len(root):
        if os.path.lexists(posixpath.join(path, ".git")) or git_dir_like(path):
            return True
        path = posixpath.dirname(path)
    return False


def git_dir_like(path: str) -> bool:
    """``path`` may be what git takes for a git dir when it looks for one: it holds a
    ``HEAD`` and a ``commondir``, ``objects`` or ``refs`` (found as a worker: ``sub/HEAD``
    and ``sub/commondir`` written by ``echo`` made ``git -C sub push origin`` push the
    lead's ``main``, judged as a push of the worker's own branch)."""
    return os.path.lexists(posixpath.join(path, "HEAD")) and any(
        os.path.lexists(posixpath.join(path, name)) for name in ("commondir", "objects", "refs")
    )


#: Long flags some program has exactly that begin another program's option taking a
#: value (rsync's ``--partial``/``--partial-dir``, ``--backup``/``--backup-dir``; curl's
#: ``--head``; ag's ``--filename``): ``getopt_long`` takes an exact name as it is, so
#: these are never read as abbreviations.
EXACT_FLAGS = frozenset({"--partial", "--backup", "--head", "--filename", "--ignore"})


class Options(dict[str, list[Word | None]]):
    """The options :func:`scan_options` found, keyed as written; looking one up by its
    full long name also finds what abbreviates it (``getopt_long`` and ``argparse`` take
    any unique prefix: ``sort --out=F`` is ``--output=F``). An ambiguous prefix makes the
    real program fail, so reading it as each option it begins is only stricter.

    >>> _, opts = scan_options([Word("--recur"), Word("--out=x")], frozenset({"--output"}))
    >>> "--recursive" in opts, [w.text for w in opts["--output"] if w], "--exclude" in opts
    (True, ['x'], False)
    """

    def __init__(self, exact: frozenset[str] = frozenset(), abbrev: bool = True) -> None:
        super().__init__()
        self.exact = exact
        self.abbrev = abbrev

    def means(self, key: str, name: str) -> bool:
        """Whether option ``key`` as written is ``name`` (or abbreviates it)."""
        if key == name:
            return True
        return (
            self.abbrev
            and key.startswith("--")
            and len(key) > 2
            and name.startswith(key)
            and key not in self.exact
            and key not in EXACT_FLAGS
        )

    def _found(self, name: str) -> list[str]:
        return [k for k in self if self.means(k, name)]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(self._found(name))

    def __getitem__(self, name: str) -> list[Word | None]:
        keys = self._found(name)
        if not keys:
            raise KeyError(name)
        return [w for k in keys for w in dict.__getitem__(self, k)]

    @overload
    def get(self, name: str, default: None = None, /) -> list[Word | None] | None: ...
    @overload
    def get(self, name: str, default: list[Word | None], /) -> list[Word | None]: ...
    @overload
    def get(self, name: str, default: T, /) -> list[Word | None] | T: ...
    def get(self, name: str, default: object = None, /) -> object:
        found = self._found(name)
        return [w for k in found for w in dict.__getitem__(self, k)] if found else default


def short_cluster(text: str, letters: str) -> bool:
    """Whether ``text`` is a cluster of short options holding one of ``letters``.

    >>> short_cluster("-qf", "f"), short_cluster("--force", "f")
    (True, False)
    """
    return text[:1] == "-" and text[1:2] != "-" and any(c in text[1:] for c in letters)


def _takes_value(text: str, with_arg: frozenset[str], abbrev: bool) -> str | None:
    """The option of ``with_arg`` that ``text`` is (exactly, or as the unique prefix of
    a long one that is not itself a known flag), or None."""
    if text in with_arg:
        return text
    if not abbrev or not text.startswith("--") or len(text) < 3 or text in EXACT_FLAGS:
        return None
    hits = [o for o in with_arg if o.startswith("--") and o.startswith(text)]
    return hits[0] if len(hits) == 1 else None


def scan_options(
    args: list[Word], with_arg: frozenset[str], *, abbrev: bool = True
) -> tuple[list[Word], Options]:
    """Split ``args`` into positionals and options (``--x=y``, ``--x y``, ``-x y``).

    Options in ``with_arg`` take the next word as their value, and so does a unique
    prefix of a long one (unless ``abbrev`` is false: the program reads its options
    exactly, as ``rg`` does); ``--`` ends options.

    >>> pos, opts = scan_options([Word("-B"), Word("dev"), Word("7"), Word("--x=1")],
    ...                          frozenset({"-B"}))
    >>> [w.text for w in pos], {k: [v.text if v else None for v in vs] for k, vs in opts.items()}
    (['7'], {'-B': ['dev'], '--x': ['1']})
    >>> pos, opts = scan_options([Word("--out"), Word("../x"), Word("f")], frozenset({"--output"}))
    >>> [w.text for w in pos], opts["--output"][0].text
    (['f'], '../x')
    >>> pos, opts = scan_options([Word("-uo"), Word("../x"), Word("f")], frozenset({"-o"}))
    >>> [w.text for w in pos], opts["-o"][0].text, "-u" in opts
    (['f'], '../x', True)
    """
    positionals: list[Word] = []
    opts = Options(with_arg, abbrev)
    i = 0
    while i < len(args):
        word = args[i]
        text = word.text
        if text == "--":
            positionals.extend(args[i + 1 :])
            break
        if text.startswith("--") and "=" in text:
            key, _, inline = text.partition("=")
            key = _takes_value(key, with_arg, abbrev) or key
            opts.setdefault(key, []).append(Word(inline, word.dynamic, word.quoted))
        elif text.startswith("-") and len(text) > 1:
            value: Word | None = None
            full = _takes_value(text, with_arg, abbrev)
            if full is not None and i + 1 < len(args):
                value = args[i + 1]
                text = full
                i += 1
            elif text[:2] in with_arg and len(text) > 2 and not text.startswith("--"):
                value = Word(text[2:], word.dynamic, word.quoted)
                text = text[:2]
            elif not text.startswith("--") and len(text) > 2:
                # a cluster whose later letter takes a value: `sort -uo F`, `cp -ft DIR`
                at = next((j for j in range(2, len(text)) if "-" + text[j] in with_arg), None)
                if at is not None:
                    opts.setdefault(text[:at], []).append(None)
                    if at + 1 < len(text):
                        value = Word(text[at + 1 :], word.dynamic, word.quoted)
                    elif i + 1 < len(args):
                        value = args[i + 1]
                        i += 1
                    text = "-" + text[at]
            opts.setdefault(text, []).append(value)
        else:
            positionals.append(word)
        i += 1
    return positionals, opts
