"""One server per project: the pid file ``.exomonad/server.pid`` and its socket.

The pid file is JSON ``{pid, socket, started_at, version}``. A client finds the socket
there and checks liveness with ``kill(pid, 0)``. A second server for the same project
refuses to start; a stale pid file or socket (its process gone) is cleaned up. Creating
the pid file uses ``O_EXCL``, so two servers starting at once cannot both win.

:func:`server_request` is the JSON client of that socket for ExoMonad's own commands, on
:mod:`exomonad.uds` (the one client, which the hook client and ``mcp-stdio`` use too).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from exomonad import __version__
from exomonad.errors import ExomonadError, ServerError
from exomonad.state import ensure_state_dir
from exomonad.uds import Connection, pid_file, request
from exomonad.util.proc import pid_alive

__all__ = ["PidFile", "ServerInfo", "read_server_info", "server_request", "server_stream"]


@dataclass(frozen=True)
class ServerInfo:
    """What the pid file says."""

    pid: int
    socket: str
    started_at: float
    version: str

    @property
    def alive(self) -> bool:
        """Whether the process still runs (a zombie, exited but not yet reaped by its
        parent, e.g. tmux, does not)."""
        return pid_alive(self.pid)


def read_server_info(state_dir: Path) -> ServerInfo | None:
    """The pid file's content, or None if absent or unreadable."""
    data = pid_file(str(state_dir))
    if data is None:
        return None
    try:
        return ServerInfo(int(data["pid"]), str(data["socket"]), float(data["started_at"]),
                          str(data["version"]))  # fmt: skip
    except (KeyError, TypeError, ValueError):
        return None


def server_request(sock_path: str, method: str, target: str, body: Any = None, *,
                   timeout: float = 30.0,
                   headers: dict[str, str] | None = None) -> tuple[int, Any]:  # fmt: skip
    """One JSON request to the server on ``sock_path``; returns (status, decoded body).

    Raises :class:`ExomonadError` when the server does not answer with JSON.
    """
    headers = {
        **(headers or {}),
        **({"Content-Type": "application/json"} if body is not None else {}),
    }
    payload = orjson.dumps(body) if body is not None else b""
    try:
        reply = request(sock_path, method, target, payload, headers, timeout=timeout)
        return reply.status, orjson.loads(reply.body)
    except (OSError, ExomonadError, orjson.JSONDecodeError) as exc:
        raise ExomonadError(f"the server on {sock_path} did not answer {target}: {exc}") from exc


@contextlib.contextmanager
def server_stream(sock_path: str, target: str, *, timeout: float = 60.0,
                  headers: dict[str, str] | None = None
                  ) -> Iterator[tuple[int, Iterator[bytes]]]:  # fmt: skip
    """A streaming GET on ``sock_path``: the status and the body as it arrives (each read
    within ``timeout`` seconds; :mod:`exomonad.util.sse` reads events off it). Raises
    :class:`ExomonadError` when the connection fails or breaks."""
    why = f"the server on {sock_path} broke off {target}"
    conn = Connection(sock_path, None, read_timeout=timeout)
    try:
        try:
            conn.send("GET", target, b"", headers)
            status, _ = conn.head()
        except (OSError, ServerError) as exc:
            raise ExomonadError(f"{why}: {exc}") from exc
        yield status, _chunks(conn, why)
    finally:
        conn.close()


def _chunks(conn: Connection, why: str) -> Iterator[bytes]:
    """``conn``'s body as it arrives; a broken connection is an :class:`ExomonadError`
    saying ``why``."""
    try:
        yield from conn.chunks()
    except (OSError, ServerError) as exc:
        raise ExomonadError(f"{why}: {exc}") from exc


class PidFile:
    """Claim the project's server slot; release it on exit."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.path = state_dir / "server.pid"
        self.socket = state_dir / "server.sock"
        self.info: ServerInfo | None = None

    def acquire(self) -> ServerInfo:
        """Write the pid file, or raise if a live server owns this project."""
        ensure_state_dir(self.state_dir)
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                other = read_server_info(self.state_dir)
                if other is not None and other.alive and other.pid != os.getpid():
                    raise ExomonadError(
                        f"an ExoMonad server (pid {other.pid}) already serves this project "
                        f"on {other.socket}; stop it first (kill {other.pid})"
                    ) from None
                self.path.unlink(missing_ok=True)  # stale: its process is gone
                continue
            self.socket.unlink(missing_ok=True)  # a stale socket from a crashed server
            info = ServerInfo(os.getpid(), str(self.socket), time.time(), __version__)
            with os.fdopen(fd, "wb") as fh:
                fh.write(orjson.dumps(info.__dict__))
            self.info = info
            return info
        raise ExomonadError(f"could not claim {self.path}")

    def release(self) -> None:
        """Remove the socket and the pid file if they are still ours."""
        current = read_server_info(self.state_dir)
        if current is not None and current.pid == os.getpid():
            with contextlib.suppress(FileNotFoundError):
                self.socket.unlink()
            self.path.unlink(missing_ok=True)
