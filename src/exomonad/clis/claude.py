"""Claude Code (both pinned versions) in an isolated home, ready to start unattended.

Both versions are installed side by side in `<CLI_ROOT>/claude/node_modules` under npm
aliases (one package name cannot be installed twice):

* `claude-code-112` = `@anthropic-ai/claude-code@2.1.112`: a `cli.js` run with `node`.
* `claude-code-330` = `@anthropic-ai/claude-code@2.1.330`: a native binary from the
  platform's optional dependency (`@anthropic-ai/claude-code-linux-x64/claude`). Teams
  only exist in its interactive client, so it runs in a tmux pane.

Pieces: `CLAUDE_112` / `CLAUDE_330` (`ClaudeVersion`: where each lives, its argv,
`install_problem()`), `prepare_home(root, ...)` (HOME, CLAUDE_CONFIG_DIR and workspace
with the global config seeded so no first-run dialog blocks), `claude_env(home,
base_url)`, `claude_command(version, ...)`, `write_launcher(home, env, argv)` and
`is_ready_screen(screen)`.

What it takes to reach 2.1.330's prompt offline, as root, with no key press:

* `<config>/.claude.json` (the global config lives there once CLAUDE_CONFIG_DIR is set):
  `hasCompletedOnboarding: true` (else the welcome screen probes api.anthropic.com and
  stops at "Unable to connect to Anthropic services"), `projects[<workspace realpath>]
  .hasTrustDialogAccepted: true` (else "Quick safety check: Is this a project you
  created or one you trust?"), `customApiKeyResponses.approved: [<last 20 chars of
  ANTHROPIC_API_KEY>]` (else "Detected a custom API key", whose default is No).
* `<config>/settings.json`: `skipDangerousModePermissionPrompt: true` (else the "Bypass
  Permissions mode" disclaimer, default "No, exit"), and `teammateMode: "tmux"` for
  pane teammates.
* env: `IS_SANDBOX=1` as root for `--permission-mode bypassPermissions`; TMUX and
  TMUX_PANE must reach the client (the launcher keeps them) or teammateMode tmux
  cannot split panes.
* Ready: the empty input line is the prompt glyph alone; first paint takes ~1-2 s.
* Teammate panes that Claude Code splits run `cd <cwd> && env CLAUDECODE=1
  CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1 ANTHROPIC_BASE_URL=.. CLAUDE_CONFIG_DIR=..
  NO_PROXY=.. <program> --agent-id ..` in the pane's shell; everything else (HOME,
  ANTHROPIC_API_KEY, PATH) comes from the tmux session/server environment, which is why
  `Tmux` starts its server with a scrubbed env and `start_claude_in_tmux` exports the
  client's env to the session.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from exomonad.clis import CLI_ROOT, package_version, setup_hint
from exomonad.clis.env import deep_merge, scrubbed_env
from exomonad.clis.env import write_launcher as env_write_launcher
from exomonad.teams import TeamPaths

__all__ = [
    "BLOCKING_DIALOGS",
    "CLAUDE_112",
    "CLAUDE_330",
    "CLAUDE_NPM_DIR",
    "DEFAULT_API_KEY",
    "NODE_MODULES",
    "PROMPT_GLYPH",
    "SETUP_HINT",
    "VERSIONS",
    "ClaudeHome",
    "ClaudeNotInstalled",
    "ClaudeVersion",
    "claude_command",
    "claude_env",
    "global_config_seed",
    "is_ready_screen",
    "prepare_home",
    "write_launcher",
]

CLAUDE_NPM_DIR = CLI_ROOT / "claude"
NODE_MODULES = CLAUDE_NPM_DIR / "node_modules"
SETUP_HINT = setup_hint("claude")

#: Any string works offline; the last 20 characters are what the approval records.
DEFAULT_API_KEY = "sk-ant-api03-exo-e2e-offline-key-00000000"

#: The input prompt (U+276F HEAVY RIGHT-POINTING ANGLE QUOTATION MARK ORNAMENT).
PROMPT_GLYPH = "\u276f"

#: Screens that block the prompt; seeing one means the offline setup is incomplete.
BLOCKING_DIALOGS: dict[str, str] = {
    "Detected a custom API key": (
        "API-key dialog (its default answer is No): pre-approve the key's last 20 chars "
        "in <config>/.claude.json customApiKeyResponses.approved"
    ),
    "Unable to connect to Anthropic services": (
        "first-run onboarding (it probes api.anthropic.com, unreachable offline): set "
        "hasCompletedOnboarding in .claude.json"
    ),
    "Choose the text style": (
        "onboarding (theme) dialog: set hasCompletedOnboarding in .claude.json"
    ),
    "Quick safety check": (
        "folder-trust dialog: set projects[<workspace>].hasTrustDialogAccepted in .claude.json"
    ),
    "running in Bypass Permissions mode": (
        "bypass-permissions disclaimer: set skipDangerousModePermissionPrompt in settings.json"
    ),
}


class ClaudeNotInstalled(RuntimeError):
    """A pinned Claude Code is missing from `<CLI_ROOT>/claude/node_modules`."""


def _native_platform_package() -> str:
    """`@anthropic-ai/claude-code-<os>-<arch>[-musl]`, as the wrapper's install.cjs picks."""
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        machine, machine
    )
    system = platform.system().lower()
    musl = system == "linux" and any(Path("/lib").glob("ld-musl-*.so.1"))
    return f"@anthropic-ai/claude-code-{system}-{arch}{'-musl' if musl else ''}"


