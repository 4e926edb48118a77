"""Brace expansion as bash does it (``{a,b}``, ``{1..3}``, ``{a..e..2}``), on a word's
characters with their quoting: only unquoted braces and commas count.

A word the lexer reads as ``cp -t {../../.gi,.}t/hooks x`` is two paths to bash,
``../../.git/hooks`` and ``./t/hooks``; judged as its text it looked like one path in the
worktree (found probing as a worker). The lexer hands each expanded word on instead.

>>> def words(text):
...     return [w for w in expand([(c, c in "{,}.") for c in text]) or ()]
>>> words("a{b,c}d"), words("{1..3}"), words("{a}{b,c}")
(['abd', 'acd'], ['1', '2', '3'], ['{a}b', '{a}c'])
>>> words("{../..,.}/x"), words("x{,}"), words("{01..03}")
(['../../x', './x'], ['x', 'x'], ['01', '02', '03'])
>>> expand([(c, True) for c in "{1..99999}"]) is None  # too many: not spelled out
True
"""

from __future__ import annotations

import re
from itertools import pairwise

__all__ = ["MAX_WORDS", "Item", "bare_char", "brace_state", "expand", "expand_items"]

#: More words than this from one word, or a word longer than ``_MAX_CHARS`` with a
#: brace expansion: the lexer marks it unknown instead.
MAX_WORDS = 512
_MAX_CHARS = 4096
#: The characters of brace syntax, when unquoted.
BRACE_SYNTAX = frozenset("{,}")

#: A character of the word and whether it is unquoted (only those can be syntax).
Item = tuple[str, bool]

_INT_SEQ = re.compile(r"(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?")
_CHAR_SEQ = re.compile(r"([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?")


class _TooMany(Exception):
    pass


def expand(items: list[Item]) -> list[str] | None:
    """The words bash's brace expansion makes of ``items`` (the word itself when it
    has none); None when there would be more than :data:`MAX_WORDS`, or the word is
    too long to spell out."""
    words = expand_items(items)
    return None if words is None else ["".join(c for c, _ in word) for word in words]


def expand_items(items: list[Item]) -> list[list[Item]] | None:
    """:func:`expand`, each word's characters with whether each is unquoted (what
    bash's tilde expansion, which comes next, needs: ``{~,x}/f`` is ``$HOME/f``)."""
    if len(items) > _MAX_CHARS:
        return None
    try:
        return _expand(items)
    except _TooMany:
        return None


def _expand(items: list[Item]) -> list[list[Item]]:
    start = 0
    while True:
        found = _first_brace(items, start)
        if found is None:
            return [items]
        i, j, alternatives = found
        if alternatives is not None:
            break
        start = i + 1
    tails = _expand(items[j + 1 :])
    out: list[list[Item]] = []
    for alternative in alternatives:
        for middle in _expand(alternative):
            for tail in tails:
                out.append(items[:i] + middle + tail)
                if len(out) > MAX_WORDS:
                    raise _TooMany
    return out


def _first_brace(items: list[Item], start: int) -> tuple[int, int, list[list[Item]] | None] | None:
    """The next unquoted ``{`` from ``start`` with its matching ``}`` and its
    alternatives (None: not a brace expansion, e.g. ``{a}`` or ``{}``)."""
    for i in range(start, len(items)):
        if items[i] != ("{", True):
            continue
        depth, commas = 0, list[int]()
        for j in range(i + 1, len(items)):
            c, bare = items[j]
            if not bare:
                continue
            if c == "{":
                depth += 1
            elif c == "}" and depth:
                depth -= 1
            elif c == "}":
                inner = items[i + 1 : j]
                if commas:
                    bounds = [i, *commas, j]
                    return i, j, [items[a + 1 : b] for a, b in pairwise(bounds)]
                return i, j, _sequence(inner)
            elif c == "," and not depth:
                commas.append(j)
    return None


def _sequence(inner: list[Item]) -> list[list[Item]] | None:
    """``{x..y[..step]}`` of integers (zero-padded as written) or of letters."""
    text = "".join(c for c, _ in inner)
    found = _INT_SEQ.fullmatch(text) or _CHAR_SEQ.fullmatch(text)
    if found is None:
        return None
    first, last, step_text = found.groups()
    step = abs(int(step_text)) if step_text else 1
    step = step or 1
    if first.isalpha():
        a, b = ord(first), ord(last)
        values = [chr(v) for v in _range(a, b, step)]
    else:
        a, b = int(first), int(last)
        padded = any(len(t.lstrip("-")) > 1 and t.lstrip("-")[0] == "0" for t in (first, last))
        width = max(len(first), len(last)) if padded else 0
        values = [str(v).zfill(width) if width else str(v) for v in _range(a, b, step)]
    return [[(v, False)] for v in values]


def _range(a: int, b: int, step: int) -> range:
    count = abs(b - a) // step + 1
    if count > MAX_WORDS:
        raise _TooMany
    return range(a, b + 1, step) if a <= b else range(a, b - 1, -step)


def bare_char(c: str, out: list[str], bare: set[int]) -> bool:
    """Append the unquoted ``c`` to ``out`` (noting in ``bare`` that it is unquoted:
    brace syntax, a glob, a ``~``); True if it makes the word unknown: a ``~`` after
    ``=`` or ``:`` (``a=~/x``, ``P=a:~/b``), which bash expands in an assignment."""
    bare.add(len(out))
    tilde = c == "~" and bool(out) and out[-1] in ("=", ":")
    out.append(c)
    return tilde


def brace_state(state: int, c: str, dot_next: bool) -> int:
    """Brace expansion seen so far in a word: 0 none, 1 ``{``, 2 and ``,``/``..``, 3 ``}``."""
    if c == "{":
        return max(state, 1)
    if state == 1 and (c == "," or (c == "." and dot_next)):
        return 2
    if c == "}" and state == 2:
        return 3
    return state
