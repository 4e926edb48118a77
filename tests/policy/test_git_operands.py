"""Which word of a git command is the path it writes or the name it creates, when an
option before it takes a value in a word of its own (found trying the gate as a worker,
a seventh round; each allowed and reproduced for real in a scratch project):

- ``git init --bare --template ./tpl ../../.git`` re-initialised the lead's repository:
  the template's ``pre-commit`` landed in the common ``.git/hooks`` (the worker's next
  commit ran it) and ``core.bare`` was set, the lead's checkout broken ("this operation
  must be run in a work tree"); judged as a write of ``<wt>/tpl``, the value;
- ``git clone -j 1 ./evil ../../tests/evil`` put a ``conftest.py`` in the lead's tests
  (its next ``pytest`` runs it); judged as a write of ``<wt>/evil``;
- ``git bundle create --version 3 ../../Makefile HEAD`` and ``git merge-file
  --marker-size 7 ../../Makefile base other`` overwrote the lead's ``Makefile``
  (``merge-file``: with the worker's text); judged as writes of ``<wt>/3`` and ``<wt>/7``;
- ``git format-patch -ko ../../out -1`` (``-o`` last in a cluster) wrote a patch into the
  lead's checkout;
- ``git interpret-trailers --in-pl --trailer 'x: ; echo pwned' ../../Makefile``
  (``--in-place``, abbreviated as git allows) appended a rule to the lead's ``Makefile``;
- ``git tag -m x main`` made a tag named ``main`` (read before the branch: the lead's
  ``git reset --hard main`` took the worker's commit); ``-m``'s value was taken for the
  tag's name.

Each is now judged as the write or the name it is; ordinary uses stay allowed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow
from tests.policy.worker import bash, scratch_worktree
from tests.support.git import GIT_ENV, git

NOT_ALLOWED = [
    "git init --bare --template ./tpl ../../.git",
    "git init --bare --templ ./tpl ../../.git",
    "git init --initial-branch x ../../newdir",
    "git init --init x ../../newdir",
    "git init --object-format sha1 ../../newdir",
    "git init -qb x ../../newdir",
    "git clone -j 1 ./src ../../newdir",
    "git clone -j1 ./src ../../newdir",
    "git clone --jobs 1 ./src ../../newdir",
    "git clone --jo 1 ./src ../../newdir",
    "git clone --shallow-since 2020-01-01 ./src ../../newdir",
    "git clone --filter blob:none ./src ../../newdir",
    "git clone --reference ./src ./src ../../newdir",
    "git clone --bare --jobs 1 ./src ../../.git/modules/x",
    "git clone -qb main ./src ../../newdir",
    "git bundle create --version 3 ../../Makefile HEAD",
    "git bundle create --vers 3 ../../Makefile HEAD",
    "git merge-file --marker-size 7 ../../Makefile b o",
    "git merge-file --marker 7 ../../Makefile b o",
    "git merge-file --diff-algorithm histogram ../../Makefile b o",
    "git worktree add --orphan --reason x ../../y",
    "git interpret-trailers --in-pl --trailer a:b ../../Makefile",
    "git interpret-trailers --in-place --trailer a:b ../../Makefile",
    "git interpret-trailers --trailer a:b --in-p ../../Makefile",
    "git tag -m x main",
    "git tag -a -m x main HEAD",
    "git tag -am x main",
    "git tag -F msg.txt main",
    "git tag -u key -s main",
    "git tag --cleanup verbatim -m x main",
    "git tag -m x origin/main",
    "git tag --mess x main",
    "git format-patch -ko ../../out -1",
    "git format-patch -1 -no ../../out",
    "git format-patch -ko../../out -1",
    "git archive -vo ../../Makefile HEAD",
]

ORDINARY = [
    "git init --template=tpl newrepo",
    "git init --initial-branch x newrepo",
    "git clone -j 1 ./src dep",
    "git clone --depth 1 ./src",
    "git bundle create --version 3 out.bundle HEAD",
    "git merge-file --marker-size 7 cur.txt base.txt other.txt",
    "git merge-file -p --marker-size 7 cur.txt base.txt other.txt",
    "git interpret-trailers --in-place --trailer a:b msg.txt",
    "git interpret-trailers --trailer a:b msg.txt",
    "git tag -m x v1.2",
    "git tag -a -m 'release' v1.2 HEAD",
    "git tag -l -n",
    "git tag --list 'v*'",
    "git format-patch -ko out -1",
    "git format-patch -1 -o out",
    "git format-patch -1 --stdout",
    "git archive -o out.tar HEAD",
    "git commit -am x",
    "git push origin exo/w1",
    "git rebase main",
    "git log",
]


@pytest.mark.parametrize("command", NOT_ALLOWED)
def test_a_value_option_does_not_hide_what_git_writes(command: str) -> None:
    decision = bash(command)
    assert not isinstance(decision, Allow), (command, decision)


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_git_work_keeps_its_verdict(command: str) -> None:
    decision = bash(command)
    assert isinstance(decision, Allow), (command, decision)


# --- the real effects -------------------------------------------------------------------


def _project(tmp_path: Path) -> tuple[Path, Path]:
    """The lead's checkout ``tmp_path/p`` on ``main`` (a ``Makefile``, a ``tests/``) and
    worker w1's linked worktree on ``exo/w1`` with a commit of its own."""
    assert shutil.which("git"), "git is needed for this test"
    root, wt = scratch_worktree(tmp_path)
    git(root, "init", "-q", "-b", "main")
    (root / "Makefile").write_text("all:\n\techo lead\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_lead.py").write_text("def test_x():\n    pass\n")
    git(root, "add", "Makefile", "tests")
    git(root, "commit", "-qm", "lead")
    git(root, "worktree", "add", "-q", "-b", "exo/w1", str(wt))
    (wt / "w1.txt").write_text("w1\n")
    git(wt, "add", "w1.txt")
    git(wt, "commit", "-qm", "w1")
    return root, wt


