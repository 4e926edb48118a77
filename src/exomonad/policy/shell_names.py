"""Names a command line makes when it runs, handed to a program that reads them.

A reader given a word known only at run time (``cat "$f"``, ``cat $(...)``, ``xargs
cat``, ``read x < "$f"``) adds no read of its own: the word is judged where the line
writes it. Found trying the gate as a worker, each printed the lead's token, allowed:
the word came from a listing (``f=$(find ../.. -maxdepth 2 -name 'l*n'); cat "$f"``,
``find ../.. ... | xargs cat``, ``du -a ../.. | ... | xargs cat``: names are not
contents), from text no rule reads (``echo ../../.rkbzbanq/yrnq.gbxra | tr a-z n-za-m |
xargs cat``) or from a file (``xargs cat < list``, ``while read f; do cat "$f"; done <
list``, ``cat $(cat list)``). So where the line has such a reader, each of its commands
whose output (or a file it reads) may become words, a *source*, is judged
(:func:`made_names`): a listing is a read of the tree it lists (``find`` narrowed by its
``-name``\\ s, as ``find ... -exec cat {} +`` is); judged words (``echo``, ``printf``,
a here-string), a filter of its input (``grep``, ``sort``, ``cut``...) and what names
the worktree (``git ls-files``, ``mktemp``, ``pwd``) add nothing; any other source is a
path not known (:class:`~exomonad.policy.actions.Unknown`, naming it).

>>> from exomonad.policy.shell_parse import parse
>>> made_names(parse("find ../.. -name 'l*n' | xargs cat", "/p/.worktrees/w"), "xargs cat")
[ReadFile(path='/p', recursive=True, include=('l*n',))]
>>> made_names(parse("echo x | tr a-z n-za-m | xargs cat", "/p/w"), "xargs cat")[0].raw
'xargs cat (reads a name tr a-z n-za-m makes when it runs)'
>>> made_names(parse("find . -name '*.py' | xargs wc -l", "/p/w"), "xargs wc -l")
[ReadFile(path='/p/w', recursive=True, include=('*.py',))]
"""

from __future__ import annotations

import posixpath

from exomonad.policy.actions import Action, ReadFile, Shell, Unknown
from exomonad.policy.shell_env import ShellEnv, is_within
from exomonad.policy.shell_files import file_operands
from exomonad.policy.shell_find import find_names
from exomonad.policy.shell_lex import ARITH_OPEN, ShellSyntaxError, Word
from exomonad.policy.shell_parse import SimpleCommand, parse
from exomonad.policy.shell_reads import tree_root
from exomonad.policy.shell_stdin import passes_on

__all__ = ["line_reads", "loop_words", "made_names", "note_reader", "reads_made_name"]

