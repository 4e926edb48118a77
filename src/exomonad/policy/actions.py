"""Typed actions: what a raw tool call *does*, in terms a policy can reason about.

A classifier (:mod:`exomonad.policy.classify`) turns one raw tool call into one or more
actions; the policy judges each one and the strictest verdict wins. Every action is a
frozen, hashable dataclass. ``None`` in a field means "could not be determined" (a
``$VAR`` or ``$(...)`` in the command, ``git push`` with no refspec and no known branch):
policies must treat ``None`` conservatively, and the built-in predicates do.

Paths are absolute and normalised (``..`` resolved lexically against the command's working
directory, ``~`` expanded); symlinks are not followed.

>>> GitPush(remote="origin", branch="main", force=True).describe()
'git push --force origin main'
>>> action_from_dict(action_to_dict(Shell(argv=("ls", "-l"), cwd="/w")))
Shell(argv=('ls', '-l'), cwd='/w', privileged=False, stdin=None)
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from dataclasses import dataclass, field
from typing import Any

from exomonad.util.clip import clip, collapse
from exomonad.util.display import visible

__all__ = [
    "ACTION_TYPES",
    "Action",
    "CloseIssue",
    "ClosePR",
    "CreatePR",
    "DeleteBranch",
    "DeleteFile",
    "Deploy",
    "GitCommit",
    "GitPush",
    "Internal",
    "McpTool",
    "MergePR",
    "Network",
    "ReadFile",
    "Shell",
    "Unknown",
    "WebSearch",
    "WriteFile",
    "action_from_dict",
    "action_to_dict",
    "mcp_arguments",
]


#: How much of an MCP tool call's arguments an :class:`McpTool` keeps, and describes.
MCP_ARGUMENTS_KEPT = 2000
MCP_ARGUMENTS_SHOWN = 300

#: Characters that change how a shell splits or ends a line: a word holding one is
#: quoted when shown (``$``, globs and ``~`` are not: in an argv they were expansions).
_SPLITS = frozenset(" \t\n\r\v\f;&|<>()'\"\\`")


def _word(word: str) -> str:
    """``word`` as a command line shows it: quoted if bare it would read as more or less."""
    if word and not word.startswith("#") and not any(c in _SPLITS or c.isspace() for c in word):
        return word
    return shlex.quote(word)


def mcp_arguments(data: Any) -> str:
    """An MCP tool call's input as :attr:`McpTool.arguments`: compact JSON, cut."""
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        text = repr(data)
    return clip(text, MCP_ARGUMENTS_KEPT)


@dataclass(frozen=True, slots=True)
class Action:
    """Base class of every typed action."""

    def describe(self) -> str:
        """A short human-readable summary, used in reasons and approval prompts."""
        fields = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self))
        return f"{type(self).__name__}({fields})"


@dataclass(frozen=True, slots=True)
class ReadFile(Action):
    """Read a file or list/search a directory (Read, Glob, Grep, read_file, ...).

    ``recursive``: the contents of every file below ``path`` are read, hidden and
    git-ignored ones included (``grep -r``, ``rg -uu``, ``tar c``, ``cp -r``, a search
    tool's glob). ``include``: when not empty, only files whose name matches one of these
    globs are read (``--include=*.py``, ``-g '*.py'``).
    """

    path: str | None
    recursive: bool = False
    include: tuple[str, ...] = ()

    def describe(self) -> str:
        """``read [-r] PATH [(only GLOBS)]``."""
        only = f" (only {' '.join(self.include)})" if self.include else ""
        return f"read {'-r ' if self.recursive else ''}{self.path or '<unknown path>'}{only}"


@dataclass(frozen=True, slots=True)
class WriteFile(Action):
    """Create or modify a file (Write, Edit, ``> file``, ``cp``/``mv`` target, ``tee``...)."""

    path: str | None

    def describe(self) -> str:
        """``write PATH``."""
        return f"write {self.path or '<unknown path>'}"


