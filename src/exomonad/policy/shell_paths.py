"""Where a path a command names leads, as the system reads it: ``..`` after a link climbs
from the link's target, a word the shell builds is unknown, a glob that may match ``..``
may climb.

>>> resolve_path("/w/x", "../y/./z"), may_climb(".?/.?")
('/w/y/z', True)
"""

from __future__ import annotations

import posixpath

from exomonad.policy.shell_globs import shell_match
from exomonad.policy.shell_lex import Word
from exomonad.util.paths import follow

__all__ = ["may_climb", "may_name", "path_readings", "resolve_path", "unfollowable"]


def resolve_path(cwd: str | None, word: Word | str, *, logical: bool = False) -> str | None:
    """Absolute, normalised path of ``word`` relative to ``cwd``, where a program that
    opens it gets; None if unknowable (:func:`path_readings`).

    The system reads a path a name at a time, a link replaced by its target before a
    later ``..`` climbs: with ``s -> .``, ``s/s/../../Makefile`` is above the worktree,
    not its ``Makefile``. Where that differs from taking ``..`` off the name before it,
    the system's reading is given; ``logical``: a reader that may take ``..`` off as text
    (bash's ``cd``, an agent's file tools) gets None there instead.

    >>> resolve_path("/w/x", "../y/./z"), resolve_path(None, "a"), resolve_path("/w", "/")
    ('/w/y/z', None, '/')
    """
    found = path_readings(cwd, word)
    if found is None or (logical and len(found) > 1):
        return None
    return found[-1]


def path_readings(cwd: str | None, word: Word | str) -> tuple[str, ...] | None:
    """Where ``word`` relative to ``cwd`` leads: ``(path,)``, its ``..`` taken off the
    name before it, when the system reads it to the same place (no link before a ``..``);
    else ``(as text, as the system reads it)``. None if unknowable: a word the shell
    builds, a glob that may match ``..``, a relative word with no cwd, or a path whose
    links cannot be followed (:func:`~exomonad.util.paths.follow`: a loop, more than 40
    links, a ``..`` after a name ExoMonad cannot look at).

    >>> path_readings("/w", "a/../b"), path_readings("/w", Word("$X", dynamic=True))
    (('/w/b',), None)
    """
    if isinstance(word, Word):
        if word.dynamic or (word.glob and may_climb(word.text)):
            return None
        word = word.text
    if not word:
        return None
    if not word.startswith("/"):
        if cwd is None:
            return None
        word = posixpath.join(cwd, word)
    path = posixpath.normpath(word)
    path = "/" + path.lstrip("/") if path.startswith("//") else path
    system = follow(word)
    if system is None:
        return None
    if ".." not in word.split("/") or follow(path) == system:
        return (path,)
    return (path, system)


def unfollowable(cwd: str | None, words: list[Word]) -> list[str]:
    """The words that may name a path whose links cannot be followed
    (:func:`~exomonad.util.paths.follow`: a loop, more than 40 links, a ``..`` after a
    name ExoMonad cannot look at, past the lookup budget): where a program gets through
    it, if any, is unknown. Its reads are not dropped as a ``$f`` of unknown value is
    (``cat s/s/.../l/x``, 41 links ``s -> .`` and ``l`` to the state dir, was judged no
    read at all; a bare name too: ``tok -> L/up/.exomonad/lead.token``, ``L`` too deep
    to follow, made ``cat tok`` print the token, allowed), nor an option's value
    (``diff --from-file=tok``, ``grep -ftok``, ``sort --files0-from=tok`` printed it: the
    text after a ``=``, after an option's letter, after a ``@``). Each text is looked at once.

    >>> found = unfollowable("/w", [Word("a/b"), Word("a/" * 3000 + ".."), Word("$X/..", True)])
    >>> [text[:6] + "..." + text[-6:] for text in found]
    ['a/a/a/...a/a/..']
    """
    texts = dict.fromkeys(t for w in words if not w.dynamic for t in may_name(w.text) if t)
    return [
        text
        for text in texts
        if (cwd is not None or text.startswith("/"))
        and follow(posixpath.join(cwd or "/", text)) is None
    ]


def may_name(text: str) -> tuple[str, ...]:
    """The paths a word may name: itself, an option's value (``--file=F``, ``-fF``),
    a ``@F`` or ``<F`` a program reads.

    >>> may_name("--from-file=tok"), may_name("-ftok"), may_name("x=@y")
    (('--from-file=tok', 'tok'), ('-ftok', 'tok'), ('x=@y', '@y', 'y'))
    """
    found = [text]
    if "=" in text:
        found.append(text.split("=", 1)[1])
    if text.startswith("-") and not text.startswith("--"):
        found.append(text[2:])
    found += [t[1:] for t in found[1:] or found if t[:1] in ("@", "<")]
    return tuple(dict.fromkeys(found))


def may_climb(pattern: str) -> bool:
    """Whether a glob has a component that may match ``..`` (one that starts with a
    dot: ``.?``, ``.*``, ``.[.]``): dash matches it, and bash once ``globskipdots`` is
    off, so ``cd .?/.?`` may leave the directory it seems to stay in.

    >>> may_climb("../x"), may_climb(".?/.?"), may_climb("src/*.py"), may_climb(".git*/x")
    (False, True, False, False)
    """
    return any(
        part.startswith(".") and part not in (".", "..") and shell_match("..", part)
        for part in pattern.split("/")
    )
