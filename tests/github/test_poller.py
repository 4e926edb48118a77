"""The poller against the loopback stand-in: the scripted sequence, restarts, rate limits,
5xx, review time-outs, failed deliveries, and what a poll must not do."""

from __future__ import annotations

from pathlib import Path

from exomonad.errors import UnknownRecipientError
from exomonad.github import Outbound
from tests.github.conftest import OWNER, Refused, Rig
from tests.github.scenario import (
    BRANCH,
    NUMBER,
    PR_URL,
    REPO,
    SHA2,
    STEPS,
    TITLE,
    expected,
    opened,
)
from tests.support.github_api import Fault, check_run, issue_comment, pull, review


def test_scripted_sequence_exactly_once_across_a_restart(rig: Rig) -> None:
    opened(rig.api)
    assert rig.poller is not None
    assert rig.poller.poll_once() == 0  # an open PR with nothing on it: no event yet
    for done, step in enumerate(STEPS, start=1):
        step.apply(rig.api)
        if step.name == "CI passes":
            rig.start()  # the server restarted: new client (no ETags), the same ledger
        rig.poller.poll_once()
        rig.poller.poll_once()  # a second poll of the same state repeats nothing
        assert (rig.worker(), rig.parent()) == expected(done), step.name
    assert [e.kind for e in rig.events] == [
        "changes_requested",
        "commits_pushed",
        "ci_status",
        "ci_status",
        "approved",
        "ready",
        "ci_status",
        "merged",
    ]
    counts = rig.poller.store.counts()
    assert counts == {"pending": 0, "sent": 12, "suppressed": 1, "dropped": 0, "events": 8}
    status = rig.poller.health()["prs"]
    assert status == [
        {
            "team": "proj",
            "worker": "w1",
            "branch": BRANCH,
            "number": NUMBER,
            "title": TITLE,
            "url": PR_URL,
            "state": "merged",
            "draft": False,
            "head_sha": SHA2,
        }
    ]


def test_conditional_requests_and_health_status(rig: Rig) -> None:
    opened(rig.api)
    for step in STEPS[:4]:
        step.apply(rig.api)
    assert rig.poller is not None
    rig.poller.poll_once()
    before = rig.poller.client.not_modified
    rig.poller.poll_once()
    # Nothing changed: every request of the second poll was answered 304 from the ETag.
    second = rig.api.seen[-5:]  # the PR list, reviews, comments (2 kinds), check runs
    assert all(s.conditional and s.status == 304 for s in second), second
    assert rig.poller.client.not_modified == before + 5
    pr = rig.poller.health()["prs"][0]
    assert pr["review"] == "changes_requested"
    assert pr["checks"] == [
        {
            "name": "test",
            "status": "completed",
            "conclusion": "success",
            "url": "https://github.com/octo/demo/runs/102",
        }
    ]
    assert rig.poller.health()["rate_limit"]["remaining"] == rig.api.remaining


def test_rate_limit_retry_after_backs_off_and_recovers(rig: Rig) -> None:
    opened(rig.api)
    STEPS[0].apply(rig.api)
    rig.api.fault(
        Fault(
            429, {"message": "API rate limit exceeded"}, {"retry-after": "30"}, path_re="/reviews"
        )
    )
    assert rig.poller is not None
    assert rig.poller.step() == 30.0
    health = rig.poller.health()
    assert health["rate_limit"]["limited_until"] == rig.clock.now + 30
    assert health["rate_limit"]["hits"] == 1
    sent = len(rig.api.seen)
    assert rig.poller.step() > 0  # still limited: nothing is sent to GitHub
    assert len(rig.api.seen) == sent
    assert rig.worker() == []
    rig.clock.now += 31
    assert rig.poller.step() == rig.config.interval
    assert rig.poller.health()["rate_limit"]["limited_until"] is None
    assert (rig.worker(), rig.parent()) == expected(1)
    rig.poller.step()
    assert (rig.worker(), rig.parent()) == expected(1)


