"""Fixtures for policy tests: policy sources, a writer that always bumps the mtime, a
live server for trying the gate as a worker, a loopback HTTP server that keeps what it
is sent."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from tests.policy.test_state_tree_live import QUICK_ESCALATIONS, Live, served
from tests.support.tmux import TmuxServer

PolicyWriter = Callable[[str], Path]


def policy_source(name: str, *, allow: bool = True, extra: str = "") -> str:
    """A tiny valid policy: a rule that allows (or denies) everything, naming itself."""
    verdict = "Allow" if allow else "Deny"
    expect = "allow" if allow else "deny"
    return f'''from __future__ import annotations

from exomonad.policy import Action, Allow, Context, Decision, Deny, Policy, Role


def rule(action: Action, ctx: Context) -> Decision | None:
    del action, ctx
    return {verdict}("{name}")


policy = Policy(roles={{"dev": Role()}}, rules=[rule], name="{name}")
examples = [("ls", "dev", "{expect}")]
{extra}
'''


def sha(text: str) -> str:
    """sha256 hex of ``text``."""
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    """An empty ``.exomonad`` dir inside a project dir."""
    path = tmp_path / "project" / ".exomonad"
    path.mkdir(parents=True)
    return path


@pytest.fixture
def write_policy(state_dir: Path) -> PolicyWriter:
    """Write ``.exomonad/policy.py`` and move its mtime forward by a whole second, so
    even a filesystem with coarse timestamps sees a change."""
    target = state_dir / "policy.py"
    clock = [1_700_000_000]

    def write(text: str) -> Path:
        target.write_text(text)
        clock[0] += 1
        os.utime(target, ns=(clock[0] * 10**9, clock[0] * 10**9))
        return target

    return write


@pytest.fixture(autouse=True)
def _no_state_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXOMONAD_DIR", raising=False)


@pytest.fixture(scope="session")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy cache for the whole session (the first run is the slow one)."""
    return tmp_path_factory.mktemp("mypy-cache")


@pytest.fixture
def live(tmp_path: Path, tmux_server: TmuxServer) -> Iterator[Live]:
    """The live server, escalations answered at once (no one approves them here)."""
    with served(tmp_path, tmux_server, QUICK_ESCALATIONS) as running:
        yield running


@dataclass
class Sink:
    """A loopback HTTP server's address and what it was sent."""

    url: str
    bodies: list[bytes] = field(default_factory=list)  # of each POST and PUT
    lines: list[str] = field(default_factory=list)  # "METHOD PATH" of every request


@pytest.fixture
def sink() -> Iterator[Sink]:
    """A loopback HTTP server keeping what it is sent; a GET is answered ``planted``."""
    kept = Sink("")

    class Keep(BaseHTTPRequestHandler):
        def _keep(self) -> None:
            kept.lines.append(f"{self.command} {self.path}")
            size = int(self.headers.get("content-length") or 0)
            kept.bodies.append(self.rfile.read(size))
            self.send_response(200)
            self.end_headers()

        do_POST = do_PUT = _keep

        def do_GET(self) -> None:
            kept.lines.append(f"{self.command} {self.path}")
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"planted\n")

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Keep)
    kept.url = f"http://127.0.0.1:{server.server_address[1]}/"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield kept
    finally:
        server.shutdown()
        server.server_close()
