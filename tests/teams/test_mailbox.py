"""Mailbox: append per dialect, recipient checks, corrupt inboxes, mark read, compaction."""

from __future__ import annotations

import errno
import os
import re
import tempfile
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exomonad.errors import (
    CorruptFileError,
    DeliveryError,
    InvalidNameError,
    LockError,
    TeamNotFoundError,
    UnknownRecipientError,
)
from exomonad.teams import inbox_io
from exomonad.teams.atomic import Staged, commit_staged, dump_json, stage_json
from exomonad.teams.config import create_team, register_synthetic
from exomonad.teams.dialects import DIALECTS, Dialect
from exomonad.teams.lock import FileLock, lock_dir_for
from exomonad.teams.mailbox import CompactionResult, Mailbox
from exomonad.teams.models import InboxMessage, message_identity
from exomonad.teams.paths import TeamPaths
from tests.teams.conftest import TINY_LOCK, MailboxFactory, leftovers

OLD = DIALECTS["2.1.112"]
NEW = DIALECTS["2.1.330"]
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def seed(paths: TeamPaths, member: str, entries: list[dict[str, Any]]) -> bytes:
    """Write ``member``'s inbox the way Claude Code would; return the bytes."""
    paths.inboxes_dir.mkdir(parents=True, exist_ok=True)
    data = dump_json(entries)
    paths.inbox(member).write_bytes(data)
    return data


def entry(n: int, *, read: bool | None = None, sender: str = "team-lead") -> dict[str, Any]:
    """A Claude Code style entry without ids (identity = content hash)."""
    out: dict[str, Any] = {
        "from": sender,
        "text": f"message {n}",
        "timestamp": f"2026-01-01T00:00:{n:02d}.000Z",
    }
    if read is not None:
        out["read"] = read
    return out


def ids(mb: Mailbox, member: str) -> list[str]:
    return [message_identity(e) for e in mb.read_raw(member)]


# -- send / append ---------------------------------------------------------------------


def test_send_returns_the_id_of_the_entry_it_wrote(
    make_mailbox: MailboxFactory, dialect: Dialect
) -> None:
    mb = make_mailbox(dialect=dialect)
    mid = mb.send("team-lead", sender="gemini-1", text="done", summary="s", color="blue")
    [raw] = mb.read_raw("team-lead")
    assert raw["messageId"] == mid
    assert message_identity(raw) == mid
    assert raw["from"] == "gemini-1"
    assert raw["text"] == "done"
    assert raw["summary"] == "s"
    assert raw["color"] == "blue"
    assert ISO.fullmatch(raw["timestamp"])
    assert "read" not in raw


