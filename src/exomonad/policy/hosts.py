"""The host a URL or a ``[user@]host[:port]`` names, as the network clients read it."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["host_of"]


def host_of(url: str) -> str | None:
    """The host of a URL or ``[user@]host[:port][/path]``; None if there is none.

    >>> host_of("https://user@API.example.com:8443/x"), host_of("example.org/a"), host_of("-")
    ('api.example.com', 'example.org', None)
    """
    text = url if "://" in url else "//" + url
    try:
        host = urlsplit(text).hostname
    except ValueError:
        return None
    if not host or not any(c.isalnum() for c in host) or any(c.isspace() for c in host):
        return None
    return host.lower()
