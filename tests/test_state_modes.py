"""Issue 10: the state directory is private.

Regression: ``approvals.db``, ``ledger.db`` and ``teams.json`` were 0644 and
``.exomonad/`` 0755 (the process umask decided). Now the directory is 0700, every file
ExoMonad creates in it 0600, and wider modes left by an earlier version are tightened
when the server starts.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from exomonad.panes import FakePaneBackend
from exomonad.policy import AuditLog
from exomonad.server.config import PolicyConfig, ProjectConfig
from exomonad.server.hooks import hook_request
from exomonad.server.pidfile import PidFile
from exomonad.server.services import Services
from exomonad.setup import init_project
from exomonad.state import find_state_dir
from exomonad.teams import Mailbox, TeamPaths, create_team, register_synthetic
from exomonad.teams.lock import FileLock
from exomonad.teams.lockjournal import set_lock_journal


@pytest.fixture(autouse=True)
def open_umask() -> Iterator[None]:
    old = os.umask(0o022)  # what users have: files 0644, dirs 0755 unless we say otherwise
    try:
        yield
    finally:
        os.umask(old)
        set_lock_journal(None)


def modes(state: Path) -> dict[str, int]:
    """Permission bits of everything under ``state`` (and of ``state`` itself as ".")."""
    out = {".": stat.S_IMODE(state.stat().st_mode)}
    for top, dirs, files in os.walk(state):
        for name in [*dirs, *files]:
            p = Path(top) / name
            if not p.is_symlink():
                out[str(p.relative_to(state))] = stat.S_IMODE(p.lstat().st_mode)
    return out


def shared(state: Path) -> dict[str, str]:
    """Whatever group or others may access, with its mode."""
    return {k: oct(v) for k, v in modes(state).items() if v & 0o077}


def services(tmp_path: Path, state: Path) -> Services:
    root = tmp_path / "claude"
    if not TeamPaths("proj", root).config_file.exists():
        create_team(TeamPaths("proj", root))
    config = ProjectConfig(policy=PolicyConfig(approval_timeout=0.05, popup=False))
    svc = Services(state, root=root, backend=FakePaneBackend(), config=config)
    svc.registry.set_current("proj")
    return svc


def exercise(tmp_path: Path, svc: Services) -> None:
    """Make the server write every kind of state file it has."""
    token = svc.tokens.lead_path.read_text().strip()
    push = b'{"session_id": "s1", "tool_name": "Bash", "tool_input": {"command": "git push"}}'
    hook_request(svc, "pre-tool-use", "claude", push, token, None)  # approvals, audit, teams
    svc.ledger.begin("proj", "w", "m1")
    svc.ledger.mark_delivered("proj", "w", "m1")
    svc.gatekeeper.engine.audit.record({"agent": "x"})  # type: ignore[union-attr]
    paths = TeamPaths("proj", tmp_path / "claude")
    register_synthetic(paths, "w")
    with FileLock(paths.inbox("w")):  # a locks-held journal entry while held
        assert list((svc.state_dir / "locks-held").iterdir())
        assert not shared(svc.state_dir)
    Mailbox(paths).send("w", sender="team-lead", text="hi")


def test_a_new_state_dir_is_private(tmp_path: Path) -> None:
    state = tmp_path / "proj" / ".exomonad"
    svc = services(tmp_path, state)
    try:
        exercise(tmp_path, svc)
        pid = PidFile(state)
        pid.acquire()
        names = set(modes(state))
        assert {"tokens.json", "lead.token", "ledger.db", "approvals.db", "teams.json",
                "audit.jsonl", "locks-held", "server.pid"} <= names  # fmt: skip
        assert {"ledger.db-wal", "approvals.db-wal"} & names
        assert modes(state)["."] == 0o700
        assert shared(state) == {}
        pid.release()
    finally:
        svc.close()


def test_wider_modes_are_tightened_at_the_next_start(tmp_path: Path) -> None:
    state = tmp_path / "proj" / ".exomonad"
    svc = services(tmp_path, state)
    exercise(tmp_path, svc)
    svc.close()
    os.chmod(state, 0o755)
    for name in ("approvals.db", "ledger.db", "teams.json", "tokens.json", "lead.token"):
        os.chmod(state / name, 0o644)
    (state / "approvals.db-wal").touch()
    os.chmod(state / "approvals.db-wal", 0o666)
    os.chmod(state / "locks-held", 0o755)
    (state / "bin").mkdir(mode=0o755)
    (state / "bin" / "exomonad-teammate").write_text("#!/bin/sh\n")
    os.chmod(state / "bin" / "exomonad-teammate", 0o755)
    os.symlink("/etc/passwd", state / "link")
    before = os.stat("/etc/passwd").st_mode
    assert shared(state)
    svc = services(tmp_path, state)
    svc.close()
    assert shared(state) == {}
    assert modes(state)["."] == 0o700
    assert modes(state)["bin/exomonad-teammate"] == 0o700  # still runs, for its owner only
    assert os.stat("/etc/passwd").st_mode == before  # a link is not followed


def test_audit_rotations_stay_private(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl", max_bytes=100)
    for i in range(10):
        log.record({"agent": "x" * 50, "i": i})
    log.close()
    assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in tmp_path.iterdir()} == {
        n: "0o600" for n in ("audit.jsonl", "audit.jsonl.1", "audit.jsonl.2", "audit.jsonl.3")
    }


def test_find_state_dir_and_init_create_it_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EXOMONAD_DIR", raising=False)
    (tmp_path / "a" / ".git").mkdir(parents=True)
    found = find_state_dir(tmp_path / "a", create=True)
    assert stat.S_IMODE(found.stat().st_mode) == 0o700
    (tmp_path / "b").mkdir()
    init_project(tmp_path / "b", exo="exomonad")
    assert stat.S_IMODE((tmp_path / "b" / ".exomonad").stat().st_mode) == 0o700
