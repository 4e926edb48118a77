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

from exomonad.policy.actions import Unknown
from exomonad.policy.shell_command import SimpleCommand

__all__ = ["arithmetic_sets"]

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
#: An assignment in an arithmetic expression: ``NAME=``, ``NAME[...]+=``, ``++NAME``,
#: ``NAME--`` (not ``==``, ``<=``, ``>=``, ``!=``).
_SETS = re.compile(
    rf"(?<![A-Za-z0-9_$])({_NAME})\s*(?:\[[^]]*\])?\s*(?:<<|>>|[-+*/%&|^])?=(?!=)"
    rf"|(?:\+\+|--)\s*({_NAME})|({_NAME})\s*(?:\[[^]]*\])?\s*(?:\+\+|--)"
)
#: Where arithmetic starts in a line's text: ``$((``, ``((``, ``$[``, a subscript
#: (``NAME[``), an offset (``${NAME:``).
_OPENS = re.compile(rf"\$?\(\(|\$\[|{_NAME}\[|\$\{{[#!]?{_NAME}(?:\[[^]]*\])?:")
#: Builtins whose arguments are arithmetic (``let``) or may be (``-eq``, ``declare -i``).
_ARITH_ARGS = frozenset({"let"})
_ARITH_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})


def arithmetic_sets(commands: list[SimpleCommand], src: str) -> list[Unknown]:
    """An :class:`Unknown` for each environment-style name arithmetic in ``src``
    (parsed into ``commands``) may assign."""
    texts = list(_spans(src))
    for cmd in commands:
        argv = [w.text for w in cmd.command_words]
        head = argv[0] if argv else ""
        flags = [t for t in argv[1:] if t.startswith("-")]
        if (
            head in _ARITH_ARGS
            or any(t in _ARITH_TESTS for t in argv[1:])
            or (head in ("declare", "typeset", "local") and any("i" in f for f in flags))
        ):
            texts += argv[1:]
    names: list[str] = []
    for text in texts:
        for match in _SETS.finditer(text):
            name = next(g for g in match.groups() if g)
            if name.isupper() and name not in names:
                names.append(name)
    return [Unknown(f"{name}: set by arithmetic") for name in names]


def _spans(src: str) -> list[str]:
    """The texts of ``src`` bash evaluates as arithmetic (each up to its closing
    bracket; to the end where it has none)."""
    out = []
    for match in _OPENS.finditer(src):
        opened = match.group()
        if opened.endswith("(("):
            pair, depth = "()", 2
        elif opened.endswith(":"):
            pair, depth = "{}", 1
        else:
            pair, depth = "[]", 1
        i = match.end()
        while i < len(src) and depth:
            depth += (src[i] == pair[0]) - (src[i] == pair[1])
            i += 1
        out.append(src[match.end() : i])
    return out
