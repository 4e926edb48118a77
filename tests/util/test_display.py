"""``visible()``: what a person reads is what the text holds. One table of characters
through the Python rule (``util.display.visible``, the terminal) and the dashboard's copy
in ``app.js`` (run by Node): both write the same escapes, character for character."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

from exomonad.util.display import shown, visible

APP_JS = Path(__file__).resolve().parents[2] / "src/exomonad/server/dashboard/static/app.js"

#: Characters a terminal or a browser acts on, or draws as nothing or as a blank that is
#: not a space: each is written as an escape.
HIDDEN = {
    "\x1b": "\\x1b", "\x07": "\\x07", "\x00": "\\x00", "\x7f": "\\x7f", "\t": "\\x09",
    "\r": "\\x0d", "\n": "\\n", "\x9b": "\\x9b", "\x85": "\\x85",  # C0, DEL, C1
    "\u200b": "\\u200b", "\u200d": "\\u200d", "\u202e": "\\u202e", "\u2066": "\\u2066",
    "\ufeff": "\\ufeff", "\u00ad": "\\xad", "\U000e0041": "\\U000e0041",  # format
    "\u2028": "\\u2028", "\u2029": "\\u2029",  # line / paragraph separators
    "\ud800": "\\ud800",  # a lone surrogate
    # Hangul fillers, the Braille blank, the combining grapheme joiner, Khmer inherent
    # vowels, Mongolian free variation selectors, variation selectors.
    "\u3164": "\\u3164", "\u115f": "\\u115f", "\u1160": "\\u1160", "\uffa0": "\\uffa0",
    "\u2800": "\\u2800", "\u034f": "\\u034f", "\u17b4": "\\u17b4", "\u17b5": "\\u17b5",
    "\u180b": "\\u180b", "\u180c": "\\u180c", "\u180d": "\\u180d", "\u180e": "\\u180e",
    "\u180f": "\\u180f", "\ufe00": "\\ufe00", "\ufe0f": "\\ufe0f",
    "\U000e0100": "\\U000e0100", "\U000e01ef": "\\U000e01ef",
    # Every space separator but the ASCII space.
    "\u00a0": "\\xa0", "\u1680": "\\u1680", "\u2000": "\\u2000", "\u2007": "\\u2007",
    "\u200a": "\\u200a", "\u202f": "\\u202f", "\u205f": "\\u205f", "\u3000": "\\u3000",
    # Unassigned (in every Unicode version either side knows) and private use.
    "\u0378": "\\u0378", "\uffff": "\\uffff", "\U000e0080": "\\U000e0080",
    "\U0010ffff": "\\U0010ffff", "\ue000": "\\ue000", "\uf8ff": "\\uf8ff",
    "\U000f0000": "\\U000f0000", "\U0010fffd": "\\U0010fffd",
}  # fmt: skip

#: Shown as they are.
SHOWN = ["a", " ", "~", "\\", "é", "e\u0301", "✓", "日本", "🙂", "👍🏽", "[red]x[/red]",
         "\u0627\u0644", "\u3131", "\u2801", "\ufe10"]  # fmt: skip

CASES = [*HIDDEN, *SHOWN, "rm x\x1b[23Dls", "tests pass \x1b]0;t\x1b\\ ok\u3164\u2800!"]


def _expected(text: str) -> str:
    return "".join(HIDDEN.get(c, c) for c in text)


def _js_visible(texts: list[str]) -> list[str]:
    """``texts`` through app.js's own ``visible`` (its source, cut from the file)."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is missing: `make setup` installs it")
    source = APP_JS.read_text(encoding="utf-8")
    found = re.search(r"^ *// -- visible: begin\n(.*?)^ *// -- visible: end\n", source,
                      re.S | re.M)  # fmt: skip
    assert found, "app.js lost its visible() markers"
    script = found.group(1) + (
        "const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n"
        "process.stdout.write(JSON.stringify(input.map(visible)));\n"
    )
    done = subprocess.run([node, "-e", script], input=json.dumps(texts), text=True,
                          capture_output=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    out: list[str] = json.loads(done.stdout)
    return out


@pytest.mark.parametrize("text", CASES, ids=lambda t: t.encode("unicode_escape").decode())
def test_visible_writes_hidden_characters_as_escapes(text: str) -> None:
    assert visible(text) == _expected(text)


def test_the_dashboard_writes_the_same_escapes() -> None:
    assert _js_visible(CASES) == [_expected(t) for t in CASES]


def test_shown_is_never_markup_and_holds_no_control() -> None:
    console = Console(file=None, record=True, width=200, color_system=None,
                      force_terminal=False)  # fmt: skip
    text = "[red]x[/red] [link=https://e.example]y[/link] :warning: \x1b[2J\x1b]52;c;Zm9v\x07"
    with console.capture() as captured:
        console.print(shown(text))
    out = captured.get()
    assert out.rstrip("\n") == (
        "[red]x[/red] [link=https://e.example]y[/link] :warning: \\x1b[2J\\x1b]52;c;Zm9v\\x07"
    )
