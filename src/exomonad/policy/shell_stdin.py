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
(:data:`DATA_STDIN`: ``cat > notes.md <<EOF`` may mention ``.exomonad``) and what it
prints reaches no other command (:func:`passes_on`: ``cat <<< PATH | xargs cat`` and
``tr``/``sed`` into ``while read f`` printed the token, allowed), or git reads the
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

from exomonad.policy.actions import Action, ReadFile, Shell
from exomonad.policy.credentials import named_secrets
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_parse import SimpleCommand

__all__ = ["DATA_STDIN", "OUT_OPS", "SHELLS", "passes_on", "stdin_as_words", "to_plain_file"]

#: Programs whose ``-c STRING`` (or stdin) is a shell script.
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "mksh", "yash"})

#: Programs that read stdin only as data (text to print, store, filter, hash or send as
#: a message), never as instructions or arguments.
DATA_STDIN = frozenset(
    {"cat", "tee", "tac", "nl", "head", "tail", "sort", "uniq", "wc", "tr", "cut", "paste",
     "fold", "fmt", "column", "rev", "expand", "unexpand", "pr", "base64", "base32",
     "basenc", "xxd", "od", "hexdump", "gzip", "gunzip", "bzip2", "xz", "zstd", "md5sum",
     "sha1sum", "sha256sum", "sha512sum", "cksum", "b2sum", "grep", "egrep", "fgrep", "rg",
     "jq", "yq", "cmp", "comm", "iconv", "less", "more", "git", "gh", "hub", "true",
     "false", "wl-copy", "xclip", "xsel", "pbcopy"}
)  # fmt: skip
#: Programs whose script may come from stdin by an operand (``sed -f -``, ``awk -f
#: /dev/stdin``); their stdin is data otherwise.
_SCRIPT_OPERAND = frozenset({"sed", "gsed", "awk", "gawk", "mawk", "nawk"})
_STDIN_NAMES = ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")
#: The body is text, as a quoted ``-c`` program is, not a glob: ``2*3``, ``**kwargs`` or
#: ``[a for a in x]`` match no file (a program's own globbing is not followed here, nor
#: in a ``-c`` program).
_NOT_GLOBS = str.maketrans("*?[]", "    ")
#: How a word names a process substitution (``<(cmd)``, ``>(cmd)``): see shell_lex.
_PROCESS_SUB = "<process substitution>"
#: Redirections of a command's output.
OUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})
#: Options by which a data program reads the files its stdin names.
_NAMES_FROM = ("--stdin-paths", "--pathspec-from-file", "--files0-from", "--files-from")
#: What a compound command given a here-string is shown as.
_COMPOUND = "{ ...; }"


def stdin_as_words(
    cmd: SimpleCommand, name: str | None, cwd: str | None, exec_out: bool = False
) -> list[Action]:
    """``cmd``'s here-document (or here-string) as a word of a command ``name`` runs in
    ``cwd``, and the credential stores it names as reads; none when it has none, or
    ``name`` reads its stdin as data only and what it prints reaches no other command
    (:func:`passes_on`; ``exec_out``: an earlier ``exec`` sent the line's output
    elsewhere). ``name`` None: ``cmd`` has no words, its here-string is a
    compound command's (``while read f; do ...; done <<< X``, ``{ ...; } <<< X``, a
    function body): any command inside may read it into a variable."""
    body = cmd.stdin_script
    if body is None or name in SHELLS or name in (".", "source"):
        return []
    data = name in DATA_STDIN or (
        name in _SCRIPT_OPERAND and not any(w.text in _STDIN_NAMES for w in cmd.words)
    )
    if data and not passes_on(cmd, exec_out) and not _names_on_stdin(cmd):
        return []
    home = os.path.expanduser("~")
    return [
        Shell((name or _COMPOUND, f"<<{body.translate(_NOT_GLOBS)}"), cwd),
        *(ReadFile(p) for p in named_secrets(body, home, run_time=True)),
    ]


def passes_on(cmd: SimpleCommand, exec_out: bool = False) -> bool:
    """Whether what ``cmd`` prints may reach another command of the line, which may
    take it as arguments or variables (``cat <<< PATH | xargs cat``, ``tr``, ``sed``,
    ``{ cat <<< PATH; } | while read f``, ``"$(cat <<< PATH)"``): its output goes down
    a pipe or into a substitution, or it is inside a group, a loop or ``if`` (whose
    output may); not when its output goes to a file (``cat > notes.md <<EOF``). A
    process substitution among its words (``tee >(xargs cat)``), an output sent to a
    descriptor, a device or a computed path (``>&3``, ``> /dev/stdout``), or an earlier
    ``exec`` that did so to the line's output (``exec > >(xargs cat)``: ``exec_out``)
    pass it on as well.

    >>> from exomonad.policy.shell_parse import parse
    >>> [passes_on(c) for c in parse("cat <<< x > notes.md; cat <<< x | wc; cat <<< y", "/w")]
    [False, True, False, False]
    """
    if any(w.text == _PROCESS_SUB for w in (*cmd.words, *(r.target for r in cmd.redirs))):
        return True
    out = [r for r in cmd.redirs if r.fd in (None, 1) and r.op in OUT_OPS]
    if out:
        return not to_plain_file(out[-1].target)
    return cmd.piped_out or cmd.grouped or exec_out


def to_plain_file(target: Word) -> bool:
    """A redirection's target is a plain file, known now: not a device, a descriptor,
    a process substitution or a path the shell computes."""
    text = target.text
    return not (target.dynamic or target.glob or text.isdigit() or text == "-"
                or text.startswith(("/dev/", "/proc/")))  # fmt: skip


def _names_on_stdin(cmd: SimpleCommand) -> bool:
    """A data program told to read the files its stdin names (``git hash-object -w
    --stdin-paths <<< PATH`` stored the token for ``git cat-file`` to print; ``wc`` and
    ``sort --files0-from=-``, ``git add --pathspec-from-file=-``)."""
    return any(w.text.startswith(_NAMES_FROM) for w in cmd.words)
