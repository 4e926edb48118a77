"""A person's answer to an approval: the one way it is given, whoever carries it.

An escalation addressed to a human is answered only by a person, never by an agent
(the lead included). Every way a person answers ends here: ``exomonad approve`` /
``exomonad deny`` (the CLI), the approval popup, and the dashboard. Each caller first
proves that a person stands behind it, by the proof its channel has:

* a process of the person's (the CLI; the dashboard over the Unix socket, whose
  connecting process the kernel names): :func:`require_person` refuses one inside any
  agent's session (:func:`exomonad.ancestry.agent_session`), or one it cannot read;
* the dashboard over loopback TCP: the token printed once to the person's terminal.

:func:`answer_as_person` then records the answer as the Unix user who runs ExoMonad
(never a name the caller chooses), with the channel it came through.

>>> import tempfile, pathlib
>>> store = ApprovalStore(pathlib.Path(tempfile.mkdtemp()) / "approvals.db")
>>> a = store.create(agent="w1", role="worker", action={"cmd": "sudo ls"}, reason="sudo")
>>> done = answer_as_person(store, a.id[:4], approved=False, reason="no", via="dashboard")
>>> done.state, done.answered_by == f"{person()} (dashboard)"
('denied', True)
"""

from __future__ import annotations

import os
import pwd

from exomonad.ancestry import agent_session
from exomonad.policy.approvals import Approval, ApprovalStore
from exomonad.policy.errors import PolicyError

__all__ = ["NotAPersonError", "answer_as_person", "person", "require_person"]


class NotAPersonError(PolicyError):
    """An approval for a person was to be answered from an agent's session."""


def person() -> str:
    """Who answers, as the system knows them (not ``$USER``, which a caller sets)."""
    return f"human:{pwd.getpwuid(os.getuid()).pw_name}"


def require_person(pid: int, what: str = "approvals are answered by a person") -> None:
    """Raise :class:`NotAPersonError` (its message starting with ``what``) unless
    process ``pid`` is a person's: in no agent's session (the lead's included) and
    readable."""
    inside = agent_session(pid)
    if inside is not None:
        raise NotAPersonError(f"{what}, and this comes from inside an agent's session "
                              f"({inside}): use your own terminal")  # fmt: skip


def answer_as_person(
    store: ApprovalStore, approval_id: str, approved: bool, reason: str = "",
    *, via: str | None = None,
) -> Approval:  # fmt: skip
    """Approve or deny the approval ``approval_id`` (or a unique prefix of it) as the
    person running ExoMonad; ``via`` names the channel (``dashboard``, ``popup``).

    The caller has proved a person is behind it (see the module doc). Raises
    :class:`~exomonad.policy.errors.ApprovalNotFoundError` or
    :class:`~exomonad.policy.errors.ApprovalClosedError`.
    """
    by = person() + (f" ({via})" if via else "")
    return store.answer(store.resolve(approval_id), approved, by, reason)
