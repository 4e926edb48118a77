"""One simple command of a command line, as :mod:`~exomonad.policy.shell_parse` reads it:
its words, its redirections, where it may start and where its input and output go."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from exomonad.policy.shell_lex import Redir, Word

__all__ = ["Dirs", "SimpleCommand", "in_this_shell", "is_assignment"]

#: Directories a command may start in (:mod:`~exomonad.policy.shell_cd`); None: unknown.
Dirs = tuple[str | None, ...]

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
#: Words before a builtin that still run it in this shell.
_WRAPPERS = frozenset({"builtin", "command", "time", "!"})
#: Their options that keep it so (``command -pp``, ``time -p``; ``command -v cd`` only
#: prints).
_KEEPING = re.compile(r"-p+|--")


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One command with its words, redirections and the directory it starts in.

    ``stdin_script`` is a here-document / here-string body (what ``bash <<EOF`` runs);
    ``piped_in`` is true when stdin comes from a pipe (``curl x | sh``); ``grouped`` when
    the command is inside ``( ... )``, ``{ ...; }``, a loop, ``if`` or ``case``, whose
    stdin may be redirected as a whole; ``background`` when it is run with ``&`` (a group
    run with ``&``, ``( ... ) &``, adds a command with no words and ``background``);
    ``piped_out`` when its output may reach another command of the line: a pipe, or a
    process substitution it runs in (``<(cat <<< X)``; a command substitution's output
    is judged where its text is, in the word holding it), its own or that of a group,
    loop or ``if`` holding it (a function body's always: where a call sends it is not
    followed); ``receiver`` the simple command that reads it down a pipe, None when
    that is not one (a group or loop: ``| while read f``, a process substitution).

    >>> from exomonad.policy.shell_parse import parse
    >>> first, second, _ = parse("{ cat <<< x; } | sort | wc; { cat <<< y; } > f", "/w")[::2]
    >>> first.receiver.argv, first.receiver.receiver.argv, second.piped_out
    (('sort',), ('wc',), False)
    """

    words: tuple[Word, ...]
    redirs: tuple[Redir, ...] = ()
    cwd: str | None = None
    piped_in: bool = False
    stdin_script: str | None = None
    grouped: bool = False
    background: bool = False
    piped_out: bool = False
    receiver: SimpleCommand | None = field(default=None, compare=False, repr=False)
    #: The other directories it may start in (a ``cd`` before it may have failed, or
    #: not run: :mod:`~exomonad.policy.shell_cd`); ``alternative``: this is the command
    #: before it again, in one of those.
    others: Dirs = ()
    alternative: bool = False

    @property
    def argv(self) -> tuple[str, ...]:
        """The command's words without leading ``NAME=value`` assignments."""
        return tuple(w.text for w in self.command_words)

    @property
    def command_words(self) -> tuple[Word, ...]:
        """``words`` without leading assignments."""
        i = 0
        while i < len(self.words) and is_assignment(self.words[i]):
            i += 1
        return self.words[i:]


def is_assignment(word: Word) -> bool:
    """True for a ``NAME=value`` word (an environment prefix when before a command)."""
    return _ASSIGNMENT.match(word.text) is not None


def in_this_shell(words: Sequence[Word]) -> list[Word]:
    """``words`` from the command they run in this shell on: past assignments (``IFS=
    read``), ``builtin``, ``command [-p]``, the ``time [-p]`` and ``!`` keywords, and
    assignments after them (``time X=1 cd -``). A builtin behind them sets this shell's
    variables and directory as it would alone (``command -pp read GIT_DIR``)."""
    i = 0
    while i < len(words) and is_assignment(words[i]):
        i += 1
    while i < len(words) and words[i].text in _WRAPPERS:
        i += 1
        while i < len(words) and (_KEEPING.fullmatch(words[i].text) or is_assignment(words[i])):
            i += 1
    return list(words[i:])
