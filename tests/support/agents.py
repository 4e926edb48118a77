"""Processes that stand for an agent's (or a person's) in ancestry checks.

``exec -a NAME`` makes a process show NAME as its program, as Gemini CLI or Claude Code
would; ``EXOMONAD_TOKEN`` in its environment is an agent identity.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from exomonad.util.waiting import retry_until

__all__ = ["below", "proc_children", "stand_ins"]


@contextmanager
def stand_ins() -> Iterator[dict[str, subprocess.Popen[bytes]]]:
    """Sleeping processes by kind: ``gemini`` (an agent), ``lead`` (the lead's Claude
    Code: an agent too, not a person), ``token`` (a worker's token in its environment)
    and ``plain`` (a child of this process, a person's); killed on exit."""
    procs = {
        "gemini": subprocess.Popen(["bash", "-c", "exec -a gemini sleep 120"]),
        "lead": subprocess.Popen(["bash", "-c", "exec -a claude sleep 120"]),
        "token": subprocess.Popen(["sleep", "120"], env={**os.environ, "EXOMONAD_TOKEN": "x"}),
        "plain": subprocess.Popen(["sleep", "120"]),
    }
    try:
        for name, program in (("gemini", b"gemini"), ("lead", b"claude")):
            cmdline = Path(f"/proc/{procs[name].pid}/cmdline")
            retry_until(lambda f=cmdline, p=program: f.read_bytes().startswith(p),  # type: ignore[misc]
                        timeout=30, message=f"bash exec'd {program!r}")  # fmt: skip
        yield procs
    finally:
        for proc in procs.values():
            proc.kill()
            proc.wait()


def below(parents: Sequence[str], argv: Sequence[str]) -> list[str]:
    """A command that runs ``argv`` as the child of a bash whose argv is ``parents``
    (``exec -a``; none: a plain bash); ``; exit`` keeps each bash from exec-ing its
    last command, so the parent stays between."""
    inner = f"{shlex.join(argv)}; exit $?"
    if not parents:
        return ["bash", "-c", inner]
    outer = f"exec -a {parents[0]} bash -c {shlex.quote(inner)} {shlex.join(parents)}"
    return ["bash", "-c", outer]


def proc_children(pid: int) -> list[int]:
    """The pids of ``pid``'s children (none once it is gone)."""
    try:
        raw = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in raw.split()]
