"""Text bash evaluates again when it runs: subscripts.

Bash evaluates an array subscript wherever it meets ``NAME[...]`` as a variable's name
(``test -v``, ``[[ -v ]]``, ``printf -v``, ``read``, ``declare``, ``local``, ``unset``,
``wait -p``) or in arithmetic (``let``, ``(( ))``, ``$(( ))``, ``[[ A -eq B ]]``, an
assignment's subscript, ``${x:offset}``), and expands the subscript first: a ``$(...)``,
a backquote or a ``${...}`` in it runs, though the line quoted it (found trying the gate
as a worker: ``test -v 'a[$(grep -r SECRET ../.. >&2)]'`` printed the lead's token and
``printf -v 'a[$(git -C ../.. reset -q --hard exo/w1)]' x`` moved the lead's ``main``,
allowed). Each of these is :class:`Unknown` (:func:`evaluated`):

- a word holding a subscript (``NAME[...]``, or ``[...]=`` in an array's list) with a
  ``$(``, a backquote or a ``${`` the reading did not take for an expansion;
- an expansion holding a ``$(`` or a backquote the reading did not take for one: single
  quotes in ``${...}`` do not quote everywhere (``"${x:-'$(id)'}"``, ``${x:'$(id)'}``).

>>> from exomonad.policy.shell_parse import parse
>>> def judge(line):
...     return [a.raw.split(" (")[0] for a in evaluated(parse(line, "/w"), line)]
>>> judge("test -v 'a[$(id)]'"), judge("read x <<< 'a[$(id)]'; echo $((x))")
(['a[$(id)]'], ['a[$(id)]'])
>>> judge('a=(1 2); echo "${a[$((1+1))]}" ${#a[@]} $((n+1))'), judge("sed 's/[$(]//' f")
([], [])
"""

from __future__ import annotations

import posixpath
import re

from exomonad.policy.actions import Action, Unknown
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_loose import ansi_decoded, hidden_in_expansion, in_subscript, loose
from exomonad.policy.shell_parse import SimpleCommand
from exomonad.policy.state_built import printed_text

__all__ = ["evaluated"]

#: How many of the findings a line's judgement names.
_MOST_SHOWN = 4
#: An escape ``printf`` or ``echo -e`` decodes to a ``$`` or a backquote.
_SIGN_ESCAPE = re.compile(r"\\(x0?(24|60)|u0{0,2}(24|60)|U0{0,6}(24|60)|0{0,2}44|0?140)")


def evaluated(commands: list[SimpleCommand], src: str) -> list[Action]:
    """The :class:`Unknown` s for text of ``src`` (parsed into ``commands``) that bash
    may run when it evaluates a subscript, a prompt or a name (see the module)."""
    found: list[str] = []
    for cmd in commands:
        for word in _words(cmd):
            spots = loose(word)
            if spots and in_subscript(word, spots):
                found.append(f"{word.text[:80]} (a subscript: bash runs the $(...) in it)")
            elif spots and word.dynamic and "${" in word.text:
                found.append(f"{word.text[:80]} (an expansion holding a command not seen)")
    found += hidden_in_expansion(src)
    return [Unknown(raw) for raw in list(dict.fromkeys(found))[:_MOST_SHOWN]]


def _words(cmd: SimpleCommand) -> list[Word]:
    """The words of ``cmd`` and its redirections' targets; as words too, an expansion's
    ``$'...'`` decoded (``${a[$'a[\\x24(id)]']}``: the lexer keeps an expansion's text as
    written, bash decodes it) and what ``printf`` or ``echo`` print with their escapes
    decoded (``'a[\\x24(id)]'``)."""
    words = [*cmd.words, *(r.target for r in cmd.redirs)]
    for word in list(words):
        if word.dynamic and "$'" in word.text:
            words.append(ansi_decoded(word))
    argv = _argv(cmd)
    if argv and argv[0].text in ("printf", "echo"):
        for word in argv[1:]:
            if _SIGN_ESCAPE.search(word.text):
                words.append(Word(printed_text(word.text), quoted=True))
    return words


def _argv(cmd: SimpleCommand) -> list[Word]:
    """The command's words past ``builtin`` and ``command``."""
    argv = list(cmd.command_words)
    while len(argv) > 1 and argv[0].text in ("builtin", "command", "-p", "--"):
        argv = argv[1:]
    if argv:
        argv[0] = Word(posixpath.basename(argv[0].text), argv[0].dynamic, argv[0].quoted)
    return argv