def test_primary_and_secondary_rate_limits(rig: Rig) -> None:
    opened(rig.api)
    reset = int(rig.clock.now) + 120
    rig.api.fault(
        Fault(
            403,
            {"message": "API rate limit exceeded for user ID 1."},
            {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)},
        )
    )
    assert rig.poller is not None
    assert rig.poller.step() == 120.0
    rig.clock.now = reset
    rig.api.fault(Fault(403, {"message": "You have exceeded a secondary rate limit."}))
    assert rig.poller.step() == 60.0  # no time given: at least a minute (GitHub's rule)
    rig.clock.now += 60
    rig.poller.step()
    assert rig.poller.health()["failures"] == 0
    assert rig.poller.health()["rate_limit"]["hits"] == 2


def test_5xx_backs_off_doubling_and_loses_nothing(rig: Rig) -> None:
    opened(rig.api)
    assert rig.poller is not None
    rig.poller.poll_once()
    for step in STEPS[:3]:
        step.apply(rig.api)
    for _ in range(3):
        rig.api.fault(Fault(502, {"message": "Server Error"}, path_re="/check-runs"))
    assert [rig.poller.step() for _ in range(3)] == [2.0, 4.0, 8.0]
    assert rig.poller.health()["failures"] == 3
    assert "502" in str(rig.poller.health()["last_error"])
    assert rig.worker() == []  # a PR's events are recorded only from a whole snapshot
    assert rig.poller.step() == 1.0
    assert (rig.worker(), rig.parent()) == expected(3)
    assert rig.poller.health()["failures"] == 0


def test_backoff_is_capped(rig: Rig) -> None:
    rig.start(max_backoff=5.0)
    opened(rig.api)
    for _ in range(4):
        rig.api.fault(Fault(503, {"message": "unavailable"}))
    assert rig.poller is not None
    assert [rig.poller.step() for _ in range(4)] == [2.0, 4.0, 5.0, 5.0]


def test_review_timeout_then_parent_hears_only_milestones(rig: Rig) -> None:
    rig.start(review_timeout=3600.0)
    opened(rig.api)
    assert rig.poller is not None
    rig.poller.poll_once()
    rig.clock.now += 3599
    rig.poller.poll_once()
    assert rig.worker() == []
    rig.clock.now += 1
    rig.poller.poll_once()
    line = f'[REVIEW TIMEOUT] w1\'s PR #7 "{TITLE}": no review of a1a1a1a for 1h 0m — {PR_URL}'
    assert rig.parent() == [line]
    assert rig.worker() == [f"[REVIEW TIMEOUT] PR #7: no review of a1a1a1a for 1h 0m — {PR_URL}"]
    rig.api.checks["a1" * 20] = [
        check_run(REPO, 5, name="lint", sha="a1" * 20, conclusion="failure", completed_at="t")
    ]
    rig.api.reviews[NUMBER] = [
        review(
            REPO,
            NUMBER,
            9,
            user="bob",
            state="APPROVED",
            body="",
            commit_id="a1" * 20,
            submitted_at="t",
        )
    ]
    rig.poller.poll_once()
    assert rig.parent() == [line]  # quiet: the CI failure is noise to the parent now
    assert rig.worker()[1:] == [
        f"[APPROVED] PR #7: bob approved — {PR_URL}#pullrequestreview-9",
        f'[CI FAILED] PR #7: check "lint" failed (failure) on a1a1a1a — https://github.com/{REPO}/runs/5',
    ]
    rig.api.checks["a1" * 20] = [
        check_run(REPO, 6, name="lint", sha="a1" * 20, conclusion="success", completed_at="u")
    ]
    rig.poller.poll_once()
    assert rig.parent()[1:] == [
        f'[PR READY] w1\'s PR #7 "{TITLE}": approved by bob, every check passed — {PR_URL}'
    ]


def test_suppression_can_be_turned_off(rig: Rig) -> None:
    rig.start(suppress_after_ready=False)
    opened(rig.api)
    for step in STEPS[:6]:
        step.apply(rig.api)
        assert rig.poller is not None
        rig.poller.poll_once()
    assert (
        rig.parent()[-1] == f'[CI FAILED] w1\'s PR #7 "{TITLE}": check "test" failed '
        f"(failure) on b2b2b2b — https://github.com/{REPO}/runs/103"
    )


