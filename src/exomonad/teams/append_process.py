"""The inbox appender: a process of its own that writes a server's inbox appends.

A server answering many sessions on one event loop shares one interpreter lock with
whatever thread writes its inbox groups; the writer then queues for the lock behind the
loop at every system call of its write (about twenty), and holds Claude Code's inbox
lock several times longer than the write needs (docs/performance.md, issue 14). This
process does those writes with an interpreter of its own: the same group commit
(:meth:`Mailbox.write_group <exomonad.teams.Mailbox.write_group>`, the same pause
between back-to-back groups, :func:`~exomonad.teams.groupcommit.free_after`), single
threaded, answering each group once its entries are verified on disk.

Started by its server (``python -I -m exomonad.teams.append_process --journal DIR``),
it speaks JSON lines (orjson) on stdin and stdout:

* ``{"box": K, "root": R, "team": T, "durable": D, "lock": [...], "attempts": N}``
  defines mailbox ``K`` (a config root, a team, and :class:`Mailbox`'s settings);
* ``{"n": SEQ, "box": K, "to": MEMBER, "id": MESSAGE_ID, "entry": {...}}`` appends one
  entry, stamped already, to ``MEMBER``'s inbox of mailbox ``K``;
* it answers ``{"ready": PID}`` once, then per group either ``{"ok": [SEQ...],
  "held": SECONDS}`` or ``{"err": [SEQ...], "kind": KIND, "message": TEXT}`` with
  ``KIND`` ``corrupt`` (then also ``path`` and ``reason``: the inbox is left as it is)
  or ``delivery`` (what :meth:`Mailbox.append` raises once its attempts are spent).

End of input: the appends queued are written and answered, then it exits. It never
exits on SIGINT (a terminal's Ctrl-C reaches the whole process group; its server stops
it by closing its input). The locks it holds are journalled in ``DIR`` like its
server's (:func:`~exomonad.teams.lockjournal.set_lock_journal`), so a kill mid-write leaves
nothing Claude Code would wait on for 10 s once the server recovers them.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import select
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from exomonad.errors import CorruptFileError
from exomonad.teams.groupcommit import MAX_GROUP, Pending, free_after
from exomonad.teams.inbox_io import close_deferred, defer_closing
from exomonad.teams.lock import LockSettings
from exomonad.teams.lockjournal import set_lock_journal
from exomonad.teams.mailbox import Mailbox
from exomonad.teams.paths import TeamPaths

__all__ = ["Appender", "mailbox_line", "main"]

#: The most bytes read from the input at once.
_READ = 1 << 20
#: The weight of the past in a queue's moving average of its preparation time.
_SMOOTHING = 0.8


def mailbox_line(key: int, box: Mailbox) -> dict[str, Any]:
    """The line that defines mailbox ``key`` as ``box`` (its root, team and settings)."""
    return {
        "box": key,
        "root": str(box.paths.root),
        "team": box.paths.team,
        "durable": box.durable,
        "lock": dataclasses.astuple(box.lock),
        "attempts": box.attempts,
    }


def _mailbox(line: dict[str, Any]) -> Mailbox:
    lock = LockSettings(*line["lock"])
    paths = TeamPaths(str(line["team"]), Path(line["root"]))
    return Mailbox(paths, durable=bool(line["durable"]), lock=lock, attempts=int(line["attempts"]))


@dataclass
class _Queue:
    """The appends waiting for one inbox of one mailbox: ``(seq, pending)``."""

    box: Mailbox
    to: str
    waiting: list[tuple[int, Pending]] = field(default_factory=list)
    #: monotonic time before which the next group does not take the lock.
    free_at: float = 0.0
    #: How long preparing a group's write took lately (seconds, a moving average).
    prepare: float = 0.0

    @property
    def starts_at(self) -> float:
        """When to start the next group: its write is then ready as the pause ends."""
        return self.free_at - self.prepare


class Appender:
    """The group commit over JSON lines: :meth:`feed` input, :meth:`step` writes."""

    def __init__(self, out: int) -> None:
        self.out = out
        self._boxes: dict[int, Mailbox] = {}
        self._queues: dict[tuple[int, str], _Queue] = {}
        self._partial = b""

    def feed(self, data: bytes) -> None:
        """Take input bytes: definitions and appends, whole lines only."""
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        for raw in lines:
            if raw.strip():
                self._line(orjson.loads(raw))

    def _line(self, line: dict[str, Any]) -> None:
        if "n" not in line:
            self._boxes[int(line["box"])] = _mailbox(line)
            return
        key, to = int(line["box"]), str(line["to"])
        queue = self._queues.get((key, to))
        if queue is None:
            queue = self._queues[(key, to)] = _Queue(self._boxes[key], to)
        queue.waiting.append((int(line["n"]), Pending(str(line["id"]), line["entry"])))

    def due(self) -> float | None:
        """Seconds until a queued group is to start (0: now; None: nothing queued)."""
        starts = [q.starts_at for q in self._queues.values() if q.waiting]
        return max(0.0, min(starts) - time.monotonic()) if starts else None

    def step(self) -> None:
        """Write every group that is due (one per inbox) and answer it."""
        now = time.monotonic()
        for queue in list(self._queues.values()):
            if queue.waiting and queue.starts_at <= now:
                self._write(queue)

    def _write(self, queue: _Queue) -> None:
        """Write one group: prepared at once, the lock taken once the pause is over."""
        group, queue.waiting = queue.waiting[:MAX_GROUP], queue.waiting[MAX_GROUP:]
        seqs = [seq for seq, _ in group]
        pending = [p for _, p in group]
        started = time.monotonic()

        def before_lock() -> None:
            now = time.monotonic()
            queue.prepare = _SMOOTHING * queue.prepare + (1 - _SMOOTHING) * (now - started)
            if queue.free_at > now:
                time.sleep(queue.free_at - now)

        held = 0.0
        answer: dict[str, Any]
        try:
            held = queue.box.write_group(queue.to, lambda: pending, before_lock=before_lock)
        except CorruptFileError as exc:
            answer = {"err": seqs, "kind": "corrupt", "path": str(exc.path), "reason": exc.reason}
        except Exception as exc:  # the caller hears it; this process goes on
            answer = {"err": seqs, "kind": "delivery", "message": f"{type(exc).__name__}: {exc}"}
        else:
            answer = {"ok": seqs, "held": held}
        queue.free_at = free_after(held, len(group), bool(queue.waiting))
        self.send(answer)
        close_deferred()  # the files this group replaced, once its callers are answered

    def send(self, line: dict[str, Any]) -> None:
        """Write one answer line (whole, however long)."""
        view = memoryview(orjson.dumps(line) + b"\n")
        while view:
            view = view[os.write(self.out, view) :]


def serve(inp: int, out: int) -> None:
    """Read appends from ``inp`` and answer on ``out`` until ``inp`` ends."""
    appender = Appender(out)
    appender.send({"ready": os.getpid()})
    open_input = True
    while open_input or appender.due() is not None:
        wait = appender.due()
        if open_input:  # what has arrived joins the group due (a poll when it is due now)
            if select.select([inp], [], [], wait)[0]:
                data = os.read(inp, _READ)
                open_input = bool(data)
                appender.feed(data)
        elif wait:
            time.sleep(wait)
        appender.step()


def main(argv: list[str] | None = None) -> None:
    """``python -I -m exomonad.teams.append_process --journal DIR``."""
    ap = argparse.ArgumentParser(prog="exomonad.teams.append_process", description=__doc__)
    ap.add_argument("--journal", type=Path, help="where the locks held are journalled")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if args.journal is not None:
        set_lock_journal(args.journal)
    defer_closing()
    try:
        serve(0, 1)
    except BrokenPipeError:  # the server is gone: nobody to answer
        os._exit(1)


if __name__ == "__main__":
    main()
