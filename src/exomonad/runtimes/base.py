"""The runtime contract: everything ExoMonad knows about one agent runtime, in one place.

A runtime (Claude Code, Gemini CLI, ...) is one module in this package holding one
:class:`Runtime` subclass instance: the hook events it fires and what ExoMonad calls them,
the shape of a tool-gating hook's answer, its tool names and how each reads as typed
actions (:data:`Runtime.tools`, interpreted by :mod:`exomonad.policy.classify`), how its
MCP tool names are spelled, the project files ``exomonad init`` writes for it, the command
that starts it as a worker and the text its TUI shows once it takes input. Other packages
ask the runtime (``runtimes.get(name)``) instead of branching on its name.

Plain classes and the standard library only: the hook client imports this package on
every tool call of every agent.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the hook client imports this module
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path
    from typing import Any, ClassVar

    from exomonad.setup import ProjectFiles

__all__ = ["EVENTS", "HOOK_MARK", "Runtime", "hook_command", "is_ours", "set_hooks"]

#: The events ExoMonad answers, by its own names; a runtime maps its own onto these.
EVENTS = ("session-start", "user-prompt-submit", "pre-tool-use", "post-tool-use", "stop",
          "session-end")  # fmt: skip
#: In every hook command ExoMonad ever wrote (bare ``exomonad`` or an absolute path).
HOOK_MARK = "exomonad hook"

#: How a tool's input reads (the first item of a :data:`Runtime.tools` entry); the rest
#: of the entry names the input keys to look in; each one present is judged (a runtime
#: reads one of them, and a decoy in another must not be the one judged).
TOOL_KINDS = frozenset({
    "shell",       # a shell command (key: the command; "directory"/"dir_path"/"workdir"/
                   # "cwd" = its cwd, each one given judged)
    "read",        # reads the file at the path
    "write",       # writes the file at the path
    "read_at",     # as "read", and a leading "@" may be taken off (Gemini CLI)
    "write_at",    # as "write", and a leading "@" may be taken off (Gemini CLI)
    "edit_at",     # as "write_at", and a relative path naming nothing is looked for below
                   # the cwd: any file of its name whose path ends so (Gemini's replace)
    "list",        # reads a directory (no path: the cwd)
    "glob",        # lists names matching a pattern (the first key) below a directory (no
                   # path: the cwd), and below where an absolute, ~ or .. pattern points
    "grep",        # searches the files below a directory, ignored ones left out unless its
                   # glob (the first key; path keys follow) names them (rg --hidden -g)
    "grep_all",    # searches every file below a directory, hidden and ignored ones too;
                   # its glob (the first key; path keys follow) only narrows
    "read_many",   # reads every path of each list named
    "fetch",       # fetches URLs ("url", or URLs inside "prompt")
    "search",      # a web search ("query")
    "internal",    # the runtime's own bookkeeping (todo lists, team tools)
    "agent",       # a subagent (Claude Code's Agent/Task): bookkeeping, but "isolation"
                   # writes a worktree into the main checkout, or runs it elsewhere
    "fixed_write", # always writes one file (the path: the next item, not an input key)
    "patch",       # a patch in Codex's apply_patch format (key: the patch text)
})  # fmt: skip


class Runtime:
    """One agent runtime. Subclasses set the attributes and implement the methods."""

    #: The ``--runtime`` value of its hooks, and :attr:`ToolRequest.runtime`.
    name = ""
    #: What people call it ("Gemini CLI").
    title = ""
    #: Other names it answers to where a runtime is named (config, CLI options).
    aliases: tuple[str, ...] = ()
    #: The program that starts it, and the npm package it comes from.
    program = ""
    npm_package = ""
    #: The hook client's event names for this runtime (what ``init`` writes in its hook
    #: commands) → ExoMonad's (:data:`EVENTS`); names not listed are ExoMonad's already.
    events: ClassVar[Mapping[str, str]] = {}
    #: Tool name → ``(kind, *input keys)`` (kinds: :data:`TOOL_KINDS`).
    tools: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    #: Whether it can be the team's lead: a hook of its own with no ``EXOMONAD_TOKEN``
    #: is then the lead's when it runs below the lead's process (see ``ancestry``).
    can_lead = False
    #: Whether it speaks Claude Code's team protocol itself: ``exomonad teammate`` then
    #: hands the teammate over to the real program instead of bridging it.
    native_teammate = False
    #: The command that starts it as a worker (``[workers] command``), if it can be one.
    worker_command: str | None = None
    #: Text its TUI shows once it takes input (None: no wait).
    ready_marker: str | None = None
    #: Whether it must have listed ExoMonad's MCP tools before it reads its task: a
    #: runtime that builds its tool list once, as its MCP servers come up, would
    #: otherwise start a task without ``notify_parent``.
    waits_for_mcp = False
    #: Its project settings file holding ExoMonad's hooks (relative to the project).
    settings_file: str | None = None
    #: Whether an empty hook answer is printed as nothing at all (not ``{}``).
    silent_empty = False
    #: Whether its tool calls pass ExoMonad's hooks at all. A runtime without (a
    #: terminal agent) starts only sandboxed or with ``[workers] allow_ungated``.
    gated = True
    #: Whether its gate is proven live before its task: a probe prompt is typed into
    #: its pane, its prompt hook (run by the runtime itself) must bring it to the server
    #: under the worker's token, and the server discards it (:meth:`discard_prompt`), so
    #: the model never reads it. For a runtime that may skip hooks without a word.
    gate_probe = False
    #: How to make the runtime run ExoMonad's hooks, for a refusal's message.
    gate_fix = ""
    #: Whether its own permission prompt reaches a person: ``ask`` after an unanswered
    #: escalation (``[policy] on_timeout = "ask"``) hands the call to it. False for a
    #: worker whose prompt sits in an unattended pane, where the next message the
    #: watcher types (its Enter) would answer it: such a call is denied instead.
    prompt_reaches_person = False

    def unattended(self, kind: str) -> str:
        """``kind`` (``allow``/``deny``/``ask``) for a call no person judged: ``ask``
        only where :attr:`prompt_reaches_person`, else ``deny`` (an input too large or
        too deep to judge reached a Gemini worker as its own confirmation dialog)."""
        return "deny" if kind == "ask" and not self.prompt_reaches_person else kind

    def event(self, name: str) -> str:
        """ExoMonad's name for hook event ``name``."""
        return self.events.get(name, name)

    def gates(self, name: str) -> bool:
        """Whether hook event ``name`` gates a tool call (may deny it)."""
        return self.event(name) == "pre-tool-use"

    def decision_output(self, kind: str, reason: str) -> dict[str, Any]:
        """A tool-gating hook's stdout for ``kind`` (``allow``/``deny``/``ask``)."""
        raise NotImplementedError

    def answer(self, event: str, kind: str, reason: str) -> dict[str, Any]:
        """The answer of tool-gating hook ``event`` (the hook client's name for it):
        :meth:`decision_output`, unless the runtime answers some events in another shape."""
        del event
        return self.decision_output(kind, reason)

    def discard_prompt(self, reason: str) -> dict[str, Any]:
        """A prompt hook's answer that stops the prompt before the model reads it."""
        return {"decision": "block", "reason": reason}

    def shell_tool(self) -> str | None:
        """The name of its shell tool (the first ``shell`` entry of :attr:`tools`)."""
        return next((name for name, spec in self.tools.items() if spec[0] == "shell"), None)

    def shell_commands(self, command: str) -> list[str]:
        """Every command the runtime's shell tool may run for ``command`` (the text its
        hook shows): the policy judges each. Just ``command``, unless the runtime
        rewrites it (Gemini CLI takes a ``bash -c`` wrapper off)."""
        return [command]

    def mcp_tool(self, name: str, servers: Sequence[str] = ()) -> tuple[str, str] | None:
        """``(server, tool)`` if tool ``name`` is an MCP server's (``servers``: known
        server names that contain the separator), else None: the first of
        :meth:`mcp_readings`."""
        readings = self.mcp_readings(name, servers)
        return readings[0] if readings else None

    def mcp_readings(self, name: str, servers: Sequence[str] = ()) -> list[tuple[str, str]]:
        """Every ``(server, tool)`` tool ``name`` may be, the likeliest first; none if it
        is no MCP server's. ``mcp__<server>__<tool>`` splits at its first ``__``, but a
        server's name may hold ``__`` too (Claude Code writes ``_`` for each character of
        it outside ``[A-Za-z0-9_-]``): ``mcp__a__b__c`` may be ``a``'s ``b__c`` or
        ``a__b``'s ``c``.

        >>> Runtime().mcp_readings("mcp__a__b__c")
        [('a', 'b__c'), ('a__b', 'c')]
        """
        del servers
        return splits(name[5:], "__") if name.startswith("mcp__") else []

    def mcp_exact(self, name: str, server: str, tool: str) -> bool:
        """Whether ``name`` is, exactly, the runtime's name for tool ``tool`` of MCP
        server ``server``, which the runtime said a call goes to (a hook input's
        ``mcp_context``): then the call is judged as that tool, not by each way ``name``
        splits. False for a runtime that says no such thing (Claude Code, Codex CLI)."""
        del name, server, tool
        return False

    def configure(self, files: ProjectFiles, exo: str, approval_timeout: float,
                  teammate: str) -> None:  # fmt: skip
        """Write this runtime's project files for ``exomonad init`` (idempotent)."""
        del files, exo, approval_timeout, teammate

    def check_gate(self, checkout: Path, *, consent: bool) -> dict[str, str]:
        """No gate, no start: before a worker of this runtime runs in ``checkout``, make
        sure the runtime will run ExoMonad's hooks there (recording what the user
        consented to, if ``consent``); raise :class:`~exomonad.errors.GateError` saying
        how to fix it if not. Returns environment the worker must get to match what was
        checked."""
        del checkout, consent
        return {}


