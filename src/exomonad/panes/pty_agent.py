"""Run an interactive program on a pseudo-terminal we own, optionally mirrored to ours.

Mirrored (``mirror=True``), the program's output is copied to our stdout and our stdin to
the program, so the pane looks and behaves as if the program ran in it directly; window
size changes follow. Owning the pty means ExoMonad types messages straight into the
program's input: no dependence on tmux focus, copy mode or another client's keystrokes.
:class:`~exomonad.panes.pty.PtyBackend` delivers messages into these agents.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
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

from exomonad.panes.screen import squash

__all__ = ["DEFAULT_SIZE", "PtyAgent"]

DEFAULT_SIZE = (24, 80)
"""Rows and columns of a pty that does not follow a terminal of ours."""

_RECENT = 65536  # bytes of output kept for echo, readiness and capture

_ANSI = re.compile(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


def strip_ansi(data: bytes) -> str:
    r"""Decode ``data`` and drop escape sequences.

    >>> strip_ansi(b"\x1b[1mhi\x1b[0m there")
    'hi there'
    """
    return _ANSI.sub("", data.decode("utf-8", "replace"))


class PtyAgent:
    """A child program on a pty; :meth:`write` types into its input.

    Args:
        argv: the program and its arguments.
        env: its whole environment.
        cwd: its working directory (default: ours).
        mirror: copy its output to our stdout and our stdin to it, and follow our
            window size; else the pty is :data:`DEFAULT_SIZE` and only ExoMonad types.

    Attributes:
        tty: the pty's device, e.g. ``/dev/pts/7`` (set by :meth:`start`).
        output_bytes: grows with every byte the program writes.
        recent: the last 64 KiB of its output.
        returncode: its exit status once it has exited and been reaped (``-N`` if
            signal N ended it).
    """

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: str | None = None,
                 mirror: bool = True):  # fmt: skip
        self.argv = list(argv)
        self.env = dict(env)
        self.cwd = cwd
        self.mirror = mirror
        self.pid = 0
        self.master = -1
        self.tty = ""
        self.output_bytes = 0
        self.recent = bytearray()
        self.returncode: int | None = None
        self._exited = threading.Event()
        self._output = threading.Condition()
        self._write_lock = threading.Lock()
        self._saved_tty: list[Any] | None = None
        self._pump: threading.Thread | None = None

    def start(self) -> None:
        """Fork the program on a new pty (its controlling terminal) and start pumping."""
        master, slave = os.openpty()
        self.tty = os.ttyname(slave)
        pid = os.fork()
        if pid == 0:  # child: never return into the parent's code
            try:
                os.close(master)
                os.login_tty(slave)
                if self.cwd:
                    os.chdir(self.cwd)
                os.execvpe(self.argv[0], self.argv, self.env)
            except BaseException as exc:
                with contextlib.suppress(BaseException):
                    os.write(2, f"exomonad: cannot run {self.argv[0]}: {exc}\n".encode())
            finally:
                os._exit(127)
        os.close(slave)
        self.pid, self.master = pid, master
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", *DEFAULT_SIZE, 0, 0))
        if self.mirror:
            self._sync_size()
            if sys.stdin.isatty():
                self._saved_tty = termios.tcgetattr(sys.stdin.fileno())
                tty.setraw(sys.stdin.fileno())
                signal.signal(signal.SIGWINCH, lambda *_: self._sync_size())
            threading.Thread(target=self._pump_in, daemon=True, name="pty-in").start()
        self._pump = threading.Thread(target=self._pump_out, daemon=True, name="pty-out")
        self._pump.start()

    def _sync_size(self) -> None:
        with contextlib.suppress(OSError, ValueError):
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
            if self.mirror:
                with contextlib.suppress(OSError, ValueError):
                    os.write(sys.stdout.fileno(), data)
            with self._output:
                self.output_bytes += len(data)
                self.recent += data
                del self.recent[:-_RECENT]
                self._output.notify_all()
        with self._output:
            self._output.notify_all()

    def _pump_in(self) -> None:
        try:
            fd = sys.stdin.fileno()
        except (OSError, ValueError):  # no real stdin (e.g. under pytest)
            return
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
            with contextlib.suppress(OSError):
                self.write(data)

    def write(self, data: bytes) -> None:
        """Write raw bytes to the program's input (whole, never interleaved).

        Raises:
            OSError: the pty no longer takes input (e.g. its program has exited).
        """
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
                self._output.wait(min(left, 0.5))
            return True

    def wait_for_echo(self, text: str, after: int, timeout: float) -> bool:
        """Wait until the end of ``text`` shows in what the program wrote after byte
        ``after`` (escape codes, white space and box drawing ignored): it read the input.

        Any output is not enough: a busy TUI redraws (a spinner, start-up notices) before
        it reads what was typed, and an Enter read together with the text becomes a
        newline (Gemini CLI just after its prompt appears).
        """
        tail = squash(text)[-12:]
        deadline = time.monotonic() + timeout
        with self._output:
            while True:
                new = min(self.output_bytes - after, len(self.recent))
                written = bytes(self.recent[-new:]) if new > 0 else b""
                if tail in squash(strip_ansi(written)):
                    return True
                left = deadline - time.monotonic()
                if left <= 0 or not self.alive():
                    return False
                self._output.wait(min(left, 0.5))

    def wait_for_text(self, marker: str, timeout: float) -> bool:
        """Wait until ``marker`` shows in the program's output (escape codes ignored)."""
        deadline = time.monotonic() + timeout
        with self._output:
            while marker not in strip_ansi(bytes(self.recent)):
                left = deadline - time.monotonic()
                if left <= 0 or not self.alive():
                    return False
                self._output.wait(min(left, 0.5))
            return True

    def screen(self) -> str:
        """The program's recent output, escape sequences removed, line ends as ``\\n``.

        A log of what it wrote, not an emulated screen: redrawn text shows each time.
        """
        with self._output:
            data = bytes(self.recent)
        return strip_ansi(data).replace("\r\n", "\n").replace("\r", "\n")

    def alive(self) -> bool:
        """Whether the program is still running (reaps it once it has exited)."""
        if not self.pid or self._exited.is_set():
            return False
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:  # reaped by a concurrent wait(), which records it
            return False
        if pid == self.pid:
            self._reaped(status)
            return False
        return True

    def _reaped(self, status: int) -> None:
        self.returncode = os.waitstatus_to_exitcode(status)
        self._exited.set()

    def wait(self) -> int:
        """Wait for the program to exit; its exit status (-N for signal N)."""
        if not self.pid:
            return 0
        if not self._exited.is_set():
            try:
                _, status = os.waitpid(self.pid, 0)
            except ChildProcessError:  # a concurrent alive() reaped it and records it
                self._exited.wait(5.0)
            else:
                self._reaped(status)
        self.restore()
        return self.returncode if self.returncode is not None else 1

    def terminate(self, grace: float = 5.0) -> None:
        """SIGTERM, then SIGKILL after ``grace`` seconds, then wait (as long again) until
        it has gone: whoever terminates it next touches what it worked on."""
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
            deadline = time.monotonic() + grace
            while self.alive() and time.monotonic() < deadline:
                time.sleep(0.01)  # SIGKILL cannot be caught: this is short

    def close(self, timeout: float = 2.0) -> None:
        """Release the pty once the program has gone: the output pump reads it to the end
        (at most ``timeout`` seconds; a descendant still holding the pty keeps it open)."""
        if self._pump is not None:
            self._pump.join(timeout)
            if self._pump.is_alive():
                return
        if self.master >= 0:
            with contextlib.suppress(OSError):
                os.close(self.master)
            self.master = -1
        self.restore()

    def restore(self) -> None:
        """Give our terminal its settings back."""
        if self._saved_tty is not None:
            with contextlib.suppress(termios.error):
                termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, self._saved_tty)
            self._saved_tty = None
