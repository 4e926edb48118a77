"""``(( ... ))`` where a command starts is bash's arithmetic command, read as one, and
``$[ ... ]`` bash's old arithmetic expansion.

Bash reads ``((`` there to the ``))`` that closes it (its parens balanced) as one
expression, whose ``<<``, ``>``, ``&``, ``|`` and ``;`` are arithmetic; only where no
``))`` closes it (``((cd x; ls) )``) is it two subshells. Found trying the gate as a
worker: the lexer read ``(( x = 1 << 2 ))`` as a here-document ``<< 2`` whose body hid
the lines after it, so each command in ``LEAKS`` printed the lead's token, allowed, and
``for ((i=0; i<3; i++))`` was unparsable (asked); ``$[ 1<<2 ]`` hid the lines after it
the same way. Now the expression is one word of the command ``((`` (what arithmetic
assigns: ``policy/shell_arith.py``), an arithmetic ``for`` is a loop whose header is that
command, and ``$[`` is read to the ``]`` that closes it.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny, Escalate
from exomonad.policy.shell_lex import ShellSyntaxError
from exomonad.policy.shell_parse import parse
from tests.policy.worker import bash, run_bash, scratch_worktree

SECRET = "exo_lead_secret"

LEAKS = [
    "(( x = 1 << 2 ))\ngrep -r exo_lead ../..\n2",
    "((x<<=1))\ngrep -r exo_lead ../..\n1",
    "if (( 1 << 2 )); then :; fi\ngrep -r exo_lead ../..\n2",
    "echo $[ 1<<2 ]\ngrep -r exo_lead ../..\n2",
    "echo $[1<<2]\ngrep -r exo_lead ../..\n2]",
    # found rereading: bash reads a $'...' in (( )) to its end (\' ends nothing)
    "(( $'\\'' )) ; grep -r exo_lead ../.. #'))",
]


def _project(tmp_path: Path) -> tuple[Path, Path]:
    root, wt = scratch_worktree(tmp_path, token=SECRET)
    (root / "README.md").write_text("hi\n")
    return root, wt


@pytest.mark.parametrize("command", LEAKS)
def test_commands_after_an_arithmetic_shift_are_judged(tmp_path: Path, command: str) -> None:
    root, wt = _project(tmp_path)
    done = run_bash(command, wt)
    assert SECRET in done.stdout, (command, done.stdout, done.stderr)  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Escalate | Deny), (command, verdict)


@pytest.mark.parametrize("command", [
    "(( x = 1 << 2 ))\necho pwned > ../../README.md\n2",
    "for ((i=0; i<1; i++)) do echo pwned > ../../README.md; done",
    "for ((i=0; i<1; i++)) { echo pwned > ../../README.md; }",
    "(( 1 )) > ../../README.md; echo pwned > ../../README.md",
])  # fmt: skip
def test_a_write_outside_with_an_arithmetic_command_is_asked(tmp_path: Path, command: str) -> None:
    root, wt = _project(tmp_path)
    run_bash(command, wt)
    assert (root / "README.md").read_text() == "pwned\n", command  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Escalate), (command, verdict)


def test_nested_subshells_stay_subshells() -> None:
    found = [(c.argv, c.cwd) for c in parse("( (cd x; ls) ); ((cd y; ls) )", "/w")]
    assert (("ls",), "/w/x") in found
    assert (("ls",), "/w/y") in found
    assert [c.argv for c in parse("((cd y; ls))", "/w")] == [("((", "cd y; ls", "))")]


@pytest.mark.parametrize(
    "src", ["echo ((1))", "x=1 ((x++))", "(( 1 )) echo", "case a in ((a)) :;; esac"]
)
def test_arithmetic_where_no_command_starts_is_unparsable(src: str) -> None:
    with pytest.raises(ShellSyntaxError):
        parse(src, "/w")


@pytest.mark.parametrize("command", [
    "for ((i=0; i<3; i++)); do echo \"$i\"; done",
    "for ((;;)); do break; done",
    "if (( x > 3 )); then echo y; fi",
    "while (( i < 3 )); do i=$((i+1)); done",
    "(( count++ )) || true",
    "cd src && (( n = $(wc -l < a.txt) ))",
    "time (( 1 ))",
    "! (( 0 )) && echo ok",
    "echo a | (( 1 ))",
])  # fmt: skip
def test_ordinary_arithmetic_is_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command


@pytest.mark.parametrize("command", [
    "for ((PATH=1; ;)); do ls; done",
    "(( x = $(cat ../../.exomonad/lead.token) ))",
    "for ((i=0; i<3; i++)); do rm ../../README.md; done",
])  # fmt: skip
def test_what_an_arithmetic_command_holds_is_judged(command: str) -> None:
    assert not isinstance(bash(command), Allow), command


@pytest.mark.parametrize("command", [
    "sh -c '((cd ../..; echo pwned > README.md))'",
    "((cd ../..; echo pwned > README.md))",
])  # fmt: skip
def test_what_dash_runs_in_double_parens_is_judged(tmp_path: Path, command: str) -> None:
    """Dash (``sh -c``, or Codex given ``/bin/sh``) has no arithmetic command: its ``((``
    are two subshells, whose commands run (bash's arithmetic does not run them)."""
    root, wt = _project(tmp_path)
    sh = command if command.startswith("sh -c") else f"sh -c {shlex.quote(command)}"
    run_bash(sh, wt)
    assert (root / "README.md").read_text() == "pwned\n", command  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Escalate), (command, verdict)
    assert isinstance(bash("(( $n > 1 ))"), Escalate)  # dash runs $n


def test_what_dash_runs_in_old_arithmetic_is_judged(tmp_path: Path) -> None:
    """``$[`` is bash's old arithmetic, a ``$`` and a glob to dash, which runs the rest."""
    root, wt = _project(tmp_path)
    command = "echo $[x; grep -r exo_lead ../.. ]"
    done = run_bash(f"sh -c {shlex.quote(command)}", wt)
    assert SECRET in done.stdout, (done.stdout, done.stderr)  # the real effect
    assert isinstance(bash(command, root=str(root)), Deny)


def test_a_long_line_of_parens_is_read_once() -> None:
    """Each ``((`` that is two subshells was scanned to its close again for each ``((``
    inside it: 3,000 nested parens took 2.3 s (and 6,000 ``((`` with none closing 2.5 s).
    A scan notes where each ``(`` it passes closes, and one that reaches the end is
    bash's syntax error."""
    assert isinstance(bash("(" * 20_000 + "x" + ") " * 20_000), Allow)
    assert not isinstance(bash("((" * 20_000), Allow)
    assert not isinstance(bash("(( $( ((" * 500 + "1" + ")) ) ))" * 500), Allow)
