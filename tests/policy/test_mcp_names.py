"""Another MCP server's tools: those whose names read are allowed, those that act go to
a person (found probing: every other server's tool was allowed for every role, so a
worker's ``mcp__github__merge_pull_request`` or a shell server's ``run_command`` ``sudo
rm -rf /`` ran unasked; the real effect, a merge moving a bare remote's ``main``, is in
``tests/e2e/test_gemini_worktree.py``)."""

from __future__ import annotations

import pytest

from exomonad.policy.decisions import Allow, Escalate
from exomonad.policy.mcp_names import OWN_TOOLS, name_words, own_tool, reads_only
from exomonad.policy.request import ToolRequest
from exomonad.server.tools import TOOLS
from tests.policy.worker import ROOT, decide, engine_for

#: Tool names of widely used servers (GitHub, filesystem, context7, Playwright, Postgres,
#: SQLite, fetch) and what their names say.
READS = ["get_file_contents", "list_issues", "search_code", "get_pull_request", "list_commits",
         "get_commit", "get_workflow_run", "get_merge_request", "read_file", "list_directory",
         "search_files", "get_file_info", "resolve-library-id", "get-library-docs",
         "describe_table", "listTables", "getMe", "read_query"]  # fmt: skip
ACTS = ["merge_pull_request", "push_files", "create_or_update_file", "create_branch",
        "delete_file", "update_issue", "add_issue_comment", "fork_repository",
        "run_workflow", "execute_sql", "run_command", "browser_click", "browser_navigate",
        "fetch", "query", "write_query", "get_or_create_issue", "find_and_replace",
        "read_and_delete", "listAndDelete", "", "_"]  # fmt: skip


@pytest.mark.parametrize("tool", READS)
def test_names_that_read(tool: str) -> None:
    assert reads_only(tool)


@pytest.mark.parametrize("tool", ACTS)
def test_names_that_act(tool: str) -> None:
    assert not reads_only(tool)


def test_words_of_a_name() -> None:
    assert name_words("get_file-contents.v2") == ["get", "file", "contents", "v2"]
    assert name_words("listAndDelete") == ["list", "and", "delete"]
    assert name_words("HTTPGet") == ["httpget"]


@pytest.mark.parametrize("runtime", ["claude", "gemini"])
def test_a_workers_call_that_acts_goes_to_a_person_and_a_read_is_allowed(runtime: str) -> None:
    name = "mcp__github__{}" if runtime == "claude" else "mcp_github_{}"
    merge = decide(name.format("merge_pull_request"), {"pull_number": 1}, runtime=runtime)
    assert isinstance(merge, Escalate)
    assert merge.to == "human"
    assert "MCP tool github.merge_pull_request" in merge.reason
    assert isinstance(decide(name.format("get_issue"), {"issue_number": 1}, runtime=runtime),
                      Allow)  # fmt: skip
    shell = decide("mcp__shell__run_command", {"command": "sudo rm -rf /"}, runtime="claude")
    assert isinstance(shell, Escalate)
    assert shell.to == "human"


def test_the_leads_own_calls_and_exomonads_tools_are_allowed() -> None:
    for tool in ("mcp__github__merge_pull_request", "mcp__shell__run_command"):
        assert isinstance(decide(tool, {"x": 1}, role="tl"), Allow)
    for tool in ("mcp__exomonad__notify_parent", "mcp__exomonad__spawn_workers"):
        assert isinstance(decide(tool, {"message": "x"}), Allow)
    assert isinstance(decide("mcp_exo_notify_parent", {"message": "x"}, runtime="gemini"), Allow)
    own = ToolRequest("mcp", "worker", "w1", "notify_parent", {"message": "x"})
    assert isinstance(engine_for(ROOT).decide(own), Allow)


def test_a_read_still_meets_the_path_rules() -> None:
    data = {"path": f"{ROOT}/.exomonad/lead.token"}
    assert not isinstance(decide("mcp__filesystem__read_file", data), Allow)


def test_own_tools_are_the_servers_tools() -> None:
    assert frozenset(TOOLS) == OWN_TOOLS


@pytest.mark.parametrize(
    "tool", ["mcp_exo_github_merge_pull_request", "mcp_exomonad_run_command", "mcp_exo_x_get_y"]
)
def test_a_server_named_like_exomonads_is_not_exomonads(tool: str) -> None:
    """Gemini CLI names a tool ``mcp_<server>_<tool>``: a server of the user's called
    ``exo_github`` read as ExoMonad's ``exo``, and its merge was allowed as ExoMonad's own
    tool. Only ExoMonad's own tool names count as its own."""
    verdict = decide(tool, {"n": 1}, runtime="gemini")
    assert isinstance(verdict, Escalate), verdict
    assert verdict.to == "human"
    assert not own_tool("exo", "github_merge_pull_request")
    assert own_tool("exomonad", "spawn_workers")
