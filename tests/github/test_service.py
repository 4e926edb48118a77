"""GitHubService: off (and why) without a token, a repository or consent; on, a thread
that polls until stopped; the token never in its health."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from exomonad.github import (
    GitHubClient,
    GitHubConfig,
    GitHubPoller,
    GitHubService,
    GitHubStore,
    Messages,
    Owner,
    PrEvent,
)
from exomonad.github.repo import current_branch, origin_repo
from exomonad.panes import Spool
from exomonad.util.waiting import retry_until
from tests.github.conftest import OWNER
from tests.github.scenario import STEPS, opened
from tests.support.git import git, make_repo
from tests.support.github_api import GitHubStandIn


def _service(tmp: Path, config: GitHubConfig, sent: list[str]) -> GitHubService:
    def build(repo: str, token: str, emit: object) -> GitHubPoller:
        assert callable(emit)
        return GitHubPoller(
            GitHubClient(config.url(), token),
            GitHubStore(tmp / "ledger.db"),
            repo,
            config,
            targets=lambda: [OWNER],
            deliver=lambda m: sent.append(m.text),
            messages=Messages(Spool(tmp / "spool")),
            on_event=emit,
        )

    return GitHubService(config, tmp / "project", build)


def test_off_without_a_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    service = _service(tmp_path, GitHubConfig(repo="octo/demo"), [])
    assert service.health()["reason"] == "not started"
    service.start()
    assert service.health() == {
        "enabled": False,
        "token": "unset",
        "reason": "off: $GITHUB_TOKEN is not set in the server's environment",
    }
    service.stop()


def test_off_when_disabled_or_no_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    off = _service(tmp_path, GitHubConfig(enabled=False, repo="octo/demo"), [])
    off.start()
    assert "enabled = false" in str(off.health()["reason"])
    make_repo(tmp_path / "project")  # no origin remote
    unknown = _service(tmp_path, GitHubConfig(), [])
    unknown.start()
    assert str(unknown.health()["reason"]).startswith("off: no GitHub repository")
    assert "ghp_secret" not in orjson.dumps(unknown.health()).decode()


def test_polls_on_its_thread_until_stopped(
    api: GitHubStandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", api.token)
    monkeypatch.setenv("GITHUB_API_URL", api.url)
    make_repo(tmp_path / "project")
    git(tmp_path / "project", "remote", "add", "origin", "git@github.com:octo/demo.git")
    assert origin_repo(tmp_path / "project") == "octo/demo"
    assert current_branch(tmp_path / "project") == "main"
    opened(api)
    STEPS[0].apply(api)
    sent: list[str] = []
    events: list[PrEvent] = []
    service = _service(tmp_path, GitHubConfig(interval=0.05), sent)
    service.on_event = events.append
    service.start()
    try:
        retry_until(lambda: service.health().get("polls", 0) >= 3, timeout=30)
        health = service.health()
        assert health["enabled"]
        assert health["running"]
        assert health["reason"] is None
        assert health["repo"] == "octo/demo"
        assert health["api_url"] == api.url
        assert api.token not in orjson.dumps(health).decode()
        assert len(sent) == 2
        assert [e.kind for e in events] == ["changes_requested"]
        service.watch(Owner("proj", "w2", "team-lead", "feature/x"))
        retry_until(
            lambda: any(s.query.get("head") == "octo:feature/x" for s in api.seen), timeout=30
        )
    finally:
        service.stop()
    assert service.health()["reason"] == "stopped"
    polls = len(api.seen)
    service.stop()  # twice is harmless
    assert len(api.seen) == polls


def test_a_poller_that_cannot_start_leaves_the_server_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")

    def broken(repo: str, token: str, emit: object) -> GitHubPoller:
        raise OSError("ledger.db: read-only file system")

    service = GitHubService(GitHubConfig(repo="octo/demo"), tmp_path, broken)
    service.start()
    assert service.health() == {
        "enabled": False,
        "token": "set",
        "reason": "off: could not start: OSError: ledger.db: read-only file system",
    }
