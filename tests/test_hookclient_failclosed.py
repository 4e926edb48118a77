"""Issue 10: the hook client fails closed.

Regressions: a deeply nested hook input killed the client with RecursionError (exit 1,
which Claude Code and Gemini CLI treat as "go ahead"); a server that failed, answered
badly or too late made the client answer "fail-open". Now a tool-gating hook above the
bounds is escalated unparsed, and every error denies it; only "no server" fails open,
and only for a caller without an ExoMonad token (an agent ExoMonad started is denied).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exomonad import hookclient, uds
from exomonad.hookclient import MAX_BODY, MAX_DEPTH, decision_output, too_deep
from exomonad.policy import Allow, Deny, Escalate
from exomonad.policy.hook_output import hook_output
from exomonad.util import fastjson

GATING = [("pre-tool-use", "claude"), ("before-tool", "gemini")]


def call(argv: list[str], body: bytes) -> tuple[int, str, str]:
    """Run the client's ``main`` in-process on ``body``: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(body))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = hookclient.main(argv)
    finally:
        sys.stdin = old_stdin
    return code, out.getvalue(), err.getvalue()


def decision(runtime: str, stdout: str) -> str | None:
    """The decision in a hook answer (None: no decision)."""
    answer = json.loads(stdout)
    if runtime != "gemini":
        answer = answer.get("hookSpecificOutput", {})
    found = answer.get("decision" if runtime == "gemini" else "permissionDecision")
    return None if found is None else str(found)


class FakeServer:
    """A project whose "server" answers every request with ``response`` (raw HTTP), or
    never (``response=None``), on a real Unix socket, with a live pid file."""

    def __init__(self, state: Path, response: bytes | None) -> None:
        self.response = response
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        path = state / "s.sock"
        self.sock.bind(str(path))
        self.sock.listen(16)
        (state / "server.pid").write_text(json.dumps({"pid": os.getpid(), "socket": str(path)}))
        self.requests = 0
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        held = []
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.requests += 1
            if self.response is None:
                held.append(conn)  # never answer
                continue
            with conn:
                conn.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, rest = data.partition(b"\r\n\r\n")
                length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length"))  # fmt: skip
                while len(rest) < length:
                    rest += conn.recv(1 << 20)
                conn.sendall(self.response)

    def close(self) -> None:
        self._stop = True
        self.sock.close()


def http(status: int, body: bytes) -> bytes:
    return (f"HTTP/1.1 {status} X\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


ALLOW = {"output": decision_output("claude", "allow", "ok"), "exit_code": 0, "stderr": ""}


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / ".exomonad"
    d.mkdir()
    monkeypatch.setenv("EXOMONAD_DIR", str(d))
    monkeypatch.delenv("EXOMONAD_TOKEN", raising=False)
    monkeypatch.delenv("TMUX_PANE", raising=False)
    return d


@contextlib.contextmanager
def serving(state: Path, response: bytes | None) -> Iterator[FakeServer]:
    server = FakeServer(state, response)
    try:
        yield server
    finally:
        server.close()


# -- the shapes -------------------------------------------------------------------------


@pytest.mark.parametrize("runtime", ["claude", "gemini"])
@pytest.mark.parametrize(("kind", "dec"), [("allow", Allow("r")), ("deny", Deny("r")),
                                            ("ask", Escalate("human", "r"))])  # fmt: skip
def test_client_answers_in_the_policy_packages_shape(runtime: str, kind: str, dec: Any) -> None:
    assert decision_output(runtime, kind, "r") == hook_output(runtime, dec)


def test_too_deep_counts_only_structure() -> None:
    assert not too_deep(b'{"a": "' + b"[" * 1000 + b'"}')
    assert not too_deep(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH)
    assert too_deep(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1))
    assert too_deep(b'{"a":' * 65 + b"1" + b"}" * 65)
    assert not too_deep(b'{"s": "\\"[[[["}' + b"[]" * 100)


def test_too_deep_is_linear_on_malformed_input() -> None:
    """A quadratic scan of these 8 MB would run for hours: pytest's time-out stops it."""
    assert too_deep(b"[" * 65 + b'\\"' * 2_000_000)  # unterminated strings everywhere
    assert not too_deep(b"[]" * 4_000_000)


# -- bounds: escalate without parsing ---------------------------------------------------


def _unjudged(runtime: str) -> str:
    """A call too large or deep to judge: the runtime's own prompt where it reaches a
    person (Claude Code), else denied. Found probing: a Gemini worker got ``ask``, its
    own confirmation dialog in an unattended pane, skipping the policy's deny."""
    return "ask" if runtime == "claude" else "deny"


