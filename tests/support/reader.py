"""A stand-in agent for pane tests: reads typed lines and records them exactly.

Usage: ``python reader.py OUT.jsonl``

The terminal is put in a raw-ish mode: no canonical line editing (so no 4 KiB line limit
and no kernel handling of ^U/^W/DEL), no kernel echo, but signals stay on (ISIG) and CR
still becomes LF (ICRNL), like a line-oriented TUI. Every received character is echoed
*raw* to the terminal, so a leaked escape sequence really would recolour the screen, and
a leaked ^C really would raise SIGINT. Records, one JSON object per line in OUT.jsonl:

* ``{"event": "ready", "cwd": ...}`` once the terminal is set up (where it runs);
* ``{"line": "...", "t_first": T1, "t_end": T2}`` for every line received (exact text,
  any control chars included); ``T1`` is when the read that brought its first character
  returned, ``T2`` when its newline (the Enter) arrived, both ``time.time()`` (the
  benchmarks time deliveries with these);
* ``{"signal": "SIGINT"}`` (or SIGQUIT / SIGTSTP) when a signal key reached the tty.
"""

from __future__ import annotations

import codecs
import json
import os
import signal
import sys
import termios
import time
from types import FrameType


def main(argv: list[str]) -> int:
    """Run the reader until stdin closes."""
    out = open(argv[1], "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the process

    def record(obj: dict[str, object]) -> None:
        out.write(json.dumps(obj) + "\n")
        out.flush()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        record({"signal": signal.Signals(signum).name})

    for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGTSTP):
        signal.signal(sig, on_signal)

    attrs = termios.tcgetattr(0)
    attrs[3] &= ~(termios.ICANON | termios.ECHO)
    attrs[3] |= termios.ISIG
    attrs[6][termios.VMIN] = 1
    attrs[6][termios.VTIME] = 0
    termios.tcsetattr(0, termios.TCSANOW, attrs)

    decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
    record({"event": "ready", "cwd": os.getcwd()})
    os.write(1, b"ready> ")
    line: list[str] = []
    first: float | None = None
    while True:
        data = os.read(0, 65536)
        if not data:
            return 0
        now = time.time()
        for ch in decoder.decode(data):
            if ch == "\n":
                record({"line": "".join(line), "t_first": first or now, "t_end": now})
                line.clear()
                first = None
                os.write(1, b"\r\n> ")
            else:
                if first is None:
                    first = now
                line.append(ch)
                os.write(1, ch.encode("utf-8", "surrogateescape"))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