#: At most this many ways a tool name splits are listed, and one more past them (a name
#: of 100 KB of ``_`` would otherwise make its 100 KB readings 100 K times over): a name
#: with more is judged as one it cannot read (:func:`exomonad.policy.mcp_names.riskiest`).
MAX_SPLITS = 64


def splits(rest: str, sep: str) -> list[tuple[str, str]]:
    """Each way ``rest`` splits at one ``sep`` into a non-empty server and tool name,
    the first ``sep`` first; at most :data:`MAX_SPLITS` + 1.

    >>> splits("code_search_run", "_"), splits("a___b", "__")
    ([('code', 'search_run'), ('code_search', 'run')], [('a', '_b'), ('a_', 'b')])
    """
    found: list[tuple[str, str]] = []
    at = rest.find(sep, 1)
    while at > 0 and at + len(sep) < len(rest) and len(found) <= MAX_SPLITS:
        found.append((rest[:at], rest[at + len(sep) :]))
        at = rest.find(sep, at + 1)
    return found


def hook_command(exo: str, event: str, runtime: Runtime, approval_timeout: float) -> str:
    """Our hook command; a tool-gating hook's client waits for the server up to the
    approval time-out plus 20 s, so it answers (and fails closed) before the runtime's own
    time-out (approval time-out plus 30 s) would kill it and let the tool call through.
    Started through the shell front ``exomonad-hook`` when it is installed beside ``exo``
    (:func:`exomonad.util.selfexec.hook_front`)."""
    from exomonad.util.selfexec import hook_front

    command = f"{exo} hook {event} --runtime {runtime.name}"
    if runtime.gates(event):
        command += f" --timeout {int(approval_timeout) + 20}"
    front = hook_front(exo)
    return f"{front} {command}" if front else command


def is_ours(entry: object) -> bool:
    """Whether a hook entry (``{matcher, hooks: [...]}``) is ExoMonad's, old or new form."""
    if not isinstance(entry, dict):
        return False
    hooks = entry.get("hooks")
    return isinstance(hooks, list) and any(
        HOOK_MARK in str(h.get("command", "")) for h in hooks if isinstance(h, dict)
    )


def set_hooks(hooks: dict[str, Any], event: str, matcher: str | None, command: str,
              timeout: int) -> None:  # fmt: skip
    """Put our hook for ``event`` in place, replacing an older ExoMonad entry."""
    entries = [e for e in hooks.get(event, []) if not is_ours(e)]
    hook = {"type": "command", "command": command, "timeout": timeout}
    entry: dict[str, Any] = {"hooks": [hook]}
    if matcher is not None:
        entry = {"matcher": matcher, **entry}
    hooks[event] = [*entries, entry]
