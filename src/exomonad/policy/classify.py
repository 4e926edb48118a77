"""Raw tool calls of every runtime and ExoMonad's MCP server → typed actions.

Which tool reads how is the runtime's table (:data:`exomonad.runtimes.Runtime.tools`:
tool name → kind and input keys); what each kind means is here.

>>> classify(ToolRequest("claude", "dev", "d1", "Bash",
...          {"command": "cd x && git push -f origin main"}, cwd="/w"))
[GitPush(remote='origin', branch='main', force=True, lease=False, repo='/w/x')]
>>> classify(ToolRequest("gemini", "dev", "d1", "mcp_exo_notify_parent", {"message": "hi"}))
[McpTool(server='exo', tool='notify_parent', arguments='{"message":"hi"}')]
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from exomonad import runtimes
from exomonad.policy.actions import (
    Action,
    Internal,
    McpTool,
    Network,
    ReadFile,
    Unknown,
    WebSearch,
    WriteFile,
    mcp_arguments,
)
from exomonad.policy.file_urls import file_url_actions
from exomonad.policy.git_home import checked_out
from exomonad.policy.hosts import host_of
from exomonad.policy.mcp_names import SELF_MCP_SERVER, own_tool, riskiest
from exomonad.policy.mcp_paths import possible_hosts, possible_writes
from exomonad.policy.patch import patch_actions
from exomonad.policy.request import ToolRequest
from exomonad.policy.shell_brace import expand
from exomonad.policy.shell_classify import classify_shell
from exomonad.policy.shell_env import ShellEnv
from exomonad.policy.shell_paths import path_readings
from exomonad.policy.subagents import agent

__all__ = ["SELF_MCP_SERVER", "classify", "handlers"]

_URL = re.compile(r"https?://[^\s<>\"'`)\]]+", re.IGNORECASE)
Handler = Callable[[ToolRequest, ShellEnv], list[Action] | None]


def _str(data: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _strs(data: Mapping[str, Any], *keys: str) -> list[str]:
    """Every distinct non-empty string among ``keys``: a runtime reads one of them, and a
    decoy in another (``absolute_path`` in the worktree, ``file_path`` at a token) must not
    be the one judged, so each is."""
    return list(dict.fromkeys(v for k in keys if isinstance(v := data.get(k), str) and v))


def _paths(req: ToolRequest, *keys: str, default_cwd: bool = False,
           at: bool = False) -> list[str | None]:  # fmt: skip
    values = _strs(req.tool_input, *keys)
    if at:
        values = list(dict.fromkeys(v for value in values for v in _unat(value)))
    if not values:
        return [req.cwd] if default_cwd else []
    return [p for v in values for p in tool_paths(req.cwd, v)]


def _unat(value: str) -> list[str]:
    """``value`` and, led by ``@``, what Gemini CLI 0.61 reads when no such path exists
    (``resolveDefensiveToolPath``: the ``@`` and the slashes after it taken off). Found
    probing: ``write_file @.gemini/settings.json`` was allowed as a write of a file
    named so, and wrote the worker's hook settings.

    >>> _unat("@.gemini/settings.json"), _unat("@/a"), _unat("a"), _unat("@/")
    (['@.gemini/settings.json', '.gemini/settings.json'], ['@/a', 'a'], ['a'], ['@/'])
    """
    rest = value[1:].lstrip("/\\") if value.startswith("@") else ""
    return [value, rest] if rest else [value]


#: The directories :func:`_found` walks at most; a larger tree is an unknown path.
_FOUND_DIRS = 2000


def _found(base: str | None, value: str) -> list[str | None]:
    """The files below ``base`` (its tree, links to directories not followed) that Gemini
    CLI's ``replace`` may edit for the relative ``value`` naming nothing there
    (``correctPath``: a file of the same name whose path ends with ``value``). Found
    probing: ``replace gemini/settings.json`` edited ``.gemini/settings.json``, the
    worker's hook settings, allowed as an edit of ``gemini/settings.json``."""
    if base is None or os.path.isabs(value) or value.startswith("~"):
        return []
    if os.path.lexists(os.path.join(base, value)):
        return []
    name, tail = os.path.basename(value), value.replace("\\", "/")
    found: list[str | None] = []
    queue, seen = [base], 0
    while queue:
        if seen >= _FOUND_DIRS:
            return [None]
        here, seen = queue.pop(0), seen + 1
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                queue.append(entry.path)
            elif entry.name == name and entry.is_file(follow_symlinks=False) \
                    and entry.path.endswith(tail):  # fmt: skip
                found.append(entry.path)
    return found


