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
(:data:`DATA_STDIN`: ``cat > notes.md <<EOF`` may mention ``.exomonad``).

>>> from exomonad.policy.shell_parse import SimpleCommand

#: Programs whose ``-c STRING`` (or stdin) is a shell script.
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "mksh", "yash"})
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
from exomonad.policy.shell_parse import SimpleCommand

__all__ = ["DATA_STDIN", "SHELLS", "stdin_as_words"]

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


def stdin_as_words(cmd: SimpleCommand, name: str, cwd: str | None) -> list[Action]:
    """``cmd``'s here-document (or here-string) as a word of a command ``name`` runs in
    ``cwd``, and the credential stores it names as reads; none when it has none, or
    ``name`` reads its stdin as data only."""
    body = cmd.stdin_script
    if body is None or name in DATA_STDIN or name in SHELLS or name in (".", "source"):
        return []
    if name in _SCRIPT_OPERAND and not any(w.text in _STDIN_NAMES for w in cmd.words):
        return []
    home = os.path.expanduser("~")
    return [
        Shell((name, f"<<{body.translate(_NOT_GLOBS)}"), cwd),
        *(ReadFile(p) for p in named_secrets(body, home, run_time=True)),
    ]
