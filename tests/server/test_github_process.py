"""The GitHub poller in a real `exomonad serve`, against the loopback GitHub stand-in.

A worker (a recorder in a tmux pane, a synthetic member with a token and the branch
``exo/w1``) has pull request #7. The stand-in plays: changes requested → fix pushed →
CI fails → (server SIGKILLed, CI passes meanwhile, server started again) → approved
(after a 429) → a late CI failure → merged (after a 502 and an exhausted rate limit).
The exact lines typed into the worker's pane and the exact entries in the parent's
inbox are asserted after each step, each once and in order; the token is in no log,
no ``/health`` and no ``exomonad status``.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson
import pytest

from exomonad.server.pidfile import server_request
from exomonad.teams import Mailbox, TeamPaths, create_team, register_synthetic
from exomonad.util.waiting import retry_until
from tests.github.scenario import BRANCH, PARENT, REPO, STEPS, TEAM, WORKER, expected, opened
from tests.support.git import make_repo
from tests.support.github_api import Fault, GitHubStandIn
from tests.support.tmux import Reader, TmuxServer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

SENDER = "[from github] "


@dataclass
class Project:
    tmp: Path
    tmux: TmuxServer
    env: dict[str, str]
    reader: Reader
    state: Path
    root: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)
    _files: list[IO[bytes]] = field(default_factory=list)

    def start(self) -> None:
        log = self.tmp / f"serve-{len(self.logs)}.err"
        fh = log.open("wb")
        self._files.append(fh)
        proc = subprocess.Popen(
            [sys.executable, "-m", "exomonad", "serve", "-v", "--tmux-socket", self.tmux.socket],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=fh,
        )
        self.procs.append(proc)
        self.logs.append(log)

        def up() -> bool:
            if proc.poll() is not None:
                raise AssertionError(f"serve exited: {log.read_text(errors='replace')}")
            try:
                return bool(self.health()["pid"] == proc.pid)
            except Exception:
                return False

        retry_until(up, timeout=60, interval=0.05, message="the server did not come up")

    def kill(self) -> None:
        """SIGKILL once the watcher has recorded what it typed (a kill between typing and
        recording is the watcher's reported duplicate, tested in test_fault_injection)."""

        def recorded() -> bool:
            health = self.health()
            return bool(health["ledger"]["in_flight"] == 0 and health["counters"]["pending"] == 0)

        retry_until(recorded, timeout=60, interval=0.05, message="deliveries not recorded")
        proc = self.procs[-1]
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)

    def health(self) -> dict[str, Any]:
        _, data = server_request(str(self.state / "server.sock"), "GET", "/health", timeout=10)
        assert isinstance(data, dict)
        return data

    def github(self) -> dict[str, Any]:
        data: dict[str, Any] = self.health()["github"]
        return data

    def pane(self) -> list[str]:
        return self.reader.lines()

    def parent(self) -> list[str]:
        inbox = Mailbox(TeamPaths(TEAM, self.root)).read_raw(PARENT)
        return [e["text"] for e in inbox if e["from"] == "github"]

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(30)
        for fh in self._files:
            fh.close()


@pytest.fixture
def api() -> Iterator[GitHubStandIn]:
    with GitHubStandIn("ghp_" + secrets.token_hex(18), REPO).serving() as stand_in:
        yield stand_in


def _project(tmp: Path, tmux: TmuxServer, extra_env: dict[str, str]) -> Project:
    root, project = tmp / "claude", tmp / "proj"
    state = project / ".exomonad"
    make_repo(project)
    state.mkdir(parents=True)
    (state / "config.toml").write_text(
        "[lead]\npoll_grace = 0\n[policy]\npopup = false\n"
        f'[github]\ninterval = 0.2\nrepo = "{REPO}"\nreview_timeout = 0\n'
    )
    team = TeamPaths(TEAM, root)
    create_team(team)
    reader = tmux.reader(WORKER)
    register_synthetic(team, WORKER, pane=reader.pane)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("EXOMONAD_TOKEN", "TMUX", "GITHUB_TOKEN", "GITHUB_API_URL")
    }
    env.update(
        CLAUDE_CONFIG_DIR=str(root),
        EXOMONAD_DIR=str(state),
        EXOMONAD_ENTER_DELAY="0.01",
        EXOMONAD_LOCK_DIR=str(tmp / "pane-locks"),
        EXOMONAD_SPOOL_DIR=str(tmp / "spool"),
        **extra_env,
    )
    return Project(tmp, tmux, env, reader, state, root)


