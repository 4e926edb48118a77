"""Run the real Codex CLI (pinned in tests/e2e/codex/package.json) offline.

Pieces, usable separately:

* `require_codex()`: the pinned launcher, or `CodexNotInstalled` saying to run setup.
* `prepare_home(root, base_url, ...)`: an isolated `$HOME` whose `~/.codex/config.toml`
  selects a custom Responses provider on the scripted server, trusts the workspace and
  switches off everything that would phone home; plus a project `.codex/config.toml`
  (hooks) when asked. `CodexHome.trust_hooks()` records hook trust the way a person
  choosing "Trust all" in the TUI would (`codex_trust.hook_trust_entries`).
* `codex_env(home)`: a scrubbed environment built from scratch.
* `run_exec(home, prompt)`: `codex exec` to completion (stdin closed), with timing.
* `start_codex_in_tmux(...)`: the interactive TUI in a private tmux server.
* `codex_processes(home)` / `kill_codex_processes(home)`: what Codex left running
  (the app-server daemon and its MCP servers); fixtures call the latter at teardown.

What it takes to run offline (Codex CLI 0.169.0, observed with strace):

* `model_provider = "scripted"` with `[model_providers.scripted] base_url = <server>/v1`,
  `wire_api = "responses"`, `env_key = API_KEY_ENV` (any value: it becomes the Bearer
  token). Nothing else is called: no `/models`, no login.
* `check_for_update_on_startup = false`, `features.plugins = false` (plugin marketplace
  sync: DNS for github.com / api.github.com) and `analytics.enabled = false` (DNS for
  ab.chatgpt.com). With these three, `codex exec` makes no DNS query at all.
* `features.unbounded_connection_retries = false` and the provider's
  `request_max_retries = 0` / `stream_max_retries = 0`: a scripted server that is gone
  (connection refused) or answers an error fails the run in well under a second;
  otherwise `codex exec` retries a refused connection for minutes.
* `model = "gpt-5.5"`: a model of the bundled catalog, so Codex offers `apply_patch`
  and `tool_search` (an unknown slug gets fallback metadata with neither, and a
  warning). Its catalog entry has an `upgrade`, which the TUI announces once:
  `[notice.model_migrations]` pre-answers that.
* `[projects."<workspace>"] trust_level = "trusted"`: else the project's `.codex/` layer
  (hooks, MCP servers) is not loaded and the TUI asks.
* `TMPDIR` outside the tree holding `$HOME`: Codex refuses to create its helper
  binaries (PATH aliases) under the temp dir, with a warning on every run.
* The TUI also fetches `raw.githubusercontent.com/.../announcement_tip.toml` at every
  start (no setting stops it): `codex_env` points the proxy variables at a dead
  loopback port (`DEAD_PROXY`), so nothing leaves the machine; no DNS query is made.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e.codex_trust import hook_trust_entries, toml_dumps
from tests.e2e.harness import deep_merge, pid_alive, scrubbed_env
from tests.e2e.harness import write_launcher as harness_write_launcher
from tests.e2e.tmux import PaneError, TmuxPane, tmux_binary, tmux_problem
from tests.e2e.tmux import Tmux as BaseTmux

E2E_DIR = Path(__file__).resolve().parent
CODEX_NODE_DIR = E2E_DIR / "codex"
CODEX_VERSION = "0.169.0"
CODEX_PACKAGE_DIR = CODEX_NODE_DIR / "node_modules" / "@openai" / "codex"
CODEX_BIN = CODEX_NODE_DIR / "node_modules" / ".bin" / "codex"
SETUP_HINT = (
    "run `make setup` (it must `npm ci` in tests/e2e/codex; "
    "by hand: `cd tests/e2e/codex && npm ci --no-audit --no-fund`)"
)
HOOK_PROBE = E2E_DIR / "codex_hook_probe.py"
MCP_STUB = E2E_DIR / "exo_mcp_stub.py"

DEFAULT_MODEL = "gpt-5.5"
PROVIDER_ID = "scripted"
API_KEY_ENV = "EXO_SCRIPTED_OPENAI_KEY"
#: A proxy nobody listens on: whatever Codex fetches from the internet fails at once
#: (the TUI fetches `announcement_tip.toml` from raw.githubusercontent.com on every start,
#: with no switch to stop it); loopback is exempt through NO_PROXY.
DEAD_PROXY = "http://127.0.0.1:9"

#: Placeholder of the TUI's empty composer; its presence means the prompt takes input.
READY_MARKER = "Ask Codex to do anything"

#: TUI screens that block the prompt (both seen with 0.169); one showing means the
#: setup is incomplete. The hooks dialog comes ~5 s after the composer first shows.
BLOCKING_DIALOGS: dict[str, str] = {
    "Hooks need review": (
        "hook trust dialog: record trust first (CodexHome.trust_hooks), or answer it"
    ),
    "Sign in with ChatGPT": (
        "login screen: config.toml needs model_provider = the scripted provider"
    ),
}

_NATIVE_PACKAGES = {
    ("linux", "x86_64"): "codex-linux-x64",
    ("linux", "aarch64"): "codex-linux-arm64",
    ("darwin", "x86_64"): "codex-darwin-x64",
    ("darwin", "arm64"): "codex-darwin-arm64",
}


class CodexNotInstalled(RuntimeError):
    """The pinned Codex CLI is missing from tests/e2e/codex/node_modules."""


def _native_package_dir() -> Path:
    """Where npm put the platform binary (an optional dependency, like Claude Code's)."""
    uname = os.uname()
    name = _NATIVE_PACKAGES.get((uname.sysname.lower(), uname.machine), "codex-<platform>")
    return CODEX_NODE_DIR / "node_modules" / "@openai" / name


def codex_install_problem() -> str | None:
    """None when the pinned CLI and its native binary are installed, else what is wrong
    and how to fix it."""
    pkg = CODEX_PACKAGE_DIR / "package.json"
    if not CODEX_BIN.exists() or not pkg.exists():
        return f"Codex CLI {CODEX_VERSION} is not installed under {CODEX_NODE_DIR}: {SETUP_HINT}"
    try:
        version = json.loads(pkg.read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError) as e:
        return f"cannot read {pkg} ({e}): {SETUP_HINT}"
    if version != CODEX_VERSION:
        return f"{pkg} is version {version!r}, expected {CODEX_VERSION!r}: {SETUP_HINT}"
    native = _native_package_dir()
    if not any(native.glob("vendor/*/bin/codex")):
        return (
            f"the Codex native binary is missing ({native}/vendor/<target>/bin/codex; npm "
            f"skipped the optional dependency?): {SETUP_HINT}"
        )
    if shutil.which("node") is None:
        return f"`node` is not on PATH: {SETUP_HINT}"
    return None


def require_codex() -> Path:
    problem = codex_install_problem()
    if problem is not None:
        raise CodexNotInstalled(problem)
    return CODEX_BIN


def tmux_install_problem() -> str | None:
    return tmux_problem(SETUP_HINT)


def require_tmux() -> str:
    return tmux_binary(SETUP_HINT, CodexNotInstalled)


# ---------------------------------------------------------------------------- config


def provider_config(base_url: str) -> dict[str, Any]:
    """`[model_providers.scripted]`: the Responses API at `base_url` (ends in `/v1`)."""
    return {
        "name": "Scripted Responses API",
        "base_url": base_url.rstrip("/"),
        "wire_api": "responses",
        "env_key": API_KEY_ENV,
        "request_max_retries": 0,
        "stream_max_retries": 0,
    }


def offline_config(
    base_url: str,
    *,
    workspace: Path,
    model: str = DEFAULT_MODEL,
    mcp_servers: Mapping[str, Any] | None = None,
    hooks: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The user `config.toml` (as a dict): scripted provider, trusted `workspace`,
    nothing phoning home, the TUI's model-migration notice already seen."""
    config: dict[str, Any] = {
        "model": model,
        "model_provider": PROVIDER_ID,
        "check_for_update_on_startup": False,
        "model_providers": {PROVIDER_ID: provider_config(base_url)},
        "analytics": {"enabled": False},
        "features": {"plugins": False, "unbounded_connection_retries": False},
        "projects": {str(workspace): {"trust_level": "trusted"}},
        "notice": {"model_migrations": {model: "gpt-6-sol"}},
    }
    if mcp_servers:
        config["mcp_servers"] = dict(mcp_servers)
    if hooks:
        config["hooks"] = dict(hooks)
    if extra:
        config = deep_merge(config, extra)
    return config


def stub_mcp_server(calls_log: Path, *, python: str | None = None) -> dict[str, Any]:
    """`[mcp_servers.exo]` running `exo_mcp_stub.py` (tool `notify_parent`), its calls
    appended to `calls_log`; approval mode `approve` so no dialog asks."""
    return {
        "command": python or sys.executable,
        "args": [str(MCP_STUB), str(calls_log)],
        "startup_timeout_sec": 20,
        "tool_timeout_sec": 30,
        "default_tools_approval_mode": "approve",
    }


def command_hook(
    command: str,
    *,
    matcher: str | None = None,
    timeout: int | None = None,
    status_message: str | None = None,
) -> dict[str, Any]:
    """One matcher group `{matcher?, hooks: [{type: "command", command, ...}]}`."""
    handler: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        handler["timeout"] = timeout
    if status_message is not None:
        handler["statusMessage"] = status_message
    group: dict[str, Any] = {"hooks": [handler]}
    if matcher is not None:
        group["matcher"] = matcher
    return group


def probe_command(log: Path, mode: str = "record", reason: str | None = None) -> str:
    """The shell command of a `codex_hook_probe.py` hook (see that module for modes)."""
    argv = [sys.executable, str(HOOK_PROBE), str(log), mode, *([reason] if reason else [])]
    return shlex.join(argv)


@dataclass(frozen=True)
class CodexHome:
    root: Path  # scratch dir owning everything below
    home: Path  # $HOME for the CLI
    workspace: Path  # the CLI's cwd (a trusted project)
    tmpdir: Path  # $TMPDIR for the CLI

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"

    @property
    def config_path(self) -> Path:
        return self.codex_home / "config.toml"

    @property
    def project_config_path(self) -> Path:
        return self.workspace / ".codex" / "config.toml"

    def config(self) -> dict[str, Any]:
        return tomllib.loads(self.config_path.read_text(encoding="utf-8"))

    def write_config(self, config: Mapping[str, Any]) -> None:
        self.config_path.parent.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(toml_dumps(config), encoding="utf-8")

    def update_config(self, extra: Mapping[str, Any]) -> None:
        self.write_config(deep_merge(self.config(), extra))

    def write_project_config(self, config: Mapping[str, Any]) -> Path:
        path = self.project_config_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(toml_dumps(config), encoding="utf-8")
        return path

    def trust_hooks(self, source: Path | None = None) -> dict[str, str]:
        """Record trust for every command hook in `source` (default: the project's
        `.codex/config.toml`) in the user config: `[hooks.state."<key>"] trusted_hash`.
        Returns the entries written."""
        entries = hook_trust_entries(source or self.project_config_path)
        state = {key: {"trusted_hash": digest} for key, digest in entries.items()}
        self.update_config({"hooks": {"state": state}})
        return entries

    def session_files(self) -> list[Path]:
        return sorted((self.codex_home / "sessions").rglob("*.jsonl"))


def prepare_home(
    root: Path,
    base_url: str,
    *,
    model: str = DEFAULT_MODEL,
    mcp_servers: Mapping[str, Any] | None = None,
    user_hooks: Mapping[str, Any] | None = None,
    project_hooks: Mapping[str, Any] | None = None,
    trust_project_hooks: bool = True,
    extra_config: Mapping[str, Any] | None = None,
) -> CodexHome:
    """Create `<root>/home/.codex/config.toml`, `<root>/workspace` (with
    `.codex/config.toml` holding `project_hooks`, trusted unless told otherwise) and
    `<root>/tmp`."""
    root = root.resolve()
    home = CodexHome(
        root=root, home=root / "home", workspace=root / "workspace", tmpdir=root / "tmp"
    )
    for d in (home.codex_home, home.workspace, home.tmpdir):
        d.mkdir(parents=True, exist_ok=True)
    home.write_config(
        offline_config(
            base_url,
            workspace=home.workspace,
            model=model,
            mcp_servers=mcp_servers,
            hooks=user_hooks,
            extra=extra_config,
        )
    )
    if project_hooks:
        home.write_project_config({"hooks": dict(project_hooks)})
        if trust_project_hooks:
            home.trust_hooks()
    return home


def codex_env(
    home: CodexHome, *, api_key: str = "exo-e2e-offline-key", extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The complete environment for the CLI (not merged with os.environ)."""
    env = scrubbed_env()
    env.update(
        {
            "HOME": str(home.home),
            "CODEX_HOME": str(home.codex_home),
            "TMPDIR": str(home.tmpdir),
            API_KEY_ENV: api_key,
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            **{k: DEAD_PROXY for k in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")},
        }
    )
    if extra:
        env.update(extra)
    return env


def exec_command(
    prompt: str, *, bypass: bool = True, json_events: bool = False, extra_args: Sequence[str] = ()
) -> list[str]:
    """`codex exec [--dangerously-bypass-approvals-and-sandbox] [--json] ... <prompt>`."""
    cmd = [str(require_codex()), "exec", "--skip-git-repo-check"]
    if bypass:
        cmd.append("--dangerously-bypass-approvals-and-sandbox")
    if json_events:
        cmd.append("--json")
    return [*cmd, *extra_args, "--", prompt]


@dataclass(frozen=True)
class ExecResult:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    started_at: float  # time.monotonic() at launch
    elapsed: float

    def output(self) -> str:
        return f"--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr}"

    def events(self) -> list[dict[str, Any]]:
        """The JSONL events of `--json` mode."""
        out = []
        for line in self.stdout.splitlines():
            with contextlib.suppress(ValueError):
                ev = json.loads(line)
                if isinstance(ev, dict):
                    out.append(ev)
        return out


def run_exec(
    home: CodexHome,
    prompt: str,
    *,
    timeout: float = 90.0,
    bypass: bool = True,
    json_events: bool = False,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
) -> ExecResult:
    """Run `codex exec` in `home.workspace` to completion (stdin closed: exec would
    otherwise read it and append it to the prompt). On timeout its whole process group
    is killed and TimeoutError carries its output."""
    argv = exec_command(prompt, bypass=bypass, json_events=json_events, extra_args=extra_args)
    started = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=home.workspace,
        env=codex_env(home, extra=extra_env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the node launcher and the native binary: one group
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        raise TimeoutError(
            f"codex exec did not finish within {timeout:.0f}s\n--- stdout ---\n{stdout}"
            f"\n--- stderr ---\n{stderr}"
        ) from None
    return ExecResult(argv, proc.returncode, stdout, stderr, started, time.monotonic() - started)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [r for r in rows if isinstance(r, dict)]


def hook_calls(log: Path, event: str | None = None) -> list[dict[str, Any]]:
    """What `codex_hook_probe.py` recorded in `log` (every call, or those of `event`)."""
    return [r for r in _jsonl(log) if event is None or r.get("event") == event]


def mcp_calls(log: Path) -> list[dict[str, Any]]:
    """The `tools/call` requests `exo_mcp_stub.py` recorded in `log`."""
    return [r for r in _jsonl(log) if r.get("event") == "call"]


# ---------------------------------------------------------------------------- processes


def _proc_text(pid: int, name: str) -> str:
    try:
        raw = Path(f"/proc/{pid}/{name}").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode("utf-8", "replace")


def _ancestors() -> set[int]:
    """This process and its ancestors (never ours to kill)."""
    pids, pid = set(), os.getpid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        stat = _proc_text(pid, "stat")
        try:
            pid = int(stat.rsplit(")", 1)[1].split()[1])
        except (IndexError, ValueError):
            break
    return pids


def codex_processes(home: CodexHome) -> list[tuple[int, str]]:
    """(pid, command line) of every live process that belongs to `home`: started with
    its `$HOME` in the environment, or running a binary under `home.root` (the
    app-server daemon Codex installs in `~/.codex/packages`, its `pid-update-loop`, the
    MCP servers and hooks they start). The test process and its ancestors are left out."""
    skip = _ancestors()
    marker = f" HOME={home.home} "
    root = f"{home.root}/"
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in skip:
            continue
        pid = int(entry.name)
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            exe = ""
        ours = exe.startswith(root) or marker in f" {_proc_text(pid, 'environ')} "
        if ours and pid_alive(pid):
            found.append((pid, _proc_text(pid, "cmdline").strip()))
    return found


def kill_codex_processes(home: CodexHome, *, timeout: float = 5.0) -> list[tuple[int, str]]:
    """SIGKILL what `codex_processes` finds (the daemon ignores SIGTERM) and wait until it
    is gone; returns what was killed."""
    victims = codex_processes(home)
    for pid, _ in victims:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while any(pid_alive(pid) for pid, _ in victims) and time.monotonic() < deadline:
        time.sleep(0.05)
    return victims


# ---------------------------------------------------------------------------- tmux


class Tmux(BaseTmux):
    """A private tmux server (`tmux -L exo-codex-<hex>`); `kill()` ends it and its panes."""

    socket_prefix = "exo-codex"
    default_width = 160

    def require_tmux(self) -> str:
        return require_tmux()


@dataclass
class CodexPane(TmuxPane[CodexHome]):
    """The Codex TUI in a pane; ready when the empty composer (`READY_MARKER`) shows."""

    program = "Codex CLI"
    blocking_dialogs = BLOCKING_DIALOGS
    enter_delay = 0.3

    def is_ready(self, screen: str) -> bool:
        return READY_MARKER in screen


def tui_command(*, bypass: bool = True, extra_args: Sequence[str] = ()) -> list[str]:
    cmd = [str(require_codex())]
    if bypass:
        cmd.append("--dangerously-bypass-approvals-and-sandbox")
    return [*cmd, *extra_args]


def start_codex_in_tmux(
    tmux: BaseTmux,
    home: CodexHome,
    *,
    bypass: bool = True,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    session: str = "codex",
    width: int = 160,
    height: int = 50,
    ready_timeout: float = 60.0,
    wait_ready: bool = True,
) -> CodexPane:
    """Launch the pinned Codex TUI in a new tmux session and wait for its composer."""
    argv = tui_command(bypass=bypass, extra_args=extra_args)
    launcher = harness_write_launcher(
        home.root / "launch-codex.sh", home.workspace, codex_env(home, extra=extra_env), argv
    )
    started = time.monotonic()
    pane_id, pid = tmux.new_session(
        session, shlex.quote(str(launcher)), cwd=home.workspace, width=width, height=height
    )
    pane = CodexPane(tmux=tmux, pane_id=pane_id, pane_pid=pid, home=home, started_at=started)
    if wait_ready:
        pane.wait_until_ready(ready_timeout)
    return pane


__all__ = [
    "API_KEY_ENV",
    "BLOCKING_DIALOGS",
    "CODEX_BIN",
    "CODEX_VERSION",
    "DEAD_PROXY",
    "DEFAULT_MODEL",
    "HOOK_PROBE",
    "MCP_STUB",
    "PROVIDER_ID",
    "READY_MARKER",
    "SETUP_HINT",
    "CodexHome",
    "CodexNotInstalled",
    "CodexPane",
    "ExecResult",
    "PaneError",
    "Tmux",
    "codex_env",
    "codex_install_problem",
    "codex_processes",
    "command_hook",
    "exec_command",
    "hook_calls",
    "kill_codex_processes",
    "mcp_calls",
    "offline_config",
    "prepare_home",
    "probe_command",
    "provider_config",
    "require_codex",
    "require_tmux",
    "run_exec",
    "start_codex_in_tmux",
    "stub_mcp_server",
    "tmux_install_problem",
    "tui_command",
]