#: Programs whose output is their judged words or says nothing a worker chooses.
_PRINTERS = frozenset(
    {"echo", "printf", "pwd", "date", "mktemp", "basename", "dirname", "seq", "true", "false",
     "whoami", "id", "uname", "hostname", "nproc", "cd", "pushd", "popd", "test", "[", "[[",
     ":", "read", "mapfile", "readarray", "export", "local", "declare", "sleep", ARITH_OPEN}
)  # fmt: skip
#: Programs that print where the names they are given lead (a link's target).
_RESOLVERS = frozenset({"readlink", "realpath"})
#: Filters: what they print is their input's (judged where it comes from), unless they
#: are given a file (``cat list``: what it holds).
_FILTERS = frozenset(
    {"cat", "tac", "head", "tail", "sort", "uniq", "grep", "egrep", "fgrep", "cut", "wc",
     "nl", "column"}
)  # fmt: skip
#: Programs that list the names in the trees they are given (or the cwd).
_LISTERS = frozenset({"find", "du", "tree", "ls", "fd", "fdfind"})
#: git's commands that print names the repository at the cwd tracks (or its paths), and
#: their options that list other files too (``git ls-files -o -i``: ignored ones).
_GIT_NAMES = frozenset({"ls-files", "rev-parse", "status", "diff"})
_GIT_OTHERS = ("-o", "--others", "-i", "--ignored", "--no-index")
#: Programs :func:`~exomonad.policy.shell_files.handle_files` does not model that print
#: or copy what the files they are given hold (found probing: each printed the token
#: from ``find ../.. -name 'l*n' | xargs PROGRAM``, allowed).
_CONTENT = frozenset(
    {"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "lzma",
     "unlzma", "brotli", "pigz", "unpigz", "compress", "uncompress", "openssl", "xmllint",
     "bat", "batcat", "highlight", "pygmentize", "php", "age", "mcookie", "gpg", "man",
     "shuf", "basenc", "ptx", "tsort", "uuencode", "sum", "yq", "sdiff", "diff3", "join"}
)  # fmt: skip
#: Interpreters: a one-liner (``perl -ne``, ``python3 -m base64``), inline code or a
#: script may open any operand (found probing: ``node -e 'fs.readFileSync(argv[1])' "$f"``
#: and ``python3 - "$f" <<< CODE`` printed the token from a listing's name, allowed).
_INTERPRETERS = frozenset(
    {"perl", "ruby", "python", "python2", "python3", "node", "nodejs", "php", "lua", "bun"}
)
#: The interpreters' options that take no value and give no code (before a script file).
_PLAIN_FLAGS = {
    **dict.fromkeys(("python", "python2", "python3"),
                    frozenset({"-u", "-B", "-O", "-OO", "-s", "-S", "-E", "-I", "-q", "-b",
                               "-bb", "-P"})),
    **dict.fromkeys(("node", "nodejs"),
                    frozenset({"--no-warnings", "--enable-source-maps", "--trace-warnings",
                               "--trace-uncaught", "--no-deprecation"})),
    "perl": frozenset({"-w", "-W", "-X", "-T", "-t"}), "ruby": frozenset({"-w", "-v"}),
}  # fmt: skip
#: Programs that take the names they read or run on from stdin.
_TAKES_NAMES = frozenset({"read", "mapfile", "readarray", "xargs"})
#: Options by which a program reads the files a list names (any prefix counts: git and
#: GNU tools take one), and the names of stdin: ``zip -@``, ``git hash-object
#: --stdin-paths``, ``sort --files0-from=F``, ``zstd --filelist=F``, ``tar -T F``.
_LISTS = ("stdin-paths", "files0-from", "files-from", "filelist", "names-stdin")
#: Programs that print only sizes or counts of the files a list names.
_COUNTS = frozenset({"wc", "du"})
_STDIN = ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")
_PROCESS_SUB = "<process substitution>"


def note_reader(
    name: str, args: list[Word], cwd: str | None, env: ShellEnv, full: tuple[str, ...]
) -> None:
    """Keep in ``env`` that the line's reader ``name`` is given a name made at run time."""
    if env.made_name_read is None and reads_made_name(name, args, cwd):
        env.made_name_read = " ".join(full)


def _redirected(commands: list[SimpleCommand]) -> str | None:
    """A redirection of the line that reads a file named at run time (``read x <
    "$f"``, ``$(<$f)``); a process substitution is not one (``done < <(git ls-files)``)."""
    for cmd in commands:
        for r in cmd.redirs:
            made = tree_root(cmd.cwd, r.target) is None and _PROCESS_SUB not in r.target.text
            if r.op in ("<", "<>") and made:
                return f"{r.op}{r.target.text}"
    return None


def line_reads(commands: list[SimpleCommand], env: ShellEnv, outer: str | None) -> list[Action]:
    """:func:`made_names` where a reader of the line (or of a line nested in it: ``sh
    -c``) was given a name made at run time; ``env`` then keeps it for the line holding
    this one (``outer``: what that line had noted before)."""
    env.made_name_read = env.made_name_read or _redirected(commands)
    found = [] if env.made_name_read is None else made_names(commands, env.made_name_read)
    env.made_name_read = env.made_name_read or outer
    return found


def reads_made_name(name: str, args: list[Word], cwd: str | None) -> bool:
    """Whether reader ``name`` is given a file whose path is known only at run time
    (``cat "$f"``, xargs's input, ``dd if=$f``); a process substitution is not one.

    >>> reads_made_name("cat", [Word("$f", dynamic=True)], "/w")
    True
    >>> reads_made_name("cat", [Word("a")], "/w"), reads_made_name("ls", [Word("$f", True)], "/w")
    (False, False)
    """
    if name == "dd":
        return any(w.text.startswith("if=") and w.dynamic for w in args)
    if name in _COUNTS:
        return False
    if _names_from(name, args) is not None:
        return True
    files = file_operands(name, args)
    if files is None and name in _INTERPRETERS:
        files = _interpreted(name, args, cwd)
    if files is None and name in _CONTENT:
        files = [w for w in args if not w.text.startswith("-")]
    return files is not None and any(
        _PROCESS_SUB not in w.text and tree_root(cwd, w) is None for w in files
    )


