"""How the lexer reads the quotes and expansions inside a word: double quotes,
``$NAME`` and the special parameters, ``${...}``, ``$((...))``, ``$(...)``, backquotes,
ANSI-C quoting (``$'...'``: :mod:`~.shell_ansi`) and ``$"..."``.

Nothing is expanded: each is kept verbatim in the word's text and makes the word
``dynamic`` (its value is not known until the shell runs), and the source of every
command substitution, wherever it stands (in double quotes, inside ``${X:-$(id)}`` or
``$((...))``), is kept for the caller to classify (it runs).

>>> from exomonad.policy.shell_lex import lex
>>> word = lex('echo "a $(id) ${X:-`pwd`}"')[1]
>>> word.text, word.dynamic, word.subs
('a $(id) ${X:-`pwd`}', True, ('id', 'pwd'))
"""

from __future__ import annotations

from exomonad.policy.shell_ansi import ShellSyntaxError, ansi_c
from exomonad.policy.shell_dialect import reads_as_sh

__all__ = ["ExpansionReader"]

_NAME_START = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_NAME_CHARS = _NAME_START | set("0123456789")
_SPECIAL_PARAMS = set("0123456789@*#?$!-")


class ExpansionReader:
    """Reads a word's quotes and expansions from the source ``s`` at index ``i``,
    advancing ``i`` past what it reads. The lexer (:func:`~exomonad.policy.shell_lex.lex`)
    is one: it lexes the body of each ``$( ... )`` (:meth:`_paren_sub`)."""

    s: str
    i: int

    def _paren_sub(self, start: int) -> str:
        """Read a ``$( ... )`` body starting at ``start``; return its source text."""
        raise NotImplementedError

    def _joined(self, j: int) -> int:
        """``j`` past the line continuations (a ``\\`` and a newline) that stand there.
        Bash removes an unquoted one before it reads a token, so it may split an operator
        or an expansion: found trying the gate as a worker, ``cd ../.. &\\`` then ``&
        echo x > a.txt`` (``&&``) wrote the lead's ``a.txt``, allowed as a ``cd`` in the
        background, and so did ``$\\`` then ``(cmd)`` in a ``${x:-...}``."""
        while self.s.startswith("\\\n", j):
            j += 2
        return j

    def _glued(self, j: int, count: int) -> tuple[str, list[int]]:
        """Up to ``count`` characters from ``j`` as bash reads them (line continuations
        between them removed), and the index after each (and the continuations after it).

        >>> from exomonad.policy.shell_lex import _Lexer
        >>> _Lexer("&\\\\\\n&\\\\\\nx")._glued(0, 3)
        ('&&x', [3, 6, 7])
        """
        chars: list[str] = []
        ends: list[int] = []
        while len(chars) < count and j < len(self.s):
            chars.append(self.s[j])
            j = self._joined(j + 1)
            ends.append(j)
        return "".join(chars), ends

    def _double_quoted(self, out: list[str], subs: list[str]) -> bool:
        s, n = self.s, len(self.s)
        dynamic = False
        while self.i < n:
            c = s[self.i]
            if c == '"':
                self.i += 1
                return dynamic
            if c == "\\" and self.i + 1 < n and s[self.i + 1] in '$`"\\\n':
                if s[self.i + 1] != "\n":
                    out.append(s[self.i + 1])
                self.i += 2
            elif c == "$":
                dynamic |= self._dollar(out, subs, quoted=True)
            elif c == "`":
                subs.append(self._backquote())
                out.append("`...`")
                dynamic = True
            else:
                out.append(c)
                self.i += 1
        raise ShellSyntaxError("unterminated double quote")

    def _dollar(self, out: list[str], subs: list[str], quoted: bool = False) -> bool:
        """Handle ``$...`` at ``self.i``; append its verbatim text; True if it expands.
        In double quotes (``quoted``), and for dash (:mod:`.shell_dialect`), ``$'`` and ``$"``
        are a ``$`` and a quote: bash runs ``echo "$'" ; rm x ; echo "'"`` as three
        commands (found trying the gate as a worker: read as one ``echo``, allowed)."""
        s, i = self.s, self.i
        ahead, ends = self._glued(i, 3)  # what follows the ``$``, as bash reads it
        nxt = ahead[1:2]
        if nxt in ("'", '"') and (quoted or reads_as_sh()):
            out.append("$")
            self.i = ends[0]
            return False
        if ahead == "$((":
            end = self._expansion(ends[2], "(", ")", subs)
            if not s.startswith(")", end + 1):
                raise ShellSyntaxError("unterminated $(( ... ))")
            out.append(s[i : end + 2])
            self.i = end + 2
            return True
        if nxt == "[" and not reads_as_sh():  # bash's old arithmetic: ``$[ 1<<2 ]``
            end = self._expansion(ends[1], "[", "]", subs, quoted)
            out.append(s[i : end + 1])
            self.i = end + 1
            return True
        if nxt == "(":
            subs.append(self._paren_sub(ends[1]))
            out.append(f"$({subs[-1]})")
            return True
        if nxt == "{":
            end = self._expansion(ends[1], "{", "}", subs, quoted)
            out.append(s[i : end + 1])
            self.i = end + 1
            return True
        if nxt == "'":  # ANSI-C quoting
            text, self.i = ansi_c(s, ends[1])
            out.append(text.partition("\0")[0])  # bash ends the string at a NUL
            return "\0" in text
        if nxt == '"':  # $"..." (locale translation): its value may differ
            self.i = ends[1]
            self._double_quoted(out, subs)
            return True
        if nxt in _NAME_START:
            j = ends[0]
            while j < len(s) and s[j] in _NAME_CHARS:
                j += 1
            out.append("$" + s[ends[0] : j])
            self.i = j
            return True
        if nxt and nxt in _SPECIAL_PARAMS:
            out.append("$" + nxt)
            self.i = ends[1]
            return True
        out.append("$")
        self.i = i + 1
        return False

    def _expansion(
        self, start: int, opener: str, closer: str, subs: list[str], quoted: bool = False
    ) -> int:
        """Index of the ``closer`` ending ``${...}`` / ``$((...))`` that starts at ``start``.

        Command substitutions inside it run too: they are appended to ``subs``. In
        ``${...}`` a double-quoted part is one (its ``}`` closes nothing: bash and dash
        ran the ``grep`` of ``echo ${x:-"}"} ; grep -r SECRET ../.. #"``, which was read
        as one ``echo``, allowed); a single-quoted part is one too, but in a double-quoted
        ``${...}`` (``quoted``) only to bash: dash and bash's posix mode take its ``'``
        for a character, so such a part that holds what either reads otherwise is a
        syntax error here (``echo "${x:-'}" ; grep -r SECRET ../.. ; echo "'}"`` run by
        ``sh -c`` ran the grep, allowed).
        """
        s, j, depth = self.s, start, 0
        while j < len(s):
            c = s[j]
            if c == "\\":
                j += 2
                continue
            if c == '"' and opener in "{[":
                self.i = j + 1
                self._double_quoted([], subs)
                j = self.i
                continue
            if c == "$" and opener in "{[" and not quoted and not reads_as_sh():
                pair, ends = self._glued(j, 2)
                if pair == "$'":  # ANSI-C quoting: ``${x:-$'\''}`` is one word
                    j = ansi_c(s, ends[1])[1]
                    continue
            if c == "'" and opener in "{[":
                end = s.find("'", j + 1)
                if end < 0:
                    break
                if quoted and (opener == "[" or any(ch in s[j + 1 : end] for ch in '{}"\\$`')):
                    raise ShellSyntaxError("a quote in a double-quoted ${...} sh reads apart")
                j = end
            elif c == "$" and (ahead := self._glued(j, 3))[0][1:2] == "(" and ahead[0] != "$((":
                subs.append(self._paren_sub(ahead[1][1]))
                j = self.i
                continue
            elif c == "`":
                self.i = j
                subs.append(self._backquote())
                j = self.i
                continue
            elif c == opener:
                depth += 1
            elif c == closer:
                if depth == 0:
                    return j
                depth -= 1
            j += 1
        raise ShellSyntaxError(f"unterminated expansion {opener}...{closer}")

    def _backquote(self) -> str:
        s = self.s
        j, buf = self.i + 1, []
        while j < len(s) and s[j] != "`":
            if s[j] == "\\" and j + 1 < len(s) and s[j + 1] in "`$\\":
                buf.append(s[j + 1])
                j += 2
            else:
                buf.append(s[j])
                j += 1
        if j >= len(s):
            raise ShellSyntaxError("unterminated backquote")
        self.i = j + 1
        return "".join(buf)
