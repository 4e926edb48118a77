"""What building the server's services does to the state dir; who a caller is."""

from __future__ import annotations

import os
import subprocess

import pytest

from exomonad.ancestry import AGENT_ENV
from exomonad.server.services import Services
from exomonad.setup import IGNORE
from exomonad.util.waiting import retry_until
from tests.support.agents import below, proc_children


def test_the_state_dir_gets_its_ignore_file(svc: Services) -> None:
    """A project set up before init wrote ``.exomonad/.ignore`` gets it when served."""
    assert (svc.state_dir / ".ignore").read_text() == IGNORE
    (svc.state_dir / ".ignore").write_text("!tokens.json\n")
    again = Services(svc.state_dir, root=svc.root, backend=svc.backend, config=svc.config)
    try:
        assert (again.state_dir / ".ignore").read_text() == IGNORE
    finally:
        again.close()


@pytest.mark.parametrize(
    ("argv", "env", "lead"),
    [
        (["claude"], {}, True),  # the lead's own Claude Code
        (["claude", "--agent-id", "w9@proj"], {}, False),  # a Claude teammate
        (["gemini"], {}, False),  # another agent holding lead.token
        (["claude"], {"EXOMONAD_TOKEN": ""}, False),  # below an agent ExoMonad started
        ([], {}, False),  # no Claude Code among its parents: a person, a detached process
    ],
)
def test_a_lead_claim_is_the_lead_only_from_the_leads_claude_code(
    svc: Services, argv: list[str], env: dict[str, str], lead: bool
) -> None:
    """The shell front offers ``lead.token`` for every tokenless hook; the server takes it
    by the process that connected (``SO_PEERCRED``'s pid) as the Python client decides
    for itself (:func:`exomonad.ancestry.claude_lead_ancestor`), else the least role."""
    token = svc.tokens.lead_path.read_text().strip()
    environ = {k: v for k, v in os.environ.items() if k not in AGENT_ENV}
    with subprocess.Popen(below(argv, ["sleep", "30"]), env={**environ, **env}) as shell:
        try:
            retry_until(lambda: bool(proc_children(shell.pid)), timeout=30,
                        message="sleep started")  # fmt: skip
            peer = proc_children(shell.pid)[0]
            who = svc.identify_lead_claim(token, peer, "claude")
            stranger = svc.identify_lead_claim("exo_not_ours", peer, "claude")
        finally:
            shell.kill()
    assert who.authenticated is lead
    assert who.role == ("tl" if lead else "guest")
    assert not stranger.authenticated
    assert svc.counters["lead_claim_declined"] == (1 if lead else 2)
