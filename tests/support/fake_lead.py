"""A stand-in headless lead: records every stdin line (stream-json turns) to a file.

Usage: ``python fake_lead.py OUT.jsonl``. Exits with status 3 on a turn containing QUIT.
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    """Record turns until QUIT or EOF."""
    with open(sys.argv[1], "a", encoding="utf-8") as out:
        for line in sys.stdin:
            out.write(line if line.endswith("\n") else line + "\n")
            out.flush()
            sys.stdout.write(json.dumps({"type": "ack"}) + "\n")
            sys.stdout.flush()
            if "QUIT" in line:
                return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
