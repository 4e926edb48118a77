"""``gh``'s changes to the user's account, the user's own gh and git, and the
repository's settings are asked; its reads, issues and comments stay ordinary work.

Found probing as a worker: ``gh ssh-key add``, ``gh auth setup-git``, ``gh config set
editor ./x``, ``gh extension install``, ``gh repo create``, ``gh gist create`` and more
were allowed.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Escalate
from exomonad.policy.request import ToolRequest
from tests.policy.test_state_tree_live import QUICK_ESCALATIONS, served
from tests.policy.worker import ROOT, bash, engine_for
from tests.support.tmux import TmuxServer

ASKED = [
    "gh ssh-key add k.pub",
    "gh gpg-key add k.asc",
    "gh repo deploy-key add k.pub",
    "gh auth setup-git",
    "gh auth login --with-token",
    "gh auth logout",
    "gh auth refresh -s delete_repo",
    "gh config set editor ./x",
    "gh extension install o/r",
    "gh ext remove x",
    'gh alias set co "pr checkout"',
    "gh repo create x --public",
    "gh repo fork",
    "gh repo set-default o/r",
    "gh repo sync",
    "gh gist create notes.txt --public",
    "gh codespace ssh",
    "gh label delete bug",
    "gh run cancel 1",
    "gh cache delete --all",
    "gh workflow disable ci",
    "gh secret set X -b y",
    "gh issue transfer 1 o/other",
    "gh repo clone o/r ../../x",  # a write outside the worktree
    "gh pr checkout 3",  # leaves the worker's branch for the pull request's
    "gh pr checkout 12 -b feature-x --force",  # resets a branch of the lead's
]

ORDINARY = [
    "gh auth status",
    "gh config get editor",
    "gh extension list",
    "gh alias list",
    "gh repo view",
    "gh repo clone o/r",
    "gh pr view 1",
    "gh pr review 1 --approve",
    "gh pr comment 1 -b done",
    "gh issue create -t x -b y",
    "gh label create bug",
    "gh run view 1",
    "gh gist list",
    "gh api repos/o/r",
]


@pytest.mark.parametrize("command", ASKED)
def test_changes_to_the_account_and_the_users_gh_are_asked(command: str) -> None:
    verdict = bash(command)
    assert isinstance(verdict, Escalate), verdict


@pytest.mark.parametrize("command", ORDINARY)
def test_reads_issues_and_comments_are_ordinary_work(command: str) -> None:
    assert isinstance(bash(command), Allow), bash(command)


def test_the_leads_own_pr_checkout_is_ordinary_work() -> None:
    """Only a worker's is asked: the lead's checkout is its own to switch."""
    lead = ToolRequest("claude", "tl", "lead", "Bash", {"command": "gh pr checkout 3 -f"},
                       cwd=ROOT)  # fmt: skip
    assert isinstance(engine_for(ROOT).decide(lead), Allow)


def test_a_worker_cannot_change_the_users_gh_or_git_config(
    tmp_path: Path, tmux_server: TmuxServer
) -> None:
    """Through the real hook client neither is allowed; run anyway by the real gh (it
    works offline), each writes a file of the user's outside the worktree: gh's config
    names the worker's editor, ``~/.gitconfig`` gets gh's credential helper."""
    gh = shutil.which("gh")
    assert gh is not None, "gh is missing: `make sysdeps` installs it"
    home = tmp_path / "home"
    (home / ".config" / "gh").mkdir(parents=True)
    (home / ".config" / "gh" / "hosts.yml").write_text(
        "github.com:\n    oauth_token: gho_exotest\n    user: exo\n    git_protocol: https\n"
    )
    with served(tmp_path, tmux_server, QUICK_ESCALATIONS, home=home) as live:
        token, worktree = live.spawn_worker()
        editor = worktree / "x.sh"
        for command, changed, shows in (
            (f"gh config set editor {editor}", home / ".config/gh/config.yml", str(editor)),
            ("gh auth setup-git", home / ".gitconfig", "gh auth git-credential"),
        ):
            answer = live.hook(command, token=token, cwd=worktree)
            assert answer["permissionDecision"] != "allow", (command, answer)
            assert f"gh {command.split()[1]}" in answer["permissionDecisionReason"], answer
            ran = subprocess.run(command.split(), cwd=worktree, env={**live.env}, text=True,
                                 capture_output=True, timeout=60, check=False)  # fmt: skip
            assert ran.returncode == 0, (command, ran.stderr)
            assert shows in changed.read_text(), command