@dataclass(frozen=True)
class ClaudeVersion:
    """One pinned Claude Code, installed under the npm alias `alias`."""

    version: str
    alias: str
    native: bool  # a native binary (2.1.330) rather than node + cli.js (2.1.112)

    @property
    def package_dir(self) -> Path:
        return NODE_MODULES / self.alias

    @property
    def native_binary(self) -> Path:
        """The platform package's binary (present even if postinstall did not run)."""
        return NODE_MODULES / _native_platform_package() / "claude"

    @property
    def entry(self) -> Path:
        return self.native_binary if self.native else self.package_dir / "cli.js"

    def argv(self) -> list[str]:
        """The command prefix that runs this version."""
        if self.native:
            return [str(self.entry)]
        node = shutil.which("node") or "node"
        return [node, str(self.entry)]

    def install_problem(self) -> str | None:
        """None when installed as pinned, else what is wrong and how to fix it."""
        found = package_version(self.package_dir / "package.json")
        if found is None:
            return (
                f"Claude Code {self.version} is not installed under {NODE_MODULES} "
                f"(alias {self.alias}): {SETUP_HINT}"
            )
        if found != self.version:
            return f"{self.alias} is version {found!r}, expected {self.version!r}: {SETUP_HINT}"
        if self.native:
            pkg = self.native_binary.parent
            native_version = package_version(pkg / "package.json")
            if native_version != self.version or not os.access(self.native_binary, os.X_OK):
                return (
                    f"the native binary {self.native_binary} for Claude Code {self.version} is "
                    f"missing (its optional dependency {pkg.name} was not installed; "
                    f"--omit=optional?): {SETUP_HINT}"
                )
        elif shutil.which("node") is None:
            return f"`node` is not on PATH: {SETUP_HINT}"
        elif not self.entry.is_file():
            return f"{self.entry} is missing: {SETUP_HINT}"
        return None

    def require(self) -> list[str]:
        problem = self.install_problem()
        if problem is not None:
            raise ClaudeNotInstalled(problem)
        return self.argv()


CLAUDE_112 = ClaudeVersion("2.1.112", "claude-code-112", native=False)
CLAUDE_330 = ClaudeVersion("2.1.330", "claude-code-330", native=True)
VERSIONS = {v.version: v for v in (CLAUDE_112, CLAUDE_330)}


# ---------------------------------------------------------------------------- home


@dataclass(frozen=True)
class ClaudeHome:
    root: Path  # scratch dir owning everything below
    home: Path  # $HOME
    config_dir: Path  # $CLAUDE_CONFIG_DIR: teams/, tasks/, settings.json, .claude.json
    workspace: Path  # the client's cwd
    api_key: str

    @property
    def global_config_path(self) -> Path:
        """With CLAUDE_CONFIG_DIR set, the global config is `<config>/.claude.json`."""
        return self.config_dir / ".claude.json"

    @property
    def settings_path(self) -> Path:
        return self.config_dir / "settings.json"

    @property
    def teams_dir(self) -> Path:
        return self.config_dir / "teams"

    def team(self, name: str) -> TeamPaths:
        return TeamPaths(name, self.config_dir)

    def team_configs(self) -> dict[str, dict[str, Any]]:
        """Team name -> parsed config.json, for every readable team config."""
        out: dict[str, dict[str, Any]] = {}
        for cfg in sorted(self.teams_dir.glob("*/config.json")):
            with contextlib.suppress(OSError, ValueError):
                data = json.loads(cfg.read_text(encoding="utf-8"))
                if isinstance(data, dict) and isinstance(data.get("name"), str):
                    out[data["name"]] = data
        return out

    def global_config(self) -> dict[str, Any]:
        data = json.loads(self.global_config_path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}

    def debug_logs(self) -> list[Path]:
        """`--debug` logs (`<config>/debug/<session>.txt`), oldest first."""
        return sorted((self.config_dir / "debug").glob("*.txt"), key=lambda p: p.stat().st_mtime)


