"""The per-project server: one Unix socket, MCP for every agent, hook answers, health.

Thin by design: it wires the services in :mod:`exomonad.teams`, :mod:`exomonad.panes`
and :mod:`exomonad.bridge`; protocol logic lives there, not here.
"""
