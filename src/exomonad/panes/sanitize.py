"""Make arbitrary message text safe to type into a terminal pane.

A message typed into a pane reaches the agent's program as *keystrokes*: an ESC starts a
key or control sequence, ``\\x03`` is Ctrl-C, ``\\r`` is Enter, ``\\t`` is Tab (completion in
readline, focus change in many TUIs). :func:`sanitize` turns any text into text that can
only ever be *printed* by the receiving program:

* Terminal control strings are removed whole when terminated: OSC (``ESC ]``), DCS
  (``ESC P``), SOS (``ESC X``), PM (``ESC ^``), APC (``ESC _``) and their 8-bit forms, up to
  BEL, ``ESC \\`` or the 8-bit ST. An *unterminated* string loses only its introducer, so
  the rest of the message stays readable (it is plain text by then).
* CSI sequences (``ESC [`` or 8-bit ``0x9b``, parameters, intermediates, final byte) and
  the other ESC sequences (``ESC`` + intermediates + final byte, e.g. ``ESC c``,
  ``ESC ( B``) are removed whole; a lone ``ESC`` is removed.
* Line ends: ``\\r\\n`` and a lone ``\\r`` become ``\\n``. ``\\n`` is kept, or becomes a space
  with ``keep_newlines=False`` (a typed newline would press Enter early).
* Tabs become ``tab`` (default: four spaces), so they can never act as the Tab key. Pass
  ``tab="\\t"`` to keep them, for text that is written to a file rather than typed.
* Every other C0 control (0x00-0x1f), DEL (0x7f), every C1 control (0x80-0x9f) and lone
  surrogates (which would be encoded as raw, invalid bytes) are dropped.

Everything else is kept exactly: all printable Unicode (CJK, emoji, combining marks,
format characters such as ZWJ), quotes, ``$(...)``, backticks, ``!``, backslashes.

The result is idempotent: ``sanitize(sanitize(s)) == sanitize(s)``.

>>> sanitize("\\x1b[31mred\\x1b[0m and \\x03 `ls` $(x) ✓")
'red and  `ls` $(x) ✓'
>>> sanitize("a\\tb\\r\\nc", keep_newlines=False)
'a    b c'
"""

from __future__ import annotations

import re

__all__ = ["TAB_REPLACEMENT", "is_safe", "sanitize"]

TAB_REPLACEMENT = "    "
"""What a tab becomes by default: four spaces (tabs would act as the Tab key)."""

# Control strings, terminated: introducer, body (anything but a terminator), terminator.
_STRING = r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
# CSI: 7-bit or 8-bit introducer, parameter bytes, intermediate bytes, final byte (which
# may be missing when the text ends or is cut mid-sequence).
_CSI = r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
# Any other escape sequence: ESC, intermediates, one final byte; else a lone ESC.
_ESC = r"\x1b[\x20-\x2f]*[\x30-\x7e]?"

_SEQUENCES = re.compile(f"{_STRING}|{_CSI}|{_ESC}")
_LINE_ENDS = re.compile(r"\r\n?")
# C0 except \t and \n (handled separately), DEL, C1, and surrogates.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_UNSAFE_TAB = re.compile("[\x00-\x1f\x7f-\x9f]")


def sanitize(text: str, *, keep_newlines: bool = True, tab: str = TAB_REPLACEMENT) -> str:
    """Strip everything from ``text`` that a terminal would act on instead of print.

    Args:
        text: any message text.
        keep_newlines: keep ``\\n`` (default); if false every line end becomes one space.
        tab: what each tab becomes; ``"\\t"`` keeps tabs. Must not contain any other
            control character.

    Returns:
        The text with escape/control sequences and control characters removed, line ends
        normalised to ``\\n`` (or spaces) and tabs replaced.

    Raises:
        ValueError: ``tab`` contains a control character other than a tab.

    >>> sanitize("say \\x1b]0;pwned\\x07hi\\x7f!")
    'say hi!'
    """
    if tab != "\t" and _UNSAFE_TAB.search(tab):
        raise ValueError(f"tab replacement must be printable or a single tab: {tab!r}")
    text = _LINE_ENDS.sub("\n", text)
    text = _SEQUENCES.sub("", text)
    text = _CONTROLS.sub("", text)
    if not keep_newlines:
        text = text.replace("\n", " ")
    if tab != "\t":
        text = text.replace("\t", tab)
    return text


def is_safe(text: str, *, allow_newlines: bool = True, allow_tabs: bool = False) -> bool:
    """Whether ``text`` contains nothing a terminal would act on.

    >>> is_safe("plain ✓"), is_safe("a\\x1b[2Jb"), is_safe("a\\tb")
    (True, False, False)
    """
    for ch in text:
        if ch == "\n":
            if not allow_newlines:
                return False
        elif ch == "\t":
            if not allow_tabs:
                return False
        elif _CONTROLS.match(ch):
            return False
    return True
