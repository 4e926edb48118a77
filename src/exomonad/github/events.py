"""Typed pull-request events, derived from what GitHub shows now and what was seen before.

:func:`derive` is pure: from a :class:`Snapshot` of one pull request (the PR, its
reviews, comments, check runs at its head, and its commits when the head moved) and
the :class:`PrMemory` kept between polls, it returns every event the snapshot implies,
each with a key unique within the pull request. Which of them are new is the ledger's
business (:mod:`exomonad.github.store`), so a restart or a repeated poll derives the
same keys and nothing is told twice.

Kinds and keys:

============================  =======================  ==================================
kind                          key                      when
============================  =======================  ==================================
``review_received``           ``review:<id>``          a review that only comments
                              ``comment:<id>``         a comment on the conversation
``changes_requested``         ``review:<id>``          a review requesting changes
``approved``                  ``review:<id>``          an approving review
``commits_pushed``            ``push:<head sha>``      the head moved since the last poll
``ci_status``                 ``check:<id>:<result>``  a check run at the head completed
``ready``                     ``ready:<head sha>``     approved, no changes requested, and
                                                       every check at the head passed
``review_timeout``            ``review_timeout:<sha>`` no review of the head within
                                                       ``review_timeout`` seconds
``merged`` / ``closed``       ``merged`` /             the pull request was merged, or
                              ``closed:<closed_at>``   closed without merging
============================  =======================  ==================================

Events come in that order within one poll (reviews and comments oldest first, check
runs by completion). Reviews and comments by the pull request's own author are not
events (the agent's answers to its reviewers would come back to it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from exomonad.github.config import EventKind
from exomonad.github.model import (
    CheckRun,
    Commit,
    IssueComment,
    PullRequest,
    Review,
    ReviewComment,
)

__all__ = ["FAILED", "PASSED", "Owner", "PrEvent", "PrMemory", "Snapshot", "derive", "review_state"]

#: Check run conclusions that fail a check, and those that pass it.
FAILED = frozenset({"failure", "timed_out", "cancelled", "action_required", "startup_failure"})
PASSED = frozenset({"success", "neutral", "skipped"})

_REVIEW_KINDS: dict[str, EventKind] = {
    "COMMENTED": "review_received",
    "CHANGES_REQUESTED": "changes_requested",
    "APPROVED": "approved",
}


@dataclass(frozen=True)
class Owner:
    """The agent whose branch the pull request is from, and whom it reports to."""

    team: str
    worker: str
    parent: str
    branch: str


@dataclass(frozen=True)
class Snapshot:
    """One pull request as GitHub shows it now."""

    pr: PullRequest
    reviews: tuple[Review, ...] = ()
    comments: tuple[ReviewComment, ...] = ()
    conversation: tuple[IssueComment, ...] = ()
    checks: tuple[CheckRun, ...] = ()
    #: The PR's commits; fetched only when the head moved (else empty).
    commits: tuple[Commit, ...] = ()


@dataclass(frozen=True)
class PrMemory:
    """What the poller keeps about a pull request between polls (in the ledger)."""

    head_sha: str | None = None
    #: When the poller first saw the current head (epoch seconds).
    head_seen_at: float | None = None
    #: The parent was told "ready" or "timed out": later noise is not sent to it.
    parent_quiet: bool = False


@dataclass(frozen=True)
class PrEvent:
    """One typed event of pull request ``pr`` of ``repo`` (see the module doc)."""

    kind: EventKind
    key: str
    repo: str
    owner: Owner
    pr: PullRequest
    review: Review | None = None
    comments: tuple[ReviewComment, ...] = ()
    comment: IssueComment | None = None
    check: CheckRun | None = None
    commits: tuple[Commit, ...] = ()
    #: ``commits_pushed``: the old head is not among the PR's commits (history rewritten).
    forced: bool = False
    #: ``ready``: who approved.
    approvers: tuple[str, ...] = ()
    #: ``review_timeout``: seconds the head has waited.
    waited: float | None = None

    @property
    def failed(self) -> bool:
        """A ``ci_status`` whose check failed."""
        return self.check is not None and self.check.conclusion in FAILED

    def to_json(self) -> dict[str, Any]:
        """A JSON-able form (for an event bus)."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "key": self.key,
            "repo": self.repo,
            "number": self.pr.number,
            "url": self.pr.url,
            "title": self.pr.title,
            "head_sha": self.pr.head_sha,
            "team": self.owner.team,
            "worker": self.owner.worker,
            "branch": self.owner.branch,
        }
        parts = {"review": self.review, "comment": self.comment, "check": self.check}
        out.update({name: asdict(part) for name, part in parts.items() if part is not None})
        if self.comments:
            out["comments"] = [asdict(c) for c in self.comments]
        if self.commits:
            out["commits"] = [asdict(c) for c in self.commits]
        if self.kind == "commits_pushed":
            out["forced"] = self.forced
        if self.approvers:
            out["approvers"] = list(self.approvers)
        if self.waited is not None:
            out["waited"] = self.waited
        return out


