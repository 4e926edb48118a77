"""What another MCP server's tool does, as far as its name says.

A hook sees an MCP call's server, tool name and arguments, never the tool's code nor
its annotations. The names are the servers' (the user installed them; an agent cannot
add one: its MCP settings are control files), so they are a fair guide to what a tool
is for: ``get_file_contents``, ``list_issues``, ``search_code`` or ``resolve-library-id``
read; ``merge_pull_request``, ``push_files``, ``run_command``, ``execute_sql`` or
``browser_click`` act. A name reads only when its first word is a reading verb and no
word of it is an acting one (``get_or_create_issue``, ``read_and_delete`` act). What a
name does not say is asked.

``fetch`` (a URL of the caller's choosing: a request to any host) and ``query`` (SQL
that may write) are not reading verbs here.

>>> reads_only("get_file_contents"), reads_only("listIssues"), reads_only("resolve-library-id")
(True, True, True)
>>> reads_only("merge_pull_request"), reads_only("get_or_create_issue"), reads_only("fetch")
(False, False, False)
"""

from __future__ import annotations

import re

__all__ = ["ACTING_WORDS", "OWN_MCP_SERVERS", "OWN_TOOLS", "READING_VERBS", "SELF_MCP_SERVER",
           "name_words", "own_tool", "reads_only"]  # fmt: skip

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
     "resolve", "inspect", "whoami", "explain"}
)  # fmt: skip

#: Words that make a tool act wherever they are in its name: verbs seldom used as nouns
#: (``get_run``, ``get_commit`` and ``get_merge_request`` read), and the conjunctions of
#: a second verb (``get_or_create``, ``find_and_replace``).
ACTING_WORDS = frozenset(
    {"and", "or", "then", "create", "delete", "destroy", "drop", "erase", "exec", "execute",
     "install", "insert", "kill", "overwrite", "purge", "remove", "truncate", "upsert",
     "wipe", "write"}
)  # fmt: skip

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[^A-Za-z0-9]+")


def name_words(tool: str) -> list[str]:
    """The words of a tool name, lower-cased: split at ``_``, ``-``, ``.`` and the like,
    and between a lower-case letter or digit and a capital.

    >>> name_words("getFileContents"), name_words("resolve-library-id")
    (['get', 'file', 'contents'], ['resolve', 'library', 'id'])
    """
    return [w.lower() for w in _SEPARATORS.split(_CAMEL.sub("_", tool)) if w]


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


def reads_only(tool: str) -> bool:
    """Whether the tool named ``tool`` only reads, by its name (see the module doc)."""
    words = name_words(tool)
    return bool(words) and words[0] in READING_VERBS and not ACTING_WORDS.intersection(words)
