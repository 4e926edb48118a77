"""The per-project server: one Unix socket, MCP for every agent, hook answers, health,
and the team's events and status.

Thin by design: it wires the services in :mod:`exomonad.teams`, :mod:`exomonad.panes`
and :mod:`exomonad.bridge`; protocol logic lives there, not here. Background work runs
as services registered with :class:`~exomonad.server.service.ServiceHost`.
"""
