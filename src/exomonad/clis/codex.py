"""Codex CLI (pinned: `<CLI_ROOT>/codex/package.json`) in an isolated home, ready to start.

* `require_codex()` / `codex_install_problem()`: the pinned launcher, or what is missing.
* `prepare_home(root, base_url, ...)`: an isolated `$HOME` whose `~/.codex/config.toml`
  selects a custom Responses provider at `base_url`, trusts the workspace and switches
  off everything that would phone home; plus a project `.codex/config.toml` (hooks) when
  asked. `CodexHome.trust_hooks()` records hook trust the way a person choosing "Trust
  all" in the TUI would (:func:`exomonad.runtimes.codex_trust.hook_trust_entries`).
* `codex_env(home)`: a scrubbed environment built from scratch.
* `codex_processes(home)` / `kill_codex_processes(home)`: what Codex left running (the
  app-server daemon and its MCP servers), to end after a run.

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
import os
import shutil
import signal
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit

from exomonad.clis import CLI_ROOT, package_version, setup_hint
from exomonad.clis.env import deep_merge, scrubbed_env
from exomonad.runtimes.codex_trust import hook_trust_entries
from exomonad.util.digits import is_number
from exomonad.util.proc import pid_alive

__all__ = [
    "API_KEY_ENV",
    "BLOCKING_DIALOGS",
    "CODEX_BIN",
    "CODEX_NODE_DIR",
    "CODEX_VERSION",
    "DEAD_PROXY",
    "DEFAULT_MODEL",
    "PROVIDER_ID",
    "READY_MARKER",
    "SETUP_HINT",
    "CodexHome",
    "CodexNotInstalled",
    "codex_env",
    "codex_install_problem",
    "codex_processes",
    "kill_codex_processes",
    "offline_config",
    "prepare_home",
    "provider_config",
    "require_codex",
]

CODEX_NODE_DIR = CLI_ROOT / "codex"
CODEX_VERSION = "0.169.0"
CODEX_PACKAGE_DIR = CODEX_NODE_DIR / "node_modules" / "@openai" / "codex"
CODEX_BIN = CODEX_NODE_DIR / "node_modules" / ".bin" / "codex"
SETUP_HINT = setup_hint("codex")

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
    """The pinned Codex CLI is missing from `<CLI_ROOT>/codex/node_modules`."""


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
    version = package_version(pkg)
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
        self.config_path.write_text(tomlkit.dumps(config), encoding="utf-8")

    def update_config(self, extra: Mapping[str, Any]) -> None:
        self.write_config(deep_merge(self.config(), extra))

    def write_project_config(self, config: Mapping[str, Any]) -> Path:
        path = self.project_config_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(tomlkit.dumps(config), encoding="utf-8")
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
        if not is_number(entry.name) or int(entry.name) in skip:
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
