"""Programs that read the files they are given: ``cat FILE`` is the Read tool's read.

An operand whose path is unknown (``cat "$f"``) adds no read: it is judged as before,
as the plain command, and where the line may have made that name
(:mod:`exomonad.policy.shell_names`: ``f=$(find ../.. -name 'l*n'); cat "$f"``).

A shell reader's file operands become :class:`~exomonad.policy.actions.ReadFile`
actions, so the rules on reads (credentials, ExoMonad's state) judge ``cat
~/.ssh/id_rsa`` as they judge the Read tool on the same path; before, only the tool was
refused. The command's plain :class:`~exomonad.policy.actions.Shell` follows, as for
every modelled program. Which operand is a file: every positional, except a program's
leading script or pattern (``grep PATTERN FILE...``, ``jq FILTER FILE...``, ``awk PROG
FILE...``, ``sed SCRIPT FILE...``) when it was not given by an option (``-e``, ``-f``).

>>> from exomonad.policy.shell_lex import Word
>>> handle_files("cat", [Word("-n"), Word("~/.ssh/id_rsa")], "/w")[0].path.endswith(".ssh/id_rsa")
True
>>> handle_files("grep", [Word(t) for t in "-n foo a.txt".split()], "/w")[0]
ReadFile(path='/w/a.txt', recursive=False, include=())
>>> handle_files("ls", [Word("x")], "/w") is None
True
"""

from __future__ import annotations

from exomonad.policy.actions import Action, ReadFile, WriteFile
from exomonad.policy.shell_env import is_within, scan_options
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_paths import resolve_path
from exomonad.policy.shell_reads import GREP_ARG, PATTERN_OPTS, RG_ARG, tree_root, with_shell
from exomonad.util.paths import real_path

__all__ = ["SORT_ARG", "file_operands", "file_readers", "handle_files", "operand_reads",
           "run_file"]  # fmt: skip

#: sort's options that take a value (its ``-o`` writes: :mod:`exomonad.policy.shell_outputs`).
SORT_ARG = "-o -k -t -S -T --output --key --field-separator --buffer-size --temporary-directory"
#: less's options that take a value; ``-o``/``-O FILE`` log what it shows to FILE.
_LESS_ARG = (
    "-o -O --log-file --LOG-FILE -b -h -j -k -p -P -t -T -x -y -z --buffers --max-back-scroll "
    "--jump-target --lesskey-file --pattern --prompt --tag --tag-file --tabs --max-forw-scroll "
    "--window"
)
_LESS_LOGS = ("-o", "-O", "--log-file", "--LOG-FILE")
#: Programs whose positionals are all files they read; their options that take a value.
_ALL_FILES: dict[str, str] = {
    **dict.fromkeys(
        (
            *("cat", "tac", "nl", "more", "view", "strings", "xxd", "od", "hexdump"),
            *("base64", "base32", "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum"),
            *("sha512sum", "b2sum", "cksum", "wc", "paste", "fold", "fmt", "rev", "expand"),
            *("unexpand", "iconv", "zcat", "bzcat", "xzcat", "zstdcat", "zless", "cmp", "diff"),
            *("comm", "column", "pr", "hd", "split", "csplit"),
        ),
        "",
    ),
    "sort": SORT_ARG,
    **dict.fromkeys(("less", "zless"), _LESS_ARG),
    "cut": "-d -f -b -c --delimiter --fields --bytes --characters",
    "uniq": "-f -s -w --skip-fields --skip-chars --check-chars",
    "head": "-n -c --lines --bytes",
    "tail": "-n -c --lines --bytes --pid -s --sleep-interval",
}
#: Programs whose first positional is a pattern or script unless one of the options
#: given here (which take a value) supplied it.
_LEADING: dict[str, tuple[str, str]] = {
    "jq": ("--indent -L --from-file -f", "-f --from-file"),  # two-value options: below
    "awk": ("-f -v -F --file --assign --field-separator", "-f --file"),
    "gawk": ("-f -v -F --file --assign --field-separator", "-f --file"),
    "sed": ("-e -f -l --expression --file --line-length", "-e -f --expression --file"),
    "look": ("-t --terminate", ""),
}  # fmt: skip


#: ps options whose value is the rest of the word or the next one: UNIX (``-u root``) and
#: BSD (``o pid``; BSD ``u`` is a format, no value).
_PS_WITH_ARG = frozenset("CGgOopqstUuk")
_PS_BSD_WITH_ARG = frozenset("OopqtUk")
#: What ``ps e`` reads: every process's environment (another agent's EXOMONAD_TOKEN).
ENVIRONS = "/proc/*/environ"


