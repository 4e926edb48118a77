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
import stat

from exomonad.policy.actions import Action, ReadFile, Shell
from exomonad.policy.credentials import named_secrets
from exomonad.policy.shell_env import ShellEnv
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_parse import SimpleCommand
from exomonad.policy.shell_paths import path_readings, resolve_path
from exomonad.policy.shell_scripts import awk_escapes
from exomonad.policy.shell_sed import escapes as sed_escapes

__all__ = [
    "DATA_STDIN",
    "OUT_OPS",
    "SHELLS",
    "note_exec",
    "passes_on",
    "stdin_as_words",
    "to_plain_file",
]

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
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})
#: Programs that run a file an option names as their program: its short letters (a
#: cluster holding one: ``-nf FILE``, ``-fFILE``) and long names (any prefix counts, as
#: GNU and git take an unambiguous one: ``--fi=FILE``). jq's ``-f`` takes its program
#: from its first operand, yq's ``load_str`` reads a file: each operand counts there.
_SCRIPT_FILE: dict[str, tuple[str, tuple[str, ...]]] = {
    **dict.fromkeys(("sed", "gsed"), ("f", ("file",))),
    **dict.fromkeys(_AWKS, ("fEi", ("file", "exec", "include"))),
    **dict.fromkeys(("jq", "gojq", "yq"), ("f", ("from-file",))),
}
_OPERANDS_TOO = frozenset({"jq", "gojq", "yq"})
#: Interpreters: their stdin is data to the script file they run (what a script does
#: with it is the script's business: docs/guarantees.md), code when they run none.
_INTERPRETERS = frozenset(
    {"python", "python2", "python3", "node", "nodejs", "ruby", "perl", "php", "bun", "lua"}
)
#: The git and gh commands whose stdin is data (a message, a patch, object names);
#: another (an alias: ``git -c alias.x='!xargs cat' x``, ``gh x``) may run a command
#: that reads it, and git's ``fast-import`` reads a file its stream names.
_GIT_DATA = frozenset(
    {"commit", "tag", "notes", "hash-object", "apply", "am", "interpret-trailers",
     "stripspace", "check-ignore", "check-attr", "cat-file", "mktree", "commit-tree",
     "update-index", "rev-list", "patch-id", "mailinfo", "mailsplit", "log", "diff"}
)  # fmt: skip
_GH_DATA = frozenset(
    {"pr", "issue", "release", "api", "gist", "repo", "label", "secret", "variable",
     "workflow", "project"}
)  # fmt: skip
_HUB_DATA = _GIT_DATA | _GH_DATA | {"pull-request"}
#: git's options before its command that take the next word as their value.
_GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"})
#: Data programs that write the files their operands name (``tee /dev/fd/3``).
_WRITE_OPERANDS = frozenset({"tee", "sort", "uniq"})
#: The body is text, as a quoted ``-c`` program is, not a glob: ``2*3``, ``**kwargs`` or
#: ``[a for a in x]`` match no file (a program's own globbing is not followed here, nor
#: in a ``-c`` program).
_NOT_GLOBS = str.maketrans("*?[]", "    ")
#: Readers of stdin into variables (None: a compound command, whose ``read`` may).
_INTO_VARIABLES = frozenset({None, "read", "mapfile", "readarray"})
#: How a word names a process substitution (``<(cmd)``, ``>(cmd)``): see shell_lex.
_PROCESS_SUB = "<process substitution>"
#: Redirections of a command's output.
OUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})
#: Options by which a data program reads the files its stdin names (any prefix counts:
#: git and GNU tools take an unambiguous one, ``--stdin-pa``, ``--fil``), and the
#: prefixes that are other options' whole names (git's exact ``--stdin``, ``--path``).
_NAMES_FROM = ("stdin-paths", "pathspec-from-file", "files0-from", "files-from", "filelist")
_WHOLE_NAMES = frozenset({"stdin", "path"})
#: Data programs' options that run a program on what they read (found probing: ``sort
#: -S 64K --compress-program=sh`` pipes its spilled chunks into sh, which ran a here-
#: document's lines; ``--com=python3`` too), by any prefix of their long name, and yq's
#: operators that evaluate data as an expression (``yq '.a|eval(.)'`` runs what stdin
#: holds, ``load_str`` in it reads a file).
_RUNS_PROGRAM = {"sort": ("compress-program",), "rg": ("pre",)}
_EVALUATES = ("eval", "load")
#: Checksum programs, whose ``-c``/``--check`` opens each file its stdin lists (and
#: says whether a guessed digest matches).
_CHECKSUMS = frozenset({"md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum",
                        "sha512sum", "b2sum", "cksum"})  # fmt: skip
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
    return [
        *stored,
        Shell((name or _COMPOUND, f"<<{body.translate(_NOT_GLOBS)}"), cwd),
        *(ReadFile(p) for p in named_secrets(body, home, run_time=True)),
    ]


