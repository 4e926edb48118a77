"""Split a shell script into the simple commands it may run, tracking the working directory.

The parse is deliberately flat and conservative: every command of an ``&&``/``||``/``;``/
``|`` chain is assumed to run; ``if``/``while``/``for``/``case`` keywords are stepped over
so the commands inside them are seen; ``( ... )`` scopes ``cd``; command substitutions
(``$(...)``, backquotes, ``<(...)``, unquoted here-document bodies) are parsed recursively
and reported *before* the command that uses them, with the working directory they start in.
A command a ``cd`` before it may or may not have moved is reported once for each directory
it may start in (:mod:`~exomonad.policy.shell_cd`: ``cd /tmp`` may fail).

>>> [(c.argv, c.cwd) for c in parse("cd x && FOO=1 git push; (cd /tmp; ls)", "/w")]
[(('git', 'push'), '/w/x'), (('ls',), '/tmp'), (('ls',), '/w/x'), (('ls',), '/w')]
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import replace

from exomonad.policy.shell_cd import (
    Dirs,
    cdpath_searched,
    changer,
    chdir,
    join,
    may_set_cdpath,
    move,
)
from exomonad.policy.shell_command import SimpleCommand, is_assignment
from exomonad.policy.shell_lex import (
    ARITH_CLOSE,
    ARITH_OPEN,
    Op,
    Redir,
    ShellSyntaxError,
    Word,
    lex,
)

__all__ = [
    "MAX_DEPTH",
    "SimpleCommand",
    "is_assignment",
    "parse",
    "parse_tracking",
]

#: Deepest nesting of substitutions / ``sh -c`` the classifier follows before giving up.
MAX_DEPTH = 8
#: How many more judgements than commands a line's other directories may cost; past
#: it each command's others are one unknown directory (20,000 ``cd a; cat x;`` took 8
#: times as long as the line without them).
_MOST_OTHERS = 64

_SKIP_WORDS = frozenset(
    {"if", "then", "elif", "else", "do", "while", "until", "!", "{", "}", "fi", "done", "esac"}
)
_OPENERS = frozenset({"if", "while", "until", "{", "for", "select", "case"})
_CLOSERS = frozenset({"}", "fi", "done", "esac"})
_NESTING = _OPENERS | _CLOSERS
_LOOPS = frozenset({"while", "until", "for", "select"})
#: :attr:`_Walker.scopes`: a subshell, whose ``cd`` no enclosing loop sees.
_SUBSHELL = -1
_SEPARATORS = frozenset({";", "\n", "&", "&&", "||", ";;", ";&", ";;&", "|", "|&"})
_CASE_ENDS = frozenset({";;", ";&", ";;&"})
#: Redirections of a command's output.
_OUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})
#: How the lexer writes a process substitution (``<(cmd)``, ``>(cmd)``) in a word.
_PROCESS_SUB = "<process substitution>"


class _Walker:
    def __init__(self, dirs: Dirs, depth: int, cdpath: bool = False, top: str | None = None,
                 captured: bool = False, moving: frozenset[int] = frozenset()) -> None:  # fmt: skip
        if depth > MAX_DEPTH:
            raise ShellSyntaxError("shell nesting too deep")
        #: Where the next command may start; where it may if a ``cd`` of the ``&&``
        #: chain being read failed (joined when the chain ends).
        self.dirs = dirs
        self.if_failed: Dirs = ()
        self.skippable = self.negated = False
        self.or_exit: Dirs | None = None
        #: The loops and function bodies (their first token) a ``cd`` runs in, any
        #: number of times: the last reading found them (``moved_in``), this one leaves
        #: the directory unknown in them and after them (``moving``).
        self.moving = moving
        self.moved_in: set[int] = set()
        self.moved = False
        self.scopes: list[int | None] = []
        self.at = 0
        self.depth = depth
        #: CDPATH may be set (by the command line so far, or by whoever runs it).
        self.cdpath = cdpath
        self.top = top
        #: A ``cd`` was followed that CDPATH would have redirected.
        self.searched = False
        self.stack: list[tuple[Dirs, Dirs]] = []
        self.out: list[SimpleCommand] = []
        self.words: list[Word] = []
        self.redirs: list[Redir] = []
        self.piped_in = False
        self.case_pattern = False
        self.nesting = 0
        #: A process substitution's commands: what they print another command reads
        #: (a ``$(...)``'s value is judged in the word that holds its text).
        self.captured = captured
        #: Where each open group (``{``, ``(``, a loop, ``if``, ``case``) began in
        #: ``out``, and whether it is a function's body; the groups just closed, whose
        #: output the redirections and operator after them send; a function header
        #: was read (the next group is its body).
        self.groups: list[tuple[int, bool]] = []
        self.closed: list[tuple[int, bool]] = []
        self.function = False
        #: Commands (indices in ``out``) whose output is their group's, not yet known
        #: where it goes; those whose output goes down the pipe being read, to the
        #: next command; where each piped one's output goes: the index of the command
        #: reading it, or None (not a simple command: it passes its input on).
        self.in_group: list[int] = []
        self.feeding: list[int] = []
        self.sent: dict[int, int | None] = {}

    def run(self, src: str) -> list[SimpleCommand]:
        tokens = lex(src)
        i = 0
        while i < len(tokens):
            tok, self.at = tokens[i], i
            if isinstance(tok, Word):
                self._word(tok)
            elif isinstance(tok, Redir):
                self.redirs.append(tok)
            elif self.case_pattern:
                if tok.text == ")":
                    self.case_pattern = False
                    self.words, self.redirs = [], []
            elif tok.text in _SEPARATORS:
                self._finish(piped_out=tok.text in ("|", "|&"), background=tok.text == "&")
                self.or_exit = self.dirs if tok.text == "||" else None  # `cd x || exit`
                if tok.text not in ("&&", "|", "|&"):  # the and-or list goes on through a
                    # pipe; where it ends, or at `||`, a cd in it may have failed
                    self.dirs, self.if_failed = join(self.dirs, self.if_failed), ()
                # after `p ||`, what follows may run with a cd between skipped
                self.skippable = tok.text == "||" or (
                    self.skippable and tok.text in ("&&", "|", "|&")
                )
                self.piped_in = tok.text in ("|", "|&")
                self.case_pattern = tok.text in _CASE_ENDS
            elif tok.text == "(":
                nxt = tokens[i + 1] if i + 1 < len(tokens) else None
                if _timed(self.words):  # `time ( ... )`: bash's keyword before a group
                    self.words = []
                if self.words or (isinstance(nxt, Op) and nxt.text == ")"):
                    # f() { ...; } (or `function f() ...`): a function definition header
                    if not (isinstance(nxt, Op) and nxt.text == ")"):
                        raise ShellSyntaxError("unexpected '('")
                    self.words, i, self.function = [], i + 1, True
                else:
                    self._open(subshell=True)
                    self.stack.append((self.dirs, self.if_failed))
                    self.if_failed = ()
            elif tok.text == ")":
                self._finish(piped_out=False)
                if not self.stack:
                    raise ShellSyntaxError("unexpected ')'")
                self.dirs, self.if_failed = self.stack.pop()
                self._close()
            i += 1
        self._finish(piped_out=False)
        if self.stack:
            raise ShellSyntaxError("unclosed '('")
        return self._linked()

    def _open(self, loop: bool = False, subshell: bool = False) -> None:
        """A group begins (a keyword or ``(``); one read down a pipe passes it on."""
        if self.piped_in and not self.words:
            self._send(self.feeding, None)
        self.groups.append((len(self.out), self.function))
        scope = self.at if loop or self.function else _SUBSHELL if subshell else None
        self.scopes.append(scope)
        if scope in self.moving:  # a cd runs in it any number of times
            self.dirs = join(self.dirs, (None,))
        self.function = False

    def _close(self) -> None:
        if self.groups:
            self.closed.append(self.groups.pop())
        if self.scopes:
            self.scopes.pop()

    def _send(self, indices: list[int], reader: int | None) -> None:
        for index in indices:
            self.sent[index] = reader
        indices.clear()

    def _settle(self, words: list[Word], redirs: list[Redir], piped_out: bool) -> None:
        """Where the output of the groups just closed goes, told by what follows them:
        a plain file (``{ ...; } > notes.md``), another command (``} | xargs``, ``>&3``,
        a function's body), or their own group's output (nothing)."""
        out = [r for r in redirs if r.fd in (None, 1) and r.op in _OUT_OPS]
        for start, function in self.closed:
            cut = bisect_left(self.in_group, start)  # in_group is in the order of out
            inside, self.in_group = self.in_group[cut:], self.in_group[:cut]
            if function or words or (out and not _plain_target(out[-1].target)):
                self._send(inside, None)
            elif out:
                pass  # a plain file: passed on to no command
            elif piped_out:
                self.feeding.extend(inside)
            elif self.groups:
                self.in_group.extend(inside)  # the enclosing group's output
        self.closed = []

    def _linked(self) -> list[SimpleCommand]:
        """``out`` with each command's receiver and piped output set (a reader after
        the command it reads: set from the last)."""
        self._send(self.feeding, None)
        final = list(self.out)
        for index in range(len(final) - 1, -1, -1):
            if index in self.sent:
                reader = self.sent[index]
                to = None if reader is None else final[reader]
                final[index] = replace(final[index], piped_out=True, receiver=to)
        return final

    def _word(self, word: Word) -> None:
        if word.text in (ARITH_OPEN, ARITH_CLOSE) and not word.quoted:
            self._arithmetic(word)
            return
        if self.words and self.words[-1].text == ARITH_CLOSE and not self.words[-1].quoted:
            raise ShellSyntaxError(f"a word after (( )): {word.text!r}")
        if self.case_pattern:
            if word.text == "esac" and not word.quoted:
                self.case_pattern = False
                self.nesting -= 1
                self._close()
            else:
                self._subs(word.subs)
            return
        if word.text in _OPENERS and not word.quoted and _timed(self.words):
            self.words = []  # `time { ...; }`: bash's keyword before a compound command
        if not self.words and not word.quoted and word.text in _NESTING:
            self.nesting += 1 if word.text in _OPENERS else -1
            if word.text in _OPENERS:
                self._open(loop=word.text in _LOOPS)
            else:
                self._close()
        if not self.words and not word.quoted and word.text in _SKIP_WORDS:
            self.negated |= word.text == "!"  # `! cd x && ...` goes on if it failed
            return
        if len(self.words) == 1 and self.words[0].text == "function" and not self.words[0].quoted:
            self.words = []  # `function NAME { ...; }`: the body follows as commands
            self.function = True
            return
        self.words.append(word)
        head = self.words[0]
        if head.text == "case" and not head.quoted and len(self.words) == 3 and word.text == "in":
            self._subs(self.words[1].subs)
            self.words, self.case_pattern = [], True

    def _arithmetic(self, word: Word) -> None:
        """An arithmetic command's ``((`` or ``))`` (:meth:`~.shell_lex._Lexer._arithmetic`):
        a command of its own where a command may start (after ``time``, or a function
        header too), a ``for`` loop's header after ``for`` (``for ((i=0; i<3; i++))``:
        the command ``(( i=0; i<3; i++ ))``, the body after it judged as a loop's);
        elsewhere (``echo ((1))``, a case pattern) bash's syntax error."""
        if word.text == ARITH_CLOSE:
            self.words.append(word)
            if _is_for(self.words[0]):  # its body follows: ``do``, ``{``, ``;``
                self.words = self.words[1:]
                self._finish(piped_out=False)
            return
        if _timed(self.words):
            self.words = []
        if self.case_pattern or (
            self.words and not (len(self.words) == 1 and _is_for(self.words[0]))
        ):
            raise ShellSyntaxError("(( where no command starts")
        self.function = False
        self.words.append(word)

    def _subs(self, subs: tuple[str, ...], captured: bool = False) -> None:
        for sub in subs:
            found, walker = _walk(sub, self.dirs, self.depth + 1, self.cdpath, self.top, captured)
            self.out.extend(found)
            self.searched |= walker.searched
            self.cdpath |= walker.cdpath

    def _finish(self, *, piped_out: bool, background: bool = False) -> None:
        words, redirs = self.words, self.redirs
        self.words, self.redirs = [], []
        self.cdpath = self.cdpath or may_set_cdpath(words)
        for w in words:
            self._subs(w.subs, _PROCESS_SUB in w.text)
        for r in redirs:
            self._subs((*r.target.subs, *r.subs), _PROCESS_SUB in r.target.text)
        cmd = SimpleCommand(
            tuple(words),
            tuple(redirs),
            self.dirs[0],
            self.piped_in,
            next(
                (
                    r.heredoc if r.heredoc is not None else r.target.text
                    for r in redirs
                    if r.op in ("<<", "<<-", "<<<")
                ),
                None,
            ),
            bool(self.stack) or self.nesting != 0,
            background,
            piped_out or self.captured,
            others=self.dirs[1:],
        )
        if self.closed:
            self._settle(words, redirs, piped_out)
        reader = self._kept(cmd, piped_out or background)
        self.negated = False
        if self.piped_in:  # what the pipe carries reaches this command
            self._send(self.feeding, len(self.out) if reader and cmd.command_words else None)
        if reader:
            if piped_out and not self.captured:
                self.feeding.append(len(self.out))
            elif cmd.grouped and not self.captured:
                self.in_group.append(len(self.out))
            self.out.append(cmd)
        elif background:  # `( ... ) &`, `{ ...; } &`, `cd x &`: mark the background
            self.out.append(SimpleCommand((), (), self.dirs[0], background=True))

    def _kept(self, cmd: SimpleCommand, apart: bool) -> bool:
        """Whether ``cmd`` is one to report (a ``cd``: only for its redirections); follows
        where it may move this shell (:mod:`~exomonad.policy.shell_cd`) unless it runs
        ``apart`` (in the background, or its output piped: a subshell)."""
        argv = cmd.command_words
        if not argv:
            return bool(cmd.redirs or cmd.words)  # assignments / bare redirections (> file)
        moved = move(argv, cmd.stdin_script)
        if self.or_exit is not None and argv[0].text in ("exit", "return") and not apart:
            self.dirs, self.if_failed = self.or_exit, ()  # the line goes on only if it held
        self.or_exit = None
        if moved is not False and not apart:
            self.moved = True
            for scope in reversed(self.scopes):  # the loops and functions it runs in
                if scope == _SUBSHELL:
                    break
                if scope is not None:
                    self.moved_in.add(scope)
            new: Dirs = (None,)
            if moved is not None:
                new = join(chdir(d, moved, self.cdpath, self.top) for d in self.dirs)
                self.searched |= bool(moved) and cdpath_searched(moved[0].text)
            if self.piped_in or self.skippable or self.negated:  # lastpipe, `p || cd x`
                self.dirs = join(new, self.dirs)
            else:
                self.dirs, self.if_failed = new, join(self.if_failed, self.dirs)
        found = changer(argv)
        return found is None or found[0] not in ("cd", "pushd", "popd") or bool(cmd.redirs)


