"""A private tmux server and a pane running a real CLI, shared by `claude_cli` and
`gemini_cli` (each subclasses `Tmux` and `TmuxPane` with its own defaults).

* `Tmux`: its own server (`tmux -L <prefix>-<hex>`), resolved lazily so fixtures can
  build one before the test reports a setup problem; `kill()` ends the server, unlinks
  the socket file tmux leaves behind and makes sure the pane programs are gone.
* `TmuxPane`: capture-pane / send-keys / typing a message / polling the screen until a
  condition holds, failing fast (`PaneError` with the screen) on a blocking dialog or a
  dead pane.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Generic, Self, TypeVar

from tests.e2e.harness import pid_alive
from tests.support.tmux import kill_server, run_tmux


def tmux_problem(hint: str) -> str | None:
    """None when tmux is on PATH, else what is missing and `hint` (how to fix it)."""
    return None if shutil.which("tmux") else f"`tmux` is not installed: {hint}"


def tmux_binary(hint: str, error: type[Exception] = RuntimeError) -> str:
    """The tmux on PATH; raises `error` (saying `hint`, how to fix it) if there is none."""
    tmux = shutil.which("tmux")
    if tmux is None:
        raise error(f"`tmux` is not installed: {hint}")
    return tmux


class Tmux:
    """A private tmux server (`tmux -L <socket_prefix>-<hex>`); `kill()` ends it."""

    socket_prefix: ClassVar[str] = "exo-e2e"
    default_width: ClassVar[int] = 160
    #: `set-option -g` pairs applied when a session starts (after remain-on-exit and
    #: history-limit).
    global_options: ClassVar[tuple[tuple[str, str], ...]] = ()

    def __init__(self, socket: str | None = None, *, env: Mapping[str, str] | None = None) -> None:
        self._tmux: str | None = None  # resolved lazily: fixtures never fail early
        self.socket = socket or f"{self.socket_prefix}-{secrets.token_hex(4)}"
        self._pane_pids: list[int] = []
        # The env of the tmux client that starts the server becomes the server's
        # (global) environment; None: the caller's.
        self.env = dict(env) if env is not None else self.default_env()

    def default_env(self) -> dict[str, str] | None:
        return None

    def require_tmux(self) -> str:
        """The tmux binary; raises (a RuntimeError saying how to fix it) if missing."""
        return tmux_binary("install it (`make setup`)")

    def run(self, *args: str, check: bool = True, timeout: float = 15.0) -> str:
        if self._tmux is None:
            self._tmux = self.require_tmux()
        proc = run_tmux(self.socket, *args, tmux=self._tmux, env=self.env, timeout=timeout)
        if check and proc.returncode != 0:
            raise RuntimeError(
                f"tmux {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}"
            )
        return proc.stdout

    def new_session(
        self,
        name: str,
        command: str,
        *,
        cwd: Path,
        width: int | None = None,
        height: int = 50,
        env: Mapping[str, str] | None = None,
    ) -> tuple[str, int]:
        """Start `command` (a shell string) in a new detached session; (pane_id, pane_pid).

        `env` becomes the session's environment (`new-session -e`), which panes split
        in that session inherit. remain-on-exit is set globally in the same tmux
        invocation, so a pane whose program dies stays readable for diagnostics.
        """
        session_env = [a for k, v in sorted((env or {}).items()) for a in ("-e", f"{k}={v}")]
        options = [a for k, v in self.global_options for a in ("set-option", "-g", k, v, ";")]
        out = self.run(
            "-f", "/dev/null",
            "start-server", ";",
            "set-option", "-g", "remain-on-exit", "on", ";",
            "set-option", "-g", "history-limit", "5000", ";",
            *options,
            "new-session", "-d", "-s", name,
            "-x", str(width or self.default_width), "-y", str(height),
            *session_env,
            "-c", str(cwd), "-P", "-F", "#{pane_id} #{pane_pid}", command,
        )  # fmt: skip
        pane_id, pid = out.split()
        self._pane_pids.append(int(pid))
        return pane_id, int(pid)

    def panes(self) -> list[dict[str, str]]:
        """Every pane of the server: id, pid, command, title, dead flag."""
        fmt = "#{pane_id}\t#{pane_pid}\t#{pane_current_command}\t#{pane_dead}\t#{pane_title}"
        out = self.run("list-panes", "-a", "-F", fmt, check=False)
        rows = []
        for line in out.splitlines():
            parts = line.split("\t")
            if len(parts) == 5:
                keys = ("id", "pid", "command", "dead", "title")
                rows.append(dict(zip(keys, parts, strict=True)))
        return rows

    def kill(self) -> None:
        if self._tmux is None and not self._pane_pids:
            return  # never started a server
        pids = list(self._pane_pids) + [int(p["pid"]) for p in self.panes() if p["pid"].isdigit()]
        kill_server(self.socket, tmux=self._tmux or self.require_tmux(), env=self.env)
        # Pane programs get SIGHUP from the dying server; make sure ours are gone.
        deadline = time.monotonic() + 5
        for pid in dict.fromkeys(pids):
            while pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if pid_alive(pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)
        self._pane_pids.clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


class PaneError(AssertionError):
    """The pane did not reach the expected state; the message carries its screen."""


def squash(text: str) -> str:
    """`text` without whitespace or box-drawing borders (an input box wraps lines)."""
    return "".join(ch for ch in text if not ch.isspace() and ch not in "│┃")


HomeT = TypeVar("HomeT")


@dataclass
class TmuxPane(Generic[HomeT]):
    """A CLI running in a pane of `tmux`; subclasses say which CLI and when it is ready."""

    tmux: Tmux
    pane_id: str
    pane_pid: int
    home: HomeT
    started_at: float  # time.monotonic() at launch
    ready_after: float | None = None  # seconds from launch to the input prompt

    program: ClassVar[str] = "the CLI"  # for messages
    #: Screens that block the prompt: marker -> what is wrong and how to fix it.
    blocking_dialogs: ClassVar[Mapping[str, str]] = {}
    enter_delay: ClassVar[float] = 0.3  # type_message's pause before the Enter

    def is_ready(self, screen: str) -> bool:
        """The input prompt shows and accepts input."""
        raise NotImplementedError

    def capture(self, *, history: bool = False) -> str:
        args = ["capture-pane", "-p", "-J", "-t", self.pane_id]
        if history:
            args += ["-S", "-"]
        return self.tmux.run(*args, check=False)

    def is_dead(self) -> bool:
        out = self.tmux.run(
            "display-message", "-p", "-t", self.pane_id, "#{pane_dead}", check=False
        )
        return out.strip() in ("1", "")

    def send_literal(self, text: str) -> None:
        self.tmux.run("send-keys", "-t", self.pane_id, "-l", text)

    def send_key(self, *keys: str) -> None:
        self.tmux.run("send-keys", "-t", self.pane_id, *keys)

    def type_message(
        self,
        text: str,
        *,
        enter_delay: float | None = None,
        confirm_echo: bool = True,
        echo_timeout: float = 30.0,
    ) -> float:
        """Type `text` (`send-keys -l`), wait until the pane shows it, pause
        (`enter_delay`, default the class's), press Enter; returns time.monotonic() of
        the Enter. One line only; avoid a leading `/`, `!`, `#`, `@`.

        Waiting for the echo matters: text and Enter read in one chunk are taken as a
        paste, and the Enter then becomes a newline in the input box.
        """
        if "\n" in text or "\r" in text:
            raise ValueError("type_message sends one line; newlines would press Enter")
        self.send_literal(text)
        if confirm_echo:
            needle = squash(text)[-40:]
            self.wait_for(
                lambda s: needle in squash(s), echo_timeout, what=f"the typed text {text!r}"
            )
        time.sleep(self.enter_delay if enter_delay is None else enter_delay)
        self.send_key("Enter")
        return time.monotonic()

    def wait_for(
        self, condition: Callable[[str], bool], timeout: float, *, what: str, poll: float = 0.2
    ) -> str:
        """Poll capture-pane until `condition(screen)`; PaneError with the screen if not."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.capture()
            if condition(screen):
                return screen
            for marker, hint in self.blocking_dialogs.items():
                if marker in screen:
                    raise PaneError(
                        f"{self.program} shows a blocking {hint}\n--- pane ---\n{screen}"
                    )
            if self.is_dead():
                raise PaneError(
                    f"{self.program} exited while waiting for {what}\n"
                    f"--- pane ---\n{self.capture(history=True)}"
                )
            if time.monotonic() >= deadline:
                raise PaneError(
                    f"timed out after {timeout:.0f}s waiting for {what}\n--- pane ---\n{screen}"
                )
            time.sleep(poll)

    def wait_for_text(self, needle: str, timeout: float = 30.0) -> str:
        return self.wait_for(lambda s: needle in s, timeout, what=repr(needle))

    def wait_until_ready(self, timeout: float = 60.0) -> float:
        """Wait for the input prompt; returns seconds since launch."""
        self.wait_for(self.is_ready, timeout, what="the input prompt")
        self.ready_after = time.monotonic() - self.started_at
        return self.ready_after


__all__ = ["PaneError", "Tmux", "TmuxPane", "squash", "tmux_binary", "tmux_problem"]
