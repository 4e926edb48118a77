"""A small POSIX-shell lexer that keeps what :mod:`shlex` throws away.

:mod:`shlex` cannot tell a quoted ``"&&"`` from the operator, knows nothing of ``$(...)``,
here-documents or newlines as separators, so the classifier uses this instead. It does
not expand anything: a word that contains ``$VAR``, ``$(...)``, backquotes or arithmetic is
marked ``dynamic`` (its value is unknown), and the source of every command substitution is
kept in ``subs`` so the caller can classify it too (it runs). How a word's quotes and
expansions are read: :mod:`~.shell_expansions`.

>>> [t.text for t in lex("FOO=1 git push -f 'a b' && echo \\"$(pwd)\\"")]
['FOO=1', 'git', 'push', '-f', 'a b', '&&', 'echo', '$(pwd)']
>>> lex('echo "$(date)"')[1].subs
('date',)
"""

from __future__ import annotations

import re

from exomonad.policy.shell_ansi import ShellSyntaxError
from exomonad.policy.shell_brace import bare_char, brace_state, expand_items
from exomonad.policy.shell_dparen import ARITH_CLOSE, ARITH_OPEN, DparenReader
from exomonad.policy.shell_tilde import tilde_after_braces, tilde_text
from exomonad.policy.shell_tokens import Op, Redir, Token, Word
from exomonad.util.digits import is_number

__all__ = [
    "ARITH_CLOSE",
    "ARITH_OPEN",
    "NAMED_FD",
    "Op",
    "Redir",
    "ShellSyntaxError",
    "Token",
    "Word",
    "lex",
]

_OPERATORS = (";;&", ";;", ";&", "&&", "||", "|&", ";", "&", "|", "(", ")")
_REDIRS = ("&>>", "<<<", "<<-", "&>", ">>", ">&", ">|", "<<", "<&", "<>", ">", "<")
_META = set(" \t\n;&|()<>")
_GLOB = set("*?[")
#: A redirection's ``{NAME}`` (or ``{NAME[i]}``): bash puts the descriptor it opens in NAME.
_NAMED_FD = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\}")
#: The descriptor such a redirection stands for (bash picks one from 10 on): no
#: standard stream.
NAMED_FD = 10
#: What makes a ``(`` after it part of a pattern where ``shopt -s extglob`` is on.
_EXTGLOB = frozenset("!@*+?")
#: A word that assigns a variable (``NAME=``, ``NAME+=``, ``NAME[i]=``).
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")


