"""The server's side of the inbox appender process (:mod:`exomonad.teams.append_process`).

The appends the event loop awaits (``notify_parent`` from every worker, into one lead
inbox) are written by a process of their own, so the group write never queues for the
server's interpreter lock behind the loop, nor the loop behind it: under 16 sessions
the lock on Claude Code's inbox was held ~1.4 ms per group in a thread of the server
and ~0.3 ms in the appender (docs/performance.md, issue 14).

:meth:`InboxAppender.commit` hands an entry (checked and stamped by
:meth:`Mailbox.prepare <exomonad.teams.Mailbox.prepare>`) to the process and returns
once the process has verified it on disk, raising what :meth:`Mailbox.append` raises
for the same failures (:class:`~exomonad.errors.CorruptFileError`,
:class:`~exomonad.errors.DeliveryError`).
The process starts on the first append, in the background: until it says it is ready,
and whenever it is not running, appends go to the server's own group commit
(:meth:`Mailbox.commit_later <exomonad.teams.Mailbox.commit_later>`), as they did
before it existed. Should the process end while appends are in flight, their lock dirs
are recovered from the journal and each one is handed to the server's own group commit:
an entry that had landed is not added twice (appends are idempotent by message id), and
none is reported sent without being verified. After :data:`MAX_STARTS` starts the
server keeps its own group commit.

``EXOMONAD_INBOX_APPENDER=thread`` keeps every append in the server's own group commit
(default ``process``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from exomonad.errors import CorruptFileError, DeliveryError
from exomonad.server.service import Passive
from exomonad.teams import Mailbox
from exomonad.teams.append_process import mailbox_line
from exomonad.teams.groupcommit import Pending, record_group
from exomonad.teams.lockjournal import recover_locks

__all__ = ["ENV", "MAX_STARTS", "InboxAppender"]

log = logging.getLogger("exomonad.server")

#: The environment variable that chooses who writes the loop's appends.
ENV = "EXOMONAD_INBOX_APPENDER"
#: How many times the process is started before the server keeps its own group commit.
MAX_STARTS = 3
#: Seconds the process gets to write what is queued once its input is closed.
_STOP_TIMEOUT = 10.0
_READ = 1 << 20


class InboxAppender(Passive):
    """The appender process, started on first use (a service: stopped with the server).

    Parameters
    ----------
    journal:
        Where the process journals the locks it holds (the server's own journal dir).
    enabled:
        False: never start it (every append stays in the server's group commit).
    """

    name = "inbox_appender"

    def __init__(self, journal: Path, *, enabled: bool | None = None) -> None:
        super().__init__()
        self.journal = journal
        self.enabled = os.environ.get(ENV, "process") != "thread" if enabled is None else enabled
        self._proc: subprocess.Popen[bytes] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = False
        self._serving = False  # between run() and the stop: the only time it may start
        self._closing = False
        self._starts = 0
        self._seq = 0
        self._boxes: dict[int, int] = {}  # id(mailbox) → its key in the process
        self._keep: list[Mailbox] = []  # the mailboxes defined, so their ids stay theirs
        #: sequence number → its caller's future: True once written, False if handed back
        self._in_flight: dict[int, asyncio.Future[bool]] = {}
        self._out = bytearray()  # lines not yet written to the process
        self._partial = b""
        self._ended = asyncio.Event()  # set when the process's output ends
        self.appended = 0
        self.fallbacks = 0

    # -- the caller's side -------------------------------------------------------------

    async def commit(self, box: Mailbox, to: str, pending: Pending) -> None:
        """Write ``pending`` into ``to``'s inbox of ``box``; return once it is verified
        on disk (raises as :meth:`Mailbox.append` does)."""
        if self._ready:
            future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
            self._seq += 1
            self._in_flight[self._seq] = future
            self._send({"n": self._seq, "box": self._key(box), "to": to,
                        "id": pending.message_id, "entry": pending.entry})  # fmt: skip
            if await future:
                return
        else:  # handed back (the process ended) or not running: the server writes it
            self._start_soon()
        self.fallbacks += 1
        await asyncio.wrap_future(box.commit_later(to, pending))

    def _key(self, box: Mailbox) -> int:
        key = self._boxes.get(id(box))
        if key is None:
            key = self._boxes[id(box)] = len(self._keep)
            self._keep.append(box)
            self._send(mailbox_line(key, box))
        return key

    # -- the process -------------------------------------------------------------------

    def _start_soon(self) -> None:
        if (self._proc is not None or not self._serving or not self.enabled
                or self._starts >= MAX_STARTS):  # fmt: skip
            return
        self._starts += 1
        self._loop = asyncio.get_running_loop()
        argv = [sys.executable, "-I", "-m", "exomonad.teams.append_process",
                "--journal", str(self.journal)]  # fmt: skip
        try:
            self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          close_fds=True)  # fmt: skip
        except OSError as exc:
            log.error("the inbox appender did not start (%s): the server writes its appends", exc)
            self._starts = MAX_STARTS
            return
        assert self._proc.stdin is not None
        assert self._proc.stdout is not None
        os.set_blocking(self._proc.stdin.fileno(), False)
        os.set_blocking(self._proc.stdout.fileno(), False)
        self._loop.add_reader(self._proc.stdout.fileno(), self._readable)
        self._boxes.clear()
        self._keep.clear()
        self._out.clear()
        self._partial = b""
        self._ended = asyncio.Event()

    def _send(self, line: dict[str, Any]) -> None:
        """Queue ``line`` for the process; written at the end of this turn of the loop."""
        if not self._out:
            assert self._loop is not None
            self._loop.call_soon(self._flush)
        self._out += orjson.dumps(line)
        self._out += b"\n"

    def _flush(self) -> None:
        proc, loop = self._proc, self._loop
        if proc is None or proc.stdin is None or loop is None or not self._out:
            return
        fd = proc.stdin.fileno()
        try:
            written = os.write(fd, self._out)
        except BlockingIOError:
            written = 0
        except OSError:  # the process is gone: its output's end tells the rest
            self._out.clear()
            return
        del self._out[:written]
        if self._out:
            loop.add_writer(fd, self._drain)

    def _drain(self) -> None:
        proc, loop = self._proc, self._loop
        if proc is not None and proc.stdin is not None and loop is not None:
            loop.remove_writer(proc.stdin.fileno())
        self._flush()

    def _readable(self) -> None:
        proc = self._proc
        assert proc is not None
        assert proc.stdout is not None
        try:
            data = os.read(proc.stdout.fileno(), _READ)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._lost()
            return
        self._received(data)

    def _received(self, data: bytes) -> None:
        """Take the process's output: whole lines are answers."""
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        for raw in lines:
            try:
                self._answer(orjson.loads(raw))
            except Exception:  # not its protocol: it cannot be trusted with more
                log.exception("the inbox appender said %r: stopping it", raw[:200])
                if self._proc is not None:
                    self._proc.kill()  # its output's end hands what it holds to the server
                return

    def _answer(self, line: dict[str, Any]) -> None:
        if "ready" in line:
            self._ready = not self._closing
            log.info("inbox appender ready (pid %s)", line["ready"])
            return
        seqs = line.get("ok")
        if seqs is not None:
            record_group(len(seqs), float(line["held"]))
            self.appended += len(seqs)
            for seq in seqs:
                done = self._in_flight.pop(seq, None)
                if done is not None and not done.done():
                    done.set_result(True)
            return
        for seq in line["err"]:
            done = self._in_flight.pop(seq, None)
            if done is not None and not done.done():
                done.set_exception(_error(line))

    def _lost(self) -> None:
        """The process ended: recover its locks, hand its appends to the server."""
        proc, loop = self._proc, self._loop
        assert proc is not None
        assert proc.stdout is not None
        assert loop is not None
        loop.remove_reader(proc.stdout.fileno())
        with contextlib.suppress(ValueError, OSError):
            loop.remove_writer(proc.stdin.fileno() if proc.stdin else -1)
        for pipe in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()
        code = proc.wait()
        self._proc, self._ready = None, False
        if not self._closing:
            log.error("the inbox appender ended (exit %s) with %d append(s) in flight",
                      code, len(self._in_flight))  # fmt: skip
        for lock in recover_locks(self.journal):
            log.warning("removed an inbox lock left by the inbox appender: %s", lock)
        in_flight, self._in_flight = self._in_flight, {}
        for future in in_flight.values():  # their callers write them (commit)
            if not future.done():
                future.set_result(False)
        self._ended.set()

    # -- the service -------------------------------------------------------------------

    def on_stop(self) -> None:
        """Nothing here: :meth:`run` closes the process's input and waits for it."""

    async def run(self, ready: asyncio.Event) -> None:
        """Serve (the process starts on first use); when stopped, let the process write
        and answer what it holds, then end it."""
        self._serving = True
        try:
            await super().run(ready)
        finally:
            self._serving = False
            await self._close()

    async def _close(self) -> None:
        self._closing = True
        self._ready = False
        proc, loop = self._proc, self._loop
        if proc is None or loop is None:
            return
        if proc.stdin is not None:
            fd = proc.stdin.fileno()
            loop.remove_writer(fd)
            with contextlib.suppress(OSError):  # gone: its output's end tells the rest
                os.set_blocking(fd, True)  # what is still queued, whole, before the end
                while self._out:
                    del self._out[: os.write(fd, self._out)]
            self._out.clear()
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:  # its output ends once everything is answered (or handed over: _lost)
            await asyncio.wait_for(self._ended.wait(), _STOP_TIMEOUT)
        except TimeoutError:
            log.error("the inbox appender did not finish in %.0f s: killed", _STOP_TIMEOUT)
            proc.kill()
            await asyncio.wait_for(self._ended.wait(), _STOP_TIMEOUT)

    def health(self) -> dict[str, Any]:
        """Whether the process runs, its pid, and the appends it and the server wrote."""
        proc = self._proc
        return {"enabled": self.enabled, "running": self._ready,
                "pid": proc.pid if proc is not None else None, "starts": self._starts,
                "in_flight": len(self._in_flight), "appended": self.appended,
                "by_the_server": self.fallbacks}  # fmt: skip


def _error(line: dict[str, Any]) -> Exception:
    """The exception an ``err`` answer stands for (one per caller)."""
    kind = line.get("kind")
    if kind == "corrupt":
        return CorruptFileError(Path(line["path"]), str(line["reason"]))
    return DeliveryError(str(line.get("message")))
