"""Variables arithmetic assigns: bash's ``(( ))``, ``let``, ``$(( ))``, ``$[ ]``, a
subscript and an offset set the names they assign, as ``printf -v`` does.

Found trying the gate as a worker: ``(( PATH = 1 )); ls ../../a.txt`` ran the ``ls`` a
directory ``1`` of the worktree held (it deleted the lead's ``a.txt``), allowed as the
``ls`` it seemed, and so did ``let PATH=1``; ``(( PATH = 1 ))`` was read as a command
named ``PATH``. An assignment in arithmetic (``=``, ``+=``..., ``++``, ``--``) to an
environment-style name (upper case: what programs read from the environment, as
:mod:`~exomonad.policy.shell_setvars` has it for ``read`` and ``printf -v``) is
:class:`Unknown`; ``(( i++ ))``, ``n=$((n+1))``, ``echo $((N + 1))`` stay as they were.

>>> from exomonad.policy.shell_parse import parse
>>> def sets(line): return [a.raw for a in arithmetic_sets(parse(line, "/w"), line)]
>>> sets("(( PATH = 1 )); ls"), sets("let GIT_DIR+=1"), sets("echo ${a[HOME=1]}")
(['PATH: set by arithmetic'], ['GIT_DIR: set by arithmetic'], ['HOME: set by arithmetic'])
>>> sets("(( i++ )); n=$((n+1)); echo $((N + 1)) $[ X == 1 ]")
[]
"""

from __future__ import annotations

import re
from collections import Counter

from exomonad.policy.actions import Unknown
from exomonad.policy.shell_command import SimpleCommand, is_assignment
from exomonad.policy.shell_escape import DECLARERS
from exomonad.policy.shell_lex import Word

__all__ = ["ARITH_TESTS", "arithmetic_sets"]

#: A name: the target of an assignment when an operator follows it (its subscript
#: skipped), or ``++``/``--`` stand before it.
_TARGET = re.compile(r"(?<![A-Za-z0-9_$])[A-Za-z_][A-Za-z0-9_]*")
#: A name an expansion gives (``$x``, ``${x}``, ``$1``).
_BUILT = re.compile(r"\$\{?[A-Za-z_0-9@*#?!]+\}?")
#: What makes the name before it assigned: ``=``, ``+=``..., ``<<=``, ``++``, ``--``.
_ASSIGNS = re.compile(r"\s*(?:(?:<<|>>|[-+*/%&|^])?=(?!=)|\+\+|--)")
#: Where arithmetic starts in a line's text: ``$((``, ``((``, ``$[``, a subscript
#: (``NAME[``), an offset (``${NAME:``); the group is the bracket it ends at.
_OPENS = re.compile(
    r"\$?(\()\(|\$(\[)|[A-Za-z_][A-Za-z0-9_]*(\[)|\$(\{)[#!]?[A-Za-z_][A-Za-z0-9_]*:"
)
#: Builtins whose arguments are arithmetic (``let``) or may be (``-eq``, ``declare -i``).
_ARITH_ARGS = frozenset({"let"})
#: Operators of ``test`` and ``[[ ]]`` that evaluate their operands as arithmetic.
ARITH_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})


