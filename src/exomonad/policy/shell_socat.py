"""What ``socat`` opens, writes and runs: each of its two addresses is a file, a socket,
a host or a command line.

Found as a worker (a fourth round), each allowed and run in a scratch worktree: ``socat
-u SYSTEM:'echo PWNED' OPEN:../../README.md,trunc`` rewrote the lead's README, and
``socat - EXEC:'git -C /p update-ref refs/heads/main HEAD'`` moved the lead's ``main``.
Now a command address (``SYSTEM:``, ``EXEC:``) is Unknown (its command line is socat's
to split, not the shell's), a file or socket address is a write of its path (a read
when ``-u``/``-U`` makes it the side read from), a network one is :class:`Network`, and
what is not recognised (an address type, an option, socat's own quoting) is Unknown.

>>> from exomonad.policy.shell_lex import Word
>>> socat_actions([Word("-u"), Word("-"), Word("OPEN:../x,creat")], "/w/t")
[WriteFile(path='/w/x')]
>>> socat_actions([Word("-"), Word("exec:sh")], "/w")[0].raw
'socat runs a command: exec:sh'
>>> socat_actions([Word("-V")], "/w")
[]
"""

from __future__ import annotations

from exomonad.policy.actions import Action, Network, ReadFile, Unknown, WriteFile
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_paths import resolve_path
from exomonad.util.digits import is_number

__all__ = ["socat_actions", "socat_commands"]

#: socat's own options that take a value (attached, ``-b8192``, or the next word), and
#: those among them naming a file it writes (its log, a lock file, a dump of the data).
_WITH_VALUE = ("-lf", "-lp", "-b", "-t", "-T", "-L", "-W", "-r", "-R")
_WRITES = frozenset({"-lf", "-L", "-W", "-r", "-R"})
#: Its options that take none (``-d -d``, ``-ly[FACILITY]``, ``-lm[FACILITY]``...).
_FLAGS = frozenset({"-D", "-ls", "-lu", "-lh", "-v", "-x", "-s", "-u", "-U", "-g", "-4", "-6"})
#: Address types running a command line.
_COMMANDS = frozenset({"exec", "system", "shell"})
#: Address types naming a file: a regular file, a named pipe, a UNIX socket.
_FILES = frozenset(
    {"open", "file", "create", "creat", "gopen", "pipe", "fifo", "unix", "local",
     "unix-client", "unix-connect", "unix-listen", "unix-l", "unix-sendto",
     "unix-recvfrom", "unix-recv"}
)  # fmt: skip
#: Address types on the standard streams or a descriptor: nothing of their own.
_STREAMS = frozenset({"-", "stdio", "stdin", "stdout", "stderr", "fd", "pty", "readline"})
#: Network address types (prefixes): a host, or (listening, receiving) any host.
_NETWORK = ("tcp", "udp", "sctp", "openssl", "ssl", "proxy", "socks", "ip", "socket-",
            "vsock", "interface", "tun", "dccp", "udplite", "posixmq")  # fmt: skip
#: Address options naming a file socat writes (``PTY,link=``, ``READLINE,history=``,
#: lock files) or reads.
_OPTION_WRITES = frozenset({"link", "history", "lockfile", "waitlock"})
_OPTION_READS = frozenset(
    {"cert", "key", "dhparams", "dhparam", "cafile", "capath", "egd",
     "proxy-authorization-file", "allow-table", "deny-table", "tcpwrap-etc"}
)  # fmt: skip
#: socat's own quoting and nesting, read by it and not by the shell.
_QUOTING = frozenset("'\"([{\\")


def _options(
    args: list[Word], cwd: str | None
) -> tuple[list[Action], list[Word], str, bool] | None:
    """socat's options: the files they write, the addresses after them, ``-u``/``-U``
    (``""``: neither), and whether only help or a version is printed; None when an
    option is not known."""
    out: list[Action] = []
    way = ""
    i = 0
    while i < len(args) and args[i].text.startswith("-") and args[i].text != "-":
        text = args[i].text
        if text in ("-V", "-?", "-??", "-???") or text.startswith("-h"):
            return [], [], "", True
        key = next((k for k in _WITH_VALUE if text.startswith(k)), None)
        if key is not None:
            attached = text[len(key) :]
            value = Word(attached, args[i].dynamic, args[i].quoted) if attached else None
            if value is None and i + 1 < len(args):
                i, value = i + 1, args[i + 1]
            if key in _WRITES:
                out.append(WriteFile(None if value is None else resolve_path(cwd, value)))
        elif text in _FLAGS or text.startswith(("-ly", "-lm")) or set(text[1:]) == {"d"}:
            way = text[1] if text in ("-u", "-U") else way
        else:
            return None
        i += 1
    return out, args[i:], way, False


