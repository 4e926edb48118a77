"""Live: the third round's ways around the gate, tried as a worker through the real hook
client against a live ``exomonad serve`` (a spawned worker, its token, its worktree).

Each command below was allowed before this round and did its harm when run (the unit
tests beside this one show the harm in scratch projects); here the real path — hook
client, server, policy, the worktree's link check — refuses each of them, and a
worker whose ``.git`` was rewritten gets every later call refused.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.policy.test_state_tree_live import Live

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

ATTEMPTS = [
    "grep -r exo_ {../..,.}",  # brace expansion: the lead's tokens
    "cd ~+/..; cd ~+/..; grep -r exo_ .",  # the directory stack's tilde
    "sh -c 'grep -r exo_ .?/.?'",  # dash's glob matches ..
    "cd ../.. && make",  # the lead's Makefile in the lead's checkout
    "git push origin HEAD:ma{i,}n",  # a push to main spelled with braces
    "git tag main HEAD",  # main, as the lead's git reads it
    "sqlite3 db '.shell touch ../../PWN'",
    "gunzip -f .git.gz",  # .git replaced: the next commit lands on the lead's main
]


def test_a_worker_cannot_get_around_the_gate_this_rounds_ways(live: Live) -> None:
    token, worktree = live.spawn_worker()
    leaked = subprocess.run(["bash", "-c", ATTEMPTS[0]], cwd=worktree,
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert token in leaked.stdout  # what the first one does when it runs
    for command in ATTEMPTS:
        answer = live.hook(command, token=token, cwd=worktree)
        assert answer["permissionDecision"] != "allow", (command, answer)
    assert live.hook("git status", token=token, cwd=worktree)["permissionDecision"] == "allow"

    # The worktree's link rewritten behind the gate's back: every later call refused.
    (worktree / ".git").write_text(f"gitdir: {live.state.parent / '.git'}\n")
    answer = live.hook("git status", token=token, cwd=worktree)
    assert answer["permissionDecision"] == "deny", answer
    assert "no longer linked" in answer["permissionDecisionReason"]
