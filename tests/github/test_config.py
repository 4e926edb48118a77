"""The [github] section: defaults, the API root's precedence, the repository's form."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from exomonad.errors import ExomonadError
from exomonad.github import EVENT_KINDS, GitHubConfig
from exomonad.github.repo import parse_remote
from exomonad.server.config import load_project_config


def test_defaults() -> None:
    cfg = GitHubConfig()
    assert (cfg.interval, cfg.review_timeout, cfg.suppress_after_ready) == (60.0, 14400.0, True)
    assert set(cfg.worker_events) == set(EVENT_KINDS) - {"ready"}
    assert "approved" not in cfg.parent_events
    assert "ready" in cfg.parent_events


def test_api_url_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_API_URL", raising=False)
    assert GitHubConfig().url() == "https://api.github.com"
    monkeypatch.setenv("GITHUB_API_URL", "https://ghe.example/api/v3/")
    assert GitHubConfig().url() == "https://ghe.example/api/v3"
    assert GitHubConfig(api_url="http://127.0.0.1:9").url() == "http://127.0.0.1:9"


def test_token_from_the_environment_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "  ")
    assert GitHubConfig.token() is None
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_x")
    assert GitHubConfig.token() == "ghp_x"
    with pytest.raises(ValidationError):
        GitHubConfig.model_validate({"token": "ghp_x"})  # no such key: never in a file


def test_bad_values_are_refused(tmp_path: object) -> None:
    for bad in ({"repo": "just-a-name"}, {"interval": 0}, {"worker_events": ["nope"]}):
        with pytest.raises(ValidationError):
            GitHubConfig.model_validate(bad)


def test_in_config_toml(tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    state = Path(str(tmp_path))
    (state / "config.toml").write_text('[github]\ninterval = 0.5\nrepo = "octo/demo"\n')
    cfg = load_project_config(state).github
    assert (cfg.interval, cfg.repo) == (0.5, "octo/demo")
    (state / "config.toml").write_text('[github]\nrepo = "nope"\n')
    with pytest.raises(ExomonadError, match="owner/name"):
        load_project_config(state)


@pytest.mark.parametrize(
    ("url", "repo"),
    [
        ("git@github.com:octo/demo.git", "octo/demo"),
        ("https://github.com/octo/demo.git", "octo/demo"),
        ("https://x-access-token:abc@github.com/octo/demo", "octo/demo"),
        ("ssh://git@ghe.example:2222/octo/my.repo.git", "octo/my.repo"),
        ("/srv/git/demo.git", None),
        ("file:///srv/git/demo.git", None),
    ],
)
def test_parse_remote(url: str, repo: str | None) -> None:
    assert parse_remote(url) == repo
