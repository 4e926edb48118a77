"""ExoMonad's control commands run through a Python interpreter are still control
commands: a person's to run, denied to every agent.

Found probing as a worker against a live server: ``python /…/bin/exomonad approve ID``,
``python -mexomonad approve ID`` and ``python -m exomonad.__main__ approve ID`` were
allowed by the policy (only the CLI's own "inside an agent's session" check stopped
them). ``python -m exomonad approve`` was already denied.
"""

from __future__ import annotations

import pytest

from exomonad.policy.decisions import Allow, Deny
from tests.policy.worker import bash

CONTROL = [
    "python /home/u/.venv/bin/exomonad approve 1",
    "python3 -X dev /x/bin/exomonad approve 1",
    "python -mexomonad approve 1",
    "python -m exomonad.__main__ approve 1",
    "python3 -Im exomonad approve 1",
    "python3 -Imexomonad deny 1",
    "python3 -W ignore -m exomonad deny 1",
    "python3 -Wignore -m exomonad approve 1",
    "python -m exomonad.hookclient pre-tool-use",
    "python -m exomonad.teammate",
    "/opt/venv/bin/python3.11 /opt/venv/bin/exomonad-teammate --name w",
    "python3 /usr/local/bin/exomonad-hook rm -rf /",
    "python -m exomonad approve 1",
]


@pytest.mark.parametrize("command", CONTROL)
@pytest.mark.parametrize("role", ["worker", "tl"])
def test_exomonad_control_through_python_is_denied(command: str, role: str) -> None:
    decision = bash(command, role=role)
    assert isinstance(decision, Deny), (command, decision)
    assert "control commands" in decision.reason


#: Read-only ExoMonad commands and Python that is not ExoMonad stay as they were.
ORDINARY = [
    "python -m exomonad status",
    "python /usr/local/bin/exomonad status",
    "python -m pytest",
    "python3 script.py approve",
    "python3 -m exomonadic_other approve",
    "python3 -c 'print(1)'",
]


@pytest.mark.parametrize("command", ORDINARY)
def test_other_python_is_not_a_control_command(command: str) -> None:
    decision = bash(command)
    assert isinstance(decision, Allow), (command, decision)