def test_2_1_112_entries_carry_no_envelope(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox(dialect=OLD)
    mid = mb.send("team-lead", sender="gemini-1", text="hi")
    [raw] = mb.read_raw("team-lead")
    assert set(raw) == {"from", "text", "timestamp", "messageId"}
    assert raw["messageId"] == mid


def test_2_1_330_entries_carry_the_envelope(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox(dialect=NEW)
    mid = mb.send("team-lead", sender="gemini-1", text="hi")
    [raw] = mb.read_raw("team-lead")
    assert raw == {
        "from": "gemini-1",
        "text": "hi",
        "timestamp": raw["timestamp"],
        "msgV": 1,
        "msg_id": mid,
        "type": "message",
        "messageId": mid,
    }


def test_default_dialect_follows_env(team: TeamPaths, monkeypatch: pytest.MonkeyPatch) -> None:
    assert Mailbox(team).dialect is NEW
    monkeypatch.setenv("EXOMONAD_CLAUDE_DIALECT", "2.1.112")
    assert Mailbox(team).dialect is OLD


def test_send_extra_fields_and_file_format(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox(dialect=OLD)
    mb.send("team-lead", sender="gemini-1", text="ü ✓", lead_sig="abc", priority=2)
    path = mb.paths.inbox("team-lead")
    [raw] = mb.read_raw("team-lead")
    assert raw["lead_sig"] == "abc"
    assert raw["priority"] == 2
    assert path.read_bytes() == dump_json([raw])  # pretty, JSON.stringify(x, null, 2)
    assert "ü ✓".encode() in path.read_bytes()


def test_appends_keep_order_and_existing_entries(
    make_mailbox: MailboxFactory, dialect: Dialect
) -> None:
    mb = make_mailbox(dialect=dialect)
    seed(mb.paths, "team-lead", [entry(0), {**entry(1), "weird": [1, {"x": None}]}])
    new = [mb.send("team-lead", sender="g", text=f"t{i}") for i in range(3)]
    raws = mb.read_raw("team-lead")
    assert raws[:2] == [entry(0), {**entry(1), "weird": [1, {"x": None}]}]
    assert [r["messageId"] for r in raws[2:]] == new
    assert len(set(new)) == 3


def test_inbox_dir_and_file_are_created_lazily(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox()
    mb.paths.inboxes_dir.rmdir()
    assert not mb.paths.inboxes_dir.exists()
    mb.send("team-lead", sender="g", text="hi")
    assert mb.paths.inbox("team-lead").is_file()
    assert len(mb.read_raw("team-lead")) == 1
    assert leftovers(mb.paths.inboxes_dir) == []
    assert sorted(p.name for p in mb.paths.inboxes_dir.iterdir()) == ["team-lead.json"]


def test_absent_file_is_created_as_empty_array_before_locking(
    make_mailbox: MailboxFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bytes] = []

    class Recording(FileLock):
        def acquire(self) -> None:
            seen.append(self.target.read_bytes())  # what Claude Code would find right now
            super().acquire()

    monkeypatch.setattr(inbox_io, "FileLock", Recording)
    mb = make_mailbox()
    mb.send("team-lead", sender="g", text="hi")
    assert seen == [b"[]"]


def test_existing_file_is_not_reset(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox()
    seed(mb.paths, "team-lead", [entry(0)])
    mb.send("team-lead", sender="g", text="hi")
    assert mb.read_raw("team-lead")[0] == entry(0)


def test_append_inbox_message_model(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox(dialect=OLD)
    msg = InboxMessage(
        sender="gemini-1", text="hi", timestamp="2026-01-01T00:00:00.000Z", summary="s"
    )
    mid = mb.append("team-lead", msg)
    [raw] = mb.read_raw("team-lead")
    assert raw == {**msg.to_json(), "messageId": mid}
    assert mb.read("team-lead")[0].sender == "gemini-1"


def test_append_keeps_a_given_message_id(make_mailbox: MailboxFactory, dialect: Dialect) -> None:
    mb = make_mailbox(dialect=dialect)
    assert mb.append("team-lead", {**entry(0), "messageId": "mine"}) == "mine"
    [raw] = mb.read_raw("team-lead")
    assert raw["messageId"] == "mine"
    assert message_identity(raw) == "mine"


def test_append_of_a_claude_entry_uses_its_msg_id(
    make_mailbox: MailboxFactory, dialect: Dialect
) -> None:
    mb = make_mailbox(dialect=dialect)
    forwarded = {**entry(0), "msgV": 1, "msg_id": "claude-uuid", "type": "message"}
    assert mb.append("team-lead", forwarded) == "claude-uuid"
    assert ids(mb, "team-lead") == ["claude-uuid"]


def test_append_with_conflicting_ids_lands_once(make_mailbox: MailboxFactory) -> None:
    # message_identity prefers msg_id; append must return (and verify) that same identity,
    # or verification fails and every retry appends another copy.
    mb = make_mailbox(dialect=OLD, attempts=3)
    mid = mb.append("team-lead", {**entry(0), "msg_id": "m1", "messageId": "m2"})
    assert ids(mb, "team-lead") == [mid]


def test_append_does_not_mutate_the_callers_dict(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox(dialect=NEW)
    e = entry(0)
    mb.append("team-lead", e)
    assert e == entry(0)


@pytest.mark.parametrize("missing", ["from", "text", "timestamp"])
def test_entry_without_required_field_is_refused(
    make_mailbox: MailboxFactory, missing: str
) -> None:
    mb = make_mailbox()
    e = entry(0)
    del e[missing]
    with pytest.raises(DeliveryError, match=missing):
        mb.append("team-lead", e)
    with pytest.raises(DeliveryError):
        mb.append("team-lead", {**entry(0), missing: 5})
    assert not mb.paths.inbox("team-lead").exists()


# -- recipients ------------------------------------------------------------------------


def test_unknown_recipient_is_refused_without_a_phantom_inbox(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox()
    with pytest.raises(UnknownRecipientError, match="rust-impl") as info:
        mb.send("rust-impl", sender="team-lead", text="hi")
    assert "team-lead" in str(info.value)  # lists the real members
    assert not mb.paths.inbox("rust-impl").exists()
    assert list(mb.paths.inboxes_dir.iterdir()) == []


def test_user_lead_and_members_are_valid_recipients(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox()
    register_synthetic(mb.paths, "gemini-1")
    for to in ("user", "team-lead", "gemini-1"):
        mid = mb.send(to, sender="x", text="hi")
        assert ids(mb, to) == [mid]


def test_custom_lead_name_is_a_valid_recipient(root: Path) -> None:
    paths = TeamPaths("beta", root)
    create_team(paths)
    raw = orjson.loads(paths.config_file.read_bytes())
    raw["leadAgentId"] = "boss@beta"
    raw["members"] = []
    paths.config_file.write_bytes(dump_json(raw))
    mb = Mailbox(paths, durable=False)
    mb.send("boss", sender="g", text="hi")
    assert len(mb.read_raw("boss")) == 1


def test_check_member_false_skips_the_roster(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox()
    mb.send("stranger", sender="g", text="hi", check_member=False)
    assert len(mb.read_raw("stranger")) == 1


@pytest.mark.parametrize("check", [True, False])
@pytest.mark.parametrize("to", ["../x", "a/b", "", "a\x00"])
def test_recipient_names_that_escape_are_refused(
    make_mailbox: MailboxFactory, to: str, check: bool
) -> None:
    mb = make_mailbox()
    with pytest.raises(InvalidNameError):
        mb.send(to, sender="g", text="hi", check_member=check)
    assert list(mb.paths.inboxes_dir.iterdir()) == []


def test_missing_team_is_team_not_found(root: Path) -> None:
    mb = Mailbox(TeamPaths("ghost", root))
    with pytest.raises(TeamNotFoundError):
        mb.send("team-lead", sender="g", text="hi")
    assert not (root / "teams").exists()


# -- corrupt inboxes -------------------------------------------------------------------

CORRUPT = [
    pytest.param(b"{}", id="object"),
    pytest.param(b"[1]", id="number-entry"),
    pytest.param(b'[{"a"', id="truncated"),
    pytest.param(b'"text"', id="string"),
    pytest.param(b"null", id="null"),
    pytest.param(b'[{"from": "a", "text": "x", "timestamp": "t"}, "oops"]', id="mixed"),
    pytest.param(b"[1,]", id="trailing-comma"),
]


@pytest.mark.parametrize("content", CORRUPT)
def test_corrupt_inbox_is_never_overwritten(
    make_mailbox: MailboxFactory, content: bytes, dialect: Dialect
) -> None:
    mb = make_mailbox(dialect=dialect)
    path = mb.paths.inbox("team-lead")
    path.write_bytes(content)
    ops: list[Callable[[], object]] = [
        lambda: mb.send("team-lead", sender="g", text="hi"),
        lambda: mb.read_raw("team-lead"),
        lambda: mb.read("team-lead"),
        lambda: mb.mark_read("team-lead", ["x"]),
        lambda: mb.compact("team-lead", max_entries=0, max_bytes=0),
    ]
    for op in ops:
        with pytest.raises(CorruptFileError) as info:
            op()
        assert info.value.path == path
        assert path.read_bytes() == content
    assert leftovers(mb.paths.inboxes_dir) == []
    assert not mb.paths.archive("team-lead").exists()


@pytest.mark.parametrize("content", [b"", b"  \n"])
def test_empty_inbox_file_is_treated_as_empty(make_mailbox: MailboxFactory, content: bytes) -> None:
    mb = make_mailbox()
    mb.paths.inbox("team-lead").write_bytes(content)
    assert mb.read("team-lead") == []
    mid = mb.send("team-lead", sender="g", text="hi")
    assert ids(mb, "team-lead") == [mid]


# -- reading ---------------------------------------------------------------------------


def test_read_models_skip_malformed_and_filter_unread(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox()
    seed(
        mb.paths,
        "gemini-1",
        [
            entry(0, read=True),
            {"from": "a", "text": "no timestamp"},
            entry(1),
            {"from": 5, "text": "x", "timestamp": "t"},
            entry(2, read=False),
            {**entry(3), "custom": {"k": 1}},
        ],
    )
    assert [m.text for m in mb.read("gemini-1")] == [
        "message 0",
        "message 1",
        "message 2",
        "message 3",
    ]
    unread = mb.read("gemini-1", unread_only=True)
    assert [m.text for m in unread] == ["message 1", "message 2", "message 3"]
    assert unread[-1].model_extra == {"custom": {"k": 1}}
    assert len(mb.read_raw("gemini-1")) == 6


@pytest.mark.parametrize(
    "odd",
    [
        pytest.param({"summary": 5}, id="numeric-summary"),
        pytest.param({"color": {"name": "red"}}, id="object-color"),
        pytest.param({"read": "sometimes"}, id="string-read"),
    ],
)
def test_read_skips_entries_with_odd_known_fields(
    make_mailbox: MailboxFactory, odd: dict[str, Any]
) -> None:
    # "malformed entries are skipped": a foreign entry whose optional field has another
    # type (a future Claude Code, a buggy peer) must not make the whole inbox unreadable,
    # nor raise a non-ExomonadError (pydantic's ValidationError).
    mb = make_mailbox()
    seed(mb.paths, "gemini-1", [{**entry(0), **odd}, entry(1)])
    assert [m.text for m in mb.read("gemini-1")] == ["message 1"]
    assert len(mb.read_raw("gemini-1")) == 2


def test_reading_an_absent_inbox_creates_nothing(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox()
    assert mb.read("gemini-1") == []
    assert mb.read_raw("gemini-1") == []
    assert not mb.paths.inbox("gemini-1").exists()


# -- mark read -------------------------------------------------------------------------

MIXED = [
    entry(0),  # 2.1.112 style: identity is the content hash
    {**entry(1), "msgV": 1, "msg_id": "claude-1", "type": "message"},  # 2.1.330 style
    {**entry(2), "messageId": "ours-2"},  # ours
    entry(3),
]


def test_mark_read_flag_keeps_entries(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox(dialect=OLD)
    seed(mb.paths, "gemini-1", MIXED)
    wanted = [message_identity(MIXED[0]), "claude-1", "ours-2"]
    assert mb.mark_read("gemini-1", wanted) == 3
    raws = mb.read_raw("gemini-1")
    assert [r.get("read") for r in raws] == [True, True, True, None]
    assert [{k: v for k, v in r.items() if k != "read"} for r in raws] == MIXED
    assert [m.text for m in mb.read("gemini-1", unread_only=True)] == ["message 3"]


def test_mark_read_prune_deletes_entries(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox(dialect=NEW)
    seed(mb.paths, "gemini-1", MIXED)
    assert mb.mark_read("gemini-1", [message_identity(MIXED[3]), "claude-1"]) == 2
    assert mb.read_raw("gemini-1") == [MIXED[0], MIXED[2]]


def test_mark_read_unknown_ids_writes_nothing(
    make_mailbox: MailboxFactory, dialect: Dialect
) -> None:
    mb = make_mailbox(dialect=dialect)
    data = seed(mb.paths, "gemini-1", MIXED)
    mtime = mb.paths.inbox("gemini-1").stat().st_mtime_ns
    assert mb.mark_read("gemini-1", ["nope", "sha256:0"]) == 0
    assert mb.mark_read("gemini-1", []) == 0
    assert mb.paths.inbox("gemini-1").read_bytes() == data
    assert mb.paths.inbox("gemini-1").stat().st_mtime_ns == mtime


def test_mark_read_counts_duplicates_by_identity(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox(dialect=OLD)
    seed(mb.paths, "gemini-1", [entry(0), entry(0), entry(1)])
    assert mb.mark_read("gemini-1", iter([message_identity(entry(0))])) == 2
    assert [r.get("read") for r in mb.read_raw("gemini-1")] == [True, True, None]


def test_sent_ids_can_be_marked(make_mailbox: MailboxFactory, dialect: Dialect) -> None:
    mb = make_mailbox(dialect=dialect)
    a = mb.send("gemini-1", sender="team-lead", text="a", check_member=False)
    b = mb.send("gemini-1", sender="team-lead", text="b", check_member=False)
    assert mb.mark_read("gemini-1", [a]) == 1
    assert [m.text for m in mb.read("gemini-1", unread_only=True)] == ["b"]
    assert b in ids(mb, "gemini-1")


# -- compaction ------------------------------------------------------------------------


def archived(mb: Mailbox, member: str) -> list[dict[str, Any]]:
    path = mb.paths.archive(member)
    if not path.exists():
        return []
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def test_compact_is_a_noop_under_limits(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox(dialect=OLD)
    data = seed(mb.paths, "gemini-1", [entry(i, read=True) for i in range(3)])
    mtime = mb.paths.inbox("gemini-1").stat().st_mtime_ns
    result = mb.compact("gemini-1", max_entries=3, max_bytes=len(data))
    assert result == CompactionResult(kept=3, archived=0, archive=None)
    assert mb.paths.inbox("gemini-1").read_bytes() == data
    assert mb.paths.inbox("gemini-1").stat().st_mtime_ns == mtime
    assert not mb.paths.archive("gemini-1").exists()


def test_compact_never_drops_unread(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox(dialect=OLD)
    entries = [entry(i, read=False) for i in range(5)] + [entry(i) for i in range(5, 10)]
    data = seed(mb.paths, "gemini-1", entries)
    result = mb.compact("gemini-1", max_entries=0, max_bytes=0)
    assert result == CompactionResult(kept=10, archived=0, archive=None)
    assert mb.paths.inbox("gemini-1").read_bytes() == data


def test_compact_archives_oldest_read_beyond_max_entries(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox(dialect=OLD)
    flags = [True, True, False, True, True, True, True, False, True, None]
    entries = [entry(i, read=f) for i, f in enumerate(flags)]
    seed(mb.paths, "gemini-1", entries)
    result = mb.compact("gemini-1", max_entries=4)
    assert result == CompactionResult(kept=4, archived=6, archive=mb.paths.archive("gemini-1"))
    assert mb.read_raw("gemini-1") == [entries[i] for i in (2, 7, 8, 9)]
    assert archived(mb, "gemini-1") == [entries[i] for i in (0, 1, 3, 4, 5, 6)]
    assert mb.paths.inbox("gemini-1").read_bytes() == dump_json([entries[i] for i in (2, 7, 8, 9)])
    assert leftovers(mb.paths.inboxes_dir) == []


def test_compact_appends_to_the_archive(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox(dialect=OLD)
    entries = [entry(i, read=True) for i in range(6)]
    seed(mb.paths, "gemini-1", entries[:3])
    mb.compact("gemini-1", max_entries=1)
    for e in entries[3:]:
        mb.append("gemini-1", e, check_member=False)
    mb.mark_read("gemini-1", [message_identity(e) for e in entries])
    mb.compact("gemini-1", max_entries=1)
    arch = archived(mb, "gemini-1")
    assert [a["text"] for a in arch] == [f"message {i}" for i in (0, 1, 2, 3, 4)]
    assert [r["text"] for r in mb.read_raw("gemini-1")] == ["message 5"]
    assert mb.paths.archive("gemini-1").read_bytes().endswith(b"\n")


def test_compact_respects_max_bytes(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox(dialect=OLD)
    entries = [{**entry(i, read=True), "text": f"{i:02d}" + "x" * 200} for i in range(20)]
    full = seed(mb.paths, "gemini-1", entries)
    limit = len(full) // 2
    result = mb.compact("gemini-1", max_bytes=limit, max_entries=1000)
    data = mb.paths.inbox("gemini-1").read_bytes()
    assert len(data) <= limit
    assert result.archived >= 10
    assert result.kept + result.archived == 20
    kept = mb.read_raw("gemini-1")
    assert kept == entries[result.archived :]  # the oldest went first
    assert archived(mb, "gemini-1") == entries[: result.archived]
    assert len(data) + len(dump_json(entries[result.archived - 1])) > limit - 200  # not far off


def test_compact_absent_inbox(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox()
    result = mb.compact("gemini-1")
    assert result == CompactionResult(kept=0, archived=0, archive=None)
    assert mb.read_raw("gemini-1") == []


# -- property: nothing lost, nothing duplicated ----------------------------------------

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.lists(st.booleans() | st.none(), min_size=1, max_size=3)),
        st.tuples(st.just("mark"), st.lists(st.integers(0, 40), max_size=4)),
        st.tuples(st.just("compact"), st.integers(0, 4), st.integers(0, 1500)),
    ),
    max_size=10,
)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(ops=OPS, dialect_name=st.sampled_from(sorted(DIALECTS)))
def test_inbox_plus_archive_is_everything_ever_appended(
    ops: list[tuple[Any, ...]], dialect_name: str
) -> None:
    dialect = DIALECTS[dialect_name]
    with tempfile.TemporaryDirectory() as tmp:
        paths = TeamPaths("prop", tmp)
        create_team(paths)
        mb = Mailbox(paths, dialect=dialect, durable=False)
        appended: list[str] = []
        marked: set[str] = set()
        pruned: Counter[str] = Counter()
        born_read: set[str] = set()
        n = 0
        for op in ops:
            if op[0] == "append":
                for flag in op[1]:
                    e = entry(n % 60, sender=f"w{n}")
                    e["text"] = f"msg {n}"
                    if flag is not None:
                        e["read"] = flag
                    mid = mb.append("team-lead", e)
                    appended.append(mid)
                    if flag:
                        born_read.add(mid)
                    n += 1
            elif op[0] == "mark":
                chosen = {appended[i] for i in op[1] if i < len(appended)}
                present = Counter(ids(mb, "team-lead"))
                mb.mark_read("team-lead", chosen)
                marked |= chosen
                if dialect.mark_read == "prune":
                    for mid in chosen:
                        pruned[mid] += present[mid]
            else:
                _, max_entries, max_bytes = op
                result = mb.compact("team-lead", max_entries=max_entries, max_bytes=max_bytes)
                raws = mb.read_raw("team-lead")
                assert result.kept == len(raws)
                path = mb.paths.inbox("team-lead")
                size = len(path.read_bytes()) if path.exists() else 0  # compact creates none
                within = len(raws) <= max_entries and size <= max_bytes
                assert within or not any(r.get("read") is True for r in raws)
            inbox = ids(mb, "team-lead")
            arch = [message_identity(a) for a in archived(mb, "team-lead")]
            assert Counter(inbox) + Counter(arch) + pruned == Counter(appended)
            unread = [m for m in appended if m not in marked and m not in born_read]
            assert set(unread) <= set(inbox)
            order = {mid: i for i, mid in enumerate(appended)}
            assert [order[m] for m in inbox] == sorted(order[m] for m in inbox)


# -- concurrency and delivery failures -------------------------------------------------


def test_concurrent_appends_from_8_threads(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox(dialect=NEW)
    sent: list[str] = []
    errors: list[BaseException] = []
    guard = threading.Lock()

    def work(t: int) -> None:
        try:
            for i in range(12):
                mid = mb.send("team-lead", sender=f"w{t}", text=f"{t}-{i}")
                with guard:
                    sent.append(mid)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert errors == []
    on_disk = ids(mb, "team-lead")
    assert len(sent) == 96
    assert sorted(on_disk) == sorted(sent)  # all present, exactly once
    texts = [r["text"] for r in mb.read_raw("team-lead")]
    for n in range(8):  # each writer's messages stay in its own order
        mine = [x for x in texts if x.startswith(f"{n}-")]
        assert mine == [f"{n}-{i}" for i in range(12)]
    assert leftovers(mb.paths.inboxes_dir) == []


def test_transient_write_failure_is_retried(
    make_mailbox: MailboxFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []

    def flaky(path: Path, value: Any, **kw: Any) -> Staged:
        calls.append(len(value))
        if len(calls) <= 2:
            raise OSError(errno.EIO, "Input/output error")
        return stage_json(path, value, **kw)

    monkeypatch.setattr(inbox_io, "stage_json", flaky)
    mb = make_mailbox(attempts=5)
    mid = mb.send("team-lead", sender="g", text="hi")
    assert len(calls) == 3
    assert ids(mb, "team-lead") == [mid]
    assert leftovers(mb.paths.inboxes_dir) == []


def test_permanent_write_failure_raises_delivery_error(
    make_mailbox: MailboxFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []

    def broken(path: Path, value: Any, **kw: Any) -> Staged:
        calls.append(1)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(inbox_io, "stage_json", broken)
    mb = make_mailbox(attempts=3)
    with pytest.raises(DeliveryError, match="after 3 attempts") as info:
        mb.send("team-lead", sender="g", text="hi")
    assert isinstance(info.value.__cause__, OSError)
    assert len(calls) == 3
    assert mb.read_raw("team-lead") == []
    assert leftovers(mb.paths.inboxes_dir) == []


def test_foreign_lock_ends_in_delivery_error_not_a_drop(make_mailbox: MailboxFactory) -> None:
    mb = make_mailbox(lock=TINY_LOCK, attempts=2)
    seed(mb.paths, "team-lead", [entry(0)])
    lock = lock_dir_for(mb.paths.inbox("team-lead"))
    lock.mkdir()  # Claude Code holds the inbox lock
    with pytest.raises(DeliveryError) as info:
        mb.send("team-lead", sender="g", text="hi")
    assert isinstance(info.value.__cause__, LockError)
    assert lock.is_dir()
    assert mb.read_raw("team-lead") == [entry(0)]
    lock.rmdir()
    mid = mb.send("team-lead", sender="g", text="hi")
    assert ids(mb, "team-lead") == [message_identity(entry(0)), mid]


def test_unverified_write_is_a_delivery_error(
    make_mailbox: MailboxFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A writer that ignores the lock replaces the file right after our rename.
    def clobbered(staged: Staged, **kw: Any) -> int:
        inode = commit_staged(staged, **kw)
        path = mb.paths.inbox("team-lead")
        tmp = path.with_name("foreign.tmp")
        tmp.write_text("[]")
        os.replace(tmp, path)
        return inode

    monkeypatch.setattr(inbox_io, "commit_staged", clobbered)
    mb = make_mailbox(attempts=2)
    with pytest.raises(DeliveryError, match="not found after writing"):
        mb.send("team-lead", sender="g", text="hi")


def test_failure_after_the_write_landed_does_not_duplicate(
    make_mailbox: MailboxFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # e.g. the directory fsync after the rename fails: the entry is on disk, the write
    # reports an error, append retries -- and must not append the same message again.
    calls: list[int] = []

    def lands_then_fails(staged: Staged, **kw: Any) -> int:
        inode = commit_staged(staged, **kw)
        calls.append(1)
        if len(calls) == 1:
            raise OSError(errno.EIO, "fsync of directory failed")
        return inode

    monkeypatch.setattr(inbox_io, "commit_staged", lands_then_fails)
    mb = make_mailbox(attempts=3)
    mid = mb.send("team-lead", sender="g", text="hi")
    assert ids(mb, "team-lead") == [mid]