def review_state(pr: PullRequest, reviews: tuple[Review, ...]) -> tuple[str, tuple[str, ...]]:
    """The review state (``approved``, ``changes_requested``, ``commented``, ``none``)
    from each reviewer's latest deciding review, and who approved."""
    latest: dict[str, str] = {}
    commented = False
    for r in reviews:
        if r.user == pr.author:
            continue
        if r.state in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED"):
            latest[r.user] = r.state
        commented = commented or r.state == "COMMENTED"
    approvers = tuple(sorted(u for u, s in latest.items() if s == "APPROVED"))
    if "CHANGES_REQUESTED" in latest.values():
        return "changes_requested", approvers
    if approvers:
        return "approved", approvers
    return ("commented" if commented else "none"), approvers


def derive(
    snap: Snapshot, memory: PrMemory, repo: str, owner: Owner, *, now: float, review_timeout: float
) -> tuple[list[PrEvent], PrMemory]:
    """Every event ``snap`` implies, in order, and the memory to keep for next time."""
    pr = snap.pr
    base = PrEvent(kind="ready", key="", repo=repo, owner=owner, pr=pr)
    events: list[PrEvent] = []
    events.extend(_reviews(snap, base))  # what the reviewers said, then what was pushed
    moved = memory.head_sha is not None and memory.head_sha != pr.head_sha
    if moved:
        shas = [c.sha for c in snap.commits]
        forced = memory.head_sha not in shas
        new = () if forced else tuple(snap.commits[shas.index(str(memory.head_sha)) + 1 :])
        events.append(
            replace(
                base, kind="commits_pushed", key=f"push:{pr.head_sha}", commits=new, forced=forced
            )
        )
    for run in sorted(snap.checks, key=lambda c: (c.completed_at or "", c.name, c.id)):
        if run.status == "completed" and (run.conclusion in FAILED or run.conclusion == "success"):
            events.append(
                replace(base, kind="ci_status", key=f"check:{run.id}:{run.conclusion}", check=run)
            )
    seen_at = (
        now
        if memory.head_seen_at is None or memory.head_sha != pr.head_sha
        else memory.head_seen_at
    )
    if pr.state == "open":
        events.extend(_waiting(snap, base, now - seen_at, review_timeout))
    if pr.merged:
        events.append(replace(base, kind="merged", key="merged"))
    elif pr.state == "closed":
        events.append(replace(base, kind="closed", key=f"closed:{pr.closed_at}"))
    return events, replace(memory, head_sha=pr.head_sha, head_seen_at=seen_at)


def _reviews(snap: Snapshot, base: PrEvent) -> list[PrEvent]:
    """Reviews (with their line comments) and conversation comments, oldest first."""
    timed: list[tuple[str, int, PrEvent]] = []
    for r in snap.reviews:
        kind = _REVIEW_KINDS.get(r.state)
        if kind is None or r.user == snap.pr.author:
            continue
        mine = tuple(c for c in snap.comments if c.review_id == r.id)
        event = replace(base, kind=kind, key=f"review:{r.id}", review=r, comments=mine)
        timed.append((r.submitted_at or "", r.id, event))
    for c in snap.conversation:
        if c.user != snap.pr.author:
            event = replace(base, kind="review_received", key=f"comment:{c.id}", comment=c)
            timed.append((c.created_at or "", c.id, event))
    return [e for _, _, e in sorted(timed, key=lambda t: (t[0], t[1]))]


def _waiting(snap: Snapshot, base: PrEvent, waited: float, timeout: float) -> list[PrEvent]:
    """``ready`` when it is; else ``review_timeout`` once the head waited too long."""
    pr = snap.pr
    state, approvers = review_state(pr, snap.reviews)
    checks_ok = all(c.status == "completed" and c.conclusion in PASSED for c in snap.checks)
    if state == "approved" and checks_ok and not pr.draft:
        return [replace(base, kind="ready", key=f"ready:{pr.head_sha}", approvers=approvers)]
    reviewed = any(r.commit_id == pr.head_sha and r.user != pr.author for r in snap.reviews)
    if timeout > 0 and waited >= timeout and not reviewed and state != "approved":
        return [
            replace(base, kind="review_timeout", key=f"review_timeout:{pr.head_sha}", waited=waited)
        ]
    return []
