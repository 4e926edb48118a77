"""What a ``sed`` script does besides editing its stream: GNU sed's ``e`` command and the
``s///e`` flag run a shell command, ``w``/``W`` and ``s///w`` write a file, ``r``/``R``
read one.

Found as a worker: ``sed -n '1e git push ...' README.md`` looked like a reader of
``README.md`` and was allowed, so any command ran behind it; ``sed -n 'w ../../x' f``
wrote outside the worktree. A script with such a command is Unknown (a person judges it);
``--sandbox`` (GNU sed refuses them) keeps it a reader. A script the scanner cannot read
is Unknown too.

>>> escapes("s/a/b/g; /^#/d; 1,$p"), escapes("1e touch x"), escapes("s/x/id/e")
(False, True, True)
>>> escapes("/err/w out.txt"), escapes("$r ~/.ssh/id_rsa"), escapes("a hello; e")
(True, True, False)

A label ends at a blank as at ``;`` (GNU sed 4.9): found probing, ``sed ':x w ../../f'``
wrote ``../../f``, the ``w`` taken for part of the label.

>>> escapes(":x w ../../f"), escapes("b end; p"), escapes(": a\\nb a")
(True, False, False)
"""

from __future__ import annotations

from exomonad.util.digits import is_number

__all__ = ["escapes"]

#: Commands that take no argument (or a number).
_PLAIN = frozenset("=dDgGhHlLnNpPqQxzF{}")
_TEXT = frozenset("aic")
_LABEL = frozenset("btT:v")
_OUTSIDE = frozenset("ewWrR")


def _delimited(script: str, i: int, delim: str) -> int:
    """The index after the ``delim`` closing the part that starts at ``i``; -1 if none."""
    while i < len(script):
        c = script[i]
        if c == "\\":
            i += 2
            continue
        if c == delim:
            return i + 1
        if c == "\n":
            return -1
        i += 1
    return -1


def _address(script: str, i: int) -> int:
    """The index after an address at ``i`` (none: ``i``); -1 if unreadable."""
    n = len(script)
    if i < n and script[i] in "/\\":
        delim = "/"
        if script[i] == "\\":
            if i + 1 >= n:
                return -1
            delim, i = script[i + 1], i + 1
        i = _delimited(script, i + 1, delim)
        while 0 <= i < n and script[i] in "IM":
            i += 1
        return i
    while i < n and (is_number(script[i]) or script[i] in "$~+"):
        i += 1
    return i


def escapes(script: str) -> bool:
    """True if ``script`` may run a command, write or read a file (or cannot be read)."""
    i, n = 0, len(script)
    while i < n:
        if script[i] in " \t\n;":
            i += 1
            continue
        if script[i] == "#":
            while i < n and script[i] != "\n":
                i += 1
            continue
        i = _address(script, i)
        if 0 <= i < n and script[i] == ",":
            i = _address(script, i + 1)
        while 0 <= i < n and script[i] in " \t!":
            i += 1
        if i < 0 or i >= n:
            return i < 0
        c = script[i]
        if c in _OUTSIDE:
            return True
        if c in "sy":
            if i + 1 >= n or script[i + 1] in "\n\\":
                return True
            delim, j = script[i + 1], i + 2
            for _ in range(2):
                j = _delimited(script, j, delim) if j >= 0 else -1
            if j < 0:
                return True
            k = j
            while k < n and (script[k].isalnum()):
                k += 1
            if c == "s" and set(script[j:k]) & {"e", "w"}:
                return True
            i = k
        elif c in _TEXT:
            while i < n and script[i] != "\n":
                i += 2 if script[i] == "\\" else 1
        elif c in _LABEL:  # blanks before the label, then the label up to a blank or ;
            i += 1
            while i < n and script[i] in " \t":
                i += 1
            while i < n and script[i] not in " \t\n;}":
                i += 1
        elif c in _PLAIN:
            i += 1
            while i < n and is_number(script[i]):
                i += 1
        else:
            return True
    return False
