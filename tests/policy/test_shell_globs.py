"""A shell glob matched as bash matches it (``policy/shell_globs.py``).

Found trying the gate as a worker: ``cat ../../.[^a]xomonad/lead.tok?n`` printed the
lead's token, allowed. Python's ``fnmatch`` reads ``[^a]`` as "``^`` or ``a``"; bash
reads it as "not ``a``", as ``[!a]``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow
from exomonad.policy.shell_globs import python_glob, shell_match
from tests.policy.worker import bash, scratch_worktree

#: ASCII names (a class's non-ASCII members depend on the shell's locale; the names the
#: policy matches globs against are ASCII).
NAMES = [".exomonad", "exomonad", "lead.token", "Lead.Token", "a1", "_b", "]x", "^y", "-z", "!w"]
PATTERNS = [
    ".[^a]xomonad", ".[!a]xomonad", "[^.]*", "[!.]*", ".[[:lower:]]xomonad",
    "[[:upper:]]*", "[[:alpha:]]*", "[[:digit:]]*", "[[:alnum:]]1", "[[:punct:]]*",
    "[]]x", "[!]]*", "[^]]*", "[\\^]y", "[a-]*", "[[:lower:][:digit:]]1", "[![:alpha:]]*",
    "lead.tok?n", "[[:space:]]*", "*[[:upper:]]*", ".[[=e=]]xomonad", "lead.toke[[.n.]]",
    "[[.-.]]z", "[[=^=]]y",
]  # fmt: skip
LEAKS = [
    "cat ../../.[^a]xomonad/lead.tok?n",
    "cat ../../.[^a]xomonad/*",
    "cat ../../.[[:lower:]]xomonad/lead.token",
    "shopt -s dotglob; cat ../../[^x][^x]xomonad/l*",
    "cat ../../.[[=e=]]xomona[[.d.]]/lead.token",
    "cat ../../.[\\!e]xomonad/*",
    'cat ../../.["!"e]xomonad/*',
    "cat ../../.['^'e]xomonad/l*",
    'for f in ../../.[\\!e]xomonad/*; do cat "$f"; done',
    'set -- ../../.[\\!e]xomonad/*; for f; do cat "$f"; done',
]


def _bash_glob(directory: Path, pattern: str) -> set[str]:
    script = f"shopt -s nullglob dotglob; for f in {pattern}; do printf '%s\\0' \"$f\"; done"
    done = subprocess.run(["bash", "-c", script], cwd=directory, capture_output=True,
                          check=True, timeout=30)  # fmt: skip
    return {n.decode() for n in done.stdout.split(b"\0") if n}


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_glob_matches_what_bash_matches(tmp_path: Path, pattern: str) -> None:
    for name in NAMES:
        (tmp_path / name).touch()
    exactly = {n for n in NAMES if shell_match(n, pattern, exact=True)}
    assert exactly == _bash_glob(tmp_path, pattern)


@pytest.mark.parametrize("command", LEAKS)
def test_a_negated_or_classed_bracket_naming_the_state_is_not_allowed(
    tmp_path: Path, command: str
) -> None:
    root, wt = scratch_worktree(tmp_path)
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "lead.token").write_text("SECRET_glob\n")
    done = subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, text=True,
                          timeout=30, check=False)  # fmt: skip
    assert "SECRET_glob" in done.stdout  # bash really reads the token
    assert not isinstance(bash(command, root=str(root)), Allow), command


def test_folded_matching_reads_a_class_in_any_case() -> None:
    assert shell_match("Settings.JSON", "[[:upper:]]*.json", fold=True)
    assert not shell_match("settings.json", "[[:upper:]]*.json")


def test_a_long_word_of_open_brackets_is_read_once() -> None:
    """20,000 ``a[`` took 100 s to judge (each ``[`` looked for its ``]`` to the end)."""
    assert python_glob("a[" * 20_000) == "a[[]" * 20_000
    assert not shell_match(".exomonad", ".[" + "[:a" * 20_000 + "x]xomonad", exact=True)
    assert shell_match(".exomonad", ".[" + "[:a" * 20_000 + "e]xomonad")
