"""Unsetting element 0 of a variable that is not an array unsets the variable:
``unset 'GIT_CONFIG_PARAMETERS[0]'`` takes git's gate away as ``unset
GIT_CONFIG_PARAMETERS`` does (asked), and ``unset 'CLAUDECODE[0]'`` an agent's marker.

Found trying the gate as a worker: each command in ``GATE_OFF`` left the commands after
it without the worker's ``GIT_CONFIG_PARAMETERS`` (git no longer saw the gate's
``core.hooksPath``), allowed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Escalate
from tests.policy.worker import bash, run_bash

GATE_OFF = [
    "unset 'GIT_CONFIG_PARAMETERS[0]'",
    "unset -v 'GIT_CONFIG_PARAMETERS[0]'",
    "declare +x 'GIT_CONFIG_PARAMETERS[0]'",
]


@pytest.mark.parametrize("command", GATE_OFF)
def test_the_gate_unset_by_element_is_asked(
    tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.hookspath'='/gate'")
    assert run_bash("git config core.hooksPath", tmp_path).stdout == "/gate\n"
    done = run_bash(f"{command}; sh -c 'git config core.hooksPath || echo GATE-OFF'", tmp_path)
    assert done.stdout == "GATE-OFF\n", (command, done)  # the real effect
    assert isinstance(bash(command), Escalate), command


def test_an_agent_marker_unset_by_element_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDECODE", "1")
    done = run_bash("unset 'CLAUDECODE[0]'; env", tmp_path)
    assert "CLAUDECODE=" not in done.stdout  # the real effect
    assert isinstance(bash("unset 'CLAUDECODE[0]'"), Escalate)


@pytest.mark.parametrize("command", ["unset 'arr[0]'", "unset x", "unset -v 'm[k]'"])
def test_an_element_of_an_ordinary_array_stays_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
