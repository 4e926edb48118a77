"""The status view's fixtures: the server's in-process ``Services`` (its ``/status``
documents are the real thing, not hand-written shapes)."""

from tests.server.conftest import fake, lead, svc

__all__ = ["fake", "lead", "svc"]
