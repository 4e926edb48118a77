"""The demo's stage: three model servers, three CLI homes, and a project set up the way a
user sets one up, everything under one scratch directory.

* The models: :class:`Models` (scripted, or relaying to the real APIs with ``--live``).
* Every ``exomonad`` / ``exomonad-teammate`` that runs is this installation's
  (:func:`exomonad.clis.launchers.write_shims` first on PATH everywhere).
* The project is Claude Code's workspace: a README, ``exomonad init
  --trust-codex-hooks`` (the user's consent for Codex workers, recorded in the Codex
  home the workers get), committed, pushed to a bare ``origin``; then the demo's own
  settings in ``.exomonad/config.toml``: where ``exomonad teammate`` routes
  ``gemini-*`` and ``codex-*`` (the launchers of the prepared CLIs), an unattended
  policy (no popup; an escalation nobody answers is a deny), the tmux session.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit

from exomonad.clis.claude import (
    CLAUDE_330,
    DEFAULT_API_KEY,
    ClaudeHome,
    claude_command,
    claude_env,
    write_launcher,
)
from exomonad.clis.claude import prepare_home as prepare_claude
from exomonad.clis.codex import API_KEY_ENV, CodexHome
from exomonad.clis.codex import prepare_home as prepare_codex
from exomonad.clis.env import scrubbed_env
from exomonad.clis.gemini import prepare_home as prepare_gemini
from exomonad.clis.launchers import SRC, write_codex_launcher, write_gemini_launcher, write_shims
from exomonad.demo import live, script
from exomonad.errors import ExomonadError
from exomonad.scripted.anthropic import ScriptedClaude
from exomonad.scripted.gemini import ScriptedGemini
from exomonad.scripted.openai import ScriptedCodex

__all__ = ["GIT_IDENTITY", "SESSION", "Models", "Stage", "build_stage", "open_models"]

#: The demo's git: its own identity, and no user or system config (signing, hooks...).
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "ExoMonad demo",
    "GIT_AUTHOR_EMAIL": "demo@example.invalid",
    "GIT_COMMITTER_NAME": "ExoMonad demo",
    "GIT_COMMITTER_EMAIL": "demo@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}
#: The tmux session `exomonad up` makes for the demo (on its own tmux server).
SESSION = "exomonad-demo"
README = "# demo\n\nA small project for `exomonad demo`: a lead and two workers.\n"
#: The caller's variables that stay out of everything the demo starts (the CLIs get
#: their keys from their launchers; ExoMonad's and Claude's from the stage).
PRIVATE = ("EXOMONAD_", "CLAUDE", "ANTHROPIC_", "GEMINI_", "GOOGLE_", "OPENAI_", "CODEX_")
#: The caller's own tmux session (TMUX_TMPDIR stays: the demo's tmux server is found there).
OWN_TMUX = ("TMUX", "TMUX_PANE")


@dataclass
class Models:
    """The model server each CLI talks to."""

    lead: ScriptedClaude
    gemini: ScriptedGemini
    codex: ScriptedCodex


@contextlib.contextmanager
def open_models(keys: Mapping[str, str] | None, env: Mapping[str, str]) -> Iterator[Models]:
    """Scripted models (``keys`` None), or relays to the real APIs."""
    models = Models(
        ScriptedClaude(responder=script.lead_responder()), ScriptedGemini(), ScriptedCodex()
    )
    if keys is None:
        script.script_gemini(models.gemini)
        script.script_codex(models.codex)
    else:
        models.lead.responder = None
        models.lead.relay_to(live.upstream("anthropic", env))
        models.gemini.relay_to(live.upstream("gemini", env))
        models.codex.relay_to(live.upstream("openai", env))
    with models.lead, models.gemini, models.codex:
        yield models


@dataclass
class Stage:
    """Everything the demo set up."""

    root: Path  # the scratch directory holding all of it
    bin_dir: Path  # this installation's `exomonad`, `exomonad-teammate`
    claude: ClaudeHome  # its workspace is the project
    codex: CodexHome
    remote: Path  # the project's bare `origin`
    env: dict[str, str]  # for `exomonad` commands and the tmux session
    socket: str  # the private tmux server (`tmux -L`)
    session: str  # the tmux session `exomonad up` makes
    lead_command: str  # Claude Code, as `exomonad up --lead` runs it
    origin_main: str  # `main` on origin when the demo began
    #: The tmux server's socket file, once it runs (tmux leaves it behind when it exits).
    socket_path: Path | None = None

    @property
    def project(self) -> Path:
        return self.claude.workspace

    @property
    def state(self) -> Path:
        return self.project / ".exomonad"

    def exo(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """``exomonad ARGS`` in the project, as the user would run it."""
        return subprocess.run(
            [str(self.bin_dir / "exomonad"), *args],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def git(self, *args: str, cwd: Path | None = None) -> str:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd or self.project,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise ExomonadError(f"git {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout.strip()


def _env(bin_dir: Path, claude: ClaudeHome, codex: CodexHome) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(PRIVATE) and k not in OWN_TMUX}
    env.update(
        GIT_IDENTITY,
        CLAUDE_CONFIG_DIR=str(claude.config_dir),
        EXOMONAD_DIR=str(claude.workspace / ".exomonad"),
        CODEX_HOME=str(codex.codex_home),
        PYTHONPATH=os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH")) if p),
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}",
    )
    return env


def _configure(state: Path, settings: dict[str, Any]) -> None:
    """Merge ``settings`` into the project's config.toml (comments kept)."""
    path = state / "config.toml"
    doc = tomlkit.parse(path.read_text("utf-8"))
    for table, values in settings.items():
        if table not in doc:
            doc[table] = tomlkit.table()
        doc[table].update(values)
    path.write_text(tomlkit.dumps(doc), "utf-8")