def _is_for(word: Word) -> bool:
    return word.text == "for" and not word.quoted


def _timed(words: list[Word]) -> bool:
    """Whether ``words`` are bash's ``time`` keyword (``time``, ``time -p``) and so may
    precede a compound command (``{ time { true; }; cat <<< PATH; } | xargs cat`` was
    read as a group closed early and printed the token, allowed)."""
    texts = [w.text for w in words if not w.quoted]
    return (
        len(texts) == len(words)
        and bool(texts)
        and texts[0] == "time"
        and all(t in ("-p", "--") for t in texts[1:3])
        and len(texts) <= 3
    )


def _plain_target(target: Word) -> bool:
    """A redirection's target is a plain file, known now (as
    :func:`~exomonad.policy.shell_stdin.to_plain_file` tells)."""
    text = target.text
    return text == "/dev/null" or not (
        target.dynamic or target.glob or text.isdigit() or text == "-"
        or text.startswith(("/dev/", "/proc/")) or _PROCESS_SUB in text
    )  # fmt: skip


def parse(src: str, cwd: str | None, depth: int = 0) -> list[SimpleCommand]:
    """The simple commands ``src`` may run; raises :class:`ShellSyntaxError` if unparsable."""
    return parse_tracking(src, cwd, depth)[0]


