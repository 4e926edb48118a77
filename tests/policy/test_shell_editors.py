"""Editors told to run commands (on their command line, or on stdin) are asked
(:mod:`exomonad.policy.shell_editors`, ``shell_programs``'s editors).

Found trying the gate as a worker: each command in ``OVERWRITES`` was allowed as an edit
in the worktree and, run here for real, overwrote the lead's Makefile.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Escalate
from tests.policy.worker import bash, scratch_worktree

LEAD = "all:\n\techo lead\n"

OVERWRITES = [
    "ex -sc 'w! ../../Makefile|q' x",
    "vim.basic -Nesc 'w! ../../Makefile|q' x",
    "ex -s x <<< 'w! ../../Makefile'",
    "echo 'w! ../../Makefile' | ex -s x",
    "ed -s x <<< 'w ../../Makefile'",
    "printf 'w ../../Makefile\\n' | ed -s x",
    "ed -s x <<'EOF'\nw ../../Makefile\nEOF",
    "printf 'w ../../Makefile\\n' > c.ed && ed -s x < c.ed",
]

#: Stdin given to the editor a way ``OVERWRITES`` did not show (run with ``c.ed``
#: holding ``w ../../Makefile``, ``c2.ed`` a line before it, ``keys.txt`` vi keystrokes
#: ``:w! ../../Makefile``): to a group, a subshell or a loop holding it, by an earlier
#: ``exec <``, by a dup, and to vi, which reads keystrokes from a stdin that is not a
#: terminal (a here-string, or its ``-s`` script).
STDIN_SHAPES = [
    "{ ed -s x; } < c.ed",
    "(ed -s x) <<< 'w ../../Makefile'",
    "exec < c.ed; ed -s x",
    "ed -s x 3< c.ed <&3",
    "while read l; do ed -s x; done < c2.ed",
    "vim -s keys.txt x",
    "vim x <<< ':w! ../../Makefile'",
]

#: Asked by their words alone (emacs is not installed on the project's machines).
ASKED = [
    'emacs --batch --eval \'(copy-file "x" "../../Makefile" t)\'',
    "emacs -batch -l x.el",
    "emacs --script x.el",
    "vim -V20../../Makefile -es x",
    "vim -w ../../Makefile x",
    "vim --startuptime ../../Makefile x",
    "nvim -l script.lua",
    "nvim -l x.lua ../../Makefile",
    "vim -s -e x",
    "view -Rs keys.txt x",
]

ORDINARY = ["vim x.py", "vim -R +42 x.py", "vi -O a b", "vim -d a b", "emacs -nw x.py",
            "ed -s x < /dev/null", "echo hi | vim -", "ex -s x", "vim -es x",
            "{ ed -s x < /dev/null; } < c.ed", "nvim x.lua"]  # fmt: skip


@pytest.mark.parametrize("command", OVERWRITES)
def test_an_editors_commands_that_overwrite_the_leads_file_are_asked(
    tmp_path: Path, command: str
) -> None:
    for program in ("ed", "ex", "vim.basic"):
        assert shutil.which(program), f"{program} is not installed: run `make setup`"
    root, wt = scratch_worktree(tmp_path)
    (root / "Makefile").write_text(LEAD)
    (wt / "x").write_text("all:\n\techo pwned\n")
    subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, timeout=60,
                   check=False, stdin=subprocess.DEVNULL)  # fmt: skip
    assert "pwned" in (root / "Makefile").read_text(), command
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Escalate), (command, verdict)


@pytest.mark.parametrize("command", STDIN_SHAPES)
def test_an_editor_given_commands_on_stdin_any_way_is_asked(tmp_path: Path, command: str) -> None:
    for program in ("ed", "vim"):
        assert shutil.which(program), f"{program} is not installed: run `make setup`"
    root, wt = scratch_worktree(tmp_path)
    (root / "Makefile").write_text(LEAD)
    (wt / "x").write_text("all:\n\techo pwned\n")
    (wt / "c.ed").write_text("w ../../Makefile\n")
    (wt / "c2.ed").write_text("line\nw ../../Makefile\n")
    (wt / "keys.txt").write_text(":w! ../../Makefile\n:q!\n")
    subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, timeout=60,
                   check=False, stdin=subprocess.DEVNULL)  # fmt: skip
    assert "pwned" in (root / "Makefile").read_text(), command
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Escalate), (command, verdict)


@pytest.mark.parametrize("command", ASKED)
def test_an_editor_told_to_run_code_or_write_a_log_is_asked(command: str) -> None:
    verdict = bash(command)
    assert isinstance(verdict, Escalate), verdict


@pytest.mark.parametrize("command", ORDINARY)
def test_editing_in_the_worktree_stays_allowed(command: str) -> None:
    verdict = bash(command)
    assert isinstance(verdict, Allow), verdict
