"""A symbolic link made and used in one command line: the policy judges a path when the
call comes, and a link an earlier command of the same line makes does not exist yet.

Found probing as a worker against a live server (the real hook front): an archive, a
patch or git's index holding ``g -> ../../.git``, unpacked and then written through in
the same command (``tar -xf sym.tar && echo '[core] fsmonitor = ...' >> g/config``,
``unzip``, ``git apply``, ``cmake -E create_symlink``, ``git update-index --cacheinfo
120000,...`` then ``git checkout -- g``) rewrote the lead's ``.git/config``, whose
``fsmonitor`` the lead's next ``git status`` ran. Now a path in the worktree that a
command reaches after one that may have made links is Unknown (escalated). A link that
exists when the call comes is resolved (as before), so the same steps as two calls are
judged exactly.
"""

from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow
from tests.policy.worker import bash

FSMONITOR = "printf '[core]\\n\\tfsmonitor = touch PWN\\n' >> g/config"
THROUGH_NEW_LINKS = [
    f"tar -xf sym.tar && {FSMONITOR}",
    f"tar -xf sym.tar; {FSMONITOR}",
    f"unzip -q sym.zip && {FSMONITOR}",
    f"git apply sym.patch && {FSMONITOR}",
    f"cmake -E create_symlink ../../.git g && {FSMONITOR}",
    f"git checkout -- g && {FSMONITOR}",
    f"git stash pop && {FSMONITOR}",
    f"cp -a links/g g && {FSMONITOR}",
    f"mv links/g g && {FSMONITOR}",
    f"rsync -a links/ . && {FSMONITOR}",
    f"patch -p1 < sym.diff && {FSMONITOR}",
    f"jar xf sym.jar && {FSMONITOR}",
    "tar -xf sym.tar && cat g/config",
    "tar -xf sym.tar && rm -rf g/hooks",
    f"timeout 9 tar -xf sym.tar && {FSMONITOR}",
    f"{{ sleep 1; {FSMONITOR}; }} | tar -xf sym.tar",  # at once: a pipeline
    "sleep 1 | xargs cat g/config | tar -xf sym.tar",
]


@pytest.mark.parametrize("command", THROUGH_NEW_LINKS)
def test_a_path_after_a_command_that_may_make_links_is_not_allowed(command: str) -> None:
    assert not isinstance(bash(command), Allow), command


ORDINARY = [
    "tar -xf sym.tar",
    f"{FSMONITOR}",
    "echo x > a.txt && tar -czf out.tgz a.txt",
    "git add -A && git commit -qm x && echo done > log.txt",
    "git status && cat README.md",
    "npm ci && npm test",
    "tar -xf x.tar && npm test",
    "grep -rn tar src && echo found > log.txt",
    "echo patch > notes.txt && cat notes.txt",
    "gunzip -c x.tgz | tar -x",  # the first command of a pipeline starts with it
    "cat x.tar | tar -x",
]


@pytest.mark.parametrize("command", ORDINARY)
def test_paths_with_no_link_maker_before_them_stay_judged(command: str) -> None:
    assert isinstance(bash(command), Allow), command


def test_the_real_effect_a_link_from_an_archive_rewrites_the_leads_git_config(
    tmp_path: Path,
) -> None:
    """Run for real in a worktree layout: the lead's ``.git/config`` is appended to
    through the link the archive made; the policy does not allow that command line."""
    root = tmp_path / "p"
    wt = root / ".worktrees" / "w1"
    wt.mkdir(parents=True)
    (root / ".git").mkdir()
    config = root / ".git" / "config"
    config.write_text("[core]\n")
    link = tmp_path / "g"
    link.symlink_to("../../.git")
    with tarfile.open(wt / "sym.tar", "w") as tar:
        tar.add(link, arcname="g")
    for command in (THROUGH_NEW_LINKS[0], f"{{ sleep 1; {FSMONITOR}; }} | tar -xf sym.tar"):
        (wt / "g").unlink(missing_ok=True)
        config.write_text("[core]\n")
        subprocess.run(["bash", "-c", command], cwd=wt, check=True, timeout=30,
                       env={**os.environ, "LC_ALL": "C"})  # fmt: skip
        assert "fsmonitor = touch PWN" in config.read_text(), command  # it really does
        assert not isinstance(bash(command, root=str(root)), Allow), command
