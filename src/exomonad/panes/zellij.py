"""The Zellij backend, over Zellij's documented CLI (``zellij action ...``).

Written against the Zellij 0.44 CLI reference, which added ``--pane-id`` targeting:

========================  ====================================================
typing                    ``zellij action write-chars --pane-id P -- TEXT``
Enter                     ``zellij action write --pane-id P 13``
capture / confirmation    ``zellij action dump-screen --pane-id P --path FILE``
exists / dead             ``zellij action list-panes --json`` (``exited`` field)
spawn                     ``zellij run [--name N] [--cwd D] -- CMD...`` (prints the
                          new pane id); with ``target``: ``zellij action new-pane
                          --tab-id T ...``
kill                      ``zellij action close-pane --pane-id P``
========================  ====================================================

The session is ``--session NAME`` when given, else Zellij's own default (the
``$ZELLIJ_SESSION_NAME`` of the calling process). Pane ids are ``terminal_N`` (a bare
``N`` is accepted); plugin panes are refused. Zellij input modes (locked, scroll, ...)
belong to clients, not panes, and ``write-chars`` goes straight to the pane's pty, so
there is no mode to leave. Environment variables for :meth:`ZellijBackend.spawn` are
set by wrapping the command in ``env K=V ...`` (the CLI has no ``--env``).

**Zellij cannot be installed in the development environment: this backend is tested
only through a recording stand-in executable (``tests/bin/zellij``), never against a
real Zellij.** The zellij program is the ``executable`` argument, else
``$EXOMONAD_ZELLIJ``, else ``zellij`` on ``$PATH``.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Unpack

from exomonad.errors import PaneError
from exomonad.panes.base import (
    Command,
    DeliveryOptions,
    KeystrokeBackend,
    check_command,
    check_env,
    run_cli,
)

__all__ = ["ZELLIJ_ENV", "ZellijBackend", "normalize_pane_id"]

ZELLIJ_ENV = "EXOMONAD_ZELLIJ"
"""Environment variable naming the zellij executable (default: ``zellij``)."""

ZELLIJ_TIMEOUT = 10.0
"""Seconds any single zellij command may take."""

_TERMINAL = re.compile(r"(?:terminal_)?(\d+)")
_REPORTED_ID = re.compile(r"terminal_(\d+)|^\s*(\d+)\s*$")


def normalize_pane_id(pane: str) -> str:
    """``"3"`` or ``"terminal_3"`` -> ``"terminal_3"``; anything else is a ``PaneError``.

    >>> normalize_pane_id("7"), normalize_pane_id("terminal_7")
    ('terminal_7', 'terminal_7')
    """
    match = _TERMINAL.fullmatch(pane.strip())
    if match is None:
        kind = "plugin panes take no typed messages" if pane.startswith("plugin_") else "invalid"
        raise PaneError(f"zellij pane id {pane!r}: {kind}")
    return f"terminal_{match.group(1)}"


class ZellijBackend(KeystrokeBackend):
    """:class:`~exomonad.panes.base.PaneBackend` over the Zellij CLI.

    Args:
        session: Zellij session name (``--session``); ``None`` lets zellij use the
            session it runs in (``$ZELLIJ_SESSION_NAME``).
        executable: the zellij program; ``None`` reads ``$EXOMONAD_ZELLIJ``, else
            ``zellij``.

    The other arguments are those of :class:`~exomonad.panes.tmux.TmuxBackend`.
    """

    def __init__(
        self,
        session: str | None = None,
        *,
        executable: str | None = None,
        **options: Unpack[DeliveryOptions],
    ) -> None:
        super().__init__(**options)
        self.session = session
        self.executable = executable or os.environ.get(ZELLIJ_ENV) or "zellij"

    def __repr__(self) -> str:
        return f"ZellijBackend(session={self.session!r}, executable={self.executable!r})"

    # -- running zellij ------------------------------------------------------------------

    def run(self, *args: str) -> str:
        """Run ``zellij [--session S] ARGS...`` and return its stdout.

        Raises:
            PaneError: zellij is missing, timed out or failed.
        """
        argv = [self.executable]
        if self.session is not None:
            argv += ["--session", self.session]
        what = f"zellij {' '.join(args[:2])}"
        return run_cli([*argv, *args], what=what, timeout=ZELLIJ_TIMEOUT)

    def _session_label(self) -> str:
        return self.session or os.environ.get("ZELLIJ_SESSION_NAME") or "current"

    def list_panes(self) -> list[dict[str, Any]]:
        """The session's panes as ``list-panes --json`` reports them."""
        out = self.run("action", "list-panes", "--json")
        try:
            panes = json.loads(out)
        except json.JSONDecodeError as exc:
            raise PaneError(f"zellij list-panes gave invalid JSON: {exc}") from None
        if not isinstance(panes, list):
            raise PaneError("zellij list-panes did not return a list")
        return [p for p in panes if isinstance(p, dict)]

    def _dump(self, pane: str) -> str:
        fd, name = tempfile.mkstemp(prefix="exomonad-zellij-", suffix=".txt")
        os.close(fd)
        try:
            self.run("action", "dump-screen", "--pane-id", pane, "--path", name)
            return Path(name).read_text(encoding="utf-8", errors="replace")
        finally:
            os.unlink(name)

    # -- primitives ----------------------------------------------------------------------

    def _locate(self, pane: str) -> tuple[str, str | None]:
        canonical = normalize_pane_id(pane)
        number = int(canonical.removeprefix("terminal_"))
        for info in self.list_panes():
            if info.get("is_plugin") or info.get("id") != number:
                continue
            if info.get("exited"):
                status = info.get("exit_status")
                return canonical, f"is dead: its command has exited (status {status})"
            return canonical, None
        raise PaneError(f"pane {pane!r} does not exist in zellij session {self._session_label()}")

    def _lock_key(self, pane: str) -> str:
        return f"zellij:{self._session_label()}:{pane}"

    def _type(self, pane: str, line: str) -> None:
        self.run("action", "write-chars", "--pane-id", pane, "--", line)

    def _enter(self, pane: str) -> None:
        self.run("action", "write", "--pane-id", pane, "13")

    def _snapshot(self, pane: str) -> str:
        return self._dump(pane)

    # -- the rest of the contract --------------------------------------------------------

    def capture(self, pane: str) -> str:
        """Visible text of ``pane`` (trailing blanks dropped)."""
        canonical, _ = self._locate(pane)
        raw = self._dump(canonical)
        return "\n".join(line.rstrip() for line in raw.splitlines()).rstrip("\n")

    def spawn(
        self,
        command: Command,
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        name: str | None = None,
        target: str | None = None,
    ) -> str:
        """Start ``command`` in a new pane; return its ``terminal_N`` id.

        Args:
            command: shell command line (run with ``sh -c``) or argv list.
            cwd: working directory of the new pane.
            env: extra environment variables (via ``env K=V``).
            name: pane name.
            target: tab id to open the pane in; ``None`` uses the current tab.
        """
        checked = check_command(command)
        argv = ["sh", "-c", checked] if isinstance(checked, str) else checked
        variables = check_env(env)
        if variables:
            argv = ["env", *(f"{k}={v}" for k, v in variables.items()), *argv]
        opts: list[str] = []
        if name:
            opts += ["--name", name]
        if cwd is not None:
            opts += ["--cwd", os.fspath(cwd)]
        verb = ["run"] if target is None else ["action", "new-pane", "--tab-id", target]
        out = self.run(*verb, *opts, "--", *argv)
        match = _REPORTED_ID.search(out)
        if match is None:
            raise PaneError(f"zellij did not report the new pane id (needs 0.44+): {out!r}")
        return f"terminal_{match.group(1) or match.group(2)}"

    def kill(self, pane: str) -> None:
        """Close ``pane``. ``PaneError`` if it does not exist."""
        canonical, _ = self._locate(pane)
        self.run("action", "close-pane", "--pane-id", canonical)
