"""``check_policy``: a separate process imports the policy, mypy --strict type-checks it,
its examples run; each step reported."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from exomonad.policy import template
from exomonad.policy.check import check_policy, default_mypy_cache
from tests.policy.conftest import PolicyWriter, policy_source

TYPO = """
from exomonad.policy import Forbid, GitPush, Grant, Policy, Role, Shell

policy = Policy(roles={"dev": Role(Grant(GitPush, lambda a, ctx: a.brnch == "x"))},
                forbid=[Forbid(Shell, lambda a, ctx: a.argvv == ())])
examples = [("git status", "dev", "human")]
"""


def test_a_good_policy_passes(write_policy: PolicyWriter, mypy_cache: Path) -> None:
    report = check_policy(write_policy(policy_source("A")), mypy_cache=mypy_cache)
    assert report.loaded
    assert report.error is None
    assert report.type_check.status == "ok"
    assert [(e["subject"], e["expected"], e["actual"], e["passed"]) for e in report.examples] == [
        ("ls", "allow", "allow", True)
    ]
    assert report.ok
    assert report.lines()[-1] == "result: ok"
    assert "type check: ok (mypy --strict)" in report.lines()


def test_mypy_catches_what_the_import_does_not(
    write_policy: PolicyWriter, mypy_cache: Path
) -> None:
    report = check_policy(write_policy(TYPO), mypy_cache=mypy_cache)
    assert report.loaded  # the lambda never ran
    assert report.type_check.status == "failed"
    assert '"GitPush" has no attribute "brnch"' in report.type_check.output
    assert '"Shell" has no attribute "argvv"' in report.type_check.output
    assert not report.ok
    assert "type check: FAILED (mypy --strict)" in report.lines()


def test_a_failing_example_fails_the_check(write_policy: PolicyWriter, mypy_cache: Path) -> None:
    text = policy_source("A", extra="examples = [('ls', 'dev', 'allow'), ('ls', 'dev', 'deny')]")
    report = check_policy(write_policy(text), type_check=False)
    assert report.loaded
    assert [e["passed"] for e in report.examples] == [True, False]
    assert len(report.failed_examples) == 1
    assert not report.ok
    lines = report.lines()
    assert any(line.startswith("  FAIL  dev") and "(got allow: A)" in line for line in lines)
    assert "examples: 1 passed, 1 failed" in lines


def test_an_import_failure_is_reported(write_policy: PolicyWriter) -> None:
    report = check_policy(write_policy("policy = (\n"), type_check=False)
    assert not report.loaded
    assert report.error is not None
    assert "SyntaxError" in report.error
    assert report.lines()[1].startswith("load: FAILED")


def test_the_import_runs_in_another_process(write_policy: PolicyWriter) -> None:
    report = check_policy(write_policy("import os\nos._exit(3)\n"), type_check=False)
    assert not report.loaded
    assert report.error is not None
    assert "checker crashed" in report.error


def test_missing_file(tmp_path: Path) -> None:
    report = check_policy(tmp_path / "nope.py")
    assert not report.loaded
    assert report.type_check.status == "failed"


def test_without_mypy_the_type_check_is_skipped(write_policy: PolicyWriter, tmp_path: Path) -> None:
    fake = tmp_path / "python-without-mypy"
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "-I" ] && [ "$2" = "-m" ] && [ "$3" = "mypy" ]; then\n'
        '  echo "$0: No module named mypy" >&2; exit 1\n'
        "fi\n"
        f'exec {sys.executable} "$@"\n'
    )
    fake.chmod(0o755)
    report = check_policy(write_policy(policy_source("A")), python=str(fake))
    assert report.type_check.status == "skipped"
    assert report.ok
    assert "type check skipped: mypy not installed" in report.lines()


def test_the_shipped_template_passes(mypy_cache: Path) -> None:
    report = check_policy(Path(template.__file__), mypy_cache=mypy_cache)
    assert report.ok, report.lines()
    assert len(report.examples) >= 8


def test_mypy_cache_location(monkeypatch: object, tmp_path: Path) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setenv("EXOMONAD_MYPY_CACHE", str(tmp_path / "c"))
    assert default_mypy_cache() == tmp_path / "c"
    monkeypatch.delenv("EXOMONAD_MYPY_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_mypy_cache() == tmp_path / "exomonad" / "mypy"
    assert os.sep in str(default_mypy_cache())
