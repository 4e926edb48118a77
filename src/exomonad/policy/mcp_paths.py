"""Paths and hosts in the arguments of other MCP servers' tools, as the writes and the
network access they may be.

ExoMonad cannot know what ``mcp__filesystem__write_file`` or any other server's tool does
with the paths it is given, so it assumes the worst: every path-like string in the
arguments (looked for at any depth, bounded) may be written. The same rules then apply
as to the agent's own file tools: its worktree is fine, elsewhere goes up the cascade,
and ExoMonad's state, an agent's hook settings and Claude Code's team files are denied.

>>> [a.path for a in possible_writes({"path": "notes/a.md", "opts": {"to": "/etc/x"}}, "/w")]
['/w/notes/a.md', '/etc/x']
>>> possible_writes({"query": "hello world", "n": 3}, "/w")
[]

A URL in the arguments, or a value under a key naming one (``url``, ``baseUrl``,
``endpoint``, ``host``, ``domain``, ``address``, ``server``, ``link``, ``site``...), is a
host the server may be made to reach for the caller: network access to it (found
probing: ``mcp__fetch__get_url`` to ``http://127.0.0.1:9/?t=secret``, a read by its
name, was allowed; a DNS lookup of ``secret.attacker.example`` tells the attacker's name
server). A URL is read as a WHATWG URL parser (Node's ``fetch``, Chromium) reads one:
control characters and spaces around it dropped, tabs and newlines in it too, and
``http``, ``https``, ``ws``, ``wss``, ``ftp`` and ``file`` followed by ``:`` with any
``/`` or ``\\`` (``http:\\\\h/``, ``http:h/`` and ``\\x01http://h/`` were allowed). A
mapping's keys are looked at as its values are. A URL inside other text (a search's
``q``, ``see https://a.example/``) is not one the server is asked to reach.

>>> possible_hosts({"url": "http://127.0.0.1:9/?t=x", "q": "see https://a.example/ too"})
[Network(host='127.0.0.1')]
>>> possible_hosts({"host": "10.0.0.1", "port": 9, "opts": {"next": "WSS://B.example/s"}})
[Network(host='10.0.0.1'), Network(host='b.example')]
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import Any

from exomonad.policy.actions import Network, WriteFile
from exomonad.policy.file_urls import file_url_paths
from exomonad.policy.hosts import host_of
from exomonad.policy.mcp_names import name_words
from exomonad.policy.shell_paths import path_readings

__all__ = ["MAX_PATHS", "possible_hosts", "possible_writes"]

#: At most this many strings are taken as paths, and this deep; beyond either, an unknown
#: path is assumed (found probing: 32 decoys in the worktree hid a 33rd path in the
#: lead's ``.git/hooks``, and a path nested 20 deep was not looked at).
MAX_PATHS = 32
_MAX_DEPTH = 16
_MAX_PATH = 4096


class _Unknown:
    """A value that may hold a path we do not read: the worst is assumed."""


#: What is dropped around a URL: by a WHATWG URL parser (C0 controls and space), and by
#: a server that trims first (JavaScript's ``trim()``: no-break spaces, the Unicode
#: spaces and line ends, U+FEFF; found probing: U+00A0 before a URL under an argument
#: named ``q`` hid it). Python's whitespace covers JavaScript's but U+FEFF.
_AROUND = "".join(c for c in map(chr, range(0x3001)) if c <= " " or c.isspace()) + "\ufeff"
_INSIDE = str.maketrans("", "", "\t\n\r")


def _url_text(text: str) -> str:
    """``text`` as a URL parser reads it: controls and spaces around it (also those a
    ``trim()`` takes) and tabs and newlines anywhere in it dropped."""
    return text.strip(_AROUND).translate(_INSIDE)


def _file_urls(text: str) -> list[str]:
    """The paths a ``file:`` URL may name once a WHATWG parser and Node's
    ``fileURLToPath`` have read it (``\\`` a ``/``, ``file:p/x`` is ``/p/x``), escapes
    decoded (:func:`~.file_urls.file_url_paths`); none for text that is no ``file:``
    URL."""
    url = _url_text(text)
    if url[:5].lower() != "file:":
        return []
    rest = url[5:].replace("\\", "/")
    return file_url_paths("file:" + (rest if rest.startswith("/") else "/" + rest)) or []


def _paths_of(text: str) -> list[str | _Unknown]:
    """The paths ``text`` may be: a ``file:`` URL's as written and each way a server may
    read it (found probing: ``file:///p/%2Eexomonad/lead.token`` was asked as a write of
    ``/p/%2Eexomonad``, not refused; ``file:`` then backslashes, or a control character
    first, was allowed), its ``%2e%2e`` a ``..`` the system takes after the links before
    it (:func:`~.file_urls.file_url_paths`). Known paths first."""
    found = _path_of(text)
    out: list[str | _Unknown] = [*_file_urls(text)]
    if isinstance(found, str):
        out += file_url_paths(text.strip(" ")) or []
    if found is not None:
        out.append(found)
    return list(dict.fromkeys(out))


def _path_of(text: str) -> str | _Unknown | None:
    """The path ``text`` may be, an unknown one, or None for text that names none: a
    bare word (``hello``, ``README.md``) or a URL. A relative path with spaces, a bare
    dotfile (``.mcp.json``, ``.git``, ``..``) and ``file://`` URLs are paths (found
    probing); one too long or with control characters is an unknown path."""
    text = text.strip(" ")
    if text[:7].lower() == "file://":
        text = text[len("file://") :] or "/"
    elif "://" in text:
        return None
    pathish = "/" in text or text.startswith((".", "~")) or ".exomonad" in text
    if not pathish:
        return None
    if len(text) > _MAX_PATH or any(ord(c) < 32 or c == "\x7f" for c in text):
        return _Unknown()
    return text


def _strings(value: Any, depth: int = 0) -> list[str | _Unknown]:
    if depth > _MAX_DEPTH:
        return [_Unknown()] if isinstance(value, (Mapping, list, tuple, str)) else []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):  # a key may be a path too: {"files": {PATH: text}}
        return [s for k, v in value.items() for s in [str(k), *_strings(v, depth + 1)]]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v, depth + 1)]
    return []


def possible_writes(tool_input: Mapping[str, Any], cwd: str | None) -> list[WriteFile]:
    """A :class:`WriteFile` for each path-like string in ``tool_input`` (resolved against
    ``cwd``; ``~`` expanded); an unknown one (``WriteFile(None)``) for what cannot be
    read: too deep, too many, too long."""
    out: list[WriteFile] = []
    found_all = [p for item in _strings(tool_input)
                 for p in (_paths_of(item) if isinstance(item, str) else [item])]  # fmt: skip
    for found in found_all:
        if len(out) >= MAX_PATHS or isinstance(found, _Unknown):
            out.append(WriteFile(None))  # where, we cannot tell: the worst is assumed
            break
        readings = path_readings(cwd, posixpath.expanduser(found))  # both, where a link
        out += [WriteFile(p) for p in readings] if readings else [WriteFile(None)]  # before ..
    return out


#: The last word of an argument's name that says its value is a URL or a host
#: (``baseUrl``, ``domain_name``, ``serverAddress``, ``mail_server``, ``website``).
_URL_KEYS = frozenset(
    {"url", "urls", "uri", "uris", "endpoint", "endpoints", "host", "hosts", "hostname",
     "hostnames", "domain", "domains", "name", "address", "addresses", "addr", "server",
     "servers", "link", "links", "href", "hrefs", "site", "sites", "website", "websites"}
)  # fmt: skip
#: Words that say so wherever they are in an argument's name (``urlString``).
_URL_WORDS = frozenset({"url", "urls", "uri", "uris", "href", "hrefs"})
#: Names whose last word is ``name`` but that name a host (``domain_name``, ``hostName``).
_HOST_NAMES = frozenset({"domain", "host", "server"})
#: A value that is a URL (not ``file:``, a path: :func:`possible_writes`). A URL inside
#: other text (a search's ``q``) is not one the server is asked to reach.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}://")
#: WHATWG's special schemes but ``file``: ``:`` then any ``/`` and ``\``, or none.
_SPECIAL = re.compile(r"(?:https?|wss?|ftp):", re.IGNORECASE)


def _keyed_strings(value: Any, key: str = "", depth: int = 0) -> list[tuple[str, str | None]]:
    """Each string in ``value`` with the name of the argument holding it (a list's items
    keep its name); None in place of what is too deep to read."""
    if depth > _MAX_DEPTH:
        return [(key, None)] if isinstance(value, (Mapping, list, tuple, str)) else []
    if isinstance(value, str):
        return [(key, value)]
    if isinstance(value, Mapping):  # a key is read as a value named nothing
        return [s for k, v in value.items()
                for s in [("", str(k)), *_keyed_strings(v, str(k), depth + 1)]]  # fmt: skip
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _keyed_strings(v, key, depth + 1)]
    return []


def _host_in(key: str, text: str) -> tuple[bool, str | None]:
    """Whether ``text`` names a host to reach (a URL, or any value of an argument named
    as a URL or host is), and which (None: it cannot be read)."""
    value = _url_text(text)
    special = _SPECIAL.match(value)
    if special is not None:  # http:\\h, http:h, https:/\h: http://h to a WHATWG parser
        rest = value[special.end() :].replace("\\", "/").lstrip("/")
        return True, host_of(special.group(0).lower() + "//" + rest)
    scheme = _SCHEME.match(value)
    if scheme is not None:
        return (not scheme.group(0).lower().startswith("file:"), host_of(value))
    if _names_host(key) and value and not _file_urls(value):
        return True, host_of(value)
    return False, None


def _names_host(key: str) -> bool:
    """Whether an argument named ``key`` holds a URL or a host (see :data:`_URL_KEYS`)."""
    words = name_words(key)
    if not words or (words[-1] == "name" and (len(words) < 2 or words[-2] not in _HOST_NAMES)):
        return False
    return words[-1] in _URL_KEYS or any(w in _URL_WORDS for w in words)


def possible_hosts(tool_input: Mapping[str, Any]) -> list[Network]:
    """Network access to each host in ``tool_input`` (see the module doc), once each; to
    an unknown host for a URL whose host cannot be read, and for what is too deep or too
    many to look at."""
    out: list[Network] = []
    for key, text in _keyed_strings(tool_input):
        named, host = (True, None) if text is None else _host_in(key, text)
        if named and Network(host) not in out:
            out.append(Network(host))
        if len(out) > MAX_PATHS:
            return [*out[:MAX_PATHS], Network(None)]
    return out
