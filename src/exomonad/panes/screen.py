"""Reading a terminal screen: where typed text is, and whether Enter took it.

A change on screen after Enter does not prove the program took the line: a TUI that
redraws on its own (a spinner, a banner, an MCP server count) changes the screen while
the text still sits in its input box. And Gemini CLI turns an Enter it *processes* within
40 ms of a bracketed paste into a newline: with its event loop busy (starting, or on a
loaded machine) the Enter waits in the pty behind the paste, and the input box then holds
the text and an empty second line. Measured: a Gemini CLI worker's task stayed unsent
this way (once in CI, and in 2 of 27 runs here with CPU burners beside it).

:func:`typed_line_pending` recognises both from the screen and the cursor (where the
program left it):

* the cursor still sits right after the end of the typed text (Enter dropped);
* the cursor sits at the start of a new, empty line indented like an input box's (column
  above 0), right under a line ending with the typed text (Enter became a newline).

A program that reads lines (no input box) starts its next line at column 0, and one that
took the line clears its box and shows its prompt before the cursor (``>`` for Claude
Code, ``*`` for Gemini CLI in YOLO mode): neither reads as pending. At least four
characters of the text must match (the whole text when shorter), so one prompt character
is never taken for the text's end.
"""

from __future__ import annotations

import re

__all__ = ["squash", "typed_line_pending"]

_SQUASH = re.compile(r"[\s\u2500-\u257f|]+")
_TAIL = 12  # characters of the text's end compared
_AT_LEAST = 4  # of which at least this many must match (or the whole text)


def squash(text: str) -> str:
    """Text without white space or box drawing, to find typed text in a TUI's screen.

    >>> squash("│ > hello  there │")
    '>hellothere'
    """
    return _SQUASH.sub("", text)


def _ends_with_tail(shown: str, line: str) -> bool:
    """Whether ``shown`` (squashed) ends with enough of ``line``'s (squashed) end."""
    k = min(len(shown), len(line), _TAIL)
    return k >= min(len(line), _AT_LEAST) and k > 0 and shown[-k:] == line[-k:]


def typed_line_pending(rows: list[str], x: int, y: int, line: str) -> bool:
    """Whether ``line``, typed and then Entered, still sits in the program's input.

    Args:
        rows: the visible screen, one string per row.
        x, y: the cursor's column and row (0-based), as the terminal reports them.
        line: the text that was typed.

    >>> typed_line_pending(["", " * hello there"], 14, 1, "hello there")  # Enter dropped
    True
    >>> typed_line_pending([" * hello there", "   "], 3, 1, "hello there")  # a newline
    True
    >>> typed_line_pending([" > hello there", " * "], 3, 1, "hello there")  # taken
    False
    >>> typed_line_pending(["hello there", ""], 0, 1, "hello there")  # a line reader
    False
    """
    text = squash(line)
    if not text or not 0 <= y < len(rows):
        return False
    before_cursor = squash(rows[y][:x])
    if before_cursor:
        return _ends_with_tail(before_cursor, text)
    return x > 0 and y > 0 and _ends_with_tail(squash(rows[y - 1]), text)
