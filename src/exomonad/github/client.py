"""A small GitHub REST client for the poller: conditional requests, rate limits, pages.

* **Conditional requests.** Every list is fetched with the ``ETag`` of its last answer
  (``If-None-Match``); a ``304 Not Modified`` returns the cached data and does not count
  against the primary rate limit.
* **Rate limits.** Each answer's ``x-ratelimit-*`` headers are kept (:attr:`rate`). A
  ``403``/``429`` that is a rate limit raises :class:`RateLimitedError` with the time to
  wait until, following GitHub's rules: ``retry-after`` seconds if given, else the
  ``x-ratelimit-reset`` time when ``x-ratelimit-remaining`` is 0, else one minute (a
  secondary limit). Until then the client sends nothing and raises at once; an answer
  with ``x-ratelimit-remaining: 0`` blocks it the same way until the reset.
* **Errors** (:mod:`exomonad.github.errors`): a ``5xx``, a network failure or an answer
  that is not JSON is :class:`GitHubUnavailableError` (retry later); anything else
  unexpected is :class:`GitHubError`.
* **The token** is sent as ``Authorization: Bearer`` to the API root only (pages are
  followed only on the same root; redirects are not followed) and appears in no
  message, ``repr`` or health document.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx2
import orjson

from exomonad import __version__
from exomonad.github.errors import (
    GitHubError,
    GitHubUnavailableError,
    RateLimitedError,
    ShapeError,
)
from exomonad.github.model import (
    CheckRun,
    Commit,
    IssueComment,
    PullRequest,
    Review,
    ReviewComment,
)
from exomonad.util.digits import is_number

__all__ = ["GitHubClient", "RateLimit"]

T = TypeVar("T")

#: Cached answers kept for conditional requests (oldest dropped first).
_CACHE_SIZE = 512
#: Pages followed for one list (100 items each).
_MAX_PAGES = 10
#: Wait after a secondary rate limit that names no time (GitHub: "at least one minute").
_SECONDARY_WAIT = 60.0


@dataclass
class RateLimit:
    """The primary rate limit as of the last answer (None: not reported yet)."""

    limit: int | None = None
    remaining: int | None = None
    reset: float | None = None

    def update(self, headers: httpx2.Headers) -> None:
        """Read ``x-ratelimit-limit``, ``-remaining`` and ``-reset``, when present."""
        for attr in ("limit", "remaining", "reset"):
            value = headers.get(f"x-ratelimit-{attr}", "")
            if is_number(value):
                setattr(self, attr, float(value) if attr == "reset" else int(value))

    def to_json(self) -> dict[str, float | int | None]:
        """For ``/health``."""
        return {"limit": self.limit, "remaining": self.remaining, "reset": self.reset}


class GitHubClient:
    """GitHub's REST API at ``api_url`` with ``token``.

    Parameters
    ----------
    api_url:
        The API root (``https://api.github.com``; ``https://HOST/api/v3`` for GitHub
        Enterprise Server).
    token:
        Sent as a bearer token; never logged or shown.
    timeout:
        Seconds for connecting and for each answer.
    clock:
        Epoch seconds (tests pass their own).
    """

    def __init__(
        self,
        api_url: str,
        token: str,
        *,
        timeout: float = 10.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.rate = RateLimit()
        self.blocked_until = 0.0
        self.requests = 0
        self.not_modified = 0
        self._clock = clock
        self._cache: dict[str, tuple[str, Any, str | None]] = {}
        self._http = httpx2.Client(
            headers={
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": f"exomonad/{__version__}",
                "Authorization": f"Bearer {token}",
            },
            timeout=timeout,
            follow_redirects=False,
        )

    def __repr__(self) -> str:
        return f"GitHubClient({self.api_url!r})"

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    # -- endpoints -------------------------------------------------------------------

    def pulls(self, repo: str, head: str) -> list[PullRequest]:
        """Pull requests (any state) whose head is ``head`` (``owner:branch``)."""
        return self._list(f"/repos/{repo}/pulls", PullRequest.from_json, state="all", head=head)

    def reviews(self, repo: str, number: int) -> list[Review]:
        """The reviews of pull request ``number``, oldest first."""
        return self._list(f"/repos/{repo}/pulls/{number}/reviews", Review.from_json)

    def review_comments(self, repo: str, number: int) -> list[ReviewComment]:
        """The comments on lines of pull request ``number``'s diff."""
        return self._list(f"/repos/{repo}/pulls/{number}/comments", ReviewComment.from_json)

    def issue_comments(self, repo: str, number: int) -> list[IssueComment]:
        """The comments on pull request ``number``'s conversation."""
        return self._list(f"/repos/{repo}/issues/{number}/comments", IssueComment.from_json)

    def check_runs(self, repo: str, sha: str) -> list[CheckRun]:
        """The latest check run of each name on commit ``sha``."""
        return self._list(
            f"/repos/{repo}/commits/{sha}/check-runs", CheckRun.from_json, key="check_runs"
        )

    def commits(self, repo: str, number: int) -> list[Commit]:
        """The commits of pull request ``number``, oldest first."""
        return self._list(f"/repos/{repo}/pulls/{number}/commits", Commit.from_json)

    # -- requests --------------------------------------------------------------------

    def _list(
        self, path: str, parse: Callable[[Any], T], *, key: str | None = None, **params: str
    ) -> list[T]:
        """Every item of a paged list (``per_page=100``, ``Link: next`` followed)."""
        url: str | None = str(httpx2.URL(self.api_url + path, params={**params, "per_page": "100"}))
        items: list[T] = []
        for _ in range(_MAX_PAGES):
            if url is None:
                break
            data, url = self._get(url)
            page = data.get(key) if key is not None and isinstance(data, dict) else data
            if not isinstance(page, list):
                raise ShapeError(f"GitHub answered {path} with no list")
            items.extend(parse(item) for item in page)
        return items

    def _get(self, url: str) -> tuple[Any, str | None]:
        """One conditional GET: the JSON and the next page's URL (on the same root)."""
        now = self._clock()
        if now < self.blocked_until:
            raise RateLimitedError("GitHub rate limit: waiting", self.blocked_until)
        cached = self._cache.get(url)
        headers = {"If-None-Match": cached[0]} if cached else {}
        try:
            answer = self._http.get(url, headers=headers)
        except httpx2.HTTPError as exc:
            raise GitHubUnavailableError(f"GitHub unreachable: {type(exc).__name__}") from exc
        self.requests += 1
        self.rate.update(answer.headers)
        if self.rate.remaining == 0 and self.rate.reset is not None:
            self.blocked_until = max(self.blocked_until, self.rate.reset)
        if answer.status_code == 304 and cached is not None:
            self.not_modified += 1
            return cached[1], cached[2]
        self._check(answer, now)
        try:
            data = orjson.loads(answer.content)
        except orjson.JSONDecodeError as exc:
            raise GitHubUnavailableError("GitHub answered with invalid JSON") from exc
        nxt = answer.links.get("next", {}).get("url")
        nxt = nxt if nxt and nxt.startswith(self.api_url + "/") else None
        etag = answer.headers.get("etag")
        if etag:
            self._cache.pop(url, None)
            self._cache[url] = (etag, data, nxt)
            while len(self._cache) > _CACHE_SIZE:
                self._cache.pop(next(iter(self._cache)))
        return data, nxt

    def _check(self, answer: httpx2.Response, now: float) -> None:
        """Raise for anything but a 200 (rate limits with the time to wait until)."""
        status = answer.status_code
        if status == 200:
            return
        message = _message(answer)
        if status in (403, 429):
            until = _limit_until(answer.headers, message, now)
            if until is not None:
                self.blocked_until = max(self.blocked_until, until)
                raise RateLimitedError(f"GitHub rate limit ({status}): {message}", until)
        if status >= 500:
            raise GitHubUnavailableError(f"GitHub answered {status}: {message}")
        raise GitHubError(f"GitHub answered {status} for {answer.request.url.path}: {message}")


def _message(answer: httpx2.Response) -> str:
    """GitHub's error ``message`` (at most 200 characters), else the status phrase."""
    try:
        body = orjson.loads(answer.content)
    except orjson.JSONDecodeError:
        body = None
    text = body.get("message") if isinstance(body, dict) else None
    return str(text)[:200] if text else answer.reason_phrase


def _limit_until(headers: httpx2.Headers, message: str, now: float) -> float | None:
    """When a ``403``/``429`` may be retried, if it is a rate limit (GitHub's rules)."""
    retry = headers.get("retry-after", "")
    if is_number(retry):
        return now + int(retry)
    reset = headers.get("x-ratelimit-reset", "")
    if headers.get("x-ratelimit-remaining") == "0" and is_number(reset):
        return max(float(reset), now + 1)
    if headers.get("x-ratelimit-remaining") == "0" or "rate limit" in message.lower():
        return now + _SECONDARY_WAIT
    return None
