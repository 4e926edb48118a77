"""What can go wrong talking to GitHub (all :class:`~exomonad.errors.ExomonadError`\\ s)::

GitHubError                 GitHub answered what the poller cannot use (bad token, 404)
├── GitHubUnavailableError  unreachable, a 5xx, or not JSON: try again later
├── RateLimitedError        a rate limit; ``until`` says when to ask again
└── ShapeError              an answer without a field the poller needs
"""

from __future__ import annotations

from exomonad.errors import ExomonadError

__all__ = ["GitHubError", "GitHubUnavailableError", "RateLimitedError", "ShapeError"]


class GitHubError(ExomonadError):
    """GitHub answered something the poller cannot use (bad token, no such repo...)."""


class GitHubUnavailableError(GitHubError):
    """GitHub could not be reached or failed (``5xx``): try again later."""


class RateLimitedError(GitHubError):
    """A rate limit: nothing is sent before ``until`` (epoch seconds)."""

    def __init__(self, message: str, until: float) -> None:
        super().__init__(message)
        self.until = until


class ShapeError(GitHubError):
    """A GitHub response without a field the poller needs (or of another type)."""
