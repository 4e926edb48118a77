"""A glob is judged by where it points from the command's cwd, and by what it expands to
now: ``*`` in a worktree names none of ExoMonad's state nor a credential.

Found trying the gate as a worker: ``ls *``, ``ls src/*``, ``du -sh *`` were refused as
touching ExoMonad's state (``*`` could match ``lead.token``, whatever the directory),
and ``cat *``, ``grep -n x *``, ``wc -l *`` as reading credentials (``*`` could match
``.env``). Globs that could reach the state or a store still are refused, counting
``dotglob`` (``*`` matching dot names), a ``..`` a dotted glob may match, and a link
among the names the glob expands to now.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from exomonad.policy import state_reads
from exomonad.policy.decisions import Allow, Deny
from exomonad.policy.state_reads import expand_now
from tests.policy.test_state_tree_live import Live
from tests.policy.worker import WT, bash, decide

ORDINARY = ["ls *", "ls src/*", "du -sh *", "cat *", "head -5 *", "grep -n foo *",
            "wc -l *", "rm -f *.pyc", "ls -la src/*/", "cat */*.token", "ls /*"]  # fmt: skip

STILL_REFUSED = [
    ("cat .*", "ExoMonad's state"),  # `.*` may be `..`: judged by its text
    ("cat .*/.*/.*/*", "ExoMonad's state"),  # ../../.exomonad/*
    ("ls ../../*", "ExoMonad's state"),  # with dotglob, `*` is `.exomonad` there
    ("cat ../../*/*", "ExoMonad's state"),
    ("cat ../../.exo*/*", "ExoMonad's state"),
    ("cat ../../.EXOMONA[D]/LEAD.TOKE[N]", "ExoMonad's state"),
    ("cat $X/*", "ExoMonad's state"),  # a variable's glob: by its text, as before
    ("for f in ../../*; do cat $f; done", "ExoMonad's state"),
    ("cat ~/.ss?/id_rsa", "reading credentials"),
    ("cat ~/*/id_rsa", "reading credentials"),  # with dotglob, `*` is `.ssh`
    ("cat .e*", "reading credentials"),
]


@pytest.mark.parametrize("command", ORDINARY)
def test_a_glob_in_the_worktree_is_ordinary_work(command: str) -> None:
    assert isinstance(bash(command), Allow), bash(command)


@pytest.mark.parametrize(("command", "reason"), STILL_REFUSED)
def test_a_glob_that_could_reach_the_state_or_a_store_is_refused(command: str,
                                                                 reason: str) -> None:  # fmt: skip
    verdict = bash(command)
    assert isinstance(verdict, Deny), verdict
    assert reason in verdict.reason


def test_globs_are_judged_by_what_they_expand_to_now(live: Live) -> None:
    """In a real worktree, through the real hook client: ``ls *`` and ``grep -n x *``
    are allowed; a link to the state dir among the names (as a checkout of a branch
    holding one would make) makes ``cat st/*`` a read of the state: bash really prints
    the lead's token through it, and the hook refuses it; a ``.env`` there makes ``cat
    *`` a read of it (``shopt -s dotglob; cat *`` prints it)."""
    token, worktree = live.spawn_worker()
    env = {**os.environ, "EXOMONAD_DIR": str(live.state), "EXOMONAD_TOKEN": token}
    for command in ("ls *", "grep -n scratch *", "cat *"):
        answer = live.hook(command, token=token, cwd=worktree)
        assert answer["permissionDecision"] == "allow", (command, answer)
    (worktree / "st").symlink_to(live.state)
    (worktree / ".env").write_text("API_KEY=exo-test-env-secret\n")
    for command, secret, reason in (
        ("cat st/*", (live.state / "lead.token").read_bytes().strip(), "ExoMonad's state"),
        ("shopt -s dotglob; cat *", b"exo-test-env-secret", "reading credentials"),
    ):
        ran = subprocess.run(["bash", "-c", command], cwd=worktree, env=env,
                             capture_output=True, timeout=30, check=False)  # fmt: skip
        assert secret in ran.stdout, (command, ran.stderr)
        answer = live.hook(command, token=token, cwd=worktree)
        assert answer["permissionDecision"] == "deny", (command, answer)
        assert reason in answer["permissionDecisionReason"], answer


def test_a_path_whose_glob_may_climb_is_judged_by_its_text() -> None:
    """``.*`` may match ``..`` (dash, bash without ``globskipdots``): the Read tool's
    ``<worktree>/.*/.*/.*/lead.tok*`` reaches ``.exomonad/lead.token``."""
    verdict = decide("Read", {"file_path": f"{WT}/.*/.*/.*/lead.tok*"})
    assert isinstance(verdict, Deny), verdict
    assert isinstance(decide("Read", {"file_path": f"{WT}/*"}), Allow)


def test_expanding_a_glob_reads_a_bounded_number_of_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found trying the gate as a worker: ``cat /usr/*/*/*/*/*/*/nope`` walked all of
    ``/usr`` for a name that is nowhere (2 s a call). The names read are counted, not
    only the names found: past the bound the glob is judged by its text (refused)."""
    for i in range(10):
        (tmp_path / f"d{i}").mkdir()
    assert expand_now(f"{tmp_path}/*/nope") == []
    monkeypatch.setattr(state_reads, "EXPAND_AT_MOST", 5)
    assert expand_now(f"{tmp_path}/*/nope") is None
    verdict = bash("cat /usr/*/*/*/*/*/*/*/*/*/*/nope")
    assert isinstance(verdict, Deny), verdict