def _interpreted(name: str, args: list[Word], cwd: str | None) -> list[Word]:
    """What an interpreter given these ``args`` may open by the names it is given: a
    script file in ``cwd`` it runs (``node scripts/x.js "$(cat VERSION)"``, ``python3
    manage.py test $(cat tests.txt)``) gets its operands as data of a program in the
    worktree, its contents (outside what the policy judges, as ``python -c`` is): only the
    script itself counts. Inline code, a one-liner, a module, a script from stdin or an
    option not known to take no value: every operand.

    >>> [w.text for w in _interpreted("node", [Word("x.js"), Word("$v", True)], "/w")]
    ['x.js']
    >>> [w.text for w in _interpreted("node", [Word("-e"), Word("c"), Word("$f", True)], "/w")]
    ['c', '$f']
    """
    operands = [w for w in args if not w.text.startswith("-")]
    flags = _PLAIN_FLAGS.get(name, frozenset())
    i = 0
    while i < len(args) and args[i].text in flags:
        i += 1
    i += 1 if i < len(args) and args[i].text == "--" else 0
    if i >= len(args) or args[i].text.startswith("-") or args[i].dynamic or args[i].glob:
        return operands
    script = tree_root(cwd, args[i])
    return [args[i]] if script is not None and is_within(script, cwd) else operands


def made_names(commands: list[SimpleCommand], reader: str) -> list[Action]:
    """What ``reader`` (a command of the line given a name made at run time) reads, by
    the line's sources: each listing's tree, and an :class:`Unknown` for the first other
    source, named."""
    found: list[Action] = []
    other: str | None = None
    reads = any(_name(c) in ("read", "mapfile", "readarray") for c in commands)
    for cmd, from_file in _sources(commands, reads):
        listed = None if from_file else _listing(cmd)
        if listed is not None:
            found += [a for a in listed if a not in found]
        elif other is None and (from_file or not _quiet(cmd)):
            other = _described(cmd)
    if other is not None:
        found.append(Unknown(f"{reader} (reads a name {other} makes when it runs)"))
    return found


def _name(cmd: SimpleCommand) -> str | None:
    words = cmd.command_words
    return posixpath.basename(words[0].text) if words else None


def _sources(commands: list[SimpleCommand], reads: bool) -> list[tuple[SimpleCommand, bool]]:
    """The commands of the line whose output may become words (down a pipe, in a
    substitution), and those that take names from a file (``xargs < list``, ``read f <
    list``, a loop's ``done < list`` where the line reads: true beside them)."""
    found: list[tuple[SimpleCommand, bool]] = []
    for cmd in commands:
        if _from_file(cmd, reads):
            found.append((cmd, True))
        elif passes_on(cmd):
            found.append((cmd, False))
        for text in (s for w in (*cmd.words, *(r.target for r in cmd.redirs)) for s in w.subs):
            try:
                found += [(c, False) for c in parse(text, cmd.cwd, 1)]
            except ShellSyntaxError:
                found.append((SimpleCommand((Word(text),), cwd=cmd.cwd), False))
    return found


def _names_from(name: str | None, args: list[Word]) -> str | None:
    """Where a program is told to take the names of the files it reads: ``"stdin"``,
    ``"file"`` (a list an option names), or None.

    >>> _names_from("zip", [Word("-q@")]), _names_from("sort", [Word("--files0-f=list")])
    ('stdin', 'file')
    >>> _names_from("git", [Word("--stdin")]), _names_from("tar", [Word("-T"), Word("-")])
    (None, 'stdin')
    >>> _names_from("rg", [Word("--files")]), _names_from("sort", [Word("-T"), Word("/tmp")])
    (None, None)
    """
    for i, word in enumerate(args if name not in _COUNTS else ()):
        text = word.text
        value: str | None = None
        if text.startswith("--") and len(text) > 3:
            option, eq, value = text[2:].partition("=")
            if [n.startswith(option) for n in _LISTS].count(True) != 1 or option == "stdin":
                continue  # --files: no list (ambiguous to GNU, rg's own); git's --stdin
            if not eq and not option.startswith(("stdin", "names")):
                value = args[i + 1].text if i + 1 < len(args) else None
            value = value if eq or not option.startswith(("stdin", "names")) else "-"
        elif name == "zip" and text.startswith("-") and not text.startswith("--") and "@" in text:
            value = "-"
        elif name == "tar" and text.startswith("-T"):
            value = text[2:] or (args[i + 1].text if i + 1 < len(args) else None)
        else:
            continue
        return "stdin" if value is None or value in _STDIN else "file"
    return None


