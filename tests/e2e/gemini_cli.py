"""Run the real Gemini CLI (pinned in tests/e2e/package.json) offline, in a tmux pane.

Pieces, usable separately:

* `require_gemini()`: the pinned binary, or `GeminiNotInstalled` saying to run setup.
* `prepare_home(root, ...)`: an isolated HOME with `~/.gemini/settings.json` that selects
  API-key auth and switches off everything that would phone home or open a dialog.
* `gemini_env(home, base_url)`: a scrubbed environment (built from scratch, so the
  caller's `CI`, `GOOGLE_*`, `TERM_PROGRAM`, proxies, ... cannot leak in).
* `gemini_command(yolo=...)`: the argv.
* `Tmux` (a private tmux server on its own `-L` socket) and `start_gemini_in_tmux(...)`,
  which launches the CLI interactively in a new session and waits, by polling
  `capture-pane` against a deadline, until the input prompt (`READY_MARKER`) shows.
* `GeminiPane.type_message(text)`: `send-keys -l text`, ~150 ms pause, `send-keys Enter`.

What it takes to reach the prompt offline (Gemini CLI 0.61.0):

* `security.auth.selectedType = "gemini-api-key"` + `GEMINI_API_KEY`; without it the
  "Get started / How would you like to authenticate" dialog blocks the UI.
* `GEMINI_CLI_TRUST_WORKSPACE=true`; without it the "Do you trust the files in this
  folder?" dialog blocks the UI (and user MCP servers / hooks would be skipped).
* `general.enableAutoUpdateNotification=false` (+ `enableAutoUpdate=false`): otherwise it
  queries registry.npmjs.org at start (reachable here, so an update banner/auto-update
  is possible). `privacy.usageStatisticsEnabled=false`: otherwise Clearcut logging
  resolves play.googleapis.com. `telemetry.enabled=false` for OpenTelemetry.
* `CI` must not be `"true"` in the CLI's env: it makes Gemini CLI run headless.
* An Enter processed within 30 ms of a typed character is taken as a newline (paste
  heuristics). Right after the prompt appears the CLI is still busy, so text and a
  150 ms later Enter can be read as one chunk: `type_message` waits for the typed text
  to show in the pane before the pause and the Enter.
"""

from __future__ import annotations

import json
import shlex
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e.harness import deep_merge, scrubbed_env
from tests.e2e.harness import write_launcher as harness_write_launcher
from tests.e2e.tmux import PaneError, TmuxPane, tmux_binary, tmux_problem
from tests.e2e.tmux import Tmux as BaseTmux

E2E_DIR = Path(__file__).resolve().parent
GEMINI_VERSION = "0.61.0"
GEMINI_PACKAGE_DIR = E2E_DIR / "node_modules" / "@google" / "gemini-cli"
GEMINI_BIN = E2E_DIR / "node_modules" / ".bin" / "gemini"
SETUP_HINT = (
    "run `make setup` (it must `npm ci` in tests/e2e; "
    "by hand: `cd tests/e2e && npm ci --no-audit --no-fund`)"
)

#: Placeholder of the empty input box; its presence means the prompt accepts input.
READY_MARKER = "Type your message or @path/to/file"

#: Screens that block the prompt; seeing one means the offline setup is incomplete.
BLOCKING_DIALOGS: dict[str, str] = {
    "Do you trust the files in this folder?": (
        "folder-trust dialog: set GEMINI_CLI_TRUST_WORKSPACE=true in the CLI's env"
    ),
    "How would you like to authenticate": (
        "auth dialog: settings.json needs security.auth.selectedType = 'gemini-api-key' "
        "and the env GEMINI_API_KEY"
    ),
    "A new version of Gemini CLI is available": (
        "update notice: set general.enableAutoUpdateNotification = false"
    ),
}

#: Settings that keep Gemini CLI offline and free of first-run dialogs.
OFFLINE_SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "general": {
        "enableAutoUpdate": False,
        "enableAutoUpdateNotification": False,
    },
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False, "logPrompts": False},
    "ide": {"enabled": False, "hasSeenNudge": True},
    "ui": {"showCompatibilityWarnings": False, "hideTips": True},
}


class GeminiNotInstalled(RuntimeError):
    """The pinned Gemini CLI is missing from tests/e2e/node_modules."""


