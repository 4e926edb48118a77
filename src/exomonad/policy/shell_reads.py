"""Programs that read whole directory trees: ``grep -r``, ``rg -uu``, ``ag -u``, ``ack``,
``tar c``, ``zip -r``, ``7z a``, ``diff -r``, ``git grep --no-index``.

A tree read is a :class:`~exomonad.policy.actions.ReadFile` with ``recursive=True``: the
contents of every file below the root, hidden and git-ignored ones included. Programs
that skip hidden directories or honour ignore files (plain ``rg``, ``rg --hidden``,
``ag``) read no tree in that sense: ``.exomonad/`` is hidden, and its ``.gitignore`` and
``.ignore`` leave its runtime files out. Listings of names (``ls -R``, ``du``, ``tree``,
``rg --files``, ``find`` without actions) read no contents; ``find``'s actions are
:mod:`~exomonad.policy.shell_find`'s.

A handler returns one tree read per root and the command's plain
:class:`~exomonad.policy.actions.Shell`, or None (no tree read: the caller keeps the
plain ``Shell``).

>>> from exomonad.policy.shell_lex import Word
>>> handle_read("grep", [Word(t) for t in "-rn token ../..".split()], "/p/.worktrees/w")
[ReadFile(path='/p', recursive=True, include=()), \
Shell(argv=('grep', '-rn', 'token', '../..'), cwd='/p/.worktrees/w', privileged=False, \
stdin=None)]
>>> handle_read("rg", [Word("token")], "/p") is None
True
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable

from exomonad.policy.actions import Action, ReadFile, Shell, Unknown
from exomonad.policy.credentials import may_name_env
from exomonad.policy.shell_env import Options, scan_options
from exomonad.policy.shell_globs import shell_match
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_paths import may_climb, resolve_path
from exomonad.state import STATE_DIR_NAME

__all__ = [
    "GREP_ARG",
    "PATTERN_OPTS",
    "RG_ARG",
    "flags",
    "git_tree_reads",
    "handle_read",
    "option_set",
    "packs",
    "tree_readers",
    "tree_reads",
    "tree_root",
    "with_shell",
]

Handler = Callable[[str, list[Word], str | None], list[Action] | None]
Opts = dict[str, list[Word | None]]


def option_set(text: str) -> frozenset[str]:
    """The options named in ``text`` (space-separated)."""
    return frozenset(text.split())


_VAR = re.compile(r"\$(?:\{(PWD|HOME)\}|(PWD|HOME)(?![A-Za-z0-9_]))")


def tree_root(cwd: str | None, word: Word) -> str | None:
    """The absolute root ``word`` names; ``$PWD``/``$HOME`` at its start are expanded,
    any other expansion makes it unknown (None).

    >>> tree_root("/p/.worktrees/w", Word("$PWD/../..", dynamic=True))
    '/p'
    >>> tree_root("/p", Word("$X", dynamic=True)) is None
    True
    """
    if not word.dynamic:
        return resolve_path(cwd, word)
    if word.glob and may_climb(word.text):
        return None
    found = _VAR.match(word.text)
    rest = word.text[found.end() :] if found else "$"
    if found is None or "$" in rest or "`" in rest or not (rest == "" or rest.startswith("/")):
        return None
    base = cwd if (found.group(1) or found.group(2)) == "PWD" else os.path.expanduser("~")
    return resolve_path(None, base + rest) if base else None


def tree_reads(
    roots: Iterable[Word], cwd: str | None, include: tuple[str, ...] = ()
) -> list[Action]:
    """One recursive :class:`ReadFile` per root (the cwd when there is none)."""
    found: list[Action] = [ReadFile(tree_root(cwd, w), True, include) for w in roots]
    return found or [ReadFile(cwd, True, include)]


def flags(opts: Opts, letters: str, *longs: str) -> int:
    """How many times a short option among ``letters`` (bundled or not) or one of
    ``longs`` (or what abbreviates it: ``--recur``) was given."""
    count = 0
    for key, values in dict.items(opts):
        if key in longs or (isinstance(opts, Options) and any(opts.means(key, n) for n in longs)):
            count += len(values)
        elif not key.startswith("--"):
            count += sum(key[1:].count(c) for c in letters) * len(values)
    return count


def _values(opts: Opts, *keys: str) -> list[Word]:
    return [w for k in keys for w in opts.get(k, []) if w is not None]


def with_shell(name: str, args: list[Word], cwd: str | None,
               reads: list[Action]) -> list[Action]:  # fmt: skip
    """The tree reads, then the command itself (a tie in severity shows the first)."""
    return [*reads, Shell((name, *(w.text for w in args)), cwd)]


#: grep's and rg's options that give the pattern (then every positional is a file).
PATTERN_OPTS = ("-e", "--regexp", "-f", "--file")


def _operands(positionals: list[Word], opts: Opts, *pattern_opts: str) -> list[Word]:
    """The roots: positionals after the pattern (none when it came by ``-e``/``-f``)."""
    return positionals if any(k in opts for k in pattern_opts) else positionals[1:]


GREP_ARG = option_set(
    "-e -f -m -A -B -C -d -D --regexp --file --max-count --after-context --before-context "
    "--context --directories --devices --include --exclude --exclude-dir --exclude-from "
    "--label --binary-files --group-separator"
)  # --color[=WHEN] takes a value only after `=`: `grep --color -r` is recursive


def _grep(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    pos, opts = scan_options(args, GREP_ARG)
    modes = _values(opts, "-d", "--directories")  # `-d rec`: grep takes a unique prefix
    recursive = name == "rgrep" or any(w.dynamic or "recurse".startswith(w.text) for w in modes)
    if not (recursive or flags(opts, "rR", "--recursive", "--dereference-recursive")):
        return None
    roots = _operands(pos, opts, *PATTERN_OPTS)
    excluded = _values(opts, "--exclude-dir")
    if any(not w.dynamic and shell_match(STATE_DIR_NAME, w.text, exact=True) for w in excluded):
        # the state dir (hidden) is left out: plain reads of the roots
        return with_shell(name, args, cwd, [ReadFile(tree_root(cwd, w)) for w in roots] or
                     [ReadFile(cwd)])  # fmt: skip
    only = _values(opts, "--include")
    include = () if any(w.dynamic for w in only) else tuple(w.text for w in only)
    return with_shell(name, args, cwd, tree_reads(roots, cwd, include))


RG_ARG = option_set(
    "-e -f -g -t -T -m -A -B -C -M -j -E -r -d --regexp --file --glob --iglob --type "
    "--type-not --max-count --after-context --before-context --context --max-columns "
    "--threads --encoding --replace --ignore-file --pre --pre-glob --type-add --max-depth "
    "--max-filesize --path-separator --sort --sortr --color --colors --context-separator "
    "--field-context-separator --field-match-separator --dfa-size-limit --regex-size-limit "
    "--engine"
)
_NAMES_ONLY = ("--files", "--type-list", "--help", "--version", "-h", "-V")


def _could_enter_state(glob: str) -> bool:
    """A glob override that matches the state dir's name lets ``rg`` into it."""
    return any(shell_match(STATE_DIR_NAME, part) for part in glob.split("/"))