class _Lexer(DparenReader):
    def __init__(
        self, src: str, start: int = 0, *, until_paren: bool = False,
        ends: dict[int, int] | None = None,
    ) -> None:  # fmt: skip
        self.s = src
        self.i = start
        self.until_paren = until_paren
        self.depth = 0
        self.tokens: list[Token] = []
        self.pending: list[tuple[Redir, str, bool]] = []
        #: Where the ``(`` at an index of ``src`` is closed, found by an arithmetic
        #: command's scan or a substitution's lexing (shared with the lexers of the
        #: substitutions): a ``((`` that is two subshells is read again inside, so each
        #: region is scanned once, not once for each ``((`` around it.
        self.ends: dict[int, int] = {} if ends is None else ends

    # -- top level -------------------------------------------------------------------
    def run(self) -> int:
        """Lex until the end (or the closing paren in sub mode); return the stop index."""
        s, n = self.s, len(self.s)
        while self.i < n:
            c = s[self.i]
            if c in " \t":
                self.i += 1
            elif c == "\\" and s.startswith("\\\n", self.i):
                self.i += 2
            elif c == "\n":
                self.i += 1
                self.tokens.append(Op("\n"))
                self._read_heredocs()
            elif c == "#":
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end
            elif c in "<>" and self._glued(self.i, 2)[0][1:] == "(":
                self.tokens.extend(self._words())
            elif self._redir(None) or (c == "(" and self._arithmetic()):
                pass
            elif c in ";&|()":
                ahead, ends = self._glued(self.i, 3)
                op = next(o for o in _OPERATORS if ahead.startswith(o))
                if self.until_paren and op == ")" and self.depth == 0:
                    if self.pending:  # bash reads the body after the ``)``, dash not
                        raise ShellSyntaxError("here-document in $( ... ) without its body")
                    return self.i
                self.depth += {"(": 1, ")": -1}.get(op, 0)
                self.i = ends[len(op) - 1]
                self.tokens.append(Op(op))
            else:
                self.tokens.extend(self._words())
        if self.until_paren:
            raise ShellSyntaxError("unterminated $( ... )")
        if self.pending:  # here-document with no newline after it: empty body
            for redir, _, _ in self.pending:
                redir.heredoc = ""
        return n

    def _redir(self, fd: int | None) -> bool:
        s = self.s
        ahead, ends = self._glued(self.i, 3)
        op = next((r for r in _REDIRS if ahead.startswith(r)), None)
        if op is None:
            return False
        self.i = ends[len(op) - 1]
        while self.i < len(s) and s[self.i] in " \t":
            self.i += 1
        if self.i >= len(s) or s[self.i] in "\n;&|()<>":
            raise ShellSyntaxError(f"redirection {op} without a target")
        # a here-document's delimiter is its word with only the quotes removed:
        # ``<<~`` ends at ``~`` (found trying the gate as a worker: read as ``$HOME``,
        # the ``grep`` on the lines between printed the lead's token, allowed)
        target = self._scan_word(tilde=False)[0] if op in ("<<", "<<-") else self._word()
        redir = Redir(op, target, fd)
        if op in ("<<", "<<-"):
            self.pending.append((redir, target.text, op == "<<-"))
        self.tokens.append(redir)
        return True

    def _read_heredocs(self) -> None:
        """Read the bodies of the pending here-documents from the line at ``self.i``.

        In a ``$( )``, ``"$( )"`` or ``<( )`` bash also ends a body at a line that starts
        with the delimiter and holds a ``)`` after it (``E)``, ``E )``, ``E);x``, ``E
        cmd)``, ``EE)``, tabs stripped with ``<<-``), reading the rest of that line as
        commands; dash reads on to the delimiter alone. Such a line is a syntax error
        here (asked): found trying the gate as a worker, ``echo $(cat <<'E'`` then
        ``E)``, ``grep -r SECRET ../..``, ``E``, ``)`` ran the grep, printing the lead's
        token, allowed as a ``cat`` whose body ran to the second ``E``. So is a ``$( )``
        that ends before the newline its here-document's body follows (``$(cat <<E)``):
        bash reads the next lines as the body, dash as commands."""
        s = self.s
        for redir, delim, strip in self.pending:
            lines: list[str] = []
            while self.i < len(s):
                line = self._body_line(joined=not redir.target.quoted)
                text = line.lstrip("\t") if strip else line
                if text == delim:
                    break
                if self.until_paren and text.startswith(delim) and ")" in text[len(delim) :]:
                    raise ShellSyntaxError(f"here-document in $( ... ) ending at {line!r}")
                lines.append(line)
            redir.heredoc = "\n".join(lines)
            if not redir.target.quoted:  # an unquoted delimiter: the body is expanded
                redir.subs = _body_subs(redir.heredoc)
        self.pending = []

    def _body_line(self, *, joined: bool) -> str:
        """The here-document body's next line, from ``self.i``; in a body that is
        expanded (``joined``) with its line continuations removed, as bash reads it
        before it looks for the delimiter: found trying the gate as a worker, a body
        line ``E\\`` then ``ND`` ended a body delimited by ``END``, and the next line
        ran as a command (it wrote the lead's ``a.txt``, allowed as the body of a
        ``cat``)."""
        s, line = self.s, ""
        while True:
            end = s.find("\n", self.i)
            line += s[self.i :] if end < 0 else s[self.i : end]
            self.i = len(s) if end < 0 else end + 1
            if end < 0 or not joined or (len(line) - len(line.rstrip("\\"))) % 2 == 0:
                return line
            line = line[:-1]

    # -- words -----------------------------------------------------------------------
    def _words(self) -> list[Word]:
        """The next word, or the words its brace expansion makes (bash expands no
        brace in an assignment before the command: ``a={x,y} cmd``)."""
        word, items = self._scan_word()
        if items is None or (_ASSIGNMENT.match(word.text) and self._in_prefix()):
            return [word]
        words = expand_items(items)
        if words is None:  # too many words to spell out: what it names is not known
            return [Word(word.text, True, word.quoted, word.subs, word.glob)]
        star = any(c in _GLOB for c, bare in items if bare)
        out = []
        for k, chars in enumerate(words):
            text, dynamic = tilde_after_braces(chars)
            out.append(Word(text, word.dynamic or dynamic, word.quoted,
                            word.subs if k == 0 else (), star))  # fmt: skip
        return out

    def _word(self) -> Word:
        """One word (a redirection's target): a brace expansion into several words is
        bash's "ambiguous redirect", its target not known."""
        word, items = self._scan_word()
        if items is None:
            return word
        words = expand_items(items)
        if words is None or len(words) != 1:
            return Word(word.text, True, word.quoted, word.subs, word.glob)
        text, dynamic = tilde_after_braces(words[0])
        return Word(text, word.dynamic or dynamic, word.quoted, word.subs, word.glob)

    def _in_prefix(self) -> bool:
        """Whether the word being read comes before the command's name (only
        assignments and redirections since the last operator)."""
        for token in reversed(self.tokens):
            if isinstance(token, Op):
                return True
            if isinstance(token, Word) and not _ASSIGNMENT.match(token.text):
                return False
        return True

    def _scan_word(self, *, tilde: bool = True) -> tuple[Word, list[tuple[str, bool]] | None]:
        """The word at ``self.i``, and its characters with whether each is unquoted
        when it has a brace expansion to make (else None)."""
        s, n = self.s, len(self.s)
        out: list[str] = []
        dynamic = quoted = glob = False
        brace = 0  # 1: saw an unquoted "{", 2: and then "," or ".." (a brace expansion)
        bare: set[int] = set()  # indexes in ``out`` of unquoted "{", "," and "}"
        subs: list[str] = []
        start = self.i
        dynamic = tilde and self._tilde(out)
        while self.i < n:
            c = s[self.i]
            if c in _META:
                action = self._meta_in_word(c, start, out, subs, quoted)
                if action == "stop":
                    break
                if action == "redir":
                    return self._word_after_redir(), None
                dynamic = True
                continue
            if c == "\\":
                if s.startswith("\n", self.i + 1):
                    self.i += 2
                    continue
                out.append(s[self.i + 1 : self.i + 2])
                quoted = True
                self.i += 2
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("unterminated single quote")
                out.append(s[self.i + 1 : end])
                quoted = True
                self.i = end + 1
            elif c == '"':
                quoted = True
                self.i += 1
                dynamic |= self._double_quoted(out, subs)
            elif c == "$":
                dynamic |= self._dollar(out, subs)
                quoted = quoted or s.startswith("'", self.i - 1)
            elif c == "`":
                subs.append(self._backquote())
                out.append("`...`")
                dynamic = True
            else:
                dynamic |= bare_char(c, out, bare)
                self.i += 1
                brace = brace_state(brace, c, s.startswith(".", self._joined(self.i)))
                glob |= c in _GLOB or brace == 3
        word = Word("".join(out), dynamic, quoted, tuple(subs), glob)
        if brace != 3:
            return word, None
        return word, [(ch, k in bare) for k, part in enumerate(out) for ch in part]

    def _tilde(self, out: list[str]) -> bool:
        """Expand a leading ``~`` / ``~user`` of a word into ``out``; True (not known
        here) for the directory stack's ``~+``, ``~-``, ``~N``: the shell's cwd, the
        previous one, a ``pushd`` entry, written as the variable bash takes each from
        (:func:`~exomonad.policy.shell_tilde.tilde_text`), which the rest of the policy
        knows: ``~+/../..`` is ``$PWD/../..``, the project (found trying the gate as a
        worker: ``cat ~+/../../.e*/l*n`` printed the lead's token, allowed: ``~+`` was
        taken for a directory in the worktree)."""
        s, n = self.s, len(self.s)
        if s.startswith("~", self.i):
            end, chars = self.i, []
            while (
                (end := self._joined(end)) < n and s[end] not in _META and s[end] not in "/'\"\\$`"
            ):
                chars.append(s[end])
                end += 1
            prefix = "".join(chars)
            if "{" in prefix:  # bash expands the braces first: shell_tilde.tilde_after_braces
                return False
            if end < n and s[end] in "'\"\\$`":
                # quoted, or an expansion, before the first slash: no tilde-prefix to
                # bash (``~""/..`` is a directory ``~``: found trying the gate as a
                # worker, ``mkdir '~'; cat ~""/../../../.e*/l*`` printed the lead's token,
                # allowed as a read of ``/.e*/l*``)
                return False
            self.i = end
            text, dynamic = tilde_text(prefix)
            out.append(text)
            return dynamic
        return False

    def _meta_in_word(
        self, c: str, start: int, out: list[str], subs: list[str], quoted: bool
    ) -> str:
        """A metacharacter inside a word: ``stop`` it, a ``redir`` (``2>``), or ``sub``."""
        s = self.s
        ahead, ends = self._glued(self.i, 2)
        if c in "<>" and ahead[1:] == "(":  # process substitution
            subs.append(self._paren_sub(ends[1]))
            out.append("<process substitution>")
            return "sub"
        if c == "(" and out and out[-1] in _EXTGLOB:
            # with extglob on (a line before, a login shell's profile) a pattern
            # (``!(x #)``: a word, its ``#`` no comment), else a negated subshell (or,
            # after a redirection, ``> ?(x #)``, a subshell): found trying the gate as a
            # worker, ``shopt -s extglob`` then ``!(x #) ; grep -r SECRET ../..`` and
            # ``)`` ran the grep, allowed as a subshell running ``x``
            raise ShellSyntaxError(f"'{out[-1]}(' is a pattern where extglob is on")
        if c == "(" and out and "".join(out).endswith("=") and not quoted:
            subs.append(self._paren_sub(self.i + 1))  # arr=(...) array assignment
            return "sub"
        number = s[start : self.i].replace("\\\n", "")  # ``2\\`` then ``>x``: ``2>x``
        if c in "<>" and self.i > start and is_number(number):
            self._redir(int(number))
            return "redir"
        if c in "<>" and _NAMED_FD.fullmatch(number):
            # ``{fd}>x``: bash opens x on a descriptor it picks (10 on) and sets fd, and
            # ``{fd}`` is no word: found trying the gate as a worker, ``sort -o
            # {fd}>/dev/null ../../a.txt p.txt`` wrote the lead's a.txt, allowed as a
            # ``sort -o {fd}`` (a file in the worktree) reading ``../../a.txt``
            self._redir(NAMED_FD)
            return "redir"
        return "stop"

    def _word_after_redir(self) -> Word:
        """``2>x`` was a redirection, not a word: hand back the next real word or op."""
        while self.i < len(self.s) and self.s[self.i] in " \t":
            self.i += 1
        return Word("")  # placeholder, dropped by the caller below

    def _paren_sub(self, start: int) -> str:
        """Lex a ``$( ... )`` body starting at ``start``; return its source text."""
        end = self.ends.get(start - 1)
        if end is None:
            end = _Lexer(self.s, start, until_paren=True, ends=self.ends).run()
            self.ends[start - 1] = end
        self.i = end + 1
        return self.s[start:end]


def _body_subs(body: str) -> tuple[str, ...]:
    """Command substitutions in an expanded here-document body (they run)."""
    subs: list[str] = []
    i = 0
    while i < len(body):
        if body[i] == "\\":
            i += 2
        elif body.startswith("$((", i):
            i += 3
        elif body.startswith("$(", i) or body[i] == "`":
            lexer = _Lexer(body, i)
            if body[i] == "`":
                subs.append(lexer._backquote())
            else:
                subs.append(lexer._paren_sub(i + 2))
            i = lexer.i
        else:
            i += 1
    return tuple(subs)


def lex(src: str) -> list[Token]:
    """Tokenise ``src``; raise :class:`ShellSyntaxError` if a quote or ``$(`` never closes."""
    lexer = _Lexer(src)
    lexer.run()
    return [
        t
        for t in lexer.tokens
        if not (
            isinstance(t, Word) and t.text == "" and not t.quoted and not t.dynamic and not t.subs
        )
    ]
