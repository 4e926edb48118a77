"""Shared fixtures: a private tmux server per test and a reader pane.

Each tmux test gets its own server (``tmux -L exo-test-<random> -f /dev/null``), started
with a known size and killed (``kill-server``) on teardown, so tests never touch the
user's tmux and can run in parallel. tmux missing is a failure, never a skip: ``make
setup`` installs it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from exomonad.panes import TmuxBackend
from exomonad.util.waiting import retry_until

READER = Path(__file__).with_name("reader.py")
WIDTH, HEIGHT = 160, 48


def run_tmux(
    socket: str,
    *args: str,
    tmux: str = "tmux",
    env: Mapping[str, str] | None = None,
    timeout: float = 10.0,
) -> subprocess.CompletedProcess[str]:
    """``tmux -L <socket> <args>`` with output captured; never raises on a failure."""
    return subprocess.run(
        [tmux, "-L", socket, *args],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
        timeout=timeout,
    )


def kill_server(
    socket: str,
    *,
    socket_path: Path | None = None,
    tmux: str = "tmux",
    env: Mapping[str, str] | None = None,
) -> None:
    """``kill-server``, then unlink the socket file tmux 3.3 leaves behind.

    ``socket_path`` defaults to the running server's ``#{socket_path}``; a path whose
    name is not ``socket`` is never removed.
    """
    if socket_path is None:
        out = run_tmux(socket, "display-message", "-p", "#{socket_path}", tmux=tmux, env=env)
        socket_path = Path(out.stdout.strip()) if out.returncode == 0 else None
    run_tmux(socket, "kill-server", tmux=tmux, env=env)
    if socket_path is not None and socket_path.name == socket:
        with contextlib.suppress(OSError):
            socket_path.unlink(missing_ok=True)


@dataclass
class Reader:
    """A pane running ``reader.py`` and the file it records into."""

    pane: str
    out: Path

    def records(self) -> list[dict[str, Any]]:
        """Everything the reader recorded so far."""
        if not self.out.exists():
            return []
        # The reader may be mid-write: only complete (newline-terminated) records count.
        complete = self.out.read_text("utf-8").split("\n")[:-1]
        return [json.loads(line) for line in complete if line]

    def lines(self) -> list[str]:
        """Lines received so far."""
        return [r["line"] for r in self.records() if "line" in r]

    def signals(self) -> list[str]:
        """Signals the reader caught (a leaked ^C shows up here)."""
        return [r["signal"] for r in self.records() if "signal" in r]

    def wait_lines(self, count: int, timeout: float = 10.0) -> list[str]:
        """Wait until at least ``count`` lines arrived; return all lines."""
        retry_until(
            lambda: len(self.lines()) >= count,
            timeout=timeout,
            message=f"reader got {self.lines()!r}, wanted {count} lines",
        )
        return self.lines()


@dataclass
class TmuxServer:
    """One throwaway tmux server; ``main`` is its first session."""

    socket: str
    tmp: Path
    session: str = "main"

    def tmux(self, *args: str) -> str:
        """Run a tmux command on this server; return stdout (raise on failure)."""
        proc = run_tmux(self.socket, *args)
        if proc.returncode != 0:
            raise AssertionError(f"tmux {args}: {proc.stderr}")
        return proc.stdout

    def fmt(self, pane: str, fmt: str) -> str:
        """Expand a tmux format for ``pane``."""
        return self.tmux("display-message", "-p", "-t", pane, fmt).strip()

    def backend(self, **kw: Any) -> TmuxBackend:
        """A backend on this server with private lock and spool dirs."""
        kw.setdefault("lock_dir", self.tmp / "locks")
        kw.setdefault("spool_dir", self.tmp / "spool")
        return TmuxBackend(self.socket, **kw)

    def new_pane(self, *command: str) -> str:
        """Open ``command`` in a new window of ``main``; return the pane id."""
        return self.tmux(
            "new-window", "-d", "-P", "-F", "#{pane_id}", "-t", self.session, "--", *command
        ).strip()

    def reader(self, name: str = "reader", *, split_from: str | None = None) -> Reader:
        """Start ``reader.py`` in a new window (or by splitting ``split_from``) and wait
        until it is ready."""
        out = self.tmp / f"{name}-{uuid.uuid4().hex[:6]}.jsonl"
        command = (sys.executable, str(READER), str(out))
        if split_from is None:
            pane = self.new_pane(*command)
        else:
            pane = self.tmux(
                "split-window", "-d", "-P", "-F", "#{pane_id}", "-t", split_from, "--", *command
            ).strip()
        reader = Reader(pane, out)
        retry_until(
            lambda: any(r.get("event") == "ready" for r in reader.records()),
            timeout=10,
            message="reader did not start",
        )
        return reader


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    env.setdefault("LANG", "C.UTF-8")
    return env


@pytest.fixture
def tmux_server(tmp_path: Path) -> Iterator[TmuxServer]:
    """A private tmux server (size 160x48), killed after the test."""
    if shutil.which("tmux") is None:
        pytest.fail("tmux is not installed: run `make setup` (it apt-installs tmux)")
    socket = f"exo-test-{uuid.uuid4().hex[:12]}"
    subprocess.run(
        ["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "main",
         "-n", "sleep",  # named: automatic-rename showed "tmux" until the exec
         "-x", str(WIDTH), "-y", str(HEIGHT), "--", "sleep", "86400"],
        check=True,
        env=_environment(),
        timeout=10,
    )  # fmt: skip
    server = TmuxServer(socket, tmp_path)
    socket_path = Path(server.tmux("display-message", "-p", "#{socket_path}").strip())
    try:
        yield server
    finally:
        kill_server(socket, socket_path=socket_path)


@pytest.fixture
def reader(tmux_server: TmuxServer) -> Reader:
    """A reader pane on the test's tmux server."""
    return tmux_server.reader()