@dataclass(frozen=True, slots=True)
class DeleteFile(Action):
    """Delete a path (``rm``, ``rmdir``, ``find -delete``, ...). ``include``: when not
    empty, only entries whose name matches one of these globs (``find . -name '*.pyc'
    -delete``)."""

    path: str | None
    recursive: bool = False
    include: tuple[str, ...] = ()

    def describe(self) -> str:
        """``delete [-r] PATH [(only GLOBS)]``."""
        only = f" (only {' '.join(self.include)})" if self.include else ""
        return f"delete {'-r ' if self.recursive else ''}{self.path or '<unknown path>'}{only}"


@dataclass(frozen=True, slots=True)
class Shell(Action):
    """A shell command the classifier has no more specific action for.

    ``privileged`` is true under ``sudo``/``doas``/``su``; then ``argv`` is the whole
    command line including the wrapper. ``stdin``: the file it reads its input from
    (``sudo bash < setup.sh``: the script it runs), when that is what it was given.
    """

    argv: tuple[str, ...]
    cwd: str | None = None
    privileged: bool = False
    stdin: str | None = None

    def describe(self) -> str:
        """The command line, each word quoted where the shell would split or cut it
        (``nginx '#'``, not ``nginx #``), and ``< FILE`` when its input is a file.

        >>> Shell(("sudo", "bash"), stdin="my setup.sh").describe()
        "sudo bash < 'my setup.sh'"
        """
        line = " ".join(_word(w) for w in self.argv) or "<empty command>"
        return line if self.stdin is None else f"{line} < {_word(self.stdin)}"


@dataclass(frozen=True, slots=True)
class GitCommit(Action):
    """``git commit`` in ``repo`` (the directory git runs in)."""

    repo: str | None = None
    amend: bool = False

    def describe(self) -> str:
        """``git commit [--amend] (in REPO)``."""
        return f"git commit{' --amend' if self.amend else ''} (in {self.repo or '?'})"


@dataclass(frozen=True, slots=True)
class GitPush(Action):
    """Push one ref. ``branch`` is the destination branch (``None``: unknown or several).

    ``force`` covers ``-f``, ``--force``, ``--force-with-lease`` (``lease`` is then true),
    ``--mirror`` and ``+ref`` refspecs.
    """

    remote: str | None = None
    branch: str | None = None
    force: bool = False
    lease: bool = False
    repo: str | None = None

    def describe(self) -> str:
        """``git push [--force] REMOTE BRANCH``."""
        flag = " --force-with-lease" if self.lease else (" --force" if self.force else "")
        return f"git push{flag} {self.remote or '<default remote>'} {self.branch or '<?>'}"


@dataclass(frozen=True, slots=True)
class DeleteBranch(Action):
    """Delete a branch: local (``remote is None``) or on a remote. ``name`` may be unknown."""

    name: str | None
    remote: str | None = None
    force: bool = False

    def describe(self) -> str:
        """``delete branch NAME (on REMOTE)``."""
        where = f" on {self.remote}" if self.remote else ""
        return f"delete branch {self.name or '<?>'}{where}"


@dataclass(frozen=True, slots=True)
class CreatePR(Action):
    """``gh pr create``; ``base`` ``None`` means the repository's default branch."""

    base: str | None = None
    head: str | None = None

    def describe(self) -> str:
        """``create PR HEAD -> BASE``."""
        return f"create PR {self.head or '<current branch>'} -> {self.base or '<default>'}"


@dataclass(frozen=True, slots=True)
class MergePR(Action):
    """``gh pr merge``; ``number`` ``None``: the current branch's PR or not a number."""

    number: int | None = None

    def describe(self) -> str:
        """``merge PR #N``."""
        return f"merge PR #{self.number if self.number is not None else '?'}"


@dataclass(frozen=True, slots=True)
class ClosePR(Action):
    """``gh pr close``."""

    number: int | None = None

    def describe(self) -> str:
        """``close PR #N``."""
        return f"close PR #{self.number if self.number is not None else '?'}"


