"""The web dashboard: teams, presence, a live timeline, tasks, approvals, the user inbox.

Served by ``exomonad serve`` at ``/dashboard/`` on the Unix socket (to a person's
process, :class:`~.access.PersonGate`) and, when asked, on a loopback TCP port behind a
token (:class:`~.listener.DashboardListener`, :class:`~.access.TokenGate`): see
``README.md`` (Seeing the team) and ``docs/architecture.md``. The page is plain HTML,
CSS and JavaScript in ``static/`` (no build step); it reads ``/api/status`` once, then
follows ``/api/events`` (server-sent events) and renders every text with
``textContent``.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.types import ASGIApp

from exomonad.server.dashboard.access import PersonGate, security_headers
from exomonad.server.dashboard.listener import DashboardListener
from exomonad.server.dashboard.routes import dashboard_app
from exomonad.server.services import Services

__all__ = ["DashboardListener", "dashboard"]


def dashboard(
    svc: Services, *, port: int | None = None, announce: Callable[[str], None] | None = None
) -> tuple[DashboardListener, ASGIApp]:
    """The TCP listener (a service to register; opened at start on ``port`` if given,
    its URL handed to ``announce``) and the app to mount on the Unix socket."""
    listener = DashboardListener(lambda closing: dashboard_app(svc, closing=closing),
                                 port=port, announce=announce)  # fmt: skip
    return listener, PersonGate(security_headers(dashboard_app(svc, listener)))
