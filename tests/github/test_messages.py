"""The text of each event: tags, both audiences, commits, and long text in spool files."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from exomonad.github.events import Owner, PrEvent
from exomonad.github.messages import Messages, tag
from exomonad.github.model import CheckRun, Commit, IssueComment, PullRequest, Review, ReviewComment
from exomonad.panes import Spool
from exomonad.panes.spool import recipient_dir

PR = PullRequest(
    7,
    "Add parser",
    "https://gh/pr/7",
    "open",
    "bot",
    "exo/w1",
    "0123456789ab",
    "main",
    False,
    None,
    False,
)
BASE = PrEvent("ready", "k", "o/r", Owner("proj", "w1", "team-lead", "exo/w1"), PR)


@pytest.fixture
def messages(tmp_path: Path) -> Messages:
    return Messages(Spool(tmp_path / "spool"), inline_limit=120)


def test_tags_and_the_parents_summary(messages: Messages) -> None:
    ready = replace(BASE, approvers=("alice", "bob"))
    assert messages.parent(ready) == (
        '[PR READY] w1\'s PR #7 "Add parser": approved by alice, '
        "bob, every check passed — https://gh/pr/7"
    )
    closed = replace(BASE, kind="closed")
    assert messages.worker(closed) == "[PR CLOSED] PR #7: closed without merging — https://gh/pr/7"
    waited = replace(BASE, kind="review_timeout", waited=2 * 3600 + 5 * 60 + 59)
    assert messages.worker(waited) == (
        "[REVIEW TIMEOUT] PR #7: no review of 0123456 for 2h 5m — https://gh/pr/7"
    )
    passed = replace(
        BASE,
        kind="ci_status",
        check=CheckRun(1, "build", "completed", "success", None, "https://ci/1"),
    )
    assert tag(passed) == "[CI PASSED]"
    assert messages.summary(passed) == "GitHub: PR #7 ci passed"


def test_push_lists_subjects_and_force(messages: Messages) -> None:
    commits = tuple(Commit(f"{i}" * 40, f"change {i}") for i in range(7))
    pushed = replace(BASE, kind="commits_pushed", commits=commits)
    assert messages.worker(pushed) == (
        "[PUSHED] PR #7: 7 new commits on exo/w1, head 0123456: change 0; change 1; change 2; "
        "change 3; change 4; and 2 more — https://gh/pr/7"
    )
    forced = replace(BASE, kind="commits_pushed", forced=True)
    assert messages.worker(forced) == (
        "[PUSHED] PR #7: exo/w1 was force-pushed, head 0123456 — https://gh/pr/7"
    )


def test_short_review_inline_and_whitespace_folded(messages: Messages) -> None:
    r = Review(3, "alice", "COMMENTED", "  nice   work ", "x", "t", "https://gh/r3")
    c = ReviewComment(4, 3, "alice", "a.py", 2, "typo", "u")
    event = replace(BASE, kind="review_received", review=r, comments=(c,))
    assert messages.worker(event) == (
        '[REVIEW] PR #7: alice commented: "nice work"; 1 comment: a.py:2 "typo" — https://gh/r3'
    )
    assert messages.parent(event) == (
        '[REVIEW] w1\'s PR #7 "Add parser": alice commented (1 comment) — https://gh/r3'
    )
    talk = replace(BASE, kind="review_received", comment=IssueComment(5, "bob", "ok?", None, "u5"))
    assert messages.worker(talk) == '[REVIEW] PR #7: bob commented: "ok?" — u5'


def test_long_text_goes_to_a_file(messages: Messages, tmp_path: Path) -> None:
    r = Review(3, "alice", "CHANGES_REQUESTED", "x" * 100, "x", "t", "https://gh/r3")
    comments = (
        ReviewComment(4, 3, "alice", "a.py", 2, "y" * 50, "https://gh/c4"),
        ReviewComment(5, 3, "alice", "b.py", None, "z", "https://gh/c5"),
    )
    line = messages.worker(replace(BASE, kind="changes_requested", review=r, comments=comments))
    assert line.startswith(
        "[CHANGES REQUESTED] PR #7: alice requested changes, 2 comments on "
        "a.py:2, b.py; the full text is in "
    )
    path = Path(line.split("the full text is in ")[1].split(" (read it)")[0])
    assert path.parent == recipient_dir(tmp_path / "spool", BASE.owner.team, BASE.owner.worker)
    text = path.read_text("utf-8")
    assert "x" * 100 in text
    assert "## a.py:2\n\n" + "y" * 50 in text
    assert "https://gh/c5" in text
    assert line.endswith(" (read it) — https://gh/r3")
    assert "\n" not in line
