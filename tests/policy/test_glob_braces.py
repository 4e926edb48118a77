"""A glob tool's pattern is judged by each of its brace expansions: Gemini CLI's
``glob`` (the npm ``glob``, braces expanded) of ``{../..,x}/.exomonad/*`` listed the state
dir two levels up, allowed as a listing of the worktree
(``tests/e2e/test_gemini_glob_braces.py`` runs the real one).
"""

from __future__ import annotations

import pytest

from exomonad.policy.decisions import Allow, Deny
from tests.policy.worker import decide


@pytest.mark.parametrize(
    ("runtime", "tool", "pattern"),
    [
        ("gemini", "glob", "{../..,x}/.exomonad/*"),
        ("gemini", "glob", "{..,x}/{..,x}/.exomonad/lead.token"),
        ("gemini", "glob", "{/p/.exomonad,src}/*"),
        ("claude", "Glob", "{../..,x}/.exomonad/*"),
    ],
)
def test_a_brace_that_leaves_into_the_state_dir_is_refused(
    runtime: str, tool: str, pattern: str
) -> None:
    verdict = decide(tool, {"pattern": pattern}, runtime=runtime)
    assert isinstance(verdict, Deny), verdict  # each was allowed


def test_too_many_expansions_are_not_allowed() -> None:
    pattern = "".join("{a,b}" for _ in range(10))
    assert not isinstance(decide("glob", {"pattern": pattern}, runtime="gemini"), Allow)


@pytest.mark.parametrize("pattern", ["src/**/*.{py,md}", "**/*.{ts,tsx}", "{src,tests}/*.py"])
def test_ordinary_braces_stay_allowed(pattern: str) -> None:
    assert isinstance(decide("glob", {"pattern": pattern}, runtime="gemini"), Allow)
    assert isinstance(decide("Glob", {"pattern": pattern}), Allow)
