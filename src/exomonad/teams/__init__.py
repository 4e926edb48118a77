"""Claude Code's team protocol on disk: pure, synchronous, lock-compatible.

No server, no tmux, no asyncio here: paths, directories opened without following
symlinks, the proper-lockfile compatible lock, atomic JSON writes, typed models, team
config (synthetic members), mailbox, tasks, protocol messages, presence and dialects.
"""

from __future__ import annotations

from exomonad.teams.atomic import read_json_array, write_json_atomic
from exomonad.teams.config import (
    create_team,
    list_teams,
    load_config,
    register_synthetic,
    remove_all_synthetic,
    remove_synthetic,
)
from exomonad.teams.dialects import DEFAULT_DIALECT, DIALECTS, Dialect, get_dialect
from exomonad.teams.dirs import SafeDir
from exomonad.teams.lock import (
    CLAUDE_INBOX_LOCK,
    CLAUDE_TASK_LOCK,
    DEFAULT_LOCK,
    FileLock,
    LockSettings,
)
from exomonad.teams.mailbox import CompactionResult, Mailbox
from exomonad.teams.models import (
    SYNTHETIC_BACKEND,
    InboxMessage,
    Member,
    Task,
    TeamConfig,
    message_identity,
)
from exomonad.teams.paths import TeamPaths, config_root, sanitize_config_name, sanitize_path_name
from exomonad.teams.presence import MemberPresence, Presence, team_presence
from exomonad.teams.tasks import TASK_STATUSES, ClaimRefusedError, TaskStore

__all__ = [
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