def socat_commands(args: list[Word]) -> list[str] | None:
    """The command lines ``socat ARGS`` runs (its ``SYSTEM:``/``EXEC:`` addresses), for
    a classifier that can read them as nested shell commands; None when the addresses
    cannot be read. ``EXEC``'s line is split by socat at blanks, ``SYSTEM``'s by ``sh``.

    >>> socat_commands([Word("-u"), Word("SYSTEM:echo hi"), Word("OPEN:x")])
    ['echo hi']
    """
    parsed = _options(args, None)
    if parsed is None:
        return None
    found: list[str] = []
    for word in parsed[1]:
        for part in word.text.split("!!"):
            head, colon, rest = part.partition(":")
            if colon and head.lower() in _COMMANDS:
                if word.dynamic or _QUOTING.intersection(rest) or "," in rest:
                    return None
                found.append(rest)
    return found


def socat_actions(args: list[Word], cwd: str | None) -> list[Action]:
    """What ``socat ARGS`` run in ``cwd`` opens, writes and runs."""
    raw = "socat " + " ".join(w.text for w in args)
    parsed = _options(args, cwd)
    if parsed is None:
        return [Unknown(f"socat with an option not known: {raw}")]
    out, addresses, way, prints = parsed
    if prints:
        return []
    if len(addresses) != 2:
        return [Unknown(f"socat takes two addresses: {raw}")]
    for k, word in enumerate(addresses):
        if word.dynamic or word.glob:
            return [Unknown(f"socat address chosen at run time: {word.text}")]
        parts = word.text.split("!!")
        for j, part in enumerate(parts):
            reads = (len(parts) == 2 and j == 0) or (len(parts) == 1 and way == "uU"[k])
            found = _address(part, reads, word, cwd)
            if found is None:
                return [Unknown(f"socat address not read: {part}")]
            out += found
    return out


def _address(text: str, reads: bool, word: Word, cwd: str | None) -> list[Action] | None:
    """One single address's actions (``reads``: only read from); None if not read."""
    if _QUOTING.intersection(text) or not text:
        return None
    cut = min((text.find(c) for c in ":," if c in text), default=len(text))
    head, sep, after = text[:cut], text[cut : cut + 1], text[cut + 1 :]
    kind = "fd" if is_number(head) else head.lower()
    params, opts = ("", after) if sep == "," else after.partition(",")[::2]
    if "/" in head:  # GOPEN implied: a path before any ':' or ','
        if sep == ":":
            return None
        kind, params, opts = "gopen", head, after
    out = _address_options(opts, word, cwd)
    if out is None:
        return None
    if kind in _COMMANDS:
        return [Unknown(f"socat runs a command: {text}")]
    if kind in _FILES:
        path = Word(params, word.dynamic, word.quoted)
        plain = reads and not opts
        where = resolve_path(cwd, path)
        return [*out, ReadFile(where) if plain else WriteFile(where)]
    if kind in _STREAMS:
        return out
    if kind.startswith("abstract"):
        return None
    if kind.startswith(_NETWORK):
        listens = any(s in kind for s in ("listen", "-l", "recv", "server"))
        single = kind.startswith(("socket-", "ip", "interface", "tun"))
        host = None if listens or single or not params else params.split(":", 1)[0]
        return [*out, Network(host)]
    return None


def _address_options(opts: str, word: Word, cwd: str | None) -> list[Action] | None:
    """The files an address's options name; None for an option whose value may be a
    path and is not known."""
    out: list[Action] = []
    for opt in opts.split(",") if opts else []:
        key, eq, value = opt.partition("=")
        key = key.lower()
        path = Word(value, word.dynamic, word.quoted)
        if key in _OPTION_WRITES:
            out.append(WriteFile(resolve_path(cwd, path) if eq else None))
        elif key in _OPTION_READS:
            out.append(ReadFile(resolve_path(cwd, path) if eq else None))
        elif "/" in value:
            return None
    return out
