"""Decide what is typed into a pane, and park long or multi-line messages in files.

Typing is a poor channel for long text (TUIs slow down, tty line buffers overflow at 4 KiB)
and cannot carry a newline (it would press Enter). So :meth:`Spool.prepare` sanitises the
message and then either types it as one line, or, when it is multi-line or longer than
``threshold`` characters, writes the full text to a file in the spool directory and types a
one-line pointer instead::

    [exomonad] message from team-lead is in /run/user/1000/exomonad/spool/....md — read it

The spool directory is, in order: the ``directory`` argument, ``$EXOMONAD_SPOOL_DIR``,
``$XDG_RUNTIME_DIR/exomonad/spool``, ``/tmp/exomonad-<uid>/spool``. Agents that may only
read inside their workspace should be given a spool directory there. A message for a
member of a team goes to that member's own directory below it (:func:`recipient_dir`),
the only part of the spool the policy lets an agent other than the lead read.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from exomonad.panes.locking import private_dir, runtime_dir
from exomonad.panes.sanitize import sanitize

__all__ = [
    "DEFAULT_SPOOL_THRESHOLD",
    "SPOOL_DIR_ENV",
    "Outgoing",
    "Spool",
    "default_spool_dir",
    "recipient_dir",
]

SPOOL_DIR_ENV = "EXOMONAD_SPOOL_DIR"
"""Environment variable overriding the default spool directory."""

DEFAULT_SPOOL_THRESHOLD = 4000
"""Single-line messages longer than this many characters go through a spool file."""

_SLUG = re.compile(r"[^A-Za-z0-9_-]+")


def default_spool_dir() -> Path:
    """``$EXOMONAD_SPOOL_DIR``, else ``<runtime dir>/spool``."""
    env = os.environ.get(SPOOL_DIR_ENV)
    return Path(env) if env else runtime_dir() / "spool"


def recipient_dir(root: str | os.PathLike[str], team: str, member: str) -> Path:
    """Where messages for ``member`` of ``team`` are spooled: a directory of its own below
    the spool ``root``, each name percent-encoded (no two names share one, none climbs).

    >>> str(recipient_dir("/s", "my team", "w.1"))
    '/s/my%20team/w.1'
    """
    parts = [quote(name, safe="") for name in (team, member)]
    if any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"no spool directory for team {team!r}, member {member!r}")
    return Path(root, *parts)


@dataclass(frozen=True, slots=True)
class Outgoing:
    """What to type for one message.

    Attributes:
        line: the exact single line to type (sanitised, no newline, never empty).
        spool_path: the file holding the full message, when ``line`` is a pointer to it.
    """

    line: str
    spool_path: Path | None = None


class Spool:
    """Turns message text into an :class:`Outgoing` line, spooling when needed.

    Args:
        directory: where spool files go (see module docstring for the default).
        threshold: longest single line, in characters, that is typed directly.

    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> spool = Spool(tmp.name, threshold=10)
    >>> spool.prepare("hi \\x1b[1mthere").line
    'hi there'
    >>> out = spool.prepare("line one\\nline two", sender="lead")
    >>> out.line.startswith("[exomonad] message from lead is in "), out.line.endswith("read it")
    (True, True)
    >>> out.spool_path.read_text(encoding="utf-8")
    'line one\\nline two'
    >>> tmp.cleanup()
    """

    def __init__(
        self, directory: str | os.PathLike[str] | None = None, *, threshold: int | None = None
    ) -> None:
        self.directory = Path(directory) if directory is not None else default_spool_dir()
        self.threshold = DEFAULT_SPOOL_THRESHOLD if threshold is None else threshold
        if self.threshold < 1:
            raise ValueError("spool threshold must be at least 1 character")

    def prepare(self, text: str, *, sender: str | None = None,
                to: tuple[str, str] | None = None) -> Outgoing:  # fmt: skip
        """Sanitise ``text``; return it as one line, or spool it and return a pointer.
        ``to``: the recipient's team and name, when known (see :meth:`write`).

        Leading and trailing line ends are dropped first, so ``"hi\\n"`` is typed as ``hi``.

        Raises:
            ValueError: nothing printable is left to deliver.
        """
        body = sanitize(text).strip("\n")
        if not body:
            raise ValueError("message is empty after sanitising; nothing to deliver")
        if "\n" not in body and len(body) <= self.threshold:
            return Outgoing(line=body)
        path = self.write(text, sender=sender, to=to)
        return Outgoing(line=self.pointer(path, sender=sender), spool_path=path)

    def write(self, text: str, *, sender: str | None = None,
              to: tuple[str, str] | None = None) -> Path:  # fmt: skip
        """Write ``text`` to a new spool file (atomically) and return its path.

        The file holds the message with control/escape sequences removed but line ends
        and tabs kept: it is read, never typed. ``to`` (team, member): the file goes to
        that recipient's directory (:func:`recipient_dir`), the one the policy lets it
        read; without it, to the spool directory itself, which only the lead reads.
        """
        base = recipient_dir(self.directory, *to) if to is not None else self.directory
        directory = private_dir(base)
        who = _SLUG.sub("-", sender or "message").strip("-")[:40] or "message"
        name = f"{time.strftime('%Y%m%dT%H%M%S')}-{who}-{uuid.uuid4().hex[:8]}.md"
        path = directory / name
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".md")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(sanitize(text, tab="\t"))
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    @staticmethod
    def pointer(path: Path, *, sender: str | None = None) -> str:
        """The one line typed in place of a spooled message."""
        what = f"message from {sender}" if sender else "a message"
        return sanitize(f"[exomonad] {what} is in {path} — read it", keep_newlines=False)
