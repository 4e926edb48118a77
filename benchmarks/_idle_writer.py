"""A writer process for ``watch_cpu``: idle notifications to many members on a schedule.

Usage: ``python benchmarks/_idle_writer.py ROOT TEAM PERIOD_S CYCLES MEMBER...``

Prints ``ready``, waits for a line on stdin, then sends each member one
``idle_notification`` (from ``claude-helper``) per period, the members' phases spread
evenly over the period, ``CYCLES`` times, with ``Mailbox(durable=False).send`` (Claude
Code's write does not fsync either). Prints one JSON line at the end: ``sent``,
``late`` (sends that started more than 50 ms after their slot) and ``send_ms``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import orjson

from exomonad.teams import Mailbox, TeamPaths
from exomonad.teams.models import now_iso
from exomonad.teams.protocol import IdleNotification, encode


def main(argv: list[str]) -> int:
    """Send on schedule; print the summary."""
    root, team, members = Path(argv[1]), argv[2], argv[5:]
    period, cycles = float(argv[3]), int(argv[4])
    mailbox = Mailbox(TeamPaths(team, root), durable=False)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.readline()
    sent = late = 0
    send_ms: list[float] = []
    start = time.monotonic()
    for n in range(cycles):
        for k, member in enumerate(members):
            slot = start + n * period + k * period / len(members)
            pause = slot - time.monotonic()
            if pause > 0:
                time.sleep(pause)  # pacing to the schedule
            elif pause < -0.05:
                late += 1
            note = IdleNotification(
                from_="claude-helper",
                timestamp=now_iso(),
                idle_reason="available",
                summary=f"cycle {n}",
            )
            t0 = time.perf_counter()
            mailbox.send(member, sender="claude-helper", text=encode(note), check_member=False)
            send_ms.append((time.perf_counter() - t0) * 1000)
            sent += 1
    sys.stdout.write(orjson.dumps({"sent": sent, "late": late, "send_ms": send_ms}).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
