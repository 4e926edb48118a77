"""Words the shell expands into other paths than their text: the directory stack's
tildes (``~+``, ``~-``, ``~1``), brace expansion (``{../..,.}``) and globs whose
component matches ``..`` (``.?/.?``: in dash always, in bash once ``globskipdots`` is
off).

Found probing as a worker (a third round): each was judged as the literal text, a path
in the worktree, and allowed; run for real, ``cd ~+/..; cd ~+/..; grep -r SECRET``,
``grep -r SECRET {../..,.}`` and ``sh -c 'grep -r SECRET .?/.?'`` printed the lead's
token, ``cp -t {../../.gi,.}t/hooks pre-commit`` planted a hook the lead's ``git
commit`` ran, ``cd {../..,}; git commit -am x`` moved the lead's ``main``. Now a brace
expansion is expanded as bash does (each word judged), and a tilde of the directory
stack or a glob that may climb is a path not known until the shell runs (Unknown).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny
from exomonad.policy.shell_classify import classify_shell
from exomonad.policy.shell_env import ShellEnv
from exomonad.policy.shell_lex import Word, lex
from tests.policy.worker import WT, bash, scratch_worktree

OUTSIDE = [
    "cd ~+/..; cd ~+/..; grep -r SECRET",
    "cd ~+/..; cd ~+/..; git commit -qam pwned",
    "cd ~+/..; cd ~+/..; echo PWNED >> README.md",
    "rm -rf ~+/../w2",
    "grep -r SECRET ~-",
    "echo x >> ~-/README.md",
    "cd ~1 && git commit -qam x",
    "grep -r SECRET ~+0/../..",
    "grep -r SECRET {../..,.}",
    "cp -t {../../.gi,.}t/hooks pre-commit",
    "cd {../..,}; git commit -qam by-worker",
    "sed -i s/readme/PWNED/ {../..,.}/README.md",
    "rm -rf {../..,.}/src",
    "cd {../..,}; echo x >> README.md",
    "tee {../../.gi,x}t/hooks/pre-commit < evil",
    "tee -a {0..1}/../../../README.md < x",
    "echo x > {a,../../b}",
    "dd if=a of={../../README.md,x}",
    "shopt -u globskipdots; grep -r SECRET .?/.?",
    "grep -r SECRET .?/.?",
    "sh -c 'grep -r SECRET .?/.?'",
    "cd .?/.?; git commit -qam x",
    "cd .[.]/.[!a]; echo x >> README.md",
    "rm -rf .*/src",
    "GIT_DIR=~/x git status",
]


@pytest.mark.parametrize("command", OUTSIDE)
def test_a_path_the_shell_expands_out_of_the_worktree_is_not_allowed(command: str) -> None:
    assert not isinstance(bash(command), Allow), command


ORDINARY = [
    "cp file{,.bak}",
    "mkdir -p src/{a,b}/c",
    "touch src/{a,b}.py",
    "echo {1..3}",
    "cat src/{a,b}.py",
    "cp a.txt b.txt {x,y}",
    "ls ~",
    "cat *.md",
    "rm -f build/*.o",
    "cat .gitignore",
    "wc -l src/*.py",
    "git add src/{a,b}.py && git commit -qm x",
    "for f in {1..5}; do echo $f; done",
    "echo '{../..,.}'",
]


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_braces_tildes_and_globs_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command


def test_a_brace_expansion_is_judged_word_by_word() -> None:
    """``cp file{,.bak}`` is ``cp file file.bak``: the copy's destination is the second
    word (before, only a read of the literal ``file{,.bak}`` was seen)."""
    actions = classify_shell("cp file{,.bak}", WT, ShellEnv(WT, "exo/w1", WT))
    assert [(type(a).__name__, getattr(a, "path", None)) for a in actions] == [
        ("ReadFile", f"{WT}/file"), ("WriteFile", f"{WT}/file.bak")]  # fmt: skip
    assert isinstance(bash("cat {../../.exomonad,x}/lead.token"), Deny)


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("echo c={x,y} {a}{b,c} {1..3} {01..03} {a..e..2} x{,}", [
            "echo", "c=x", "c=y", "{a}b", "{a}c", "1", "2", "3", "01", "02", "03",
            "a", "c", "e", "x", "x"]),
        ('echo "{a,b}" {a,"b c"} {a\\,b,c} {} {a,{b,c}}', [
            "echo", "{a,b}", "a", "b c", "a,b", "c", "{}", "a", "b", "c"]),
        ("echo {1..3}{a,b} pre{x,y}post", [
            "echo", "1a", "1b", "2a", "2b", "3a", "3b", "prexpost", "preypost"]),
        ("a={x,y} echo ok", ["a={x,y}", "echo", "ok"]),
    ],
)  # fmt: skip
def test_brace_expansion_matches_bash(source: str, words: list[str]) -> None:
    """The words the lexer gives are bash's (checked against the real bash below)."""
    assert [t.text for t in lex(source) if isinstance(t, Word)] == words
    shown = subprocess.run(["bash", "-c", source.replace("echo", "printf '%s\\n'", 1)],
                           capture_output=True, text=True, check=True, timeout=30)  # fmt: skip
    assert shown.stdout.splitlines() == [w for w in words if w != "echo"] or source.startswith("a=")


def test_a_huge_expansion_is_not_known() -> None:
    """``{1..100000}`` is not spelled out: the word is not known (dynamic)."""
    (word,) = [t for t in lex("{1..100000}") if isinstance(t, Word)]
    assert word.dynamic


def _layout(tmp_path: Path) -> tuple[Path, Path]:
    root, wt = scratch_worktree(tmp_path)
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "lead.token").write_text("SECRET-LEAD-TOKEN\n")
    return root, wt


@pytest.mark.parametrize(
    ("shell", "command"),
    [
        ("bash", "cd ~+/..; cd ~+/..; grep -r SECRET ."),
        ("bash", "grep -r SECRET {../..,.}"),
        ("dash", "grep -r SECRET .?/.?"),
    ],
)
def test_the_real_effect_each_spelling_prints_the_leads_token(
    tmp_path: Path, shell: str, command: str
) -> None:
    """Run for real in a worktree layout: the token is printed; the policy does not
    allow the command (judged with the same project root)."""
    root, wt = _layout(tmp_path)
    ran = subprocess.run([shell, "-c", command], cwd=wt, capture_output=True, text=True,
                         timeout=30, env={**os.environ, "LC_ALL": "C"}, check=False)  # fmt: skip
    assert "SECRET-LEAD-TOKEN" in ran.stdout  # it really does
    assert not isinstance(bash(command, root=str(root)), Allow)
