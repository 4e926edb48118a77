"""What another MCP server's tool does, as far as its name says.

A hook sees an MCP call's server, tool name and arguments, never the tool's code nor
its annotations. The names are the servers' (the user installed them; an agent cannot
add one: its MCP settings are control files), so they are a fair guide to what a tool
is for: ``get_file_contents``, ``list_issues``, ``search_code`` or ``resolve-library-id``
read; ``merge_pull_request``, ``push_files``, ``run_command``, ``execute_sql`` or
``browser_click`` act. A name reads only when its first word is a reading verb and no
word of it is an acting one, nor a form of one (``get_or_create_issue``,
``find_replace``, ``getDeleted`` act), and it holds only the characters MCP tool names
are made of. What a name does not say is asked.

``fetch`` (a URL of the caller's choosing: a request to any host) and ``query`` (SQL
that may write) are not reading verbs here, nor ``resolve``, which marks an issue or a
review thread resolved, but in a name that resolves an id (``resolve-library-id``).

A name may split into server and tool more than one way (Gemini CLI calls a tool
``mcp_<server>_<tool>``, and a server's name may hold ``_``): :func:`riskiest` picks
the reading it is judged by, one whose tool may act if there is one
(``mcp_code_search_run_command`` is ``code_search``'s ``run_command``, not ``code``'s
``search_run_command``).

>>> reads_only("get_file_contents"), reads_only("listIssues"), reads_only("resolve-library-id")
(True, True, True)
>>> reads_only("merge_pull_request"), reads_only("get_or_create_issue"), reads_only("fetch")
(False, False, False)
>>> reads_only("find_replace"), reads_only("resolve_issue"), reads_only("getDELETEItem")
(False, False, False)
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from exomonad.runtimes.base import MAX_SPLITS

__all__ = ["ACTING_VERBS", "ACTING_WORDS", "NOUN_VERBS", "OWN_MCP_SERVERS", "OWN_TOOLS",
           "READING_VERBS", "SELF_MCP_SERVER", "acting_word", "may_act", "name_words",
           "own_tool", "reads_only", "riskiest"]  # fmt: skip

#: The server name used for runtime ``"mcp"`` (calls to ExoMonad's own MCP tools).
SELF_MCP_SERVER = "exomonad"
#: ExoMonad's MCP server as ``init`` names it: ``exomonad`` in Claude Code's ``.mcp.json``,
#: ``exo`` for Gemini CLI and Codex CLI.
OWN_MCP_SERVERS = frozenset({SELF_MCP_SERVER, "exo"})
#: ExoMonad's own MCP tools (``exomonad.server.tools.TOOLS``; a test keeps the two equal).
OWN_TOOLS = frozenset(
    {"notify_parent", "send_message", "team_status", "task_list", "task_get", "task_create",
     "task_update", "task_claim", "spawn_workers", "remove_worker", "answer_permission"}
)  # fmt: skip

#: First words of tool names that only read (or search) what a server can reach.
READING_VERBS = frozenset(
    {"get", "list", "read", "search", "find", "describe", "view", "show", "lookup", "count",
     "inspect", "whoami", "explain"}
)  # fmt: skip
#: ``resolve`` reads only in a name that resolves an id (``resolve-library-id``);
#: ``resolve_issue`` and ``resolve_review_thread`` mark something resolved.
_RESOLVES_TO = frozenset({"id", "ids"})

#: Words that make a tool act wherever they are in its name, and so do their forms
#: (``deletes``, ``deleted``, ``replacing``): verbs seldom used as nouns (``get_run``,
#: ``get_commit`` and ``get_merge_request`` read), shell commands, and the conjunctions
#: of a second verb (``get_or_create``, ``find_and_replace``).
ACTING_WORDS = frozenset(
    {"and", "or", "then", "create", "delete", "destroy", "drop", "erase", "exec", "execute",
     "install", "uninstall", "insert", "kill", "overwrite", "purge", "remove", "truncate",
     "upsert", "wipe", "write", "replace", "rename", "modify", "unlink", "rm", "rmdir",
     "mv", "chmod", "chown", "sudo", "eval"}
)  # fmt: skip

#: Verbs that act, and seldom name a thing at the end of a reading tool's name. A tool
#: name that is only one of the ways a name splits (see :func:`may_act`) acts if any of
#: its words is one of these or of :data:`ACTING_WORDS`.
ACTING_VERBS = ACTING_WORDS | frozenset(
    {"add", "append", "apply", "approve", "assign", "bash", "cancel", "checkout", "clear",
     "click", "clone", "compile", "cp", "disable", "dismiss", "download", "drag", "edit",
     "enable", "evaluate", "fetch", "fill", "flush", "generate", "grant", "hover", "invite",
     "invoke", "launch", "merge", "migrate", "mkdir", "navigate", "press", "publish", "push",
     "rebase", "rerun", "reset", "resolve", "restart", "restore", "retry", "revert",
     "revoke", "send", "sh", "shell", "spawn", "squash", "stash", "submit", "touch",
     "trigger", "unassign", "unlock", "update", "upload"}
)  # fmt: skip
#: Verbs that are nouns as often (``get_workflow_run``, ``get_commit``, ``read_query``):
#: they act as the first word of such a tool name of more than one word (``run_command``,
#: ``commit_changes``), not alone.
NOUN_VERBS = frozenset(
    {"archive", "build", "call", "close", "comment", "commit", "copy", "deploy", "dispatch",
     "export", "fix", "fork", "format", "import", "label", "lock", "mark", "move", "open",
     "patch", "post", "pull", "query", "release", "reply", "request", "review", "run", "save",
     "schedule", "select", "set", "start", "stop", "store", "sync", "tag", "transfer", "type"}
)  # fmt: skip
#: ``pull request`` and ``merge request`` are things (``get_merge_request``).
_THINGS = frozenset({("pull", "request"), ("pull", "requests"), ("merge", "request"),
                     ("merge", "requests")})  # fmt: skip
#: Words that make an acting verb before them (not the name's first word) a thing's name,
#: and one of :data:`NOUN_VERBS` even first: ``get_merge_base``, ``get_update_status``
#: read, and ``github_get``'s ``commit_status`` would.
_NOUNS_AFTER = frozenset(
    {"base", "url", "urls", "uri", "status", "state", "time", "history", "key", "keys", "log",
     "logs", "id", "ids", "info", "details", "settings", "config", "options", "link", "links",
     "limit", "limits", "count", "result", "results", "event", "events", "protection",
     "statuses", "usage", "artifacts", "summary", "report", "stats", "metrics"}
)  # fmt: skip

#: The characters of an MCP tool name (the specification's, and all Gemini CLI lets
#: through); a name with any other (``get_\u00e9rase``, a soft hyphen) reads as nothing.
_NAME = re.compile(r"[A-Za-z0-9_.:-]+")
#: Gemini CLI cuts a name longer than 63 characters to its first and last 30 around
#: ``...``: what the name said in between is not known.
_CUT = "..."
_WORD_EDGE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])"
                        r"|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])")  # fmt: skip
_SEPARATORS = re.compile(r"[^A-Za-z0-9]+")
#: Endings of a verb's forms, longest first (``deletes``, ``deleted``, ``dropping``).
_ENDINGS = ("ing", "ed", "es", "s", "d")


def name_words(tool: str) -> list[str]:
    """The words of a tool name, lower-cased: split at ``_``, ``-``, ``.`` and the like,
    between a lower-case letter or digit and a capital, before the last capital of a run
    of them followed by a lower-case letter (``DELETEItem``), and between letters and
    digits.

    >>> name_words("getFileContents"), name_words("resolve-library-id")
    (['get', 'file', 'contents'], ['resolve', 'library', 'id'])
    >>> name_words("getDELETEItem"), name_words("read2exec")
    (['get', 'delete', 'item'], ['read', '2', 'exec'])
    """
    return [w.lower() for w in _SEPARATORS.split(_WORD_EDGE.sub("_", tool)) if w]


def acting_word(word: str, verbs: frozenset[str] = ACTING_WORDS) -> bool:
    """Whether ``word`` (lower-case) is one of ``verbs`` or a form of one.

    >>> acting_word("deletes"), acting_word("dropped"), acting_word("replacing")
    (True, True, True)
    >>> acting_word("tables"), acting_word("contents"), acting_word("ord")
    (False, False, False)
    """
    if word in verbs:
        return True
    for ending in _ENDINGS:
        stem = word[: -len(ending)]
        if word.endswith(ending) and len(stem) >= 2:
            doubled = stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else stem
            if {stem, stem + "e", doubled} & verbs - {"and", "or", "then"}:
                return True
    return False


def own_tool(server: str, tool: str) -> bool:
    """Whether ``server.tool`` is one of ExoMonad's own tools, which the server gates by
    role and whose arguments it judges. Both must match: Gemini CLI names a tool
    ``mcp_<server>_<tool>``, so a server of the user's named ``exo_github`` reads as
    server ``exo`` with tool ``github_merge_pull_request`` (found probing: allowed as
    ExoMonad's own, the merge ran unasked).

    >>> own_tool("exo", "notify_parent"), own_tool("exo", "github_merge_pull_request")
    (True, False)
    """
    return server in OWN_MCP_SERVERS and tool in OWN_TOOLS


def _legible(tool: str) -> bool:
    return _NAME.fullmatch(tool) is not None and _CUT not in tool


def _acts(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` makes the name act: one of :data:`ACTING_WORDS` or a form of
    one; or one of :data:`ACTING_VERBS`, unless it names a thing (``merge_request``, or
    past the first word before one of :data:`_NOUNS_AFTER`: ``get_merge_base``)."""
    word = words[i]
    if acting_word(word):
        return True
    if word not in ACTING_VERBS:
        return False
    after = words[i + 1] if i + 1 < len(words) else ""
    if (word, after) in _THINGS or (i > 0 and (words[i - 1], word) in _THINGS):
        return False
    return i == 0 or after not in _NOUNS_AFTER


def reads_only(tool: str) -> bool:
    """Whether the tool named ``tool`` only reads, by its name (see the module doc): its
    first word is a reading verb and no later word acts (``find_replace``,
    ``list_push_files``, ``get_or_create_issue``, ``getDeleted``)."""
    words = name_words(tool)
    if not _legible(tool) or not words or any(_acts(words, i) for i in range(1, len(words))):
        return False
    return words[0] in READING_VERBS or (words[0] == "resolve" and words[-1] in _RESOLVES_TO)


def may_act(tool: str, before: str = "") -> bool:
    """Whether the tool named ``tool`` may act, read as one of the ways a name splits
    (``code_search``'s ``run_command`` for ``mcp_code_search_run_command``; ``before``:
    the word the name has before it): it does not read, and a word of it acts
    (:data:`ACTING_VERBS`, :data:`ACTING_WORDS`), or it begins with one of
    :data:`NOUN_VERBS` and goes on with no thing's name (``run_command``, not
    ``run_logs``), or is one of them alone after a verb or nothing (``run`` after
    ``search``: found probing, Gemini's ``mcp_code_search_run`` was allowed, read as
    ``code``'s ``search_run``, while ``mcp__code_search__run`` was asked), or it cannot be
    read at all. A tail that names things (``code``, ``pull_requests``, ``workflow_run``,
    ``run`` after ``workflow``, ``request_files`` after ``pull``) does not: found in
    ``search_code``, ``list_pull_requests``, ``get_workflow_run``.

    >>> may_act("run_command"), may_act("merge_branch"), may_act("code"), may_act("run")
    (True, True, False, True)
    >>> may_act("run", "search"), may_act("run", "workflow"), may_act("commits", "list")
    (True, False, False)
    >>> may_act("request_files", "pull"), may_act("request_review"), may_act("files_delete")
    (False, True, True)
    """
    if reads_only(tool):
        return False
    words = name_words(tool)
    if not _legible(tool) or not words:
        return True
    first, after = words[0], words[1] if len(words) > 1 else ""
    if (before, first) not in _THINGS and (first, after) not in _THINGS:
        if acting_word(first) or first in ACTING_VERBS:
            return True  # the first word of a tool name is where its verb is
        if first in NOUN_VERBS and after and after not in _NOUNS_AFTER:
            return True
        if first in NOUN_VERBS and not after and not _names_thing(before):
            return True  # alone, a tool's whole name: code_search's run, shell_get's run
    return any(_acts(words, i) for i in range(1, len(words)))


def _names_thing(word: str) -> bool:
    """Whether ``word``, before one of :data:`NOUN_VERBS`, makes it a thing's name:
    a word that is no verb (``workflow`` ``run``), not a reading or acting one (``get``
    ``run``, ``search`` ``query``)."""
    verbs = READING_VERBS | ACTING_VERBS | NOUN_VERBS | {"resolve"}
    return bool(word) and not acting_word(word) and word not in verbs


def riskiest(readings: Sequence[tuple[str, str]]) -> tuple[str, str]:
    """The ``(server, tool)`` reading a tool name is judged by, of the ways it splits
    (the likeliest first; not empty): past :data:`~exomonad.runtimes.base.MAX_SPLITS` of
    them, the likeliest cut (``...``: it reads as nothing); the likeliest if it is
    ExoMonad's own tool or does not read; else the first other one whose tool may act
    (:func:`may_act`), else the likeliest. So a name reads only if its likeliest reading
    reads and no other acts: found probing, Gemini's ``mcp_code_search_run_command`` (a
    user's server ``code_search``) read as ``code``'s ``search_run_command``, allowed.

    >>> riskiest([("code", "search_run_command"), ("code_search", "run_command")])
    ('code_search', 'run_command')
    >>> riskiest([("github", "search_code"), ("github_search", "code")])
    ('github', 'search_code')
    """
    first = readings[0]
    if len(readings) > MAX_SPLITS:  # more ways than are listed: the rest is not known
        return first[0], first[1] + _CUT
    if own_tool(*first) or not reads_only(first[1]):
        return first
    return next((r for r in readings[1:] if may_act(r[1], _last_word(r[0]))), first)


def _last_word(name: str) -> str:
    words = name_words(name)
    return words[-1] if words else ""
