"""What building the server's services does to the state dir."""

from __future__ import annotations

from exomonad.server.services import Services
from exomonad.setup import IGNORE


def test_the_state_dir_gets_its_ignore_file(svc: Services) -> None:
    """A project set up before init wrote ``.exomonad/.ignore`` gets it when served."""
    assert (svc.state_dir / ".ignore").read_text() == IGNORE
    (svc.state_dir / ".ignore").write_text("!tokens.json\n")
    again = Services(svc.state_dir, root=svc.root, backend=svc.backend, config=svc.config)
    try:
        assert (again.state_dir / ".ignore").read_text() == IGNORE
    finally:
        again.close()