def arithmetic_sets(commands: list[SimpleCommand], src: str) -> list[Unknown]:
    """An :class:`Unknown` for each environment-style name arithmetic in ``src``
    (parsed into ``commands``) may assign: written in it, or in a value arithmetic may
    evaluate (``v=PATH=1; (( v ))``, ``read v <<< PATH=1``: upper-case ``NAME=`` text
    beyond the line's own assignments), given by an expansion (``let "$x=1"``), or
    through a name reference (``declare -n r=PATH; (( r = 1 ))``). Linear in the
    line's length (a word of 20,000 ``a[`` is one pass)."""
    words: list[str] = []
    refs = False
    for cmd in commands:
        argv = [w.text for w in cmd.command_words]
        head = argv[0] if argv else ""
        flags = [t for t in argv[1:] if t.startswith("-")]
        declares = head in ("declare", "typeset", "local")
        refs = refs or (declares and any("n" in f for f in flags))
        if (
            head in _ARITH_ARGS
            or any(t in ARITH_TESTS for t in argv[1:])
            or (declares and any("i" in f for f in flags))
        ):
            words += argv[1:]
    closes = _closes(src)
    spans = _spans(src, closes)
    if not spans and not words:
        return []
    found = [(name, at in spans) for name, at in _targets(src, closes, _TARGET)]
    for word in words:
        found += [(name, True) for name, _ in _targets(word, _closes(word), _TARGET)]
    names = list(dict.fromkeys(n for n, inside in found if inside and (n.isupper() or refs)))
    out = [Unknown(f"{name}: set by arithmetic") for name in names]
    built = [at in spans for _, at in _targets(src, closes, _BUILT)]
    if any(built) or any(_targets(w, _closes(w), _BUILT) for w in words):
        out.append(Unknown("arithmetic sets a variable an expansion names"))
    seen = Counter(name for name, _ in found if name.isupper())
    assigned = Counter(
        w.text.split("=", 1)[0].split("[", 1)[0].rstrip("+")
        for cmd in commands
        if not cmd.alternative
        for w in _assigning(cmd)
    )
    planted = [n for n, k in seen.items() if k > assigned[n] and n not in names]
    return out + [Unknown(f"{name}: a value arithmetic may evaluate sets it") for name in planted]


class _Spans:
    """Where arithmetic is in a text: its intervals, merged, asked by position."""

    def __init__(self, intervals: list[tuple[int, int]]) -> None:
        self.cover = bytearray()
        if intervals:
            self.cover = bytearray(max(e for _, e in intervals) + 1)
            marks = [0] * (len(self.cover) + 1)
            for s, e in intervals:
                marks[s] += 1
                marks[e] -= 1
            depth = 0
            for i in range(len(self.cover)):
                depth += marks[i]
                self.cover[i] = depth > 0

    def __bool__(self) -> bool:
        return any(self.cover)

    def __contains__(self, at: int) -> bool:
        return at < len(self.cover) and bool(self.cover[at])


def _closes(text: str) -> dict[int, int]:
    """Each ``(``, ``[`` and ``{`` of ``text`` and where its match closes it (one pass)."""
    out: dict[int, int] = {}
    stacks: dict[str, list[int]] = {"(": [], "[": [], "{": []}
    pairs = {")": "(", "]": "[", "}": "{"}
    for i, c in enumerate(text):
        if c in stacks:
            stacks[c].append(i)
        elif c in pairs and stacks[pairs[c]]:
            out[stacks[pairs[c]].pop()] = i
    return out


def _spans(src: str, closes: dict[int, int]) -> _Spans:
    """The parts of ``src`` bash evaluates as arithmetic, each from its opening to its
    closing bracket (to the end where it has none)."""
    intervals = []
    for match in _OPENS.finditer(src):
        group = next(k for k in range(1, 5) if match.group(k))
        opened = match.start(group)
        intervals.append((match.end(), closes.get(opened, len(src))))
    return _Spans(intervals)


def _targets(text: str, closes: dict[int, int], names: re.Pattern[str]) -> list[tuple[str, int]]:
    """Each name ``names`` finds in ``text`` that an assignment operator follows (past a
    subscript), or ``++``/``--`` precede, and where it is."""
    out = []
    for match in names.finditer(text):
        j = match.end()
        while j < len(text) and text[j] in " \t":
            j += 1
        if j < len(text) and text[j] == "[" and j in closes:
            j = closes[j] + 1
        k = match.start()
        while k > 0 and text[k - 1] in " \t":
            k -= 1
        if _ASSIGNS.match(text, j) or text[max(0, k - 2) : k] in ("++", "--"):
            out.append((match.group().lstrip("${").rstrip("}"), match.start()))
    return out


def _assigning(cmd: SimpleCommand) -> list[Word]:
    """The words of ``cmd`` that assign: its prefix, and a declarer's arguments."""
    argv = cmd.command_words
    prefix = list(cmd.words[: len(cmd.words) - len(argv)])
    declared = (
        [w for w in argv[1:] if is_assignment(w)] if argv and argv[0].text in DECLARERS else []
    )
    return prefix + declared
