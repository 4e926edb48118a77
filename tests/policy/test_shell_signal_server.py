"""A worker cannot kill the project's server: a real ``exomonad serve`` in a scratch
project, the worker's hooks through the real hook client (``exomonad hook``, its token
and ``EXOMONAD_DIR``), and the server still answers afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from exomonad.client import ServerClient
from exomonad.server.pidfile import read_server_info
from tests.support.served import answers, served_project

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


@dataclass
class Project:
    state: Path
    env: dict[str, str]
    proc: subprocess.Popen[str]
    worker: str

    def hook(self, command: str, runtime: str = "gemini") -> Any:
        """The worker's gate for ``command``, through ``exomonad hook``."""
        payload = {"tool_name": "run_shell_command", "tool_input": {"command": command},
                   "cwd": str(self.state.parent)}  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "exomonad", "hook", "before-tool", "--runtime", runtime],
            input=orjson.dumps(payload).decode(), capture_output=True, text=True, timeout=60,
            env={**self.env, "EXOMONAD_TOKEN": self.worker}, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return orjson.loads(done.stdout)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    with served_project(tmp_path) as served:
        yield Project(served.state, served.env, served.proc, served.worker)


def test_a_worker_cannot_signal_the_live_server(project: Project) -> None:
    info = read_server_info(project.state)
    assert info is not None
    assert info.pid == project.proc.pid
    comm = Path(f"/proc/{info.pid}/comm").read_text().strip()
    for command in ("pkill -f 'exomonad serve'", f"kill -9 {info.pid}", f"killall {comm}",
                    f"kill -TERM -{os.getpgid(info.pid)}", "pkill -f exomonad",
                    "kill -9 $(pgrep -f 'exomonad serve')", "kill -9 -1"):  # fmt: skip
        got = project.hook(command)
        assert got.get("decision") == "deny", (command, got)
        assert "signal ExoMonad's processes" in got.get("reason", ""), (command, got)
    got = project.hook("pgrep -f pytest")
    assert got.get("decision") != "deny", got
    assert project.proc.poll() is None
    assert answers(ServerClient.as_lead(project.state))
