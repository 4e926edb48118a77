"""A word brace expansion makes is tilde-expanded next, as bash does.

Bash expands braces first, then a leading unquoted ``~`` of each word it made: ``{~,x}/f``
is ``$HOME/f`` and ``x/f``, ``{~+/../..,.}`` the project's root and ``.``, and
``~{root,x}`` is ``~root`` and ``~x``. Found trying the gate as a worker: the lexer took
such a ``~`` for a directory named ``~`` in the worktree, so ``grep -r exo_lead
{~+/../..,.}`` printed the lead's token, allowed, ``touch {~+/../x,y}`` wrote beside the
worktree, allowed, and ``cat {~,x}/.ssh/id_rsa`` and ``tee -a {~,.}/.bash_profile`` (a
login shell's profile: Codex runs ``bash -lc``) were allowed as worktree paths.
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny, Escalate
from exomonad.policy.shell_lex import Word, lex
from tests.policy.worker import bash, run_bash, scratch_worktree

SECRET = "exo_lead_secret"


def test_a_tree_above_the_worktree_through_a_brace_is_refused(tmp_path: Path) -> None:
    root, wt = scratch_worktree(tmp_path, token=SECRET)
    command = "grep -r exo_lead {~+/../..,.}"
    done = run_bash(command, wt)
    assert SECRET in done.stdout, (done.stdout, done.stderr)  # the real effect
    assert isinstance(bash(command, root=str(root)), Deny)


def test_a_write_beside_the_worktree_through_a_brace_is_asked(tmp_path: Path) -> None:
    root, wt = scratch_worktree(tmp_path)
    command = "touch {~+/../pwned,x}"
    run_bash(command, wt)
    assert (wt.parent / "pwned").exists()  # the real effect: outside the worktree
    assert isinstance(bash(command, root=str(root)), Escalate)


def test_the_words_are_what_bash_makes_of_them() -> None:
    home = os.path.expanduser("~")
    words = [w for w in lex("cat {~,x}/f ~{+,y}/g {'~',z}") if isinstance(w, Word)]
    assert [w.text for w in words] == ["cat", f"{home}/f", "x/f", "$PWD/g", "~y/g", "~", "z"]
    assert [w.dynamic for w in words[3:5]] == [True, False]


#: A user every machine has: this process's own (``~NAME`` is its home).
USER = pwd.getpwuid(os.getuid()).pw_name


@pytest.mark.parametrize("command", [
    "cat {~,x}/.ssh/id_rsa",
    f"cat ~{{{USER},x}}/.ssh/id_rsa",
])  # fmt: skip
def test_a_credential_through_a_brace_is_refused(command: str) -> None:
    assert isinstance(bash(command), Deny), command


@pytest.mark.parametrize("command", [
    "echo 'echo hi' | tee -a {~,.}/.bash_profile",
    "touch {~,x}/.profile",
])  # fmt: skip
def test_a_write_to_the_home_through_a_brace_is_asked(command: str) -> None:
    assert isinstance(bash(command), Escalate), command


@pytest.mark.parametrize("command", [
    "cp file{,.bak}",
    "ls ~/{a,b}",
    "mkdir -p build/{a,b}",
    "ls {src,tests}/*.py",
    "cat {'~',x}/f",
])  # fmt: skip
def test_ordinary_braces_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