@dataclass(frozen=True, slots=True)
class CloseIssue(Action):
    """``gh issue close`` / ``gh issue delete``."""

    number: int | None = None

    def describe(self) -> str:
        """``close issue #N``."""
        return f"close issue #{self.number if self.number is not None else '?'}"


@dataclass(frozen=True, slots=True)
class Deploy(Action):
    """Ship something: ``kubectl apply``, ``terraform apply``, ``npm publish``...

    ``tool`` is the program (``kubectl``), ``target`` what it does (``apply``,
    ``prod``, ``publish``, an image name).
    """

    tool: str
    target: str | None = None

    def describe(self) -> str:
        """``deploy TOOL TARGET``."""
        return f"deploy: {self.tool} {self.target or ''}".rstrip()


@dataclass(frozen=True, slots=True)
class Network(Action):
    """Contact a host (``curl``, ``wget``, ``ssh``, WebFetch, web_fetch...)."""

    host: str | None

    def describe(self) -> str:
        """``network HOST``."""
        return f"network access to {self.host or '<unknown host>'}"


@dataclass(frozen=True, slots=True)
class WebSearch(Action):
    """A web search through the runtime's search tool."""

    query: str = ""

    def describe(self) -> str:
        """``web search QUERY``."""
        return f"web search {self.query!r}"


@dataclass(frozen=True, slots=True)
class McpTool(Action):
    """A call to tool ``tool`` of MCP server ``server``.

    ``arguments``: what it was called with, as compact JSON (cut at
    :data:`MCP_ARGUMENTS_KEPT` characters, saying so): shown to whoever answers, not
    judged (two calls of one tool are equal actions whatever their arguments).
    """

    server: str
    tool: str
    arguments: str = field(default="", compare=False)

    def describe(self) -> str:
        """``MCP tool SERVER.TOOL ARGUMENTS`` (escaped, whitespace runs collapsed, cut at
        :data:`MCP_ARGUMENTS_SHOWN` characters, saying so).

        >>> McpTool("shell", "run", '{"command": "curl x | sh"}').describe()
        'MCP tool shell.run {"command": "curl x | sh"}'
        """
        name = f"MCP tool {self.server}.{self.tool}"
        if self.arguments in ("", "{}"):
            return name
        return f"{name} {clip(visible(collapse(self.arguments)), MCP_ARGUMENTS_SHOWN)}"


@dataclass(frozen=True, slots=True)
class Internal(Action):
    """A runtime-internal tool with no effect outside the agent (TodoWrite, save_memory...)."""

    tool: str

    def describe(self) -> str:
        """``internal TOOL``."""
        return f"internal tool {self.tool}"


@dataclass(frozen=True, slots=True)
class Unknown(Action):
    """Something the classifier cannot see through (``eval $X``, an unknown tool...)."""

    raw: str

    def describe(self) -> str:
        """``unrecognised: RAW``, whole: a person judges it by this (cut, the part that
        mattered could be past the cut)."""
        return f"unrecognised: {self.raw}"


#: Every concrete action type by class name (for JSON round trips).
ACTION_TYPES: dict[str, type[Action]] = {
    cls.__name__: cls
    for cls in (
        ReadFile,
        WriteFile,
        DeleteFile,
        Shell,
        GitCommit,
        GitPush,
        DeleteBranch,
        CreatePR,
        MergePR,
        ClosePR,
        CloseIssue,
        Deploy,
        Network,
        WebSearch,
        McpTool,
        Internal,
        Unknown,
    )
}


def action_to_dict(action: Action) -> dict[str, Any]:
    """A JSON-ready dict: ``{"type": "GitPush", "remote": ..., ...}``."""
    out: dict[str, Any] = {"type": type(action).__name__}
    for f in dataclasses.fields(action):
        value = getattr(action, f.name)
        out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def action_from_dict(data: dict[str, Any]) -> Action:
    """Inverse of :func:`action_to_dict`; raises ``ValueError`` on an unknown type."""
    kind = data.get("type")
    cls = ACTION_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown action type {kind!r}")
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k != "type"}
    return cls(**kwargs)
