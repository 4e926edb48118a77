"""Pid file, tokens and project config."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from exomonad.errors import ExomonadError
from exomonad.server.config import load_project_config
from exomonad.server.identity import Identity, TokenStore
from exomonad.server.pidfile import PidFile, read_server_info


def test_pid_file_is_exclusive_and_released(tmp_path: Path) -> None:
    first = PidFile(tmp_path)
    info = first.acquire()
    assert (info.pid, read_server_info(tmp_path)) == (os.getpid(), info)
    # A live server (a real other process) refuses a second one.
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        (tmp_path / "server.pid").write_bytes(orjson.dumps(
            {"pid": sleeper.pid, "socket": "s", "started_at": 0, "version": "x"}))  # fmt: skip
        with pytest.raises(ExomonadError, match="already serves this project"):
            PidFile(tmp_path).acquire()
    finally:
        sleeper.kill()
        sleeper.wait()
    # Its process gone, the pid file is stale and taken over; a stale socket is removed.
    (tmp_path / "server.sock").write_text("stale")
    again = PidFile(tmp_path)
    again.acquire()
    assert not (tmp_path / "server.sock").exists()
    again.release()
    assert not (tmp_path / "server.pid").exists()


def test_tokens_persist_and_revoke(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    token = store.issue(Identity("w", "worker", "t"))
    assert (tmp_path / "tokens.json").stat().st_mode & 0o777 == 0o600
    assert TokenStore(tmp_path).lookup(token) == Identity("w", "worker", "t")
    newer = store.issue(Identity("w", "worker", "t"))  # re-issue replaces
    assert store.lookup(token) is None
    assert store.revoke("w", "t") == 1
    assert store.lookup(newer) is None


def test_lead_token_is_stable_and_private(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    token = store.ensure_lead_token("team-lead", "tl")
    assert store.ensure_lead_token("team-lead", "tl") == token
    assert (tmp_path / "lead.token").stat().st_mode & 0o777 == 0o600
    assert store.ensure_lead_token("boss", "tl") != token  # config changed: new token


def test_project_config_defaults_and_errors(tmp_path: Path) -> None:
    cfg = load_project_config(tmp_path)
    assert cfg.roles.allows("tl", "spawn_workers")
    assert not cfg.roles.allows("worker", "spawn_workers")
    assert cfg.roles.allows("worker", "notify_parent")
    toml = '[roles.tools]\nworker = ["task_*"]\n[workers]\ncommand = "x"\n'
    (tmp_path / "config.toml").write_text(toml)
    cfg = load_project_config(tmp_path)
    assert cfg.roles.allows("worker", "task_get")
    assert not cfg.roles.allows("worker", "notify_parent")
    assert cfg.workers.command == "x"
    (tmp_path / "config.toml").write_text("[lead]\nnmae = 'typo'\n")
    with pytest.raises(ExomonadError, match=r"config\.toml"):
        load_project_config(tmp_path)
