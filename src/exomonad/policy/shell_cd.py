"""Where a command line's commands may start: every directory its ``cd``s may leave.

bash goes on after a ``cd`` that fails (a directory that is not there, or that may not
be entered) in the directory it was in; a ``cd`` that is not run (after ``false &&``,
in an ``if`` not taken, in a function never called) leaves it too; one in a loop runs
any number of times; the last command of a pipeline runs in the shell itself under
``shopt -s lastpipe``; ``builtin cd``, ``command cd``, ``time cd``, ``\\cd`` and ``"cd"``
are all ``cd``; ``eval``, ``trap`` and ``source`` may run one. So a command after a
``cd`` may start in any of several directories. The parser keeps them all (the first:
where each ``cd`` leads when it runs once and succeeds) and the policy judges the
command in each. Only the commands of an ``&&`` chain right after a ``cd`` start where
it leads alone: they run only if it succeeded. A directory nobody can know (``cd
"$X"``, ``popd``, a loop's or a function's ``cd``, code ``eval`` runs) is None; so is
where a ``trap``'s command runs (at exit, on a signal) in a line that may ``cd``.

(Found trying the gate as a worker: ``cd a/b/c/d; grep -r SECRET ../..``, the
directory missing, printed the lead's token, judged in ``a/b``; ``builtin cd ../..;
echo x > README.md`` wrote the lead's checkout.)

>>> from exomonad.policy.shell_lex import Word
>>> [w.text for w in move([Word("builtin"), Word("cd"), Word("-P"), Word("x")])]
['x']
>>> move([Word("pushd"), Word("+1")]), move([Word("eval"), Word("cd ..")])
(None, None)
>>> move([Word("echo"), Word("cd")]), move([Word("command"), Word("-v"), Word("cd")])
(False, False)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal

from exomonad.policy.shell_command import Dirs, in_this_shell
from exomonad.policy.shell_env import is_within, nested_repo
from exomonad.policy.shell_lex import ShellSyntaxError, Word, lex
from exomonad.policy.shell_paths import resolve_path

__all__ = [
    "MAX_DIRS",
    "Dirs",
    "cdpath_searched",
    "changer",
    "chdir",
    "join",
    "may_set_cdpath",
    "move",
]

#: The most directories followed; past it the rest is None (unknown).
MAX_DIRS = 8

#: Builtins that run text as this shell's own code (a ``trap``'s later).
_RUNS_TEXT = frozenset({"eval", "trap", "source", "."})
_MOVES = re.compile(r"(?<![\w-])(cd|pushd|popd)(?![\w-])")


def changer(words: Sequence[Word]) -> tuple[str, tuple[Word, ...]] | None:
    """The builtin ``words`` run in this shell (:func:`in_this_shell`) and its
    arguments; None: no command."""
    rest = in_this_shell(words)
    return (rest[0].text, tuple(rest[1:])) if rest else None


def move(
    words: Sequence[Word], stdin_text: str | None = None
) -> tuple[Word, ...] | Literal[False] | None:
    """How a simple command of ``words`` changes this shell's directory: False not at
    all; the ``cd`` operands (options dropped; none: ``cd`` alone, to an unknown
    ``$HOME``) for a ``cd``
    or a ``pushd`` to a directory; None when it may in a way not followed (``popd``,
    ``pushd +1``, ``cd -``, text run by ``eval``, ``source`` or a ``trap`` that may
    ``cd``). ``stdin_text``: what a here-document or here-string gives it (``source
    /dev/stdin <<< 'cd ..'``)."""
    found = changer(words)
    if found is None:
        return False
    name, args = found
    if name in _RUNS_TEXT:
        texts = [w.text for w in args] + ([stdin_text] if stdin_text is not None else [])
        dynamic = name == "eval" and any(w.dynamic for w in args)
        return None if dynamic or any(_may_move(t) for t in texts) else False
    if name not in ("cd", "pushd", "popd"):
        return False
    options = [w.text for w in args if w.text.startswith(("-", "+")) and len(w.text) > 1]
    operands = tuple(w for w in args if not (w.text.startswith("-") and len(w.text) > 1))
    if name == "popd" or any(o[1:].isdigit() for o in options):
        return None  # the stack's top, or its nth entry
    if name == "pushd":
        if "-n" in options:
            return False  # only the stack changes
        if not operands or operands[0].text.startswith("+"):
            return None  # pushd alone swaps the top two
    if operands and operands[0].text == "-":
        return None  # $OLDPWD
    return operands


def join(*groups: Iterable[str | None]) -> Dirs:
    """The directories of ``groups``, each once, in order; past :data:`MAX_DIRS`, the
    rest as one None."""
    out: list[str | None] = []
    for group in groups:
        for d in group:
            if d not in out:
                out.append(d)
    if len(out) > MAX_DIRS:
        out = [d for d in out[: MAX_DIRS - 1] if d is not None] + [None]
    return tuple(out)


#: Builtins that may set a variable whose name is only known when they run
#: (``declare "${v}PATH=.."``, ``read "$v"``), and ``printf -v``.
_SETTERS = frozenset(
    {"declare", "typeset", "export", "readonly", "local", "read", "mapfile", "readarray",
     "getopts"}
)  # fmt: skip
#: Builtins that run text as shell code: what it sets is not seen.
_EVALS = frozenset({"eval", "source", "."})


def may_set_cdpath(words: Sequence[Word]) -> bool:
    """Whether a command of these words may set ``CDPATH`` (or turn ``cdable_vars`` on,
    which looks ``cd NAME`` up in ``$NAME``): it names it (an assignment, an argument, a
    loop variable, an expansion such as ``${CDPATH:=..}``), runs text as code, or has a
    builtin among them that may set a variable named at run time."""
    texts = [w.text for w in words]
    if any("CDPATH" in t or "cdable" in t for t in texts) or any(t in _EVALS for t in texts):
        return True  # `shopt -s cdable_vars`: `cd NAME` goes to $NAME (cd OLDPWD)
    if "shopt" in texts and any(w.dynamic for w in words):
        return True
    printf_v = "printf" in texts and any(t.startswith("-v") for t in texts)
    setter = printf_v or any(t in _SETTERS for t in texts)
    return setter and any(w.dynamic or "$" in w.text or "`" in w.text for w in words)


def cdpath_searched(operand: str) -> bool:
    """Whether ``cd`` looks ``operand`` up in ``$CDPATH`` (bash: unless it starts with
    ``/``, ``./`` or ``../``, or is ``.``, ``..`` or ``-``)."""
    return not (
        operand.startswith(("/", "./", "../")) or operand in (".", "..", "-") or not operand
    )


def chdir(cwd: str | None, operands: tuple[Word, ...], cdpath: bool, top: str | None) -> str | None:
    """Where ``cd`` with ``operands`` (:func:`move`) leads from ``cwd``; None: unknown
    (``$CDPATH`` may be set and is searched, a directory built at run time, ``$HOME``). ``top``:
    the agent's worktree, where ``cd "$(git rev-parse --show-toplevel)"`` goes."""
    if not operands:
        return None  # $HOME, which a prefix may set (`HOME=../.. cd` printed the token)
    if cdpath and cdpath_searched(operands[0].text):
        return None
    if top is not None and _to_toplevel(operands[0]) and is_within(cwd, top):
        return None if cwd != top and cwd is not None and nested_repo(cwd, top) else top
    return resolve_path(cwd, operands[0], logical=True)  # bash's cd takes `..` off as text


def _to_toplevel(word: Word) -> bool:
    """``cd "$(git rev-parse --show-toplevel)"`` (agents' habit), nothing else."""
    return word.text == "$(git rev-parse --show-toplevel)" or (
        word.text == "`...`" and word.subs == ("git rev-parse --show-toplevel",)
    )


def _may_move(text: str, depth: int = 0) -> bool:
    """Whether shell ``text`` (what ``eval``, ``trap`` or ``source`` runs) may change
    the directory: a word of it, its quotes removed, is ``cd``, ``pushd`` or ``popd``
    (``eval 'c""d ../..'``, ``trap 'c\\d ../..' DEBUG``), at any depth of quoting."""
    if _MOVES.search(text) or depth > 3:
        return True
    try:
        words = [t for t in lex(text) if isinstance(t, Word)]
    except ShellSyntaxError:
        return True
    return any(
        w.text in ("cd", "pushd", "popd") or (w.text != text and _may_move(w.text, depth + 1))
        for w in words
    )