def tool_paths(cwd: str | None, value: str) -> list[str | None]:
    """Where a tool's path argument points: Claude Code expands ``~`` and ``~/...`` to the
    home directory (its tools resolve them so), relative paths are the session's cwd's.
    Read literally, ``Write ~/.gitconfig`` was judged a write inside the worktree. A tool
    may take a ``..`` off the name before it as text, or the system may read it after a
    link (``Write <wt>/s/s/../../Makefile`` with ``s -> .``): where the two differ, both."""
    if value == "~" or value.startswith("~/"):
        value = os.path.expanduser("~") + value[1:]
    found = path_readings(cwd, value)
    return [None] if found is None else list(found)


def tool_path(cwd: str | None, value: str) -> str | None:
    """The one place a tool's path argument points (:func:`tool_paths`); None where the
    tool's and the system's readings differ."""
    found = tool_paths(cwd, value)
    return found[0] if len(found) == 1 else None


def _shell(*keys: str) -> Handler:
    def handler(req: ToolRequest, env: ShellEnv) -> list[Action] | None:
        command = _str(req.tool_input, *keys)
        if command is None:
            return None
        dirs = _strs(req.tool_input, "directory", "dir_path", "workdir", "cwd")
        cwds = [tool_path(req.cwd, d) for d in dirs] or [req.cwd]
        runs = runtimes.RUNTIMES.get(req.runtime, runtimes.CLAUDE).shell_commands(command)
        found = [[a for cwd in cwds for a in classify_shell(run, cwd, env)] for run in runs]
        first = set(found[0])  # what the runtime runs besides: only what it adds
        return found[0] + list(dict.fromkeys(a for f in found[1:] for a in f if a not in first))

    return handler


def _one(kind: Callable[[str | None], Action], *keys: str, default_cwd: bool = False,
         at: bool = False, edit: bool = False) -> Handler:  # fmt: skip
    """A tool on the path of each of ``keys``; ``at``: a leading ``@`` may be taken off
    (:func:`_unat`); ``edit``: a relative path naming nothing is looked for (:func:`_found`)."""

    def handler(req: ToolRequest, env: ShellEnv) -> list[Action] | None:
        del env
        paths = _paths(req, *keys, default_cwd=default_cwd, at=at)
        if edit:
            values = [v for value in _strs(req.tool_input, *keys) for v in _unat(value)]
            paths += [p for v in dict.fromkeys(values) for p in _found(req.cwd, v)]
        return [kind(path) for path in dict.fromkeys(paths)] or None

    return handler


def _internal(req: ToolRequest, env: ShellEnv) -> list[Action] | None:
    del env
    return [Internal(req.tool_name)]


def _fetch(req: ToolRequest, env: ShellEnv) -> list[Action] | None:
    """A fetch's hosts; a ``file:`` URL is a read of its path, each way a reader may
    take it, links followed before its ``..`` (:func:`~.file_urls.file_url_actions`:
    no globbing: found probing, ``file:///<worktree>/[x]/../../../.exomonad/lead.token``
    was allowed as a read of the worktree), whatever URLs the prompt names besides."""
    del env
    url = _str(req.tool_input, "url")
    read = file_url_actions(url, ReadFile) if url else []
    urls = [u for key in ("url", "prompt") for u in _URL.findall(_str(req.tool_input, key) or "")]
    if not urls:
        return read or ([Network(host_of(url))] if url else None)
    return read + list(dict.fromkeys(Network(host_of(u)) for u in urls))


def _agent(req: ToolRequest, env: ShellEnv) -> list[Action] | None:
    del env
    return agent(req)


def _search(req: ToolRequest, env: ShellEnv) -> list[Action] | None:
    del env
    return [WebSearch(_str(req.tool_input, "query") or "")]


def _patch(*keys: str) -> Handler:
    def handler(req: ToolRequest, env: ShellEnv) -> list[Action] | None:
        del env
        text = _str(req.tool_input, *keys)
        return patch_actions(text, req.cwd) if text is not None else None

    return handler