def build_stage(root: Path, models: Models, keys: Mapping[str, str] | None) -> Stage:
    """Homes, launchers and the committed project (see the module doc)."""
    keys = keys or {}
    bin_dir = write_shims(root / "bin")
    claude = prepare_claude(
        root / "claude",
        api_key=keys.get("ANTHROPIC_API_KEY", DEFAULT_API_KEY),
        teammate_mode="tmux",
        settings={"enableAllProjectMcpServers": True},
    )
    codex = prepare_codex(root / "codex", models.codex.base_url)
    gemini = prepare_gemini(root / "gemini")
    env = _env(bin_dir, claude, codex)
    socket = f"exo-demo-{secrets.token_hex(4)}"
    stage = Stage(root, bin_dir, claude, codex, root / "origin.git", env, socket, SESSION, "", "")
    project = stage.project
    (project / "README.md").write_text(README, "utf-8")
    done = stage.exo("init", str(project), "--trust-codex-hooks")
    if done.returncode != 0:
        raise ExomonadError(f"exomonad init failed: {done.stderr.strip()}")
    stage.git("init", "-q", "-b", "main")
    stage.git("add", "-A")
    stage.git("commit", "-q", "-m", "exomonad init")
    stage.git("init", "-q", "--bare", "-b", "main", str(stage.remote), cwd=root)
    stage.git("remote", "add", "origin", str(stage.remote))
    stage.git("push", "-q", "origin", "main")
    stage.origin_main = stage.git("rev-parse", "main", cwd=stage.remote)
    gemini_key = {"GEMINI_API_KEY": keys["GEMINI_API_KEY"]} if keys else {}
    codex_key = {API_KEY_ENV: keys["OPENAI_API_KEY"]} if keys else {}
    routes = [
        {
            "agent_type": "gemini*",
            "runtime": "gemini",
            "command": str(
                write_gemini_launcher(
                    gemini, models.gemini.url, bin_dir, extra_env={**GIT_IDENTITY, **gemini_key}
                )
            ),
        },
        {
            "agent_type": "codex*",
            "runtime": "codex",
            "command": str(
                write_codex_launcher(codex, bin_dir, extra_env={**GIT_IDENTITY, **codex_key})
            ),
        },
    ]
    _configure(
        stage.state,
        {
            "workers": {"tmux_session": stage.session},
            "lead": {"poll_grace": 20.0},
            "policy": {"approval_timeout": 10.0, "on_timeout": "deny", "popup": False},
            "teammate": {"routes": routes},
        },
    )
    path = f"{bin_dir}{os.pathsep}{scrubbed_env()['PATH']}"
    # EXOMONAD_DIR: what `exomonad up` gives the lead's window (the launcher's `env -i`
    # would drop it), so the lead's hooks go through the shell front as in real use.
    extra = {"PATH": path, "EXOMONAD_DIR": str(stage.state)}
    lead_env = claude_env(claude, models.lead.url, extra=extra)
    stage.lead_command = str(write_launcher(claude, lead_env, claude_command(CLAUDE_330)))
    return stage
