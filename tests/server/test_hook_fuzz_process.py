"""Issue 10: the real hook client against the real server process, fuzzed.

Whatever a hook's stdin holds (deep nesting, huge strings, wrong types for ``tool_name``
/ ``tool_input`` / ``cwd``, bytes that are not UTF-8), ``python -m exomonad hook`` exits
0 with an answer in the runtime's shape, the server survives, and input that could not be
judged is never allowed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from exomonad.hookclient import MAX_BODY, MAX_DEPTH, too_deep
from exomonad.teams import TeamPaths, create_team
from tests.e2e.harness import ExomonadServe
from tests.support.tmux import TmuxServer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

GATING = [("pre-tool-use", "claude"), ("before-tool", "gemini")]
EXAMPLES = 60


@pytest.fixture
def server(tmp_path: Path, tmux_server: TmuxServer) -> Iterator[ExomonadServe]:
    root, state = tmp_path / "claude", tmp_path / "proj" / ".exomonad"
    state.mkdir(parents=True)
    (state / "config.toml").write_text("[policy]\napproval_timeout = 0.05\npopup = false\n")
    create_team(TeamPaths("proj", root))
    env = {k: v for k, v in os.environ.items() if k not in ("EXOMONAD_TOKEN", "TMUX")}
    env.update(CLAUDE_CONFIG_DIR=str(root), EXOMONAD_DIR=str(state),
               EXOMONAD_LOCK_DIR=str(state / "locks"),
               EXOMONAD_SPOOL_DIR=str(state / "spool"))  # fmt: skip
    serve = ExomonadServe(state=state, env=env, tmux_socket=tmux_server.socket,
                          log_path=tmp_path / "serve.log")  # fmt: skip
    serve.start()
    yield serve
    serve.stop()


def run_hook(serve: ExomonadServe, event: str, runtime: str, body: bytes) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "exomonad", "hook", event, "--runtime", runtime],
        input=body, env=serve.env, capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    return done.returncode, done.stdout.decode(), done.stderr.decode("utf-8", "replace")


def decision(runtime: str, stdout: str) -> str | None:
    answer = json.loads(stdout)
    if runtime != "gemini":
        answer = answer.get("hookSpecificOutput", {})
    found = answer.get("decision" if runtime == "gemini" else "permissionDecision")
    return None if found is None else str(found)


def judgeable(body: bytes) -> bool:
    if len(body) > MAX_BODY or too_deep(body):
        return False
    try:
        return isinstance(json.loads(body or b"{}"), dict)
    except ValueError:
        return False


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=3),
    max_leaves=12,
)  # fmt: skip
wrong = st.none() | st.integers() | st.text(max_size=20) | st.lists(st.integers(), max_size=2)
tools = st.sampled_from(["Bash", "Write", "Edit", "Read", "run_shell_command", "write_file"])
payloads = st.fixed_dictionaries(
    {"session_id": st.just("fuzz")},
    optional={"tool_name": tools | wrong, "tool_input": json_values, "cwd": wrong},
)
bodies = st.one_of(
    payloads.map(lambda p: json.dumps(p).encode()),
    st.binary(max_size=100),
    st.integers(MAX_DEPTH - 2, 2000).map(
        lambda n: b'{"tool_name": "Bash", "tool_input": ' + b"[" * n + b"]" * n + b"}"
    ),
)
DEEP = b'{"tool_name": "Bash", "tool_input": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
HUGE = b'{"tool_name": "Bash", "tool_input": {"command": "' + b"ls " * ((12 << 20) // 3) + b'"}}'


def test_fuzz_the_hook_client_against_the_real_server(server: ExomonadServe) -> None:
    runs: list[bytes] = []

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(body=bodies, gate=st.sampled_from(GATING))
    @example(body=DEEP, gate=GATING[0])
    @example(body=HUGE, gate=GATING[1])
    @example(body=b"\xff\xfe\xfd not utf-8", gate=GATING[0])
    @example(body=b'{"tool_name": 7, "tool_input": [], "cwd": 5}', gate=GATING[1])
    def check(body: bytes, gate: tuple[str, str]) -> None:
        runs.append(body)
        event, runtime = gate
        code, out, err = run_hook(server, event, runtime, body)
        assert code == 0, err
        got = decision(runtime, out)
        assert got in ("allow", "deny", "ask", None), out
        assert "fail-open" not in err, err  # the server is up: never "no server"
        if not judgeable(body) or "server failed" in err or "did not answer" in err:
            assert got in ("deny", "ask"), (body[:200], out, err)

    check()
    assert len(runs) >= EXAMPLES  # a generated test that ran nothing is not a test
    assert server.proc is not None
    assert server.proc.poll() is None, server.log()
    assert "Traceback" not in server.log(100_000), server.log()
