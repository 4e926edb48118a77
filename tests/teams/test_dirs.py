"""``SafeDir``: directories below the config root reached without following a symlink.

The config root itself (and anything above it) may be a symlink, as dotfile setups make
``~/.claude``; ``teams/``, ``tasks/`` and everything below them may not.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from exomonad.errors import ExomonadError, InvalidNameError, SymlinkedDirectoryError
from exomonad.teams.atomic import read_bytes, read_json_array, write_json_atomic
from exomonad.teams.dirs import SafeDir
from exomonad.teams.lock import FileLock, lock_dir_for


def tree(top: Path) -> dict[str, bytes | None]:
    """Every entry below ``top``: relative path → file bytes (None for a directory)."""
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), top)] = None
        for f in filenames:
            p = Path(dirpath, f)
            out[os.path.relpath(p, top)] = p.read_bytes()
    return out


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
def inboxes(root: Path) -> Path:
    d = root / "teams" / "t" / "inboxes"
    d.mkdir(parents=True)
    (d / "w.json").write_bytes(b"[]")
    return d


def test_the_error_is_typed_and_under_the_root_exception() -> None:
    from exomonad.errors import SymlinkRefusedError

    assert issubclass(SymlinkedDirectoryError, SymlinkRefusedError)
    assert issubclass(SymlinkedDirectoryError, ExomonadError)


def test_opens_a_plain_directory(root: Path, inboxes: Path) -> None:
    with SafeDir.open(root, inboxes) as d:
        assert d.path == inboxes
        assert d.root == root
        assert read_bytes(inboxes / "w.json", at=d) == b"[]"


@pytest.mark.parametrize("link", ["teams", "teams/t", "teams/t/inboxes"])
def test_a_symlink_at_or_below_teams_is_refused(
    root: Path, inboxes: Path, tmp_path: Path, link: str
) -> None:
    moved = tmp_path / "elsewhere"
    (root / link).rename(moved)
    (root / link).symlink_to(moved)
    before = tree(moved)
    with pytest.raises(SymlinkedDirectoryError) as info:
        SafeDir.open(root, inboxes)
    assert info.value.path == root / link
    assert info.value.target == inboxes
    message = str(info.value)
    assert str(root / link) in message
    assert "symlink" in message
    assert "teams/" in message  # says which rule refused it
    with pytest.raises(SymlinkedDirectoryError):
        SafeDir.open(root, inboxes, create=True)
    assert tree(moved) == before


def test_a_symlinked_root_and_links_above_it_are_allowed(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "claude"
    (real / "teams" / "t" / "inboxes").mkdir(parents=True)
    (tmp_path / "home").symlink_to(tmp_path / "dotfiles")  # a link above the root
    link = tmp_path / "home" / "claude-link"
    link.symlink_to(real)  # the root itself is a link
    with SafeDir.open(link, link / "teams" / "t" / "inboxes") as d:
        write_json_atomic(d.path / "w.json", [{"a": 1}], at=d)
    assert read_json_array(real / "teams" / "t" / "inboxes" / "w.json") == [{"a": 1}]


def test_create_makes_what_is_missing(root: Path) -> None:
    target = root / "tasks" / "list"
    with SafeDir.open(root, target, create=True) as d:
        assert d.path == target
    assert target.is_dir()


def test_create_makes_a_missing_root_too(tmp_path: Path) -> None:
    (tmp_path / "home").symlink_to(tmp_path, target_is_directory=True)
    root = tmp_path / "home" / "new" / "claude"  # missing, below a link
    with SafeDir.open(root, root / "teams" / "t", create=True):
        pass
    assert (tmp_path / "new" / "claude" / "teams" / "t").is_dir()
    with SafeDir.open(tmp_path / "other", tmp_path / "other", create=True):
        pass
    assert (tmp_path / "other").is_dir()


def test_create_never_creates_through_a_dangling_link(root: Path, tmp_path: Path) -> None:
    (root / "teams" / "t").mkdir(parents=True)
    planted = tmp_path / "planted"
    (root / "teams" / "t" / "inboxes").symlink_to(planted)
    with pytest.raises(SymlinkedDirectoryError):
        SafeDir.open(root, root / "teams" / "t" / "inboxes", create=True)
    assert not planted.exists()


def test_a_missing_directory_names_itself(root: Path) -> None:
    with pytest.raises(FileNotFoundError) as info:
        SafeDir.open(root, root / "teams" / "t" / "inboxes")
    assert info.value.filename == str(root / "teams")


def test_a_file_where_a_directory_should_be(root: Path) -> None:
    (root / "teams").write_bytes(b"")
    with pytest.raises(NotADirectoryError):
        SafeDir.open(root, root / "teams" / "t")


def test_paths_outside_the_root_are_refused(root: Path, tmp_path: Path) -> None:
    with pytest.raises(InvalidNameError):
        SafeDir.open(root, tmp_path / "other")
    with pytest.raises(InvalidNameError):
        SafeDir.open(root, root / "teams" / ".." / ".." / "x")


def test_at_must_be_the_files_own_directory(root: Path, inboxes: Path) -> None:
    with SafeDir.open(root, inboxes.parent) as d, pytest.raises(ValueError, match="not in"):
        read_bytes(inboxes / "w.json", at=d)


def test_work_stays_in_the_opened_directory_after_a_swap(
    root: Path, inboxes: Path, tmp_path: Path
) -> None:
    """The race an lstat check would lose: the directory is replaced by a link after it
    was checked. Everything done through the open directory lands in the real one."""
    attacker = tmp_path / "attacker"
    attacker.mkdir()
    (attacker / "w.json").write_bytes(b"[]")
    before = tree(attacker)
    moved = tmp_path / "moved-inboxes"
    inbox = inboxes / "w.json"
    with SafeDir.open(root, inboxes) as d:
        inboxes.rename(moved)
        inboxes.symlink_to(attacker)
        with FileLock(inbox, at=d):
            assert lock_dir_for(moved / "w.json").is_dir()
            write_json_atomic(inbox, [{"n": 1}], at=d)
            assert read_json_array(inbox, at=d) == [{"n": 1}]
    assert read_json_array(moved / "w.json") == [{"n": 1}]
    assert tree(attacker) == before


def test_no_descriptor_leaks(root: Path, inboxes: Path, tmp_path: Path) -> None:
    SafeDir.open(root, inboxes).close()  # warm up whatever the first call caches
    start = open_fds()
    for _ in range(50):
        with SafeDir.open(root, inboxes) as d:
            read_bytes(inboxes / "w.json", at=d)
    (root / "teams" / "t" / "inboxes").rename(tmp_path / "x")
    (root / "teams" / "t" / "inboxes").symlink_to(tmp_path / "x")
    for _ in range(50):
        with pytest.raises(SymlinkedDirectoryError):
            SafeDir.open(root, inboxes)
        with pytest.raises(FileNotFoundError):
            SafeDir.open(root, root / "teams" / "missing" / "inboxes")
    assert open_fds() == start
