"""``exomonad doctor``: is this machine and this repository ready for ExoMonad?

Each check has a status (``ok``, ``warn``, ``fail``), a one-line detail and, unless ok,
the exact command that fixes it. The checks:

* ``exomonad`` on PATH, the same install and version as the one running;
* every ExoMonad hook in ``.claude/settings.json``, ``.claude/settings.local.json`` and
  ``.gemini/settings.json`` resolves on PATH and runs (``session-end`` with ``{}`` on
  stdin: a no-op that must exit 0);
* the MCP servers (``.mcp.json``'s ``exomonad``, Gemini's ``exo``) and
  ``CLAUDE_CODE_TEAMMATE_COMMAND`` resolve;
* nothing machine-specific in the committed files (absolute paths under the home dir,
  the virtualenv, the temp dir or this checkout);
* the project's server answers ``/health`` (warn when none runs);
* each runtime's CLI (``claude``, ``gemini``: warn), ``tmux`` and ``git`` (fail);
* git worktrees whose directory is gone (warn: ``git worktree prune``).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from exomonad import __version__, runtimes
from exomonad.errors import ExomonadError
from exomonad.server.pidfile import read_server_info, server_request
from exomonad.setup import is_ours
from exomonad.util.selfexec import EXOMONAD, HOOK_FRONT, locate, path_fix

__all__ = ["Check", "Status", "run_checks"]

Status = Literal["ok", "warn", "fail"]
REINIT = "exomonad init"
#: Files ``init`` writes that people commit (``settings.local.json`` is not committed).
COMMITTED = (".mcp.json", *(r.settings_file for r in runtimes.RUNTIMES.values()
                             if r.settings_file))  # fmt: skip
#: Agent settings files that may hold ExoMonad's hooks, and whose they are.
HOOK_FILES = {**{r.settings_file: r.name for r in runtimes.RUNTIMES.values() if r.settings_file},
              ".claude/settings.local.json": "claude"}  # fmt: skip
AGENT_CLIS = tuple((r.program, r.npm_package) for r in runtimes.RUNTIMES.values() if r.program)
TIMEOUT = 15.0


@dataclass(frozen=True)
class Check:
    """One check's outcome: ``fix`` is the command to run when it is not ok."""

    name: str
    status: Status
    detail: str
    fix: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        """The check as JSON-ready data."""
        return asdict(self)


def run_checks(root: Path) -> list[Check]:
    """Every check for the repository at ``root``, in order."""
    return [
        _exomonad_on_path(),
        *_hook_checks(root),
        *_server_command_checks(root),
        _machine_specific(root),
        _server(root / ".exomonad"),
        *(_agent_cli(name, package) for name, package in AGENT_CLIS),
        _hook_front(),
        _tool("tmux", ["-V"], "apt-get install tmux"),
        _tool("git", ["--version"], "apt-get install git"),
        _worktrees(root),
    ]


def _run(argv: list[str] | str, *, cwd: Path | None = None, stdin: str = "",
         timeout: float = TIMEOUT) -> tuple[int, str]:  # fmt: skip
    """Run a command; (exit code, its output). 127 if it cannot start, 124 on timeout."""
    try:
        done = subprocess.run(argv, shell=isinstance(argv, str), cwd=cwd, input=stdin,
                              capture_output=True, text=True, timeout=timeout,
                              check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        return 124, f"no answer within {timeout:g}s"
    except OSError as exc:
        return 127, str(exc)
    return done.returncode, (done.stdout.strip() or done.stderr.strip())


def _first_line(text: str) -> str:
    return text.splitlines()[0].strip() if text.strip() else ""


def _exomonad_on_path() -> Check:
    name = "exomonad on PATH"
    where = locate(EXOMONAD)
    if where.found is None:
        return Check(name, "fail", "`exomonad` is not on PATH: hooks and MCP servers cannot "
                     "start", path_fix())  # fmt: skip
    code, out = _run([where.found, "version"])
    version = _first_line(out)
    if code != 0 or version != __version__:
        return Check(name, "fail", f"{where.found} says {version or f'exit {code}'!r}, this is "
                     f"{__version__}", path_fix())  # fmt: skip
    if where.ours is False:
        return Check(name, "warn", f"{where.found} ({version}) is another install than "
                     f"{sys.executable}", path_fix())  # fmt: skip
    return Check(name, "ok", f"{where.found} ({version})")


def _load(path: Path) -> dict[str, Any] | None:
    """A JSON object file (TOML for ``*.toml``); None if absent; raises
    :class:`ExomonadError` if broken."""
    if not path.exists():
        return None
    try:
        text = path.read_text("utf-8")
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text or "{}")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ExomonadError(f"{path} is unreadable: {exc}") from exc
    if not isinstance(data, dict):
        raise ExomonadError(f"{path} is not a JSON object")
    return data


