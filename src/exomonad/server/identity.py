"""Who is calling: per-agent tokens issued by the server, mapped to name, role and team.

A session cannot raise its own role: the role comes from the token, never from what the
client claims. Tokens are issued at spawn (passed to the worker in ``EXOMONAD_TOKEN``);
the root lead's token is kept in ``.exomonad/lead.token`` (mode 0600) for the lead's
``exomonad mcp-stdio`` to read. A connection without a valid token gets the least role.

The trust boundary is the Unix user: anything running as that user can read the state
directory and the socket. Tokens stop role claims (an agent passing ``--role tl``); the
lead's token is also checked against the connecting process (``Services.identify``), so
a worker that reads it is still a guest. A hostile process of the same user that
detaches from the worker's session is not stopped (``docs/guarantees.md``).
"""

from __future__ import annotations

import os
import secrets
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

import orjson

from exomonad.uds import LEAD_TOKEN_FILE, TOKEN_HEADER

__all__ = ["TOKEN_HEADER", "Identity", "TokenStore"]


@dataclass(frozen=True)
class Identity:
    """An authenticated (or anonymous) caller.

    ``worktree`` and ``branch`` are the agent's own checkout and branch (set when
    ExoMonad made it a worktree); every hook and tool call passes them to the policy,
    so ordinary work there is allowed and work elsewhere cascades.
    """

    name: str
    role: str
    team: str | None = None
    parent: str = "team-lead"
    authenticated: bool = True
    worktree: str | None = None
    branch: str | None = None
    #: The process holding the token, when it said so (a teammate): while it lives, the
    #: name is taken.
    pid: int | None = None
    #: The agent runtime it runs (``gemini``, ``codex``...), when known at spawn.
    runtime: str | None = None


class TokenStore:
    """Tokens in ``<state>/tokens.json`` (0600), cached in memory, thread-safe."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "tokens.json"
        self.lead_path = state_dir / LEAD_TOKEN_FILE
        self._lock = threading.Lock()
        self._tokens: dict[str, Identity] = {}
        if self.path.exists():
            raw = orjson.loads(self.path.read_bytes())
            self._tokens = {t: Identity(**v) for t, v in raw.items()}

    def _save(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(orjson.dumps({t: asdict(i) for t, i in self._tokens.items()}))
        os.replace(tmp, self.path)

    def issue(self, identity: Identity) -> str:
        """A new token for ``identity`` (replacing earlier tokens of the same name+team)."""
        token = "exo_" + secrets.token_hex(16)
        with self._lock:
            self._tokens = {
                t: i for t, i in self._tokens.items()
                if (i.name, i.team) != (identity.name, identity.team)
            }  # fmt: skip
            self._tokens[token] = identity
            self._save()
        return token

    def revoke(self, name: str, team: str | None) -> int:
        """Drop the tokens of ``name`` in ``team``; how many were dropped."""
        with self._lock:
            before = len(self._tokens)
            self._tokens = {
                t: i for t, i in self._tokens.items() if (i.name, i.team) != (name, team)
            }
            self._save()
            return before - len(self._tokens)

    def find(self, name: str, team: str | None) -> Identity | None:
        """The identity holding a token for ``name`` in ``team``, if any."""
        with self._lock:
            return next((i for i in self._tokens.values() if (i.name, i.team) == (name, team)),
                        None)  # fmt: skip

    def identities(self) -> list[Identity]:
        """Every identity that holds a token."""
        with self._lock:
            return list(self._tokens.values())

    def clear(self) -> None:
        """Revoke every token, the lead's included (``exomonad down``)."""
        with self._lock:
            self._tokens = {}
            self._save()
            self.lead_path.unlink(missing_ok=True)

    def lookup(self, token: str | None) -> Identity | None:
        """The identity of ``token``, if it is one we issued."""
        if not token:
            return None
        with self._lock:
            return self._tokens.get(token)

    def ensure_lead_token(self, name: str, role: str) -> str:
        """The root lead's token (created once, kept in ``lead.token``, mode 0600)."""
        if self.lead_path.exists():
            token = self.lead_path.read_text().strip()
            found = self.lookup(token)
            if found is not None and (found.name, found.role) == (name, role):
                return token
        token = self.issue(Identity(name=name, role=role))
        fd = os.open(self.lead_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(token + "\n")
        return token