@pytest.mark.parametrize(("event", "runtime"), GATING)
def test_deeply_nested_input_escalates_instead_of_recursion_error(
    state: Path, event: str, runtime: str
) -> None:
    body = b'{"tool_name": "Bash", "tool_input": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    code, out, err = call([event, "--runtime", runtime], body)
    assert code == 0
    assert decision(runtime, out) == _unjudged(runtime)
    assert "nested deeper than 64" in err


@pytest.mark.parametrize(("event", "runtime"), GATING)
def test_oversized_input_escalates_unparsed_without_asking_the_server(
    state: Path, event: str, runtime: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[Any] = []
    loads = fastjson.loads

    def spy(s: Any) -> Any:
        parsed.append(s)
        return loads(s)

    monkeypatch.setattr(hookclient, "loads", spy)  # what the client parses with
    monkeypatch.setattr(hookclient, "too_deep", lambda *_: pytest.fail("inspected"))
    body = b'{"tool_input": {"command": "' + b"x" * MAX_BODY + b'"}}'
    with serving(state, http(200, json.dumps(ALLOW).encode())) as server:
        code, out, _ = call([event, "--runtime", runtime], body)
    monkeypatch.undo()
    assert not [s for s in parsed if len(s) > MAX_BODY]
    assert (code, decision(runtime, out), server.requests) == (0, _unjudged(runtime), 0)


def test_an_ordinary_large_write_is_still_judged(state: Path) -> None:
    content = "line of code {[(\"'\\\n" * ((MAX_BODY - 4096) // 24)
    write = {"file_path": "/p/f.py", "content": content}
    body = json.dumps({"tool_name": "Write", "tool_input": write}).encode()
    assert len(body) <= MAX_BODY
    with serving(state, http(200, json.dumps(ALLOW).encode())) as server:
        code, out, _ = call(["pre-tool-use"], body)
    assert (code, decision("claude", out), server.requests) == (0, "allow", 1)


@pytest.mark.parametrize("event", ["session-start", "stop", "post-tool-use", "after-agent"])
def test_non_gating_events_never_block_on_bad_input(state: Path, event: str) -> None:
    for body in (b"[" * 100_000, b"\xff\xfe{", b"[1]", b"x" * (MAX_BODY + 1)):
        code, out, err = call([event], body)
        assert (code, json.loads(out)) == (0, {})
        assert "exomonad:" in err


# -- errors deny -------------------------------------------------------------------------


@pytest.mark.parametrize(("event", "runtime"), GATING)
@pytest.mark.parametrize("body", [b"\xff\xfe\x00garbage", b"{nope", b"[1, 2]", b'"str"'])
def test_input_that_is_not_a_json_object_is_denied(
    state: Path, event: str, runtime: str, body: bytes
) -> None:
    code, out, _ = call([event, "--runtime", runtime], body)
    assert (code, decision(runtime, out)) == (0, "deny")


@pytest.mark.parametrize(("event", "runtime"), GATING)
@pytest.mark.parametrize(
    "response",
    [http(500, b'{"error": "boom"}'), http(400, b'{"error": "hook input is not JSON"}'),
     http(200, b"not json"), http(200, b'{"output": [1], "exit_code": 0}'),
     http(200, b'{"output": {}, "exit_code": "0"}'), b"garbage", b""],
)  # fmt: skip
def test_a_failing_server_denies_instead_of_failing_open(
    state: Path, event: str, runtime: str, response: bytes
) -> None:
    with serving(state, response):
        code, out, err = call([event, "--runtime", runtime], b'{"tool_name": "Bash"}')
    assert (code, decision(runtime, out)) == (0, "deny")
    assert "fail-open" not in err


@pytest.mark.parametrize(("event", "runtime"), GATING)
def test_a_server_time_out_denies(state: Path, event: str, runtime: str) -> None:
    with serving(state, None):  # never answers: the call returns only by its own time-out
        code, out, err = call([event, "--runtime", runtime, "--timeout", "0.5"], b"{}")
    assert (code, decision(runtime, out)) == (0, "deny")
    assert "did not answer" in err


def test_a_server_failure_on_a_non_gating_event_goes_ahead(state: Path) -> None:
    with serving(state, http(500, b"{}")):
        code, out, err = call(["stop"], b"{}")
    assert (code, json.loads(out)) == (0, {})
    assert "server failed" in err


@pytest.mark.parametrize(("event", "runtime"), GATING)
def test_an_internal_error_of_the_client_denies(
    state: Path, event: str, runtime: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*_: object) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(uds, "live_server", boom)
    code, out, err = call([event, "--runtime", runtime], b"{}")
    assert (code, decision(runtime, out)) == (0, "deny")
    assert "hook client error (RuntimeError)" in err
    code, out, _ = call(["session-start"], b"{}")
    assert (code, json.loads(out)) == (0, {})


@pytest.mark.parametrize(("event", "runtime"), GATING)
def test_an_agent_with_its_token_is_denied_when_its_server_is_gone(
    state: Path, event: str, runtime: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Measured: a worker ran `pkill -f exomonad` (allowed), and then its hook failed open
    on `git push origin HEAD:main` (the built-in policy only escalates that, and an
    escalation with nobody to ask went ahead). A token holder is never judged offline."""
    monkeypatch.setenv("EXOMONAD_TOKEN", "w1-token")
    push = b'{"tool_name": "Bash", "tool_input": {"command": "git push origin HEAD:main"}}'
    for pid_file in (None, {"pid": 2**22 + 1, "socket": str(state / "s.sock")},
                     {"pid": os.getpid(), "socket": str(state / "gone.sock")}):  # fmt: skip
        if pid_file is not None:  # a stale pid file; a live pid whose socket is gone
            (state / "server.pid").write_text(json.dumps(pid_file))
        code, out, err = call([event, "--runtime", runtime], push)
        assert (code, decision(runtime, out)) == (0, "deny"), pid_file
        assert "never judged without it" in err
    code, out, err = call(["session-start"], b"{}")  # other events never block
    assert (code, json.loads(out)) == (0, {})


def test_no_server_still_fails_open(state: Path) -> None:
    code, out, err = call(["pre-tool-use"], b'{"tool_name": "Read"}')
    assert (code, json.loads(out)) == (0, {})
    assert "fail-open" in err
    (state / "server.pid").write_text(json.dumps({"pid": os.getpid(),
                                                  "socket": str(state / "gone.sock")}))  # fmt: skip
    code, out, err = call(["pre-tool-use"], b'{"tool_name": "Read"}')
    assert (code, json.loads(out)) == (0, {})
    assert "fail-open" in err


# -- fuzz --------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
wrong_types = st.none() | st.integers() | st.text() | st.lists(st.integers(), max_size=3)
payloads = st.fixed_dictionaries(
    {},
    optional={"tool_name": st.sampled_from(["Bash", "Write", "run_shell_command"]) | wrong_types,
              "tool_input": json_values, "cwd": wrong_types, "session_id": wrong_types},
)  # fmt: skip


def nested(depth: int) -> bytes:
    return b'{"tool_name": "Bash", "tool_input": ' + b'{"a": ' * depth + b"1" + b"}" * depth + b"}"


bodies = st.one_of(
    payloads.map(lambda p: json.dumps(p).encode()),
    st.binary(max_size=200),
    st.integers(MAX_DEPTH - 2, 3000).map(nested),
    st.integers(1, 3).map(lambda n: b'{"tool_input": {"command": "' + b"y" * (n << 22) + b'"}}'),
)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=bodies, gate=st.sampled_from(GATING))
def _fuzz_client(body: bytes, gate: tuple[str, str]) -> None:
    """Against a server that allows everything: whatever the input, the client answers
    in shape with exit 0; input it could not judge is never allowed."""
    FUZZ_RUNS.append(1)
    event, runtime = gate
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        stack.enter_context(_env("EXOMONAD_DIR", str(tmp)))
        answer = dict(ALLOW, output=decision_output(runtime, "allow", "ok"))
        stack.enter_context(serving(tmp, http(200, json.dumps(answer).encode())))
        code, out, _ = call([event, "--runtime", runtime], body)
    assert code == 0
    got = decision(runtime, out)
    assert got in ("allow", "deny", "ask")
    if not judgeable(body):
        assert got != "allow"


FUZZ_RUNS: list[int] = []


def judgeable(body: bytes) -> bool:
    """Within the bounds and a JSON object: what a server may allow."""
    if len(body) > MAX_BODY or too_deep(body):
        return False
    try:
        return isinstance(json.loads(body or b"{}"), dict)
    except ValueError:
        return False


def test_fuzz_the_client_never_crashes_and_errors_never_allow() -> None:
    FUZZ_RUNS.clear()
    _fuzz_client()
    assert len(FUZZ_RUNS) >= 200  # a generated test that ran nothing is not a test


@contextlib.contextmanager
def _env(key: str, value: str) -> Iterator[None]:
    old = os.environ.get(key)
    os.environ[key] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = old