def shows_environments(args: list[Word]) -> bool:
    """Whether ``ps ARGS`` prints processes' environments: the BSD option ``e`` (``ps
    eww``, ``ps auxe``), found as a worker printing another worker's token.

    >>> shows_environments([Word("eww")]), shows_environments([Word("-C"), Word("sleep")])
    (True, False)
    >>> shows_environments([Word("aux")]), shows_environments([Word("-eo"), Word("pid,comm")])
    (False, False)
    """
    value = False
    for w in args:
        text = w.text
        if value or w.dynamic:
            value = False
            if w.dynamic:
                return True  # cannot tell
            continue
        if text.startswith("--"):
            value = text in ("--format", "--sort", "--pid", "--ppid", "--user", "--group")
            continue
        letters = text[1:] if text.startswith("-") else text
        for i, c in enumerate(letters):
            if c == "e" and not text.startswith("-"):
                return True
            if c in (_PS_WITH_ARG if text.startswith("-") else _PS_BSD_WITH_ARG):
                value = i == len(letters) - 1  # the rest of the word, or the next one
                break
    return False


#: grep's and rg's: the tables the tree reads use (:mod:`exomonad.policy.shell_reads`).
_LEADING_SETS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    **dict.fromkeys(("grep", "egrep", "fgrep"), (GREP_ARG, frozenset(PATTERN_OPTS))),
    "rg": (RG_ARG, frozenset(PATTERN_OPTS)),
    **{k: (frozenset(a.split()), frozenset(b.split())) for k, (a, b) in _LEADING.items()},
}


def file_readers() -> frozenset[str]:
    """The readers :func:`handle_files` models."""
    return frozenset({*_ALL_FILES, *_LEADING_SETS, "ps", "jq"})


