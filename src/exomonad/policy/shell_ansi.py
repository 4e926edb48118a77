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

    Bash finds where the string ends first, a ``\`` escaping the character after it
    (``$'\c\''`` ends at its third quote), then decodes it: found trying the gate as a
    worker, ``echo $'\c\'' ; grep -r SECRET ../.. #'`` printed the lead's token,
    allowed as one ``echo`` (``\c\`` was decoded as it was scanned, and the string
    taken to end at the second quote).

    >>> ansi_c(r"\x6dai\156\u0021' x", 0)
    ('main!', 17)
    >>> ansi_c(r"\c\'' x", 0), ansi_c(r"\c\\' x", 0), ansi_c(r"\c?\c' x", 0)
    (("\x1c'", 5), ('\x1c', 5), ('\x7f\\c', 6))
    """
    end = j
    while end < len(s) and s[end] != "'":
        end += 2 if s[end] == "\\" else 1
    if end >= len(s):
        raise ShellSyntaxError("unterminated $'...'")
    return _decoded(s[j:end]), end + 1


def _decoded(body: str) -> str:
    """The text bash makes of the body of a ``$'...'`` (its escapes)."""
    buf: list[str] = []
    j = 0
    while j < len(body):
        if body[j] != "\\" or j + 1 >= len(body):
            buf.append(body[j])
            j += 1
            continue
        e = body[j + 1]
        if e in _ANSI_NUMERIC:
            base, most = _ANSI_NUMERIC[e]
            k = j + 2
            while k < len(body) and k < j + 2 + most and body[k] in _HEX:
                k += 1
            buf.append(chr(int(body[j + 2 : k], base)) if k > j + 2 else "\\" + e)
            j = k
        elif e in "01234567":
            k = j + 1
            while k < len(body) and k < j + 4 and body[k] in "01234567":
                k += 1
            buf.append(chr(int(body[j + 1 : k], 8) & 0xFF))
            j = k
        elif e == "c" and j + 2 < len(body):  # a control character: ``\c?`` is DEL
            k = j + 3 if body.startswith("\\\\", j + 2) else j + 2
            buf.append("\x7f" if body[j + 2] == "?" else chr(ord(body[j + 2]) & 0x1F))
            j = k + 1
        else:  # ``\c`` last stays as it is
            buf.append(_ANSI_ESCAPES.get(e, "\\" + e))
            j += 2
    return "".join(buf)
