"""``real_path`` never raises, and a path the system will not let us look into is judged
by its name (found probing: ``Read /proc/1/root/<project>/.exomonad/lead.token`` was
escalated to a person as a policy error, ``PermissionError`` from ``realpath``). Links
are followed as the system follows them: a ``..`` after a link climbs from its target
(``s -> .``: ``s/s/../../Makefile`` is above the worktree)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny
from exomonad.util import paths
from exomonad.util.paths import follow, judging, real_path
from tests.policy.worker import ROOT, bash, decide


def _refusing(path: str, *args: object, **kwargs: object) -> str:
    raise PermissionError(13, "Permission denied", path)


def test_an_unreadable_part_leaves_the_path_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "readlink", _refusing)
    assert real_path("/proc/self/root/a/b") == "/proc/self/root/a/b"
    # a `..` after it: where it leads is not known (real_path too: never the text)
    assert follow("/proc/self/root/a/../b") is None
    assert real_path("/proc/self/root/a/../b") is None


def test_a_read_through_an_unreadable_link_is_refused_by_its_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "readlink", _refusing)
    for tool, key in (("Read", "file_path"), ("Write", "file_path"), ("Grep", "path")):
        verdict = decide(tool, {key: f"/proc/1/root{ROOT}/.exomonad/lead.token", "content": "x",
                                "pattern": "x"})  # fmt: skip
        assert isinstance(verdict, Deny), (tool, verdict)
        assert "policy error" not in verdict.reason


def test_links_are_still_followed() -> None:
    assert real_path("/proc/self/root/etc") == "/etc"


def test_a_path_too_long_to_open_is_judged_quickly() -> None:
    """Following the links of a 320 KB path took 4.7 s (``realpath`` looks up every
    prefix); one longer than ``PATH_MAX`` with a ``..`` is not followed (None: unknown),
    one without is looked up a name at a time, as far as its names exist."""
    assert follow("/a" * 3000 + "/../b") is None
    assert real_path("/a" * 3000 + "/../b") is None
    verdict = bash("cat " + "a/../" * 1000 + "../../.exomonad/lead.token")
    assert isinstance(verdict, Deny), verdict
    assert isinstance(bash("cat " + "/proc/1/" * 40000), Allow)


def test_links_are_followed_before_a_later_dotdot(tmp_path: Path) -> None:
    wt = tmp_path / "p" / ".worktrees" / "w1"
    (wt / "src" / "pkg").mkdir(parents=True)
    os.symlink(".", wt / "s")
    os.symlink("src/pkg", wt / "deep")
    os.symlink(str(wt / "src"), wt / "abs")
    assert follow(f"{wt}/s/s/../../Makefile") == str(tmp_path / "p" / "Makefile")
    assert follow(f"{wt}/deep/../x.py") == f"{wt}/src/x.py"
    assert follow(f"{wt}/abs/pkg/../../s/up.txt") == f"{wt}/up.txt"
    for path in (f"{wt}/s/s/../../Makefile", f"{wt}/deep/../x.py", f"{wt}/new/../s/x/../y"):
        assert follow(path) == os.path.realpath(path), path
    # names that are not there: as written, a `..` taking off the one before it
    assert follow(f"{wt}/new/dir/../../s/../x") == str(tmp_path / "p" / ".worktrees" / "x")
    assert follow(f"{wt}/src/x.py/../y") == f"{wt}/src/y"  # a file: nothing below it


def test_a_loop_and_too_many_links_cannot_be_followed(tmp_path: Path) -> None:
    os.symlink("loop", tmp_path / "loop")
    os.symlink(".", tmp_path / "s")
    assert follow(f"{tmp_path}/loop/x") is None
    assert real_path(f"{tmp_path}/loop/x") is None
    assert follow(f"{tmp_path}/" + "s/" * 40 + "x") == f"{tmp_path}/x"
    assert follow(f"{tmp_path}/" + "s/" * 41 + "x") is None  # the system's limit (ELOOP)
    assert follow("/a\0b") is None  # never raises


def test_a_directory_deeper_than_path_max_is_not_looked_below(tmp_path: Path) -> None:
    """Existing directories deeper than ``PATH_MAX``: a link below them cannot be looked
    at by a path, but ``mkdir -p`` walks to it a name at a time."""
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        for _ in range(50):
            os.mkdir("d" * 100, dir_fd=fd)
            inner = os.open("d" * 100, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)
    deep = f"{tmp_path}/" + ("d" * 100 + "/") * 50
    assert follow(deep + "x") is None
    assert follow(f"{tmp_path}/" + ("d" * 100 + "/") * 30 + "x") is not None


def test_following_takes_one_look_per_name(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    os.symlink(".", tmp_path / "s")
    for path in (f"{tmp_path}/" + "src/../" * 580 + "x", f"{tmp_path}/" + "./" * 160_000,
                 "/proc/1/" * 40_000, f"{tmp_path}/" + "s/" * 160_000):  # fmt: skip
        start = time.perf_counter()
        follow(path)
        assert time.perf_counter() - start < 0.5, path[:40]


def test_a_name_that_is_not_utf8_cannot_be_known(tmp_path: Path) -> None:
    """Python looks up ``\\udc80`` as byte 0x80; Claude Code (Node) writes it as U+FFFD,
    another name: where such a path leads is not known."""
    os.symlink(".", tmp_path / "\ufffd")
    assert follow(f"{tmp_path}/\ufffd/\ufffd/../x") == str(tmp_path.parent / "x")
    assert follow(f"{tmp_path}/\udc80/\udc80/../../x") is None
    assert follow(f"{tmp_path}/\ud800") is None
    os.symlink(os.fsdecode(b"a\x80"), tmp_path / "odd")  # a link's target, not UTF-8
    assert follow(f"{tmp_path}/odd/x") is None


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = os.lstat

    def lstat(path: str, *args: object, **kwargs: object) -> os.stat_result:
        seen.append(path)
        return real(path)

    monkeypatch.setattr(os, "lstat", lstat)
    return seen


def test_one_judgement_looks_each_name_up_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    os.symlink("src", tmp_path / "lib")
    seen = _counting(monkeypatch)
    with judging():
        first = follow(f"{tmp_path}/lib/pkg/../x")
        looked = len(seen)
        assert follow(f"{tmp_path}/lib/pkg/../x") == first == f"{tmp_path}/src/x"
        assert len(seen) == looked  # the same path: not walked again
        assert real_path(f"{tmp_path}/lib/y") == f"{tmp_path}/src/y"
        assert len(set(seen)) == len(seen)  # each name looked up once
    follow(f"{tmp_path}/lib/y")  # a judgement's findings go with it
    assert len(seen) > len(set(seen))


def test_one_judgement_shares_one_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the judgement's budget, what is left is not known (before, each walk had a
    megabyte of its own, and fifty words through a deep link took 4 s)."""
    (tmp_path / "d").mkdir()
    names = f"{tmp_path}/d/x".split("/")[1:]
    first = sum(len("/" + "/".join(names[: i + 1])) for i in range(len(names)))
    monkeypatch.setattr(paths, "_JUDGEMENT_LOOKED", first)  # just what the first takes
    with judging():
        assert follow(f"{tmp_path}/d/x") == f"{tmp_path}/d/x"
        assert follow(f"{tmp_path}/d/y") is None  # d is known, y is one more lookup
        assert follow(f"{tmp_path}/d/x") == f"{tmp_path}/d/x"  # found before: kept
    assert follow(f"{tmp_path}/d/y") == f"{tmp_path}/d/y"  # a new judgement, a new budget


