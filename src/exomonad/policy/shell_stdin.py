"""A here-document or here-string a program may read as instructions, judged by its
words as a command line's are.

Shells run theirs as scripts (judged as such). Any other program given one reads it
as data or as code, and only the program knows which: ``python3 - <<EOF`` and ``ruby``,
``php`` or ``node`` run it, ``xargs cat <<< PATH`` turns it into arguments, ``sqlite3
<<< "select readfile(...)"``, ``ed``/``ex`` (``r FILE``) and ``sed -f -`` obey it.
Found probing: each of those read ``.exomonad/lead.token``, allowed, while the same
code given with ``-c``/``-e`` was refused. So the body counts as one more word of the
command (its mentions of the state dir, ``$EXOMONAD_DIR``, a credential store are
refused as an argument's are; read as code, a store's name counts wherever it is),
unless the program only ever reads stdin as data
(:mod:`~.shell_stdin_data`: ``cat > notes.md <<EOF`` may mention ``.exomonad``) and what it
prints reaches no other command but data programs that pass it no further
(:func:`passes_on`: ``cat <<< PATH | xargs cat`` and ``tr``/``sed`` into ``while read
f`` printed the token, allowed; ``cat <<EOF | git commit -F -``, ``| tee notes.md`` or
``{ ...; cat <<EOF; } > README.md`` may mention a credential store), or git reads the
files it names (``git hash-object -w --stdin-paths``). A compound command's here-string
(``while read f; do cat "$f"; done <<< PATH``, ``{ read f; ...; }``, ``( ... )``,
``if``, a function body) reaches every command inside, so it is judged by its words
too (each printed the token, allowed).

>>> from exomonad.policy.shell_parse import SimpleCommand
>>> from exomonad.policy.shell_lex import Word
>>> cmd = SimpleCommand((Word("python3"), Word("-")), stdin_script="print(1)\\n")
>>> stdin_as_words(cmd, "python3", "/w")
[Shell(argv=('python3', '<<print(1)\\n'), cwd='/w', privileged=False, stdin=None)]
>>> stdin_as_words(SimpleCommand((Word("cat"),), stdin_script="x"), "cat", "/w")
[]
"""

from __future__ import annotations

import os
import posixpath

from exomonad.policy.actions import Action, ReadFile, Shell, Unknown
from exomonad.policy.credentials import named_secrets
from exomonad.policy.shell_env import ShellEnv
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_parse import SimpleCommand
from exomonad.policy.shell_paths import resolve_path
from exomonad.policy.shell_stdin_data import (
    PROCESS_SUB,
    STDIN_NAMES,
    data_only,
    plainly_a_file,
    stdin_program_escapes,
)

__all__ = [
    "OUT_OPS",
    "SHELLS",
    "note_exec",
    "passes_on",
    "stdin_as_words",
    "to_plain_file",
]

#: Programs whose ``-c STRING`` (or stdin) is a shell script.
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "mksh", "yash"})

#: Interpreters: their stdin is data to the script file they run (what a script does
#: with it is the script's business: docs/guarantees.md), code when they run none.
_INTERPRETERS = frozenset(
    {"python", "python2", "python3", "node", "nodejs", "ruby", "perl", "php", "bun", "lua"}
)
#: Data programs that write the files their operands name (``tee /dev/fd/3``).
_WRITE_OPERANDS = frozenset({"tee", "sort", "uniq"})
#: The body is text, as a quoted ``-c`` program is, not a glob: ``2*3``, ``**kwargs`` or
#: ``[a for a in x]`` match no file (a program's own globbing is not followed here, nor
#: in a ``-c`` program).
_NOT_GLOBS = str.maketrans("*?[]", "    ")
#: Readers of stdin into variables (None: a compound command, whose ``read`` may).
_INTO_VARIABLES = frozenset({None, "read", "mapfile", "readarray"})
#: Redirections of a command's output.
OUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})
#: How many programs down a pipeline a here-string's data is followed.
_LONGEST_PIPE = 32
#: What a compound command given a here-string is shown as.
_COMPOUND = "{ ...; }"


def stdin_as_words(
    cmd: SimpleCommand,
    name: str | None,
    cwd: str | None,
    exec_out: bool = False,
    links: bool = False,
) -> list[Action]:
    """``cmd``'s here-document (or here-string) as a word of a command ``name`` runs in
    ``cwd``, and the credential stores it names as reads; none when it has none, or
    ``name`` reads its stdin as data only and what it prints reaches no other command
    (:func:`passes_on`; ``exec_out``: an earlier ``exec`` sent the line's output
    elsewhere; ``links``: an earlier command of the line may have made links, so a
    script file's name may lead to ``/dev/stdin``). ``name`` None: ``cmd`` has no
    words, its here-string is a compound command's (``while read f; do ...; done <<<
    X``, ``{ ...; } <<< X``, a function body): any command inside may read it into a
    variable."""
    body = cmd.stdin_script
    if body is None or name in SHELLS or name in (".", "source"):
        return []
    if data_only(cmd, name, links) and not passes_on(cmd, exec_out, links):
        return []
    home = os.path.expanduser("~")
    # what read, mapfile or a loop's read stores may be expanded unquoted later, and
    # globbed then: its globs are read where they point (found reviewing: `read f <<<
    # ../../.e*/l*n; cat $f` printed the token)
    stored = [ReadFile(resolve_path(cwd, t)) for t in body.split()
              if any(c in t for c in "*?[")] if name in _INTO_VARIABLES else []  # fmt: skip
    # sed's or awk's program from stdin is judged as the same program on the line is
    runs = stdin_program_escapes(cmd, name, links)
    return [
        *stored,
        *([Unknown(f"{name} program on stdin writes, reads or runs something")] if runs else []),
        Shell((name or _COMPOUND, f"<<{body.translate(_NOT_GLOBS)}"), cwd),
        *(ReadFile(p) for p in named_secrets(body, home, run_time=True)),
    ]


