"""A path the shell builds at run time from pieces that name ExoMonad's state dir.

Found trying the gate as a worker: ``cat ../../.exo$(echo mo)nad/lead.to$(echo k)en``
and ``cat "$(printf '../../.exo%snad/lead.tok%sn' mo e)"`` printed the lead's token,
allowed: no word held a state name whole. Each expansion (``$x``, ``${x}``, ``$(...)``,
a backquote, ``$((...))``) is taken as "anything", like a glob's ``*``: a word whose
literal pieces could then name the state dir or one of its files is refused, as
``.e*`` is. A piece must name enough of it to count (``.exo*nad``, ``*omonad``,
``lead.to*en``), so ``"$f"``, ``"$name.json"`` or ``"$base.$ext"`` stay allowed: a path
built wholly at run time (``f=$(base64 -d <<< ...)``) is out of reach, as documented.
``printf`` and ``echo`` build paths too: their ``%s`` conversions are "anything" and
their escapes (``\\x2e``, ``\\056``) are decoded before the same check.

>>> names_built_state("../../.exo$(echo mo)nad/x", "/p/w/.worktrees/w1", None)
True
>>> names_built_state('"$dir/$name.json"', "/p/w", "/p/.exomonad")
False
>>> names_built_state("../../.e$x", "/p/.worktrees/w1", "/p/.exomonad")
True
>>> names_built_state("../../$a$b/$c", "/p/.worktrees/w1", "/p/.exomonad")
True
>>> names_built_state("./$f", "/p", "/p/.exomonad"), names_built_state("../$f", "/p/w", None)
(False, False)
"""

from __future__ import annotations

import posixpath
import re

from exomonad.policy.shell_globs import shell_match
from exomonad.policy.state_reads import STATE_NAMES

__all__ = ["mentions_state", "names_built_state", "printed_text"]

#: Stands for an expansion's value in a word (a character no shell word holds).
_ANY = "\0"
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789")
_SPECIAL = frozenset("0123456789@*#?$!-")
#: How many characters of a state name a word's own pieces must hold to name it.
_ENOUGH = 3
_STARS = re.compile(r"\*+")
_BRACKETS = re.compile(r"\[[^]]*\]")
#: A printf conversion (``%s``, ``%-5.3b``, ``%*d``); ``%%`` is a plain ``%``.
_CONVERSION = re.compile(r"%(?:%|[-+ #0']*(?:\*|[0-9]+)?(?:\.(?:\*|[0-9]*))?[a-zA-Z])")
#: A backslash escape ``printf`` (its format and ``%b`` arguments) and ``echo -e`` decode.
_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|0?[0-7]{1,3}|.)",
                     re.DOTALL)  # fmt: skip


def _mark(text: str) -> str | None:
    """``text`` with each shell expansion in it replaced by :data:`_ANY`; None if it has
    none. One pass: an unclosed expansion runs to the end."""
    out: list[str] = []
    i, n, found = 0, len(text), False
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "`":
            end = text.find("`", i + 1)
            i = n if end < 0 else end + 1
        elif c == "$" and nxt in ("(", "{"):
            depth, j = 0, i + 1
            while j < n:
                if text[j] in "({":
                    depth += 1
                elif text[j] in ")}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            i = j + 1
        elif c == "$" and nxt and nxt in _NAME_CHARS and not nxt.isdigit():
            j = i + 1
            while j < n and text[j] in _NAME_CHARS:
                j += 1
            i = j
        elif c == "$" and nxt and nxt in _SPECIAL:
            i += 2
        else:
            out.append(c)
            i += 1
            continue
        out.append(_ANY)
        found = True
    return "".join(out) if found else None


def _names_enough(part: str, name: str) -> bool:
    """The literal pieces of ``part`` (a path part holding an expansion) hold enough of
    ``name``, beyond its extension (``*.json`` does not name ``tokens.json``)."""
    literal = "".join(c for c in part if c not in "*?[]" and c != _ANY)
    dot = name.rfind(".")
    if dot > 0 and literal.endswith(name[dot:]):
        literal = literal[: len(literal) - (len(name) - dot)]
    return len(literal.strip(".")) >= _ENOUGH