def _resolve(program: str, root: Path) -> str | None:
    """Where ``program`` (a command's first word) is: on PATH, or a path from ``root``."""
    if "/" in program:
        path = root / os.path.expanduser(program)
        return str(path) if os.access(path, os.X_OK) and path.is_file() else None
    return shutil.which(program)


def _our_hook_commands(data: dict[str, Any]) -> list[str]:
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return []
    out: list[str] = []
    for entries in hooks.values():
        for entry in entries if isinstance(entries, list) else []:
            if is_ours(entry):
                out += [str(h["command"]) for h in entry["hooks"]
                        if isinstance(h, dict) and "command" in h]  # fmt: skip
    return out


def _harmless(command: str) -> str | None:
    """``command`` with its hook event replaced by ``session-end`` (a no-op)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if "hook" not in words[:-1]:
        return None
    at = words.index("hook") + 1
    return shlex.join([*words[:at], "session-end", *words[at + 1 :]])


def _hook_checks(root: Path) -> Iterator[Check]:
    for rel, runtime in HOOK_FILES.items():
        name = f"hooks in {rel}"
        try:
            data = _load(root / rel)
        except ExomonadError as exc:
            yield Check(name, "fail", str(exc), f"fix {rel}, then: {REINIT}")
            continue
        commands = _our_hook_commands(data or {})
        if not commands:
            if rel == ".claude/settings.local.json":
                continue  # optional: only checked when ExoMonad hooks are in it
            yield Check(name, "fail", "no ExoMonad hooks", REINIT)
            continue
        yield _hook_check(name, root, runtime, sorted(set(commands)))


def _hook_check(name: str, root: Path, runtime: str, commands: list[str]) -> Check:
    runs = {c: _harmless(c) for c in commands}
    for command, trial in runs.items():
        program = _resolve(shlex.split(command)[0], root) if trial else None
        if trial is None or program is None:
            fix = path_fix() if command.startswith((f"{EXOMONAD} ", f"{HOOK_FRONT} ")) else REINIT
            return Check(name, "fail", f"`{command}` does not resolve on PATH", fix)
    ran: list[str] = []
    for trial in sorted({t for t in runs.values() if t}):
        code, out = _run(trial, cwd=root, stdin="{}")
        if code != 0:
            return Check(name, "fail", f"`{trial}` exited {code}: {_first_line(out)[:160]}",
                         REINIT)  # fmt: skip
        ran.append(trial)
    program = shutil.which(EXOMONAD) or EXOMONAD
    return Check(name, "ok", f"{len(commands)} {runtime} hooks resolve ({program}); "
                 f"ran `{'`, `'.join(ran)}`: exit 0")  # fmt: skip


def _server_command_checks(root: Path) -> Iterator[Check]:
    wanted = ((".mcp.json", ("mcpServers", "exomonad"), "MCP server in .mcp.json"),
              (".gemini/settings.json", ("mcpServers", "exo"), "Gemini MCP server exo"),
              (".claude/settings.json", ("env", "CLAUDE_CODE_TEAMMATE_COMMAND"),
               "CLAUDE_CODE_TEAMMATE_COMMAND"))  # fmt: skip
    for rel, (section, key), name in wanted:
        try:
            data = _load(root / rel) or {}
        except ExomonadError as exc:
            yield Check(name, "fail", str(exc), f"fix {rel}, then: {REINIT}")
            continue
        value = (data.get(section) or {}).get(key)
        command = value.get("command") if isinstance(value, dict) else value
        if not isinstance(command, str) or not command:
            yield Check(name, "fail", f"not set in {rel}", REINIT)
            continue
        found = _resolve(command, root)
        if found is None:
            fix = path_fix(command) if "/" not in command else REINIT
            yield Check(name, "fail", f"`{command}` ({rel}) does not resolve on PATH", fix)
        else:
            yield Check(name, "ok", f"`{command}` → {found}")


def _machine_prefixes(root: Path) -> list[str]:
    """Absolute paths that exist on this machine only."""
    found = [str(Path.home()), tempfile.gettempdir(), "/tmp", str(root.resolve())]
    if sys.prefix != sys.base_prefix:
        found.append(sys.prefix)  # the virtualenv (base_prefix may well be /usr)
    if os.environ.get("VIRTUAL_ENV"):
        found.append(os.environ["VIRTUAL_ENV"])
    return sorted({p.rstrip("/") for p in found if p not in ("", "/")})


def _strings(data: Any, where: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _strings(value, f"{where}.{key}" if where else str(key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _strings(value, f"{where}[{i}]")
    elif isinstance(data, str):
        yield where, data


def _machine_specific(root: Path) -> Check:
    name = "portable committed files"
    prefixes = _machine_prefixes(root)
    hits: list[str] = []
    for rel in COMMITTED:
        try:
            data = _load(root / rel)
        except ExomonadError as exc:
            return Check(name, "fail", str(exc), f"fix {rel}, then: {REINIT}")
        for where, text in _strings(data):
            words = text.replace("=", " ").replace(":", " ").split()
            if any(w == p or w.startswith(p + "/") for w in words for p in prefixes):
                hits.append(f"{rel} {where}: {text[:80]}")
    if hits:
        more = f" (+{len(hits) - 1} more)" if len(hits) > 1 else ""
        return Check(name, "fail", f"machine-specific path in {hits[0]}{more}", REINIT)
    return Check(name, "ok", f"no machine-specific paths in {', '.join(COMMITTED)}")


def _server(state: Path) -> Check:
    name = "server"
    info = read_server_info(state)
    if info is None or not info.alive:
        return Check(
            name, "warn", "no server running for this project", "exomonad up (or exomonad serve)"
        )
    try:
        status, health = server_request(info.socket, "GET", "/health", timeout=5.0)
    except ExomonadError as exc:
        return Check(name, "fail", f"pid {info.pid} runs but {exc}",
                     f"kill {info.pid} && exomonad serve")  # fmt: skip
    if status != 200:
        return Check(name, "fail", f"/health answered {status}",
                     f"kill {info.pid} && exomonad serve")  # fmt: skip
    version = health.get("version", info.version) if isinstance(health, dict) else info.version
    if version != __version__:
        return Check(name, "warn", f"pid {info.pid} runs ExoMonad {version}, this is "
                     f"{__version__}", f"kill {info.pid} && exomonad serve")  # fmt: skip
    return Check(name, "ok", f"pid {info.pid} on {info.socket}: /health ok")


def _tool(program: str, args: list[str], fix: str, missing: Status = "fail") -> Check:
    found = shutil.which(program)
    if found is None:
        return Check(program, missing, f"`{program}` is not on PATH", fix)
    code, out = _run([found, *args])
    if code != 0:
        return Check(program, missing, f"`{program} {' '.join(args)}` exited {code}: "
                     f"{_first_line(out)[:120]}", fix)  # fmt: skip
    return Check(program, "ok", f"{_first_line(out)} ({found})")


#: Where the shell front ``exomonad-hook`` looks for netcat-openbsd (as its script says).
NC_OPENBSD = ("/usr/bin/nc.openbsd", "/bin/nc.openbsd")


def _hook_front() -> Check:
    """The team's hooks (the workers', and the lead's under ``exomonad up``) are answered
    by the shell front only with netcat-openbsd."""
    found = next((p for p in NC_OPENBSD if os.access(p, os.X_OK)), None)
    if found is None:
        return Check("hook front", "warn", "netcat-openbsd is not installed: the team's "
                     "hooks run the Python client (about 5 times the CPU per tool call)",
                     "apt-get install netcat-openbsd")  # fmt: skip
    return Check("hook front", "ok", f"the team's hooks answered by {HOOK_FRONT} with {found}")


def _agent_cli(program: str, package: str) -> Check:
    return _tool(program, ["--version"], f"npm install -g {package}", missing="warn")


def _worktrees(root: Path) -> Check:
    name = "git worktrees"
    if shutil.which("git") is None:
        return Check(name, "warn", "git is not installed", "apt-get install git")
    code, out = _run(["git", "-C", str(root), "worktree", "list", "--porcelain"])
    if code != 0:
        return Check(name, "warn", f"not a git repository: {_first_line(out)[:120]}",
                     f"git -C {shlex.quote(str(root))} init")  # fmt: skip
    trees = [b for b in out.split("\n\n") if b.startswith("worktree ")]
    gone = [b.splitlines()[0].removeprefix("worktree ") for b in trees
            if any(line.startswith("prunable") for line in b.splitlines())]  # fmt: skip
    if gone:
        return Check(name, "warn", f"{len(gone)} of {len(trees)} worktrees are gone: "
                     f"{', '.join(gone[:3])}", "git worktree prune")  # fmt: skip
    return Check(name, "ok", f"{len(trees)} worktree(s), none stale")