def passes_on(cmd: SimpleCommand, exec_out: bool = False, links: bool = False) -> bool:
    """Whether what ``cmd`` prints may reach another command of the line, which may
    take it as arguments or variables (``cat <<< PATH | xargs cat``, ``tr``, ``sed``,
    ``{ cat <<< PATH; } | while read f``, ``"$(cat <<< PATH)"``): its output (or that
    of a group, loop or ``if`` holding it) goes down a pipe or into a substitution,
    unless the program reading it there reads it as data and passes it on no further
    (:func:`_reads_as_data`: ``| git commit -F -``, ``| tee notes.md``, ``| python3
    gen.py``); a function body's always. Not when its output goes to a file (``cat >
    notes.md <<EOF``, ``{ ...; } > README.md``). A process substitution among its words
    (``tee >(xargs cat)``), an output sent to a descriptor, a device or a computed path
    (``>&3``, ``> /dev/stdout``), or an earlier ``exec`` that did so to the line's
    output (``exec > >(xargs cat)``: ``exec_out``) pass it on as well.

    >>> from exomonad.policy.shell_parse import parse
    >>> line = "cat <<< x > notes.md; cat <<< x | xargs wc; cat <<< y; cat <<< z | tee f | sh"
    >>> [passes_on(c) for c in parse(line, "/w")]
    [False, True, False, False, True, True, False]
    """
    for _ in range(_LONGEST_PIPE):
        if any(PROCESS_SUB in w.text for w in (*cmd.words, *(r.target for r in cmd.redirs))):
            return True
        out = [r for r in cmd.redirs if r.fd in (None, 1) and r.op in OUT_OPS]
        if out:
            return not to_plain_file(out[-1].target)
        if exec_out:
            return True
        if not cmd.piped_out:
            return False
        reader = cmd.receiver
        if reader is None or not _reads_as_data(reader, links):
            return True
        cmd = reader
    return True  # a longer pipeline is not followed


def _reads_as_data(cmd: SimpleCommand, links: bool) -> bool:
    """Whether ``cmd`` takes what a pipe gives it as data only: a data program
    (:func:`~.shell_stdin_data.data_only`) that writes no device (``tee /dev/fd/3``),
    or an interpreter running a script file (``python3 gen.py``; not ``python3 -c
    CODE`` nor ``-``)."""
    words = cmd.command_words
    if not words:
        return False
    name = posixpath.basename(words[0].text)
    args = words[1:]
    devices = [w for w in args if w.text.startswith(("/dev/", "/proc/"))
               and w.text != "/dev/null" and w.text not in STDIN_NAMES]  # fmt: skip
    if devices or any(PROCESS_SUB in w.text for w in args):
        return False
    if name in _INTERPRETERS:
        return (
            bool(args) and not args[0].text.startswith("-") and plainly_a_file(args[0], cmd, links)
        )
    if name in _WRITE_OPERANDS and not all(
        plainly_a_file(w, cmd, links) for w in args if not w.text.startswith("-")
    ):
        return False
    return data_only(cmd, name, links)


def to_plain_file(target: Word) -> bool:
    """A redirection's target is a plain file, known now: not a device (``/dev/null``,
    which no command reads, aside), a descriptor, a process substitution or a path the
    shell computes."""
    text = target.text
    return text == "/dev/null" or not (
        target.dynamic or target.glob or text.isdigit() or text == "-"
        or text.startswith(("/dev/", "/proc/")) or PROCESS_SUB in text
    )  # fmt: skip


def note_exec(words: list[Word], cmd: SimpleCommand, env: ShellEnv) -> None:
    """A bare ``exec`` with redirections moves the rest of the line's stdin or stdout."""
    if not words or words[0].text != "exec" or len(words) != 1:
        return
    if any(r.op in ("<", "<&", "<>", "<<", "<<<", "<<-") and r.fd in (None, 0)
           for r in cmd.redirs):  # fmt: skip
        env.stdin_redirected = True
    env.stdout_redirected |= any(r.op in OUT_OPS and not to_plain_file(r.target)
                                 for r in cmd.redirs)  # fmt: skip
