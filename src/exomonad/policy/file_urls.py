"""``file:`` URLs: the path a program hands the system for one.

curl removes a URL's dot segments as written and then decodes it, so a ``%2e%2e`` reaches
the system as a ``..`` it takes after the links before it; a WHATWG parser (Node's
``fileURLToPath``) reads ``%2e`` as a dot and ``\\`` as ``/`` first. Each path is judged
as any path is (links followed before its ``..``). Used for curl's URLs
(:mod:`~exomonad.policy.shell_network`), WebFetch (:mod:`~exomonad.policy.classify`)
and other MCP servers' arguments (:mod:`~exomonad.policy.mcp_paths`).
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote

from exomonad.policy.actions import Action, ReadFile, Unknown, WriteFile
from exomonad.policy.shell_paths import path_readings

__all__ = [
    "FILE_URL",
    "before_pattern",
    "file_url_actions",
    "file_url_path",
    "file_url_paths",
    "file_url_readings",
]

#: A ``file:`` URL (any case; ``file:/p``, ``file:///p``, ``file://localhost/p``): its path,
#: query and fragment.
FILE_URL = re.compile(r"file:(?://[^/]*)?(/.*)", re.IGNORECASE | re.DOTALL)


def file_url_path(url: str) -> str | None:
    """The path curl hands the system for a ``file:`` URL: the path up to a query or
    fragment (``?``, ``#``), its dot segments removed as written (RFC 3986), then its
    percent-escapes decoded, so a ``%2e%2e`` reaches the system as a ``..``, which it
    takes after the links before it (found trying the gate as a worker: with ``s -> .``,
    ``curl -T up.txt file://<wt>/s/s/%2e%2e/%2e%2e/Makefile`` overwrote the lead's
    ``Makefile``, judged as ``<wt>/Makefile``). Not normalised: judge it as any path
    (:func:`file_url_readings`). None for any other URL. A URL curl's globbing would
    expand is not read here (:func:`~exomonad.policy.shell_http_files.globbed`): found probing, ``file://<worktree>/{x}/
    ../../../%2Eexomonad/lead%2Etoken`` printed the token.

    >>> file_url_path("FILE://localhost/p/%2Eexomonad/lead%2Etoken"), file_url_path("https://h/x")
    ('/p/.exomonad/lead.token', None)
    >>> file_url_path("file:///p/.exomonad/lead.token?/../../w/x")
    '/p/.exomonad/lead.token'
    >>> file_url_path("file:///w/s/s/%2e%2e/%2E%2E/Makefile"), file_url_path("file:///w/a/../b")
    ('/w/s/s/../../Makefile', '/w/b')
    """
    raw = _raw_file_path(url)
    return None if raw is None else _unquoted(_without_dots(raw))


def file_url_paths(url: str, *, curl: bool = False) -> list[str] | None:
    """Each path a program may hand the system for a ``file:`` URL (None for another
    URL): curl's (:func:`file_url_path`), and the same with its dot segments kept
    (``curl --path-as-is``, which a configuration file may set, and readers that only
    decode it, Python's ``url2pathname``); unless ``curl``, also a WHATWG parser's (Node's
    ``fileURLToPath``: ``%2e`` is a dot, ``\\`` a ``/``, dot segments removed, then decoded).

    >>> file_url_paths("file:///w/s/%2e%2e/x")
    ['/w/s/../x', '/w/x']
    """
    raw = _raw_file_path(url)
    if raw is None:
        return None
    found = [_unquoted(_without_dots(raw)), _unquoted(raw)]
    if not curl:
        found.append(_unquoted(_without_dots(raw.replace("\\", "/"), whatwg=True)))
    return list(dict.fromkeys(found))


def file_url_readings(url: str, *, curl: bool = False) -> tuple[str, ...] | None:
    """Where a ``file:`` URL may lead (:func:`file_url_paths`), each path judged as any
    path is (:func:`~exomonad.policy.shell_parse.path_readings`: its links followed
    before its ``..``); None for another URL, or where one of them leads is not known.

    >>> file_url_readings("file:///nonexistent/a/%2e%2e/b", curl=True)
    ('/nonexistent/b',)
    """
    paths = file_url_paths(url, curl=curl)
    if paths is None:
        return None
    found: dict[str, None] = {}
    for path in paths:
        readings = path_readings(None, path)
        if readings is None:
            return None
        found.update(dict.fromkeys(readings))
    return tuple(found)


def _raw_file_path(url: str) -> str | None:
    found = FILE_URL.fullmatch(url)
    return None if found is None else re.split(r"[?#]", found.group(1), maxsplit=1)[0]


#: A WHATWG parser's dot segments, escaped or not.
_DOT = frozenset({".", "%2e"})
_DOTDOT = frozenset({"..", ".%2e", "%2e.", "%2e%2e"})


def _without_dots(path: str, *, whatwg: bool = False) -> str:
    """``path`` (absolute) with its dot segments removed as RFC 3986 removes them (a
    ``..`` takes off the segment before it, an empty one too: ``/a/b//../x`` is
    ``/a/b/x``), as curl does before decoding.

    >>> _without_dots("/a/b//../../x"), _without_dots("/a/./b/."), _without_dots("/../a/..")
    ('/a/x', '/a/b/', '/')
    """
    segments = path.split("/")[1:]
    out: list[str] = []
    for i, segment in enumerate(segments):
        key = segment.lower() if whatwg else segment
        last = i == len(segments) - 1
        if key in (_DOT if whatwg else (".",)):
            if last:
                out.append("")
        elif key in (_DOTDOT if whatwg else ("..",)):
            if out:
                out.pop()
            if last:
                out.append("")
        else:
            out.append(segment)
    return "/" + "/".join(out)


def _unquoted(path: str) -> str:
    """``path`` with its percent-escapes decoded byte for byte (a name that is not UTF-8
    keeps its bytes as lone surrogates: such a path is not known,
    :func:`~exomonad.util.paths.follow`)."""
    return unquote(path, errors="surrogateescape")


def _decoded(path: str) -> str:
    return posixpath.normpath("/" + unquote(path).lstrip("/"))


def before_pattern(url: str) -> str:
    """The directory before the first pattern of a globbed ``file:`` URL (a tree it
    may read, kept beside the :class:`Unknown` so a pattern into the state dir is still
    refused).

    >>> before_pattern("file:///p/.exo{monad,x}/lead.token")
    '/p'
    """
    found = FILE_URL.fullmatch(url)
    path = found.group(1) if found is not None else "/"
    cut = min((i for i in (path.find("{"), path.find("[")) if i >= 0), default=-1)
    return _decoded(posixpath.dirname(path[:cut]) if cut >= 0 else path)


def file_url_actions(
    url: str, kind: type[ReadFile] | type[WriteFile], *, curl: bool = False
) -> list[Action]:
    """The file a ``file:`` URL names, read or written (``kind``): each place its path
    may lead (:func:`file_url_readings`); where that is not known, :class:`Unknown`, and
    judged by its text too (a name in the state dir is refused, not asked). None of it
    for another URL.

    >>> file_url_actions("file:///nonexistent/%2e%2e/x", ReadFile)
    [ReadFile(path='/x', recursive=False, include=())]
    """
    readings = file_url_readings(url, curl=curl)
    if readings is not None:
        return [kind(p) for p in readings]
    paths = file_url_paths(url, curl=curl)
    if paths is None:
        return []
    texts = dict.fromkeys(posixpath.normpath("/" + p.lstrip("/")) for p in paths)
    lost = Unknown(f"{url[:200]}: where its links lead cannot be known")
    return [lost, *(kind(p) for p in texts)]
