"""The text an event becomes: one tagged line for the worker, a summary for its parent.

The worker's line carries what it needs to act: who reviewed, the review's text and
each comment's ``file:line`` and text, the failing check's name and link, the new
commits. The parent's is a summary naming the worker. Both are single lines starting
with a tag (``[REVIEW]``, ``[CHANGES REQUESTED]``, ``[APPROVED]``, ``[CI FAILED]``,
``[CI PASSED]``, ``[PUSHED]``, ``[PR READY]``, ``[PR MERGED]``, ``[PR CLOSED]``,
``[REVIEW TIMEOUT]``).

Long or multi-line review text is not typed: as the pane backend does with long
messages, the whole of it goes to a file in the spool directory
(:meth:`exomonad.panes.spool.Spool.write`) and the line names the file.

>>> from exomonad.github.events import Owner, PrEvent
>>> from exomonad.github.model import PullRequest
>>> pr = PullRequest(7, "Add parser", "https://gh/o/r/pull/7", "closed", "w", "exo/w1",
...                  "abcdef1234", "main", True, "2024-01-01T00:00:00Z", False)
>>> e = PrEvent("merged", "merged", "o/r", Owner("t", "w1", "team-lead", "exo/w1"), pr)
>>> Messages(Spool("/tmp")).parent(e)
'[PR MERGED] w1\\'s PR #7 "Add parser": merged — https://gh/o/r/pull/7'
"""

from __future__ import annotations

from typing import Any

from exomonad.github.events import PrEvent
from exomonad.panes.spool import Spool

__all__ = ["TAGS", "Messages", "tag"]

TAGS = {
    "review_received": "[REVIEW]",
    "changes_requested": "[CHANGES REQUESTED]",
    "approved": "[APPROVED]",
    "commits_pushed": "[PUSHED]",
    "ready": "[PR READY]",
    "merged": "[PR MERGED]",
    "closed": "[PR CLOSED]",
    "review_timeout": "[REVIEW TIMEOUT]",
}
#: Longest review detail typed inline (characters); longer goes to a spool file.
INLINE_LIMIT = 400
#: New commits listed by subject in a ``[PUSHED]`` line.
_COMMITS_LISTED = 5


def tag(e: PrEvent) -> str:
    """The event's tag (``ci_status``: ``[CI FAILED]`` or ``[CI PASSED]``)."""
    if e.kind == "ci_status":
        return "[CI FAILED]" if e.failed else "[CI PASSED]"
    return TAGS[e.kind]


def _quote(text: str) -> str:
    return '"' + " ".join(text.split()) + '"'


def _duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes // 60}h {minutes % 60}m" if minutes >= 60 else f"{minutes}m"


def _what(e: PrEvent) -> str:
    """What happened, in a few words (shared by both audiences)."""
    sha = e.pr.head_sha[:7]
    match e.kind:
        case "review_received":
            who = e.review.user if e.review is not None else e.comment.user if e.comment else "?"
            return f"{who} commented"
        case "changes_requested":
            return f"{e.review.user if e.review else '?'} requested changes"
        case "approved":
            return f"{e.review.user if e.review else '?'} approved"
        case "ci_status" if e.check is not None:
            if e.failed:
                return f'check "{e.check.name}" failed ({e.check.conclusion}) on {sha}'
            return f'check "{e.check.name}" passed on {sha}'
        case "commits_pushed":
            if e.forced:
                return f"{e.owner.branch} was force-pushed, head {sha}"
            count = len(e.commits)
            return f"{count} new commit{'s' if count != 1 else ''} on {e.owner.branch}, head {sha}"
        case "ready":
            return f"approved by {', '.join(e.approvers)}, every check passed"
        case "merged":
            return "merged"
        case "closed":
            return "closed without merging"
        case "review_timeout":
            return f"no review of {sha} for {_duration(e.waited or 0)}"
    return e.kind


def _link(e: PrEvent) -> str:
    for url in (
        e.review.url if e.review else None,
        e.comment.url if e.comment else None,
        e.check.url if e.check else None,
    ):
        if url:
            return url
    return e.pr.url


