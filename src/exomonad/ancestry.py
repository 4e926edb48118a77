"""Is this process part of an agent's session? Read off its ancestors in ``/proc``.

Human-only actions (answering an approval addressed to a person) must not be taken by an
agent through its shell, and the lead's role must not be taken by a worker that runs
``exomonad mcp-stdio --role tl`` itself. An agent's commands run as descendants of the
agent's process (Claude Code, Gemini CLI, Codex CLI, ``exomonad teammate``), and inherit
the markers those programs and ExoMonad put in their environment. This module walks the
parent chain and reports the first sign of an agent.

This is a check against an agent acting through its own tools, not against a hostile
program of the same Unix user that detaches itself (``setsid``, double fork): see
``docs/guarantees.md``; the bubblewrap sandbox closes that (``docs/sandbox.md``).

>>> reason_in([Proc(10, "bash", ("bash",), {}), Proc(9, "node", ("node",
...     "/usr/lib/node_modules/@google/gemini-cli/dist/index.js"), {})])
'pid 9 is an agent (gemini-cli)'
>>> reason_in([Proc(10, "bash", ("bash",), {"EXOMONAD_TOKEN": "exo_x"})])
'pid 10 runs with EXOMONAD_TOKEN (an agent identity)'
>>> reason_in([Proc(10, "bash", ("bash",), {})]) is None
True
"""

from __future__ import annotations

import os

from exomonad.util.proc import proc_argv, proc_stat

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the hook client imports this module
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

__all__ = [
    "Proc",
    "agent_session",
    "ancestors",
    "claude_lead_ancestor",
    "other_agent",
    "reason_in",
    "token_requester",
]

#: Environment variables only an agent's process tree carries.
AGENT_ENV = ("EXOMONAD_TOKEN", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "GEMINI_CLI",
             "CODEX_SANDBOX", "CODEX_MANAGED_BY_NPM")  # fmt: skip
#: Program names (``argv[0]``'s base name) of agents.
AGENT_PROGRAMS = frozenset({"claude", "gemini", "codex", "exomonad-teammate", "aider"})
_CLAUDE = ("claude", "claude-code")
#: Path fragments of agents run by node (``node .../cli.js``).
AGENT_PATHS = ("claude-code", "gemini-cli", "@openai/codex", "codex-cli")


class Proc:
    """What a process shows of itself in ``/proc`` (a plain class: the hook client
    imports this module, and ``dataclasses`` alone would cost it ~15 ms)."""

    __slots__ = ("argv", "comm", "env", "pid")

    def __init__(self, pid: int, comm: str, argv: tuple[str, ...],
                 env: Mapping[str, str]) -> None:  # fmt: skip
        self.pid, self.comm, self.argv, self.env = pid, comm, argv, env


def _read(pid: int) -> tuple[Proc, int] | None:
    stat, argv = proc_stat(pid), proc_argv(pid)
    if stat is None or argv is None:
        return None
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            raw = fh.read().split(b"\0")
        pairs = [e.decode("utf-8", "replace").partition("=") for e in raw]
    except PermissionError:  # another user's process: not an agent of ours
        pairs = []
    except OSError:
        return None
    return Proc(pid, stat[0], argv, {k: v for k, _, v in pairs if k}), stat[2]


def ancestors(pid: int | None = None) -> Iterator[Proc]:
    """``pid`` (default: this process) and its parents, up to (not including) pid 1."""
    current = os.getpid() if pid is None else pid
    seen: set[int] = set()
    while current > 1 and current not in seen:
        seen.add(current)
        found = _read(current)
        if found is None:
            return
        proc, current = found
        yield proc


def _agent_name(proc: Proc) -> str | None:
    """The agent ``proc`` is, by its program name or, for ``node <script>``, its script."""
    heads = [proc.comm, *proc.argv[:3]]  # the program, or an interpreter and its script
    for head in heads:
        base = os.path.basename(head).removesuffix(".exe")
        if base in AGENT_PROGRAMS:
            return base
    for head in proc.argv[:3]:
        for fragment in AGENT_PATHS:
            if fragment in head:
                return fragment.strip("@/").replace("openai/", "")
    return None


def reason_in(chain: Sequence[Proc], *, allow_lead: bool = False,
              lead_token: str | None = None) -> str | None:  # fmt: skip
    """Why ``chain`` (a process and its ancestors) is an agent's session, or None.

    With ``allow_lead``, a Claude Code process that is not a teammate (no
    ``--agent-id``) and the markers it sets (``CLAUDECODE``) do not count: the lead;
    nor does ``EXOMONAD_TOKEN`` holding ``lead_token`` (a headless lead's bridge).
    """
    for proc in chain:
        for key in AGENT_ENV:
            if allow_lead and key == "EXOMONAD_TOKEN" and proc.env.get(key) == lead_token:
                continue
            if key in proc.env and not (allow_lead and key.startswith("CLAUDE")):
                what = "an agent identity" if key == "EXOMONAD_TOKEN" else "an agent's marker"
                return f"pid {proc.pid} runs with {key} ({what})"
        name = _agent_name(proc)
        if name is None:
            continue
        if allow_lead and name in _CLAUDE and "--agent-id" not in proc.argv:
            continue
        return f"pid {proc.pid} is an agent ({name})"
    return None


def agent_session(pid: int | None = None) -> str | None:
    """Why ``pid`` (default: this process) runs inside an agent's session, or None: a
    person's process. A process whose parents cannot be read (gone) is no person's."""
    chain = list(ancestors(pid))
    if not chain:
        return f"pid {pid} cannot be read (gone, or not ours to tell)"
    return reason_in(chain)


def claude_lead_ancestor(pid: int | None = None) -> str | None:
    """Why ``pid`` is *not* the lead's own (a descendant of a Claude Code lead process
    and of no other agent), or None when it is."""
    chain = list(ancestors(pid))
    other = reason_in(chain, allow_lead=True)
    if other is not None:
        return other
    if not any(_agent_name(p) in _CLAUDE for p in chain):
        return "no Claude Code lead among its parents"
    return None


def other_agent(pid: int, lead_token: str | None = None) -> str | None:
    """Why ``pid`` runs in an agent's session other than a Claude Code lead's (or cannot
    be read), or None: the lead's own processes and a person's are fine. A process
    whose ``EXOMONAD_TOKEN`` is ``lead_token`` is the lead's (its parents still tell)."""
    chain = list(ancestors(pid)) if pid > 1 else []
    if not chain:
        return f"pid {pid} cannot be read (gone, or not ours to tell)"
    return reason_in(chain, allow_lead=True, lead_token=lead_token or None)


def token_requester(pid: int, lead_token: str | None = None) -> str | None:
    """Why ``pid`` may not ask for a new worker's token, or None: an ``exomonad
    teammate`` that the lead's Claude Code started, or a person's process. The process
    itself may be the teammate (its own name is not held against it, its environment
    is); none of its parents may be an agent other than the lead. A worker's code, which
    runs below its agent or carries its token, is refused (found probing: it minted a
    ``dev`` token and a worker named ``team.lead``)."""
    chain = list(ancestors(pid)) if pid > 1 else []
    if not chain:
        return f"pid {pid} cannot be read (gone, or not ours to tell)"
    own = Proc(chain[0].pid, "", (), chain[0].env)
    return reason_in([own, *chain[1:]], allow_lead=True, lead_token=lead_token or None)
