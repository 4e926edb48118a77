"""How people are shown the team, the same in ``exomonad status`` and its TUI.

>>> age(None), age(42), age(300), age(7300), age(200000)
('-', '42s', '5m', '2h', '2d')
>>> PRESENCE_COLOURS["idle"]
'yellow'
"""

from __future__ import annotations

__all__ = ["PRESENCE_COLOURS", "age"]

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
