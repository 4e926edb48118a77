"""Launch the interop peers (Node ``proper-lockfile`` scripts and Python writer processes).

Shared by the interop tests and ``python -m benchmarks``. Every peer prints one JSON
summary line last on stdout. Started with ``wait=True`` a peer prints ``ready`` and blocks
until :meth:`Peer.go`, so several processes can start writing at the same moment
(:func:`start_together`); all waits here are bounded.
"""

from __future__ import annotations

import os
import selectors
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import orjson

__all__ = [
    "INTEROP_DIR",
    "Peer",
    "PeerError",
    "SetupMissing",
    "Style",
    "drain",
    "hold_lock",
    "node_binary",
    "node_version",
    "node_writer",
    "py_writer",
    "start_together",
]

INTEROP_DIR = Path(__file__).resolve().parent
PROPER_LOCKFILE = INTEROP_DIR / "node_modules" / "proper-lockfile" / "package.json"
PROPER_LOCKFILE_VERSION = "4.1.2"

Style = Literal["2.1.112", "2.1.330"]


class SetupMissing(RuntimeError):
    """Node or the pinned ``proper-lockfile`` is not installed."""


class PeerError(RuntimeError):
    """A peer process failed, timed out, or printed no summary."""


def node_binary() -> str:
    """Path of ``node`` with ``proper-lockfile`` 4.1.2 installed next to the scripts.

    Raises :class:`SetupMissing` (with the fix) otherwise: interop is never skipped.
    """
    node = shutil.which("node")
    if node is None:
        raise SetupMissing("`node` is not on PATH: run `make setup`")
    if not PROPER_LOCKFILE.is_file():
        raise SetupMissing(f"{PROPER_LOCKFILE.parent} is missing: run `make setup`")
    version = orjson.loads(PROPER_LOCKFILE.read_bytes()).get("version")
    if version != PROPER_LOCKFILE_VERSION:
        raise SetupMissing(
            f"proper-lockfile {version} installed, {PROPER_LOCKFILE_VERSION} pinned: "
            "run `make setup`"
        )
    return node


def node_version() -> str:
    """``node --version`` (for benchmark metadata)."""
    out = subprocess.run(
        [node_binary(), "--version"], capture_output=True, text=True, check=True, timeout=10
    )
    return out.stdout.strip()


class Peer:
    """One peer process speaking the ``ready`` / ``go`` / JSON-summary protocol."""

    def __init__(self, argv: Sequence[str], *, waits: bool) -> None:
        self.argv = list(argv)
        self.waits = waits
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=INTEROP_DIR,
        )
        self._buf = b""

    def __repr__(self) -> str:
        return f"Peer({' '.join(self.argv[1:3])}...)"

    def read_line(self, timeout: float) -> str:
        """The next stdout line, waiting at most ``timeout`` seconds."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buf:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    raise PeerError(f"{self!r}: no output line within {timeout:.1f}s")
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise PeerError(f"{self!r} exited early: {self._stderr_now()}")
                self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line.decode()

    def _stderr_now(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return ""
        return self.proc.stderr.read().decode(errors="replace")

    def wait_ready(self, timeout: float = 15.0) -> None:
        """Block until the peer printed ``ready`` (only for peers started with wait)."""
        line = self.read_line(timeout)
        if line != "ready":
            raise PeerError(f"{self!r}: expected 'ready', got {line!r}")

    def go(self) -> None:
        """Let a waiting peer start (and close its stdin: nothing else is sent)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"go\n")
        self.proc.stdin.close()
        self.proc.stdin = None

    def result(self, timeout: float = 60.0) -> dict[str, Any]:
        """Wait for exit and return the JSON summary (the last stdout line)."""
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise PeerError(f"{self!r} did not finish within {timeout:.1f}s") from None
        out = self._buf + out
        if self.proc.returncode != 0:
            raise PeerError(
                f"{self!r} exited {self.proc.returncode}: {err.decode(errors='replace')}"
            )
        lines = [ln for ln in out.decode().splitlines() if ln.strip()]
        if not lines:
            raise PeerError(f"{self!r} printed no summary; stderr: {err.decode()}")
        summary = orjson.loads(lines[-1])
        assert isinstance(summary, dict)
        return summary

    def kill(self) -> None:
        """Kill the process (idempotent) and reap it."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


def start_together(peers: Iterable[Peer], timeout: float = 20.0) -> None:
    """Wait until every peer is ready, then release them all at once."""
    items = list(peers)
    for p in items:
        p.wait_ready(timeout)
    for p in items:
        p.go()


def node_writer(
    inbox: Path,
    sender: str,
    count: int,
    style: Style,
    *,
    delay_ms: float = 0,
    durable: bool = False,
    wait: bool = False,
    prefix: str | None = None,
    prefill_from: Path | None = None,
    reset_every: int = 0,
    warmup: int = 0,
    offset_ms: float = 0,
    stop_file: Path | None = None,
) -> Peer:
    """``writer.js``: Claude Code's inbox write, ``count`` times (see the script), or
    until ``stop_file`` exists."""
    argv = [node_binary(), "writer.js", str(inbox), sender, str(count), style, str(delay_ms)]
    if durable:
        argv.append("--durable")
    if wait:
        argv.append("--wait")
    if prefix is not None:
        argv += ["--prefix", prefix]
    if prefill_from is not None:
        argv += ["--prefill-from", str(prefill_from), "--reset-every", str(reset_every)]
    if warmup:
        argv += ["--warmup", str(warmup)]
    if offset_ms:
        argv += ["--offset-ms", str(offset_ms)]
    if stop_file is not None:
        argv += ["--stop-file", str(stop_file)]
    return Peer(argv, waits=wait)


def py_writer(
    root: Path,
    team: str,
    to: str,
    sender: str,
    count: int,
    dialect: Style,
    *,
    durable: bool = True,
    wait: bool = False,
    prefix: str | None = None,
    delay_ms: float = 0,
    lock_min_ms: float | None = None,
    offset_ms: float = 0,
) -> Peer:
    """``py_writer.py``: :meth:`Mailbox.send` ``count`` times from its own process."""
    argv = [
        sys.executable,
        str(INTEROP_DIR / "py_writer.py"),
        "--root", str(root),
        "--team", team,
        "--to", to,
        "--sender", sender,
        "--count", str(count),
        "--dialect", dialect,
    ]  # fmt: skip
    if not durable:
        argv.append("--no-durable")
    if wait:
        argv.append("--wait")
    if prefix is not None:
        argv += ["--prefix", prefix]
    if delay_ms:
        argv += ["--delay-ms", str(delay_ms)]
    if lock_min_ms is not None:
        argv += ["--lock-min-ms", str(lock_min_ms)]
    if offset_ms:
        argv += ["--offset-ms", str(offset_ms)]
    return Peer(argv, waits=wait)


def drain(
    inbox: Path,
    mode: Literal["flag", "prune"],
    interval_ms: int,
    out: Path,
    stop_file: Path,
    *,
    wait: bool = False,
) -> Peer:
    """``drain.js``: Claude Code's poller; stops after its first poll once ``stop_file`` exists."""
    argv = [node_binary(), "drain.js", str(inbox), mode, str(interval_ms), str(out), str(stop_file)]
    if wait:
        argv.append("--wait")
    return Peer(argv, waits=wait)


def hold_lock(target: Path, hold_ms: int) -> Peer:
    """``hold_lock.js``: hold proper-lockfile's lock on ``target``; prints ``locked`` first."""
    return Peer([node_binary(), "hold_lock.js", str(target), str(hold_ms)], waits=False)
