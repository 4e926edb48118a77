"""The public surface of :mod:`exomonad.panes`: pinned ``__all__``, factory, config."""

from __future__ import annotations

from pathlib import Path

import pytest

from exomonad import panes
from exomonad.errors import PaneError
from exomonad.panes import (
    DEFAULT_ENTER_DELAY,
    ENTER_DELAY_ENV,
    FakePaneBackend,
    PaneBackend,
    TmuxBackend,
    ZellijBackend,
    get_backend,
)


def test_all_is_pinned() -> None:
    assert sorted(panes.__all__) == sorted(
        [
            "BACKENDS",
            "Command",
            "DEFAULT_ENTER_DELAY",
            "DEFAULT_SPOOL_THRESHOLD",
            "DeliveryReceipt",
            "ENTER_DELAY_ENV",
            "FakePane",
            "FakePaneBackend",
            "KeystrokeBackend",
            "Outgoing",
            "PaneBackend",
            "PtyBackend",
            "Spool",
            "StdinBackend",
            "TextSink",
            "TmuxBackend",
            "ZellijBackend",
            "get_backend",
            "is_safe",
            "sanitize",
        ]
    )
    for name in panes.__all__:
        assert hasattr(panes, name), name


@pytest.mark.parametrize(
    ("kind", "cls"), [("tmux", TmuxBackend), ("zellij", ZellijBackend), ("fake", FakePaneBackend)]
)
def test_get_backend_builds_each_kind(kind: str, cls: type, tmp_path: Path) -> None:
    backend = get_backend(kind, spool_dir=tmp_path)
    assert type(backend) is cls
    assert isinstance(backend, PaneBackend)
    assert backend.spool.directory == tmp_path


def test_get_backend_passes_options_and_rejects_unknown() -> None:
    tmux = get_backend("tmux", socket_name="work", enter_delay=0.5, method="send-keys")
    assert (tmux.socket_name, tmux.enter_delay, tmux.method) == ("work", 0.5, "send-keys")
    with pytest.raises(ValueError, match="unknown pane backend 'screen'"):
        get_backend("screen")


def test_enter_delay_default_env_and_argument(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENTER_DELAY_ENV, raising=False)
    assert TmuxBackend().enter_delay == DEFAULT_ENTER_DELAY == 0.12
    monkeypatch.setenv(ENTER_DELAY_ENV, "0.3")
    assert TmuxBackend().enter_delay == 0.3
    assert ZellijBackend().enter_delay == 0.3
    assert TmuxBackend(enter_delay=0.05).enter_delay == 0.05
    monkeypatch.setenv(ENTER_DELAY_ENV, "soon")
    with pytest.raises(ValueError, match=ENTER_DELAY_ENV):
        TmuxBackend()


def test_missing_tmux_executable_is_a_pane_error(tmp_path: Path) -> None:
    backend = TmuxBackend(executable=str(tmp_path / "no-tmux"), lock_dir=tmp_path)
    assert not backend.exists("%1")
    with pytest.raises(PaneError, match="not found"):
        backend.deliver("%1", "hello")


def test_invalid_options_are_rejected() -> None:
    with pytest.raises(ValueError, match="enter_delay"):
        TmuxBackend(enter_delay=-1)
    with pytest.raises(ValueError, match="max_enter_attempts"):
        TmuxBackend(max_enter_attempts=0)
    with pytest.raises(ValueError, match="method"):
        TmuxBackend(method="telepathy")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="chunk_size"):
        TmuxBackend(chunk_size=0)