def _run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=cwd, timeout=60,
                          env={**os.environ, **GIT_ENV}, capture_output=True, text=True,
                          check=False)  # fmt: skip


def _judged(command: str, root: Path) -> None:
    decision = bash(command, root=str(root))
    assert not isinstance(decision, Allow), (command, decision)


def test_the_real_effect_init_template_value_word_plants_a_shared_hook(tmp_path: Path) -> None:
    root, wt = _project(tmp_path)
    hook = wt / "tpl" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True)
    hook.write_text(f"#!/bin/sh\necho planted > {tmp_path}/PWNED\n")
    hook.chmod(0o755)
    command = "git init -q --bare --template ./tpl ../../.git"
    assert _run(command, wt).returncode == 0
    assert (root / ".git" / "hooks" / "pre-commit").exists()  # the COMMON .git
    assert "bare = true" in (root / ".git" / "config").read_text()  # the lead's: broken
    (wt / "y").write_text("y\n")
    git(wt, "add", "y")
    git(wt, "commit", "-qm", "next")
    assert (tmp_path / "PWNED").read_text() == "planted\n"
    _judged(command, root)


def test_the_real_effect_clone_jobs_value_word_plants_a_conftest(tmp_path: Path) -> None:
    root, wt = _project(tmp_path)
    evil = wt / "evil"
    evil.mkdir()
    git(evil, "init", "-q", "-b", "main")
    (evil / "conftest.py").write_text("print('planted')\n")
    git(evil, "add", "conftest.py")
    git(evil, "commit", "-qm", "e")
    command = "git clone -q -j 1 ./evil ../../tests/evil"
    assert _run(command, wt).returncode == 0
    assert (root / "tests" / "evil" / "conftest.py").exists()  # the lead's tests
    _judged(command, root)


@pytest.mark.parametrize(
    "command",
    ["git bundle create -q --version 3 ../../Makefile HEAD",
     "git merge-file --marker-size 7 ../../Makefile base other",
     "git interpret-trailers --in-pl --trailer 'evil: ; echo pwned' ../../Makefile"],
)  # fmt: skip
def test_the_real_effect_the_leads_makefile_is_written(tmp_path: Path, command: str) -> None:
    root, wt = _project(tmp_path)
    shutil.copy(root / "Makefile", wt / "base")
    (wt / "other").write_text("all:\n\techo pwned\n")
    before = (root / "Makefile").read_bytes()
    _run(command, wt)
    assert (root / "Makefile").read_bytes() != before
    _judged(command, root)


def test_the_real_effect_format_patch_cluster_writes_the_leads_checkout(tmp_path: Path) -> None:
    root, wt = _project(tmp_path)
    command = "git format-patch -q -ko ../../out -1"
    assert _run(command, wt).returncode == 0
    assert list((root / "out").iterdir())  # a patch file in the lead's checkout
    _judged(command, root)


def test_the_real_effect_a_tag_named_main_takes_the_leads_reset(tmp_path: Path) -> None:
    root, wt = _project(tmp_path)
    command = "git tag -m x main"
    assert _run(command, wt).returncode == 0
    git(root, "reset", "-q", "--hard", "main")
    assert git(root, "rev-parse", "HEAD") == git(wt, "rev-parse", "exo/w1")
    _judged(command, root)


def test_checkout_index_with_its_prefix_in_a_word_of_its_own_plants_a_hook(
    tmp_path: Path,
) -> None:
    """Found reviewing this round: ``--prefix`` given as a word of its own was not read
    (only ``--prefix=``): ``git add commit`` of an executable, then ``git checkout-index -f
    --prefix ../../.git/hooks/pre- commit`` wrote the shared repository's ``pre-commit``,
    which the lead's next commit ran; ``-a -f --prefix ../../`` overwrote its Makefile."""
    root, wt = _project(tmp_path)
    (wt / "commit").write_text(
        '#!/bin/sh\necho planted > "$(git rev-parse --git-common-dir)/../planted"\n'
    )
    (wt / "commit").chmod(0o755)
    hook = "git checkout-index -f --prefix ../../.git/hooks/pre- commit"
    ran = _run(f"git add commit && {hook}", wt)
    assert (root / ".git" / "hooks" / "pre-commit").is_file(), ran.stderr
    (root / "x.txt").write_text("x\n")
    git(root, "add", "x.txt")
    git(root, "commit", "-qm", "lead's commit")
    assert (root / "planted").is_file()
    (wt / "Makefile").write_text("all:\n\techo pwned\n")
    _run("git add Makefile && git checkout-index -a -f --prefix ../../", wt)
    assert "pwned" in (root / "Makefile").read_text()
    for command in (hook, "git checkout-index -a -f --prefix ../../",
                    "git checkout-index --pre ../../ -a",
                    "git checkout-index --stdin --prefix ~/"):  # fmt: skip
        assert not isinstance(bash(command, root=str(root)), Allow), command
    assert isinstance(bash("git checkout-index -a --prefix out/", root=str(root)), Allow)
