"""The local commands a remote client runs on its way to a host.

``ssh -o ProxyCommand=CMD``, ``LocalCommand``, ``KnownHostsCommand``, a configuration
file given with ``-F`` (whose commands run the same way), ``scp -S PROGRAM``, ``sftp
-S``/``-D``, ``rsync -e CMD``, ``nc -e``/``-c``, ``ncat --exec``/``--sh-exec``/
``--lua-exec``, ``mosh --ssh``, dropbear's ``dbclient -J``: each runs a program here,
with the agent's rights, whatever the host does. Found probing: each was asked only as
"network access to H", so a person approving a connection also ran ``cat
../../.exomonad/lead.token`` unseen. They are now
:class:`~exomonad.policy.actions.Unknown` parts of the question, named.

An ``-o`` is read as ssh reads it (found probing again: ``-o '"ProxyCommand" CMD'`` and
``-o '=ProxyCommand=CMD'`` ran CMD, asked only as network access): the keyword may be
quoted, follow a ``=`` or whitespace, be in any case; any keyword ending in ``Command``
is named, and so are the libraries ssh loads (``-I``, ``PKCS11Provider``,
``SecurityKeyProvider``) and the program ``XAuthLocation`` names. The files ssh writes
(``-E`` its log, ``UserKnownHostsFile``, a control socket) are judged as writes
(:func:`ssh_files`).

>>> from exomonad.policy.shell_env import scan_options
>>> from exomonad.policy.shell_lex import Word
>>> _, opts = scan_options([Word("-oProxyCommand=nc x 22"), Word("h")], frozenset({"-o"}))
>>> local_commands("ssh", opts)
[Unknown(raw='ssh runs a local command: -o ProxyCommand=nc x 22')]
"""

from __future__ import annotations

import re

from exomonad.policy.actions import Action, Unknown, WriteFile
from exomonad.policy.shell_env import Options
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_paths import resolve_path

__all__ = ["LOCAL_COMMAND_OPTIONS", "local_commands", "ssh_files", "ssh_keyword"]

#: ssh configuration keywords (lower case) that load a library, name a program run here,
#: or read other configuration (refused on the command line today; named all the same).
_SSH_LOADS = frozenset({"pkcs11provider", "securitykeyprovider"})
_SSH_PROGRAMS = frozenset({"xauthlocation", "include", "match"})
#: ssh configuration keywords (lower case) naming files ssh writes or sockets it connects to.
_SSH_WRITES = frozenset({"userknownhostsfile", "controlpath", "identityagent"})
#: The clients whose ``-o`` is ssh's.
_SSH_LIKE = ("ssh", "scp", "sftp")
#: Per client: options whose value is a program or command run here.
_RUNS: dict[str, tuple[str, ...]] = {
    "ssh": ("-F",),
    "scp": ("-F", "-S"),
    "sftp": ("-F", "-S", "-D"),
    "rsync": ("-e", "--rsh"),
    "nc": ("-e", "-c"),
    "ncat": ("-e", "-c", "--exec", "--sh-exec", "--lua-exec"),
    "mosh": ("--ssh", "--client"),
    "dbclient": ("-J",),
}
#: The options of :data:`_RUNS` that take a value (for the clients' option scans).
LOCAL_COMMAND_OPTIONS = " ".join(sorted({o for opts in _RUNS.values() for o in opts}))
#: An rsync remote shell that is plain ssh (``-e ssh``, ``-e 'ssh -p 2222'``): ssh, then
#: flags among ``-p -i -l -q -4 -6 -v -C``, each with at most one plain value (attached,
#: or the next word).
_SSH_FLAG = re.compile(r"-[pilq46vC][\w.@/~-]*")
_SSH_VALUE = re.compile(r"[\w.@/~-]+")
#: ssh's whitespace and the separators its configuration lines use.
_SPACE = " \t\r\n"
#: A ``ProxyJump`` list that is plain hosts (``user@host:port,host2``): anything else
#: (a space, an option) is read by an ssh that runs it as a command line.
_PLAIN_JUMPS = re.compile(r"[\w.@:,\[\]%-]*")


def _plain_ssh(text: str) -> bool:
    """Whether the remote shell ``text`` is plain ssh, read word by word (a regular
    expression with nested repeats took exponential time on ``ssh -p  -p ... !``: 22 s
    for 14 pairs).

    >>> _plain_ssh("ssh -p 2222 -i ~/.ssh/k -q"), _plain_ssh("ssh -o ProxyCommand=x")
    (True, False)
    """
    words = text.split()
    if not words or words[0] not in ("ssh", "/usr/bin/ssh"):
        return False
    after_flag = False
    for word in words[1:]:
        if _SSH_FLAG.fullmatch(word):
            after_flag = len(word) == 2  # `-p2222` holds its value already
        elif after_flag and _SSH_VALUE.fullmatch(word):
            after_flag = False
        else:
            return False
    return True


