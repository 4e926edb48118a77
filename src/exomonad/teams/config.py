"""Read and edit a team's ``config.json`` without disturbing what Claude Code owns.

Edits happen on the raw JSON under Claude Code's lock (``config.json.lock``): fields and
members we do not own are written back byte-for-byte equivalent. Synthetic members are
those with ``backendType == "exomonad"``; we only ever add, change or remove those.
Every read and write goes through the team directory opened without following symlinks
(:meth:`TeamPaths.open_dir`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from exomonad.errors import CorruptFileError, ExomonadError, InvalidNameError, TeamNotFoundError
from exomonad.teams.atomic import read_json, write_json_atomic
from exomonad.teams.dirs import SafeDir
from exomonad.teams.filecache import FileCache
from exomonad.teams.lock import DEFAULT_LOCK, FileLock
from exomonad.teams.models import (
    MEMBER_COLORS,
    SYNTHETIC_BACKEND,
    Member,
    TeamConfig,
    now_ms,
)
from exomonad.teams.paths import RESERVED_NAMES, TeamPaths, sanitize_path_name, validate_name

__all__ = [
    "create_team",
    "list_teams",
    "load_config",
    "load_config_in",
    "register_synthetic",
    "remove_all_synthetic",
    "remove_synthetic",
]


def _not_found(paths: TeamPaths) -> TeamNotFoundError:
    return TeamNotFoundError(
        f"team {paths.team!r} not found: no {paths.config_file} "
        f"(config root {paths.root}; set CLAUDE_CONFIG_DIR or --config-dir)"
    )


def _open_config_dir(paths: TeamPaths) -> SafeDir:
    """The team's config directory, opened without following symlinks."""
    try:
        return paths.open_dir(paths.config_dir)
    except FileNotFoundError:
        raise _not_found(paths) from None


def _read_raw(paths: TeamPaths, d: SafeDir) -> dict[str, Any]:
    try:
        data = read_json(paths.config_file, at=d)  # a symlink: SymlinkRefusedError
    except FileNotFoundError:
        raise _not_found(paths) from None
    return _checked_raw(paths.config_file, data)


def _checked_raw(path: Path, data: object) -> dict[str, Any]:
    if not isinstance(data, dict) or not isinstance(data.get("members", []), list):
        raise CorruptFileError(path, "not a team config object")
    return data


def _validated(path: Path, raw: dict[str, Any]) -> TeamConfig:
    try:
        return TeamConfig.from_json(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3]
        )
        raise CorruptFileError(path, f"not a valid team config ({problems})") from exc


_configs: FileCache[TeamConfig] = FileCache()


def load_config(paths: TeamPaths) -> TeamConfig:
    """Load and validate a team's config (no lock: the file is replaced atomically).

    Parsed once per version of the file (:mod:`~exomonad.teams.filecache`): while it is
    unchanged every caller gets the same :class:`TeamConfig`, so treat it as read-only.
    """
    with _open_config_dir(paths) as d:
        try:
            st = d.lstat(paths.config_file.name)
        except FileNotFoundError:
            raise _not_found(paths) from None
        cached = _configs.get(paths.config_file, st)
        if cached is not None:
            return cached
        raw = _read_raw(paths, d)
    config = _validated(paths.config_file, raw)
    _configs.put(paths.config_file, st, config)
    return config


def load_config_in(
    root: Path, directory: Path, wanted: Callable[[str], bool] = lambda name: True
) -> TeamConfig | None:
    """The config in ``directory``/``config.json`` (a directory under ``root``, whatever
    team it names), read once and cached like :func:`load_config`.

    None, without validating it, when the file names no team or a team ``wanted``
    refuses. Raises what :func:`load_config` raises for a bad file, and OSError
    (FileNotFoundError) when there is none.
    """
    path = directory / "config.json"
    with SafeDir.open(root, directory) as d:
        st = d.lstat(path.name)
        cached = _configs.get(path, st)
        if cached is not None:
            return cached if wanted(cached.name) else None
        data = read_json(path, at=d)
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(name, str) or not wanted(name):
        return None
    config = _validated(path, _checked_raw(path, data))
    _configs.put(path, st, config)
    return config


def list_teams(root: str | os.PathLike[str] | None = None) -> list[str]:
    """Names of all teams under the config root (from each ``config.json``'s ``name``).

    A team directory that is a symlink (or unreadable) is skipped, like a corrupt config.
    """
    probe = TeamPaths("x", root)
    try:
        with probe.open_dir(probe.teams_dir) as teams:
            entries = sorted(teams.listdir())
    except FileNotFoundError:
        return []
    names = []
    for entry in entries:
        if entry.startswith("."):  # as glob("*") skipped them
            continue
        try:
            with probe.open_dir(probe.teams_dir / entry) as d:
                data = read_json(d.path / "config.json", at=d)
        except (CorruptFileError, OSError):
            continue
        if isinstance(data, dict) and isinstance(data.get("name"), str):
            names.append(data["name"])
    return names


def _edit(paths: TeamPaths, change: Callable[[dict[str, Any]], bool]) -> None:
    """Apply ``change`` to the raw config under lock; write only if it returns True."""
    with _open_config_dir(paths) as d:
        _read_raw(paths, d)  # a missing team is TeamNotFoundError, not a failure to lock
        with FileLock(paths.config_file, DEFAULT_LOCK, at=d):
            data = _read_raw(paths, d)
            if change(data):
                write_json_atomic(paths.config_file, data, at=d)


