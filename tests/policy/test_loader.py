"""Loading and hot reload: swaps on change, keeps the last good policy on any failure."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny, label
from exomonad.policy.default import DEFAULT_POLICY
from exomonad.policy.engine import PolicyEngine
from exomonad.policy.errors import PolicyLoadError
from exomonad.policy.loader import BUILTIN_SOURCE, PolicyStore, load_policy_source
from exomonad.policy.request import ToolRequest
from tests.policy.conftest import PolicyWriter, policy_source, sha

LS = ToolRequest("claude", "dev", "d1", "Bash", {"command": "ls"}, cwd="/w")


def test_no_file_means_the_builtin_policy(state_dir: Path) -> None:
    store = PolicyStore(state_dir / "policy.py")
    loaded = store.current()
    assert loaded.policy is DEFAULT_POLICY
    assert (loaded.version, loaded.source, store.error) == (0, BUILTIN_SOURCE, None)
    assert loaded.policy_id == f"{loaded.sha256[:12]}-v0"


def test_a_valid_file_is_loaded_at_start(write_policy: PolicyWriter) -> None:
    path = write_policy(policy_source("A"))
    store = PolicyStore(path)
    loaded = store.current()
    assert loaded.policy.name == "A"
    assert loaded.sha256 == sha(policy_source("A"))
    assert loaded.version == 1
    assert [r.passed for r in loaded.examples] == [True]
    assert store.health()["policy_id"] == f"{sha(policy_source('A'))[:12]}-v1"


def test_rewrite_swaps_on_the_next_decision(write_policy: PolicyWriter) -> None:
    path = write_policy(policy_source("A"))
    engine = PolicyEngine(PolicyStore(path))
    assert engine.decide(LS) == Allow("A")
    first_id = engine.store.policy_id
    write_policy(policy_source("B", allow=False))
    assert engine.decide(LS) == Deny("B")
    assert engine.store.current().version == 2
    assert engine.store.policy_id != first_id


def test_unchanged_file_is_not_reloaded(write_policy: PolicyWriter) -> None:
    store = PolicyStore(write_policy(policy_source("A")))
    assert store.current() is store.current()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("policy = Policy(\n", "SyntaxError (line 1)"),
        ("x = 1 / 0\n", "ZeroDivisionError (line 1): division by zero"),
        ("policy = 3\n", "must bind `policy = Policy(...)`, found int"),
        ("import no_such_module_xyz\n", "ModuleNotFoundError"),
        (policy_source("C", extra="examples = [('ls', 'dev', 'deny')]"), "1 of 1 example(s) fail"),
        (policy_source("C", extra="examples = [('ls', 'dev')]"), "bad example"),
        (policy_source("C", extra="examples = [('ls', 'dev', 'maybe')]"), "not a decision"),
        (policy_source("C", extra="examples = 'ls'"), "`examples` must be a list"),
    ],
)
def test_a_bad_file_keeps_the_last_good_policy(
    write_policy: PolicyWriter, text: str, message: str
) -> None:
    path = write_policy(policy_source("A"))
    engine = PolicyEngine(PolicyStore(path))
    good = engine.store.current()
    write_policy(text)
    assert engine.decide(LS) == Allow("A")
    assert engine.store.current() is good
    assert engine.store.error is not None
    assert message in engine.store.error
    assert str(path) in engine.store.error
    assert engine.store.health()["error"] == engine.store.error
    assert engine.store.error_at is not None
    write_policy(policy_source("B", allow=False))  # fixed: swapped in, error cleared
    assert engine.decide(LS) == Deny("B")
    assert engine.store.error is None


def test_a_bad_file_at_start_leaves_the_builtin_in_place(write_policy: PolicyWriter) -> None:
    store = PolicyStore(write_policy("raise RuntimeError('nope')\n"))
    assert store.current().source == BUILTIN_SOURCE
    assert store.error is not None
    assert "RuntimeError" in store.error


def test_a_failed_load_is_not_retried_until_the_file_changes(
    write_policy: PolicyWriter, state_dir: Path
) -> None:
    counter = state_dir / "loads"
    text = f"open({str(counter)!r}, 'a').write('x')\nraise ValueError('bad')\n"
    store = PolicyStore(write_policy(text))
    for _ in range(5):
        store.current()
    assert counter.read_text() == "x"


def test_deleting_the_file_falls_back_to_the_builtin(write_policy: PolicyWriter) -> None:
    path = write_policy(policy_source("A"))
    store = PolicyStore(path)
    path.unlink()
    loaded = store.current()
    assert loaded.source == BUILTIN_SOURCE
    assert loaded.version == 2
    write_policy(policy_source("A"))
    assert store.current().policy.name == "A"
    assert store.current().version == 3


def test_a_load_that_hangs_is_abandoned(write_policy: PolicyWriter) -> None:
    path = write_policy(policy_source("A"))
    store = PolicyStore(path, load_timeout=2)  # room for A to load on a busy machine
    write_policy(policy_source("B", extra="import time\ntime.sleep(30)"))  # a daemon thread
    assert store.current().policy.name == "A"
    assert store.error is not None
    assert "longer than 2s" in store.error


def test_inflight_decision_finishes_on_the_policy_it_started_with(
    write_policy: PolicyWriter, state_dir: Path
) -> None:
    gate = state_dir / "gate"
    slow = policy_source(
        "A",
        extra=f"""
