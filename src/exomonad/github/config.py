"""The ``[github]`` section of ``.exomonad/config.toml``, and where the token comes from.

Example::

    [github]
    enabled = true              # off without $GITHUB_TOKEN in the server's environment
    interval = 60.0             # seconds between polls
    api_url = ""                # "" : $GITHUB_API_URL, else https://api.github.com
    repo = ""                   # "owner/name"; "" : the project's origin remote
    review_timeout = 14400.0    # seconds a head may wait for a review (0: never times out)
    suppress_after_ready = true # once the parent heard "ready" or "timed out": only
                                # ready, merged and closed reach it for that PR
    max_backoff = 900.0         # longest wait after repeated errors (5xx, network)
    worker_events = ["review_received", "changes_requested", "approved", "ci_status",
                     "commits_pushed", "merged", "closed", "review_timeout"]
    parent_events = ["changes_requested", "ci_status", "ready", "merged", "closed",
                     "review_timeout"]

The token is read only from ``$GITHUB_TOKEN`` (never from a file ExoMonad writes): it is
not stored, logged, or shown (``/health`` says only whether it is set).
"""

from __future__ import annotations

import os
import re
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "DEFAULT_API_URL",
    "EVENT_KINDS",
    "TOKEN_ENV",
    "URL_ENV",
    "EventKind",
    "GitHubConfig",
]

#: Environment variable holding the token (never written anywhere by ExoMonad).
TOKEN_ENV = "GITHUB_TOKEN"
#: Environment variable naming the API root (GitHub Enterprise, a test stand-in).
URL_ENV = "GITHUB_API_URL"
DEFAULT_API_URL = "https://api.github.com"

EventKind = Literal[
    "review_received",
    "changes_requested",
    "approved",
    "ci_status",
    "commits_pushed",
    "ready",
    "merged",
    "closed",
    "review_timeout",
]
#: Every kind of event the poller derives, in no particular order.
EVENT_KINDS: tuple[EventKind, ...] = get_args(EventKind)

#: What the worker hears by default: everything but ``ready`` (its parent's business).
_WORKER_EVENTS: tuple[EventKind, ...] = tuple(k for k in EVENT_KINDS if k != "ready")
#: What the parent hears by default: decisions, CI, and the PR's milestones.
_PARENT_EVENTS: tuple[EventKind, ...] = (
    "changes_requested",
    "ci_status",
    "ready",
    "merged",
    "closed",
    "review_timeout",
)
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


class GitHubConfig(BaseModel):
    """How the server watches its workers' pull requests (see the module doc)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    interval: float = Field(default=60.0, gt=0)
    api_url: str = ""
    repo: str = ""
    review_timeout: float = Field(default=14400.0, ge=0)
    suppress_after_ready: bool = True
    max_backoff: float = Field(default=900.0, gt=0)
    #: Name the messages come from (the ``from`` of the inbox entries).
    sender: str = "github"
    worker_events: list[EventKind] = Field(default_factory=lambda: list(_WORKER_EVENTS))
    parent_events: list[EventKind] = Field(default_factory=lambda: list(_PARENT_EVENTS))

    @field_validator("repo")
    @classmethod
    def _repo(cls, value: str) -> str:
        if value and not _REPO.match(value):
            raise ValueError(f"repo must be owner/name, not {value!r}")
        return value

    def url(self) -> str:
        """The API root: ``api_url``, else ``$GITHUB_API_URL``, else GitHub's."""
        return (self.api_url or os.environ.get(URL_ENV) or DEFAULT_API_URL).rstrip("/")

    @staticmethod
    def token() -> str | None:
        """``$GITHUB_TOKEN`` (None when unset or blank)."""
        return os.environ.get(TOKEN_ENV, "").strip() or None
