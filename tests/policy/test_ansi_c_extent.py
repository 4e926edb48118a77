"""A ``$'...'`` ends where bash ends it: a ``\\`` escapes the character after it.

Bash finds the end of an ANSI-C string first (``\\'`` is no end, ``\\\\`` one
backslash), then decodes it (``\\c\\`` is a control character, ``\\c?`` DEL, ``\\c`` last
stays ``\\c``); in an unquoted ``${x:-...}`` too. Found trying the gate as a worker: the
lexer decoded ``\\c`` with the character after it while it looked for the end, and
``${...}`` took ``$'`` for a plain quote, so each command in ``LEAKS`` was read as one
``echo`` and printed the lead's token, allowed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny
from exomonad.policy.shell_ansi import ansi_c
from tests.policy.worker import bash, run_bash, scratch_worktree

SECRET = "exo_lead_secret"

LEAKS = [
    "echo $'\\c\\'' ; grep -r exo_lead ../.. #'",
    "echo ${x:-$'\\''} ; grep -r exo_lead ../.. #'}",
]


@pytest.mark.parametrize("command", LEAKS)
def test_commands_after_an_ansi_c_string_are_judged(tmp_path: Path, command: str) -> None:
    root, wt = scratch_worktree(tmp_path, token=SECRET)
    done = run_bash(command, wt)
    assert SECRET in done.stdout, (command, done.stdout, done.stderr)  # the real effect
    assert isinstance(bash(command, root=str(root)), Deny), command


@pytest.mark.parametrize(("body", "text"), [
    ("\\c\\''", "\x1c'"),
    ("\\c\\\\'", "\x1c"),
    ("\\c\\\\\\\\'", "\x1c\\"),
    ("\\c?'", "\x7f"),
    ("\\c'", "\\c"),
    ("\\cA\\cz\\c['", "\x01\x1a\x1b"),
    ("it\\'s'", "it's"),
])  # fmt: skip
def test_the_text_is_what_bash_prints(body: str, text: str) -> None:
    done = run_bash(f"printf %s $'{body}", Path("/"))
    assert done.stdout == text, (body, done.stdout)  # bash's own reading
    assert ansi_c(body, 0) == (text, len(body))


@pytest.mark.parametrize("command", ["echo ${x:-$'a b'}", "printf '%s\\n' $'a\\tb'"])
def test_ordinary_ansi_c_strings_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
