"""One server per project: the pid file ``.exomonad/server.pid`` and its socket.

The pid file is JSON ``{pid, socket, started_at, version}``. A client finds the socket
there and checks liveness with ``kill(pid, 0)``. A second server for the same project
refuses to start; a stale pid file or socket (its process gone) is cleaned up. Creating
the pid file uses ``O_EXCL``, so two servers starting at once cannot both win.

:func:`server_request` is the one small HTTP client for that socket (the hook client has
its own, stdlib-only, because it runs on every tool call).
"""

from __future__ import annotations

import contextlib
import http.client
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from exomonad import __version__
from exomonad.errors import ExomonadError
from exomonad.state import ensure_state_dir

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
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        try:
            with open(f"/proc/{self.pid}/stat", "rb") as fh:
                return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
        except (OSError, IndexError):
            return True


def read_server_info(state_dir: Path) -> ServerInfo | None:
    """The pid file's content, or None if absent or unreadable."""
    try:
        data = orjson.loads((state_dir / "server.pid").read_bytes())
        return ServerInfo(int(data["pid"]), str(data["socket"]), float(data["started_at"]),
                          str(data["version"]))  # fmt: skip
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.unix_path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


def server_request(sock_path: str, method: str, target: str, body: Any = None, *,
                   timeout: float = 30.0,
                   headers: dict[str, str] | None = None) -> tuple[int, Any]:  # fmt: skip
    """One JSON request to the server on ``sock_path``; returns (status, decoded body).

    Raises :class:`ExomonadError` when the server does not answer with JSON.
    """
    conn = _UnixConnection(sock_path, timeout)
    try:
        headers = {
            **(headers or {}),
            **({"Content-Type": "application/json"} if body is not None else {}),
        }
        payload = orjson.dumps(body) if body is not None else None
        conn.request(method, target, body=payload, headers=headers)
        response = conn.getresponse()
        return response.status, orjson.loads(response.read())
    except (OSError, http.client.HTTPException, orjson.JSONDecodeError) as exc:
        raise ExomonadError(f"the server on {sock_path} did not answer {target}: {exc}") from exc
    finally:
        conn.close()


@contextlib.contextmanager
def server_stream(sock_path: str, target: str, *, timeout: float = 60.0,
                  headers: dict[str, str] | None = None
                  ) -> Iterator[tuple[int, Iterator[bytes]]]:  # fmt: skip
    """A streaming GET on ``sock_path``: the status and the body's lines (each read
    within ``timeout`` seconds). Raises :class:`ExomonadError` when the connection fails
    or breaks."""
    conn = _UnixConnection(sock_path, timeout)
    try:
        conn.request("GET", target, headers=headers or {})
        response = conn.getresponse()
        yield response.status, iter(response.readline, b"")
    except (OSError, http.client.HTTPException) as exc:
        raise ExomonadError(f"the server on {sock_path} broke off {target}: {exc}") from exc
    finally:
        conn.close()


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