def gemini_install_problem() -> str | None:
    """None when the pinned CLI is installed, else what is wrong and how to fix it."""
    pkg = GEMINI_PACKAGE_DIR / "package.json"
    if not GEMINI_BIN.exists() or not pkg.exists():
        return f"Gemini CLI {GEMINI_VERSION} is not installed under {E2E_DIR}: {SETUP_HINT}"
    try:
        version = json.loads(pkg.read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError) as e:
        return f"cannot read {pkg} ({e}): {SETUP_HINT}"
    if version != GEMINI_VERSION:
        return f"{pkg} is version {version!r}, expected {GEMINI_VERSION!r}: {SETUP_HINT}"
    if shutil.which("node") is None:
        return f"`node` is not on PATH: {SETUP_HINT}"
    return None


def require_gemini() -> Path:
    problem = gemini_install_problem()
    if problem is not None:
        raise GeminiNotInstalled(problem)
    return GEMINI_BIN


def tmux_install_problem() -> str | None:
    """None when tmux is on PATH, else what is missing and how to fix it."""
    return tmux_problem(SETUP_HINT)


def require_tmux() -> str:
    return tmux_binary(SETUP_HINT, GeminiNotInstalled)


def build_settings(
    *,
    mcp_servers: Mapping[str, Any] | None = None,
    hooks: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`OFFLINE_SETTINGS` plus the caller's `mcpServers`, `hooks` and other overrides."""
    settings: dict[str, Any] = json.loads(json.dumps(OFFLINE_SETTINGS))
    if mcp_servers:
        settings["mcpServers"] = dict(mcp_servers)
    if hooks:
        settings["hooks"] = dict(hooks)
    if extra:
        settings = deep_merge(settings, extra)
    return settings


@dataclass(frozen=True)
class GeminiHome:
    root: Path  # scratch dir owning everything below
    home: Path  # $HOME for the CLI
    workspace: Path  # the CLI's cwd (kept apart from $HOME: no home-dir warning)
    settings_path: Path  # $HOME/.gemini/settings.json

    @property
    def gemini_dir(self) -> Path:
        return self.home / ".gemini"

    def settings(self) -> dict[str, Any]:
        data = json.loads(self.settings_path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}


def prepare_home(
    root: Path,
    *,
    mcp_servers: Mapping[str, Any] | None = None,
    hooks: Mapping[str, Any] | None = None,
    extra_settings: Mapping[str, Any] | None = None,
) -> GeminiHome:
    """Create `<root>/home/.gemini/settings.json` and `<root>/workspace`."""
    root = root.resolve()
    home = root / "home"
    workspace = root / "workspace"
    gemini_dir = home / ".gemini"
    gemini_dir.mkdir(parents=True, exist_ok=True)
    workspace.mkdir(parents=True, exist_ok=True)
    settings_path = gemini_dir / "settings.json"
    settings = build_settings(mcp_servers=mcp_servers, hooks=hooks, extra=extra_settings)
    settings_path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    return GeminiHome(root=root, home=home, workspace=workspace, settings_path=settings_path)


def gemini_env(
    home: GeminiHome | Path,
    base_url: str,
    *,
    api_key: str = "exo-e2e-offline-key",
    no_relaunch: bool = True,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The complete environment for the CLI (not merged with os.environ).

    `no_relaunch` sets GEMINI_CLI_NO_RELAUNCH: by default the CLI re-executes itself in
    a child node process (to raise the heap limit); skipping that saves ~3 s of start-up
    and leaves a single process in the pane.
    """
    home_dir = home.home if isinstance(home, GeminiHome) else Path(home)
    env = scrubbed_env()
    env.update(
        {
            "HOME": str(home_dir),
            "GEMINI_API_KEY": api_key,
            "GOOGLE_GEMINI_BASE_URL": base_url.rstrip("/"),
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
    )
    if no_relaunch:
        env["GEMINI_CLI_NO_RELAUNCH"] = "true"
    if extra:
        env.update(extra)
    return env


def gemini_command(
    *,
    yolo: bool = False,
    model: str | None = None,
    extra_args: Sequence[str] = (),
) -> list[str]:
    cmd = [str(require_gemini())]
    if yolo:
        cmd.append("--yolo")
    if model:
        cmd += ["--model", model]
    cmd += list(extra_args)
    return cmd


# ---------------------------------------------------------------------------- tmux


class Tmux(BaseTmux):
    """A private tmux server (`tmux -L exo-e2e-<hex>`); `kill()` ends it and its panes.

    The tmux binary is resolved lazily (run() raises GeminiNotInstalled), so fixtures
    can build one without failing before the test body reports a setup problem. tmux
    runs with the caller's environment; sessions are 160 columns wide.
    """

    socket_prefix = "exo-e2e"
    default_width = 160

    def require_tmux(self) -> str:
        return require_tmux()


@dataclass
class GeminiPane(TmuxPane[GeminiHome]):
    """Gemini CLI in a pane; ready when the empty input box (`READY_MARKER`) shows.

    `type_message` pauses 150 ms before the Enter: Gemini CLI turns an Enter that it
    *processes* within 30 ms of a typed character into a newline (no-bracketed-paste
    heuristic). Timing the keys 150 ms apart is not enough while the CLI's event loop is
    busy (the first seconds after the prompt appears): both writes then sit in the pty
    and are read as one chunk (`"text\r"`), the Enter becomes a newline and the message
    is never sent. So by default it waits until the typed text is rendered in the pane
    (the CLI has consumed it) before the pause and the Enter.
    """

    program = "Gemini CLI"
    blocking_dialogs = BLOCKING_DIALOGS
    enter_delay = 0.15

    def is_ready(self, screen: str) -> bool:
        return READY_MARKER in screen


def write_launcher(
    home: GeminiHome,
    env: Mapping[str, str],
    argv: Sequence[str],
    *,
    name: str = "launch-gemini.sh",
) -> Path:
    """A /bin/sh script that runs `argv` in `home.workspace` with exactly `env`.

    TERM is taken from the pane (tmux sets it); nothing else from outside gets in.
    """
    return harness_write_launcher(home.root / name, home.workspace, env, argv)


#: What ExoMonad puts in a worker's pane environment, passed through by `worker_launcher`.
EXOMONAD_WORKER_ENV = ("EXOMONAD_TOKEN", "EXOMONAD_DIR", "EXOMONAD_NAME", "EXOMONAD_TEAM",
                       "CLAUDE_CONFIG_DIR", "GIT_CONFIG_PARAMETERS")  # fmt: skip


def worker_launcher(home: GeminiHome, base_url: str, *, name: str = "gemini-worker.sh",
                    extra_env: Mapping[str, str] | None = None) -> Path:  # fmt: skip
    """A `[workers] command` for ExoMonad: Gemini CLI (`--yolo`) against the scripted
    model, run where ExoMonad starts it (the worker's worktree), keeping the identity
    ExoMonad gives it in the pane's environment."""
    env = gemini_env(home, base_url, extra=extra_env)
    return harness_write_launcher(home.root / name, None, env, gemini_command(yolo=True),
                                  from_pane=EXOMONAD_WORKER_ENV)  # fmt: skip


def start_gemini_in_tmux(
    tmux: BaseTmux | str,
    home: GeminiHome,
    base_url: str,
    *,
    yolo: bool = False,
    model: str | None = None,
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    session: str = "gemini",
    width: int = 160,
    height: int = 50,
    ready_timeout: float = 60.0,
    wait_ready: bool = True,
) -> GeminiPane:
    """Launch the pinned Gemini CLI interactively in a new tmux session and wait for
    its input prompt. `tmux` is a `Tmux` or a socket name (a server of that name is
    used or started; the caller then owns killing it)."""
    server = tmux if isinstance(tmux, BaseTmux) else Tmux(tmux)
    argv = gemini_command(yolo=yolo, model=model, extra_args=extra_args)
    env = gemini_env(home, base_url, extra=extra_env)
    launcher = write_launcher(home, env, argv)
    started = time.monotonic()
    pane_id, pid = server.new_session(
        session, shlex.quote(str(launcher)), cwd=home.workspace, width=width, height=height
    )
    pane = GeminiPane(tmux=server, pane_id=pane_id, pane_pid=pid, home=home, started_at=started)
    if wait_ready:
        pane.wait_until_ready(ready_timeout)
    return pane


__all__ = [
    "BLOCKING_DIALOGS",
    "GEMINI_BIN",
    "GEMINI_VERSION",
    "OFFLINE_SETTINGS",
    "READY_MARKER",
    "SETUP_HINT",
    "GeminiHome",
    "GeminiNotInstalled",
    "GeminiPane",
    "PaneError",
    "Tmux",
    "TmuxPane",
    "build_settings",
    "gemini_command",
    "gemini_env",
    "gemini_install_problem",
    "prepare_home",
    "require_gemini",
    "require_tmux",
    "start_gemini_in_tmux",
    "tmux_install_problem",
    "write_launcher",
]
