"""What a fresh interpreter has imported after running some code (start-up cost tests)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence

__all__ = ["imported_after"]


def imported_after(code: str, names: Sequence[str]) -> list[str]:
    """Which of ``names`` are in ``sys.modules`` after ``code`` ran in a new interpreter
    (this one's ``sys.path``)."""
    script = f"import sys\n{code}\nprint(*(m for m in {tuple(names)!r} if m in sys.modules))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.split()