def data_only(cmd: SimpleCommand, name: str | None, links: bool = False) -> bool:
    """Whether program ``name`` reads its stdin only as data: one of :data:`DATA_STDIN`
    (or sed, awk) not told to run its stdin as its program (``sed -f /dev/stdin``,
    ``--file=``, ``-f//dev/stdin``, ``-f /proc/thread-self/fd/0``, a glob, a name the
    shell computes, a link to a device: :func:`_program_file`) nor to read the files it
    names (:func:`_names_on_stdin`)."""
    if name in _SCRIPT_OPERAND:
        if any(w.text in _STDIN_NAMES for w in cmd.words) or _runs_its_input(cmd, name):
            return False
    elif name not in DATA_STDIN:
        return False
    if name in ("git", "hub", "gh"):
        known = {"git": _GIT_DATA, "gh": _GH_DATA}.get(name, _HUB_DATA)
        if _subcommand(cmd.command_words[1:]) not in known:
            return False
    if _runs_programs(cmd, name):
        return False
    return not _program_file(cmd, name, links) and not _names_on_stdin(cmd)


def _runs_programs(cmd: SimpleCommand, name: str | None) -> bool:
    """Whether data program ``name`` is told to run a program on what it reads
    (:data:`_RUNS_PROGRAM`, yq's :data:`_EVALUATES`), or, a checksum program, to open
    the files its input lists (``sha256sum -c``).

    >>> from exomonad.policy.shell_parse import parse
    >>> [_runs_programs(c, c.words[0].text) for c in parse(
    ...     "sort --com=sh; sort -u; yq '.a|eval(.)'; yq .a; sha256sum -c; sha256sum", "/")]
    [True, False, True, False, True, False]
    """
    args = cmd.command_words[1:]
    longs = [w.text[2:].partition("=")[0] for w in args if w.text.startswith("--")]
    if any(
        len(o) > 1 and n.startswith(o) for o in longs for n in _RUNS_PROGRAM.get(name or "", ())
    ):
        return True
    if name == "yq" and any(w.dynamic or any(e in w.text for e in _EVALUATES) for w in args):
        return True
    if name in _CHECKSUMS:
        return any(w.text == "--check" or (w.text[:1] == "-" != w.text[1:2] and "c" in w.text)
                   or (w.text.startswith("--ch") and "--check".startswith(w.text))
                   for w in args)  # fmt: skip
    return False


def _runs_its_input(cmd: SimpleCommand, name: str) -> bool:
    """Whether a sed or awk program may run or open what it reads: GNU sed's ``e``
    (``cat <<< CMD | sed e`` runs CMD), an awk ``getline < $0`` or ``system($0)``
    (:func:`~exomonad.policy.shell_sed.escapes`,
    :func:`~exomonad.policy.shell_scripts.awk_escapes`). sed's script is each ``-e``
    value, else its first operand (none with ``-f``); any awk operand is scanned (a
    file name matches nothing)."""
    args = list(cmd.command_words[1:])
    if name in _AWKS:
        return any(w.dynamic or awk_escapes(w.text) for w in args if not w.text.startswith("-"))
    scripts: list[Word | None] = []
    from_file = False
    for i, word in enumerate(args):
        text = word.text
        after = args[i + 1] if i + 1 < len(args) else None
        if text.startswith("--expression") or text in ("--e", "--ex", "--exp"):
            _, equals, value = text.partition("=")
            scripts.append(Word(value, word.dynamic) if equals else after)
        elif text.startswith("-") and not text.startswith("--") and "e" in text:
            rest = text[text.index("e") + 1 :]
            scripts.append(Word(rest, word.dynamic) if rest else after)
        from_file |= text.startswith("--f") or (text[:1] == "-" != text[1:2] and "f" in text)
    if not scripts and not from_file:
        scripts = [next((w for w in args if not w.text.startswith("-")), None)]
    return any(w is not None and (w.dynamic or sed_escapes(w.text)) for w in scripts)