def _many(*keys: str) -> Handler:
    """Each path of each list in ``keys`` (a file, a directory read whole, or a glob
    matching dot names too): Gemini CLI 0.61 reads ``include``, older ones ``paths``."""

    def handler(req: ToolRequest, env: ShellEnv) -> list[Action] | None:
        del env
        lists = [v for k in keys if isinstance(v := req.tool_input.get(k), list)]
        paths = [tool_paths(req.cwd, p) if isinstance(p, str) else [None]
                 for found in lists for p in found]  # fmt: skip
        return [ReadFile(p, True) for each in paths for p in each] or None

    return handler


def _glob(pattern_key: str, *keys: str) -> Handler:
    """A glob tool: it lists names below its directory, or, for a pattern that leaves it
    (absolute, ``~``, ``..``), below where the pattern points too; each of its brace
    expansions (found trying the gate as a worker: Gemini CLI's ``glob`` of
    ``{../..,x}/.exomonad/*`` listed the state dir two levels up, allowed as a listing of
    the worktree, while ``../../.exomonad/*`` was refused)."""
    listing = _one(ReadFile, *keys, default_cwd=True)

    def handler(req: ToolRequest, env: ShellEnv) -> list[Action] | None:
        actions = listing(req, env) or []
        pattern = _str(req.tool_input, pattern_key) or ""
        base = actions[0].path if isinstance(actions[0], ReadFile) else req.cwd
        found = expand([(c, True) for c in pattern]) if "{" in pattern else [pattern]
        if found is None:
            return [*actions, ReadFile(None, True)]
        for each in dict.fromkeys(found):
            if each.startswith(("/", "~")) or ".." in each.replace("\\", "/").split("/"):
                actions.append(ReadFile(tool_path(base, each), True))
        return actions

    return handler


def _fixed_write(path: str) -> Handler:
    """A tool that always writes ``path`` (Gemini's ``save_memory``: ``~/.gemini/GEMINI.md``,
    read into every later Gemini session's instructions)."""

    def handler(req: ToolRequest, env: ShellEnv) -> list[Action] | None:
        del env
        return [WriteFile(tool_path(req.cwd, path))]

    return handler


def _grep(every: bool, glob_key: str, *keys: str) -> Handler:
    """A search tool: Claude Code's Grep runs ``rg --hidden``, whose ignore files keep
    ``.exomonad/`` runtime files out unless its glob names them (``-g`` beats ignore
    files); Gemini CLI's may fall back to ``grep -r`` (``every``: a tree read always)."""

    def handler(req: ToolRequest, env: ShellEnv) -> list[Action] | None:
        del env
        glob = _str(req.tool_input, glob_key)
        include = _globs(glob) if glob is not None else ()
        return [ReadFile(path, every or glob is not None, include)
                for path in _paths(req, *keys, default_cwd=True)]  # fmt: skip

    return handler


def _globs(text: str) -> tuple[str, ...]:
    """A search tool's glob as ``rg -g`` gets it: split at blanks, then at commas outside
    braces; exclusions (``!x``) dropped. None left: every file.

    >>> _globs("*.py,*.md {a,b}.ts !*.lock")
    ('*.py', '*.md', '{a,b}.ts')
    """
    parts = [p for word in text.split() for p in
             ([word] if "{" in word and "}" in word else word.split(","))]  # fmt: skip
    return tuple(p for p in parts if p and not p.startswith("!"))


#: How each kind of tool input reads (kinds and tables: :mod:`exomonad.runtimes`).
_KINDS: dict[str, Callable[[tuple[str, ...]], Handler]] = {
    "shell": lambda keys: _shell(*keys),
    "read": lambda keys: _one(ReadFile, *keys),
    "write": lambda keys: _one(WriteFile, *keys),
    "read_at": lambda keys: _one(ReadFile, *keys, at=True),
    "write_at": lambda keys: _one(WriteFile, *keys, at=True),
    "edit_at": lambda keys: _one(WriteFile, *keys, at=True, edit=True),
    "list": lambda keys: _one(ReadFile, *keys, default_cwd=True),
    "grep": lambda keys: _grep(False, *keys),
    "grep_all": lambda keys: _grep(True, *keys),
    "read_many": lambda keys: _many(*keys),
    "glob": lambda keys: _glob(*keys),
    "fixed_write": lambda keys: _fixed_write(*keys),
    "fetch": lambda keys: _fetch,
    "search": lambda keys: _search,
    "internal": lambda keys: _internal,
    "agent": lambda keys: _agent,
    "patch": lambda keys: _patch(*keys),
}
_TABLES: dict[str, dict[str, Handler]] = {}


