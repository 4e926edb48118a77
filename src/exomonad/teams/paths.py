"""Where Claude Code keeps team files, and the two name-sanitising rules it applies.

The config root is ``$CLAUDE_CONFIG_DIR`` if set, else ``~/.claude``. Claude Code stores

* the team config under ``teams/<config-name>/config.json`` where the config name is the
  team name lowercased with every char outside ``[a-zA-Z0-9]`` replaced by ``-``;
* inboxes under ``teams/<inbox-name>/inboxes/<member>.json`` where team and member keep
  their case and only chars outside ``[a-zA-Z0-9_-]`` become ``-``;
* tasks under ``tasks/<list>/<id>.json`` (list = ``$CLAUDE_CODE_TASK_LIST_ID`` or the
  inbox-sanitised team name).

So ``My Team`` keeps its config in ``my-team/`` and its inboxes in ``My-Team/``; on a
case-sensitive filesystem these are different directories, exactly as Claude Code does.

Symlinks: the config root may be one (dotfile setups link ``~/.claude``), and so may
anything above it. Nothing at or below ``teams/`` and ``tasks/`` is followed:
:meth:`TeamPaths.open_dir` opens a directory there component by component with
``O_NOFOLLOW`` and raises :class:`~exomonad.errors.SymlinkedDirectoryError` at a link.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from exomonad.errors import InvalidNameError
from exomonad.teams.dirs import SafeDir

__all__ = [
    "RESERVED_NAMES",
    "TeamPaths",
    "config_root",
    "sanitize_config_name",
    "sanitize_path_name",
    "validate_name",
]

#: Names Claude Code reserves; a synthetic member may not take them.
RESERVED_NAMES = frozenset({"main", "team-lead", "user", "system"})

_CONFIG_UNSAFE = re.compile(r"[^a-zA-Z0-9]")
_PATH_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_MAX_NAME = 200


def _js_dashes(match: re.Match[str]) -> str:
    """One dash per UTF-16 code unit, as JavaScript's non-``u`` regex replaces them."""
    return "-" * (2 if ord(match.group()) > 0xFFFF else 1)


def config_root(override: str | os.PathLike[str] | None = None) -> Path:
    """Return the Claude config root.

    Order: ``override``, then ``$CLAUDE_CONFIG_DIR``, then ``~/.claude``.
    """
    if override is not None:
        return Path(override).expanduser()
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".claude"


def validate_name(name: str, what: str = "name") -> str:
    """Refuse names that are empty, too long, or could escape a directory.

    Sanitising would turn ``../x`` into ``---x``; we refuse it instead, because a caller
    who passes such a name almost certainly has a bug, and silently writing to a
    different file than the one asked for is how messages get lost.

    >>> validate_name("gemini-1")
    'gemini-1'
    """
    if not isinstance(name, str) or not name.strip():
        raise InvalidNameError(f"{what} must be a non-empty string")
    if len(name) > _MAX_NAME:
        raise InvalidNameError(f"{what} is longer than {_MAX_NAME} characters")
    if "\x00" in name or "/" in name or "\\" in name or name in {".", ".."} or ".." in name:
        raise InvalidNameError(f"{what} {name!r} could escape its directory")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        raise InvalidNameError(f"{what} {name!r} contains control characters")
    return name


def sanitize_config_name(name: str) -> str:
    """The directory name Claude Code uses for a team's ``config.json``.

    >>> sanitize_config_name("My Team")
    'my-team'
    """
    return _CONFIG_UNSAFE.sub(_js_dashes, validate_name(name, "team name")).lower()


def sanitize_path_name(name: str) -> str:
    """The name Claude Code uses for inbox and task paths (case kept).

    >>> sanitize_path_name("My Team")
    'My-Team'
    >>> sanitize_path_name("a\U0001f600b")  # an astral char is two UTF-16 units in JS
    'a--b'
    """
    return _PATH_UNSAFE.sub(_js_dashes, validate_name(name))


@dataclass(frozen=True)
class TeamPaths:
    """All on-disk locations of one team under one config root.

    >>> p = TeamPaths("My Team", root=Path("/c"))
    >>> str(p.config_file), str(p.inbox("gemini 1"))
    ('/c/teams/my-team/config.json', '/c/teams/My-Team/inboxes/gemini-1.json')
    """

    team: str
    root: Path

    def __init__(self, team: str, root: str | os.PathLike[str] | None = None) -> None:
        object.__setattr__(self, "team", validate_name(team, "team name"))
        object.__setattr__(self, "root", config_root(root))

    def open_dir(self, directory: Path, *, create: bool = False) -> SafeDir:
        """Open ``directory`` (under :attr:`root`) refusing any symlink below the root.

        Every read and write of team and task files goes through the returned
        :class:`~exomonad.teams.dirs.SafeDir` (pass it as ``at=``). ``create`` makes
        missing directories (``mkdir -p``, never through a link).
        """
        return SafeDir.open(self.root, directory, create=create)

    @cached_property
    def teams_dir(self) -> Path:
        """``<root>/teams``."""
        return self.root / "teams"

    @cached_property
    def config_dir(self) -> Path:
        """Directory holding ``config.json`` (config-sanitised name)."""
        return self.teams_dir / sanitize_config_name(self.team)

    @cached_property
    def config_file(self) -> Path:
        """The team's ``config.json``."""
        return self.config_dir / "config.json"

    @cached_property
    def team_dir(self) -> Path:
        """Directory holding ``inboxes/`` (path-sanitised name, case kept)."""
        return self.teams_dir / sanitize_path_name(self.team)

    @cached_property
    def inboxes_dir(self) -> Path:
        """``teams/<team>/inboxes``; created lazily by writers."""
        return self.team_dir / "inboxes"

    def inbox(self, member: str) -> Path:
        """The inbox file of ``member``."""
        return self.inboxes_dir / f"{sanitize_path_name(member)}.json"

    def archive(self, member: str) -> Path:
        """JSONL file where compaction archives entries removed from ``member``'s inbox."""
        return self.inboxes_dir / f"{sanitize_path_name(member)}.archive.jsonl"

    @property
    def tasks_dir(self) -> Path:
        """``tasks/<list>``: ``$CLAUDE_CODE_TASK_LIST_ID`` or the path-sanitised team."""
        return _list_dir(self.root, os.environ.get("CLAUDE_CODE_TASK_LIST_ID") or self.team)


@lru_cache(maxsize=256)
def _list_dir(root: Path, list_id: str) -> Path:
    # Built once per (root, list): every task tool call asks for it.
    return root / "tasks" / sanitize_path_name(list_id)
