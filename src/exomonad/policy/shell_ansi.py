r"""ANSI-C quoting (``$'...'``), decoded exactly as bash does.

>>> ansi_c(r"\x67it' push", 0)
('git', 7)
"""

from __future__ import annotations

__all__ = ["ShellSyntaxError", "ansi_c"]

_ANSI_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "?": "?",
}
_ANSI_NUMERIC = {"x": (16, 2), "u": (16, 4), "U": (16, 8)}
_HEX = set("0123456789abcdefABCDEF")


class ShellSyntaxError(ValueError):
    """The command cannot be tokenised (unterminated quote or substitution)."""


def ansi_c(s: str, j: int) -> tuple[str, int]:
    r"""Decode the body of ``$'...'`` starting at ``j``; return (text, index after it).

    >>> ansi_c(r"\x6dai\156\u0021' x", 0)
    ('main!', 17)
    """
    buf: list[str] = []
    while j < len(s) and s[j] != "'":
        if s[j] != "\\" or j + 1 >= len(s):
            buf.append(s[j])
            j += 1
            continue
        e = s[j + 1]
        if e in _ANSI_NUMERIC:
            base, most = _ANSI_NUMERIC[e]
            k = j + 2
            while k < len(s) and k < j + 2 + most and s[k] in _HEX:
                k += 1
            buf.append(chr(int(s[j + 2 : k], base)) if k > j + 2 else "\\" + e)
            j = k
        elif e in "01234567":
            k = j + 1
            while k < len(s) and k < j + 4 and s[k] in "01234567":
                k += 1
            buf.append(chr(int(s[j + 1 : k], 8) & 0xFF))
            j = k
        elif e == "c" and j + 2 < len(s):
            buf.append(chr(ord(s[j + 2]) & 0x1F))
            j += 3
        else:
            buf.append(_ANSI_ESCAPES.get(e, "\\" + e))
            j += 2
    if j >= len(s):
        raise ShellSyntaxError("unterminated $'...'")
    return "".join(buf), j + 1