class Messages:
    """Renders events; long review text goes to files in ``spool``'s directory."""

    def __init__(self, spool: Spool, *, inline_limit: int = INLINE_LIMIT) -> None:
        self.spool = spool
        self.inline_limit = inline_limit

    def worker(self, e: PrEvent) -> str:
        """The line for the agent that owns the pull request."""
        return f"{tag(e)} PR #{e.pr.number}: {_what(e)}{self._detail(e)} — {_link(e)}"

    def parent(self, e: PrEvent) -> str:
        """The summary for the owner's parent."""
        count = f" ({_plural(len(e.comments), 'comment')})" if e.comments else ""
        return (
            f"{tag(e)} {e.owner.worker}'s PR #{e.pr.number} {_quote(e.pr.title)}: "
            f"{_what(e)}{count} — {_link(e)}"
        )

    @staticmethod
    def summary(e: PrEvent) -> str:
        """The inbox entry's ``summary`` (a few words shown in Claude Code's UI)."""
        return f"GitHub: PR #{e.pr.number} {tag(e).strip('[]').lower()}"

    def _detail(self, e: PrEvent) -> str:
        if e.kind == "commits_pushed":
            listed = "; ".join(c.subject for c in e.commits[:_COMMITS_LISTED])
            more = len(e.commits) - _COMMITS_LISTED
            return (f": {listed}" if listed else "") + (f"; and {more} more" if more > 0 else "")
        bodies = [e.review.body if e.review else "", e.comment.body if e.comment else ""]
        bodies = [b.strip() for b in bodies if b.strip()]
        if not bodies and not e.comments:
            return ""
        inline = "".join(f": {_quote(b)}" for b in bodies)
        if e.comments:
            notes = "; ".join(f"{c.where} {_quote(c.body)}" for c in e.comments)
            inline += f"; {_plural(len(e.comments), 'comment')}: {notes}"
        multiline = any("\n" in b for b in [*bodies, *(c.body.strip() for c in e.comments)])
        if not multiline and len(inline) <= self.inline_limit:
            return inline
        path = self.spool.write(self._full(e), sender=f"github-pr-{e.pr.number}",
                                to=(e.owner.team, e.owner.worker))  # fmt: skip
        where = f" on {', '.join(c.where for c in e.comments)}" if e.comments else ""
        counted = f", {_plural(len(e.comments), 'comment')}{where}" if e.comments else ""
        return f"{counted}; the full text is in {path} (read it)"

    @staticmethod
    def _full(e: PrEvent) -> str:
        """The whole review (or comment), as Markdown, for the spool file."""
        head = f"# {tag(e)} PR #{e.pr.number} {e.pr.title}: {_what(e)}\n\n{_link(e)}\n"
        parts = [head]
        for body in (e.review.body if e.review else "", e.comment.body if e.comment else ""):
            if body.strip():
                parts.append(body.strip() + "\n")
        for c in e.comments:
            parts.append(f"## {c.where}\n\n{c.body.strip()}\n\n{c.url}\n")
        return "\n".join(parts)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' if count != 1 else ''}"


def pr_summary(status: dict[str, Any]) -> str:
    """One line for a pull request's status (as :meth:`GitHubStore.statuses` keeps it),
    for ``exomonad status``, its TUI and the dashboard.

    >>> pr_summary({"number": 7, "state": "open", "review": "changes_requested",
    ...             "checks": [{"name": "lint", "conclusion": "success"},
    ...                        {"name": "test", "conclusion": "failure"}]})
    '#7 open, changes requested, checks 1/2 ok, failed: test'
    >>> pr_summary({"number": 8, "state": "merged"})
    '#8 merged'
    """
    parts = [f"#{status.get('number')} {status.get('state')}"]
    review = status.get("review")
    if review and review != "none":
        parts.append(str(review).replace("_", " "))
    checks = status.get("checks")
    if checks:
        ok = sum(1 for c in checks if c.get("conclusion") in ("success", "neutral", "skipped"))
        failed = [str(c.get("name")) for c in checks if c.get("conclusion") in _FAILED]
        parts.append(f"checks {ok}/{len(checks)} ok" + (f", failed: {', '.join(failed)}"
                                                        if failed else ""))  # fmt: skip
    return ", ".join(parts)


_FAILED = frozenset({"failure", "timed_out", "cancelled", "action_required", "startup_failure"})
