"""Pin the public API (the httpx habit): changing it must be a deliberate, visible edit."""

from __future__ import annotations

import inspect
from types import ModuleType

import pytest

import exomonad.errors
import exomonad.teams

TEAMS_ALL = [
    "CLAUDE_INBOX_LOCK",
    "CLAUDE_TASK_LOCK",
    "DEFAULT_DIALECT",
    "DEFAULT_LOCK",
    "DIALECTS",
    "SYNTHETIC_BACKEND",
    "TASK_STATUSES",
    "ClaimRefusedError",
    "CompactionResult",
    "Dialect",
    "FileLock",
    "InboxMessage",
    "LockSettings",
    "Mailbox",
    "Member",
    "MemberPresence",
    "Presence",
    "SafeDir",
    "Task",
    "TaskStore",
    "TeamConfig",
    "TeamPaths",
    "config_root",
    "create_team",
    "get_dialect",
    "list_teams",
    "load_config",
    "message_identity",
    "read_json_array",
    "register_synthetic",
    "remove_all_synthetic",
    "remove_synthetic",
    "sanitize_config_name",
    "sanitize_path_name",
    "team_presence",
    "write_json_atomic",
]

ERRORS_ALL = [
    "CorruptFileError",
    "DeliveryError",
    "ExomonadError",
    "GateError",
    "InvalidNameError",
    "LockCompromisedError",
    "LockError",
    "PaneError",
    "SandboxError",
    "ServerError",
    "ServerNotRunningError",
    "StateDirError",
    "SymlinkRefusedError",
    "SymlinkedDirectoryError",
    "TaskError",
    "TeamNotFoundError",
    "UnknownRecipientError",
    "UnknownRuntimeError",
]

#: The documented exception tree: class -> its ExoMonad parent.
ERROR_PARENTS = {
    "GateError": "ExomonadError",
    "InvalidNameError": "ExomonadError",
    "TeamNotFoundError": "ExomonadError",
    "UnknownRecipientError": "ExomonadError",
    "CorruptFileError": "ExomonadError",
    "SymlinkRefusedError": "CorruptFileError",
    "SymlinkedDirectoryError": "SymlinkRefusedError",
    "LockError": "ExomonadError",
    "LockCompromisedError": "LockError",
    "DeliveryError": "ExomonadError",
    "TaskError": "ExomonadError",
    "PaneError": "ExomonadError",
    "SandboxError": "ExomonadError",
    "UnknownRuntimeError": "ExomonadError",
    "ServerNotRunningError": "ExomonadError",
    "ServerError": "ExomonadError",
    "StateDirError": "ExomonadError",
}


def test_teams_all_is_pinned() -> None:
    assert list(exomonad.teams.__all__) == TEAMS_ALL


def test_errors_all_is_pinned() -> None:
    assert list(exomonad.errors.__all__) == ERRORS_ALL


@pytest.mark.parametrize("module", [exomonad.teams, exomonad.errors])
def test_every_exported_name_exists_and_all_is_sorted(module: ModuleType) -> None:
    names: list[str] = list(module.__all__)
    assert len(set(names)) == len(names)
    for name in names:
        assert hasattr(module, name), name
    # ruff's RUF022 order: SCREAMING_CASE, then CamelCase, then the rest.
    assert names == sorted(names, key=lambda n: (not n.isupper(), not n[:1].isupper(), n))


def test_teams_exports_come_from_their_modules() -> None:
    for name in TEAMS_ALL:
        obj = getattr(exomonad.teams, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__module__.startswith("exomonad.teams."), name


def test_error_tree_is_as_documented() -> None:
    root = exomonad.errors.ExomonadError
    assert root.__bases__ == (Exception,)
    for name, parent in ERROR_PARENTS.items():
        cls = getattr(exomonad.errors, name)
        assert issubclass(cls, root)
        assert getattr(exomonad.errors, parent) in cls.__bases__, name
        assert name in (exomonad.errors.__doc__ or "")
    assert issubclass(exomonad.errors.InvalidNameError, ValueError)
    assert set(ERROR_PARENTS) | {"ExomonadError"} == set(ERRORS_ALL)


def test_corrupt_file_error_carries_path_and_reason(tmp_path: object) -> None:
    from pathlib import Path

    err = exomonad.errors.CorruptFileError(Path("/x/inbox.json"), "not valid JSON")
    assert err.path == Path("/x/inbox.json")
    assert err.reason == "not valid JSON"
    assert str(err) == "/x/inbox.json: not valid JSON (file left untouched)"
