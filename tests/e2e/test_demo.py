"""`exomonad demo` end to end: the real Claude Code 2.1.330 lead, Gemini CLI 0.61 and
Codex CLI 0.169 workers, the real server, every model scripted.

* The command exits 0 and its output has every hop, each with a latency where it has a
  predecessor; no traceback (the `InvalidStateError` mcp-stdio used to print, see
  tests/util/test_unix_http.py); and it leaves nothing behind: no tmux server, no
  process of its scratch directory, no scratch directory.
* A hop that does not happen (a lead that never spawns gemini-1) makes it exit non-zero
  naming that hop, and it still cleans up.
* `--keep` leaves the session and the server up after the demo exits, and the stop
  command it prints ends them.

Every `exomonad` the demo starts is this checkout's (its shims put `exomonad.__file__`'s
tree on PYTHONPATH). These tests never skip: a missing CLI or tmux is a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import orjson
import pytest
from rich.console import Console

from exomonad.client import ServerClient
from exomonad.demo import script
from exomonad.demo.run import Options, install_problems, run_demo
from exomonad.demo.stage import SESSION
from exomonad.scripted.anthropic import Responder
from exomonad.server.pidfile import read_server_info
from exomonad.util.proc import pid_alive
from exomonad.util.waiting import retry_until
from tests.e2e.harness import fail_if_missing

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

SRC = Path(__file__).resolve().parents[2] / "src"
#: Every hop of a full run, in order (chain, hop).
HOPS = [
    ("lead", "exomonad up: server healthy"),
    ("lead", "Claude Code 2.1.330 shows its prompt"),
    ("lead", "the server adopts its session team"),
    *[
        (w, hop)
        for w, m in (("gemini-1", "Gemini"), ("codex-1", "Codex"))
        for hop in (
            "the person's prompt typed into the lead",
            f"lead's model: Agent(name={w})",
            f"teammate spawned, in its worktree .worktrees/{w}",
            f"its task reaches {m}'s model",
        )
    ],
    ("codex-1 push", "Codex's model: `git push --force origin main`"),
    ("codex-1 push", "ExoMonad's policy denies it"),
    ("codex-1 push", "the reason reaches Codex's model"),
    ("codex-1 push", "origin's main unmoved"),
    *[
        (f"{w} report", hop)
        for w, m in (("gemini-1", "Gemini"), ("codex-1", "Codex"))
        for hop in (
            f"{m}'s model: notify_parent",
            "ExoMonad's server runs notify_parent",
            "in the lead's inbox (under Claude Code's lock)",
            "the lead's next model request carries it",
        )
    ],
]


def demo(*args: str) -> subprocess.Popen[str]:
    """`exomonad demo ARGS` as a user runs it, on this checkout's code."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EXOMONAD_", "TMUX"))}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH")) if p)
    return subprocess.Popen(
        [sys.executable, "-m", "exomonad", "demo", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def header(out: str) -> tuple[Path, str]:
    """The scratch dir (the project's grandparent's parent) and the tmux socket."""
    project = Path(re.search(r"^project: (\S+)$", out, re.M).group(1))  # type: ignore[union-attr]
    socket = re.search(r"tmux -L (\S+) attach", out).group(1)  # type: ignore[union-attr]
    return project.parents[1], socket


def socket_file(socket: str) -> Path:
    return Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}" / socket


def tmux_up(socket: str) -> bool:
    done = subprocess.run(["tmux", "-L", socket, "has-session"], capture_output=True, check=False)
    return done.returncode == 0


def processes_of(root: Path) -> list[str]:
    """Live processes started in or for `root` (its path in their argv or environment)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            seen = (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes()
        except OSError:
            continue
        if str(root).encode() in seen and pid_alive(int(entry.name)):
            found.append(f"{entry.name}: {(entry / 'cmdline').read_bytes()[:200]!r}")
    return found


def hop_lines(out: str) -> dict[tuple[str, str], str]:
    """(chain, hop) → its live line, for each expected hop that was printed."""
    lines: dict[tuple[str, str], str] = {}
    for chain, hop in HOPS:
        for line in out.splitlines():
            if re.match(rf"\s+\d+\.\d\ds\s+{re.escape(chain)}\s+{re.escape(hop)}", line):
                lines[(chain, hop)] = line
    return lines


@pytest.fixture(autouse=True)
def _installed() -> None:
    fail_if_missing(lambda: "; ".join(install_problems()) or None)


def test_demo_shows_every_hop_and_leaves_nothing_behind() -> None:
    proc = demo()
    out, err = proc.communicate(timeout=280)
    assert proc.returncode == 0, f"{out}\n{err}"
    root, socket = header(out)
    lines = hop_lines(out)
    assert [h for h in HOPS if h not in lines] == [], out
    first = {chain: hop for chain, hop in reversed(HOPS)}  # the first hop of each chain
    for (chain, hop), line in lines.items():
        if first[chain] != hop:  # every later hop has its latency from the one before
            assert re.search(r"\d+ ms$", line), line
    assert f"all {len(HOPS)} hops happened" in out
    assert "[from: gemini-1] success:" in out
    assert "[from: codex-1] failure:" in out
    assert "force push to a protected branch: git push --force origin main" in out
    assert "Traceback" not in out + err, err
    assert not tmux_up(socket)
    assert not socket_file(socket).exists()
    retry_until(
        lambda: not processes_of(root), timeout=20, message=f"left running: {processes_of(root)}"
    )
    assert not root.exists()


def test_a_missing_hop_fails_the_demo_and_names_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def no_gemini() -> Responder:
        return lambda req: "I will not spawn anyone." if req.is_agent_turn else None

    monkeypatch.setattr(script, "lead_responder", no_gemini)
    console = Console(record=True, width=200)
    root = tmp_path / "demo"
    # Each hop's time-out: the hops before the missing one must not miss it on a loaded box.
    result = run_demo(Options(timeout=20, root=root), console)
    out = console.export_text()
    assert result.code == 1, out
    assert result.error.startswith("missing hop: gemini-1: lead's model: Agent(name=gemini-1)")
    assert [(h.chain, h.label) for h in result.timeline.missing] == [
        ("gemini-1", "lead's model: Agent(name=gemini-1)")
    ]
    assert "MISSING: lead's model: Agent(name=gemini-1)" in out
    data = result.to_json()
    assert data["ok"] is False
    assert [h["hop"] for h in data["hops"] if h["missing"]] == [
        "lead's model: Agent(name=gemini-1)"
    ]
    assert result.stage is not None
    assert not tmux_up(result.stage.socket)  # cleaned up all the same
    assert not socket_file(result.stage.socket).exists()
    retry_until(
        lambda: not processes_of(root), timeout=20, message=f"left running: {processes_of(root)}"
    )


def test_keep_leaves_the_session_and_server_up_until_the_printed_stop(tmp_path: Path) -> None:
    proc = demo("--keep")
    assert proc.stdout is not None
    out = ""
    for line in proc.stdout:
        out += line
        if line.startswith("stop:"):
            break
    root, socket = header(out)
    state = root / "claude" / "workspace" / ".exomonad"
    try:
        attach = re.search(r"^attach: (.+)$", out, re.M).group(1)  # type: ignore[union-attr]
        assert attach == f"tmux -L {socket} attach -t {SESSION}", out
        assert f"all {len(HOPS)} hops happened" in out
        proc.send_signal(signal.SIGINT)  # stops the models; the team stays
        rest, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, f"{out}{rest}\n{err}"
        panes = subprocess.run(
            ["tmux", "-L", socket, "list-panes", "-a", "-F", "#{pane_id}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        [config] = (root / "claude" / "config" / "teams").glob("session-*/config.json")
        members = {m["name"]: m for m in orjson.loads(config.read_bytes())["members"]}
        for name in ("gemini-1", "codex-1"):  # the teammates' panes are still there
            assert members[name]["tmuxPaneId"] in panes, (members[name], panes)
        assert ServerClient(state, timeout=5).health()["status"] == "ok"
        # The dashboard runs, on loopback behind the token it printed (and not without).
        url = re.search(r"^dashboard: (http://127\.0\.0\.1:\d+/\S+/)$", out, re.M)
        assert url is not None, out
        with urllib.request.urlopen(url.group(1), timeout=30) as page:
            assert page.status == 200
            assert b"ExoMonad" in page.read()
        base = url.group(1).rsplit("/", 2)[0]
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{base}/not-the-token/", timeout=30)
        assert refused.value.code in (401, 403, 404)
        stop = re.search(r"^stop:\s+(.+)$", out, re.M).group(1)  # type: ignore[union-attr]
        done = subprocess.run(
            stop, shell=True, capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 0, done.stderr
        assert "gemini-1 shut down" in done.stdout, done.stdout  # through the protocol
        assert "codex-1 shut down" in done.stdout, done.stdout
        assert not tmux_up(socket)
        assert not socket_file(socket).exists()
        info = read_server_info(state)
        assert info is None or not info.alive
        retry_until(
            lambda: not processes_of(root),
            timeout=20,
            message=f"left running after the stop command: {processes_of(root)}",
        )
    finally:
        if proc.poll() is None:
            proc.kill()
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)
        for pid in {int(p.split(":")[0]) for p in processes_of(root)}:
            os.kill(pid, signal.SIGKILL)  # only if the assertions above failed
        shutil.rmtree(root, ignore_errors=True)  # --keep kept it
