"""``real_path`` never raises, and a path the system will not let us look into is judged
by its name (found probing: ``Read /proc/1/root/<project>/.exomonad/lead.token`` was
escalated to a person as a policy error, ``PermissionError`` from ``realpath``)."""

from __future__ import annotations

import os

import pytest

from exomonad.policy.decisions import Allow, Deny
from exomonad.util.paths import real_path
from tests.policy.worker import ROOT, bash, decide


def _refusing(path: str, *args: object, **kwargs: object) -> str:
    raise PermissionError(13, "Permission denied", path)


def test_an_unreadable_part_leaves_the_path_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os.path, "realpath", _refusing)
    assert real_path("/proc/1/root/a/../b") == "/proc/1/root/b"


def test_a_read_through_an_unreadable_link_is_refused_by_its_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os.path, "realpath", _refusing)
    for tool, key in (("Read", "file_path"), ("Write", "file_path"), ("Grep", "path")):
        verdict = decide(tool, {key: f"/proc/1/root{ROOT}/.exomonad/lead.token", "content": "x",
                                "pattern": "x"})  # fmt: skip
        assert isinstance(verdict, Deny), (tool, verdict)
        assert "policy error" not in verdict.reason


def test_links_are_still_followed(tmp_path: object) -> None:
    assert real_path("/proc/self/root/etc") == "/etc"


def test_a_path_too_long_to_open_is_judged_as_written() -> None:
    """Following the links of a 320 KB path took 4.7 s (``realpath`` looks up every
    prefix); longer than ``PATH_MAX`` it is normalised as written, still refused by name."""
    assert real_path("/a" * 3000 + "/../b") == "/a" * 2999 + "/b"
    verdict = bash("cat " + "a/../" * 1000 + "../../.exomonad/lead.token")
    assert isinstance(verdict, Deny), verdict
    assert isinstance(bash("cat " + "/proc/1/" * 40000), Allow)
