"""typed_line_pending over screens as tmux captured them from the real Gemini CLI 0.61.0
(rows and cursor of ``display-message '#{cursor_x},#{cursor_y}'; capture-pane -p``): its
real twin, the delivery that presses Enter again, is in tests/e2e/test_gemini_pane.py."""

from __future__ import annotations

import pytest

from exomonad.panes.screen import squash, typed_line_pending

RULE = "─" * 40
#: Gemini CLI after a paste and an Enter within 40 ms: the text, then an empty line.
NEWLINE = ["", RULE, " YOLO Ctrl+Y", RULE, " * hello there", "", RULE]
#: Gemini CLI after the same text was sent: the history, then the empty input.
TAKEN = [" > hello there", "", "✦ hello back", RULE, " YOLO Ctrl+Y",
         " *   Type your message or @path/to/file", RULE]  # fmt: skip


def test_an_enter_taken_as_a_newline_leaves_the_text_pending() -> None:
    assert typed_line_pending(NEWLINE, 3, 5, "hello there")


def test_an_enter_not_read_leaves_the_cursor_after_the_text() -> None:
    assert typed_line_pending(NEWLINE, 14, 4, "hello there")


def test_a_line_taken_clears_the_input() -> None:
    assert not typed_line_pending(TAKEN, 3, 5, "hello there")


@pytest.mark.parametrize(
    ("rows", "x", "y"),
    [
        (["hello there", ""], 0, 1),  # a line reader: column 0 after the echo
        ([" > hello there", " > "], 3, 1),  # one prompt character is not the text's end
        ([" hello there"], 3, 7),  # a cursor off the screen
        ([], 0, 0),
    ],
)
def test_not_pending(rows: list[str], x: int, y: int) -> None:
    assert not typed_line_pending(rows, x, y, "hello there")


def test_a_short_text_must_match_whole_and_a_long_one_by_its_end() -> None:
    assert typed_line_pending([" > ok"], 5, 0, "ok")
    assert not typed_line_pending([" > k"], 4, 0, "ok")
    wrapped = [" * " + "a" * 30, "   " + "b" * 8]  # the end wrapped onto its own row
    assert typed_line_pending(wrapped, 11, 1, "a" * 30 + "b" * 8)
    assert not typed_line_pending(wrapped, 11, 1, "a" * 30 + "c" * 8)
    assert not typed_line_pending([" * "], 3, 0, "   ")  # nothing printable typed


def test_squash_drops_blanks_and_box_drawing() -> None:
    assert squash("│ > a b │\n╰──╯") == ">ab"
