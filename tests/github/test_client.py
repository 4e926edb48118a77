"""GitHubClient against the stand-in: ETags, pages, rate-limit rules, errors, the token."""

from __future__ import annotations

import socket

import pytest

from exomonad.errors import ExomonadError
from exomonad.github import (
    GitHubClient,
    GitHubError,
    GitHubUnavailableError,
    RateLimitedError,
    ShapeError,
)
from tests.github.conftest import Clock
from tests.github.scenario import NUMBER, REPO, opened
from tests.support.github_api import Fault, GitHubStandIn, review


@pytest.fixture
def client(api: GitHubStandIn) -> GitHubClient:
    opened(api)
    return GitHubClient(api.url, api.token, clock=Clock())


def test_conditional_requests_use_the_etag(client: GitHubClient, api: GitHubStandIn) -> None:
    first = client.pulls(REPO, "octo:exo/w1")
    assert [p.number for p in first] == [NUMBER]
    assert client.pulls(REPO, "octo:exo/w1") == first
    assert [(s.conditional, s.status) for s in api.seen] == [(False, 200), (True, 304)]
    assert client.not_modified == 1
    assert client.requests == 2
    assert client.pulls(REPO, "octo:other") == []  # another head: another cache entry
    api.reviews[NUMBER] = [
        review(
            REPO, NUMBER, 1, user="a", state="COMMENTED", body="", commit_id="x", submitted_at="t"
        )
    ]
    assert [r.id for r in client.reviews(REPO, NUMBER)] == [1]
    assert client.rate.limit == 5000
    assert client.rate.remaining == api.remaining


def test_token_goes_only_to_the_api_root(client: GitHubClient, api: GitHubStandIn) -> None:
    elsewhere = '<http://127.0.0.2:9/repos/octo/demo/pulls?page=2>; rel="next"'
    api.fault(Fault(200, [], {"link": elsewhere}))
    assert client.reviews(REPO, NUMBER) == []  # the next page on another host: not followed
    assert len(api.seen) == 1
    assert api.seen[0].authorized
    assert api.token not in repr(client)


def test_exhausted_limit_blocks_until_reset(client: GitHubClient, api: GitHubStandIn) -> None:
    clock = Clock()
    client = GitHubClient(api.url, api.token, clock=clock)
    api.remaining = 1  # this answer leaves 0
    client.pulls(REPO, "octo:exo/w1")
    assert client.rate.remaining == 0
    with pytest.raises(RateLimitedError) as caught:
        client.reviews(REPO, NUMBER)
    assert caught.value.until == client.rate.reset
    assert len(api.seen) == 1  # refused without asking GitHub


def test_rate_limit_answers(client: GitHubClient, api: GitHubStandIn) -> None:
    api.fault(Fault(429, {"message": "slow down"}, {"retry-after": "7"}))
    with pytest.raises(RateLimitedError) as caught:
        client.pulls(REPO, "octo:exo/w1")
    assert caught.value.until == Clock().now + 7


def test_errors_are_typed(client: GitHubClient, api: GitHubStandIn) -> None:
    api.fault(Fault(500, {"message": "boom"}))
    with pytest.raises(GitHubUnavailableError, match="500: boom"):
        client.pulls(REPO, "octo:exo/w1")
    api.fault(Fault(403, {"message": "Resource not accessible by integration"}))
    with pytest.raises(GitHubError) as caught:
        client.pulls(REPO, "octo:exo/w1")
    assert not isinstance(caught.value, RateLimitedError | GitHubUnavailableError)
    with pytest.raises(GitHubError, match="404"):
        client.reviews("octo/missing", 1)
    api.fault(Fault(200, {"not": "a list"}))
    with pytest.raises(ShapeError):
        client.reviews(REPO, NUMBER)
    assert issubclass(GitHubError, ExomonadError)
    assert issubclass(ShapeError, ExomonadError)


def test_unreachable_is_unavailable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))  # held, never listening: refused, and no one else's
        port = s.getsockname()[1]
        client = GitHubClient(f"http://127.0.0.1:{port}", "t")
        with pytest.raises(GitHubUnavailableError, match="unreachable"):
            client.pulls(REPO, "octo:exo/w1")