def create_team(
    paths: TeamPaths, *, description: str | None = None, lead_session_id: str = ""
) -> TeamConfig:
    """Create a team the way 2.1.112's TeamCreate does (for tests, demos and headless use).

    Refuses to touch an existing team.
    """
    lead = f"team-lead@{paths.team}"
    data: dict[str, Any] = {
        "name": paths.team,
        "createdAt": now_ms(),
        "leadAgentId": lead,
        "leadSessionId": lead_session_id,
        "members": [
            {
                "agentId": lead,
                "name": "team-lead",
                "agentType": "team-lead",
                "joinedAt": now_ms(),
                "tmuxPaneId": "",
                "cwd": os.getcwd(),
                "subscriptions": [],
            }
        ],
    }
    if description is not None:
        data["description"] = description
    with paths.open_dir(paths.config_dir, create=True) as d:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
        try:
            os.close(os.open(paths.config_file.name, flags, 0o644, dir_fd=d.fd))
        except FileExistsError:
            raise ExomonadError(
                f"team {paths.team!r} already exists at {paths.config_file}"
            ) from None
        write_json_atomic(paths.config_file, data, at=d)
    paths.open_dir(paths.inboxes_dir, create=True).close()
    return TeamConfig.from_json(data)


def register_synthetic(
    paths: TeamPaths,
    name: str,
    *,
    agent_type: str = "exomonad-worker",
    pane: str | None = None,
    cwd: str | Path | None = None,
    color: str | None = None,
    model: str | None = None,
    prompt: str | None = None,
) -> Member:
    """Add (or update) synthetic member ``name``; idempotent by name.

    Refuses reserved names and names that belong to Claude Code's own members.
    ``pane`` is stored under our own key ``exomonadPane``; ``tmuxPaneId`` is
    ``"synthetic"`` so Claude Code never tries to drive the pane itself.
    """
    validate_name(name, "member name")
    if name in RESERVED_NAMES:
        raise InvalidNameError(f"member name {name!r} is reserved by Claude Code")
    result: dict[str, Any] = {}

    def change(data: dict[str, Any]) -> bool:
        members: list[Any] = data.setdefault("members", [])
        existing = next((m for m in members if isinstance(m, dict) and m.get("name") == name), None)
        if existing is not None and existing.get("backendType") != SYNTHETIC_BACKEND:
            raise InvalidNameError(
                f"{name!r} is already a Claude Code member of team {paths.team!r}"
            )
        _refuse_shared_inbox(name, members, paths.team)
        used = {m.get("color") for m in members if isinstance(m, dict)}
        entry: dict[str, Any] = (
            existing
            if existing is not None
            else {
                "agentId": f"{name}@{paths.team}",
                "name": name,
                "joinedAt": now_ms(),
                "subscriptions": [],
                "color": color or next((c for c in MEMBER_COLORS if c not in used), "blue"),
            }
        )
        before = dict(entry)
        entry.update(
            agentType=agent_type,
            tmuxPaneId="synthetic",
            cwd=str(cwd) if cwd is not None else entry.get("cwd", os.getcwd()),
            backendType=SYNTHETIC_BACKEND,
            isActive=True,
        )
        for key, value in (
            ("exomonadPane", pane),
            ("color", color),
            ("model", model),
            ("prompt", prompt),
        ):
            if value is not None:
                entry[key] = value
        if existing is None:
            members.append(entry)
        result.update(entry)
        return existing is None or entry != before

    _edit(paths, change)
    return Member.from_json(result)


def _refuse_shared_inbox(name: str, members: list[Any], team: str) -> None:
    """Refuse a name whose inbox file would be someone else's (``team lead`` → team-lead)."""
    stem = sanitize_path_name(name)
    others = [
        str(m.get("name"))
        for m in members
        if isinstance(m, dict) and isinstance(m.get("name"), str) and m.get("name") != name
    ]
    for other in [*sorted(RESERVED_NAMES - {name}), *others]:
        if sanitize_path_name(other) == stem:
            raise InvalidNameError(
                f"member name {name!r} would share the inbox file {stem}.json with {other!r} "
                f"in team {team!r}"
            )


def remove_synthetic(paths: TeamPaths, name: str) -> bool:
    """Remove synthetic member ``name``; False if absent. Claude Code's members are refused."""
    removed = False

    def change(data: dict[str, Any]) -> bool:
        nonlocal removed
        members = data.get("members", [])
        for i, m in enumerate(members):
            if isinstance(m, dict) and m.get("name") == name:
                if m.get("backendType") != SYNTHETIC_BACKEND:
                    raise InvalidNameError(
                        f"{name!r} is a Claude Code member, not an ExoMonad one; not removed"
                    )
                del members[i]
                removed = True
                return True
        return False

    _edit(paths, change)
    return removed


def remove_all_synthetic(paths: TeamPaths) -> list[str]:
    """Remove every synthetic member at once (e.g. before TeamDelete); returns their names."""
    names: list[str] = []

    def change(data: dict[str, Any]) -> bool:
        keep = []
        for m in data.get("members", []):
            if isinstance(m, dict) and m.get("backendType") == SYNTHETIC_BACKEND:
                names.append(str(m.get("name")))
            else:
                keep.append(m)
        data["members"] = keep
        return bool(names)

    _edit(paths, change)
    return names