def test_a_name_too_long_to_be_there_is_as_written(tmp_path: Path) -> None:
    """Every word of a command is looked at (a bare ``tok`` may be a link): a long commit
    message's is a name longer than ``NAME_MAX``, not there, not one that cannot be known."""
    long = "word" * 1100
    assert follow(f"{tmp_path}/{long}") == f"{tmp_path}/{long}"
    assert follow(f"{tmp_path}/{long[:300]}/../x") == f"{tmp_path}/x"
    root, wt = tmp_path / "p", tmp_path / "p" / ".worktrees" / "w1"
    wt.mkdir(parents=True)
    assert isinstance(bash(f"git commit -m '{long}'", root=str(root)), Allow)
    assert isinstance(bash("echo " + "x" * 5000, root=str(root)), Allow)


def test_every_name_taken_counts_towards_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link's target of ``a/..`` 800 times is 1600 names for a few bytes looked up each:
    the names count too (500 words through 30 such links took 0.8 s)."""
    (tmp_path / "a").mkdir()
    os.symlink("a/.." + "/a/.." * 800, tmp_path / "z")
    assert follow(f"{tmp_path}/z/x") == f"{tmp_path}/x"
    monkeypatch.setattr(paths, "_JUDGEMENT_WALKED", 1000 * paths._STEP)
    with judging():
        assert follow(f"{tmp_path}/z/x") is None
