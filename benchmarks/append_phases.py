"""Where a Python append spends its time: ``Mailbox.append`` taken apart, step by step.

Replays exactly what ``Mailbox.send`` → ``_mutate`` → ``write_json_atomic`` do, with the
library's own functions, timing each step separately (durable, 2.1.330 dialect, inbox
reset to N entries before every append, untimed). Also times, outside the sum, the
member check (``load_config``) that ``send`` does by default (``append_latency`` leaves
it out), and a cheaper verify (is the file at the path the inode we just wrote?).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks._common import Settings, fmt_ms, prefill_entries, summarize, team_dir
from exomonad.teams import FileLock, Mailbox, get_dialect, load_config, read_json_array
from exomonad.teams.atomic import dump_json, read_bytes
from exomonad.teams.inbox_io import ensure_file, missing_ids
from exomonad.teams.models import now_iso

NAME = "append_phases"
TITLE = "Python append, time per step (durable)"

SIZES = (100, 1000)
STEPS = (
    "member check (load_config)",
    "stamp entry (uuid, now_iso)",
    "open inbox dir (O_NOFOLLOW walk)",
    "ensure file (O_EXCL)",
    "lock acquire (mkdir, stat)",
    "read + parse + validate",
    "duplicate scan (idempotency)",
    "serialise (orjson indent 2)",
    "write temp file",
    "fsync temp file",
    "rename",
    "fsync dir",
    "verify (re-read + re-parse)",
    "lock release (stat, rmdir)",
    "close inbox dir",
)
MEMBER_CHECK = STEPS[0]  # measured, but not part of the sum (append_latency skips it)
#: Measured but not part of the sum: the cheaper verify suggested for ``_mutate``.
ALT_VERIFY = "alt: verify by inode (stat)"


def _one_append(mailbox: Mailbox, i: int) -> dict[str, float]:
    paths, t = mailbox.paths, {}
    path = paths.inbox("team-lead")
    clock = time.perf_counter

    def step(name: str, fn: Callable[[], Any]) -> Any:
        t0 = clock()
        value = fn()
        t[name] = (clock() - t0) * 1000
        return value

    step("member check (load_config)", lambda: load_config(paths).member_names())
    mid = mailbox.dialect.new_message_id()
    raw = step(
        "stamp entry (uuid, now_iso)",
        lambda: mailbox.dialect.stamp(
            {"from": "bench-py", "text": f"py#{i}", "timestamp": now_iso()}, mid
        ),
    )
    d = step("open inbox dir (O_NOFOLLOW walk)", lambda: paths.open_dir(path.parent, create=True))
    step("ensure file (O_EXCL)", lambda: ensure_file(d, path.name))
    lock = FileLock(path, mailbox.lock, at=d)
    step("lock acquire (mkdir, stat)", lock.acquire)
    entries = step("read + parse + validate", lambda: read_json_array(path, at=d))
    dup = step(
        "duplicate scan (idempotency)",
        lambda: any(mid in (e.get("msg_id"), e.get("messageId")) for e in entries),
    )
    if dup:
        raise RuntimeError("fresh message id already in the inbox")
    entries.append(raw)
    payload = step("serialise (orjson indent 2)", lambda: dump_json(entries))
    tmp = path.with_name(f"{path.name}.tmp.bench{i}")

    def write() -> int:
        fd = os.open(tmp.name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=d.fd)
        os.write(fd, payload)
        return fd

    fd = step("write temp file", write)
    step("fsync temp file", lambda: os.fsync(fd))
    ino = os.fstat(fd).st_ino
    os.close(fd)
    step("rename", lambda: os.replace(tmp.name, path.name, src_dir_fd=d.fd, dst_dir_fd=d.fd))
    step("fsync dir", d.fsync)
    ok = step("verify (re-read + re-parse)", lambda: not missing_ids(read_bytes(path, at=d), [mid]))
    step(ALT_VERIFY, lambda: d.lstat(path.name).st_ino == ino)
    step("lock release (stat, rmdir)", lock.release)
    step("close inbox dir", d.close)
    if not ok:
        raise RuntimeError("appended entry not found")
    return t


def run(settings: Settings, console: Console) -> dict[str, Any]:
    """Per size: p50/p99 of each step, and of the sum."""
    count = settings.scale(200, 20)
    out = []
    for size in SIZES:
        console.log(f"append phases: {size} entries, {count} appends")
        per_step: dict[str, list[float]] = {s: [] for s in (*STEPS, ALT_VERIFY)}
        totals: list[float] = []
        with team_dir(settings) as paths:
            mailbox = Mailbox(paths, dialect=get_dialect("2.1.330"), durable=True)
            inbox = paths.inbox("team-lead")
            inbox.parent.mkdir(parents=True, exist_ok=True)
            snapshot = dump_json(prefill_entries(size))
            for i in range(-20, count):
                inbox.write_bytes(snapshot)
                t = _one_append(mailbox, i)
                if i >= 0:
                    for s, v in t.items():
                        per_step[s].append(v)
                    extra = (MEMBER_CHECK, ALT_VERIFY)
                    totals.append(sum(v for k, v in t.items() if k not in extra))
        out.append(
            {
                "entries": size,
                "appends": count,
                "steps": {s: summarize(v) for s, v in per_step.items()},
                "total_without_member_check": summarize(totals),
            }
        )
    return {"sizes": out}


def render(data: dict[str, Any], console: Console) -> None:
    """Steps as rows, sizes as column pairs."""
    table = Table(title=TITLE)
    table.add_column("step")
    for s in data["sizes"]:
        table.add_column(f"{s['entries']}: p50", justify="right")
        table.add_column(f"{s['entries']}: p99", justify="right")
        table.add_column(f"{s['entries']}: share", justify="right")
    for step in (*STEPS, ALT_VERIFY):
        row = [step]
        for s in data["sizes"]:
            st, total = s["steps"][step], s["total_without_member_check"]
            extra = step in (MEMBER_CHECK, ALT_VERIFY)
            share = "(extra)" if extra else f"{100 * st['p50'] / total['p50']:.0f}%"
            row += [fmt_ms(st["p50"]), fmt_ms(st["p99"]), share]
        table.add_row(*row)
    row = ["sum (without member check)"]
    for s in data["sizes"]:
        total = s["total_without_member_check"]
        row += [fmt_ms(total["p50"]), fmt_ms(total["p99"]), ""]
    table.add_row(*row, style="bold")
    console.print(table)
    console.print("times in ms; share = step p50 / sum p50 (shares need not add to 100%)")
