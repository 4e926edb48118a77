"""What the poller reads from GitHub's REST API, typed: only the fields it uses.

Each ``from_json`` takes one object of GitHub's documented response shape (a pull
request of ``GET /repos/{owner}/{repo}/pulls``, a review, a review comment, an issue
comment, a check run, a commit) and raises :class:`ShapeError` when a field it needs is
missing or of the wrong type; fields it does not use are ignored.

>>> Review.from_json({"id": 80, "user": {"login": "alice"}, "state": "APPROVED",
...                   "body": "", "commit_id": "abc", "html_url": "u"}).state
'APPROVED'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from exomonad.github.errors import ShapeError

__all__ = [
    "CheckRun",
    "Commit",
    "IssueComment",
    "PullRequest",
    "Review",
    "ReviewComment",
]


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, dict) or key not in obj:
            raise ShapeError(f"GitHub response has no {'.'.join(path)!r}")
        obj = obj[key]
    return obj


def _str(obj: Any, *path: str) -> str:
    value = _get(obj, *path)
    if not isinstance(value, str):
        raise ShapeError(f"GitHub response field {'.'.join(path)!r} is not a string")
    return value


def _int(obj: Any, *path: str) -> int:
    value = _get(obj, *path)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ShapeError(f"GitHub response field {'.'.join(path)!r} is not an integer")
    return value


def _opt(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else None


def _opt_str(obj: Any, key: str) -> str | None:
    value = _opt(obj, key)
    return value if isinstance(value, str) else None


def _login(obj: Any) -> str:
    """``user.login``; a deleted account (``user: null``) is GitHub's ``ghost``."""
    return _opt_str(_opt(obj, "user"), "login") or "ghost"


@dataclass(frozen=True)
class PullRequest:
    """A pull request (an item of the pulls list)."""

    number: int
    title: str
    url: str
    state: str  # open | closed
    author: str
    head_ref: str
    head_sha: str
    base_ref: str
    merged: bool
    closed_at: str | None
    draft: bool

    @classmethod
    def from_json(cls, d: Any) -> PullRequest:
        """Parse one pull request object."""
        return cls(
            number=_int(d, "number"),
            title=_str(d, "title"),
            url=_str(d, "html_url"),
            state=_str(d, "state"),
            author=_login(d),
            head_ref=_str(d, "head", "ref"),
            head_sha=_str(d, "head", "sha"),
            base_ref=_str(d, "base", "ref"),
            merged=_opt(d, "merged_at") is not None,
            closed_at=_opt_str(d, "closed_at"),
            draft=_opt(d, "draft") is True,
        )


@dataclass(frozen=True)
class Review:
    """A pull request review: ``APPROVED``, ``CHANGES_REQUESTED``, ``COMMENTED``,
    ``DISMISSED`` or ``PENDING``."""

    id: int
    user: str
    state: str
    body: str
    commit_id: str | None
    submitted_at: str | None
    url: str

    @classmethod
    def from_json(cls, d: Any) -> Review:
        """Parse one review object."""
        return cls(
            id=_int(d, "id"),
            user=_login(d),
            state=_str(d, "state"),
            body=_opt_str(d, "body") or "",
            commit_id=_opt_str(d, "commit_id"),
            submitted_at=_opt_str(d, "submitted_at"),
            url=_opt_str(d, "html_url") or "",
        )


@dataclass(frozen=True)
class ReviewComment:
    """A comment on a line of the diff, part of review ``review_id``."""

    id: int
    review_id: int | None
    user: str
    path: str
    line: int | None
    body: str
    url: str

    @classmethod
    def from_json(cls, d: Any) -> ReviewComment:
        """Parse one review comment object (``line``, else ``original_line``)."""
        line = _opt(d, "line")
        if not isinstance(line, int):
            line = _opt(d, "original_line")
        review = _opt(d, "pull_request_review_id")
        return cls(
            id=_int(d, "id"),
            review_id=review if isinstance(review, int) else None,
            user=_login(d),
            path=_str(d, "path"),
            line=line if isinstance(line, int) else None,
            body=_opt_str(d, "body") or "",
            url=_opt_str(d, "html_url") or "",
        )

    @property
    def where(self) -> str:
        """``path:line`` (``path`` for a comment on the whole file)."""
        return f"{self.path}:{self.line}" if self.line is not None else self.path


@dataclass(frozen=True)
class IssueComment:
    """A comment on the pull request's conversation (not on a line)."""

    id: int
    user: str
    body: str
    created_at: str | None
    url: str

    @classmethod
    def from_json(cls, d: Any) -> IssueComment:
        """Parse one issue comment object."""
        return cls(
            id=_int(d, "id"),
            user=_login(d),
            body=_opt_str(d, "body") or "",
            created_at=_opt_str(d, "created_at"),
            url=_opt_str(d, "html_url") or "",
        )


@dataclass(frozen=True)
class CheckRun:
    """A check run on a commit: ``status`` queued / in_progress / completed, and once
    completed its ``conclusion`` (success, failure, neutral, cancelled, skipped,
    timed_out, action_required...)."""

    id: int
    name: str
    status: str
    conclusion: str | None
    completed_at: str | None
    url: str

    @classmethod
    def from_json(cls, d: Any) -> CheckRun:
        """Parse one check run object (its link: ``html_url``, else ``details_url``)."""
        return cls(
            id=_int(d, "id"),
            name=_str(d, "name"),
            status=_str(d, "status"),
            conclusion=_opt_str(d, "conclusion"),
            completed_at=_opt_str(d, "completed_at"),
            url=_opt_str(d, "html_url") or _opt_str(d, "details_url") or "",
        )


@dataclass(frozen=True)
class Commit:
    """A commit of the pull request: its sha and the first line of its message."""

    sha: str
    subject: str

    @classmethod
    def from_json(cls, d: Any) -> Commit:
        """Parse one commit object of ``GET .../pulls/{n}/commits``."""
        message = _str(d, "commit", "message")
        return cls(sha=_str(d, "sha"), subject=message.split("\n", 1)[0].strip())
