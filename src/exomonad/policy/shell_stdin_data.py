"""Which programs read their stdin only as data (text to print, store, filter, hash or
send as a message), never as instructions, arguments or the names of files to open.

A data program (:data:`DATA_STDIN`) may still be told to take its stdin otherwise: a
sed, awk, jq or yq told to run a script file that may be its stdin (``sed -f
/dev/stdin``, ``--file=``, ``-f //dev/stdin``, ``awk -f/dev/stdin``), a sed or awk
program that runs or opens what it reads (sed's ``e``, awk's ``getline < $0``), an
option that runs a program on it (``sort --compress-program=sh``, ``rg --pre``, yq's
``eval``) or opens the files it lists (``sha256sum -c``, ``--stdin-paths``,
``--files0-from``, by any prefix), a git or gh command not known to read it as data
(an alias may run anything). Found probing: each printed ``.exomonad/lead.token`` from
a here-string, allowed. :func:`data_only` tells; :mod:`~exomonad.policy.shell_stdin`
judges a here-string by it.

>>> from exomonad.policy.shell_parse import parse
>>> line = "cat; sed -f /dev/stdin; git commit -F -; xargs cat"
>>> [data_only(c, c.words[0].text) for c in parse(line, "/w")]
[True, False, True, False]
"""

from __future__ import annotations

import os
import stat

from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_parse import SimpleCommand
from exomonad.policy.shell_paths import path_readings
from exomonad.policy.shell_scripts import awk_escapes
from exomonad.policy.shell_sed import escapes as sed_escapes

__all__ = [
    "DATA_STDIN",
    "PROCESS_SUB",
    "STDIN_NAMES",
    "data_only",
    "plainly_a_file",
    "program_on_unseen_stdin",
    "stdin_program_escapes",
]

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
#: The names by which a program's operand is its stdin.
STDIN_NAMES = ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")
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
#: Redirections of a command's stdin, and those of them that give the line's own text.
_STDIN_OPS = frozenset({"<", "<<", "<<-", "<<<", "<&", "<>"})
_HERE_OPS = frozenset({"<<", "<<-", "<<<"})
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
#: How a word names a process substitution (``<(cmd)``, ``>(cmd)``): see shell_lex.
PROCESS_SUB = "<process substitution>"
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


def data_only(cmd: SimpleCommand, name: str | None, links: bool = False) -> bool:
    """Whether program ``name`` reads its stdin only as data: one of :data:`DATA_STDIN`
    (or sed, awk) not told to run its stdin as its program (``sed -f /dev/stdin``,
    ``--file=``, ``-f//dev/stdin``, ``-f /proc/thread-self/fd/0``, a glob, a name the
    shell computes, a link to a device: :func:`_program_file`) nor to read the files it
    names (:func:`_names_on_stdin`)."""
    if name in _SCRIPT_OPERAND:
        if any(w.text in STDIN_NAMES for w in cmd.words) or _runs_its_input(cmd, name):
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


def stdin_program_escapes(cmd: SimpleCommand, name: str | None, links: bool = False) -> bool:
    """Whether sed or awk told to run a file that may be its stdin (:func:`_program_file`)
    has a here-document or here-string that, as its program, runs, writes or reads
    something besides its stream. Found probing: ``awk -f - f <<< 'BEGIN{print 1 >
    "../../x"}'`` and ``sed -f /dev/stdin f <<< 'w ../../x'`` wrote ``../../x``,
    allowed: the body was judged only for the paths it names, as an argument's words.

    >>> from exomonad.policy.shell_parse import parse
    >>> [stdin_program_escapes(c, c.words[0].text) for c in parse(
    ...     "sed -f - f <<< 'w x'; sed -f - f <<< 's/a/b/'; sed p - <<< 'w x'", "/")]
    [True, False, False]
    """
    body = cmd.stdin_script
    if body is None or name not in _SCRIPT_OPERAND or not _program_file(cmd, name, links):
        return False
    return awk_escapes(body) if name in _AWKS else sed_escapes(body)


def program_on_unseen_stdin(
    cmd: SimpleCommand, name: str | None, stdin_redirected: bool = False, links: bool = False
) -> bool:
    """Whether sed or awk told to run a file that may be its stdin (:func:`_program_file`)
    gets a stdin the line does not show: a pipe (``echo 'w ../../x' | sed -f - f`` wrote
    ``../../x``, allowed, found probing), a file, a group's or loop's, an earlier ``exec
    <``; not a here-document or here-string (:func:`stdin_program_escapes` judges it),
    ``/dev/null`` or the terminal.

    >>> from exomonad.policy.shell_parse import parse
    >>> [program_on_unseen_stdin(c, c.words[0].text) for c in parse(
    ...     "echo x | sed -f - f; echo x | sed -n p; sed -f - f; sed -f - f < /dev/null", "/")]
    [False, True, False, False, False, False]
    """
    if name not in _SCRIPT_OPERAND or not _program_file(cmd, name, links):
        return False
    reads = [r for r in cmd.redirs if r.fd in (None, 0) and r.op in _STDIN_OPS]
    if reads:
        last = reads[-1]
        if last.op in _HERE_OPS:
            return False
        return not (last.op == "<" and last.target.text == "/dev/null" and not last.target.dynamic)
    return cmd.stdin_script is None and (cmd.piped_in or cmd.grouped or stdin_redirected)


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
    return any(w is None or not plainly_a_file(w, cmd, links) for w in named)


def plainly_a_file(word: Word, cmd: SimpleCommand, links: bool) -> bool:
    """Whether ``word`` is plainly a file's name: known now (no expansion, glob or
    process substitution), not ``-``, no link made earlier in the line (``links``), and
    not, where the system takes it (its links followed), under ``/dev``, ``/proc`` or
    ``/sys`` (``/dev/null`` aside) nor a file there that is not a regular one."""
    text = word.text
    if links or word.dynamic or word.glob or not text or text == "-" or PROCESS_SUB in text:
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
