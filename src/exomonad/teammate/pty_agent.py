"""Run an interactive program on a pseudo-terminal we own, mirrored to our terminal.

The program's output is copied to our stdout and our stdin to the program, so the pane
looks and behaves as if the program ran in it directly; window size changes follow.
Owning the pty means ExoMonad types messages straight into the program's input: no
dependence on tmux focus, copy mode or another client's keystrokes.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import threading
import time
import tty
from collections.abc import Mapping, Sequence
from typing import Any

from exomonad.errors import PaneError
from exomonad.panes.sanitize import sanitize
from exomonad.panes.spool import Spool

__all__ = ["PtyAgent", "PtySink"]

_SQUASH = re.compile(r"[\s\u2500-\u257f|]+")  # as panes.base: white space, box drawing


def _squash(text: str) -> str:
    return _SQUASH.sub("", text)


_ANSI = re.compile(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


class PtyAgent:
    """A child program on a pty; :meth:`type` writes to its input."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: str | None = None):
        self.argv = list(argv)
        self.env = dict(env)
        self.cwd = cwd
        self.pid = 0
        self.master = -1
        self.output_bytes = 0  # grows with every byte the program writes
        self.recent = bytearray()  # the last 64 KiB of output, for readiness checks
        self._output = threading.Condition()
        self._write_lock = threading.Lock()
        self._saved_tty: list[Any] | None = None

    def start(self) -> None:
        """Fork the program on a new pty and start mirroring."""
        pid, master = pty.fork()
        if pid == 0:  # child
            if self.cwd:
                os.chdir(self.cwd)
            try:
                os.execvpe(self.argv[0], self.argv, self.env)
            except OSError as exc:
                os.write(2, f"exomonad teammate: cannot run {self.argv[0]}: {exc}\n".encode())
                os._exit(127)
        self.pid, self.master = pid, master
        self._sync_size()
        if sys.stdin.isatty():
            self._saved_tty = termios.tcgetattr(sys.stdin.fileno())
            tty.setraw(sys.stdin.fileno())
            signal.signal(signal.SIGWINCH, lambda *_: self._sync_size())
        threading.Thread(target=self._pump_out, daemon=True, name="pty-out").start()
        threading.Thread(target=self._pump_in, daemon=True, name="pty-in").start()

    def _sync_size(self) -> None:
        with contextlib.suppress(OSError):
            size = fcntl.ioctl(sys.stdout.fileno(), termios.TIOCGWINSZ, b"\0" * 8)
            rows, cols = struct.unpack("HHHH", size)[:2]
            if rows and cols:
                fcntl.ioctl(self.master, termios.TIOCSWINSZ, size)

    def _pump_out(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                data = b""
            if not data:
                break
            with contextlib.suppress(OSError):
                os.write(sys.stdout.fileno(), data)
            with self._output:
                self.output_bytes += len(data)
                self.recent += data
                del self.recent[:-65536]
                self._output.notify_all()
        with self._output:
            self._output.notify_all()

    def _pump_in(self) -> None:
        fd = sys.stdin.fileno()
        while True:
            try:
                ready, _, _ = select.select([fd], [], [], 0.5)
                if not ready:
                    if not self.alive():
                        return
                    continue
                data = os.read(fd, 4096)
            except OSError:
                return
            if not data:
                return
            self.write(data)

    def write(self, data: bytes) -> None:
        """Write raw bytes to the program's input (whole, never interleaved)."""
        with self._write_lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self.master, view) :]

    def wait_output(self, after: int, timeout: float) -> bool:
        """Wait until the program has written more than ``after`` bytes in total."""
        deadline = time.monotonic() + timeout
        with self._output:
            while self.output_bytes <= after:
                left = deadline - time.monotonic()
                if left <= 0 or not self.alive():
                    return False
                self._output.wait(left)
            return True

    def wait_for_echo(self, text: str, after: int, timeout: float) -> bool:
        """Wait until the end of ``text`` shows in what the program wrote after byte
        ``after`` (escape codes, white space and box drawing ignored): it read the input.

        Any output is not enough: a busy TUI redraws (a spinner, start-up notices) before
        it reads what was typed, and an Enter read together with the text becomes a
        newline (Gemini CLI just after its prompt appears).
        """
        tail = _squash(text)[-12:]
        deadline = time.monotonic() + timeout
        with self._output:
            while True:
                new = min(self.output_bytes - after, len(self.recent))
                written = bytes(self.recent[-new:]) if new > 0 else b""
                if tail in _squash(_ANSI.sub("", written.decode("utf-8", "replace"))):
                    return True
                left = deadline - time.monotonic()
                if left <= 0 or not self.alive():
                    return False
                self._output.wait(min(left, 0.5))

    def wait_for_text(self, marker: str, timeout: float) -> bool:
        """Wait until ``marker`` shows in the program's output (escape codes ignored)."""
        deadline = time.monotonic() + timeout
        with self._output:
            while marker not in _ANSI.sub("", self.recent.decode("utf-8", "replace")):
                left = deadline - time.monotonic()
                if left <= 0 or not self.alive():
                    return False
                self._output.wait(min(left, 0.5))
            return True

    def alive(self) -> bool:
        """Whether the program is still running."""
        if not self.pid:
            return False
        try:
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == self.pid:
            self.pid = 0
            return False
        return True

    def wait(self) -> int:
        """Wait for the program to exit; its exit status (128+N for signal N)."""
        if not self.pid:
            return 0
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0
        self.restore()
        return os.waitstatus_to_exitcode(status) if status >= 0 else 1

    def terminate(self, grace: float = 5.0) -> None:
        """SIGTERM, then SIGKILL after ``grace`` seconds."""
        if not self.alive():
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.05)  # polling a child's exit; no event to wait on here
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    def restore(self) -> None:
        """Give our terminal its settings back."""
        if self._saved_tty is not None:
            with contextlib.suppress(termios.error):
                termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, self._saved_tty)
            self._saved_tty = None


class PtySink:
    """A TextSink typing into a :class:`PtyAgent`: sanitised, spooled if long, then Enter.

    Like the pane backends: after typing, wait (bounded) until the program echoes the
    end of the text (it read the input), then ``enter_delay``, then a carriage return.
    """

    def __init__(
        self, agent: PtyAgent, *, enter_delay: float = 0.12, echo_timeout: float = 3.0,
        spool: Spool | None = None,
    ) -> None:  # fmt: skip
        self.agent = agent
        self.enter_delay = enter_delay
        self.echo_timeout = echo_timeout
        self.spool = spool or Spool()

    def deliver(self, pane: str, text: str, *, sender: str | None = None) -> None:
        """Type ``text`` (or a spool pointer) and submit it."""
        if not self.agent.alive():
            raise PaneError("the teammate's agent is not running")
        line = sanitize(self.spool.prepare(text, sender=sender).line, keep_newlines=False)
        before = self.agent.output_bytes
        self.agent.write(line.encode())
        self.agent.wait_for_echo(line, before, self.echo_timeout)  # no echo: submit anyway
        time.sleep(self.enter_delay)  # deliberate pacing: Ink reads a quick Enter as newline
        self.agent.write(b"\r")
