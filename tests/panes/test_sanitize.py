"""Tests for :mod:`exomonad.panes.sanitize`: nothing a terminal would act on survives."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exomonad.panes.sanitize import TAB_REPLACEMENT, is_safe, sanitize

C0 = {chr(c) for c in range(0x20)}
C1 = {chr(c) for c in range(0x80, 0xA0)}
UNSAFE = (C0 | C1 | {"\x7f"}) - {"\n"}

# Any text, plus text dense in sequence syntax so the parser meets every corner case.
ANY_TEXT = st.text(alphabet=st.characters(codec=None))
SEQUENCE_SOUP = st.text(
    alphabet=st.sampled_from(list("\x1b[]P_^X\\;?0129m(c\x07\x9b\x9c\x9d\x90\r\n\t a✓"))
)
TEXTS = st.one_of(ANY_TEXT, SEQUENCE_SOUP)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        # CSI: colours, cursor movement, erase, private modes, 8-bit CSI
        ("\x1b[31mred\x1b[0m", "red"),
        ("a\x1b[2Jb", "ab"),
        ("\x1b[?1049hx\x1b[?1049l", "x"),
        ("\x1b[1;31;42mbold", "bold"),
        ("\x9b31mc1", "c1"),
        ("cut\x1b[31", "cut"),
        # OSC: window title, hyperlinks, clipboard (BEL- and ST-terminated, 8-bit)
        ("\x1b]0;pwned\x07after", "after"),
        ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x1b]52;c;ZXZpbA==\x07ok", "ok"),
        ("\x9d0;t\x9cok", "ok"),
        # DCS / APC / PM / SOS
        ("\x1bPq#0;2;0;0;0\x1b\\img", "img"),
        ("\x1b_apc\x1b\\x", "x"),
        ("\x1b^pm\x1b\\x", "x"),
        ("\x1bXsos\x1b\\x", "x"),
        # unterminated string: introducer dropped, payload kept as plain text
        ("\x1b]0;title", "0;title"),
        # single ESC sequences and lone ESC
        ("\x1bcreset", "reset"),
        ("\x1b(Bascii", "ascii"),
        ("\x1b7save\x1b8", "save"),
        ("esc\x1b", "esc"),
        ("\x1b\x1b[31mx", "x"),
        # C0 controls: ^C ^D ^Z ^U ^W ^V ^[ NUL BEL BS VT FF
        ("a\x03b\x04c\x1ad", "abcd"),
        ("\x15\x17\x16kill", "kill"),
        ("nul\x00bel\x07bs\x08", "nulbelbs"),
        ("v\x0bf\x0c", "vf"),
        # DEL and C1 (NEL, IND, ST)
        ("del\x7f", "del"),
        ("\x85\x84\x9cc1", "c1"),
        # line ends
        ("a\r\nb\rc\nd", "a\nb\nc\nd"),
        # tabs never survive as tabs
        ("a\tb", f"a{TAB_REPLACEMENT}b"),
        # lone surrogates would be encoded as raw invalid bytes
        ("x\udc80y", "xy"),
    ],
)
def test_strips_control_sequences(raw: str, clean: str) -> None:
    assert sanitize(raw) == clean


@pytest.mark.parametrize(
    "text",
    [
        "日本語のテキスト、中文\uff0c한국어",  # fullwidth comma
        "emoji 🎉👍🏽👨‍👩‍👧 flags 🇫🇷",
        "combining e\u0301 zwj \u200d bidi \u202e mark",
        "quotes ' \" \u2018\u2019 \u201c\u201d «»",  # curly quotes
        "shell $(rm -rf /) ${HOME} `id` !! !$ && || ; | > < & * ? ~",
        "backslash \\n \\x1b \\\\ and percent %s %0 {}",
        "ends with semicolon;",
        "-n leading dash",
        " leading and trailing spaces ",
    ],
)
def test_keeps_printable_text_exactly(text: str) -> None:
    assert sanitize(text) == text
    assert is_safe(text)


def test_newlines_become_spaces_when_not_kept() -> None:
    assert sanitize("one\ntwo\r\nthree\rfour", keep_newlines=False) == "one two three four"


def test_tab_replacement_is_configurable_and_checked() -> None:
    assert sanitize("a\tb", tab=" ") == "a b"
    assert sanitize("a\tb", tab="\t") == "a\tb"
    with pytest.raises(ValueError, match="tab replacement"):
        sanitize("a\tb", tab="\x1b")
    with pytest.raises(ValueError, match="tab replacement"):
        sanitize("a\tb", tab="\n")


def test_is_safe_flags_controls() -> None:
    assert not is_safe("a\x1b[31mb")
    assert not is_safe("a\x9bb")
    assert not is_safe("a\tb")
    assert is_safe("a\tb", allow_tabs=True)
    assert not is_safe("a\nb", allow_newlines=False)
    assert is_safe("a\nb")


@settings(deadline=None)  # pure CPU, but a loaded CI box must not flake
@given(TEXTS)
def test_output_has_no_controls(text: str) -> None:
    out = sanitize(text)
    assert not set(out) & UNSAFE
    assert not any("\ud800" <= ch <= "\udfff" for ch in out)
    assert is_safe(out)


@settings(deadline=None)  # pure CPU, but a loaded CI box must not flake
@given(TEXTS)
def test_single_line_output_has_no_newline(text: str) -> None:
    out = sanitize(text, keep_newlines=False)
    assert not set(out) & (UNSAFE | {"\n"})


@settings(deadline=None)  # pure CPU, but a loaded CI box must not flake
@given(TEXTS, st.booleans(), st.sampled_from([" ", "\t"]))
def test_idempotent(text: str, keep_newlines: bool, tab: str) -> None:
    once = sanitize(text, keep_newlines=keep_newlines, tab=tab)
    assert sanitize(once, keep_newlines=keep_newlines, tab=tab) == once


@settings(deadline=None)  # pure CPU, but a loaded CI box must not flake
@given(st.text(alphabet=st.characters(exclude_categories=["Cc", "Cs"])))
def test_text_without_controls_is_unchanged(text: str) -> None:
    assert sanitize(text) == text


@settings(deadline=None)  # pure CPU, but a loaded CI box must not flake
@given(
    st.lists(
        st.one_of(
            st.text(alphabet=st.characters(exclude_categories=["Cc", "Cs"]), min_size=1),
            st.sampled_from(["\x1b[31m", "\x1b[0m", "\x1b]0;t\x07", "\x03", "\x1bc", "\x7f"]),
        )
    )
)
def test_printable_runs_between_sequences_survive(parts: list[str]) -> None:
    # Complete sequences and controls vanish; the printable text around them stays.
    # (A printable run right after a complete sequence cannot be swallowed by it.)
    printable = "".join(p for p in parts if is_safe(p) and "\x1b" not in p)
    assert sanitize("".join(parts)) == printable
