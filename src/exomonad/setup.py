"""``exomonad init``: set a repository up for ExoMonad, idempotently.

Writes (merging into what exists, never overwriting what it does not own):

* ``.exomonad/config.toml`` (a commented default), ``.exomonad/.gitignore`` and
  ``.exomonad/.ignore`` (searches such as ``rg --hidden`` skip the state dir);
* ``.mcp.json``: the ``exomonad`` MCP server for the lead (``mcp-stdio --role tl``);
* ``.claude/settings.json``: agent teams on, ``teammateMode: "tmux"``,
  ``CLAUDE_CODE_TEAMMATE_COMMAND`` = ``exomonad-teammate``, and ExoMonad's hooks. Claude
  Code (2.1.330) runs that variable as *one program*, shell-quoted, before its own
  arguments (``'<value>' --agent-id ...``), so ``exomonad teammate`` (two words) would be
  looked up as a file of that name: ``exomonad-teammate`` is a console script of its own;
* ``.claude/agents/gemini-worker.md``: an agent type the lead can spawn
  (``subagent_type: "gemini-worker"``), run by ``exomonad teammate`` as Gemini CLI;
* ``.gemini/settings.json``: the ``exo`` MCP server and ExoMonad's hooks for workers;
* ``.codex/config.toml`` and ``.claude/agents/codex-worker.md``: the same for Codex CLI
  workers. With ``trust_codex_hooks`` (``exomonad init --trust-codex-hooks``) it also
  records the user's consent, ``[workers] codex_trust = true`` in
  ``.exomonad/config.toml``, and trusts ExoMonad's Codex hooks in this checkout in the
  user's Codex config (:mod:`exomonad.runtimes.codex_trust`).

What each runtime writes is its own (:meth:`exomonad.runtimes.Runtime.configure`).
These files are committed, so they are portable: every command is a console script found
on PATH (``exomonad hook ...``, never one machine's absolute path). A console script runs
with its own directory first on ``sys.path``, never the working directory, so an agent
cannot hijack a hook by planting ``exomonad/`` in its cwd (see
:mod:`exomonad.util.selfexec`). Older absolute ExoMonad entries are replaced, and the
``.exomonad/bin/exomonad-teammate`` wrapper older versions wrote is removed.

A JSON file that does not parse is refused with a clear error and left untouched.
"""

from __future__ import annotations

import json
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exomonad import runtimes
from exomonad.errors import ExomonadError
from exomonad.runtimes.base import is_ours
from exomonad.server import config as server_config
from exomonad.state import ensure_state_dir, write_private
from exomonad.util.selfexec import EXOMONAD, TEAMMATE

__all__ = [
    "InitReport",
    "ProjectFiles",
    "has_exomonad_hooks",
    "init_project",
    "is_ours",
    "keep_searches_out",
]

#: The first line of the ``.exomonad/bin/exomonad-teammate`` older versions wrote.
_OLD_WRAPPER = "#!/bin/sh\n# Written by `exomonad init`"

GITIGNORE = "# ExoMonad runtime state (keep config.toml and policy.py)\n*\n!.gitignore\n" \
            "!config.toml\n!policy.py\n"  # fmt: skip
#: ripgrep (Claude Code's Grep, Gemini CLI's search), ag and fd honour ``.ignore`` files in
#: any directory, git repository or not: the whole state dir stays out of their searches,
#: ``--hidden`` included (``--no-ignore``/``-uu`` is refused by the policy instead).
IGNORE = "# ExoMonad: searches skip this directory (tokens, databases)\n*\n"


@dataclass
class InitReport:
    """What ``init`` did, file by file: created, updated or unchanged."""

    files: dict[str, str] = field(default_factory=dict)


class ProjectFiles:
    """The project files a runtime writes at ``init`` (:meth:`Runtime.configure`): JSON
    files merged in memory and written once at the end, text files written if missing."""

    def __init__(self, root: Path, report: InitReport) -> None:
        self.root, self.report = root, report
        self._json: dict[str, dict[str, Any]] = {}
        self._toml: dict[str, Any] = {}

    def json(self, rel: str) -> dict[str, Any]:
        """The JSON object at ``rel`` (``{}`` if missing), to change in place."""
        if rel not in self._json:
            self._json[rel] = _load_json(self.root / rel)
        return self._json[rel]

    def toml(self, rel: str) -> Any:
        """The TOML document at ``rel`` (empty if missing; a ``tomlkit`` document, so
        the user's comments and layout survive), to change in place."""
        import tomlkit

        if rel not in self._toml:
            path = self.root / rel
            try:
                text = path.read_text("utf-8") if path.exists() else ""
                self._toml[rel] = tomlkit.parse(text)
            except (UnicodeDecodeError, tomlkit.exceptions.ParseError) as exc:
                raise ExomonadError(f"{path} is not valid TOML ({exc}); fix it, then run "
                                    "init again") from exc  # fmt: skip
        return self._toml[rel]

    def text_once(self, rel: str, text: str) -> None:
        """Write ``text`` at ``rel`` unless a file is there (it may be the user's now)."""
        path = self.root / rel
        if path.exists():
            self.report.files[rel] = "unchanged"
        else:
            _write_text(path, text, self.report, self.root)

    def write(self) -> None:
        """Write every JSON file changed through :meth:`json`."""
        for rel, data in self._json.items():
            _write_json(self.root / rel, data, self.report, self.root)
        import tomlkit

        for rel, doc in self._toml.items():
            _write_text(self.root / rel, tomlkit.dumps(doc), self.report, self.root)