def global_config_seed(workspace: Path, api_key: str) -> dict[str, Any]:
    """What `<config>/.claude.json` needs so the interactive client opens no dialog."""
    return {
        "hasCompletedOnboarding": True,
        "customApiKeyResponses": {"approved": [api_key.strip()[-20:]], "rejected": []},
        "projects": {
            str(workspace): {
                "hasTrustDialogAccepted": True,
                "hasCompletedProjectOnboarding": True,
            }
        },
    }


def prepare_home(
    root: Path,
    *,
    api_key: str = DEFAULT_API_KEY,
    teammate_mode: str | None = None,
    settings: Mapping[str, Any] | None = None,
    global_config: Mapping[str, Any] | None = None,
    seed: bool = True,
) -> ClaudeHome:
    """Create `<root>/{home,config,workspace}` with a seeded global config and settings.

    `teammate_mode` ("tmux", "in-process", "auto") goes into settings.json;
    `settings` / `global_config` are merged over the defaults; `seed=False` writes no
    `.claude.json` (to see the first-run dialogs).
    """
    root = root.resolve()
    home, config_dir, workspace = root / "home", root / "config", root / "workspace"
    for d in (home, config_dir, workspace):
        d.mkdir(parents=True, exist_ok=True)
    workspace = workspace.resolve()
    if seed:
        data = global_config_seed(workspace, api_key)
        if global_config:
            data = deep_merge(data, global_config)
        (config_dir / ".claude.json").write_text(json.dumps(data, indent=2) + "\n", "utf-8")
    user_settings: dict[str, Any] = {"skipDangerousModePermissionPrompt": True}
    if teammate_mode is not None:
        user_settings["teammateMode"] = teammate_mode
    if settings:
        user_settings = deep_merge(user_settings, settings)
    (config_dir / "settings.json").write_text(json.dumps(user_settings, indent=2) + "\n", "utf-8")
    return ClaudeHome(
        root=root, home=home, config_dir=config_dir, workspace=workspace, api_key=api_key
    )


def claude_env(
    home: ClaudeHome,
    base_url: str,
    *,
    teams: bool = True,
    nonessential_traffic: bool = False,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The complete environment for the client (not merged with os.environ).

    `IS_SANDBOX=1` is set when running as root: without it Claude Code refuses
    `--permission-mode bypassPermissions` / `--dangerously-skip-permissions` for root.
    `nonessential_traffic=False` sets CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1.
    """
    env = scrubbed_env()
    env.update(
        {
            "HOME": str(home.home),
            "CLAUDE_CONFIG_DIR": str(home.config_dir),
            "ANTHROPIC_BASE_URL": base_url.rstrip("/"),
            "ANTHROPIC_API_KEY": home.api_key,
            "DISABLE_AUTOUPDATER": "1",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
    )
    if teams:
        env["CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS"] = "1"
    if not nonessential_traffic:
        env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"
    if extra:
        env.update(extra)
    return env


def claude_command(
    version: ClaudeVersion,
    *,
    prompt: str | None = None,
    headless: bool = False,
    stream_input: bool = False,
    permission_mode: str | None = "bypassPermissions",
    teammate_mode: str | None = None,
    debug: bool = False,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """The argv. Headless (`headless=True` or a `prompt`) adds `-p` with stream-json
    output (`--verbose` is required for it); `stream_input` reads user turns as
    stream-json lines from stdin instead of a prompt argument."""
    cmd = version.require()
    if headless or prompt is not None or stream_input:
        cmd.append("-p")
        if prompt is not None:
            cmd.append(prompt)
        cmd += ["--output-format", "stream-json", "--verbose"]
        if stream_input:
            cmd += ["--input-format", "stream-json"]
    if permission_mode:
        cmd += ["--permission-mode", permission_mode]
    if teammate_mode:
        cmd += ["--teammate-mode", teammate_mode]
    if debug:
        cmd.append("--debug")  # writes <config>/debug/<session>.txt
    cmd += list(extra_args)
    return cmd


def is_ready_screen(screen: str) -> bool:
    """The input box is empty and focused: a line that is just the prompt glyph.

    (Dialogs draw the glyph before the selected choice, e.g. `<glyph> No, exit`, never
    alone.)
    """
    return any(line.strip() == PROMPT_GLYPH for line in screen.splitlines())


def write_launcher(
    home: ClaudeHome, env: Mapping[str, str], argv: Sequence[str], *, name: str = "launch.sh"
) -> Path:
    """A /bin/sh script that runs `argv` in `home.workspace` with exactly `env`, plus
    the pane's TERM, TMUX and TMUX_PANE (teammateMode tmux needs to know it is in tmux)."""
    return env_write_launcher(
        home.root / name, home.workspace, env, argv, from_pane=("TMUX", "TMUX_PANE")
    )
