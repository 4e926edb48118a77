"""Which shell reads a command: bash, or dash where it may.

Dash (Debian's and Ubuntu's ``/bin/sh``) reads ``$'...'`` and ``$"..."`` as a ``$`` and a
quoted string, bash as ANSI-C quoting and a translated string: ``echo $'\\' ; echo pwned
> ../../Makefile ; echo '\\'`` is one ``echo`` to bash and three commands to dash. Found
trying the gate as a worker: run by ``sh -c`` (any runtime), or by Codex CLI's
``exec_command`` with ``"shell": "/bin/sh"`` (an argument its PreToolUse hook does not
show; a shell Codex does not know runs as ``/bin/sh`` too), it overwrote the lead's
``Makefile``, allowed as an ``echo``. So a command holding either is judged both ways
(:func:`each_reading`); the lexer asks :func:`reads_as_sh` which way it reads.

>>> from exomonad.policy.shell_lex import lex
>>> [t.text for t in lex("echo $'a' ; ls")], sh_differs("echo $HOME")
(['echo', 'a', ';', 'ls'], False)
>>> with reading(sh=True):
...     [t.text for t in lex("echo $'a' ; ls")]
['echo', '$a', ';', 'ls']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from exomonad.policy.actions import Action, Unknown

__all__ = ["SH_DEPTH", "each_reading", "reading", "reads_as_sh", "sh_differs"]

#: Shell levels (``sh -c`` in ``sh -c`` ...) below which both readings are judged: each
#: level doubles the work; deeper, a command dash may read otherwise is unknown.
SH_DEPTH = 3
_SH: ContextVar[bool] = ContextVar("exomonad_sh_reading", default=False)
#: Two open parens in a row (overlapping: ``(((`` holds two).
_DOUBLE_PAREN = re.compile(r"(?=\(\()")


def sh_differs(src: str) -> bool:
    """Whether dash may read ``src`` otherwise than bash: it holds ``$'``, ``$"`` or
    ``$[`` (bash's old arithmetic, a ``$`` and a glob to dash), or a ``((`` that is not
    ``$((``, which bash reads as arithmetic where a command starts
    and dash as two subshells (``((cd ../..; echo x > a.txt))`` runs both commands in
    dash). An arithmetic ``for ((`` is a syntax error to dash, which then runs nothing
    from its line on: what bash's reading judges covers it.

    >>> sh_differs("(( x++ ))"), sh_differs("echo $((1+2)); for ((i=0; i<3; i++)); do :; done")
    (True, False)
    """
    if "$'" in src or '$"' in src or "$[" in src:
        return True
    return any(
        not _arithmetic_for_or_expansion(src, m.start()) for m in _DOUBLE_PAREN.finditer(src)
    )


def _arithmetic_for_or_expansion(src: str, at: int) -> bool:
    """Whether the ``((`` at ``at`` is a ``$((`` or follows the word ``for`` (looked for
    in the few characters before it: farther, it is taken for one dash reads apart)."""
    before = src[max(0, at - 64) : at].replace("\\\n", "")
    if before.endswith("$"):
        return True
    before = before.rstrip(" \t")
    return before.endswith("for") and before[-4:-3] in ("", " ", "\t", "\n", ";", "&", "|", "(")


def reads_as_sh() -> bool:
    """Whether the lexer reads ``$'`` and ``$"`` as dash does now (:func:`reading`)."""
    return _SH.get()


@contextmanager
def reading(sh: bool) -> Iterator[None]:
    """Within it, the lexer reads ``$'`` and ``$"`` as dash does (``sh``), or as bash."""
    token = _SH.set(sh)
    try:
        yield
    finally:
        _SH.reset(token)


def each_reading(src: str, depth: int, judge: Callable[[], list[Action]]) -> list[Action]:
    """``judge``'s actions for ``src`` as bash reads it, then what dash's reading adds
    where the two may differ (:func:`sh_differs`); past :data:`SH_DEPTH` levels, an
    :class:`Unknown` instead of dash's reading."""
    with reading(sh=False):
        found = judge()
    if not sh_differs(src):
        return found
    if depth >= SH_DEPTH:
        return [*found, Unknown(f"as sh reads it: {src[:200]}")]
    with reading(sh=True):
        dash = judge()
    known = set(found)
    return found + [a for a in dash if a not in known]
