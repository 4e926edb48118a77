"""The poller in the server: a worker's `gh pr create`, seen through its pre-tool-use
hook, watches the branch; the branch comes from --head, the worker's own, or its cwd."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from exomonad.github import GitHubConfig, Owner
from exomonad.panes import FakePaneBackend
from exomonad.policy import CreatePR, MergePR
from exomonad.server.app import health
from exomonad.server.config import PolicyConfig, ProjectConfig, WorkersConfig
from exomonad.server.events import PullRequestEvent
from exomonad.server.github import saw_actions
from exomonad.server.hooks import handle_hook
from exomonad.server.services import Services
from exomonad.server.workers import provision
from exomonad.teams import TeamPaths, create_team, get_dialect
from tests.github.scenario import REPO, changes_requested, opened
from tests.support.git import git, make_repo
from tests.support.github_api import GitHubStandIn


@pytest.fixture
def svc(
    tmp_path: Path, fake: FakePaneBackend, api: GitHubStandIn, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Services]:
    monkeypatch.setenv("GITHUB_TOKEN", api.token)
    monkeypatch.setenv("GITHUB_API_URL", api.url)
    root = tmp_path / "claude"
    make_repo(tmp_path / "project")
    create_team(TeamPaths("proj", root))
    config = ProjectConfig(
        policy=PolicyConfig(approval_timeout=0.2, popup=False),
        workers=WorkersConfig(ready_marker=""),
        github=GitHubConfig(repo=REPO, interval=3600),
    )
    s = Services(
        tmp_path / "project" / ".exomonad",
        root=root,
        backend=fake,
        dialect=get_dialect("2.1.112"),
        config=config,
    )
    s.registry.set_current("proj")
    s.github.start()
    yield s
    s.github.stop()
    s.close()


@pytest.fixture
def api() -> Iterator[GitHubStandIn]:
    with GitHubStandIn("ghp_test_token_value", REPO).serving() as stand_in:
        yield stand_in


def _watched(svc: Services) -> list[Owner]:
    assert svc.github.poller is not None
    return svc.github.poller.store.watches()


def test_gh_pr_create_through_the_hook_watches_the_head(svc: Services) -> None:
    who = provision(svc, "w1", "proj").identity
    payload = {
        "session_id": "s1",
        "tool_name": "Bash",
        "cwd": who.worktree,
        "tool_input": {"command": "gh pr create --fill --head feature/x"},
    }
    handle_hook(svc, who, "pre-tool-use", "claude", payload)
    assert Owner("proj", "w1", "team-lead", "feature/x") in _watched(svc)
    assert "ghp_test_token_value" not in str(health(svc))


def test_the_branch_a_pr_is_opened_from(svc: Services, tmp_path: Path) -> None:
    who = provision(svc, "w1", "proj").identity
    assert who.branch == "exo/w1"
    saw_actions(svc, who, [CreatePR(head="octo:topic-a")], None)
    saw_actions(svc, who, [CreatePR(base="main")], None)
    checkout = make_repo(tmp_path / "elsewhere")
    git(checkout, "checkout", "-q", "-b", "topic-b")
    saw_actions(svc, replace(who, branch=None), [CreatePR()], str(checkout))
    saw_actions(svc, who, [MergePR(3)], None)  # not a PR being opened
    saw_actions(svc, replace(who, team=None), [CreatePR(head="lead-branch")], None)
    assert {o.branch for o in _watched(svc) if o.worker == "w1"} == {"topic-a", "exo/w1", "topic-b"}
    provision(svc, "w2", "proj")
    saw_actions(svc, who, [CreatePR(head="exo/w2")], None)  # another worker's branch
    assert not any(o.branch == "exo/w2" for o in _watched(svc))


def test_health_reports_the_poller(svc: Services) -> None:
    gh = health(svc)["github"]
    assert gh["enabled"] is True
    assert gh["repo"] == REPO
    assert gh["token"] == "set"


def test_pull_request_events_reach_the_event_bus(svc: Services, api: GitHubStandIn) -> None:
    provision(svc, "w1", "proj")  # its branch exo/w1 is watched
    opened(api)
    changes_requested(api)
    assert svc.github.poller is not None
    svc.github.poller.poll_once()
    [event] = [e for e in svc.bus.recent() if isinstance(e, PullRequestEvent)]
    assert (event.team, event.worker, event.number, event.event) == (
        "proj", "w1", 7, "changes_requested")  # fmt: skip
    assert event.pr["url"] == "https://github.com/octo/demo/pull/7"
    assert health(svc)["services"]["github"]["state"] == "registered"  # started by hand here
