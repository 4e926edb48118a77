"""Policy decision latency in the server's process: ``PolicyEngine.decide``, and reloads.

10,000 mixed :class:`ToolRequest` s per configuration, cycling through ~50 realistic
calls: plain and compound shell commands (pipes, ``&&``/``||``, loops, here-docs,
``bash -c``, subshells, git/gh/curl/sudo), Claude Code's Read/Write/Edit/Glob/Grep/
WebFetch, Gemini CLI's tool names, and ExoMonad's own MCP tools, for the roles ``dev``,
``worker`` and ``tl``. Each call to ``decide`` is timed on its own (``perf_counter_ns``)
after 500 untimed warm-up calls; the configurations take turns on every request, so
background load hits them alike. Configurations: the built-in policy, without and with the
audit log (``audit.jsonl``, one line per decision); the project policy template
(``exomonad policy init``) as ``.exomonad/policy.py``, without and with the audit log (the
last is what the server runs).

Reload: the policy file is rewritten (a new comment line, so a new hash) and its mtime
bumped with ``os.utime``; the first ``decide`` after that reloads it (exec the module,
check it, run its examples) before deciding, and is timed whole.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks._common import Settings, fmt_ms, summarize
from benchmarks._live import temp_root, verdict
from exomonad.policy import AuditLog, PolicyEngine, PolicyStore, ToolRequest, template
from exomonad.policy.engine import POLICY_FILE_NAME
from exomonad.policy.request import Runtime

NAME = "policy"
TITLE = "Policy decisions in-process: PolicyEngine.decide over mixed tool calls, and reloads"

TARGET_P99_MS = 1.0
WARMUP = 500
ROLES = ("dev", "worker", "tl")

# (category, runtime, tool name, tool input)
_CALLS: list[tuple[str, Runtime, str, dict[str, Any]]] = [
    *(
        ("shell", "claude", "Bash", {"command": c})
        for c in (
            "ls",
            "git status",
            "pytest -q tests/unit",
            "cat README.md",
            "rm -rf build",
            "git push origin feature/dev1",
            "git push -f origin main",
            "sudo apt-get install jq",
            "curl -sSL https://pypi.org/simple/orjson/",
            "npm test",
            "git commit -am 'wip'",
            "gh pr create --title 'Add parser' --body 'see #12'",
            "fly deploy",
            "rm -rf /",
            "git branch -D old-feature",
            "python -m mypy src",
        )
    ),
    *(
        ("shell compound", "claude", "Bash", {"command": c})
        for c in (
            "cd src && ls -la | grep '\\.py$' | wc -l",
            "make lint && make test || echo 'tests failed' >&2",
            'for f in src/*.py; do ruff check "$f"; done',
            "git add -A && git commit -m 'parser: handle empty input' && git push origin HEAD",
            'export OUT=/tmp/report.txt; pytest -q > "$OUT" 2>&1; tail -n 20 "$OUT"',
            "find . -name '*.pyc' -delete && find . -type d -name __pycache__ -exec rm -rf {} +",
            "cat <<'EOF' > notes.md\n# Notes\n- parser done\nEOF",
            "(cd app && fly deploy --remote-only)",
            "bash -c 'rm -rf ~/.cache/pip && pip install -e .'",
            "git fetch origin && git rebase origin/main"
            " && git push --force-with-lease origin feature/dev1",
            "echo $(git rev-parse HEAD) | tee .git/last-sha",
            "timeout 60 npm run build -- --mode production && ls dist/",
        )
    ),
    ("file", "claude", "Read", {"file_path": "/w/wt/dev1/src/parser.py"}),
    ("file", "claude", "Read", {"file_path": "/home/dev/.ssh/id_rsa"}),
    ("file", "claude", "Write", {"file_path": "/w/wt/dev1/src/new.py", "content": "x = 1\n"}),
    (
        "file",
        "claude",
        "Edit",
        {"file_path": "/w/wt/dev1/src/parser.py", "old_string": "a", "new_string": "b"},
    ),
    (
        "file",
        "claude",
        "Edit",
        {"file_path": "/w/.exomonad/policy.py", "old_string": "a", "new_string": "b"},
    ),
    ("file", "claude", "Write", {"file_path": "/etc/hosts", "content": "0.0.0.0 x\n"}),
    ("file", "claude", "Glob", {"pattern": "**/*.py"}),
    ("file", "claude", "Grep", {"pattern": "def decide", "path": "/w/src"}),
    (
        "file",
        "claude",
        "WebFetch",
        {"url": "https://docs.python.org/3/library/shlex.html", "prompt": "summarise"},
    ),
    ("file", "claude", "TodoWrite", {"todos": []}),
    (
        "gemini",
        "gemini",
        "run_shell_command",
        {"command": "ls -la && git status", "description": "look around"},
    ),
    ("gemini", "gemini", "run_shell_command", {"command": "pytest -q", "directory": "tests"}),
    ("gemini", "gemini", "read_file", {"absolute_path": "/w/wt/dev1/README.md"}),
    ("gemini", "gemini", "write_file", {"file_path": "/w/wt/dev1/out.txt", "content": "ok"}),
    (
        "gemini",
        "gemini",
        "replace",
        {"file_path": "/w/wt/dev1/src/parser.py", "old_string": "a", "new_string": "b"},
    ),
    ("gemini", "gemini", "glob", {"pattern": "src/**/*.py"}),
    ("gemini", "gemini", "web_fetch", {"prompt": "summarise https://example.com/page"}),
    ("gemini", "gemini", "google_web_search", {"query": "python shlex posix mode"}),
    ("gemini", "gemini", "mcp_exo_notify_parent", {"status": "success", "message": "done"}),
    ("mcp", "mcp", "notify_parent", {"status": "success", "message": "parser done"}),
    ("mcp", "mcp", "task_create", {"subject": "write docs"}),
    ("mcp", "mcp", "spawn_workers", {"workers": [{"name": "gemini-2", "task": "docs"}]}),
    ("mcp", "claude", "mcp__github__create_issue", {"title": "bug"}),
]


def requests(n: int) -> list[tuple[str, ToolRequest]]:
    """``n`` (category, request) pairs cycling through the calls and the roles."""
    out = []
    for i in range(n):
        category, runtime, tool, args = _CALLS[i % len(_CALLS)]
        role = ROLES[(i // len(_CALLS)) % len(ROLES)]
        out.append((category, ToolRequest(
            runtime, role, f"{role}1", tool, args, cwd="/w/wt/dev1", worktree="/w/wt/dev1",
            branch="feature/dev1", team="bench",
        )))  # fmt: skip
    return out


@contextmanager
def _project(settings: Settings, with_policy: bool) -> Iterator[Path]:
    with temp_root(settings, "exomonad-bench-policy-") as tmp:
        state = tmp / "w" / ".exomonad"
        state.mkdir(parents=True)
        if with_policy:
            (state / POLICY_FILE_NAME).write_text(Path(template.__file__).read_text())
        yield state


def _time_decisions(
    engines: list[PolicyEngine], reqs: list[tuple[str, ToolRequest]]
) -> list[dict[str, list[float]]]:
    """Per engine, per category, each decision's latency in ms. The engines take turns on
    every request (in a rotating order), so background noise hits them all alike."""
    for engine in engines:
        for _, req in reqs[:WARMUP]:
            engine.decide(req)
    out: list[dict[str, list[float]]] = [{} for _ in engines]
    clock = time.perf_counter_ns
    n = len(engines)
    for i, (category, req) in enumerate(reqs):
        for k in range(n):
            j = (i + k) % n
            t0 = clock()
            engines[j].decide(req)
            out[j].setdefault(category, []).append((clock() - t0) / 1e6)
    return out


def _reloads(settings: Settings, count: int) -> dict[str, Any]:
    with _project(settings, True) as state:
        path = state / POLICY_FILE_NAME
        engine = PolicyEngine.for_project(state, audit=True)
        source = path.read_text()
        req = requests(1)[0][1]
        engine.decide(req)
        first: list[float] = []
        steady: list[float] = []
        base = path.stat().st_mtime_ns
        for i in range(count):
            version = engine.store.health()["version"]
            path.write_text(f"{source}\n# reload {i}\n")
            t = base + (i + 1) * 1_000_000_000
            os.utime(path, ns=(t, t))
            t0 = time.perf_counter_ns()
            engine.decide(req)
            first.append((time.perf_counter_ns() - t0) / 1e6)
            t0 = time.perf_counter_ns()
            engine.decide(req)
            steady.append((time.perf_counter_ns() - t0) / 1e6)
            health = engine.store.health()
            if health["error"] or health["version"] != version + 1:
                raise RuntimeError(f"reload {i} did not take: {health}")
        examples = int(engine.store.health()["examples"])
    return {
        "reloads": count,
        "examples": examples,
        "first_decide": summarize(first),
        "next_decide": summarize(steady),
    }


CONFIGS = (  # name, project policy file?, audit log?
    ("built-in policy", False, False),
    ("built-in policy + audit log", False, True),
    ("project policy (template)", True, False),
    ("project policy + audit log (server)", True, True),
)


def run(settings: Settings, console: Console) -> dict[str, Any]:
    """Four configurations x n decisions (interleaved), then reloads."""
    n = settings.scale(10_000, 1_000)
    reqs = requests(n)
    console.log(f"policy: {n} decisions x {len(CONFIGS)} configurations, interleaved")
    with ExitStack() as stack:
        engines, audits = [], []
        for _, with_policy, audit in CONFIGS:
            state = stack.enter_context(_project(settings, with_policy))
            store = PolicyStore(state / POLICY_FILE_NAME if with_policy else None)
            log = AuditLog(state / "audit.jsonl") if audit else None
            if log is not None:
                audits.append(log)
                stack.callback(log.close)
            engines.append(PolicyEngine(store, audit=log, state_dir=state))
        timings = _time_decisions(engines, reqs)
        if any(log.dropped for log in audits):
            raise RuntimeError("the audit log dropped entries")
    configs = []
    for (name, _, _), by_cat in zip(CONFIGS, timings, strict=True):
        everything = [x for v in by_cat.values() for x in v]
        configs.append({"config": name, "decisions": n, "all": summarize(everything),
                        "by_category": {k: summarize(v) for k, v in by_cat.items()}})  # fmt: skip
    count = settings.scale(20, 4)
    console.log(f"policy: {count} reloads")
    return {
        "method": (
            f"{len(_CALLS)} distinct calls x roles {'/'.join(ROLES)}, cycled; each decide timed "
            f"alone (perf_counter_ns) after {WARMUP} warm-up calls, the configurations taking "
            "turns on every request; reload = rewrite "
            ".exomonad/policy.py + os.utime, then the first decide (exec + check + examples)"
        ),
        "configs": configs,
        "reload": _reloads(settings, count),
        "target_p99_ms": TARGET_P99_MS,
    }


def render(data: dict[str, Any], console: Console) -> None:
    """Per configuration (and category), then the reload figures."""
    table = Table(title=TITLE, caption=data["method"])
    for col in ("configuration", "calls", "n", "p50", "p90", "p99", "max", "mean", "target"):
        table.add_column(col, justify="right")
    for c in data["configs"]:
        s = c["all"]
        target = verdict(f"p99 < {TARGET_P99_MS:g}", s["p99"] < TARGET_P99_MS)
        table.add_row(c["config"], "all", str(s["n"]), fmt_ms(s["p50"]), fmt_ms(s["p90"]),
                      fmt_ms(s["p99"]), fmt_ms(s["max"]), fmt_ms(s["mean"]), target)  # fmt: skip
        for cat, s in c["by_category"].items():
            table.add_row("", cat, str(s["n"]), fmt_ms(s["p50"]), fmt_ms(s["p90"]),
                          fmt_ms(s["p99"]), fmt_ms(s["max"]), fmt_ms(s["mean"]), "")  # fmt: skip
        table.add_section()
    r = data["reload"]
    for label, s in (("reload: first decide after the change", r["first_decide"]),
                     ("reload: the decide after that", r["next_decide"])):  # fmt: skip
        table.add_row(label, f"{r['examples']} examples", str(s["n"]), fmt_ms(s["p50"]),
                      fmt_ms(s["p90"]), fmt_ms(s["p99"]), fmt_ms(s["max"]), fmt_ms(s["mean"]),
                      "")  # fmt: skip
    console.print(table)
    console.print("times in ms")
