"""The pty backend: panes are pseudo-terminals this process owns (:class:`PtyAgent`).

``exomonad teammate`` runs its agent (Gemini CLI) on a pty of its own, mirrored into the
pane Claude Code gave it, and delivers the agent's inbox through this backend: the same
algorithm as tmux and Zellij (:class:`~exomonad.panes.base.KeystrokeBackend`: spool,
type, wait for the echo, ``EXOMONAD_ENTER_DELAY``, Enter, confirm and retry), over these
primitives:

===============  ===============================================================
pane id          the pty's device, e.g. ``/dev/pts/7`` (what ``tty`` prints in it)
exists           a pty this backend started (or adopted) whose program still runs
type / Enter     bytes written to the pty's master (no bracketed paste)
snapshot         the count of bytes the program has written (any output is a change)
echo             the end of the typed text in the output written since typing
capture          the program's recent output, escape sequences removed (a log)
lock             a lock per pty in this process: only its owner can type into it
===============  ===============================================================

>>> import sys
>>> backend = PtyBackend(enter_delay=0)
>>> pane = backend.spawn([sys.executable, "-c", "input('> '); print('got it')"])
>>> pane.startswith("/dev/pts/"), backend.exists(pane)
(True, True)
>>> backend.deliver(pane, "hello").submitted
True
>>> backend.kill(pane)
>>> backend.exists(pane)
False
"""

from __future__ import annotations

import os
import threading
from collections.abc import Hashable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Unpack

from exomonad.errors import PaneError
from exomonad.panes.base import Command, DeliveryOptions, KeystrokeBackend, check_command, check_env
from exomonad.panes.pty_agent import PtyAgent

__all__ = ["PtyBackend"]


class PtyBackend(KeystrokeBackend):
    """:class:`~exomonad.panes.contract.PaneBackend` over ptys this process owns.

    Args:
        mirror: agents this backend spawns mirror their pty into our terminal (the
            teammate's pane shows its one agent); else nobody but ExoMonad types.

    The delivery options are those of :class:`~exomonad.panes.tmux.TmuxBackend`
    (``enter_delay`` from ``$EXOMONAD_ENTER_DELAY`` unless given); ``lock_dir`` is not
    used, the lock being this process's own.
    """

    def __init__(self, *, mirror: bool = False, **options: Unpack[DeliveryOptions]) -> None:
        super().__init__(**options)
        self.mirror = mirror
        self._agents: dict[str, PtyAgent] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._state = threading.Lock()

    def __repr__(self) -> str:
        return f"PtyBackend(panes={self.panes()!r})"

    def add(self, agent: PtyAgent) -> str:
        """Serve an agent started elsewhere; return its pane id (its pty's device)."""
        if not agent.tty:
            raise PaneError("the agent has not been started: it has no pty yet")
        with self._state:
            self._agents[agent.tty] = agent
            self._locks.setdefault(agent.tty, threading.Lock())
        return agent.tty

    def panes(self) -> list[str]:
        """The ptys this backend serves (live or dead, until :meth:`kill`)."""
        with self._state:
            return sorted(self._agents)

    def agent(self, pane: str) -> PtyAgent:
        """The agent on ``pane`` (``PaneError`` if this backend has no such pty)."""
        with self._state:
            found = self._agents.get(pane)
        if found is None:
            raise PaneError(f"pane {pane!r} is not a pty this process owns")
        return found

    # -- primitives ----------------------------------------------------------------------

    def _locate(self, pane: str) -> tuple[str, str | None]:
        if not self.agent(pane).alive():
            return pane, "is dead: its program has exited"
        return pane, None

    def _lock_key(self, pane: str) -> str:  # names the pty; the lock itself is in-process
        return f"pty:{os.getpid()}:{pane}"

    def _lock(self, pane: str) -> AbstractContextManager[float]:
        with self._state:
            lock = self._locks.setdefault(pane, threading.Lock())

        @contextmanager
        def held() -> Iterator[float]:
            if not lock.acquire(timeout=self.lock_timeout):
                raise PaneError(f"pane {pane!r} stayed locked by another delivery for "
                                f"{self.lock_timeout:.0f}s")  # fmt: skip
            try:
                yield 0.0
            finally:
                lock.release()

        return held()

    def _write(self, pane: str, data: bytes) -> None:
        try:
            self.agent(pane).write(data)
        except OSError as exc:
            raise PaneError(f"pane {pane!r} takes no input: {exc}") from exc

    def _type(self, pane: str, line: str) -> None:
        self._write(pane, line.encode("utf-8"))

    def _enter(self, pane: str) -> None:
        self._write(pane, b"\r")

    def _snapshot(self, pane: str) -> int:
        return self.agent(pane).output_bytes

    def _await_echo(self, pane: str, before: Hashable, line: str) -> None:
        """Wait (bounded) for the end of ``line`` in what the program wrote since typing:
        text it echoed earlier does not count."""
        after = before if isinstance(before, int) else 0
        self.agent(pane).wait_for_echo(line, after, self.echo_timeout)

    # -- the rest of the contract --------------------------------------------------------

    def capture(self, pane: str) -> str:
        """The program's recent output without escape sequences (see the module doc)."""
        return self.agent(pane).screen().rstrip("\n")

    def spawn(
        self,
        command: Command,
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        name: str | None = None,
        target: str | None = None,
    ) -> str:
        """Start ``command`` on a new pty and return its id (``/dev/pts/N``).

        Args:
            command: a shell command line (run by ``/bin/sh -c``), or an argv list.
            cwd: its working directory (default: ours).
            env: variables added to our environment for it.
            name: unused (a pty has no title).
            target: must be ``None``: a pty belongs to no session or window.
        """
        if target is not None:
            raise ValueError("a pty has no target to open in")
        checked = check_command(command)
        argv = ["/bin/sh", "-c", checked] if isinstance(checked, str) else checked
        agent = PtyAgent(argv, env={**os.environ, **check_env(env)},
                         cwd=os.fspath(cwd) if cwd is not None else None,
                         mirror=self.mirror)  # fmt: skip
        agent.start()
        return self.add(agent)

    def kill(self, pane: str) -> None:
        """End the program on ``pane`` (SIGTERM, then SIGKILL) and release its pty."""
        agent = self.agent(pane)
        agent.terminate()
        agent.wait()
        agent.close()
        with self._state:
            self._agents.pop(pane, None)
            self._locks.pop(pane, None)
