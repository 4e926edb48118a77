"""Editors that take their commands on stdin: ``ed``, ``ex`` (or vi in Ex mode), and vi
whose stdin is not the terminal (it reads its keystrokes there).

Their commands write and read any file and run any command (``w ../../Makefile``, ``r
FILE``, ``!cmd``), as ``-c`` does on the command line. Found trying the gate as a
worker: ``ex -s x <<< 'w! ../../Makefile'`` and ``echo 'w ../../Makefile' | ed -s x``
overwrote the lead's Makefile, allowed as an edit of ``x`` in the worktree; so did stdin
given a way these did not see: to a group or a loop holding the editor (``{ ed -s x; }
< c.ed``, ``(ed -s x) <<< '...'``, ``while read l; do ed -s x; done < c.ed``), by an
earlier ``exec < c.ed``, by a dup (``ed -s x 3< c.ed <&3``), and to vi, which reads
keystrokes from a stdin that is not a terminal (``vim x <<< ':w! ../../Makefile'``). So
such an editor whose stdin is anything but the terminal or ``/dev/null`` is
:class:`~exomonad.policy.actions.Unknown` (asked): what its script does is not read.
``echo hi | vim -`` stays allowed: with ``-`` vi reads the text it edits there.

>>> from exomonad.policy.shell_parse import parse
>>> [editor_script(c, c.argv[0], list(c.command_words[1:])) != []
...  for c in parse("ed -s x <<< 'w ../y'; vim -es x < s.vim; vim x; echo q | ed x", "/w")]
[True, True, False, False, True]
>>> [editor_script(c, c.argv[0], list(c.command_words[1:])) != []
...  for c in parse("{ ed x; } < c; vim x <<< ':w'; ed x <&3; echo x | vim -; ex -s x", "/w")
...  if c.argv]
[True, True, True, False, False, False]
"""

from __future__ import annotations

from exomonad.policy.actions import Unknown
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_parse import SimpleCommand
from exomonad.policy.shell_programs import EX_EDITORS

__all__ = ["editor_script"]

#: Editors that always read their commands from stdin.
_LINE_EDITORS = frozenset({"ed", "red", "ex", "nex"})
#: Redirections that give fd 0 something to read.
_STDIN_OPS = frozenset({"<", "<<", "<<-", "<<<", "<&", "<>"})


def editor_script(
    cmd: SimpleCommand, name: str | None, args: list[Word], stdin_redirected: bool = False
) -> list[Unknown]:
    """Unknown when ``name`` reads editor commands or keystrokes on stdin and ``cmd``'s
    stdin is not the terminal nor ``/dev/null`` (``stdin_redirected``: an earlier bare
    ``exec <`` of the line moved it)."""
    if name is None or not _reads_commands(name, args):
        return []
    if not _stdin_given(cmd, stdin_redirected):
        return []
    texts = " ".join((name, *(w.text for w in args)))
    return [Unknown(f"{name} runs the editor commands it reads on stdin: {texts}")]


def _stdin_given(cmd: SimpleCommand, stdin_redirected: bool) -> bool:
    """Whether ``cmd``'s stdin may be anything but the terminal or ``/dev/null``: its
    own last redirection of fd 0 says, else a pipe, a group or loop it is in (whose
    stdin may be redirected as a whole), or an earlier ``exec <``."""
    reads = [r for r in cmd.redirs if r.fd in (None, 0) and r.op in _STDIN_OPS]
    if reads:
        last = reads[-1]
        return not (last.op == "<" and last.target.text == "/dev/null" and not last.target.dynamic)
    return cmd.piped_in or cmd.grouped or stdin_redirected


def _reads_commands(name: str, args: list[Word]) -> bool:
    """Whether ``name ARGS`` reads editor commands on stdin: ``ed``, ``ex``, or vi in
    Ex mode (``-e``, ``-E``, ``-es``); or keystrokes: vi in any other mode, unless it
    is told to edit stdin (``-``)."""
    if name in _LINE_EDITORS:
        return True
    if name not in EX_EDITORS:
        return False
    texts = [w.text for w in args]
    options = texts[: texts.index("--")] if "--" in texts else texts
    ex_mode = any(t[:1] == "-" and t[1:2] != "-" and ("e" in t or "E" in t) for t in options)
    return ex_mode or "-" not in options
