"""A command after a ``cd`` may start in several directories (``policy/shell_cd.py``).

Found trying the gate as a worker (a scratch project, the real bash): the parser moved
its directory at every ``cd`` it read, as if each ran once and succeeded, and knew only
a plain ``cd``. ``cd a/b/c/d; grep -r SECRET ../..`` with ``a/b/c/d`` missing printed
the lead's token; ``cd a/b/c/d; echo x > ../../README.md`` rewrote the lead's README;
``builtin cd ../..``, ``if false; then cd a/b; fi``, ``f() { cd a/b; }``, a ``cd`` in a
loop, ``true | cd ../..`` under ``lastpipe``, ``eval cd ../..`` and ``pushd -n`` did the
same; ``cd . > ../../README.md`` was "no effect" and emptied it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow
from exomonad.policy.shell_cd import MAX_DIRS, join
from exomonad.policy.shell_parse import parse
from tests.policy.worker import WT, bash, scratch_worktree

TOKEN = "SECRET_TOKEN_cd"

#: Each, run by bash in the worktree (``a/b`` there, ``a/b/c/d`` not), prints the
#: lead's token (``cat`` or ``grep -r`` on the project's root).
READS = [
    f"cd a/b/c/d; grep -r {TOKEN} ../..",
    "cd a/b/c/d 2>/dev/null; cat ../../.e*/l*",
    f"false && cd a/b; grep -r {TOKEN} ../..",
    f"if false; then cd a/b; fi; grep -r {TOKEN} ../..",
    f"true || cd a/b; grep -r {TOKEN} ../..",
    f"f() {{ cd a/b; }}; grep -r {TOKEN} ../..",
    f"for i in 1 2; do cd ..; done; grep -r {TOKEN} .",
    f"for i in 1 2; do grep -r {TOKEN} .; cd ../..; done",
    f"until [ -e .git/config ]; do cd ..; done; grep -r {TOKEN} .",
    f"builtin cd ../..; grep -r {TOKEN} .",
    f"command cd ../..; grep -r {TOKEN} .",
    f"\\cd ../..; grep -r {TOKEN} .",
    f'"cd" ../..; grep -r {TOKEN} .',
    f"c\\d ../..; grep -r {TOKEN} .",
    f"time cd ../..; grep -r {TOKEN} .",
    f"shopt -s lastpipe; true | cd ../..; grep -r {TOKEN} .",
    f"{{ cd a/b; }} | true; grep -r {TOKEN} ../..",
    "pushd -n ../.. >/dev/null; pushd +1 >/dev/null; cat .e*/l*",
    f'eval "cd ../.."; grep -r {TOKEN} .',
    f"eval cd ../..; grep -r {TOKEN} .",
    f"source /dev/stdin <<< 'cd ../..'; grep -r {TOKEN} .",
    f"cd ../.. || cd a && grep -r {TOKEN} .",
    f"! cd a/b/c/d && grep -r {TOKEN} ../..",
    f"trap 'cd ../..' DEBUG; grep -r {TOKEN} .",
    f"cd() {{ builtin cd ../..; }}; cd a && grep -r {TOKEN} .",
    f"case x in x) cd ../..;; esac; grep -r {TOKEN} .",
    f"while read d; do cd $d; done <<< ../..; grep -r {TOKEN} .",
    "HOME=../.. cd; cat .e*/l*",
    f"trap 'grep -r {TOKEN} .' EXIT; cd ../..",
    "command -pp cd ../..; cat .e*/*",
    "cd ../.. && cd .worktrees/w1 && time X=1 cd - >/dev/null && cat .e*/*",
    "shopt -s cdable_vars; cd ../.. && cd .worktrees/w1 && cd OLDPWD && cat .e*/*",
    "eval 'c\"\"d ../..'; cat .e*/*",
    "trap 'c\\d ../..' DEBUG; cat .e*/*",
    f"cd a/b/c/d || (exit 1); grep -r {TOKEN} ../..",
    f"cd a/b/c/d || echo no; grep -r {TOKEN} ../..",
]
#: Each, run by bash in the worktree, rewrites the lead's README.md.
WRITES = [
    "cd a/b/c/d; echo pwned > ../../README.md",
    "for i in 1 2; do cd ..; done; cd w1 2>/dev/null; echo pwned > README.md",
    "builtin cd ../..; echo pwned > README.md",
    "cd . > ../../README.md",
]
#: What agents write every day: still allowed.
ORDINARY = [
    "cd build && make",
    "cd src; rm -f old.txt",
    "cd docs && echo x > README.md",
    "(cd sub && make) && make",
    "cd a && make; cd .. && ls",
    "for f in *.py; do wc -l $f; done",
    "cd src && for f in *.py; do wc -l $f; done",
    "pushd src >/dev/null && make && popd >/dev/null",
    "cd a 2>/dev/null && ls",
    "cd a > out.txt",
    "cd src && git push origin HEAD",
    "git add -A; cd src; git status",
    "trap 'rm -f tmp.txt' EXIT; make",
    "cd src || exit 1; echo x > ../out.txt",
]


def _layout(tmp_path: Path) -> tuple[Path, Path]:
    root, wt = scratch_worktree(tmp_path)
    (wt / "a" / "b").mkdir(parents=True)
    (wt / "src").mkdir()
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("")
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "lead.token").write_text(f"{TOKEN}\n")
    return root, wt


def _run(command: str, wt: Path) -> str:
    done = subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, text=True,
                          timeout=30, check=False)  # fmt: skip
    return done.stdout + done.stderr


@pytest.mark.parametrize("command", READS)
def test_a_read_after_a_cd_that_may_not_have_moved_is_not_allowed(
    tmp_path: Path, command: str
) -> None:
    root, wt = _layout(tmp_path)
    assert TOKEN in _run(command, wt), command  # it really prints the token
    assert not isinstance(bash(command, root=str(root)), Allow), command


@pytest.mark.parametrize("command", WRITES)
def test_a_write_after_a_cd_that_may_not_have_moved_is_not_allowed(
    tmp_path: Path, command: str
) -> None:
    root, wt = _layout(tmp_path)
    readme = root / "README.md"
    readme.write_text("lead\n")
    _run(command, wt)
    assert readme.read_text() != "lead\n", command  # it really rewrites the lead's file
    assert not isinstance(bash(command, root=str(root)), Allow), command


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_cds_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command


def test_an_and_chain_after_a_cd_starts_only_where_it_leads() -> None:
    commands = parse("cd docs && make && make install; ls", WT)
    where = [(c.argv[0], c.cwd, c.alternative) for c in commands]
    assert where == [
        ("make", f"{WT}/docs", False),
        ("make", f"{WT}/docs", False),
        ("ls", f"{WT}/docs", False),
        ("ls", WT, True),
    ]


def test_a_cd_in_a_subshell_does_not_leave_it() -> None:
    (make, ls) = parse("(cd docs && make); ls", WT)
    assert (make.cwd, make.others, ls.cwd, ls.others) == (f"{WT}/docs", (), WT, ())


def test_a_cd_in_a_loop_leaves_the_directory_unknown_in_it_and_after() -> None:
    commands = parse("for i in 1 2; do cat x; cd ..; done; cat y", WT)
    cats = {(c.argv[1], c.cwd) for c in commands if c.argv[0] == "cat"}
    assert {("x", WT), ("x", None), ("y", WT), ("y", None)} <= cats


def test_too_many_directories_end_in_an_unknown_one() -> None:
    many = join([f"/d{k}" for k in range(MAX_DIRS + 3)])
    assert len(many) == MAX_DIRS
    assert many[-1] is None
    assert join(["/a", "/b"], ["/b", None]) == ("/a", "/b", None)


def test_a_line_of_many_cds_is_judged_in_an_unknown_directory_past_a_bound() -> None:
    """Each command judged in up to eight directories made a line of 2,000 ``cd a; cat
    x;`` cost 8 times its judgement; past a bound the others are one unknown directory."""
    commands = parse("cd a; cat x; " * 200, WT)
    assert {c.cwd for c in commands if c.alternative} == {None}
    assert not isinstance(bash("cd a; cat x; " * 200 + "cd a/b/c/d; grep -r x ../.."), Allow)
    assert {c.cwd for c in parse("cd a; cat x", WT)} == {f"{WT}/a", WT}
