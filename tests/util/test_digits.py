"""Numbers read from text are ASCII digits: what ``str.isdigit`` also accepts (a
superscript, another script's digit) is not a number for bash, HTTP or a pid file."""

from __future__ import annotations

from pathlib import Path

import pytest

from exomonad.policy.actions import ReadFile, WriteFile
from exomonad.policy.shell_classify import classify_shell
from exomonad.policy.shell_lex import Redir, lex
from exomonad.teams.lockjournal import recover_locks
from exomonad.util.digits import is_number

W = "/w/repo/.worktrees/w1"


@pytest.mark.parametrize("text", ["²", "³", "٣", "१", "①", "1²", "", "-1", "+1", " 1", "1 "])
def test_only_ascii_digits_are_a_number(text: str) -> None:
    assert text.isdigit() == (text in ("²", "³", "٣", "१", "①", "1²"))  # what str says
    assert not is_number(text)


def test_ascii_digits_are() -> None:
    assert all(is_number(t) for t in ("0", "7", "0012", "9" * 40))


@pytest.mark.parametrize("text", ["²<x", "²>x", "echo ³>>x", "cat ٣<x"])
def test_a_non_ascii_digit_before_a_redirection_is_a_word_as_in_bash(text: str) -> None:
    """Found fuzzing: ``²<`` raised ValueError out of the lexer (``int("²")``)."""
    redirections = [t for t in lex(text) if isinstance(t, Redir)]
    assert [r.fd for r in redirections] == [None]
    assert isinstance(classify_shell(text, W), list)


def test_the_redirections_stay_judged() -> None:
    assert WriteFile("/w/repo/README.md") in classify_shell("echo ٣>../../README.md", W)
    assert ReadFile(f"{W}/x") in classify_shell("cat ²<x", W)


def test_lock_recovery_passes_over_an_entry_whose_pid_is_not_ascii(tmp_path: Path) -> None:
    journal = tmp_path / "journal"
    journal.mkdir()
    (journal / "²-1").write_text(f"{tmp_path / 'x.lock'}\n0\n")
    assert recover_locks(journal) == []
    assert (journal / "²-1").exists()  # not ours to remove
