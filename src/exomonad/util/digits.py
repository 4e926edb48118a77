"""Numbers in text anyone may have written: ASCII digits only.

``str.isdigit`` is true for superscripts and other scripts' digits, which ``int`` then
refuses (``int("²")`` raises) or reads (``int("٣") == 3``) where bash, HTTP and a pid
file name do not. Found fuzzing the shell lexer: ``²<x`` raised out of it.

>>> is_number("12"), is_number("²"), is_number("٣"), is_number(""), is_number("-1")
(True, False, False, False, False)
"""

from __future__ import annotations

__all__ = ["is_number"]


def is_number(text: str) -> bool:
    """Whether ``text`` is one or more ASCII digits (what ``int`` then reads as such)."""
    return text.isascii() and text.isdigit()
