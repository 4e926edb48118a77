"""A timing reader for pane benchmarks: records when each typed line arrived.

Usage: ``python benchmarks/_pane_reader.py OUT.jsonl``

Like ``tests/support/reader.py`` (no canonical mode, no kernel echo, CR becomes LF, every
character echoed so the pane visibly changes), plus wall-clock times. Records, one JSON
object per line in OUT.jsonl:

* ``{"event": "ready"}`` once the terminal is set up;
* ``{"line": "...", "t_first": T1, "t_end": T2}`` per line: ``T1`` is when the read that
  brought the line's first character returned, ``T2`` when its newline (the Enter)
  arrived, both ``time.time()``.
"""

from __future__ import annotations

import codecs
import json
import os
import sys
import termios
import time


def main(argv: list[str]) -> int:
    """Record lines until stdin closes."""
    out = open(argv[1], "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the process

    def record(obj: dict[str, object]) -> None:
        out.write(json.dumps(obj) + "\n")
        out.flush()

    attrs = termios.tcgetattr(0)
    attrs[3] &= ~(termios.ICANON | termios.ECHO)
    attrs[3] |= termios.ISIG
    attrs[6][termios.VMIN] = 1
    attrs[6][termios.VTIME] = 0
    termios.tcsetattr(0, termios.TCSANOW, attrs)

    decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
    record({"event": "ready"})
    os.write(1, b"ready> ")
    line: list[str] = []
    first: float | None = None
    while True:
        data = os.read(0, 65536)
        now = time.time()
        if not data:
            return 0
        echo: list[str] = []
        for ch in decoder.decode(data):
            if ch == "\n":
                if echo:
                    os.write(1, "".join(echo).encode("utf-8", "surrogateescape"))
                    echo.clear()
                record({"line": "".join(line), "t_first": first or now, "t_end": now})
                line.clear()
                first = None
                os.write(1, b"\r\n> ")
            else:
                if first is None:
                    first = now
                line.append(ch)
                echo.append(ch)
        if echo:
            os.write(1, "".join(echo).encode("utf-8", "surrogateescape"))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
