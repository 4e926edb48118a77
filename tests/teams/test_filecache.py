"""Values read off team files, reused while the file is unchanged (config, tasks, presence)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import orjson

from exomonad.teams.config import load_config, register_synthetic
from exomonad.teams.filecache import SETTLED, FileCache
from exomonad.teams.mailbox import Mailbox
from exomonad.teams.paths import TeamPaths
from exomonad.teams.presence import Presence, team_presence
from exomonad.teams.protocol import IdleNotification, encode
from exomonad.teams.tasks import TaskStore
from exomonad.util.waiting import retry_until


def settle(path: Path) -> None:
    """Wait until ``path`` is old enough for its version to be trusted."""
    ctime = os.lstat(path).st_ctime_ns
    retry_until(lambda: time.time_ns() - ctime >= SETTLED * 1e9, timeout=5)


def test_a_settled_config_is_parsed_once_per_version(team: TeamPaths) -> None:
    settle(team.config_file)
    first = load_config(team)
    assert load_config(team) is first
    register_synthetic(team, "gemini-1")
    changed = load_config(team)
    assert changed is not first
    assert changed.member("gemini-1") is not None


def test_a_config_rewritten_at_once_is_never_served_stale(team: TeamPaths) -> None:
    # In place, same size, right after a read: the same coarse mtime and ctime are
    # likely, so only the "settled" rule keeps the old parse from being reused.
    data = orjson.loads(team.config_file.read_bytes())
    for n in range(50):
        data["description"] = f"v{n % 10}"
        with team.config_file.open("r+b") as fh:  # in place, as Claude Code 2.1.112 does
            fh.write(orjson.dumps(data))
            fh.truncate()
        assert load_config(team).description == f"v{n % 10}"


def test_what_an_inbox_says_follows_each_new_entry(team: TeamPaths) -> None:
    register_synthetic(team, "gemini-1")
    mb = Mailbox(team, durable=False)
    mb.send("team-lead", sender="gemini-1", text="working on it")
    settle(team.inbox("team-lead"))
    assert team_presence(team)["gemini-1"].state is Presence.ACTIVE
    assert team_presence(team)["gemini-1"].state is Presence.ACTIVE  # from the cache
    idle = IdleNotification(from_="gemini-1", timestamp="2099-01-01T00:00:00.000Z")
    mb.send("team-lead", sender="gemini-1", text=encode(idle), timestamp=idle.timestamp)
    assert team_presence(team)["gemini-1"].state is Presence.IDLE


def test_a_task_read_after_an_update_is_the_updated_one(team: TeamPaths) -> None:
    store = TaskStore(team, durable=False)
    task = store.create("write the docs")
    settle(store.path(task.id))
    assert store.get(task.id).status == "pending"
    store.update(task.id, status="in_progress")
    assert store.get(task.id).status == "in_progress"
    assert [t.status for t in store.list()] == ["in_progress"]


def test_only_regular_files_settled_long_enough_are_kept(tmp_path: Path) -> None:
    cache: FileCache[str] = FileCache()
    f = tmp_path / "f.json"
    f.write_text("[]")
    st = os.lstat(f)
    cache.put(f, st, "fresh", now_ns=st.st_ctime_ns)  # written just now: not kept
    assert cache.get(f, st) is None
    cache.put(f, st, "settled", now_ns=st.st_ctime_ns + int(SETTLED * 1e9))
    assert cache.get(f, st) == "settled"
    link = tmp_path / "link.json"
    link.symlink_to(f)
    lst = os.lstat(link)
    cache.put(link, lst, "link", now_ns=lst.st_ctime_ns + 10**10)
    assert cache.get(link, lst) is None


def test_the_cache_is_bounded(tmp_path: Path) -> None:
    cache: FileCache[int] = FileCache(max_entries=3)
    files = [tmp_path / f"{n}.json" for n in range(4)]
    for n, f in enumerate(files):
        f.write_text("[]")
        st = os.lstat(f)
        cache.put(f, st, n, now_ns=st.st_ctime_ns + 10**10)
    kept = [cache.get(f, os.lstat(f)) for f in files]
    assert kept == [None, None, None, 3]