def handle_files(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    """The reads of the files program ``name`` is given, then its plain Shell; None if
    ``name`` is not a reader we model or it is given no file (it reads stdin)."""
    if name == "ps":
        if not shows_environments(args):
            return None
        return with_shell(name, args, cwd, [ReadFile(ENVIRONS)])
    files = file_operands(name, args)
    if files is None:
        return None
    logs: list[Action] = []
    if name in ("less", "zless"):  # `cat x | less -o ../../y` writes y
        opts = scan_options(args, frozenset(_LESS_ARG.split()))[1]
        logs = [WriteFile(resolve_path(cwd, w)) for k in _LESS_LOGS for w in opts.get(k, [])
                if w is not None]  # fmt: skip
    reads = operand_reads(files, cwd)  # unknown: as before
    if not reads and not logs:
        return None
    return with_shell(name, args, cwd, [*reads, *logs])


def operand_reads(operands: list[Word], cwd: str | None) -> list[Action]:
    """The reads of the files a program is given in ``cwd`` (``-``, stdin, and a path
    not known, as ``cat "$f"``'s, left out: judged as the plain command)."""
    paths = [tree_root(cwd, w) for w in operands if w.text != "-"]
    return [ReadFile(p) for p in paths if p is not None]


def file_operands(name: str, args: list[Word]) -> list[Word] | None:
    """The files reader ``name`` is given (``-`` left out), None if it is no reader
    :func:`handle_files` models (``ps`` aside).

    >>> [w.text for w in file_operands("grep", [Word(t) for t in "-n foo a b".split()])]
    ['a', 'b']
    """
    rest, files = _jq_named_files(args) if name == "jq" else (args, [])
    if name in _ALL_FILES:
        files = scan_options(rest, frozenset(_ALL_FILES[name].split()))[0]
    elif name in _LEADING_SETS:
        with_arg, supplied = _LEADING_SETS[name]
        positionals, opts = scan_options(rest, with_arg, abbrev=name != "rg")
        files += positionals if supplied.intersection(opts) else positionals[1:]
        files += [w for k in supplied for w in opts.get(k, []) if w is not None and "-" in k
                  and k.strip("-") in ("f", "file", "from-file")]  # fmt: skip
    else:
        return None
    return [w for w in files if w.text != "-"]


#: Shells and interpreters: their options that take a value, and those that give the
#: code inline (then no operand is a file they run). Running a file reads it (found
#: probing: with ``x -> ../../.exomonad/lead.token`` in the worktree, ``python3 x``,
#: ``node x``, ``bash x`` and ``source x`` printed the token in their error, allowed).
_RUNNERS: dict[str, tuple[str, str]] = {
    **dict.fromkeys(
        ("sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash"),
        ("-o +o -O +O --rcfile --init-file", "-c -s"),
    ),
    **dict.fromkeys(("source", "."), ("", "")),
    **dict.fromkeys(("python", "python2", "python3"), ("-W -X -Q", "-c -m")),
    **dict.fromkeys(("node", "nodejs"), ("-r --require --import --loader", "-e -p --eval --print")),
    "perl": ("-I -M -m -x", "-e -E"),
    "ruby": ("-I -r -C -E", "-e"),
    "php": ("-c -d -z", "-r"),
    "lua": ("-l", "-e"),
}
#: Programs that print or copy the files they are given, and whose other effects
#: (``shuf -o``, ``yq -i``) are judged as any program's: their options that take a value
#: (found probing: with ``x -> ../../.exomonad/lead.token`` in the worktree, ``shuf x``,
#: ``basenc --base64 x``, ``ptx x``, ``yq . x``, ``sdiff x /dev/null``, ``diff3``,
#: ``join`` and ``file -f x`` printed the token, allowed). yq's first operand is its
#: expression (after ``e``/``eval``/``ea``); ``file`` reads its ``-f`` and ``-m`` files,
#: ``date`` its ``-f`` (``--file``) file, each line it cannot take for a date printed in
#: its error (found trying the gate as a worker: ``date -f x`` printed the token).
_PRINTS_GIVEN: dict[str, str] = {
    "shuf": "-n -o -i --head-count --output --input-range --random-source",
    "basenc": "-w --wrap",
    "ptx": "-F -g -M -o -S -T -w -W -b -i --flag-truncation --gap-size --macro-name "
    "--sentence-regexp --word-regexp --width --break-file --ignore-file --only-file",
    **dict.fromkeys(("tsort", "sum", "uuencode"), ""),
    "yq": "-I --indent -o --output-format -p --input-format --from-file",
    "sdiff": "-o -w -I --output --width --ignore-matching-lines --diff-program",
    "diff3": "-L --label --diff-program",
    "join": "-a -e -j -o -t -v -1 -2",
    "file": "-f -m -F -e -P --files-from --magic-file --separator --exclude --parameter",
    "date": "-d -f -r --date --file --reference",
}
#: The options naming the files a program of :data:`_PRINTS_GIVEN` prints, where its
#: operands are not files.
_PRINTED_OPTIONS = {"file": ("-f", "--files-from", "-m", "--magic-file"),
                    "date": ("-f", "--file")}  # fmt: skip
#: Compilers: each source operand and ``-include``/``-imacros`` file is read (``cpp x``,
#: ``gcc -E x`` print it, an error quotes it).
_COMPILERS = frozenset({"cpp", "gcc", "cc", "c++", "g++", "clang", "clang++"})
_COMPILER_ARG = (
    "-o -I -D -U -include -imacros -isystem -iquote -idirafter -MF -MT -MQ -x -L -l "
    "-Xlinker -Xassembler -Xpreprocessor -T -u -aux-info"
)


def run_file(name: str, args: list[Word], cwd: str | None) -> list[Action]:
    """The read of the file a shell or an interpreter runs (its first operand, unless
    it is given code inline or ``-``), of a compiler's sources, and of the files the
    programs of :data:`_PRINTS_GIVEN` print; where each may be anything but a plain
    file below the cwd (:func:`_elsewhere`).

    >>> run_file("python3", [Word("-u"), Word("/etc/x.py"), Word("a")], "/w")
    [ReadFile(path='/etc/x.py', recursive=False, include=())]
    >>> run_file("python3", [Word("x.py")], "/w")  # a plain file below the cwd
    []
    >>> run_file("python3", [Word("-c"), Word("print(1)")], "/w"), run_file("ls", [], "/w")
    ([], [])
    """
    files: list[Word | None]
    if name in _PRINTS_GIVEN:
        positionals, opts = scan_options(args, frozenset(_PRINTS_GIVEN[name].split()))
        if name in _PRINTED_OPTIONS:  # file -f LIST prints each name LIST holds: its lines
            positionals = [w for k in _PRINTED_OPTIONS[name] for w in opts.get(k, [])
                           if w is not None]  # fmt: skip
        if name == "yq":
            expression = "--from-file" not in opts
            verb = positionals[:1] and positionals[0].text in ("e", "eval", "ea", "eval-all")
            positionals = positionals[int(bool(verb)) + int(expression) :]
        files = list(positionals)
    elif name in _COMPILERS:
        positionals, opts = scan_options(args, frozenset(_COMPILER_ARG.split()))
        files = [*positionals, *(w for k in ("-include", "-imacros") for w in opts.get(k, []))]
    elif name in _RUNNERS:
        with_arg, inline = (frozenset(t.split()) for t in _RUNNERS[name])
        positionals, opts = scan_options(args, with_arg | inline)
        code = inline & set(opts) or any(
            k[:1] == "-" and k[1:2] != "-" and set(k[1:]) & {c[1] for c in inline} for k in opts
        )
        files = [] if code else list(positionals[:1])
    else:
        return []
    paths = [tree_root(cwd, w) for w in files if w is not None and w.text != "-"]
    return [ReadFile(p) for p in paths if p is not None and _elsewhere(p, cwd)]


def _elsewhere(path: str, cwd: str | None) -> bool:
    """Whether a file run or compiled may be anything but a plain file below the cwd (a
    link on its way, or outside it): only then is its read worth judging."""
    return cwd is None or not is_within(path, cwd) or real_path(path) != path


#: ``jq`` options that take two values (a name, then a value or a file it reads).
_JQ_PAIRS = {"--arg": False, "--argjson": False, "--slurpfile": True, "--rawfile": True}


def _jq_named_files(args: list[Word]) -> tuple[list[Word], list[Word]]:
    """``jq``'s arguments without its two-value options, and the files those read
    (``jq -n --rawfile k ~/.ssh/id_rsa '$k'``: the key is read, not the filter)."""
    rest: list[Word] = []
    files: list[Word] = []
    i = 0
    while i < len(args):
        reads = _JQ_PAIRS.get(args[i].text)
        if reads is None:
            rest.append(args[i])
            i += 1
            continue
        if reads:
            files += args[i + 2 : i + 3]
        i += 3
    return rest, files
