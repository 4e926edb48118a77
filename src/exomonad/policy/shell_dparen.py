"""Bash's arithmetic command ``(( ... ))``, read as bash's ``parse_dparen`` reads it: to
the ``))`` that closes it, its parentheses balanced and its quotes and expansions read,
else (``((cd x; ls) )``) two subshells. The lexer (:mod:`~exomonad.policy.shell_lex`)
is a :class:`DparenReader`."""

from __future__ import annotations

from exomonad.policy.shell_ansi import ShellSyntaxError, ansi_c
from exomonad.policy.shell_dialect import reads_as_sh
from exomonad.policy.shell_expansions import ExpansionReader
from exomonad.policy.shell_tokens import Redir, Token, Word

__all__ = ["ARITH_CLOSE", "ARITH_OPEN", "DparenReader"]

#: The words an arithmetic command ``(( ... ))`` is lexed into around its expression
#: (unquoted, only the lexer makes them).
ARITH_OPEN, ARITH_CLOSE = "((", "))"


class DparenReader(ExpansionReader):
    """Reads an arithmetic command at ``i`` into :attr:`tokens`."""

    tokens: list[Token]
    pending: list[tuple[Redir, str, bool]]
    ends: dict[int, int]

    def _arithmetic(self) -> bool:
        """At ``((``: bash's arithmetic command when a ``))`` closes it (its parens
        balanced, quotes and expansions read as bash reads them), lexed as three words
        :data:`ARITH_OPEN`, the expression (text, its substitutions kept) and
        :data:`ARITH_CLOSE`; else False, nothing read (``((cd x; ls) )``: two
        subshells). Its ``<``, ``>``, ``&``, ``|`` and ``;`` are arithmetic, no
        operators: found trying the gate as a worker, ``(( x = 1 << 2 ))`` was read as
        a here-document ``<< 2`` whose body hid the lines after it (a ``grep`` there
        printed the lead's token, allowed), and ``for ((i=0; i<3; i++))`` was asked."""
        ahead, ends = self._glued(self.i, 2)
        if ahead != "((" or reads_as_sh():  # dash has no arithmetic command
            return False
        s, start, second = self.s, self.i, ends[0]
        known = self.ends.get(second)
        if known is not None and not s.startswith(")", self._joined(known + 1)):
            return False  # a scan around it found where it closes: two subshells
        subs: list[str] = []
        j = self._closing(ends[1], second, subs)
        close = self._joined(j + 1)
        if not s.startswith(")", close):
            self.i = start
            return False
        expr = s[ends[1] : j]
        if self.pending and "\n" in expr:
            raise ShellSyntaxError("a here-document's body inside (( ))")
        dynamic = bool(subs) or any(ch in expr for ch in "$`")
        self.tokens += [Word(ARITH_OPEN), Word(expr, dynamic, True, tuple(subs)), Word(ARITH_CLOSE)]
        self.i = close + 1
        return True

    def _closing(self, j: int, opened: int, subs: list[str]) -> int:
        """The index of the ``)`` that closes the ``(`` at ``opened``, scanning from
        ``j`` as bash's ``((`` does (quotes and expansions read, their substitutions
        added to ``subs``), each ``(`` passed noted in :attr:`ends`; a syntax error
        where none closes it (bash's too)."""
        s, stack = self.s, [opened]
        while j < len(s):
            c = s[j]
            if c == "\\":
                j += 2
            elif c == "'":  # a quote only to find the end: bash evaluates its text
                end = s.find("'", j + 1)
                j = len(s) if end < 0 else end + 1
            elif c == "$" and (pair := self._glued(j, 2))[0] == "$'":
                j = ansi_c(s, pair[1][1])[1]  # ``(( $'\'' ))`` ends at its ``))``
            elif c in '"$`':
                self.i = j + (c == '"')
                if c == '"':
                    self._double_quoted([], subs)
                elif c == "$":
                    self._dollar([], subs, quoted=True)
                else:
                    subs.append(self._backquote())
                j = self.i
            elif c == "(":
                stack.append(j)
                j += 1
            elif c == ")":
                self.ends[stack.pop()] = j
                if not stack:
                    return j
                j += 1
            else:
                j += 1
        raise ShellSyntaxError("unterminated ((")
