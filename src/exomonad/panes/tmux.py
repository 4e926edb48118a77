"""The tmux backend: drives a tmux server with plain ``tmux`` commands.

Two tmux behaviours shape this module (both verified on tmux 3.3a):

* tmux treats a command-line argument that *ends in* ``;`` as a command separator and
  strips the ``;`` (``send-keys -l 'abc;'`` types ``abc``). Every free-form argument we
  pass goes through :func:`tmux_arg`, which turns a final ``;`` into ``\\;`` (tmux turns
  that back into ``;``). Typed text avoids argv altogether in the default mode.
* ``display-message -t`` may not fail on a bad target: ``display-message -t sess:9``
  silently reports the *current* pane. Panes are therefore resolved with
  ``capture-pane -t`` (which does fail) before asking for their state.

Typing method (``method=``):

``"paste-buffer"`` (default)
    ``load-buffer -b NAME -`` (text on stdin) ``; paste-buffer -d -p -b NAME -t PANE`` in
    one tmux call. ``-p`` brackets the text for programs that enabled bracketed paste, so
    TUIs take it literally (no ``!`` shell mode, no ``?`` help in Gemini CLI); Enter is
    pasted unbracketed. Text never passes
    through argv (no ``;`` parsing, no size limit), it is written to the target pane only
    (``send-keys`` is copied to every pane of a window with ``synchronize-panes`` on, so
    Enter is a pasted CR in this mode too), and it costs one tmux call for any length.
``"send-keys"``
    ``send-keys -l -- CHUNK`` per ``chunk_size`` characters (tmux's client message is
    limited to 16 KiB, and a character may take 4 bytes).

Measured on a 2-core VM where one tmux invocation costs ~12 ms (medians of 40, two
runs): the typing step is one tmux call either way (paste-buffer 11.5-16.5 ms, send-keys
10.7-15.6 ms); a short message's ``deliver()``, with the 0.12 s enter delay, until the
line is in the reading program: paste-buffer 166-169 ms, send-keys 174-176 ms. For a
3600-character line (typed + Enter) paste-buffer takes 91 ms and send-keys 111 ms (four
chunks). Equal for short text, better for long text and free of argv pitfalls:
paste-buffer is the default.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Hashable, Mapping
from typing import Literal, NamedTuple, Unpack

from exomonad.errors import PaneError
from exomonad.panes.base import (
    Command,
    DeliveryOptions,
    KeystrokeBackend,
    check_command,
    check_env,
    run_cli,
)
from exomonad.panes.screen import typed_line_pending

__all__ = ["DEFAULT_CHUNK_SIZE", "TmuxBackend", "TypingMethod", "tmux_arg"]

TypingMethod = Literal["paste-buffer", "send-keys"]

DEFAULT_CHUNK_SIZE = 1000
"""Characters per ``send-keys -l`` call (at most 4000 bytes, well under tmux's limit)."""

TMUX_TIMEOUT = 10.0
"""Seconds any single tmux command may take before the pane counts as unresponsive."""

_PANE_ID = re.compile(r"%\d+")
_PROBE = "\t".join(
    [
        "#{pane_id}",
        "#{pane_dead}",
        "#{pane_input_off}",
        "#{pane_in_mode}",
        "#{pane_mode}",
        "#{socket_path}",
    ]
)
_GONE = ("can't find", "no server running", "error connecting", "no current")


def tmux_arg(arg: str) -> str:
    """Protect ``arg`` from tmux's trailing-``;`` command-separator rule.

    >>> tmux_arg("ls;"), tmux_arg("a;b"), tmux_arg(";")
    ('ls\\\\;', 'a;b', '\\\\;')
    """
    return arg[:-1] + "\\;" if arg.endswith(";") else arg


class _Probe(NamedTuple):
    pane_id: str
    dead: bool
    input_off: bool
    in_mode: bool
    mode: str
    socket_path: str


class TmuxBackend(KeystrokeBackend):
    """:class:`~exomonad.panes.base.PaneBackend` over a tmux server.

    Args:
        socket_name: tmux ``-L`` socket name; ``None`` uses the default server (or the
            one in ``$TMUX``).
        executable: the tmux program.
        method: how text is typed, ``"paste-buffer"`` or ``"send-keys"`` (module docs).
        chunk_size: characters per ``send-keys`` call.
        enter_delay: seconds between typing and Enter; ``None`` reads
            ``$EXOMONAD_ENTER_DELAY``, else 0.12.
        submit_timeout: seconds to wait for each Enter to show an effect.
        max_enter_attempts: Enter presses before giving up on confirmation.
        spool_dir: directory for long / multi-line messages (``$EXOMONAD_SPOOL_DIR``).
        spool_threshold: longest line typed directly (default 4000 characters).
        lock_dir: directory of per-pane lock files (``$EXOMONAD_LOCK_DIR``).
        lock_timeout: seconds to wait for a concurrent delivery to the same pane.

    Pane ids are tmux's ``%N``; other targets (``session:window.pane``) are resolved to
    one, strictly (a missing window is an error, not the current pane).
    """

    def __init__(
        self,
        socket_name: str | None = None,
        *,
        executable: str = "tmux",
        method: TypingMethod = "paste-buffer",
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        **options: Unpack[DeliveryOptions],
    ) -> None:
        super().__init__(**options)
        if method not in ("paste-buffer", "send-keys"):
            raise ValueError(f"unknown typing method {method!r}")
        if chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        self.socket_name = socket_name
        self.executable = executable
        self.method: TypingMethod = method
        self.chunk_size = chunk_size
        self._socket_path: str | None = None

    def __repr__(self) -> str:
        return f"TmuxBackend(socket_name={self.socket_name!r}, method={self.method!r})"

    # -- running tmux --------------------------------------------------------------------

    def run(self, *args: str, input: str | None = None) -> str:
        """Run one tmux command line (``";"`` separates commands); return its stdout.

        Raises:
            PaneError: tmux is missing, timed out, or reported an error.
        """
        argv = [self.executable]
        if self.socket_name is not None:
            argv += ["-L", self.socket_name]
        what = f"tmux {args[0] if args else ''} ({self._server()})"
        return run_cli([*argv, *args], what=what, timeout=TMUX_TIMEOUT, input=input)

    def _server(self) -> str:
        return f"server {self.socket_name!r}" if self.socket_name else "default server"

    # -- primitives ----------------------------------------------------------------------

    def _probe(self, pane: str) -> _Probe:
        if not pane or pane.strip() != pane:
            raise PaneError(f"invalid pane id {pane!r}")
        try:
            out = self.run(
                "capture-pane", "-p", "-t", tmux_arg(pane), "-S", "0", "-E", "0", ";",
                "display-message", "-p", "-t", tmux_arg(pane), _PROBE,
            )  # fmt: skip
        except PaneError as exc:
            if any(marker in str(exc) for marker in _GONE):
                raise PaneError(f"pane {pane!r} does not exist on tmux {self._server()}") from exc
            raise
        fields = out.rstrip("\n").rsplit("\n", 1)[-1].split("\t")
        if len(fields) != 6 or not _PANE_ID.fullmatch(fields[0]):
            raise PaneError(f"unexpected tmux answer for pane {pane!r}: {out!r}")
        self._socket_path = fields[5]
        return _Probe(fields[0], fields[1] == "1", fields[2] == "1", fields[3] == "1", *fields[4:])

    @staticmethod
    def _problem(probe: _Probe) -> str | None:
        if probe.dead:
            return f"({probe.pane_id}) is dead: its command has exited"
        if probe.input_off:
            return f"({probe.pane_id}) has input disabled (select-pane -d)"
        return None

    def _locate(self, pane: str) -> tuple[str, str | None]:
        probe = self._probe(pane)
        return probe.pane_id, self._problem(probe)

    def _lock_key(self, pane: str) -> str:
        return f"tmux:{self._socket_path or self.socket_name or 'default'}:{pane}"

    def _prepare_input(self, pane: str) -> None:
        """Re-check the pane and leave any mode, which would swallow the keys.

        ``copy-mode -q`` is used rather than ``send-keys -X cancel``: it leaves *any* mode
        (copy, view, tree, clock, ...) and is a no-op otherwise.
        """
        probe = self._probe(pane)
        problem = self._problem(probe)
        if problem:
            raise PaneError(f"pane {pane!r} {problem}")
        if probe.in_mode:
            self.run("copy-mode", "-q", "-t", pane)
            probe = self._probe(pane)
            if probe.in_mode:
                raise PaneError(f"pane {pane!r} is stuck in {probe.mode or 'a mode'}")

    def _paste(self, pane: str, text: str, *before: str, bracketed: bool = False) -> str:
        """Run ``before`` (a command prefix ending in ``;``, or nothing), then paste ``text``
        into ``pane`` through a private, self-deleting buffer, in one tmux call.

        ``bracketed`` (``paste-buffer -p``) wraps the text in bracketed-paste markers when
        the program asked for them (DECSET 2004), so a TUI takes it as literal text: Gemini
        CLI otherwise handles a typed burst against its still-empty input box, where ``?``
        opens help and ``!`` switches to shell mode (running the rest, with no hooks).
        Programs that did not ask get the plain text.
        """
        buffer = f"exomonad-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        paste = ["paste-buffer", "-d", *(["-p"] if bracketed else []), "-b", buffer, "-t", pane]
        return self.run(*before, "load-buffer", "-b", buffer, "-", ";", *paste, input=text)

    def _type(self, pane: str, line: str) -> None:
        if self.method == "paste-buffer":
            self._paste(pane, line, bracketed=True)
            return
        for start in range(0, len(line), self.chunk_size):
            chunk = line[start : start + self.chunk_size]
            self.run("send-keys", "-t", pane, "-l", "--", tmux_arg(chunk))

    # Enter is the byte CR either way. Pasted, it reaches only the target pane; as a key
    # (send-keys) tmux copies it to every pane of a window with synchronize-panes on.
    def _press_enter(self, pane: str, *before: str) -> str:
        if self.method == "paste-buffer":
            return self._paste(pane, "\r", *before)
        return self.run(*before, "send-keys", "-t", pane, "Enter")

    def _enter(self, pane: str) -> None:
        self._press_enter(pane)

    _SNAPSHOT = ("#{cursor_x},#{cursor_y},#{history_size}", ";", "capture-pane", "-p", "-t")

    def _snapshot(self, pane: str) -> str:
        return self.run("display-message", "-p", "-t", pane, *self._SNAPSHOT, pane)

    def _still_typed(self, snapshot: Hashable, line: str) -> bool:
        """Whether a :meth:`_snapshot` (``x,y,history`` then the screen) shows ``line``
        still in the input, by :func:`~exomonad.panes.screen.typed_line_pending`."""
        if not isinstance(snapshot, str):
            return False
        head, _, screen = snapshot.partition("\n")
        x, _, rest = head.partition(",")
        y = rest.partition(",")[0]
        if not (x.isdigit() and y.isdigit()):
            return False
        return typed_line_pending(screen.split("\n"), int(x), int(y), line)

    def _snapshot_then_enter(self, pane: str) -> str:
        # One round trip; tmux runs the commands in order, so the snapshot predates Enter.
        snapshot = ("display-message", "-p", "-t", pane, *self._SNAPSHOT, pane, ";")
        return self._press_enter(pane, *snapshot)

    def _lock_target(self, pane: str) -> str:
        # A %N id on a server we have seen is already canonical: lock first, check under
        # the lock (saves a tmux round trip per delivery).
        if self._socket_path is not None and _PANE_ID.fullmatch(pane):
            return pane
        return self._resolve(pane)

    # -- the rest of the contract --------------------------------------------------------

    def capture(self, pane: str) -> str:
        """Visible text of ``pane`` (wrapped lines joined, trailing blanks dropped)."""
        canonical, _ = self._locate(pane)
        raw = self.run("capture-pane", "-p", "-J", "-t", canonical)
        return "\n".join(line.rstrip() for line in raw.splitlines()).rstrip("\n")

    def spawn(
        self,
        command: Command,
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        name: str | None = None,
        target: str | None = None,
        split: bool = False,
    ) -> str:
        """Start ``command`` in a new pane and return its ``%N`` id.

        Args:
            command: a shell command line (run by tmux's ``default-shell``), or an argv
                list (run directly, no shell).
            cwd: working directory of the new pane.
            env: extra environment variables for the command.
            name: window name (or session name when ``target`` is ``None``); for a
                split, the pane title.
            target: session (or window) to open a new window in; with ``split=True``, the
                pane to split. ``None`` creates a new detached session.
            split: split ``target`` instead of opening a new window.
        """
        argv = check_command(command)
        opts: list[str] = ["-d", "-P", "-F", "#{pane_id}"]
        if cwd is not None:
            opts += ["-c", tmux_arg(os.fspath(cwd))]
        for key, value in check_env(env).items():
            opts += ["-e", tmux_arg(f"{key}={value}")]
        if target is None:
            verb = ["new-session", *opts] + (["-s", tmux_arg(name)] if name else [])
        elif split:
            verb = ["split-window", *opts, "-t", target]
        else:
            # A bare session name would resolve to its current window, whose index is
            # taken: `session:` asks for the next free index.
            where = target if ":" in target or target.startswith(("%", "@")) else f"{target}:"
            verb = ["new-window", *opts, "-t", where] + (["-n", tmux_arg(name)] if name else [])
        # tmux runs a single argument through the shell: a one-word argv goes via `env`.
        cmd = [argv] if isinstance(argv, str) else argv if len(argv) > 1 else ["env", "--", *argv]
        pane = self.run(*verb, "--", *(tmux_arg(a) for a in cmd)).strip()
        if not _PANE_ID.fullmatch(pane):
            raise PaneError(f"tmux did not report the new pane id: {pane!r}")
        if split and name:
            self.run("select-pane", "-t", pane, "-T", tmux_arg(name))
        return pane

    def kill(self, pane: str) -> None:
        """Kill ``pane`` (alive or dead). ``PaneError`` if it does not exist."""
        canonical, _ = self._locate(pane)
        self.run("kill-pane", "-t", canonical)