def parse_tracking(
    src: str, cwd: str | None, depth: int = 0, cdpath: bool = False, top: str | None = None
) -> tuple[list[SimpleCommand], bool, bool]:
    """:func:`parse`, and whether ``CDPATH`` may be set once ``src`` ran (``cdpath``:
    it may be before). ``cd NAME`` looks NAME up in ``$CDPATH`` first, so where CDPATH
    may be set (anywhere in ``src``: a function defined before it is set runs after),
    such a ``cd`` leaves the directory unknown. ``top``: the agent's worktree, where
    ``cd "$(git rev-parse --show-toplevel)"`` goes from inside it. A command that may
    start in several directories is given once for each, the first as it was read, the
    others ``alternative``; and whether ``src`` may change this shell's directory."""
    out, walker = _walk(src, (cwd,), depth, cdpath, top)
    if walker.cdpath and walker.searched and not cdpath:
        out, _ = _walk(src, (cwd,), depth, True, top)
    few = sum(len(cmd.others) for cmd in out) <= _MOST_OTHERS + len(out)
    return [each for cmd in out for each in _each_dir(cmd, few)], walker.cdpath, walker.moved


def _walk(src: str, dirs: Dirs, depth: int, cdpath: bool, top: str | None,
          captured: bool = False) -> tuple[list[SimpleCommand], _Walker]:  # fmt: skip
    """``src``'s commands, read again when a ``cd`` runs in a loop or a function body:
    the directory is then unknown from there on."""
    walker = _Walker(dirs, depth, cdpath, top, captured)
    out = walker.run(src)
    if walker.moved_in:
        walker = _Walker(dirs, depth, cdpath, top, captured, frozenset(walker.moved_in))
        out = walker.run(src)
    return out, walker


def _each_dir(cmd: SimpleCommand, few: bool) -> list[SimpleCommand]:
    """``cmd`` in each directory it may start in; where the line has too many of them
    (:data:`_MOST_OTHERS`), in one nobody knows instead of the others."""
    others = cmd.others if few or not cmd.others else (None,)
    return [cmd, *(replace(cmd, cwd=d, others=(), alternative=True) for d in others)]
