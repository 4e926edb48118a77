"""Programs that run another program: their options, read exactly, or not at all.

A wrapper (``env``, ``timeout``, ``nice``, ``xargs``...) is seen through only when every
option before the wrapped command is one it really has, spelled out or abbreviated the
way ``getopt_long`` accepts (a unique prefix: ``timeout --sig KILL 5 cmd``). Anything
else (an unknown or ambiguous option, a word that may expand to several words) makes
:func:`unwrap` return ``None``, and the caller reports the command as ``Unknown``: a
misread option would shift the words and hide the real program.

>>> from exomonad.policy.shell_lex import Word
>>> u = unwrap("timeout", [Word(t) for t in "--sig KILL 5 git push".split()])
>>> [w.text for w in u.rest] if u else None
['git', 'push']
>>> unwrap("timeout", [Word(t) for t in "--bogus 5 git push".split()]) is None
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_parse import is_assignment
from exomonad.util.digits import is_number

__all__ = [
    "OPAQUE_RUNNERS",
    "PRIV_WITH_ARG",
    "SCRIPT_OPTS",
    "WRAPPERS",
    "OptSpec",
    "Unwrapped",
    "long_option",
    "parse_options",
    "skip_options",
    "unwrap",
    "word_set",
]


@dataclass(frozen=True, slots=True)
class OptSpec:
    """The options of one program, as ``getopt_long`` sees them.

    ``short_opt`` takes a value only when attached (``xargs -i{}``); ``long_opt`` only
    after ``=``. ``legacy_number`` accepts ``-5`` (``nice -5``).
    """

    short_flags: str = ""
    short_arg: str = ""
    short_opt: str = ""
    long_flags: frozenset[str] = frozenset()
    long_arg: frozenset[str] = frozenset()
    long_opt: frozenset[str] = frozenset()
    legacy_number: bool = False


def word_set(text: str) -> frozenset[str]:
    """The words of ``text``, as a set (for tables of names)."""
    return frozenset(text.split())


#: Wrappers seen through, and their options.
WRAPPERS: dict[str, OptSpec] = {
    "env": OptSpec(
        "i0v",
        "uCS",
        "",
        word_set("ignore-environment null debug help version list-signal-handling"),
        word_set("unset chdir split-string"),
        word_set("block-signal default-signal ignore-signal"),
    ),
    "timeout": OptSpec(
        "v", "sk", "", word_set("preserve-status foreground verbose"), word_set("signal kill-after")
    ),
    "nice": OptSpec("", "n", "", frozenset(), word_set("adjustment"), legacy_number=True),
    "nohup": OptSpec(),
    "time": OptSpec(
        "pvqa", "fo", "", word_set("portability verbose quiet append"), word_set("format output")
    ),
    "stdbuf": OptSpec("", "ioe", "", frozenset(), word_set("input output error")),
    "setsid": OptSpec("cfw", "", "", word_set("ctty fork wait")),
    "command": OptSpec("pvV"),
    "exec": OptSpec("cl", "a"),
    "builtin": OptSpec(),
    "noglob": OptSpec(),
    "nocorrect": OptSpec(),
    "chronic": OptSpec("ev"),
    "catchsegv": OptSpec(),
    "xargs": OptSpec(
        "0prtxo",
        "aEdILnPs",
        "eil",
        word_set("null interactive no-run-if-empty verbose exit show-limits open-tty"),
        word_set("arg-file delimiter max-args max-procs max-chars process-slot-var"),
        word_set("replace eof max-lines"),
    ),
    "watch": OptSpec(
        "bcegtwxpr",
        "nq",
        "d",
        word_set("beep color no-color errexit chgexit no-title no-wrap no-linewrap exec precise"),
        word_set("interval equexit"),
        word_set("differences"),
    ),
    # sshpass: types a password into the command it runs (found probing: `sshpass -p x
    # ssh h` was allowed, the ssh inside it unread); `-f FILE` reads the password.
    "sshpass": OptSpec("hvV", "fdpP", "e"),
    "flock": OptSpec(
        "sxenuoFV",
        "wEc",
        "",
        word_set("shared exclusive unlock nonblock nb close no-fork verbose"),
        word_set("timeout wait conflict-exit-code command"),
    ),
}

#: Programs that run a command we do not read (their arguments or their stdin):
#: always ``Unknown``. (Programs that start one outside the agent's process tree are
#: :data:`exomonad.policy.shell_escape.DETACHERS`.)
OPAQUE_RUNNERS = word_set(
    "parallel sem strace ltrace valgrind gdb perf chrt taskset ionice unshare nsenter "
    "runuser setpriv prlimit numactl cgexec chroot fakeroot faketime firejail bwrap "
    "proot xvfb-run torsocks proxychains proxychains4 tsocks dbus-run-session "
    "ssh-agent sg newgrp pkexec expect nix-shell direnv dotenv mise asdf devbox conda "
    "micromamba mamba entr inotifywait reflex nodemon ts-node busybox toybox alias "
    "enable csh tcsh pwsh powershell nu xonsh elvish rc es ion osh ysh oil rbash posh "
    "flatpak-spawn distrobox"
)

#: ``sudo``/``doas`` options that take a value (the command follows them).
PRIV_WITH_ARG: dict[str, frozenset[str]] = {
    "sudo": word_set(
        "-u -g -C -D -h -p -r -t -U -T --user --group --chdir --host --prompt --role "
        "--type --other-user --close-from --command-timeout"
    ),
    "doas": word_set("-u -C"),
}
#: ``script``'s options (``-c CMD`` is the command it runs).
SCRIPT_OPTS = OptSpec(
    "aefqkrE",
    "cEOIBTm",
    "t",
    word_set("append return flush quiet force"),
    word_set("command echo log-out log-in log-io log-timing logging-format output-limit"),
    word_set("timing"),
)


@dataclass(frozen=True, slots=True)
class Unwrapped:
    """What a wrapper runs: ``rest`` (a command), or ``script`` (``env -S``, ``flock -c``).

    ``chdir`` is a directory the command runs in (``env -C``); ``probe`` is true for
    ``command -v`` (nothing runs); ``clears_env`` for ``env -i``/``env -``/``exec -c``
    (the command runs without the agent's environment); ``writes`` are files the wrapper
    itself writes: ``time -o FILE`` (any text, by ``-f``: found as a worker appending an
    ``fsmonitor`` to the lead's ``.git/config``), ``flock FILE`` (made when missing: an
    empty hook in the lead's ``.git/hooks``).
    """

    rest: list[Word] = field(default_factory=list)
    script: Word | None = None
    chdir: Word | None = None
    opts: dict[str, Word | None] = field(default_factory=dict)
    probe: bool = False
    clears_env: bool = False
    writes: tuple[Word, ...] = ()


def long_option(name: str, spec: OptSpec) -> str | None:
    """The long option ``name`` abbreviates (unique prefix), or None."""
    every = spec.long_flags | spec.long_arg | spec.long_opt
    if name in every:
        return name
    hits = [o for o in every if o.startswith(name)]
    return hits[0] if len(hits) == 1 and name else None


def parse_options(args: list[Word], spec: OptSpec) -> tuple[int, dict[str, Word | None]] | None:
    """Index of the first operand and the options (``-x``/``--long`` keys); None if any
    option is unknown, ambiguous or not a plain word.

    >>> spec = WRAPPERS["env"]
    >>> parse_options([Word("-vS"), Word("git push"), Word("x")], spec)[0]
    2
    >>> parse_options([Word("--uns"), Word("X"), Word("git")], spec)[1]["--unset"].text
    'X'
    """
    i, opts = 0, dict[str, Word | None]()
    while i < len(args):
        word = args[i]
        text = word.text
        if word.dynamic or word.glob:
            return None
        if text == "--":
            return i + 1, opts
        if not text.startswith("-") or text == "-":
            return i, opts
        if text.startswith("--"):
            name, eq, value = text[2:].partition("=")
            full = long_option(name, spec)
            if full is None:
                return None
            if full in spec.long_arg and not eq:
                if i + 1 >= len(args) or args[i + 1].dynamic or args[i + 1].glob:
                    return None
                opts["--" + full] = args[i + 1]
                i += 2
                continue
            if eq and full in spec.long_flags:
                return None
            opts["--" + full] = Word(value) if eq else None
            i += 1
            continue
        if spec.legacy_number and is_number(text[1:]):
            opts["-n"] = Word(text[1:])
            i += 1
            continue
        j = 1
        while j < len(text):
            c = text[j]
            if c in spec.short_flags:
                opts["-" + c] = None
                j += 1
                continue
            if c in spec.short_opt:
                opts["-" + c] = Word(text[j + 1 :])
                break
            if c not in spec.short_arg:
                return None
            if j + 1 < len(text):
                opts["-" + c] = Word(text[j + 1 :])
            elif i + 1 < len(args) and not args[i + 1].dynamic and not args[i + 1].glob:
                i += 1
                opts["-" + c] = args[i]
            else:
                return None
            break
        i += 1
    return i, opts


def _get(opts: dict[str, Word | None], *keys: str) -> Word | None:
    for key in keys:
        if opts.get(key) is not None:
            return opts[key]
    return None


def unwrap(name: str, args: list[Word]) -> Unwrapped | None:
    """What wrapper ``name`` with ``args`` runs; None when it cannot be read exactly."""
    spec = WRAPPERS[name]
    parsed = parse_options(args, spec)
    if parsed is None:
        return None
    start, opts = parsed
    rest = args[start:]
    if any(w.glob for w in rest[:1]):
        return None
    if name == "command" and ("-v" in opts or "-V" in opts):
        return Unwrapped(probe=True)
    if name == "env":
        clears = "-i" in opts or "--ignore-environment" in opts
        if rest and rest[0].text == "-":
            rest, clears = rest[1:], True
        while rest and is_assignment(rest[0]):
            if rest[0].dynamic or rest[0].glob:
                return None  # `env X=$Y cmd`: an argument, so word splitting applies
            rest = rest[1:]
        split = _get(opts, "-S", "--split-string")
        if split is not None:  # its words are env's own: options (`-S'-i ...'`) included
            again = Word("env " + split.text, split.dynamic, split.quoted, split.subs, split.glob)
            return Unwrapped(rest, again, _get(opts, "-C", "--chdir"), opts, clears_env=clears)
        return Unwrapped(rest, None, _get(opts, "-C", "--chdir"), opts, clears_env=clears)
    if name == "time":
        out = _get(opts, "-o", "--output")
        return Unwrapped(rest, None, None, opts, writes=(out,) if out is not None else ())
    if name in ("timeout", "flock"):
        if not rest or rest[0].dynamic or rest[0].glob:
            return None  # the duration / the lock file: a split word would shift the rest
        lock = rest[0]
        writes = () if name == "timeout" or (is_number(lock.text) and len(rest) == 1) else (lock,)
        script = _get(opts, "-c", "--command")
        if name == "flock" and len(rest) >= 2 and rest[1].text in ("-c", "--command"):
            script = rest[2] if len(rest) > 2 else None
            if script is None:
                return None
        elif name == "flock" and len(rest) >= 2 and rest[1].text.startswith("-"):
            return None
        if script is not None:
            return Unwrapped(script=script, writes=writes)
        return Unwrapped(rest[1:], None, None, opts, writes=writes)
    return Unwrapped(rest, None, None, opts, clears_env=name == "exec" and "-c" in opts)


def skip_options(args: list[Word], with_arg: frozenset[str]) -> tuple[int, dict[str, Word]]:
    """Index of the first operand after leading options, and the options' values
    (``sudo``, ``su``: read loosely, as what follows is judged privileged anyway).

    >>> skip_options([Word("-u"), Word("root"), Word("-E"), Word("ls")], PRIV_WITH_ARG["sudo"])[0]
    3
    """
    i, values = 0, dict[str, Word]()
    while i < len(args):
        text = args[i].text
        if text == "--":
            return i + 1, values
        if not text.startswith("-") or text == "-":
            break
        key = text.split("=", 1)[0]
        if key in with_arg and "=" not in text and i + 1 < len(args):
            values[key] = args[i + 1]
            i += 2
            continue
        if key in with_arg:
            values[key] = Word(text.split("=", 1)[1], args[i].dynamic)
        elif len(text) > 2 and text[:2] in with_arg and not text.startswith("--"):
            values[text[:2]] = Word(text[2:], args[i].dynamic)
        else:
            values[key] = Word("")
        i += 1
    return i, values
