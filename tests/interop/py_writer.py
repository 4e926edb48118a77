"""A Python writer process: ``Mailbox.send`` N times, then print a JSON summary.

Run by path::

    python tests/interop/py_writer.py --root R --team T --to M --sender S --count N
        [--dialect 2.1.330] [--no-durable] [--wait] [--prefix P]
        [--delay-ms D] [--offset-ms D] [--lock-min-ms D]

Texts are ``<prefix>#<i>``. With ``--wait`` it prints ``ready`` and starts on a line from
stdin. Prints ``{"written", "failures", "failed", "errors", "latencies_ms"}``; a failure
is an :class:`~exomonad.errors.ExomonadError` from ``send`` (the library never drops a
message silently).
"""

from __future__ import annotations

import argparse
import sys
import time

import orjson

from exomonad.errors import ExomonadError
from exomonad.teams import DEFAULT_LOCK, LockSettings, Mailbox, TeamPaths, get_dialect


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, send, print the summary."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--root", required=True)
    ap.add_argument("--team", required=True)
    ap.add_argument("--to", required=True)
    ap.add_argument("--sender", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--dialect", default="2.1.330")
    ap.add_argument("--no-durable", action="store_true")
    ap.add_argument("--wait", action="store_true")
    ap.add_argument("--prefix")
    ap.add_argument("--delay-ms", type=float, default=0.0, help="pause after each message")
    ap.add_argument("--offset-ms", type=float, default=0.0, help="pause before the first one")
    ap.add_argument(
        "--lock-min-ms",
        type=float,
        help="first lock retry wait (default: the library's DEFAULT_LOCK); the total "
        "budget stays about the same",
    )
    args = ap.parse_args(argv)

    lock = DEFAULT_LOCK
    if args.lock_min_ms is not None:
        lock = LockSettings(retries=40, min_timeout=args.lock_min_ms / 1000, max_timeout=0.1)
    mailbox = Mailbox(
        TeamPaths(args.team, args.root),
        dialect=get_dialect(args.dialect),
        durable=not args.no_durable,
        lock=lock,
    )
    prefix = args.prefix or args.sender
    if args.wait:
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        sys.stdin.readline()
    if args.offset_ms > 0:
        time.sleep(args.offset_ms / 1000)
    latencies: list[float] = []
    failed: list[int] = []
    errors: list[str] = []
    for i in range(args.count):
        t0 = time.perf_counter()
        try:
            mailbox.send(args.to, sender=args.sender, text=f"{prefix}#{i}")
        except ExomonadError as exc:
            failed.append(i)
            errors.append(f"{type(exc).__name__}: {exc}")
            continue
        latencies.append((time.perf_counter() - t0) * 1000)
        if args.delay_ms > 0:
            time.sleep(args.delay_ms / 1000)
    summary = {
        "written": len(latencies),
        "failures": len(failed),
        "failed": failed,
        "errors": errors[:5],
        "latencies_ms": latencies,
    }
    sys.stdout.write(orjson.dumps(summary).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
