"""Tests for :mod:`exomonad.panes.spool`: what gets typed, and what goes to a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from exomonad.panes.spool import SPOOL_DIR_ENV, Spool, default_spool_dir


def test_short_single_line_is_typed_directly(tmp_path: Path) -> None:
    out = Spool(tmp_path).prepare("hello \x1b[31mworld\x1b[0m\n")
    assert out.line == "hello world"
    assert out.spool_path is None
    assert list(tmp_path.iterdir()) == []


def test_multiline_goes_to_a_file_with_a_pointer(tmp_path: Path) -> None:
    text = "first line\n\tindented\x1b[2J\nlast"
    out = Spool(tmp_path).prepare(text, sender="team-lead")
    assert out.spool_path is not None
    assert out.spool_path.parent == tmp_path
    assert out.spool_path.read_text("utf-8") == "first line\n\tindented\nlast"
    assert out.line == f"[exomonad] message from team-lead is in {out.spool_path} — read it"
    assert "team-lead" in out.spool_path.name
    assert "\n" not in out.line


def test_long_line_goes_to_a_file(tmp_path: Path) -> None:
    spool = Spool(tmp_path, threshold=100)
    assert spool.prepare("x" * 100).spool_path is None
    out = spool.prepare("y" * 101)
    assert out.spool_path is not None
    assert out.spool_path.read_text("utf-8") == "y" * 101
    assert out.line.startswith("[exomonad] a message is in ")


def test_sender_cannot_inject_into_the_pointer_or_path(tmp_path: Path) -> None:
    out = Spool(tmp_path).prepare("a\nb", sender="evil\x1b[31m/../\n x")
    assert out.spool_path is not None
    assert out.spool_path.parent == tmp_path
    assert "\x1b" not in out.line
    assert "\n" not in out.line


def test_empty_message_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="empty"):
        Spool(tmp_path).prepare("\x1b[31m\x03\n\n")


def test_spool_files_are_unique_and_private(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    paths = {spool.write("same", sender="a") for _ in range(20)}
    assert len(paths) == 20
    assert (tmp_path / "spool").stat().st_mode & 0o777 == 0o700
    assert not [p for p in (tmp_path / "spool").iterdir() if p.name.startswith(".tmp")]


def test_threshold_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="threshold"):
        Spool(tmp_path, threshold=0)


def test_default_dir_honours_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SPOOL_DIR_ENV, str(tmp_path / "from-env"))
    assert default_spool_dir() == tmp_path / "from-env"
    assert Spool().directory == tmp_path / "from-env"
    monkeypatch.delenv(SPOOL_DIR_ENV)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert default_spool_dir() == tmp_path / "exomonad" / "spool"
