"""Poll GitHub for the watched branches' pull requests; record and send what is new.

One poll (:meth:`GitHubPoller.poll_once`): send what the outbox still holds; for each
watched branch (every worker the server knows with a branch, and branches a worker
opened a pull request from) list its pull requests by head; for each open one (or one
closed since the branch was first watched) read its reviews, comments, check runs at
its head and, when the head moved, its commits; :func:`~exomonad.github.events.derive`
the events (a pull request closed before its branch was watched, and never seen open,
is history: ignored); record the new ones with their messages (:mod:`exomonad.github.store`);
pass each to ``on_event`` (the one hook an event bus connects to); send the outbox.

:meth:`GitHubPoller.step` runs one poll and says how long to wait before the next:
``interval``; after a rate limit, until GitHub allows requests again; after an error
(``5xx``, network, a bad answer), ``interval`` doubled per consecutive failure up to
``max_backoff``. Events are derived from whole snapshots and recorded only once a
pull request's snapshot is complete, so a failed poll loses nothing and the next one
repeats nothing.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime
from typing import Any

from exomonad.errors import ExomonadError, UnknownRecipientError
from exomonad.github.client import GitHubClient
from exomonad.github.config import EventKind, GitHubConfig
from exomonad.github.errors import RateLimitedError
from exomonad.github.events import Owner, PrEvent, PrMemory, Snapshot, derive, review_state
from exomonad.github.messages import Messages
from exomonad.github.model import PullRequest
from exomonad.github.store import GitHubStore, Outbound

__all__ = ["NOISE", "Deliver", "GitHubPoller"]

log = logging.getLogger("exomonad.github")

#: Sends one message to its recipient's inbox; raises ExomonadError when it cannot
#: (UnknownRecipientError: the recipient left the team, the message is dropped).
Deliver = Callable[[Outbound], None]

#: What the parent no longer hears about a PR once told it is ready or timed out
#: (``suppress_after_ready``): everything but ``ready``, ``merged`` and ``closed``.
NOISE: frozenset[EventKind] = frozenset(
    {
        "review_received",
        "changes_requested",
        "approved",
        "ci_status",
        "commits_pushed",
        "review_timeout",
    }
)
_QUIETING: frozenset[EventKind] = frozenset({"ready", "review_timeout"})
_IDS = uuid.UUID("6c0f8f0e-6a57-4f1e-9a4e-2f2b8f0a9e13")


def _epoch(stamp: str | None) -> float:
    if not stamp:
        return 0.0
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return 0.0


class GitHubPoller:
    """Polls ``repo`` for the pull requests of ``targets()`` (see the module doc).

    Parameters
    ----------
    client, store, repo, config:
        GitHub, the ledger, ``owner/name``, the ``[github]`` section.
    targets:
        The workers to watch now (team, name, parent, branch); a branch stays watched
        after its worker is gone while it has an open pull request.
    deliver:
        Puts one message in its recipient's inbox.
    messages:
        Renders events into text.
    on_event:
        Called once with each new event, after it is recorded (an event bus hooks in
        here); its failures are logged, never fatal.
    """

    def __init__(
        self,
        client: GitHubClient,
        store: GitHubStore,
        repo: str,
        config: GitHubConfig,
        *,
        targets: Callable[[], Iterable[Owner]],
        deliver: Deliver,
        messages: Messages,
        on_event: Callable[[PrEvent], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client, self.store, self.repo, self.config = client, store, repo, config
        self.targets, self.deliver, self.messages = targets, deliver, messages
        self.on_event = on_event
        self.clock = clock
        self.polls = self.events = self.failures = self.errors = self.rate_limits = 0
        self.last_poll: float | None = None
        self.last_error: str | None = None
        self.limited_until: float | None = None
        self.next_delay = config.interval

    # -- the loop --------------------------------------------------------------------

    def step(self) -> float:
        """One poll; the seconds to wait before the next (see the module doc)."""
        try:
            self.poll_once()
        except RateLimitedError as exc:
            self.rate_limits += 1
            self.limited_until, self.last_error = exc.until, str(exc)
            log.warning("GitHub rate limit: polling again at %s", time.ctime(exc.until))
            self.next_delay = max(exc.until - self.clock(), self.config.interval)
        except ExomonadError as exc:
            self._failed(str(exc))
        except Exception as exc:  # the poller must outlive anything one poll meets
            log.exception("GitHub poll failed")
            self._failed(f"{type(exc).__name__}: {exc}")
        else:
            self.failures, self.limited_until = 0, None
            self.next_delay = self.config.interval
        return self.next_delay

    def _failed(self, error: str) -> None:
        self.failures += 1
        self.errors += 1
        self.last_error = error
        self.next_delay = min(self.config.interval * 2**self.failures, self.config.max_backoff)
        log.warning("GitHub poll failed (%s); next in %.1fs", error, self.next_delay)

    def poll_once(self) -> int:
        """Poll every watched branch once; how many new events were recorded."""
        self.send_pending()
        alive = list(self.targets())
        for owner in alive:
            self.store.watch(owner)
        live = {(o.team, o.worker) for o in alive}
        new = 0
        for owner in self.store.watches():
            new += self._poll_branch(owner, (owner.team, owner.worker) in live)
        self.send_pending()
        self.polls += 1
        self.events += new
        self.last_poll = self.clock()
        return new

    def _poll_branch(self, owner: Owner, alive: bool) -> int:
        since = self.store.watch(owner)
        head = f"{self.repo.split('/')[0]}:{owner.branch}"
        pulls = self.client.pulls(self.repo, head)
        new = 0
        for pr in sorted(pulls, key=lambda p: p.number):
            known = self.store.memory(self.repo, pr.number).head_sha is not None
            if pr.state == "open" or known or _epoch(pr.closed_at) >= since:
                new += self._poll_pr(owner, pr)
        if not alive and not any(p.state == "open" for p in pulls):
            self.store.unwatch(owner)  # its worker is gone, and so is anything to report
        return new

    def _snapshot(self, pr: PullRequest, memory: PrMemory) -> Snapshot:
        if pr.state != "open":
            return Snapshot(pr)
        c, repo, n = self.client, self.repo, pr.number
        moved = memory.head_sha is not None and memory.head_sha != pr.head_sha
        return Snapshot(
            pr,
            tuple(c.reviews(repo, n)),
            tuple(c.review_comments(repo, n)),
            tuple(c.issue_comments(repo, n)),
            tuple(c.check_runs(repo, pr.head_sha)),
            tuple(c.commits(repo, n)) if moved else (),
        )

    def _poll_pr(self, owner: Owner, pr: PullRequest) -> int:
        memory = self.store.memory(self.repo, pr.number)
        snap = self._snapshot(pr, memory)
        events, memory = derive(
            snap,
            memory,
            self.repo,
            owner,
            now=self.clock(),
            review_timeout=self.config.review_timeout,
        )
        seen = self.store.seen(self.repo, pr.number, [e.key for e in events])
        fresh = [e for e in events if e.key not in seen]
        rows: list[tuple[PrEvent, list[Outbound]]] = []
        quiet = memory.parent_quiet
        for e in fresh:
            rows.append((e, self._outbound(e, quiet)))
            quiet = quiet or (e.kind in _QUIETING and e.kind in self.config.parent_events)
        self.store.record(
            self.repo,
            pr.number,
            owner,
            replace(memory, parent_quiet=quiet),
            _status(snap, owner),
            rows,
        )
        for e in fresh:
            log.info("PR #%d of %s: %s (%s)", pr.number, owner.worker, e.kind, e.key)
            if self.on_event is not None:
                try:
                    self.on_event(e)
                except Exception:
                    log.exception("the GitHub event hook failed on %s", e.key)
        return len(fresh)

    def _outbound(self, e: PrEvent, quiet: bool) -> list[Outbound]:
        """The messages ``e`` becomes (a parent's noise after ready is kept, suppressed)."""
        out: list[Outbound] = []
        o, m = e.owner, self.messages
        if e.kind in self.config.worker_events:
            out.append(
                Outbound(
                    0,
                    "worker",
                    o.team,
                    o.worker,
                    e.kind,
                    m.worker(e),
                    m.summary(e),
                    self._id(e, "worker"),
                )
            )
        if e.kind in self.config.parent_events:
            hush = quiet and self.config.suppress_after_ready and e.kind in NOISE
            out.append(
                Outbound(
                    0,
                    "parent",
                    o.team,
                    o.parent,
                    e.kind,
                    m.parent(e),
                    m.summary(e),
                    self._id(e, "parent"),
                    "suppressed" if hush else "pending",
                )
            )
        return out

    def _id(self, e: PrEvent, audience: str) -> str:
        """A message id fixed by the event: a resend after a crash is the same message."""
        return str(uuid.uuid5(_IDS, f"{self.repo}#{e.pr.number}/{e.key}/{audience}"))

    def send_pending(self) -> int:
        """Send the outbox in order; a recipient whose inbox fails keeps the rest of its
        messages for the next poll. How many were sent."""
        stuck: set[tuple[str, str]] = set()
        sent = 0
        for m in self.store.pending():
            if (m.team, m.recipient) in stuck:
                continue
            try:
                self.deliver(m)
            except UnknownRecipientError as exc:
                log.warning("GitHub message to %s dropped: %s", m.recipient, exc)
                self.store.mark(m.seq, "dropped", str(exc))
            except ExomonadError as exc:
                log.warning("GitHub message to %s not sent yet: %s", m.recipient, exc)
                self.store.mark(m.seq, "pending", str(exc))
                stuck.add((m.team, m.recipient))
            else:
                self.store.mark(m.seq, "sent")
                sent += 1
        return sent

    def health(self) -> dict[str, Any]:
        """Counters, rate limit, back-off, the outbox, and each pull request's status."""
        return {
            "repo": self.repo,
            "api_url": self.client.api_url,
            "interval": self.config.interval,
            "polls": self.polls,
            "events": self.events,
            "last_poll": self.last_poll,
            "failures": self.failures,
            "errors": self.errors,
            "last_error": self.last_error,
            "next_poll_in": round(self.next_delay, 3),
            "requests": self.client.requests,
            "not_modified": self.client.not_modified,
            "rate_limit": {
                **self.client.rate.to_json(),
                "limited_until": self.limited_until,
                "hits": self.rate_limits,
            },
            "outbox": self.store.counts(),
            "prs": self.store.statuses(),
        }


def _status(snap: Snapshot, owner: Owner) -> dict[str, Any]:
    """What ``exomonad status`` shows of one pull request."""
    pr = snap.pr
    state = "merged" if pr.merged else pr.state
    out: dict[str, Any] = {
        "team": owner.team,
        "worker": owner.worker,
        "branch": owner.branch,
        "number": pr.number,
        "title": pr.title,
        "url": pr.url,
        "state": state,
        "draft": pr.draft,
        "head_sha": pr.head_sha,
    }
    if pr.state == "open":
        review, approvers = review_state(pr, snap.reviews)
        out["review"], out["approvers"] = review, list(approvers)
        out["checks"] = [
            {"name": c.name, "status": c.status, "conclusion": c.conclusion, "url": c.url}
            for c in snap.checks
        ]
    return out