@pytest.fixture
def project(tmp_path: Path, tmux_server: TmuxServer, api: GitHubStandIn) -> Iterator[Project]:
    p = _project(tmp_path, tmux_server, {"GITHUB_TOKEN": api.token, "GITHUB_API_URL": api.url})
    yield p
    p.close()


def _wait_for(p: Project, upto: int, what: str) -> None:
    worker, parent = expected(upto)
    want = [SENDER + line for line in worker]
    retry_until(
        lambda: len(p.pane()) >= len(want) and len(p.parent()) >= len(parent),
        timeout=60,
        interval=0.05,
        message=f"{what}: pane {p.pane()!r}, parent {p.parent()!r}, github {p.github()!r}",
    )
    assert p.pane() == want, what
    assert p.parent() == parent, what


def _settle(p: Project, polls: int = 5) -> None:
    """Let the poller run ``polls`` more times (nothing new may arrive meanwhile)."""
    start = int(p.github()["polls"])
    retry_until(lambda: int(p.github()["polls"]) >= start + polls, timeout=60, interval=0.05)


def test_pr_life_reaches_worker_and_parent_once_across_a_restart(
    project: Project, api: GitHubStandIn
) -> None:
    opened(api)
    project.start()
    code, worker = server_request(
        str(project.state / "server.sock"),
        "POST",
        "/teammate/token",
        {"name": WORKER, "team": TEAM},
    )
    assert code == 200, worker
    assert worker["branch"] == BRANCH
    retry_until(lambda: bool(project.github()["prs"]), timeout=60, interval=0.05)
    assert project.github()["prs"][0]["review"] == "none"
    for done, step in enumerate(STEPS, start=1):
        if step.name == "CI passes":  # killed mid-sequence; GitHub moves on meanwhile
            project.kill()
            step.apply(api)
            project.start()
        else:
            if step.name == "approved":
                api.fault(
                    Fault(
                        429,
                        {"message": "API rate limit exceeded"},
                        {"retry-after": "1"},
                        path_re="/reviews$",
                    )
                )
            if step.name == "merged":
                api.fault(Fault(502, {"message": "Server Error"}, path_re="/pulls$"))
                api.fault(
                    Fault(
                        403,
                        {"message": "API rate limit exceeded for user ID 1."},
                        {
                            "x-ratelimit-remaining": "0",
                            "x-ratelimit-reset": str(int(time.time()) + 1),
                        },
                        path_re="/pulls$",
                    )
                )
            step.apply(api)
        _wait_for(project, done, step.name)
        if step.name == "approved":
            pr = project.github()["prs"][0]
            assert (pr["review"], pr["approvers"]) == ("approved", ["alice"])
            assert [(c["name"], c["conclusion"]) for c in pr["checks"]] == [("test", "success")]
    _settle(project)
    _wait_for(project, len(STEPS), "after the last step")  # still exactly these, once each

    gh = project.github()
    assert gh["enabled"] is True
    assert gh["token"] == "set"
    assert gh["rate_limit"]["hits"] == 2  # the 429 and the exhausted limit, since the restart
    assert gh["errors"] == 1  # the 502
    assert gh["failures"] == 0  # recovered
    assert gh["outbox"] == {"pending": 0, "sent": 12, "suppressed": 1, "dropped": 0, "events": 8}
    assert [(p["worker"], p["number"], p["state"]) for p in gh["prs"]] == [(WORKER, 7, "merged")]
    assert all(s.authorized for s in api.seen)
    assert any(s.conditional and s.status == 304 for s in api.seen)

    shown_by = subprocess.run(
        [sys.executable, "-m", "exomonad", "status", "--json"],
        env=project.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    shown = orjson.loads(shown_by.stdout)
    assert shown["github"]["prs"][0]["url"] == "https://github.com/octo/demo/pull/7"
    for text in (
        shown_by.stdout,
        orjson.dumps(project.health()).decode(),
        *(log.read_text(errors="replace") for log in project.logs),
    ):
        assert api.token not in text
    assert "GitHub poller on for octo/demo" in project.logs[-1].read_text(errors="replace")


def test_without_a_token_the_poller_is_off_and_says_why(
    tmp_path: Path, tmux_server: TmuxServer
) -> None:
    p = _project(tmp_path, tmux_server, {})
    try:
        p.start()
        gh = p.github()
        assert gh == {
            "enabled": False,
            "token": "unset",
            "reason": "off: $GITHUB_TOKEN is not set in the server's environment",
        }
    finally:
        p.close()