def _subcommand(args: tuple[Word, ...]) -> str | None:
    """git's (or gh's) command among its words: the first that is not an option nor
    the value of one (``git -C x -c k=v commit``: ``commit``)."""
    skip = False
    for word in args:
        if skip:
            skip = False
        elif word.text in _GIT_VALUED:
            skip = True
        elif not word.text.startswith("-"):
            return None if word.dynamic else word.text
    return None


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
        if any(_PROCESS_SUB in w.text for w in (*cmd.words, *(r.target for r in cmd.redirs))):
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
    (:func:`data_only`) that writes no device (``tee /dev/fd/3``), or an interpreter
    running a script file (``python3 gen.py``; not ``python3 -c CODE`` nor ``-``)."""
    words = cmd.command_words
    if not words:
        return False
    name = posixpath.basename(words[0].text)
    args = words[1:]
    devices = [w for w in args if w.text.startswith(("/dev/", "/proc/"))
               and w.text != "/dev/null" and w.text not in _STDIN_NAMES]  # fmt: skip
    if devices or any(_PROCESS_SUB in w.text for w in args):
        return False
    if name in _INTERPRETERS:
        return bool(args) and not args[0].text.startswith("-") and _plain(args[0], cmd, links)
    if name in _WRITE_OPERANDS and not all(
        _plain(w, cmd, links) for w in args if not w.text.startswith("-")
    ):
        return False
    return data_only(cmd, name, links)


def _program_file(cmd: SimpleCommand, name: str | None, links: bool) -> bool:
    """Whether ``name`` (sed, awk, jq, yq) is told to run a file that is not plainly a
    file, ``-``, a device or a name the shell computes (``sed --file=/dev/stdin``,
    ``-f//dev/stdin``, ``-f /dev/./stdin``, ``awk -f /dev/st[d]in``, a link to
    ``/dev/stdin``): it may be its stdin, whose body is then its program. Any word
    that may be such an option counts (``-nf``, ``--fi=``: GNU takes a prefix); an
    awk ``-W`` option (``-W exec FILE``) too."""
    if name not in _SCRIPT_FILE:
        return False
    letters, longs = _SCRIPT_FILE[name]
    args = list(cmd.command_words[1:])
    named: list[Word | None] = []
    for i, word in enumerate(args):
        text = word.text
        after = args[i + 1] if i + 1 < len(args) else None
        if text.startswith("--") and len(text) > 2:
            option, equals, value = text[2:].partition("=")
            if any(long.startswith(option) for long in longs):
                named.append(
                    Word(value, word.dynamic, word.quoted, glob=word.glob) if equals else after
                )
        elif text.startswith("-") and len(text) > 1:
            if name in _AWKS and "W" in text:
                return True
            at = next((j for j, c in enumerate(text) if j and c in letters), None)
            if at is not None:
                rest = text[at + 1 :]
                named.append(
                    Word(rest, word.dynamic, word.quoted, glob=word.glob) if rest else after
                )
    if named and name in _OPERANDS_TOO:
        named.extend(w for w in args if not w.text.startswith("-"))
    return any(w is None or not _plain(w, cmd, links) for w in named)


def _plain(word: Word, cmd: SimpleCommand, links: bool) -> bool:
    """Whether ``word`` is plainly a file's name: known now (no expansion, glob or
    process substitution), not ``-``, no link made earlier in the line (``links``), and
    not, where the system takes it (its links followed), under ``/dev``, ``/proc`` or
    ``/sys`` (``/dev/null`` aside) nor a file there that is not a regular one."""
    text = word.text
    if links or word.dynamic or word.glob or not text or text == "-" or _PROCESS_SUB in text:
        return False
    found = path_readings(cmd.cwd, word)
    if found is None:
        return False
    for path in found:
        if path == "/dev/null":
            continue
        if path.startswith(("/dev/", "/proc/", "/sys/")) or path in ("/dev", "/proc", "/sys"):
            return False
        try:
            mode = os.stat(path).st_mode
        except (OSError, ValueError):
            continue  # not there (yet): a file the line may write
        if not stat.S_ISREG(mode):
            return False
    return True


def to_plain_file(target: Word) -> bool:
    """A redirection's target is a plain file, known now: not a device (``/dev/null``,
    which no command reads, aside), a descriptor, a process substitution or a path the
    shell computes."""
    text = target.text
    return text == "/dev/null" or not (
        target.dynamic or target.glob or text.isdigit() or text == "-"
        or text.startswith(("/dev/", "/proc/")) or _PROCESS_SUB in text
    )  # fmt: skip


def _names_on_stdin(cmd: SimpleCommand) -> bool:
    """A data program told to read the files its stdin names (``git hash-object -w
    --stdin-paths <<< PATH`` stored the token for ``git cat-file`` to print; ``wc`` and
    ``sort --files0-from=-``, ``git add --pathspec-from-file=-``), by any prefix of the
    option (``--stdin-pa``, ``--fil``) but another's whole name.

    >>> from exomonad.policy.shell_parse import parse
    >>> [_names_on_stdin(c) for c in parse("git x --stdin-p; git x --stdin; sort --fil=-", "/")]
    [True, False, True]
    """
    for word in cmd.words:
        text = word.text
        if text.startswith("--") and len(text) > 2:
            option = text[2:].partition("=")[0]
            if option not in _WHOLE_NAMES and any(n.startswith(option) for n in _NAMES_FROM):
                return True
    return False


def note_exec(words: list[Word], cmd: SimpleCommand, env: ShellEnv) -> None:
    """A bare ``exec`` with redirections moves the rest of the line's stdin or stdout."""
    if not words or words[0].text != "exec" or len(words) != 1:
        return
    if any(r.op in ("<", "<&", "<>", "<<", "<<<", "<<-") and r.fd in (None, 0)
           for r in cmd.redirs):  # fmt: skip
        env.stdin_redirected = True
    env.stdout_redirected |= any(r.op in OUT_OPS and not to_plain_file(r.target)
                                 for r in cmd.redirs)  # fmt: skip
