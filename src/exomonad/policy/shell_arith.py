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

__all__ = ["arithmetic_sets"]

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
#: An assignment in an arithmetic expression: ``NAME=``, ``NAME[...]+=``, ``++NAME``,
#: ``NAME--`` (not ``==``, ``<=``, ``>=``, ``!=``).
_SETS = re.compile(
    rf"(?<![A-Za-z0-9_$])({_NAME})\s*(?:\[[^]]*\])?\s*(?:<<|>>|[-+*/%&|^])?=(?!=)"
    rf"|(?:\+\+|--)\s*({_NAME})|({_NAME})\s*(?:\[[^]]*\])?\s*(?:\+\+|--)"
)
#: An assignment in arithmetic to a name an expansion gives (``let "$x=1"``).
_SETS_BUILT = re.compile(
    r"\$\{?[A-Za-z_0-9@*#?!]+\}?\s*(?:\[[^]]*\])?\s*(?:<<|>>|[-+*/%&|^])?=(?!=)"
    r"|(?:\+\+|--)\s*\$|\$\{?[A-Za-z_0-9]+\}?\s*(?:\+\+|--)"
)
#: Where arithmetic starts in a line's text: ``$((``, ``((``, ``$[``, a subscript
#: (``NAME[``), an offset (``${NAME:``).
_OPENS = re.compile(rf"\$?\(\(|\$\[|{_NAME}\[|\$\{{[#!]?{_NAME}(?:\[[^]]*\])?:")
#: Builtins whose arguments are arithmetic (``let``) or may be (``-eq``, ``declare -i``).
_ARITH_ARGS = frozenset({"let"})
_ARITH_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})


def arithmetic_sets(commands: list[SimpleCommand], src: str) -> list[Unknown]:
    """An :class:`Unknown` for each environment-style name arithmetic in ``src``
    (parsed into ``commands``) may assign: written in it, or in a value arithmetic may
    evaluate (``v=PATH=1; (( v ))``, ``read v <<< PATH=1``: upper-case ``NAME=`` text
    beyond the line's own assignments), given by an expansion (``let "$x=1"``), or
    through a name reference (``declare -n r=PATH; (( r = 1 ))``)."""
    texts = list(_spans(src))
    refs = False
    for cmd in commands:
        argv = [w.text for w in cmd.command_words]
        head = argv[0] if argv else ""
        flags = [t for t in argv[1:] if t.startswith("-")]
        declares = head in ("declare", "typeset", "local")
        refs = refs or (declares and any("n" in f for f in flags))
        if (
            head in _ARITH_ARGS
            or any(t in _ARITH_TESTS for t in argv[1:])
            or (declares and any("i" in f for f in flags))
        ):
            texts += argv[1:]
    if not texts:
        return []
    names: list[str] = []
    for text in texts:
        for match in _SETS.finditer(text):
            name = next(g for g in match.groups() if g)
            if (name.isupper() or refs) and name not in names:
                names.append(name)
    found = [Unknown(f"{name}: set by arithmetic") for name in names]
    if any(_SETS_BUILT.search(text) for text in texts):
        found.append(Unknown("arithmetic sets a variable an expansion names"))
    return found + [Unknown(f"{name}: a value arithmetic may evaluate sets it")
                    for name in _planted(commands, src) if name not in names]  # fmt: skip


def _planted(commands: list[SimpleCommand], src: str) -> list[str]:
    """Upper-case names ``src`` holds as ``NAME=`` (or ``++``/``--``) text more often
    than its own assignment words assign them: text a variable may carry into the
    line's arithmetic (``v=PATH=1; (( v ))``)."""
    assigned = Counter(
        w.text.split("=", 1)[0].split("[", 1)[0].rstrip("+")
        for cmd in commands
        if not cmd.alternative
        for w in _assigning(cmd)
    )
    seen = Counter(next(g for g in m.groups() if g) for m in _SETS.finditer(src))
    return [name for name, n in seen.items() if name.isupper() and n > assigned[name]]


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


def _assigning(cmd: SimpleCommand) -> list[Word]:
    """The words of ``cmd`` that assign: its prefix, and a declarer's arguments."""
    argv = cmd.command_words
    prefix = list(cmd.words[: len(cmd.words) - len(argv)])
    declared = (
        [w for w in argv[1:] if is_assignment(w)] if argv and argv[0].text in DECLARERS else []
    )
    return prefix + declared
