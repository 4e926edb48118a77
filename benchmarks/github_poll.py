"""The GitHub poller: what one poll costs the server, idle and with news on every PR.

``workers`` watched branches, each with an open pull request (reviews, line comments,
one check run), served by the loopback stand-in of the tests
(``tests/support/github_api.py``: Python's ``http.server``, so part of each figure is
the stand-in's own time on the same two cores). A real :class:`GitHubClient`, the
SQLite ledger in a temp directory, deliveries appended to a list.

* **idle**: nothing changed; every request is conditional and answered ``304``;
* **news**: before each poll every PR gets a new completed check run, so each poll
  derives, records and sends one event (two messages) per PR.

Reported per poll: latency (p50/p99), requests, and how many were ``304``.
"""

from __future__ import annotations

import secrets
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from tests.support.github_api import GitHubStandIn, check_run, commit, pull, review, review_comment

from benchmarks._common import Settings, fmt_ms, summarize
from exomonad.github import (
    GitHubClient,
    GitHubConfig,
    GitHubPoller,
    GitHubStore,
    Messages,
    Outbound,
    Owner,
)
from exomonad.panes import Spool

NAME = "github_poll"
TITLE = "GitHub poller: one poll over N watched PRs (loopback stand-in)"
REPO = "octo/demo"


def _seed(api: GitHubStandIn, workers: int) -> list[Owner]:
    owners = []
    for n in range(1, workers + 1):
        sha = f"{n:040x}"
        api.pulls.append(pull(REPO, n, title=f"PR {n}", branch=f"exo/w{n}", sha=sha))
        api.commits[n] = [commit(REPO, sha, "work")]
        api.reviews[n] = [
            review(
                REPO,
                n,
                10_000 + n,
                user="alice",
                state="COMMENTED",
                body="ok",
                commit_id=sha,
                submitted_at="t",
            )
        ]
        api.comments[n] = [
            review_comment(
                REPO,
                n,
                20_000 + n,
                review_id=10_000 + n,
                user="alice",
                path="a.py",
                line=1,
                body="nit",
                commit_id=sha,
            )
        ]
        api.checks[sha] = [
            check_run(REPO, n, name="test", sha=sha, conclusion="success", completed_at="t")
        ]
        owners.append(Owner("bench", f"w{n}", "team-lead", f"exo/w{n}"))
    return owners


def _fixed(owners: list[Owner]) -> Callable[[], list[Owner]]:
    return lambda: owners


def _measure(poller: GitHubPoller, api: GitHubStandIn, rounds: int, news: bool) -> dict[str, Any]:
    latencies: list[float] = []
    requests = not_modified = 0
    for r in range(rounds):
        if news:
            for sha, runs in api.checks.items():
                rid = 1_000_000 + r * 10_000 + int(sha, 16)
                runs[:] = [
                    check_run(
                        REPO, rid, name="test", sha=sha, conclusion="failure", completed_at=f"r{r}"
                    )
                ]
        before, cached = poller.client.requests, poller.client.not_modified
        t0 = time.perf_counter()
        poller.poll_once()
        latencies.append((time.perf_counter() - t0) * 1000)
        requests += poller.client.requests - before
        not_modified += poller.client.not_modified - cached
    return {
        "latency": summarize(latencies),
        "requests_per_poll": requests / rounds,
        "not_modified_per_poll": not_modified / rounds,
    }


def run(settings: Settings, console: Console) -> dict[str, Any]:
    """Idle and news polls over ``workers`` PRs; latencies in ms."""
    rounds = settings.scale(40, 3)
    out: dict[str, Any] = {"rounds": rounds, "cases": {}}
    for workers in (1, 10):
        api = GitHubStandIn("ghp_" + secrets.token_hex(8), REPO)
        with api.serving(), tempfile.TemporaryDirectory(dir=settings.base_dir) as tmp:
            owners = _seed(api, workers)
            sent: list[Outbound] = []
            poller = GitHubPoller(
                GitHubClient(api.url, api.token),
                GitHubStore(Path(tmp) / "ledger.db"),
                REPO,
                GitHubConfig(interval=60, review_timeout=0),
                targets=_fixed(owners),
                deliver=sent.append,
                messages=Messages(Spool(Path(tmp) / "spool")),
            )
            poller.poll_once()  # first sight: everything fetched, first events recorded
            console.log(f"github_poll: {workers} PR(s), {rounds} rounds")
            idle = _measure(poller, api, rounds, news=False)
            first = len(sent)
            busy = _measure(poller, api, rounds, news=True)
            if len(sent) - first != 2 * workers * rounds:
                raise RuntimeError(f"expected {2 * workers * rounds} messages, got {len(sent)}")
            poller.client.close()
            poller.store.close()
        out["cases"][str(workers)] = {"idle": idle, "news": busy}
    return out


def render(data: dict[str, Any], console: Console) -> None:
    """One row per (PRs, case)."""
    table = Table(title=TITLE, caption=f"{data['rounds']} polls per row; ms")
    for col in ("PRs", "case", "p50", "p99", "requests/poll", "304/poll"):
        table.add_column(col, justify="right")
    for workers, cases in data["cases"].items():
        for case, s in cases.items():
            lat = s["latency"]
            table.add_row(
                workers,
                case,
                fmt_ms(lat["p50"]),
                fmt_ms(lat["p99"]),
                f"{s['requests_per_poll']:.1f}",
                f"{s['not_modified_per_poll']:.1f}",
            )
    console.print(table)
