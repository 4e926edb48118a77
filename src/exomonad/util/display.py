"""How people are shown the team, the same in ``exomonad status`` and its TUI.

>>> age(None), age(42), age(300), age(7300), age(200000)
('-', '42s', '5m', '2h', '2d')
>>> PRESENCE_COLOURS["idle"]
'yellow'
"""

from __future__ import annotations

import unicodedata

from rich.text import Text

__all__ = ["PRESENCE_COLOURS", "age", "shown", "visible"]

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


#: Unicode categories a terminal or a browser acts on, or draws as nothing: controls
#: (ESC, CR, BS...), format characters (bidi overrides, zero-width), line and paragraph
#: separators, surrogates, unassigned code points and private use (a font of its own
#: may draw anything there), and space separators (every one but the ASCII space).
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Zs", "Cs", "Cn", "Co"})
#: Characters of printable categories that are drawn as nothing or as a blank: Hangul
#: fillers, the Braille blank, the combining grapheme joiner, Khmer inherent vowels,
#: Mongolian free variation selectors, variation selectors. app.js's ``visible`` has the
#: same list (``tests/util/test_display.py`` runs one table through both).
_BLANK = frozenset(
    "\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0"
    + "".join(map(chr, [*range(0x180B, 0x1810), *range(0xFE00, 0xFE10),
                        *range(0xE0100, 0xE01F0)]))
)  # fmt: skip


def _escape(c: str) -> str:
    if c == "\n":
        return "\\n"
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def visible(text: str) -> str:
    """``text`` with every character that could hide or fake what is shown written as an
    escape (``\\x1b``, ``\\u202e``, ``\\U000e0100``; a newline as ``\\n``): what a person
    reads is what the text holds. Found probing: ``$'\\x1b[23D...'`` in a command moved the
    cursor over ``rm -rf ../../src`` in ``exomonad approvals list``, a hidden-text sequence
    hid the popup's real lines, and a worker's message cleared the screen of ``exomonad
    status`` to show a fake "ALL CLEAR". The dashboard's ``visible`` (app.js) writes the
    same escapes.

    >>> visible("rm x\\x1b[23Dls"), visible("a\\u202eb\\nc"), visible("ok ✓ é")
    ('rm x\\\\x1b[23Dls', 'a\\\\u202eb\\\\nc', 'ok ✓ é')
    >>> visible("a\\u3164\\u00a0b\\U000e0100")
    'a\\\\u3164\\\\xa0b\\\\U000e0100'
    """
    if text.isprintable() and _BLANK.isdisjoint(text):
        return text
    return "".join(
        _escape(c) if (c in _BLANK or unicodedata.category(c) in _HIDDEN) and c != " " else c
        for c in text
    )


def shown(value: object, style: str = "") -> Text:
    """``value`` for a person's terminal, when another agent wrote it (a message, a task's
    fields, a member's name, an approval's reason, an error quoting any of these):
    :func:`visible`, in a :class:`~rich.text.Text`, so rich reads no markup (``[red]``,
    ``[link=...]``) and no emoji code in it either. Every CLI output of such text goes
    through here (``[...]`` pieces of rich markup built around it: ``Text.assemble``).

    >>> shown("[red]no[/red]\\x1b[2J").plain
    '[red]no[/red]\\\\x1b[2J'
    """
    return Text(visible(str(value)), style=style)
