"""No agent signals ExoMonad's own processes: the server (delivery, gating, the watcher),
``exomonad teammate`` processes, or every process of the user.

Three layers: the classifier (a pid computed at run time is Unknown), the built-in
policy with no server (the word ``exomonad`` and ``-1`` are always refused), and the
policy against a live stand-in server (a real process whose pid is in the pid file and
whose command line is ``... exomonad serve``), which must still run afterwards.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from exomonad.policy import Deny, Escalate, PolicyEngine, ToolRequest
from exomonad.policy.actions import Action, ReadFile
from exomonad.policy.classify import classify
from exomonad.util.waiting import retry_until
from tests.policy.corpus import ANY_UNKNOWN, W, same, sh

ROLES = ("tl", "dev", "worker")

CLASSIFIED: list[tuple[str, list[Action]]] = [
    ("kill $PID", [sh("kill", "$PID"), ANY_UNKNOWN]),
    ("kill -9 123 $PID", [sh("kill", "-9", "123", "$PID"), ANY_UNKNOWN]),
    ("pkill -f \"$NAME\"", [sh("pkill", "-f", "$NAME"), ANY_UNKNOWN]),
    ("kill 1$(pgrep vite)", [sh("pgrep", "vite"), sh("kill", "1$(pgrep vite)"), ANY_UNKNOWN]),
    ("kill -9 $(pgrep -f vite)", [sh("pgrep", "-f", "vite"), sh("kill", "-9", "$(pgrep -f vite)")]),
    ("kill `pidof node`", [sh("pidof", "node"), sh("kill", "`...`")]),
    ("kill $(pgrep vite | head -1)",
     [sh("pgrep", "vite"), sh("head", "-1"), sh("kill", "$(pgrep vite | head -1)"), ANY_UNKNOWN]),
    ("pgrep -f vite | xargs kill",
     [sh("pgrep", "-f", "vite"), sh("kill", "<xargs input>"), ANY_UNKNOWN]),
    ("find /proc -name x -exec kill {} +",
     [ReadFile("/proc", recursive=True, include=("x",)), sh("kill", "{}"), ANY_UNKNOWN]),
    ("kill %1", [sh("kill", "%1")]),
    ("/bin/kill -9 4242", [sh("/bin/kill", "-9", "4242")]),
]  # fmt: skip

#: Refused to every role with no server running.
ALWAYS_DENIED = [
    "pkill -f exomonad",
    "pkill -9 -f 'exomonad serve'",
    "pkill -i -f EXOMONAD",
    "pkill exo",
    "pkill -f 'exo.*serve'",
    "pkill -f python",
    "pkill -f teammate",
    "pkill -v vite",
    "pkill -u agent",
    "kill -9 $(pgrep -f 'exomonad serve')",
    "kill `pgrep -f exomonad`",
    "pgrep -f 'exomonad serve' | xargs kill",
    "pgrep -f exomonad | xargs -I{} kill -9 {}",
    "kill -9 -1",
    "kill -- -1",
    "kill -s KILL -1",
    "killall exomonad",
    "killall -9 exomonad",
    "killall -r '^exo'",
    "killall -u agent",
    "pidof exomonad",
    "skill -KILL exomonad",
    "/usr/bin/kill exomonad",
    "timeout 5 pkill exomonad",
    "sh -c 'pkill -f exomonad'",
    'bash -c "kill -9 -1"',
    "env FOO=1 pkill -f exomonad",
    "nice -n 5 killall exomonad",
    "sudo pkill -f exomonad",
    "sudo -u root kill -9 -1",
    "xargs pkill -f exomonad < /dev/null",
    "if true; then pkill -f exomonad; fi",
    "for i in 1 2; do kill -9 -1; done",
    "cd /tmp && (pkill -f exomonad || true)",
    "eval 'pkill -f exomonad'",
    "builtin kill -9 -1",
    "exec pkill -f exomonad",
    "watch pkill -f exomonad",
    "find . -exec pkill -f exomonad \\;",
    "bash <<< 'pkill -f exomonad'",
    "pkill -f 'e.omonad'",
    "pkill -f exo[m]onad",
]
#: Allowed to a worker (plain shell) whatever runs.
ORDINARY = [
    "kill %1",
    "kill -9 %2",
    "kill -l",
    "kill -0 1",
    "pkill -f vite",
    "pkill -f 'npm run dev'",
    "killall node",
    "pgrep -f pytest",
    "pidof node",
    "kill $(pgrep -f vite)",
    "timeout -s KILL 5 sleep 1",
]
#: Escalated: the targets are only known at run time.
UNKNOWN = ["kill $PID", "kill -9 $(cat vite.pid)", "pgrep -f vite | xargs kill", 'pkill -f "$X"']


def decide(engine: PolicyEngine, command: str, role: str) -> object:
    req = ToolRequest.from_hook(
        "claude", {"tool_name": "Bash", "tool_input": {"command": command}, "cwd": W},
        role=role, agent="a1", worktree=W, branch="feat/x", team="t",
    )  # fmt: skip
    return engine.decide(req)


@pytest.mark.parametrize(("command", "expected"), CLASSIFIED)
def test_signal_targets_are_classified(command: str, expected: list[Action]) -> None:
    req = ToolRequest("claude", "dev", "d1", "Bash", {"command": command}, cwd=W)
    got = classify(req)
    assert same(got, expected), got


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("command", ALWAYS_DENIED)
def test_signalling_exomonad_is_denied_without_a_server(command: str, role: str) -> None:
    got = decide(PolicyEngine(), command, role)
    assert isinstance(got, Deny), got
    assert "signal ExoMonad's processes" in got.reason


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_signals_stay_allowed(command: str) -> None:
    got = decide(PolicyEngine(), command, "worker")
    assert type(got).__name__ == "Allow", got


@pytest.mark.parametrize("command", UNKNOWN)
def test_run_time_targets_are_escalated(command: str) -> None:
    got = decide(PolicyEngine(), command, "worker")
    assert isinstance(got, Escalate), got


def _stand_in(bin_dir: Path, name: str, *args: str) -> subprocess.Popen[bytes]:
    """A real process run like a console script (``#!python``), in its own process
    group, that waits until it is killed."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / name
    script.write_text(f"#!{sys.executable}\nimport signal\nsignal.pause()\n")
    script.chmod(0o755)
    proc = subprocess.Popen([str(script), *args], start_new_session=True)
    retry_until(lambda: str(script) in Path(f"/proc/{proc.pid}/cmdline").read_text(),
                timeout=30, message=f"{name} did not start")  # fmt: skip
    return proc


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[dict[str, subprocess.Popen[bytes]]]:
    """``server``: ``<bin>/exomonad serve``; ``daemon``: ``<bin>/srvd exomonad serve``
    (its name does not say exomonad); ``other``: an unrelated process."""
    made = {
        "server": _stand_in(tmp_path / "bin", "exomonad", "serve"),
        "daemon": _stand_in(tmp_path / "sbin", "srvd", "exomonad", "serve"),
        "other": _stand_in(tmp_path / "other", "webapp"),
    }
    yield made
    for proc in made.values():
        proc.kill()
        proc.wait()


def _engine(tmp_path: Path, server: subprocess.Popen[bytes]) -> PolicyEngine:
    state = tmp_path / "proj" / ".exomonad"
    state.mkdir(parents=True, exist_ok=True)
    info = {"pid": server.pid, "socket": str(state / "server.sock"), "started_at": 0.0,
            "version": "0"}  # fmt: skip
    (state / "server.pid").write_bytes(orjson.dumps(info))
    return PolicyEngine(state_dir=state)


@pytest.mark.parametrize("role", ROLES)
def test_signalling_the_live_server_is_denied(
    tmp_path: Path, processes: dict[str, subprocess.Popen[bytes]], role: str
) -> None:
    server, other = processes["server"], processes["other"]
    engine = _engine(tmp_path, server)
    denied = ["pkill -f 'exomonad serve'", f"kill -9 {server.pid}", f"kill -TERM -{server.pid}",
              f"kill -s HUP {server.pid} {other.pid}", "killall exomonad",
              f"pkill -f '{tmp_path}/bin/'", f"sh -c 'kill {server.pid}'",
              f"pgrep -f '{tmp_path}/bin' | xargs kill"]  # fmt: skip
    for command in denied:
        got = decide(engine, command, role)
        assert isinstance(got, Deny), (command, got)
    for command in (f"kill -9 {other.pid}", "killall node", "pkill -f vite", "kill %1"):
        got = decide(engine, command, role)
        assert not isinstance(got, Deny), (command, got)
    assert all(p.poll() is None for p in processes.values())


def test_the_live_servers_name_is_what_counts(
    tmp_path: Path, processes: dict[str, subprocess.Popen[bytes]]
) -> None:
    """A server whose name does not say exomonad (``srvd``): refused while its pid is in
    the pid file, by name (``killall``, ``pkill`` without ``-f``) and by command line."""
    daemon = processes["daemon"]
    commands = ["killall srvd", "pkill srvd", "pkill -x srvd", f"pkill -f '{tmp_path}/sbin'",
                "pidof srvd"]  # fmt: skip
    engine = _engine(tmp_path, daemon)
    for command in commands:
        assert isinstance(decide(engine, command, "worker"), Deny), command
    (tmp_path / "proj" / ".exomonad" / "server.pid").unlink()
    for command in commands:
        assert not isinstance(decide(engine, command, "worker"), Deny), command
    assert daemon.poll() is None


def test_any_pid_whose_command_line_says_exomonad_is_refused(
    processes: dict[str, subprocess.Popen[bytes]],
) -> None:
    """``exomonad teammate`` processes (and other projects' servers) are not in this
    project's pid file: their command line gives them away."""
    for name in ("server", "daemon"):
        got = decide(PolicyEngine(), f"kill {processes[name].pid}", "tl")
        assert isinstance(got, Deny), (name, got)
    assert not isinstance(decide(PolicyEngine(), f"kill {processes['other'].pid}", "tl"), Deny)
    assert all(p.poll() is None for p in processes.values())
