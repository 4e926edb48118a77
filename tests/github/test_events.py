"""derive(): the events a snapshot implies, their keys and order, and the memory kept."""

from __future__ import annotations

from exomonad.github.events import Owner, PrMemory, Snapshot, derive, review_state
from exomonad.github.model import CheckRun, Commit, PullRequest, Review, ReviewComment

OWNER = Owner("proj", "w1", "team-lead", "exo/w1")
NOW = 1_000_000.0
FRESH = PrMemory()


def _pr(sha: str = "b" * 40, **kw: object) -> PullRequest:
    fields: dict[str, object] = dict(
        number=7,
        title="T",
        url="u",
        state="open",
        author="bot",
        head_ref="exo/w1",
        head_sha=sha,
        base_ref="main",
        merged=False,
        closed_at=None,
        draft=False,
    )
    fields.update(kw)
    return PullRequest(**fields)  # type: ignore[arg-type]


def _review(rid: int, user: str, state: str, sha: str = "b" * 40, at: str = "t") -> Review:
    return Review(rid, user, state, "", sha, at, f"r{rid}")


def _check(rid: int, name: str, conclusion: str | None, status: str = "completed") -> CheckRun:
    return CheckRun(rid, name, status, conclusion, "t", f"c{rid}")


def _kinds(snap: Snapshot, memory: PrMemory = FRESH, timeout: float = 0) -> list[str]:
    events, _ = derive(snap, memory, "o/r", OWNER, now=NOW, review_timeout=timeout)
    return [e.key for e in events]


def test_first_sight_is_no_push_and_memory_records_the_head() -> None:
    events, memory = derive(Snapshot(_pr()), PrMemory(), "o/r", OWNER, now=NOW, review_timeout=0)
    assert events == []
    assert memory == PrMemory("b" * 40, NOW, False)


def test_push_lists_new_commits_or_says_forced() -> None:
    commits = (Commit("a" * 40, "one"), Commit("c" * 40, "two"), Commit("b" * 40, "three"))
    old = PrMemory("a" * 40, 5.0)
    events, memory = derive(
        Snapshot(_pr(), commits=commits), old, "o/r", OWNER, now=NOW, review_timeout=0
    )
    (push,) = events
    assert push.key == f"push:{'b' * 40}"
    assert [c.subject for c in push.commits] == ["two", "three"]
    assert not push.forced
    assert memory.head_seen_at == NOW  # a new head starts waiting for review now
    rewritten, _ = derive(
        Snapshot(_pr(), commits=commits[1:]), old, "o/r", OWNER, now=NOW, review_timeout=0
    )
    assert rewritten[0].forced
    assert rewritten[0].commits == ()


def test_reviews_by_kind_with_their_comments_and_not_the_authors_own() -> None:
    reviews = (
        _review(2, "alice", "CHANGES_REQUESTED", at="t2"),
        _review(1, "bob", "COMMENTED", at="t1"),
        _review(3, "bot", "COMMENTED"),
        _review(4, "carol", "PENDING"),
        _review(5, "dave", "DISMISSED"),
    )
    comments = (
        ReviewComment(9, 2, "alice", "a.py", 3, "x", "u"),
        ReviewComment(10, 1, "bob", "b.py", None, "y", "u"),
    )
    events, _ = derive(
        Snapshot(_pr(), reviews, comments), PrMemory(), "o/r", OWNER, now=NOW, review_timeout=0
    )
    assert [(e.kind, e.key) for e in events] == [
        ("review_received", "review:1"),
        ("changes_requested", "review:2"),
    ]
    assert [c.where for c in events[0].comments] == ["b.py"]
    assert [c.where for c in events[1].comments] == ["a.py:3"]


def test_check_runs_completed_only_and_ready_needs_every_check_green() -> None:
    approved = (_review(1, "alice", "APPROVED"),)
    pending = (_check(1, "build", "success"), _check(2, "test", None, "in_progress"))
    assert _kinds(Snapshot(_pr(), approved, checks=pending)) == ["review:1", "check:1:success"]
    green = (_check(1, "build", "success"), _check(3, "lint", "skipped"))
    assert _kinds(Snapshot(_pr(), approved, checks=green))[-1] == f"ready:{'b' * 40}"
    red = (_check(4, "test", "timed_out"),)
    assert _kinds(Snapshot(_pr(), approved, checks=red)) == ["review:1", "check:4:timed_out"]
    assert "ready" not in str(_kinds(Snapshot(_pr(draft=True), approved, checks=green)))


def test_review_state_takes_each_reviewers_latest_decision() -> None:
    pr = _pr()
    assert review_state(pr, ()) == ("none", ())
    assert review_state(pr, (_review(1, "a", "COMMENTED"),)) == ("commented", ())
    later = (
        _review(1, "a", "CHANGES_REQUESTED"),
        _review(2, "a", "APPROVED"),
        _review(3, "b", "APPROVED"),
    )
    assert review_state(pr, later) == ("approved", ("a", "b"))
    blocked = (_review(1, "a", "APPROVED"), _review(2, "b", "CHANGES_REQUESTED"))
    assert review_state(pr, blocked) == ("changes_requested", ("a",))
    dismissed = (_review(1, "b", "CHANGES_REQUESTED"), _review(2, "b", "DISMISSED"))
    assert review_state(pr, dismissed) == ("none", ())


def test_review_timeout_counts_from_when_the_head_was_first_seen() -> None:
    memory = PrMemory("b" * 40, NOW - 100)
    assert _kinds(Snapshot(_pr()), memory, timeout=101) == []
    assert _kinds(Snapshot(_pr()), memory, timeout=100) == [f"review_timeout:{'b' * 40}"]
    reviewed = (_review(1, "alice", "COMMENTED"),)
    assert _kinds(Snapshot(_pr(), reviewed), memory, timeout=100) == ["review:1"]
    old_review = (_review(1, "alice", "COMMENTED", sha="a" * 40),)
    assert _kinds(Snapshot(_pr(), old_review), memory, timeout=100)[-1].startswith("review_t")
    assert _kinds(Snapshot(_pr(state="closed", closed_at="x")), memory, timeout=1) == ["closed:x"]


def test_merged_and_closed() -> None:
    assert _kinds(Snapshot(_pr(state="closed", merged=True, closed_at="x"))) == ["merged"]
    assert _kinds(Snapshot(_pr(state="closed", closed_at="y"))) == ["closed:y"]


def test_to_json_carries_what_a_bus_needs() -> None:
    snap = Snapshot(_pr(), checks=(_check(4, "test", "failure"),))
    (event,), _ = derive(snap, PrMemory(), "o/r", OWNER, now=NOW, review_timeout=0)
    assert event.failed
    assert event.to_json() == {
        "kind": "ci_status",
        "key": "check:4:failure",
        "repo": "o/r",
        "number": 7,
        "url": "u",
        "title": "T",
        "head_sha": "b" * 40,
        "team": "proj",
        "worker": "w1",
        "branch": "exo/w1",
        "check": {
            "id": 4,
            "name": "test",
            "status": "completed",
            "conclusion": "failure",
            "completed_at": "t",
            "url": "c4",
        },
    }
