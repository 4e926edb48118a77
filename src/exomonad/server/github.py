"""The GitHub poller (:mod:`exomonad.github`) wired into the server.

* **Who is watched**: every worker holding a token with a branch (its worktree's), and
  any branch a worker opened a pull request from: a ``gh pr create`` the policy let
  through (:func:`saw_actions`, from the pre-tool-use hook) watches the worker's
  ``--head``, else its own branch, else the branch its working directory is on.
* **How messages travel**: the same path as everything else. A worker's message is
  appended to its inbox in the team directory (``Mailbox``, under Claude Code's lock)
  and the inbox watcher types it into its pane; a parent's summary goes to the
  parent's inbox as ``notify_parent`` does (:meth:`LeadLink.tell`, with the lead's pane
  as a fallback for a lead that does not poll).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from exomonad.github import (
    GitHubClient,
    GitHubPoller,
    GitHubService,
    GitHubStore,
    Messages,
    Outbound,
    Owner,
    PrEvent,
)
from exomonad.github.repo import current_branch
from exomonad.panes import KeystrokeBackend, Spool
from exomonad.policy import Action, CreatePR

if TYPE_CHECKING:
    from exomonad.server.identity import Identity
    from exomonad.server.services import Services

__all__ = ["github_service", "saw_actions"]

log = logging.getLogger("exomonad.server")


def github_service(svc: Services) -> GitHubService:
    """The poller service for ``svc``'s project (nothing runs before ``start``)."""
    cfg = svc.config.github

    def build(repo: str, token: str, emit: Callable[[PrEvent], None]) -> GitHubPoller:
        spool = svc.backend.spool if isinstance(svc.backend, KeystrokeBackend) else Spool()
        return GitHubPoller(
            GitHubClient(cfg.url(), token),
            GitHubStore(svc.state_dir / "ledger.db"),
            repo,
            cfg,
            targets=lambda: _workers(svc),
            deliver=lambda m: _deliver(svc, m),
            messages=Messages(spool),
            on_event=emit,
        )

    return GitHubService(cfg, svc.state_dir.resolve().parent, build)


def _workers(svc: Services) -> Iterator[Owner]:
    """Every worker with a token and a branch (the lead's token has no team)."""
    for who in svc.tokens.identities():
        if who.team is not None and who.branch and who.role != svc.config.lead.role:
            yield Owner(who.team, who.name, who.parent, who.branch)


def _deliver(svc: Services, m: Outbound) -> None:
    sender = svc.config.github.sender
    if m.audience == "parent":
        svc.lead.tell(
            m.team,
            m.recipient,
            sender=sender,
            text=m.text,
            summary=m.summary,
            messageId=m.message_id,
        )
    else:
        svc.mailbox(m.team).send(
            m.recipient, sender=sender, text=m.text, summary=m.summary, messageId=m.message_id
        )
    svc.counters[f"github_{m.audience}_messages"] += 1


def saw_actions(svc: Services, who: Identity, actions: Iterable[Action], cwd: str | None) -> None:
    """A worker's tool call the policy did not deny: watch the branch of a PR it opens.

    Never raises: watching is a side effect and must not change the hook's answer.
    """
    for action in actions:
        if not isinstance(action, CreatePR) or who.team is None:
            continue
        try:
            head = action.head.rsplit(":", 1)[-1] if action.head else None
            branch = head or who.branch or (current_branch(Path(cwd)) if cwd else None)
            theirs = {i.name for i in svc.tokens.identities()
                      if i.branch == branch and i.name != who.name}  # fmt: skip
            if theirs:  # found probing: `--head exo/w2` made w2's reviews reach w1's pane
                log.warning("%s opens a PR from %s, the branch of %s: not watched for it",
                            who.name, branch, ", ".join(sorted(theirs)))  # fmt: skip
            elif branch:
                svc.github.watch(Owner(who.team, who.name, who.parent, branch))
        except Exception:
            log.exception("could not watch %s's pull request", who.name)
