"""How people are shown the team, the same in ``exomonad status`` and its TUI.

>>> age(None), age(42), age(300), age(7300), age(200000)
('-', '42s', '5m', '2h', '2d')
>>> PRESENCE_COLOURS["idle"]
'yellow'
"""

from __future__ import annotations

import unicodedata

__all__ = ["PRESENCE_COLOURS", "age", "visible"]

#: A member's presence → its colour (a rich style name).
PRESENCE_COLOURS = {"active": "green", "idle": "yellow", "terminated": "red"}


def age(seconds: float | None) -> str:
    """A short age: ``12s``, ``4m``, ``3h``, ``2d`` (``-``: none)."""
    if seconds is None:
        return "-"
    s = max(0.0, seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= size:
            return f"{s // size:.0f}{unit}"
    return f"{s:.0f}s"


#: Unicode categories a terminal or a browser acts on instead of showing: controls
#: (ESC, CR, BS...), format characters (bidi overrides, zero-width), line and paragraph
#: separators, surrogates.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def visible(text: str) -> str:
    """``text`` with every character that could hide or fake what is shown written as an
    escape (``\\x1b``, ``\\u202e``): what a person approves is what runs. Found probing:
    ``$'\\x1b[23D...'`` in a command moved the cursor over ``rm -rf ../../src`` in
    ``exomonad approvals list``, and a hidden-text sequence hid the popup's real lines.

    >>> visible("rm x\\x1b[23Dls"), visible("a\\u202eb\\nc"), visible("ok ✓ é")
    ('rm x\\\\x1b[23Dls', 'a\\\\u202eb\\\\nc', 'ok ✓ é')
    """
    if text.isprintable():
        return text
    out = []
    for c in text:
        if unicodedata.category(c) not in _HIDDEN:
            out.append(c)
        elif c == "\n":
            out.append("\\n")
        else:
            out.append(f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
    return "".join(out)
