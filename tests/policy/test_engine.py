"""The server-facing engine: decide/evaluate, audit records, health, latency."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from exomonad.policy.actions import GitPush
from exomonad.policy.audit import AuditLog
from exomonad.policy.decisions import Allow, Deny, Escalate
from exomonad.policy.engine import PolicyEngine
from exomonad.policy.request import ToolRequest
from tests.policy.conftest import PolicyWriter, policy_source

WT = "/repo/.worktrees/dev1"


def bash(command: str, role: str = "dev") -> ToolRequest:
    return ToolRequest(
        "claude",
        role,
        f"{role}1",
        "Bash",
        {"command": command},
        cwd=WT,
        worktree=WT,
        branch="feature/dev1",
    )


def test_decide_cascades_through_the_builtin_policy() -> None:
    engine = PolicyEngine(project_root="/repo", state_dir="/repo/.exomonad")
    assert isinstance(engine.decide(bash("git push origin feature/dev1")), Allow)
    assert engine.decide(bash("gh pr create --base main")) == Escalate(
        "tl", "dev1 (dev) asks: create PR <current branch> -> main"
    )
    assert isinstance(engine.decide(bash("gh pr merge 4")), Escalate)
    assert isinstance(engine.decide(bash("cd /repo && git push -f origin main")), Deny)


def test_state_dir_writes_are_denied_and_project_root_is_derived() -> None:
    engine = PolicyEngine(state_dir="/proj/.exomonad")
    assert engine.project_root == "/proj"
    request = ToolRequest(
        "gemini",
        "tl",
        "lead",
        "write_file",
        {"file_path": "/proj/.exomonad/policy.py", "content": ""},
        cwd="/proj",
    )
    assert isinstance(engine.decide(request), Deny)


def test_evaluate_exposes_actions_verdicts_and_policy() -> None:
    engine = PolicyEngine()
    ev = engine.evaluate(bash("git push origin feature/dev1 && git push -f origin main"))
    assert ev.actions == (
        GitPush("origin", "feature/dev1", repo=WT),
        GitPush("origin", "main", force=True, repo=WT),
    )
    assert [type(d).__name__ for _, d in ev.verdicts] == ["Allow", "Deny"]
    assert isinstance(ev.decision, Deny)
    assert ev.policy_id == engine.store.policy_id
    data = ev.to_dict()
    assert data["decision"] == "deny"
    assert data["actions"][1] == {
        "type": "GitPush",
        "remote": "origin",
        "branch": "main",
        "force": True,
        "lease": False,
        "repo": WT,
    }


def test_audit_records_who_what_version_result_latency(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    engine = PolicyEngine(audit=log)
    engine.decide(bash("rm -rf /"))
    engine.decide(bash("ls"))
    entries = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [e["decision"] for e in entries] == ["deny", "allow"]
    first = entries[0]
    assert (first["agent"], first["role"], first["runtime"], first["tool"]) == (
        "dev1",
        "dev",
        "claude",
        "Bash",
    )
    deleted = {"type": "DeleteFile", "path": "/", "recursive": True, "include": []}
    assert first["actions"] == [deleted]
    assert first["policy_id"] == engine.store.policy_id
    assert 0 <= first["latency_ms"] < 1000
    assert log.tail(1)[0]["decision"] == "allow"


def test_audit_lines_stay_whole_under_concurrency(tmp_path: Path) -> None:
    engine = PolicyEngine(audit=AuditLog(tmp_path / "audit.jsonl"))
    threads = [
        threading.Thread(
            target=lambda: [engine.decide(bash("ls " + "x" * 3000)) for _ in range(50)]
        )
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = (tmp_path / "audit.jsonl").read_text().splitlines()
    assert len(lines) == 400
    assert all(json.loads(line)["decision"] == "allow" for line in lines)


def test_audit_write_failures_are_counted_not_raised(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    (tmp_path / "audit.jsonl").mkdir()  # cannot open a directory for writing
    PolicyEngine(audit=log).decide(bash("ls"))
    assert log.dropped == 1
    assert log.tail() == []


def test_for_project_uses_the_state_dir(state_dir: Path, write_policy: PolicyWriter) -> None:
    write_policy(policy_source("P", allow=False))
    engine = PolicyEngine.for_project(state_dir)
    assert engine.decide(bash("ls")) == Deny("P")
    assert engine.store.path == state_dir / "policy.py"
    assert engine.health()["source"] == str(state_dir / "policy.py")
    assert (state_dir / "audit.jsonl").exists()
    assert engine.state_dir == str(state_dir.resolve())


def test_audit_log_rotates(tmp_path: Path) -> None:
    from exomonad.policy.audit import AuditLog

    log = AuditLog(tmp_path / "audit.jsonl", max_bytes=200, keep=2)
    for i in range(30):
        log.record({"agent": f"a{i}", "decision": "allow"})
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2"]
    assert all(p.stat().st_size < 260 for p in tmp_path.iterdir())
    assert log.tail(1)[0]["agent"] == "a29"
    assert log.dropped == 0
