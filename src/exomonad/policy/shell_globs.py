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
>>> shell_match("a", "[^a]"), shell_match("]", "[]]"), shell_match("^", "[\\\\^]")
(False, True, True)
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


def shell_match(name: str, pattern: str, *, fold: bool = False) -> bool:
    """Whether the shell glob ``pattern`` matches ``name`` (one path part, as
    ``fnmatchcase`` would, but reading brackets as bash does); ``fold``: in any case."""
    if fold:
        return fnmatchcase(name.lower(), python_glob(pattern).lower())
    return fnmatchcase(name, python_glob(pattern))


@lru_cache(maxsize=4096)
def python_glob(pattern: str) -> str:
    """``pattern`` as Python's ``fnmatch`` must read it to match what bash's glob does."""
    if "[" not in pattern:
        return pattern
    out: list[str] = []
    i = 0
    while i < len(pattern):
        end = _bracket_end(pattern, i) if pattern[i] == "[" else None
        if end is None:
            out.append(pattern[i])
            i += 1
            continue
        out.append(_bracket(pattern[i + 1 : end]))
        i = end + 1
    return "".join(out)


def _bracket_end(pattern: str, start: int) -> int | None:
    """Where the bracket expression opened at ``start`` closes (its ``]``), if it does:
    a ``]`` first (after a ``!`` or ``^``) is a character, ``[:class:]`` is one piece."""
    i = start + 1
    if i < len(pattern) and pattern[i] in "!^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern):
        close = _piece_end(pattern, i)
        if close is not None:
            i = close
            continue
        if pattern[i] == "]":
            return i
        i += 1
    return None


def _bracket(inner: str) -> str:
    """One bracket expression's inside (between ``[`` and its ``]``) for Python."""
    negated = inner[:1] in ("!", "^")
    body = inner[1:] if negated else inner
    pieces: list[str] = []
    i = 0
    while i < len(body):
        close = _piece_end(body, i)
        if close is None:
            pieces.append(body[i])
            i += 1
            continue
        kind, name = body[i + 1], body[i + 2 : close - 2]
        if kind == ":":
            pieces.append(_CLASSES.get(name, _ANY))
        else:  # [=e=], [.e.]: the character (an ASCII name's), or any for a longer one
            pieces.append(name if len(name) == 1 and name not in "!^-]\\" else _ANY)
        i = close
    return "[" + ("!" if negated else "") + "".join(pieces) + "]"


def _piece_end(text: str, i: int) -> int | None:
    """Where a ``[:class:]``, ``[=c=]`` or ``[.c.]`` starting at ``i`` ends (past it)."""
    if text[i] != "[" or i + 1 >= len(text) or text[i + 1] not in ":=.":
        return None
    close = text.find(text[i + 1] + "]", i + 2)
    return None if close == -1 else close + 2
