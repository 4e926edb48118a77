"""``date -f FILE`` (``--file=FILE``) reads ``FILE``: a line it cannot take for a date
is printed in its error (found trying the gate as a worker: ``date -f t``, ``t`` a link
to the lead's token, printed the token, allowed)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny
from tests.policy.worker import bash, scratch_worktree

SECRET = "exo_lead_secret"


@pytest.mark.parametrize("command", ["date -f t", "date --file=t", "date -ft", "date --file t",
                                     "date -u -f t +%s", "date --fil=t"])  # fmt: skip
def test_date_reading_the_state_is_refused(tmp_path: Path, command: str) -> None:
    root, wt = scratch_worktree(tmp_path)
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "lead.token").write_text(SECRET + "\n")
    (wt / "t").symlink_to("../../.exomonad/lead.token")
    done = subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, text=True,
                          check=False)  # fmt: skip
    assert SECRET in done.stdout + done.stderr, (command, done)  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Deny), (command, verdict)


@pytest.mark.parametrize("command", ["date", "date -u +%F", "date -d '1 day ago'",
                                     "date -f dates.txt", "date -r x.py"])  # fmt: skip
def test_dates_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
