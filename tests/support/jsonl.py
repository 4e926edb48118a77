"""Read a JSON-lines file another process is still appending to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson


def whole_records(path: Path) -> list[Any]:
    """The records of the file's finished lines: a last line still being written is left
    out (a reader polling mid-write must not mistake it for a broken record), while any
    finished line that is not JSON still raises, as interleaved writes would."""
    if not path.exists():
        return []
    data = path.read_bytes()
    finished = data[: data.rfind(b"\n") + 1]
    return [orjson.loads(x) for x in finished.splitlines() if x.strip()]
