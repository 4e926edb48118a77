"""Editors that take their commands on stdin: ``ed``, and ``ex`` (or vi in Ex mode).

Their commands write and read any file and run any command (``w ../../Makefile``, ``r
FILE``, ``!cmd``), as ``-c`` does on the command line. Found trying the gate as a
worker: ``ex -s x <<< 'w! ../../Makefile'`` and ``echo 'w ../../Makefile' | ed -s x``
overwrote the lead's Makefile, allowed as an edit of ``x`` in the worktree. So an
editor reading commands from a here-document, a here-string, a pipe or a file is
:class:`~exomonad.policy.actions.Unknown` (asked): what its script does is not read.

>>> from exomonad.policy.shell_parse import parse
>>> [editor_script(c, c.argv[0], list(c.command_words[1:])) != []
...  for c in parse("ed -s x <<< 'w ../y'; vim -es x < s.vim; vim x; echo q | ed x", "/w")]
[True, True, False, False, True]
"""

from __future__ import annotations

from exomonad.policy.actions import Unknown
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_parse import SimpleCommand
from exomonad.policy.shell_programs import EX_EDITORS

__all__ = ["editor_script"]

#: Editors that always read their commands from stdin.
_LINE_EDITORS = frozenset({"ed", "red", "ex", "nex"})


def editor_script(cmd: SimpleCommand, name: str | None, args: list[Word]) -> list[Unknown]:
    """Unknown when ``name`` takes editor commands on stdin and ``cmd`` gives it some."""
    if name is None or not _reads_commands(name, args):
        return []
    given = [r for r in cmd.redirs if r.fd in (None, 0) and r.op in ("<", "<<", "<<-", "<<<")]
    given = [r for r in given if r.op != "<" or r.target.text != "/dev/null"]
    if not given and not cmd.piped_in:
        return []
    texts = " ".join((name, *(w.text for w in args)))
    return [Unknown(f"{name} runs the editor commands it reads on stdin: {texts}")]


def _reads_commands(name: str, args: list[Word]) -> bool:
    """Whether ``name ARGS`` reads editor commands on stdin: ``ed``, ``ex``, or vi in
    Ex mode (``-e``, ``-E``, ``-es``)."""
    if name in _LINE_EDITORS:
        return True
    if name not in EX_EDITORS:
        return False
    return any(
        w.text[:1] == "-" and w.text[1:2] != "-" and ("e" in w.text or "E" in w.text) for w in args
    )
