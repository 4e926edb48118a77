"""What ``/proc`` says of a process: is it running, its name, parent, group and command
line. (Standard library only: the hook client asks on every start.)"""

from __future__ import annotations

import os

__all__ = ["pid_alive", "proc_argv", "proc_stat"]


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs: it exists and is no zombie (exited, not yet reaped
    by its parent, e.g. tmux). Another user's process counts as running.

    >>> pid_alive(os.getpid())
    True
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    found = proc_stat(pid)
    return found is None or found[1] != "Z"  # unreadable: it exists, so count it running


def proc_stat(pid: int) -> tuple[str, str, int, int] | None:
    """``(comm, state, ppid, pgid)`` from ``/proc/<pid>/stat``, or None if it is gone or
    unreadable. The name is taken between the first ``(`` and the last ``)``: it may hold
    either.

    >>> proc_stat(os.getpid())[2:] == (os.getppid(), os.getpgid(0))
    True
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read().decode("utf-8", "replace")
        fields = raw[raw.rindex(")") + 2 :].split()
        return raw[raw.index("(") + 1 : raw.rindex(")")], fields[0], int(fields[1]), int(fields[2])
    except (OSError, ValueError, IndexError):
        return None


def proc_argv(pid: int) -> tuple[str, ...] | None:
    """``/proc/<pid>/cmdline`` as arguments, or None if the process is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    return tuple(a.decode("utf-8", "replace") for a in raw.split(b"\0") if a)