def test_failed_delivery_keeps_order_and_retries(rig: Rig) -> None:
    opened(rig.api)
    refused = True

    def fail(m: Outbound) -> None:
        if refused and m.audience == "worker":
            raise Refused("inbox locked")

    rig.fail = fail
    assert rig.poller is not None
    for step in STEPS[:3]:
        step.apply(rig.api)
        rig.poller.poll_once()
    assert rig.worker() == []
    assert rig.parent() == expected(3)[1]  # another recipient is not held up
    assert rig.poller.store.counts()["pending"] == 3
    refused = False
    rig.poller.poll_once()
    assert rig.worker() == expected(3)[0]


def test_a_recipient_that_left_is_dropped(rig: Rig) -> None:
    opened(rig.api)
    STEPS[0].apply(rig.api)

    def gone(m: Outbound) -> None:
        if m.recipient == "w1":
            raise UnknownRecipientError("w1 is not a member of proj")

    rig.fail = gone
    assert rig.poller is not None
    rig.poller.poll_once()
    rig.poller.poll_once()
    assert rig.poller.store.counts()["dropped"] == 1
    assert rig.parent() == expected(1)[1]


def test_history_and_own_comments_are_not_news(rig: Rig) -> None:
    old = pull(
        REPO,
        3,
        title="Old",
        branch=BRANCH,
        sha="c3" * 20,
        state="closed",
        merged_at="2020-01-01T00:00:00Z",
        closed_at="2020-01-01T00:00:00Z",
    )
    opened(rig.api)
    rig.api.pulls.insert(0, old)  # the branch name's earlier owner's merged PR
    rig.api.conversation[NUMBER] = [
        issue_comment(REPO, NUMBER, 50, user="exo-bot", body="Done, PTAL", created_at="t1"),
        issue_comment(REPO, NUMBER, 51, user="carol", body="Please rebase", created_at="t2"),
    ]
    assert rig.poller is not None
    rig.poller.poll_once()
    assert rig.worker() == [
        f'[REVIEW] PR #7: carol commented: "Please rebase" — {PR_URL}#issuecomment-51'
    ]
    assert [s["number"] for s in rig.poller.health()["prs"]] == [NUMBER]


def test_a_gone_worker_stays_watched_while_its_pr_is_open(rig: Rig) -> None:
    opened(rig.api)
    assert rig.poller is not None
    rig.poller.poll_once()
    rig.targets = []  # the worker was removed; its PR is still open
    rig.poller.poll_once()
    assert rig.poller.store.watches() == [OWNER]
    STEPS[-1].apply(rig.api)
    rig.poller.poll_once()
    assert rig.worker()[-1] == f"[PR MERGED] PR #7: merged — {PR_URL}"
    assert rig.poller.store.watches() == []


def test_long_review_goes_to_a_spool_file(rig: Rig) -> None:
    opened(rig.api)
    rig.api.reviews[NUMBER] = [
        review(
            REPO,
            NUMBER,
            80,
            user="alice",
            state="COMMENTED",
            body="Some thoughts:\n\n1. naming\n2. tests",
            commit_id="a1" * 20,
            submitted_at="t",
        )
    ]
    assert rig.poller is not None
    rig.poller.poll_once()
    (line,) = rig.worker()
    head, _, rest = line.partition("; the full text is in ")
    assert head == "[REVIEW] PR #7: alice commented"
    path = rest.split(" (read it)")[0]
    assert path.startswith(str(rig.tmp / "spool"))
    assert "1. naming\n2. tests" in Path(path).read_text("utf-8")


def test_wrong_token_is_an_error_that_does_not_show_it(rig: Rig) -> None:
    opened(rig.api)
    token = rig.api.token
    rig.api.token = "ghp_other"
    assert rig.poller is not None
    assert rig.poller.step() == 2.0
    health = rig.poller.health()
    assert "401" in str(health["last_error"])
    assert token not in repr(health)
    assert token not in repr(rig.poller.client)
    assert all(not s.authorized for s in rig.api.seen)


def test_pages_are_followed(rig: Rig) -> None:
    rig.api.per_page_cap = 2
    opened(rig.api)
    sha = "a1" * 20
    rig.api.checks[sha] = [
        check_run(REPO, i, name=f"job{i}", sha=sha, conclusion="success", completed_at=f"t{i}")
        for i in range(5)
    ]
    assert rig.poller is not None
    rig.poller.poll_once()
    assert len(rig.worker()) == 5
    assert rig.poller.poll_once() == 0
    assert len(rig.worker()) == 5
    assert rig.api.seen[-1].query["page"] == "3"
