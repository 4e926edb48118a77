"""A shell glob matched as bash matches it, with Python's ``fnmatch``.

Python's ``fnmatch`` differs from bash in a bracket expression: bash negates one opened
by ``[^`` as by ``[!`` (Python takes ``^`` for a character), and knows the POSIX
classes (``[[:lower:]]``; Python reads ``[[:lower:]`` then a ``]``), equivalence classes
(``[[=e=]]``) and collating symbols (``[[.e.]]``). Found trying the
gate as a worker: ``cat ../../.[^a]xomonad/lead.tok?n`` printed the lead's token,
allowed, the glob judged unable to name the state dir. :func:`shell_match` is every
match of a shell's (or ``find -name``'s, glibc's ``fnmatch``) pattern against a name in
the policy; the policy's own patterns (protected branches) stay Python's.

>>> shell_match(".exomonad", ".[^a]xomonad"), shell_match(".exomonad", ".[[:lower:]]xomonad")
(True, True)
>>> shell_match("a", "[^a]", exact=True), shell_match("]", "[]]"), shell_match("^", "[\\\\^]")
(False, True, True)
>>> shell_match("a", "[^a]")  # the ^ may have been quoted: a character, not a negation
True
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from functools import lru_cache

__all__ = ["python_glob", "shell_match"]

#: POSIX character classes, as ranges Python's ``fnmatch`` reads (ASCII: what the
#: state's and the credential stores' names are made of; none starts with ``!``, which
#: would negate the set).
_CLASSES = {
    "alpha": "a-zA-Z",
    "upper": "A-Z",
    "lower": "a-z",
    "digit": "0-9",
    "xdigit": "0-9A-Fa-f",
    "alnum": "a-zA-Z0-9",
    "word": "a-zA-Z0-9_",
    "space": " \t\n\r\f\v",
    "blank": " \t",
    "punct": ":-@[-`{-~!-/",
    "graph": '"-~!',
    "print": " -~",
    "cntrl": "\x00-\x1f\x7f",
}
#: What an unknown class (``[[:nope:]]``, an error to bash) is taken to match: any.
_ANY = "\x00-\U0010ffff"


def shell_match(name: str, pattern: str, *, fold: bool = False, exact: bool = False) -> bool:
    """Whether the shell glob ``pattern`` matches ``name`` (one path part, as
    ``fnmatchcase`` would, but reading brackets as bash does); ``fold``: in any case.

    A word's text has its quotes removed, and a quoted ``!`` or ``^`` after a ``[`` is a
    character to bash, not a negation (``cat ../../.[\\!e]xomonad/*`` printed the lead's
    token, allowed): unless ``exact`` (a pattern a program reads, as ``grep
    --exclude-dir``), such a bracket matches either way, so any one character. Each use
    but one asks whether a glob *could* name something; a wider match is the careful
    answer there, and ``exact`` is for the one that asks what a pattern leaves out."""
    if "[" in pattern:
        pattern = python_glob(pattern, exact)
    if fold:
        return fnmatchcase(name.lower(), pattern.lower())
    return fnmatchcase(name, pattern)


@lru_cache(maxsize=4096)
def python_glob(pattern: str, exact: bool = True) -> str:
    """``pattern`` as Python's ``fnmatch`` must read it to match what bash's glob does
    (in time linear in its length: a word of 20,000 ``a[`` took 100 s to judge); not
    ``exact``: a bracket opened by ``!`` or ``^`` as ``?`` (:func:`shell_match`)."""
    if "[" not in pattern:
        return pattern
    ends = _piece_ends(pattern)
    closes = _closes(pattern, ends)
    out: list[str] = []
    i = 0
    while i < len(pattern):
        end = _bracket_end(pattern, i, closes) if pattern[i] == "[" else None
        if end is None:  # a [ that opens nothing is itself; said so, Python's fnmatch
            out.append("[[]" if pattern[i] == "[" else pattern[i])  # looks no further
            i += 1
            continue
        out.append(_bracket(pattern, i + 1, end, ends) if exact or pattern[i + 1] not in "!^"
                   else "?")  # fmt: skip
        i = end + 1
    return "".join(out)


def _piece_ends(text: str) -> list[int]:
    """For each index, past the end of the ``[:class:]``, ``[=c=]`` or ``[.c.]`` that
    starts there (its first ``:]``, ``=]`` or ``.]``), else -1."""
    n = len(text)
    following = {kind: [n] * (n + 1) for kind in ":=."}  # the first KIND] at or after i
    for i in range(n - 2, -1, -1):
        for kind, found in following.items():
            found[i] = i if text[i] == kind and text[i + 1] == "]" else found[i + 1]
    ends = [-1] * n
    for i in range(n - 2):
        if text[i] == "[" and text[i + 1] in ":=." and following[text[i + 1]][i + 2] < n:
            ends[i] = following[text[i + 1]][i + 2] + 2
    return ends


def _closes(text: str, ends: list[int]) -> list[int]:
    """For each index, the first ``]`` at or after it that is not inside a piece, else
    -1 (scanning from there, a piece skipped whole)."""
    closes = [-1] * (len(text) + 1)
    for i in range(len(text) - 1, -1, -1):
        if ends[i] != -1:
            closes[i] = closes[ends[i]]
        else:
            closes[i] = i if text[i] == "]" else closes[i + 1]
    return closes


def _bracket_end(pattern: str, start: int, closes: list[int]) -> int | None:
    """Where the bracket expression opened at ``start`` closes (its ``]``), if it does:
    a ``]`` first (after a ``!`` or ``^``) is a character, ``[:class:]`` is one piece."""
    i = start + 1
    if i < len(pattern) and pattern[i] in "!^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    close = closes[i]
    return None if close == -1 else close


def _bracket(pattern: str, start: int, end: int, ends: list[int]) -> str:
    """The bracket expression ``pattern[start:end]`` (between ``[`` and its ``]``) for
    Python."""
    negated = pattern[start] in "!^"
    pieces: list[str] = []
    i = start + 1 if negated else start
    while i < end:
        if ends[i] == -1:
            pieces.append(pattern[i])
            i += 1
            continue
        kind, name = pattern[i + 1], pattern[i + 2 : ends[i] - 2]
        if kind == ":":
            pieces.append(_CLASSES.get(name, _ANY))
        else:  # [=e=], [.e.]: the character (an ASCII name's), or any for a longer one
            pieces.append(name if len(name) == 1 and name not in "!^-]\\" else _ANY)
        i = ends[i]
    return "[" + ("!" if negated else "") + "".join(pieces) + "]"
