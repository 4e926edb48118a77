"""The stdin backend: a headless agent (``claude -p --input-format stream-json``) started
as a child process, fed each message as one stream-json user turn on its stdin.

A :class:`~exomonad.panes.contract.TextSink`, not a terminal: no keys are typed, so there
is no echo to await, no Enter to press or confirm, and no spool (a JSON string carries
any length and any line ends, escaped: the text is sent as it is, never as keystrokes).
A turn is written whole under a lock per child, so deliveries and other lines written
with :meth:`StdinBackend.write` never interleave. The target id is the child's pid (as a
string): it exists while that child, started by this backend, runs with its stdin open.

>>> import sys
>>> backend = StdinBackend()
>>> lead = backend.spawn([sys.executable, "-c", "import sys; sys.stdin.readline()"])
>>> lead.isdigit(), backend.exists(lead)
(True, True)
>>> receipt = backend.deliver(lead, "hello")
>>> receipt.submitted, receipt.enter_attempts
(True, 0)
>>> backend.process(lead).wait()
0
>>> backend.exists(lead)
False
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Callable, Mapping

import orjson

from exomonad.errors import PaneError
from exomonad.panes.contract import Command, DeliveryReceipt

__all__ = ["StdinBackend", "user_turn"]


def user_turn(text: str) -> bytes:
    """One stream-json input line carrying ``text`` as a user turn.

    >>> user_turn("hi")
    b'{"type":"user","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}\\n'
    """
    message = {"role": "user", "content": [{"type": "text", "text": text}]}
    return orjson.dumps({"type": "user", "message": message}) + b"\n"


class StdinBackend:
    """Child processes fed on their stdin, one line per message.

    Args:
        encode: turns a message into the one line written (default :func:`user_turn`).
    """

    def __init__(self, *, encode: Callable[[str], bytes] = user_turn) -> None:
        self.encode = encode
        self._children: dict[str, subprocess.Popen[bytes]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._state = threading.Lock()

    def __repr__(self) -> str:
        return f"StdinBackend(children={sorted(self._children)!r})"

    def spawn(
        self,
        command: Command,
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> str:
        """Start ``command`` (a shell line or an argv list) with its stdin a pipe to us,
        its stdout and stderr ours; ``env`` is added to our environment. Returns its id."""
        shell = isinstance(command, str)
        proc = subprocess.Popen(command if shell else list(command), shell=shell, cwd=cwd,
                                env={**os.environ, **env} if env else None,
                                stdin=subprocess.PIPE)  # fmt: skip
        target = str(proc.pid)
        with self._state:
            self._children[target] = proc
            self._locks[target] = threading.Lock()
        return target

    def process(self, pane: str) -> subprocess.Popen[bytes]:
        """The child behind ``pane`` (``PaneError`` if this backend did not start it)."""
        with self._state:
            proc = self._children.get(pane)
        if proc is None:
            raise PaneError(f"process {pane!r} is not a child this backend feeds")
        return proc

    def _resolve(self, pane: str) -> tuple[subprocess.Popen[bytes], threading.Lock]:
        proc = self.process(pane)
        if proc.stdin is None or proc.stdin.closed:
            raise PaneError(f"process {pane} no longer reads its stdin (closed)")
        if proc.poll() is not None:
            raise PaneError(f"process {pane} has exited (status {proc.returncode})")
        with self._state:
            return proc, self._locks[pane]

    def write(self, pane: str, line: bytes) -> None:
        """Write one whole line to ``pane``'s stdin (never interleaved with another).

        Raises:
            PaneError: the child is not ours, has exited or no longer reads its stdin.
        """
        proc, lock = self._resolve(pane)
        assert proc.stdin is not None  # checked by _resolve
        with lock:
            try:
                proc.stdin.write(line)
                proc.stdin.flush()
            except (OSError, ValueError) as exc:  # BrokenPipeError; ValueError: closed
                raise PaneError(f"process {pane} no longer reads its stdin: {exc}") from exc

    def deliver(self, pane: str, text: str, *, sender: str | None = None,
                to: tuple[str, str] | None = None) -> DeliveryReceipt:  # fmt: skip
        """Send ``text`` as one encoded line; submitted once the pipe accepted all of it.

        ``sender`` and ``to`` are unused: nothing is spooled, so no pointer names it.
        """
        started_at = time.time()
        self.write(pane, self.encode(text))
        done = time.time()
        return DeliveryReceipt(pane=pane, typed=text, spool_path=None, submitted=True,
                               enter_attempts=0, started_at=started_at, typed_at=done,
                               submitted_at=done)  # fmt: skip

    def submit(self, pane: str) -> None:
        """Nothing to do: a turn is written whole or not at all (checks ``pane`` lives)."""
        self._resolve(pane)

    def exists(self, pane: str) -> bool:
        """Whether ``pane`` is a child of ours that runs and still has its stdin open."""
        try:
            self._resolve(pane)
        except PaneError:
            return False
        return True

    def close(self, pane: str) -> None:
        """Close ``pane``'s stdin (the child reads end-of-file); it no longer exists."""
        proc = self.process(pane)
        with self._state:
            lock = self._locks[pane]
        with lock, contextlib.suppress(OSError):  # a broken pipe when flushing on close
            if proc.stdin is not None:
                proc.stdin.close()