def _strdelim(text: str) -> tuple[str | None, str]:
    """OpenSSH's ``strdelim``: the first token of ``text`` (a quoted one unquoted, or
    up to whitespace or one ``=``) and what follows it; None for an unmatched quote."""
    at = next((i for i, c in enumerate(text) if c in _SPACE or c in '"='), None)
    if at is None:
        return text, ""
    if text[at] == '"':
        text = text[:at] + text[at + 1 :]
        close = text.find('"', at)
        if close < 0:
            return None, ""
        return text[:close], text[close + 1 :].lstrip(_SPACE)
    token, rest = text[:at], text[at + 1 :].lstrip(_SPACE)
    if text[at] != "=" and rest.startswith("="):
        rest = rest[1:].lstrip(_SPACE)
    return token, rest


def ssh_keyword(line: str) -> tuple[str, str]:
    """The keyword (lower case) of an ssh configuration line, read as ssh reads ``-o``
    (a leading ``=`` or whitespace gives an empty first token, and ssh takes the next),
    and its value; an unreadable line gives the loosest reading of its first letters.

    >>> ssh_keyword('"ProxyCommand" sh p.sh'), ssh_keyword("=ProxyCommand=id")
    (('proxycommand', 'sh p.sh'), ('proxycommand', 'id'))
    >>> ssh_keyword('Proxy"Command" x')[0], ssh_keyword(" Port 22")
    ('proxycommand', ('port', '22'))
    """
    line = line.rstrip(_SPACE)
    keyword, rest = _strdelim(line)
    if keyword == "":
        keyword, rest = _strdelim(rest)
    if keyword is None:  # ssh ignores the line; read loosely all the same
        letters = line.lstrip(_SPACE + '="').replace('"', "")
        end = next((i for i, c in enumerate(letters) if not c.isalnum()), len(letters))
        return letters[:end].lower(), letters[end:]
    return keyword.lower(), rest


def _what_runs(keyword: str) -> str | None:
    """What an ssh keyword does here: runs a command, loads a library; None: neither."""
    if keyword == "remotecommand":
        return "runs a command on the host"
    if keyword == "permitlocalcommand":  # yes or no: LocalCommand, if any, is named
        return None
    if keyword.endswith("command") or keyword in _SSH_PROGRAMS:
        return "runs a local command"
    if keyword in _SSH_LOADS:
        return "loads a local library"
    return None


def local_commands(name: str, opts: Options, shown: str | None = None) -> list[Action]:
    """What ``name`` (a client of :data:`_RUNS`, called ``shown`` on the command line:
    ``slogin`` is ssh) runs here, by its options ``opts``."""
    found: list[str] = []
    if name in _SSH_LIKE:
        for value in opts.get("-o", []):
            if value is None:
                continue
            text = value.text.strip()
            if value.dynamic:  # `-o "$X"`: any keyword, ProxyCommand too
                found.append(f"may run a local command (set at run time): -o {text}")
                continue
            keyword, rest = ssh_keyword(text)
            does = _what_runs(keyword)
            if keyword == "proxyjump" and not _PLAIN_JUMPS.fullmatch(rest.strip()):
                does = "runs a local command"
            if does is not None:
                found.append(f"{does}: -o {text}")
    if name == "ssh":
        for option, does in (("-I", "loads a local library"), ("-J", "runs a local command")):
            for value in opts.get(option, []):
                text = "" if value is None else value.text
                jumps = value is not None and not value.dynamic and _PLAIN_JUMPS.fullmatch(text)
                if option == "-I" or not jumps:
                    found.append(f"{does}: {option} {text}".rstrip())
    for option in _RUNS.get(name, ()):
        for value in opts.get(option, []):
            text = "" if value is None else value.text
            plain = value is not None and not value.dynamic and _plain_ssh(text)
            if name != "rsync" or not plain:
                found.append(f"runs a local command: {option} {text}".rstrip())
    return [Unknown(f"{shown or name} {what}") for what in found]


def ssh_files(name: str, opts: Options, cwd: str | None) -> list[Action]:
    """The files ``ssh``/``scp``/``sftp`` write by their options: ``ssh -E LOG`` (it
    appends its log), ``UserKnownHostsFile`` (it adds host keys), a control socket
    (``-S``, ``ControlPath``) or agent socket (``IdentityAgent``) it makes or connects
    to. Found probing: ``ssh -E ../../Makefile h`` and ``-oUserKnownHostsFile=../../
    Makefile`` wrote the lead's Makefile, asked only as network access to h. ``none``
    writes nothing; a ``~`` or ``%`` token in the path: a path not known here.
    """
    if name not in _SSH_LIKE:
        return []
    paths: list[Word] = []
    if name == "ssh":
        paths += [w for o in ("-E", "-S") for w in opts.get(o, []) if w is not None]
    for value in opts.get("-o", []):
        if value is None or value.dynamic:
            continue
        keyword, rest = ssh_keyword(value.text.strip())
        if keyword in _SSH_WRITES:
            rest = rest.lstrip("=").strip()
            many = rest.split() if keyword == "userknownhostsfile" else [rest]
            paths += [Word(p.strip('"')) for p in many]
    out: list[Action] = []
    for word in paths:
        if word.text.lower() == "none" and not word.dynamic:
            continue
        unknown = word.dynamic or word.text.startswith("~") or "%" in word.text
        out.append(WriteFile(None if unknown else resolve_path(cwd, word)))
    return out