import threading, time, pathlib
_entered = threading.Event()

def slow_rule(action: Action, ctx: Context) -> Decision | None:
    del action, ctx
    pathlib.Path({str(gate)!r} + ".entered").touch()
    while not pathlib.Path({str(gate)!r}).exists():
        time.sleep(0.005)
    return Allow("A-slow")

policy = Policy(roles={{"dev": Role()}}, rules=[slow_rule], name="A")
examples = []
""",
    )
    engine = PolicyEngine(PolicyStore(write_policy(slow)))
    results = []
    worker = threading.Thread(target=lambda: results.append(engine.evaluate(LS)))
    worker.start()
    entered = Path(str(gate) + ".entered")
    while not entered.exists():
        threading.Event().wait(0.005)
    old_id = engine.store.policy_id
    write_policy(policy_source("B", allow=False))
    assert engine.decide(LS) == Deny("B")  # the new policy serves new decisions
    gate.touch()
    worker.join(5)
    assert results[0].decision == Allow("A-slow")
    assert results[0].policy_id == old_id


def test_concurrent_decisions_during_reloads_see_whole_policies(
    write_policy: PolicyWriter, state_dir: Path
) -> None:
    path = write_policy(policy_source("A"))
    engine = PolicyEngine(PolicyStore(path))
    stop = threading.Event()
    seen: list[tuple[str, str, str]] = []
    errors: list[BaseException] = []

    def hammer() -> None:
        try:
            while not stop.is_set():
                ev = engine.evaluate(LS)
                seen.append((ev.policy_id, label(ev.decision), ev.decision.reason))
                time.sleep(0.0002)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for t in threads:
        t.start()
    tmp = state_dir / "policy.py.tmp"
    for i in range(16):
        allow = i % 2 == 0
        text = policy_source("A" if allow else "B", allow=allow) + f"# {i}\n"
        if i % 7 == 3:
            text = "policy = Policy(\n"  # broken now and then
        tmp.write_text(text)
        os.replace(tmp, path)  # atomic, new inode
        engine.store.refresh()
    stop.set()
    for t in threads:
        t.join(10)
    assert not errors
    assert len(seen) > 100
    for _, verdict, reason in seen:
        assert (verdict, reason) in (("allow", "A"), ("deny", "B"))
    by_id: dict[str, set[str]] = {}
    for policy_id, _, reason in seen:
        by_id.setdefault(policy_id, set()).add(reason)
    assert all(len(reasons) == 1 for reasons in by_id.values())
    assert len(by_id) > 2


def test_load_policy_source_reports_the_line() -> None:
    with pytest.raises(PolicyLoadError, match=r"x\.py: NameError \(line 2\)"):
        load_policy_source(b"a = 1\nb = undefined_name\n", "x.py")


def test_policy_modules_do_not_leak_into_sys_modules() -> None:
    import sys

    before = set(sys.modules)
    load_policy_source(policy_source("A").encode(), "p.py")
    assert not {m for m in set(sys.modules) - before if "exomonad_project_policy" in m}