def names_built_state(text: str, cwd: str | None, state: str | None) -> bool:
    """Whether the word ``text``, each expansion in it taken as "anything", could name
    the state dir ``state`` or one of its files: a part holding an expansion could match
    one of :data:`STATE_NAMES` with enough of it written out (``.exo$(echo mo)nad``,
    ``${d}omonad``, ``lead.to$(echo k)en``), or, from ``cwd``, its literal path up to
    the first such part could name the state dir (``../../.e$x``: ``/p/.e*``; a part
    that is wholly an expansion counts after a ``..`` or an absolute path: ``a=.e b=xo
    c=mo d=nad; cat ../../$a$b$c$d/$e`` printed the token, allowed). Case
    is ignored (an unquoted expansion may be a glob, and ``nocaseglob`` folds it)."""
    marked = _mark(text)
    if marked is None:
        return False
    parts = marked.lower().split("/")
    for part in parts:
        if _ANY not in part:
            continue
        if any(_could_match(n, part) and _names_enough(part, n) for n in STATE_NAMES):
            return True
    if state is None:
        return False
    first = next(k for k, part in enumerate(parts) if _ANY in part)
    climbs = ".." in parts[:first] or (first > 0 and not parts[0])  # ../../$x, /p/$x
    if not (parts[first].replace(_ANY, "") or climbs) or any(
        c in "*?[" for p in parts[:first] for c in p
    ):
        return False  # "$f", "$HOME/x", ./$f: where it points is not known
    if marked.startswith("/"):
        cwd = "/"
    elif cwd is None:
        return False
    base = posixpath.normpath(posixpath.join(cwd, "/".join(parts[:first]) or "."))
    names = posixpath.join(base.lower(), parts[first].replace(_ANY, "*")).split("/")
    target = posixpath.normpath(state.lower()).split("/")
    return len(names) >= len(target) and all(
        _could_match(t, p) for p, t in zip(names, target, strict=False)
    )  # the state dir, or a path in it (``/p/.e*``), by a piece of its own name


def mentions_state(text: str) -> bool:
    """Whether ``text`` (an assignment's, which no command's words show) may name the
    state: one of its names in any case, or built from pieces (found probing:
    ``g=${PWD%/*/*}/.exomonad/lead.token; cat "$g"`` printed the token, allowed, the
    assignment judged by no rule on words; ``${g,,}`` lowers ``.EXOMONAD``).

    >>> mentions_state("g=${PWD%/*/*}/.EXOMONAD/x"), mentions_state("x=$(git rev-parse HEAD)")
    (True, False)
    """
    low = text.lower()
    return any(name in low for name in STATE_NAMES) or names_built_state(text, None, None)


def _could_match(name: str, part: str) -> bool:
    """The glob ``part`` (:data:`_ANY` for "anything") could match ``name``. A part
    with more literal characters than ``name`` cannot, so no pattern longer than a
    name's twice is matched (nor kept in fnmatch's cache)."""
    pattern = _STARS.sub("*", part.replace(_ANY, "*"))
    if len(_BRACKETS.sub("?", pattern).replace("*", "")) > len(name):
        return False
    return shell_match(name, pattern)


def printed_text(word: str) -> str:
    """What ``printf`` or ``echo -e`` may print of ``word``: its escapes decoded and
    each conversion (``%s``) replaced by an expansion (``$_``), which
    :func:`names_built_state` takes as "anything".

    >>> printed_text("../../.exo%snad/lead\\\\x2etok%sn")
    '../../.exo$_nad/lead.tok$_n'
    """
    decoded = _ESCAPE.sub(_decode, word)
    return _CONVERSION.sub(lambda m: "%" if m.group() == "%%" else "$_", decoded)


def _decode(match: re.Match[str]) -> str:
    body = match.group(1)
    try:
        if body[0] in "xuU" and len(body) > 1:
            return chr(int(body[1:], 16))
        if body[0] in "01234567":
            return chr(int(body, 8))
    except (ValueError, OverflowError):
        return match.group()
    return {"n": "\n", "t": "\t", "\\": "\\"}.get(body, match.group())