def handlers(runtime: str) -> dict[str, Handler]:
    """``runtime``'s tool name → handler, built once from its table of kinds."""
    table = _TABLES.get(runtime)
    if table is None:
        found = runtimes.RUNTIMES.get(runtime)
        tools = found.tools if found is not None else {}
        table = _TABLES[runtime] = {name: _KINDS[spec[0]](spec[1:])
                                    for name, spec in tools.items()}  # fmt: skip
    return table


def _raw(req: ToolRequest) -> str:
    try:
        body = json.dumps(dict(req.tool_input), sort_keys=True, default=str)
    except (TypeError, ValueError):
        body = repr(req.tool_input)
    return f"{req.runtime}:{req.tool_name} {body[:500]}"


def _mcp(request: ToolRequest, servers: Sequence[str]) -> McpTool | None:
    """The MCP tool ``request`` calls, if any: the one the runtime said it runs
    (``mcp_context``) where the runtime's name for it is exactly ``tool_name``, else the
    riskiest of the ways the name splits (:func:`riskiest`)."""
    runtime = runtimes.RUNTIMES.get(request.runtime, runtimes.CLAUDE)
    arguments = mcp_arguments(dict(request.tool_input))
    told = request.mcp_context
    if told is not None and runtime.mcp_exact(request.tool_name, *told):
        return McpTool(*told, arguments=arguments)
    readings = runtime.mcp_readings(request.tool_name, servers)
    if not readings:
        return None
    return McpTool(*riskiest(readings), arguments=arguments)


def classify(
    request: ToolRequest,
    *,
    mcp_servers: Sequence[str] = (),
    protected_branches: Sequence[str] = ("main", "master"),
) -> list[Action]:
    """The actions ``request`` performs. Never raises: what it cannot read is ``Unknown``.

    ``mcp_servers`` lists server names containing ``_`` (see :class:`~.model.Policy`);
    ``protected_branches`` are the policy's (a local ``git checkout -B main`` is Unknown).
    """
    if request.runtime == "mcp":
        own = McpTool(SELF_MCP_SERVER, request.tool_name, mcp_arguments(dict(request.tool_input)))
        return [_mcp(request, ()) or own]
    mcp = _mcp(request, mcp_servers)
    if mcp is not None and own_tool(mcp.server, mcp.tool):
        return [mcp]  # ExoMonad's own tools: their arguments are judged by the server
    odd = _not_utf8(request.tool_input)
    if mcp is not None:  # another server's tool: each path in its input may be written,
        # each host in it reached
        return [mcp, *possible_writes(request.tool_input, request.cwd),
                *possible_hosts(request.tool_input), *odd]  # fmt: skip
    handler = handlers(request.runtime).get(request.tool_name)
    on_disk = partial(checked_out, request.worktree, request.branch)  # read when needed
    env = ShellEnv(request.worktree, request.branch, request.cwd, head_on_disk=on_disk,
                   protected=tuple(protected_branches))  # fmt: skip
    try:
        result = handler(request, env) if handler is not None else None
    except Exception:  # a classifier bug must not crash the server: treat as opaque
        result = None
    return [*result, *odd] if result is not None else [Unknown(_raw(request))]


def _not_utf8(value: Any) -> list[Action]:
    """:class:`Unknown` if a string in a tool's input holds a lone surrogate (a JSON
    ``\\udc80``): the runtime (Node) writes it as U+FFFD, where ExoMonad would look up
    byte 0x80, another name (found trying the gate as a worker: a link named U+FFFD to
    ``.``, then ``Write <wt>/\\udc80/\\udc80/../../Makefile`` or ``cp up.txt
    \\udc80/\\udc80/../../Makefile``, judged as the worktree's ``Makefile``, wrote the
    lead's). Where the program gets, the input does not say.

    >>> _not_utf8({"command": "cat \\udc80"}), _not_utf8({"a": ["b", 1]})
    ([Unknown(raw='a lone surrogate in the input: its runtime writes U+FFFD there')], [])
    """
    stack, seen = [(value, 0)], 0
    while stack:
        item, level = stack.pop()
        seen += 1
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return [Unknown("a lone surrogate in the input: its runtime writes U+FFFD there")]
        elif level < 64 and seen < 100_000 and isinstance(item, Mapping):
            stack += [(k, level + 1) for k in item] + [(v, level + 1) for v in item.values()]
        elif level < 64 and seen < 100_000 and isinstance(item, (list, tuple)):
            stack += [(v, level + 1) for v in item]
    return []