def _load_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text("utf-8") or "{}")
    except json.JSONDecodeError as exc:
        raise ExomonadError(
            f"{path} is not valid JSON ({exc}); fix it, then run init again"
        ) from exc
    if not isinstance(data, dict):
        raise ExomonadError(f"{path} is not a JSON object; fix it, then run init again")
    return data


def _write_json(path: Path, data: dict[str, Any], report: InitReport, root: Path) -> None:
    text = json.dumps(data, indent=2) + "\n"
    _write_text(path, text, report, root)


def _write_text(path: Path, text: str, report: InitReport, root: Path) -> None:
    rel = str(path.relative_to(root))
    if path.exists() and path.read_text("utf-8") == text:
        report.files[rel] = "unchanged"
        return
    report.files[rel] = "updated" if path.exists() else "created"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".exomonad-tmp")
    tmp.write_text(text, "utf-8")
    tmp.replace(path)


def keep_searches_out(state: Path) -> None:
    """Write ``<state>/.ignore`` (see :data:`IGNORE`), private like the rest of the state
    dir, if it is missing or differs; ``exomonad serve`` calls it, so a project set up
    before init wrote it has it too."""
    path = state / ".ignore"
    try:
        if path.read_text("utf-8") == IGNORE:
            return
    except OSError:
        pass
    write_private(path, IGNORE.encode())


def has_exomonad_hooks(path: Path) -> bool:
    """Whether the agent settings file ``path`` holds an ExoMonad hook (False if it is
    missing or unreadable)."""
    try:
        text = path.read_text("utf-8")
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (OSError, ValueError):
        return False
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        return False
    return any(is_ours(e) for entries in hooks.values() if isinstance(entries, list)
               for e in entries)  # fmt: skip


def _remove_old_wrapper(state: Path, report: InitReport, root: Path) -> None:
    """Remove the ``.exomonad/bin/exomonad-teammate`` older versions wrote (if it is ours)."""
    old = state / "bin" / "exomonad-teammate"
    try:
        ours = old.is_file() and old.read_text("utf-8").startswith(_OLD_WRAPPER)
    except (OSError, UnicodeDecodeError):
        ours = False
    if not ours:
        return
    old.unlink()
    report.files[str(old.relative_to(root))] = "removed"
    if not any(old.parent.iterdir()):
        old.parent.rmdir()


def init_project(root: Path, *, exo: str = EXOMONAD, teammate: str = TEAMMATE,
                 trust_codex_hooks: bool = False) -> InitReport:  # fmt: skip
    """Set ``root`` up for ExoMonad (see the module doc); safe to run again.

    Parameters
    ----------
    root
        The repository.
    exo
        How the committed files start ExoMonad (a command line; default the console
        script ``exomonad``, found on PATH).
    teammate
        The program ``CLAUDE_CODE_TEAMMATE_COMMAND`` names (default ``exomonad-teammate``).
    trust_codex_hooks
        The user's consent for Codex CLI (see the module doc).
    """
    report = InitReport()
    state = ensure_state_dir(root / ".exomonad")
    config_path = state / "config.toml"
    if not config_path.exists():
        _write_text(config_path, _config_template(), report, root)
    else:
        report.files[".exomonad/config.toml"] = "unchanged"
    cfg = server_config.load_project_config(state)  # fails clearly on a broken config
    _write_text(state / ".gitignore", GITIGNORE, report, root)
    _write_text(state / ".ignore", IGNORE, report, root)
    mcp = _load_json(root / ".mcp.json")
    argv = shlex.split(exo)
    mcp.setdefault("mcpServers", {})["exomonad"] = {
        "type": "stdio", "command": argv[0], "args": [*argv[1:], "mcp-stdio", "--role", "tl"],
    }  # fmt: skip
    _write_json(root / ".mcp.json", mcp, report, root)
    _remove_old_wrapper(state, report, root)
    files = ProjectFiles(root, report)
    for runtime in runtimes.RUNTIMES.values():
        runtime.configure(files, exo, cfg.policy.approval_timeout, teammate)
    files.write()
    if trust_codex_hooks:
        _trust_codex(root, config_path, report)
    return report


def _trust_codex(root: Path, config_path: Path, report: InitReport) -> None:
    """Record the consent (``[workers] codex_trust = true``) and trust ExoMonad's Codex
    hooks in this checkout (the lead's own Codex sessions are gated too)."""
    import tomlkit

    doc = tomlkit.parse(config_path.read_text("utf-8"))
    workers = doc.setdefault("workers", tomlkit.table())
    workers["codex_trust"] = True
    _write_text(config_path, tomlkit.dumps(doc), report, root)
    server_config.load_project_config(config_path.parent)  # still valid
    env = runtimes.CODEX.check_gate(root, consent=True)
    report.files[str(Path(env["CODEX_HOME"]) / "config.toml")] = "trusted"


def _config_template() -> str:
    doc = server_config.__doc__ or ""
    body = doc.split("Example::", 1)[-1]
    lines = [line[4:] if line.startswith("    ") else line for line in body.splitlines()]
    commented = "\n".join(f"# {x}" if x.strip() else "" for x in lines).strip()
    return ("# ExoMonad project configuration. Every key is optional; the defaults are shown.\n"
            f"{commented}\n")  # fmt: skip
