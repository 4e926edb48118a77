"""An assignment that names the state, in any case, is judged as a command's words are.

Found trying the gate as a worker (reads): ``g=${PWD%/*/*}/.exomonad/lead.token; cat
"$g"`` printed the lead's token, allowed: a bare assignment's words met no rule on
words (only a path it points outside, known now, was asked), and ``cat "$g"`` adds no
read. So did ``g=${PWD%/*/*}/.EXOMONAD/LEAD.TOKEN; head "${g,,}"``: the state's names
were looked for as written, and bash's case-changing expansions (``${g,,}``, ``${g@L}``,
``declare -l``) lowered them when the line ran. An assignment naming the state (or
built from its pieces) is now judged by its words, and a word naming the state in any
case is refused, as one naming it in its own case is (a path that differs only in case
names nothing else on a case-sensitive system, and is the state on a case-insensitive
one). A path climbing to the project and then built wholly from expansions (``a=.e
b=xo c=mo d=nad ...; cat "../../$a$b$c$d/$e$f$g"``, which printed the token) is taken
to name it, as ``../../.e$x`` was. A credential store's name counts in any case too
(``g=$HOME/.AWS/CREDENTIALS; cat "${g,,}"`` printed the AWS key, allowed).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny
from tests.policy.worker import bash, scratch_worktree

SECRET = "exo_lead_scratch_secret"

IN_ANOTHER_CASE = [
    'g=${PWD%/*/*}/.exomonad/lead.token; cat "$g"',
    'x=mo; g=${PWD%/*/*}/.exo${x}nad/lead.token; cat "$g"',
    'g=${PWD%/*/*}/.EXOMONAD/LEAD.TOKEN; head "${g,,}"',
    'g=${PWD%/*/*}/.EXOMONAD/LEAD.TOKEN; cat "${g@L}"',
    'declare -l g=${PWD%/*/*}/.EXOMONAD/LEAD.TOKEN; cat "$g"',
    'a=.e b=xo c=mo d=nad e=lead f=.tok g=en; cat "../../$a$b$c$d/$e$f$g"',
    'g=${PWD%/*/*}/.exomonad/LEAD.TOKEN; cat "${g,,}"',
    'g=${PWD%/*/*}/.eXoMoNaD/lead.token; cat "${g,,}"',
]


@pytest.mark.parametrize("command", IN_ANOTHER_CASE)
def test_a_state_name_in_another_case_is_refused(tmp_path: Path, command: str) -> None:
    root, wt = scratch_worktree(tmp_path)
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "lead.token").write_text(SECRET + "\n")
    done = subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, text=True,
                          check=False)  # fmt: skip
    assert SECRET in done.stdout, (command, done.stdout, done.stderr)  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Deny), (command, verdict)


@pytest.mark.parametrize(
    "command",
    [
        'x=README.md; cat "${x,,}"',
        "cat LEAD.md",
        'echo "${USER^^}"',
        "cat TOKENS.md",
        'cat "$f"',
        "cat ../$f",
        "cat src/$f",
        'cat "$dir/$name.json"',
    ],
)
def test_other_case_changes_stay_allowed(tmp_path: Path, command: str) -> None:
    root, _ = scratch_worktree(tmp_path)
    assert isinstance(bash(command, root=str(root)), Allow), bash(command, root=str(root))


@pytest.mark.parametrize(
    "command",
    [
        'g=$HOME/.AWS/CREDENTIALS; cat "${g,,}"',
        'g=${HOME}/.Aws/Credentials; head "${g,,}"',
        'declare -l g=$HOME/.AWS/CREDENTIALS; cat "$g"',
    ],
)
def test_a_credential_store_in_another_case_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """The same for a credential store: its name in any case counts."""
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("aws_secret_access_key = AKIA_SCRATCH\n")
    monkeypatch.setenv("HOME", str(home))
    root, wt = scratch_worktree(tmp_path)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, text=True,
                          env=env, check=False)  # fmt: skip
    assert "AKIA_SCRATCH" in done.stdout, (command, done.stdout, done.stderr)
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Deny), (command, verdict)
