"""Pull-request events from GitHub, delivered to the agent that owns the branch.

Agents open pull requests; reviews, CI results and approvals happen on GitHub while the
agent idles. The server polls GitHub's REST API for the pull requests of its workers'
branches and turns what changed into typed events (:class:`PrEvent`), each recorded
once in the ledger and sent as a tagged line to the worker's inbox (the inbox watcher
types it into its pane) and as a summary to its parent's inbox.

* :mod:`~exomonad.github.config`: the ``[github]`` section, the token from
  ``$GITHUB_TOKEN`` only;
* :mod:`~exomonad.github.client`: REST with ETags, rate limits and pages;
* :mod:`~exomonad.github.errors`: what can go wrong (under ``ExomonadError``);
* :mod:`~exomonad.github.model`: the response fields used, typed;
* :mod:`~exomonad.github.events`: events derived from a snapshot (pure);
* :mod:`~exomonad.github.messages`: the text each event becomes;
* :mod:`~exomonad.github.store`: watches, PR memory, events and outbox in ``ledger.db``;
* :mod:`~exomonad.github.poller`: one poll, back-off, health;
* :mod:`~exomonad.github.service`: start, stop, health, watch (the server's service).

See ``docs/github.md``.
"""

from __future__ import annotations

from exomonad.github.client import GitHubClient
from exomonad.github.config import EVENT_KINDS, EventKind, GitHubConfig
from exomonad.github.errors import (
    GitHubError,
    GitHubUnavailableError,
    RateLimitedError,
    ShapeError,
)
from exomonad.github.events import Owner, PrEvent, Snapshot, derive
from exomonad.github.messages import Messages
from exomonad.github.poller import GitHubPoller
from exomonad.github.service import GitHubService
from exomonad.github.store import GitHubStore, Outbound

__all__ = [
    "EVENT_KINDS",
    "EventKind",
    "GitHubClient",
    "GitHubConfig",
    "GitHubError",
    "GitHubPoller",
    "GitHubService",
    "GitHubStore",
    "GitHubUnavailableError",
    "Messages",
    "Outbound",
    "Owner",
    "PrEvent",
    "RateLimitedError",
    "ShapeError",
    "Snapshot",
    "derive",
]