def _rg(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    """``rg`` reads ``.exomonad/`` with ``--hidden`` plus ``--no-ignore`` (``-uu``), with
    ``--ignore-file`` (its contents may whitelist it), or with a glob override (``-g``
    beats the ignore files; with no ``--hidden`` it must also match the directory); and
    the hidden, ignored ``.env`` files a glob override names (``rg -g .env``)."""
    pos, opts = scan_options(args, RG_ARG, abbrev=False)  # rg takes no abbreviations
    if "--pre" in opts:  # a program rg runs on every file it searches (`--pre rm`)
        return [Unknown("rg --pre runs a program: " + " ".join(w.text for w in args)),
                Shell((name, *(w.text for w in args)), cwd)]  # fmt: skip
    if any(k in opts for k in _NAMES_ONLY):
        return None
    unrestricted = flags(opts, "u", "--unrestricted")
    hidden = unrestricted >= 2 or flags(opts, ".", "--hidden") > 0
    no_ignore = unrestricted >= 1 or any(
        k in opts for k in ("--no-ignore", "--no-ignore-dot", "--no-ignore-vcs")
    )
    globs = _values(opts, "-g", "--glob", "--iglob")
    wanted = tuple(w.text for w in globs if not w.text.startswith("!"))
    roots = _operands(pos, opts, *PATTERN_OPTS)
    if (hidden and no_ignore) or "--ignore-file" in opts or any(w.dynamic for w in globs):
        return with_shell(name, args, cwd, tree_reads(roots, cwd))
    if wanted and (hidden or any(_could_enter_state(g) or may_name_env(g) for g in wanted)):
        return with_shell(name, args, cwd, tree_reads(roots, cwd, wanted))
    return None


def _ag(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    """``ag -u`` (or ``--hidden`` with ``-a``/``-U``); ``ack`` reads hidden dirs unless
    told not to recurse; ``-g``/``-f``/``-l`` forms still read, ``-g``/``-f`` list names."""
    pos, opts = scan_options(args, frozenset({"-G", "-A", "-B", "-C", "-m", "--ignore",
                                              "--ignore-dir", "--file-search-regex"}))  # fmt: skip
    if name.startswith("ack"):
        reads = not flags(opts, "nfg", "--no-recurse", "--help")
    else:
        everything = flags(opts, "u", "--unrestricted") or (
            flags(opts, "", "--hidden") and flags(opts, "aU", "--all-types", "--skip-vcs-ignores")
        )
        reads = bool(everything) and not flags(opts, "g", "--filename-pattern")
    if not reads:
        return None
    return with_shell(name, args, cwd, tree_reads(pos[1:], cwd))


_TAR_NAMES = ("tar", "bsdtar", "gtar")
_TAR_SHORT_ARG = "fCTXbHKLNgVIF"
_TAR_LONG_ARG = option_set(
    "--file --directory --files-from --exclude-from --blocking-factor --format --starting-file "
    "--tape-length --newer --listed-incremental --label --use-compress-program --exclude "
    "--transform --xform --owner --group --mode --mtime --index-file --to-command "
    "--info-script --rsh-command --volno-file"
)


def _tar(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    """``tar c``/``r``/``u`` (create, append, update) reads its operands."""
    create, roots = _tar_parse(args, cwd)
    if not create:
        return None
    return with_shell(name, args, cwd, [ReadFile(tree_root(b, w), True) for b, w in roots])


def packs(program: str, argv: list[str]) -> bool:
    """``tar``/``7z`` making an archive (``tar czf``, ``7z a``): it writes no directory.

    >>> packs("tar", ["czf", "x.tgz", "build"]), packs("tar", ["-xf", "x.tar"])
    (True, False)
    """
    if program in ("7z", "7za", "7zr"):
        return next((w for w in argv if not w.startswith("-")), "") in ("a", "u")
    return program in _TAR_NAMES and _tar_parse([Word(w) for w in argv], None)[0]


def _tar_parse(args: list[Word], cwd: str | None) -> tuple[bool, list[tuple[str | None, Word]]]:
    """Whether ``tar ARGS`` creates (or appends to, updates) an archive, and its operands
    with the directory each is relative to (the ``-C`` before it); bundled keys (``tar
    czf x.tgz dir``) take their values in order."""
    words, base, create = list(args), cwd, False
    roots: list[tuple[str | None, Word]] = []
    if words and not words[0].text.startswith("-"):
        key, words = words[0].text, words[1:]
        create = any(c in key for c in "cru")
        for c in (c for c in key if c in _TAR_SHORT_ARG):
            if words:
                base = tree_root(base, words[0]) if c == "C" else base
                words = words[1:]
    i = 0
    while i < len(words):
        text = words[i].text
        value: Word | None = None
        if text == "--":
            roots += [(base, w) for w in words[i + 1 :]]
            break
        if text.startswith("--"):
            key = text.split("=", 1)[0]
            create = create or key in ("--create", "--append", "--update")
            if key in _TAR_LONG_ARG:
                if "=" in text:
                    value = Word(text.split("=", 1)[1], words[i].dynamic)
                elif i + 1 < len(words):
                    value, i = words[i + 1], i + 1
            if key == "--directory" and value is not None:
                base = tree_root(base, value)
        elif text.startswith("-") and len(text) > 1:
            for j, c in enumerate(text[1:], 1):
                create = create or c in "cru"
                if c in _TAR_SHORT_ARG:
                    if j + 1 < len(text):
                        value = Word(text[j + 1 :], words[i].dynamic)
                    elif i + 1 < len(words):
                        value, i = words[i + 1], i + 1
                    base = tree_root(base, value) if c == "C" and value is not None else base
                    break
        else:
            roots.append((base, words[i]))
        i += 1
    return create, roots


def _zip(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    """``zip -r ARCHIVE PATH...`` (without ``-r`` a directory adds no files)."""
    pos, opts = scan_options(
        args, frozenset({"-b", "-n", "-t", "-tt", "-O", "-P", "-s", "-Z", "--out", "--password"})
    )
    if not flags(opts, "rR", "--recurse-paths", "--recurse-patterns") or len(pos) < 2:
        return None
    return with_shell(name, args, cwd, tree_reads(pos[1:], cwd))


def _sevenzip(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    """``7z a|u ARCHIVE [PATH...]``: directories are added whole (no path: the cwd)."""
    pos = [w for w in args if not w.text.startswith("-")]
    if len(pos) < 2 or pos[0].text not in ("a", "u"):
        return None
    return with_shell(name, args, cwd, tree_reads(pos[2:], cwd))


def _diff(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    """``diff -r A B`` prints what differs in every file below both."""
    pos, opts = scan_options(args, frozenset({"-x", "-X", "-S", "-I", "-F", "-L", "--label",
                                              "--exclude", "--exclude-from"}))  # fmt: skip
    if not flags(opts, "r", "--recursive"):
        return None
    return with_shell(name, args, cwd, tree_reads(pos, cwd))


#: ``git grep`` options that make it read files git does not track (the state dir's
#: ``config.toml``, or its tokens when nothing ignores them); git takes unique prefixes.
_GIT_UNTRACKED = ("--untracked", "--no-exclude-standard", "--no-index")


def git_tree_reads(sub: str, rest: list[Word], cwd: str | None) -> list[Action]:
    """``git grep --untracked`` (``--no-exclude-standard``, ``--no-index``) reads the
    untracked files below its pathspecs (found as a worker: ``git -C ../.. grep
    --untracked -e .`` printed the state dir); ``git diff --no-index A B`` reads both
    trees. Else no tree read."""
    if sub not in ("grep", "diff"):
        return []
    pos, opts = scan_options(rest, frozenset({"-e", "-f", "-A", "-B", "-C", "-m", "--max-depth",
                                              "--threads", "--max-count"}))  # fmt: skip
    if sub == "diff" and "--no-index" in opts:
        return tree_reads(pos, cwd)
    untracked = any(len(key) > 4 and any(o.startswith(key) for o in _GIT_UNTRACKED) for key in opts)
    if sub == "grep" and untracked:
        specs = [w for w in _operands(pos, opts, "-e", "-f")
                 if not w.text.startswith((":!", ":^", ":(exclude"))]  # fmt: skip
        return [_pathspec_read(cwd, w) for w in specs] or [ReadFile(cwd, True)]
    return []


def _pathspec_read(cwd: str | None, spec: Word) -> ReadFile:
    """The tree a git pathspec reads: a glob matches at any depth below the cwd (``*.token``
    reaches ``.exomonad/lead.token``), magic (``:(top)``, ``:/``) anywhere in the repository."""
    if spec.text.startswith(":"):
        return ReadFile(None, True)
    if any(c in spec.text for c in "*?["):
        return ReadFile(cwd, True, (spec.text.rsplit("/", 1)[-1],))
    return ReadFile(tree_root(cwd, spec), True)


_HANDLERS: dict[str, Handler] = {
    **dict.fromkeys(("grep", "egrep", "fgrep", "rgrep"), _grep),
    "rg": _rg,
    **dict.fromkeys(("ag", "ack", "ack-grep"), _ag),
    **dict.fromkeys(_TAR_NAMES, _tar),
    "zip": _zip,
    **dict.fromkeys(("7z", "7za", "7zr"), _sevenzip),
    "diff": _diff,
}


def tree_readers() -> frozenset[str]:
    """The programs :func:`handle_read` models."""
    return frozenset(_HANDLERS)


def handle_read(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    """The plain Shell and the tree reads of program ``name``; None if it reads no tree."""
    handler = _HANDLERS.get(name)
    return handler(name, args, cwd) if handler is not None else None
