"""Split a shell script into the simple commands it may run, tracking the working directory.

The parse is deliberately flat and conservative: every command of an ``&&``/``||``/``;``/
``|`` chain is assumed to run; ``if``/``while``/``for``/``case`` keywords are stepped over
so the commands inside them are seen; ``( ... )`` scopes ``cd``; command substitutions
(``$(...)``, backquotes, ``<(...)``, unquoted here-document bodies) are parsed recursively
and reported *before* the command that uses them, with the working directory they start in.

>>> [(c.argv, c.cwd) for c in parse("cd x && FOO=1 git push; (cd /tmp; ls)", "/w")]
[(('git', 'push'), '/w/x'), (('ls',), '/tmp')]
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left
from dataclasses import dataclass, field, replace

from exomonad.policy.shell_env import is_within, nested_repo
from exomonad.policy.shell_lex import Op, Redir, ShellSyntaxError, Word, lex
from exomonad.policy.shell_paths import resolve_path

__all__ = [
    "MAX_DEPTH",
    "SimpleCommand",
    "is_assignment",
    "parse",
    "parse_tracking",
]

#: Deepest nesting of substitutions / ``sh -c`` the classifier follows before giving up.
MAX_DEPTH = 8

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
_SKIP_WORDS = frozenset(
    {"if", "then", "elif", "else", "do", "while", "until", "!", "{", "}", "fi", "done", "esac"}
)
_OPENERS = frozenset({"if", "while", "until", "{", "for", "select", "case"})
_CLOSERS = frozenset({"}", "fi", "done", "esac"})
_NESTING = _OPENERS | _CLOSERS
_SEPARATORS = frozenset({";", "\n", "&", "&&", "||", ";;", ";&", ";;&", "|", "|&"})
_CASE_ENDS = frozenset({";;", ";&", ";;&"})
#: Redirections of a command's output.
_OUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})
#: How the lexer writes a process substitution (``<(cmd)``, ``>(cmd)``) in a word.
_PROCESS_SUB = "<process substitution>"


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


#: Builtins that may set a variable whose name is only known when they run
#: (``declare "${v}PATH=.."``, ``read "$v"``), and ``printf -v``.
_SETTERS = frozenset(
    {"declare", "typeset", "export", "readonly", "local", "read", "mapfile", "readarray",
     "getopts"}
)  # fmt: skip
#: Builtins that run text as shell code: what it sets is not seen.
_EVALS = frozenset({"eval", "source", "."})


def _may_set_cdpath(words: list[Word]) -> bool:
    """Whether a command of these words may set ``CDPATH``: it names it (an assignment,
    an argument, a loop variable, an expansion such as ``${CDPATH:=..}``), runs text as
    code, or has a builtin among them that may set a variable named at run time."""
    texts = [w.text for w in words]
    if any("CDPATH" in t for t in texts) or any(t in _EVALS for t in texts):
        return True
    printf_v = "printf" in texts and any(t.startswith("-v") for t in texts)
    setter = printf_v or any(t in _SETTERS for t in texts)
    return setter and any(w.dynamic or "$" in w.text or "`" in w.text for w in words)


def _cdpath_searched(operand: str) -> bool:
    """Whether ``cd`` looks ``operand`` up in ``$CDPATH`` (bash: unless it starts with
    ``/``, ``./`` or ``../``, or is ``.``, ``..`` or ``-``)."""
    return not (
        operand.startswith(("/", "./", "../")) or operand in (".", "..", "-") or not operand
    )


def _chdir(cwd: str | None, args: list[Word], cdpath: bool, top: str | None) -> str | None:
    operands = [w for w in args if not (w.text.startswith("-") and len(w.text) > 1)]
    if not operands:
        return os.path.expanduser("~")
    if operands[0].text == "-" or (cdpath and _cdpath_searched(operands[0].text)):
        return None
    if top is not None and _to_toplevel(operands[0]) and is_within(cwd, top):
        return None if cwd != top and cwd is not None and nested_repo(cwd, top) else top
    return resolve_path(cwd, operands[0], logical=True)  # bash's cd takes `..` off as text


def _to_toplevel(word: Word) -> bool:
    """``cd "$(git rev-parse --show-toplevel)"`` (agents' habit), nothing else."""
    return word.text == "$(git rev-parse --show-toplevel)" or (
        word.text == "`...`" and word.subs == ("git rev-parse --show-toplevel",)
    )


class _Walker:
    def __init__(self, cwd: str | None, depth: int, cdpath: bool = False,
                 top: str | None = None, captured: bool = False) -> None:  # fmt: skip
        if depth > MAX_DEPTH:
            raise ShellSyntaxError("shell nesting too deep")
        self.cwd = cwd
        self.depth = depth
        #: CDPATH may be set (by the command line so far, or by whoever runs it).
        self.cdpath = cdpath
        self.top = top
        #: A ``cd`` was followed that CDPATH would have redirected.
        self.searched = False
        self.stack: list[str | None] = []
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
            tok = tokens[i]
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
                    self._open()
                    self.stack.append(self.cwd)
            elif tok.text == ")":
                self._finish(piped_out=False)
                if not self.stack:
                    raise ShellSyntaxError("unexpected ')'")
                self.cwd = self.stack.pop()
                self._close()
            i += 1
        self._finish(piped_out=False)
        if self.stack:
            raise ShellSyntaxError("unclosed '('")
        return self._linked()

    def _open(self) -> None:
        """A group begins (a keyword or ``(``); one read down a pipe passes it on."""
        if self.piped_in and not self.words:
            self._send(self.feeding, None)
        self.groups.append((len(self.out), self.function))
        self.function = False

    def _close(self) -> None:
        if self.groups:
            self.closed.append(self.groups.pop())

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
                self._open()
            else:
                self._close()
        if not self.words and not word.quoted and word.text in _SKIP_WORDS:
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

    def _subs(self, subs: tuple[str, ...], captured: bool = False) -> None:
        for sub in subs:
            walker = _Walker(self.cwd, self.depth + 1, self.cdpath, self.top, captured)
            self.out.extend(walker.run(sub))
            self.searched |= walker.searched
            self.cdpath |= walker.cdpath

    def _finish(self, *, piped_out: bool, background: bool = False) -> None:
        words, redirs = self.words, self.redirs
        self.words, self.redirs = [], []
        self.cdpath = self.cdpath or _may_set_cdpath(words)
        for w in words:
            self._subs(w.subs, _PROCESS_SUB in w.text)
        for r in redirs:
            self._subs((*r.target.subs, *r.subs), _PROCESS_SUB in r.target.text)
        cmd = SimpleCommand(
            tuple(words),
            tuple(redirs),
            self.cwd,
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
        )
        if self.closed:
            self._settle(words, redirs, piped_out)
        reader = self._kept(cmd, piped_out or background)
        if self.piped_in:  # what the pipe carries reaches this command
            self._send(self.feeding, len(self.out) if reader and cmd.command_words else None)
        if reader:
            if piped_out and not self.captured:
                self.feeding.append(len(self.out))
            elif cmd.grouped and not self.captured:
                self.in_group.append(len(self.out))
            self.out.append(cmd)
        elif background:  # `( ... ) &`, `{ ...; } &`, `cd x &`: mark the background
            self.out.append(SimpleCommand((), (), self.cwd, background=True))

    def _kept(self, cmd: SimpleCommand, apart: bool) -> bool:
        """Whether ``cmd`` is one to report; follows ``cd`` unless it runs ``apart``
        (in a pipeline or in the background: a subshell)."""
        argv = cmd.command_words
        if not argv:
            return bool(cmd.redirs or cmd.words)  # assignments / bare redirections (> file)
        name = argv[0].text
        if name in ("cd", "pushd", "popd") and not argv[0].quoted:
            if not (apart or self.piped_in):
                args = list(argv[1:])
                self.cwd = (None if name == "popd"
                            else _chdir(self.cwd, args, self.cdpath, self.top))  # fmt: skip
                self.searched |= any(_cdpath_searched(w.text) for w in args[:1])
            return False
        return True


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
) -> tuple[list[SimpleCommand], bool]:
    """:func:`parse`, and whether ``CDPATH`` may be set once ``src`` ran (``cdpath``:
    it may be before). ``cd NAME`` looks NAME up in ``$CDPATH`` first, so where CDPATH
    may be set (anywhere in ``src``: a function defined before it is set runs after),
    such a ``cd`` leaves the directory unknown. ``top``: the agent's worktree, where
    ``cd "$(git rev-parse --show-toplevel)"`` goes from inside it."""
    walker = _Walker(cwd, depth, cdpath, top)
    out = walker.run(src)
    if walker.cdpath and walker.searched and not cdpath:
        out = _Walker(cwd, depth, True, top).run(src)
    return out, walker.cdpath
