"""The bypass corpus: the policy never allows a command that could move ``main``, and
what it allows really does not (each command is run with ``bash -c`` in a scratch clone).

Every command runs in its own copy of one template (a bare ``origin``, the lead's clone on
``main`` one commit ahead of ``origin/main``, a worktree on ``exo/w1`` one more commit
ahead), with ``HOME`` and git's configuration isolated, in a thread pool. The figures
(how many of the refused commands really moved or deleted ``main``) are printed and kept
in docs/policy.md.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from exomonad.policy.cascade import decide_request
from exomonad.policy.decisions import label
from exomonad.policy.default import DEFAULT_POLICY
from exomonad.policy.request import ToolRequest
from tests.policy.bypass_corpus import BYPASSES, ORDINARY

BRANCH = "exo/w1"
_GIT_ENV = {
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_TERMINAL_PROMPT": "0",
    "LANG": "C",
    "TERM": "dumb",
}
_TIMEOUT = 10.0


def _env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), **_GIT_ENV}


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=_env(cwd),
        check=True,
        capture_output=True,
        text=True,
        timeout=30,
    )
    return done.stdout.strip()


def _decide(command: str, role: str, root: Path) -> str:
    worktree = str(root / "clone" / ".worktrees" / "w1")
    request = ToolRequest(
        "claude",
        role,
        "w1",
        "Bash",
        {"command": command},
        cwd=worktree,
        worktree=worktree,
        branch=BRANCH,
    )
    decision, _, _ = decide_request(DEFAULT_POLICY, request, project_root=str(root / "clone"))
    return label(decision)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """origin.git (main = C0), clone/ on main = C1, clone/.worktrees/w1 on exo/w1 = C2."""
    root = tmp_path_factory.mktemp("bypass") / "t"
    empty = root.parent / "empty-template"
    empty.mkdir()
    root.mkdir()
    (root / "home").mkdir()
    _git(root, "init", "-q", "--bare", f"--template={empty}", "-b", "main", "origin.git")
    _git(root, "init", "-q", f"--template={empty}", "-b", "main", "clone")
    clone = root / "clone"
    _git(clone, "remote", "add", "origin", str(root / "origin.git"))
    _git(clone, "commit", "-q", "--allow-empty", "-m", "C0")
    _git(clone, "push", "-q", "origin", "main")
    _git(clone, "fetch", "-q", "origin")
    _git(clone, "commit", "-q", "--allow-empty", "-m", "C1")
    _git(clone, "worktree", "add", "-q", "-b", BRANCH, ".worktrees/w1")
    _git(clone / ".worktrees" / "w1", "commit", "-q", "--allow-empty", "-m", "C2")
    return root


def _remote_main(root: Path) -> str | None:
    ref = root / "origin.git" / "refs" / "heads" / "main"
    if ref.exists():
        return ref.read_text().strip()
    packed = root / "origin.git" / "packed-refs"
    if packed.exists():
        for line in packed.read_text().splitlines():
            if line.endswith(" refs/heads/main"):
                return line.split()[0]
    return None


def _copy(template: Path, dest: Path) -> None:
    shutil.copytree(template, dest, symlinks=True)
    for rel in ("clone/.git/config", "clone/.git/worktrees/w1/gitdir", "clone/.worktrees/w1/.git"):
        path = dest / rel
        path.write_text(path.read_text().replace(str(template), str(dest)))


@dataclass(frozen=True)
class Run:
    """One command run for real: did the remote's main change (moved or deleted)?"""

    command: str
    moved: bool
    timed_out: bool


def _run(template: Path, scratch: Path, index: int, command: str) -> Run:
    root = scratch / f"r{index}"
    _copy(template, root)
    before = _remote_main(root)
    proc = subprocess.Popen(
        ["bash", "-c", command],
        cwd=root / "clone" / ".worktrees" / "w1",
        env=_env(root / "home"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    timed_out = False
    try:
        proc.wait(timeout=_TIMEOUT)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    moved = _remote_main(root) != before
    shutil.rmtree(root, ignore_errors=True)
    return Run(command, moved, timed_out)


def _run_all(template: Path, scratch: Path, commands: list[str]) -> Iterator[Run]:
    with ThreadPoolExecutor(max_workers=4) as pool:
        yield from pool.map(lambda ic: _run(template, scratch, *ic), enumerate(commands))


def test_corpus_is_large_enough() -> None:
    assert len(BYPASSES) >= 150
    assert len({c for _, c in BYPASSES}) == len(BYPASSES)


@pytest.mark.parametrize("role", ["worker", "dev"])
def test_policy_never_allows_a_bypass(role: str, tmp_path: Path) -> None:
    allowed = [(family, c) for family, c in BYPASSES if _decide(c, role, tmp_path) == "allow"]
    assert allowed == []


def test_ordinary_commands_still_allowed(tmp_path: Path) -> None:
    refused = [c for c in ORDINARY if _decide(c, "worker", tmp_path) != "allow"]
    assert refused == []


def test_real_runs(template: Path, tmp_path: Path) -> None:
    assert _remote_main(template) is not None
    commands = [c for _, c in BYPASSES] + ORDINARY
    verdicts = {c: _decide(c, "worker", template) for c in commands}
    runs = list(_run_all(template, tmp_path, commands))
    allowed_moved = [r.command for r in runs if r.moved and verdicts[r.command] == "allow"]
    refused_moved = [r.command for r in runs if r.moved and verdicts[r.command] != "allow"]
    print(
        f"\nbypass corpus: {len(BYPASSES)} commands, {len(refused_moved)} really moved or "
        f"deleted main when run, {len(allowed_moved)} of those allowed; "
        f"{sum(r.timed_out for r in runs)} timed out"
    )
    assert allowed_moved == []
    assert len(refused_moved) >= 40  # the harness really pushes: most bypasses work in git