def _from_file(cmd: SimpleCommand, reads: bool) -> bool:
    """``cmd`` takes names from a file: ``xargs -a FILE``, a list an option names
    (``sort --files0-from=list``), or stdin from a file into ``xargs``, ``read``,
    ``mapfile``, a program reading names from stdin or (where the line reads) a
    compound command."""
    name = _name(cmd)
    if name == "xargs" and any(w.text.startswith(("-a", "--arg-file")) for w in cmd.words):
        return True
    given = _names_from(name, list(cmd.command_words[1:]))
    if given == "file":
        return True
    taker = name in _TAKES_NAMES or given == "stdin" or (name is None and reads)
    return taker and any(  # a file named at run time (`done < "$f"`): its own source
        r.op in ("<", "<>") and r.fd in (None, 0) and tree_root(cmd.cwd, r.target) is not None
        for r in cmd.redirs
    )


def _listing(cmd: SimpleCommand) -> list[Action] | None:
    """The tree reads a listing's names stand for (``find`` narrowed by its ``-name``s),
    or None when ``cmd`` is no listing."""
    name = _name(cmd)
    args = list(cmd.command_words[1:])
    if name in _RESOLVERS:  # where a link leads (found reviewing: `cat "$(readlink x)"`,
        # x -> the token, printed it): a read of each name, its links followed when judged
        operands = [w for w in args if not w.text.startswith("-")]
        return [ReadFile(tree_root(cmd.cwd, w)) for w in operands] or [ReadFile(None)]
    if name in ("rg", "grep", "egrep", "fgrep") and _names_only(name, args):
        operands = [w for w in args if not w.text.startswith("-")]
        roots = operands if "--files" in (w.text for w in args) else operands[1:]
        return [ReadFile(tree_root(cmd.cwd, w), True) for w in roots] or [ReadFile(cmd.cwd, True)]
    if name not in _LISTERS or any(w.text in ("-printf", "-fprintf") for w in args):
        return None
    start = 0
    if name == "find":
        while start < len(args) and not args[start].text.startswith(("-", "(", "!")):
            start += 1
        roots, include = args[:start], find_names(args[start:])
    else:
        operands = [w for w in args if not w.text.startswith("-")]
        roots, include = (operands[1:] if name in ("fd", "fdfind") else operands), ()
    if not roots:
        return [ReadFile(cmd.cwd, True, include)]
    return [ReadFile(tree_root(cmd.cwd, w), True, include) for w in roots]


def _names_only(name: str, args: list[Word]) -> bool:
    """grep or rg told to print file names only (``-l``, ``-rl``, ``--files``)."""
    texts = [w.text for w in args]
    if any(t in ("--files", "--files-with-matches", "--files-without-match") for t in texts):
        return True
    return any(t.startswith("-") and not t.startswith("--") and ("l" in t or "L" in t)
               for t in texts)  # fmt: skip


def _quiet(cmd: SimpleCommand) -> bool:
    """``cmd`` prints only judged words, its input, or nothing a worker chooses."""
    name = _name(cmd)
    if name is None:
        return not any(r.op in ("<", "<>") for r in cmd.redirs)
    if name in _PRINTERS:
        return True
    if name == "git":
        texts = [w.text for w in cmd.command_words[1:]]
        ours = bool(texts) and texts[0] in _GIT_NAMES and not set(_GIT_OTHERS) & set(texts)
        return ours and (texts[0] != "diff" or "--name-only" in texts)
    if name in _FILTERS:
        files = file_operands(name, list(cmd.command_words[1:]))
        return not files
    return name == "tee"


def _described(cmd: SimpleCommand) -> str:
    words = " ".join(w.text for w in cmd.words) or " ".join(
        f"{r.op}{r.target.text}" for r in cmd.redirs
    )
    return words if len(words) <= 80 else words[:77] + "..."


def loop_words(listed: list[Word], full: tuple[str, ...], cwd: str | None) -> list[Action]:
    """``for NAME in WORDS``: the words are what the loop's body reads (``for f in
    ../../.exomonad/*; do cat "$f"; done`` printed the lead's token), read as a reader's
    operands when they may name a file, a word built at run time judged as a command's;
    ``for i in 1 2`` is nothing of its own. (Judged as a command's, ``for f in *`` was
    refused as a write of an agent's settings, which the loop's words never are.)"""
    named = [w for w in listed
             if w.glob or w.dynamic or "/" in w.text or w.text.startswith((".", "~"))]  # fmt: skip
    built = tuple(w.text for w in named if w.dynamic)
    reads: list[Action] = [ReadFile(tree_root(cwd, w)) for w in named if not w.dynamic]
    return [*reads, Shell((*full[:3], *built), cwd)] if built else reads
