"""Text an agent chose, cut to a size a person can read, saying how much was cut.

>>> clip("abcdef", 3)
'abc… (3 more characters)'
>>> clip("abc", 3)
'abc'
>>> collapse("a    b\\t\\n c")
'a b c'
"""

from __future__ import annotations

import re

__all__ = ["clip", "collapse"]

_SPACE = re.compile(r"\s+")


def clip(text: str, limit: int) -> str:
    """``text`` if at most ``limit`` characters, else its first ``limit`` and ``… (N more
    characters)``: a cut that says so, never a silent one."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def collapse(text: str) -> str:
    """``text`` with every run of whitespace one space (a worker's padding takes no room)."""
    return _SPACE.sub(" ", text)
