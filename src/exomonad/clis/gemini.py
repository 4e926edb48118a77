"""Gemini CLI (pinned: `<CLI_ROOT>/package.json`) in an isolated home, ready to start.

* `require_gemini()` / `gemini_install_problem()`: the pinned binary, or what is missing.
* `prepare_home(root, ...)`: an isolated HOME with `~/.gemini/settings.json` that selects
  API-key auth and switches off everything that would phone home or open a dialog.
* `gemini_env(home, base_url)`: a scrubbed environment (built from scratch, so the
  caller's `CI`, `GOOGLE_*`, `TERM_PROGRAM`, proxies, ... cannot leak in).
* `gemini_command(yolo=...)`: the argv.

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
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from exomonad.clis import CLI_ROOT, package_version, setup_hint
from exomonad.clis.env import deep_merge, scrubbed_env

__all__ = [
    "BLOCKING_DIALOGS",
    "GEMINI_BIN",
    "GEMINI_VERSION",
    "OFFLINE_SETTINGS",
    "READY_MARKER",
    "SETUP_HINT",
    "GeminiHome",
    "GeminiNotInstalled",
    "build_settings",
    "gemini_command",
    "gemini_env",
    "gemini_install_problem",
    "prepare_home",
    "require_gemini",
]

GEMINI_VERSION = "0.61.0"
GEMINI_PACKAGE_DIR = CLI_ROOT / "node_modules" / "@google" / "gemini-cli"
GEMINI_BIN = CLI_ROOT / "node_modules" / ".bin" / "gemini"
SETUP_HINT = setup_hint()

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
    """The pinned Gemini CLI is missing from `<CLI_ROOT>/node_modules`."""


def gemini_install_problem() -> str | None:
    """None when the pinned CLI is installed, else what is wrong and how to fix it."""
    pkg = GEMINI_PACKAGE_DIR / "package.json"
    if not GEMINI_BIN.exists() or not pkg.exists():
        return f"Gemini CLI {GEMINI_VERSION} is not installed under {CLI_ROOT}: {SETUP_HINT}"
    version = package_version(pkg)
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
