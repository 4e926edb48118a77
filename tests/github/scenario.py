"""The scripted life of one pull request, and exactly what each step must deliver.

review (changes requested) → fix pushed → CI fails → CI passes → approved (ready) → a
late CI failure (noise: the parent, told it is ready, does not hear it) → merged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tests.support.github_api import (
    GitHubStandIn,
    check_run,
    commit,
    pull,
    review,
    review_comment,
)

REPO = "octo/demo"
TEAM = "proj"
WORKER = "w1"
PARENT = "team-lead"
BRANCH = "exo/w1"
TITLE = "Add parser"
NUMBER = 7
SHA1 = "a1" * 20
SHA2 = "b2" * 20
PR_URL = f"https://github.com/{REPO}/pull/{NUMBER}"
RUNS = f"https://github.com/{REPO}/runs"
WHO = f'w1\'s PR #7 "{TITLE}"'


def opened(api: GitHubStandIn) -> None:
    """The worker opened the pull request: one commit, nothing else yet."""
    api.pulls = [pull(REPO, NUMBER, title=TITLE, branch=BRANCH, sha=SHA1)]
    api.commits[NUMBER] = [commit(REPO, SHA1, "Add parser")]


def changes_requested(api: GitHubStandIn) -> None:
    api.reviews[NUMBER] = [
        review(
            REPO,
            NUMBER,
            80,
            user="alice",
            state="CHANGES_REQUESTED",
            body="Please handle the empty case.",
            commit_id=SHA1,
            submitted_at="2024-05-01T11:00:00Z",
        ),
    ]
    api.comments[NUMBER] = [
        review_comment(
            REPO,
            NUMBER,
            90,
            review_id=80,
            user="alice",
            path="src/parser.py",
            line=12,
            body="This crashes on an empty list.",
            commit_id=SHA1,
        ),
    ]


def fix_pushed(api: GitHubStandIn) -> None:
    api.pulls = [pull(REPO, NUMBER, title=TITLE, branch=BRANCH, sha=SHA2)]
    api.commits[NUMBER].append(commit(REPO, SHA2, "Handle the empty list\n\nWith a test.", SHA1))
    api.checks[SHA2] = [check_run(REPO, 101, name="test", sha=SHA2, status="in_progress")]


def _ran(rid: int, conclusion: str, at: str) -> Callable[[GitHubStandIn], None]:
    def step(api: GitHubStandIn) -> None:
        api.checks[SHA2] = [
            check_run(REPO, rid, name="test", sha=SHA2, conclusion=conclusion, completed_at=at)
        ]

    return step


def approved(api: GitHubStandIn) -> None:
    api.reviews[NUMBER].append(
        review(
            REPO,
            NUMBER,
            81,
            user="alice",
            state="APPROVED",
            body="LGTM",
            commit_id=SHA2,
            submitted_at="2024-05-01T13:00:00Z",
        )
    )


def merged(api: GitHubStandIn) -> None:
    api.pulls = [
        pull(
            REPO,
            NUMBER,
            title=TITLE,
            branch=BRANCH,
            sha=SHA2,
            state="closed",
            merged_at="2024-05-01T14:00:00Z",
            closed_at="2024-05-01T14:00:00Z",
        )
    ]


@dataclass(frozen=True)
class Step:
    """One change on GitHub and the lines it must bring the worker and the parent."""

    name: str
    apply: Callable[[GitHubStandIn], None]
    worker: tuple[str, ...]
    parent: tuple[str, ...]


STEPS = (
    Step(
        "review",
        changes_requested,
        (
            '[CHANGES REQUESTED] PR #7: alice requested changes: "Please handle the empty case."; '
            '1 comment: src/parser.py:12 "This crashes on an empty list." — '
            f"{PR_URL}#pullrequestreview-80",
        ),
        (
            f"[CHANGES REQUESTED] {WHO}: alice requested changes (1 comment) — "
            f"{PR_URL}#pullrequestreview-80",
        ),
    ),
    Step(
        "fix pushed",
        fix_pushed,
        (
            "[PUSHED] PR #7: 1 new commit on exo/w1, head b2b2b2b: Handle the empty list — "
            f"{PR_URL}",
        ),
        (),
    ),
    Step(
        "CI fails",
        _ran(101, "failure", "2024-05-01T12:05:00Z"),
        (f'[CI FAILED] PR #7: check "test" failed (failure) on b2b2b2b — {RUNS}/101',),
        (f'[CI FAILED] {WHO}: check "test" failed (failure) on b2b2b2b — {RUNS}/101',),
    ),
    Step(
        "CI passes",
        _ran(102, "success", "2024-05-01T12:30:00Z"),
        (f'[CI PASSED] PR #7: check "test" passed on b2b2b2b — {RUNS}/102',),
        (f'[CI PASSED] {WHO}: check "test" passed on b2b2b2b — {RUNS}/102',),
    ),
    Step(
        "approved",
        approved,
        (f'[APPROVED] PR #7: alice approved: "LGTM" — {PR_URL}#pullrequestreview-81',),
        (f"[PR READY] {WHO}: approved by alice, every check passed — {PR_URL}",),
    ),
    Step(
        "late CI failure",
        _ran(103, "failure", "2024-05-01T13:30:00Z"),
        (f'[CI FAILED] PR #7: check "test" failed (failure) on b2b2b2b — {RUNS}/103',),
        (),
    ),  # the parent was told the PR is ready: this is noise to it
    Step(
        "merged",
        merged,
        (f"[PR MERGED] PR #7: merged — {PR_URL}",),
        (f"[PR MERGED] {WHO}: merged — {PR_URL}",),
    ),
)


def expected(upto: int) -> tuple[list[str], list[str]]:
    """Worker lines and parent lines once the first ``upto`` steps were applied."""
    worker = [line for s in STEPS[:upto] for line in s.worker]
    parent = [line for s in STEPS[:upto] for line in s.parent]
    return worker, parent
