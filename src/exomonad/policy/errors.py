"""Errors raised by :mod:`exomonad.policy`; all derive from :class:`~exomonad.errors.ExomonadError`.

The policy subtree::

    ExomonadError
    └── PolicyError               anything the policy layer refuses on purpose
        ├── PolicyLoadError         a policy file that does not load (syntax, exception, type)
        ├── ApprovalNotFoundError   no pending-approval record with that id
        └── ApprovalClosedError     answering an approval that is no longer pending
"""

from __future__ import annotations

from exomonad.errors import ExomonadError

__all__ = ["ApprovalClosedError", "ApprovalNotFoundError", "PolicyError", "PolicyLoadError"]


class PolicyError(ExomonadError):
    """Root of the policy layer's errors."""


class PolicyLoadError(PolicyError):
    """A policy file failed to load: syntax error, exception, wrong type or failing examples."""


class ApprovalNotFoundError(PolicyError, KeyError):
    """No approval record has that id."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the plain message
        return str(self.args[0]) if self.args else "approval not found"


class ApprovalClosedError(PolicyError):
    """The approval was already answered or has expired."""
