"""Classifier corpus, part 2: file, web, agent and MCP tools of both runtimes, and
ExoMonad's own MCP tools."""

from __future__ import annotations

from typing import Any

import pytest

from exomonad.policy.actions import (
    Action,
    Internal,
    McpTool,
    Network,
    ReadFile,
    WebSearch,
    WriteFile,
)
from exomonad.policy.classify import SELF_MCP_SERVER, classify
from exomonad.policy.decisions import Allow, label
from exomonad.policy.engine import PolicyEngine
from exomonad.policy.request import Runtime, ToolRequest
from tests.policy.corpus import ANY_UNKNOWN, BR, HOME, Case, W, same, sh, tool
from tests.policy.worker import decide

CLAUDE: list[Case] = [
    tool("claude", "Read", {"file_path": f"{W}/a.py"}, ReadFile(f"{W}/a.py")),
    tool("claude", "Read", {"file_path": "a.py"}, ReadFile(f"{W}/a.py")),
    tool(
        "claude",
        "Read",
        {"file_path": "/etc/passwd", "offset": 1, "limit": 20},
        ReadFile("/etc/passwd"),
    ),
    tool("claude", "Read", {"file_path": f"{W}/../../etc/x"}, ReadFile("/etc/x")),
    tool("claude", "Read", {}, ANY_UNKNOWN),
    tool("claude", "Write", {"file_path": f"{W}/new.py", "content": "x"}, WriteFile(f"{W}/new.py")),
    tool("claude", "Write", {"content": "x"}, ANY_UNKNOWN),
    tool(
        "claude",
        "Edit",
        {"file_path": f"{W}/a.py", "old_string": "a", "new_string": "b"},
        WriteFile(f"{W}/a.py"),
    ),
    tool(
        "claude",
        "MultiEdit",
        {"file_path": "/etc/hosts", "edits": [{"old_string": "a"}]},
        WriteFile("/etc/hosts"),
    ),
    tool(
        "claude",
        "NotebookEdit",
        {"notebook_path": f"{W}/n.ipynb", "new_source": ""},
        WriteFile(f"{W}/n.ipynb"),
    ),
    tool("claude", "NotebookRead", {"notebook_path": f"{W}/n.ipynb"}, ReadFile(f"{W}/n.ipynb")),
    tool("claude", "Glob", {"pattern": "**/*.py"}, ReadFile(W)),
    tool("claude", "Glob", {"pattern": "*.md", "path": "/w/docs"}, ReadFile("/w/docs")),
    tool("claude", "Grep", {"pattern": "TODO", "path": "src"}, ReadFile(f"{W}/src")),
    tool("claude", "Grep", {"pattern": "x", "output_mode": "content"}, ReadFile(W)),
    tool(
        "claude",
        "Grep",
        {"pattern": "x", "glob": "*.{ts,tsx} *.py,!*.lock"},
        ReadFile(W, True, ("*.{ts,tsx}", "*.py")),
    ),
    tool("claude", "LS", {"path": W}, ReadFile(W)),
    tool(
        "claude",
        "WebFetch",
        {"url": "https://docs.python.org/3/", "prompt": "read"},
        Network("docs.python.org"),
    ),
    tool("claude", "WebFetch", {"url": "not a url", "prompt": "x"}, Network(None)),
    tool("claude", "WebFetch", {"prompt": "x"}, ANY_UNKNOWN),
    tool("claude", "WebSearch", {"query": "python shlex"}, WebSearch("python shlex")),
    tool(
        "claude",
        "Task",
        {"description": "x", "prompt": "y", "subagent_type": "general"},
        Internal("Task"),
    ),
    tool("claude", "Agent", {"prompt": "y"}, Internal("Agent")),
    tool("claude", "TodoWrite", {"todos": []}, Internal("TodoWrite")),
    tool("claude", "SendMessage", {"to": "lead", "message": "hi"}, Internal("SendMessage")),
    tool("claude", "BashOutput", {"bash_id": "1"}, Internal("BashOutput")),
    tool("claude", "KillShell", {"shell_id": "1"}, Internal("KillShell")),
    tool("claude", "ExitPlanMode", {"plan": "p"}, Internal("ExitPlanMode")),
    tool("claude", "Skill", {"skill": "pdf"}, Internal("Skill")),
    tool("claude", "TaskCreate", {"subject": "s"}, Internal("TaskCreate")),
    tool("claude", "TeamCreate", {"team_name": "t"}, Internal("TeamCreate")),
    tool("claude", "mcp__exo__notify_parent", {"message": "done"}, McpTool("exo", "notify_parent")),
    tool(
        "claude", "mcp__github__create_pull_request", {}, McpTool("github", "create_pull_request")
    ),
    tool("claude", "mcp__my_server__do_thing", {}, McpTool("my_server", "do_thing")),
    tool("claude", "mcp__broken", {}, ANY_UNKNOWN),
    tool("claude", "Frobnicate", {}, ANY_UNKNOWN),
    tool("claude", "read_file", {"absolute_path": "/x"}, ANY_UNKNOWN),
    tool("claude", "Bash", {"command": 5}, ANY_UNKNOWN),
    tool("claude", "Bash", {}, ANY_UNKNOWN),
]

GEMINI: list[Case] = [
    tool("gemini", "read_file", {"absolute_path": f"{W}/a.py"}, ReadFile(f"{W}/a.py")),
    tool("gemini", "read_file", {"file_path": "a.py"}, ReadFile(f"{W}/a.py")),
    tool("gemini", "read_file", {"path": "/etc/hosts"}, ReadFile("/etc/hosts")),
    tool("gemini", "read_file", {"absolute_path": "/x", "offset": 3}, ReadFile("/x")),
    tool("gemini", "read_file", {}, ANY_UNKNOWN),
    tool(
        "gemini", "write_file", {"file_path": f"{W}/b.py", "content": "x"}, WriteFile(f"{W}/b.py")
    ),
    tool(
        "gemini",
        "write_file",
        {"file_path": "docs/new.md", "content": "x"},
        WriteFile(f"{W}/docs/new.md"),
    ),
    tool(
        "gemini",
        "replace",
        {"file_path": f"{W}/b.py", "old_string": "a", "new_string": "b"},
        WriteFile(f"{W}/b.py"),
    ),
    tool(
        "gemini",
        "read_many_files",
        {"paths": ["src/a.py", "/etc/x"]},
        ReadFile(f"{W}/src/a.py", recursive=True),
        ReadFile("/etc/x", recursive=True),
    ),
    tool("gemini", "read_many_files", {"paths": []}, ANY_UNKNOWN),
    tool("gemini", "list_directory", {"path": f"{W}/src"}, ReadFile(f"{W}/src")),
    tool("gemini", "list_directory", {"dir_path": "docs"}, ReadFile(f"{W}/docs")),
    tool("gemini", "glob", {"pattern": "*.py"}, ReadFile(W)),
    tool("gemini", "glob", {"pattern": "*.py", "dir_path": "/tmp"}, ReadFile("/tmp")),
    tool("gemini", "search_file_content", {"pattern": "x", "path": W}, ReadFile(W, True)),
    tool("gemini", "grep", {"pattern": "x", "dir_path": "src"}, ReadFile(f"{W}/src", True)),
    tool(
        "gemini",
        "grep_search",
        {"pattern": "x", "include_pattern": "*.py"},
        ReadFile(W, True, ("*.py",)),
    ),
    tool(
        "gemini",
        "web_fetch",
        {"prompt": "Summarize https://example.com/a and https://docs.x.org/b"},
        Network("example.com"),
        Network("docs.x.org"),
    ),
    tool("gemini", "web_fetch", {"prompt": "https://a.io/x then https://a.io/y"}, Network("a.io")),
    tool("gemini", "web_fetch", {"prompt": "no urls here"}, ANY_UNKNOWN),
    tool("gemini", "web_fetch", {"url": "https://a.b/c"}, Network("a.b")),
    tool("gemini", "google_web_search", {"query": "x"}, WebSearch("x")),
    tool("gemini", "save_memory", {"fact": "x"}, WriteFile(f"{HOME}/.gemini/GEMINI.md")),
    tool(
        "gemini",
        "read_many_files",
        {"include": ["src/**/*.py"], "exclude": ["x"]},
        ReadFile(f"{W}/src/**/*.py", recursive=True),
    ),
    tool(
        "gemini",
        "read_file",
        {"absolute_path": "a.py", "file_path": "/x"},
        ReadFile(f"{W}/a.py"),
        ReadFile("/x"),
    ),
    tool("gemini", "glob", {"pattern": "/etc/*"}, ReadFile(W), ReadFile("/etc/*", True)),
    tool("claude", "Glob", {"pattern": "../*.py"}, ReadFile(W), ReadFile("/w/*.py", True)),
    tool("codex", "Bash", {"command": "ls", "workdir": "/t"}, sh("ls", cwd="/t")),
    tool("gemini", "write_todos", {"todos": []}, Internal("write_todos")),
    tool("gemini", "mcp_exo_notify_parent", {"message": "x"}, McpTool("exo", "notify_parent")),
    tool("gemini", "mcp_github_create_issue", {}, McpTool("github", "create_issue")),
    tool("gemini", "mcp_", {}, ANY_UNKNOWN),
    tool("gemini", "Bash", {"command": "ls"}, ANY_UNKNOWN),
    tool("gemini", "unknown_tool", {}, ANY_UNKNOWN),
    tool("gemini", "run_shell_command", {}, ANY_UNKNOWN),
]

MCP: list[Case] = [
    tool("mcp", "notify_parent", {"message": "x"}, McpTool(SELF_MCP_SERVER, "notify_parent")),
    tool("mcp", "send_message", {"to": "lead"}, McpTool(SELF_MCP_SERVER, "send_message")),
    tool("mcp", "mcp__exo__spawn", {}, McpTool("exo", "spawn")),
]

TOOLS_CORPUS = CLAUDE + GEMINI + MCP


@pytest.mark.parametrize(
    ("runtime", "name", "data", "expected"),
    TOOLS_CORPUS,
    ids=[f"{c[0]}:{c[1]}:{i}" for i, c in enumerate(TOOLS_CORPUS)],
)
def test_tools_corpus(
    runtime: Runtime, name: str, data: dict[str, Any], expected: list[Action]
) -> None:
    request = ToolRequest(runtime, "dev", "dev1", name, data, cwd=W, worktree=W, branch=BR)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", HOME)
        actual = classify(request)
    assert same(actual, expected), actual


def test_gemini_server_names_with_underscores_need_declaring() -> None:
    request = ToolRequest("gemini", "dev", "d", "mcp_my_server_do_thing", {})
    assert classify(request) == [McpTool("my", "server_do_thing")]
    assert classify(request, mcp_servers=["my_server"]) == [McpTool("my_server", "do_thing")]


def test_unknown_raw_names_the_runtime_tool_and_input() -> None:
    [action] = classify(ToolRequest("claude", "dev", "d", "Frobnicate", {"a": 1}))
    assert action == ANY_UNKNOWN.__class__('claude:Frobnicate {"a": 1}')


def test_an_unknown_runtime_yields_unknown() -> None:
    request = ToolRequest("nosuch", "dev", "d", "Bash", {"command": "ls"})
    assert same(classify(request), [ANY_UNKNOWN])


def test_classify_never_raises_on_odd_input() -> None:
    odd: list[dict[str, Any]] = [
        {"command": None},
        {"file_path": ["x"]},
        {"paths": "x"},
        {"paths": [1, None]},
        {"url": 3},
    ]
    for data in odd:
        for name in ("Bash", "Read", "Write", "WebFetch", "read_many_files"):
            for runtime in ("claude", "gemini"):
                assert classify(ToolRequest(runtime, "dev", "d", name, data, cwd=W))


def test_total_corpus_size() -> None:
    from tests.policy.test_corpus_programs import PROGRAMS_CORPUS
    from tests.policy.test_corpus_shell import SHELL_CORPUS

    assert len(SHELL_CORPUS) + len(PROGRAMS_CORPUS) >= 200
    assert len(SHELL_CORPUS) + len(PROGRAMS_CORPUS) + len(TOOLS_CORPUS) >= 300


@pytest.mark.parametrize(
    ("tool", "tool_input", "expected"),
    [
        ("write_file", {"path": "/repo/.exomonad/policy.py", "content": "policy = ..."}, "deny"),
        ("read_file", {"path": "/repo/.exomonad/lead.token"}, "deny"),
        ("edit_file", {"edits": [{"file": "/repo/.mcp.json"}]}, "deny"),  # nested, any key
        ("read_file", {"path": "../../.gemini/settings.json"}, "deny"),  # from the worktree
        ("read_file", {"path": "/repo/.worktrees/w1/src/a.py"}, "allow"),
        ("read_file", {"path": "/repo/src/a.py"}, "tl"),  # the lead's checkout
        ("search_files", {"query": "how to parse"}, "allow"),
        # A tool that acts goes to a person, even where its paths alone would pass.
        ("write_file", {"path": "/repo/.worktrees/w1/src/a.py", "content": "x"}, "human"),
        ("write_file", {"path": "/repo/src/a.py", "content": "x"}, "human"),
    ],
)
def test_other_mcp_servers_file_tools_meet_the_path_rules(
    tool: str, tool_input: dict[str, object], expected: str
) -> None:
    """Measured (issue 10): `mcp__filesystem__write_file` was allowed for every role,
    .exomonad/ included. Every path in another server's tool input counts as a write."""
    req = ToolRequest("claude", "worker", "w1", f"mcp__filesystem__{tool}", tool_input,
                      cwd="/repo/.worktrees/w1", worktree="/repo/.worktrees/w1",
                      branch="exo/w1")  # fmt: skip
    engine = PolicyEngine(project_root="/repo", state_dir="/repo/.exomonad")
    assert label(engine.decide(req)) == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        # A worker answering its own escalation: a permission_response "from" the lead,
        # written into its own inbox by an interpreter the classifier cannot read.
        ("python3 -c \"open('/home/u/.claude/teams/t/inboxes/w1.json','w').write('[]')\"", "deny"),
        ("node -e \"require('fs').writeFileSync('.claude/teams/t/inboxes/w1.json','[]')\"", "deny"),
        ("perl -e 'open F, q(>), q(/home/u/.claude/tasks/t/1.json)'", "deny"),
        ("cat /home/u/.claude/teams/t/inboxes/w1.json", "allow"),  # its own: harmless
        # Another's (found probing): the team's messages, pending permission requests.
        ("cat /home/u/.claude/teams/t/inboxes/team-lead.json", "deny"),
    ],
)
def test_shell_commands_cannot_write_claude_codes_team_files(command: str, expected: str,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:  # fmt: skip
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "/home/u/.claude")
    wt = "/repo/.worktrees/w1"
    req = ToolRequest("claude", "worker", "w1", "Bash", {"command": command}, cwd=wt,
                      worktree=wt, branch="exo/w1")  # fmt: skip
    engine = PolicyEngine(project_root="/repo", state_dir="/repo/.exomonad")
    assert label(engine.decide(req)) == expected


def _nested(depth: int, leaf: object) -> object:
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    "tool_input",
    [
        {"path": ".mcp.json"},
        {"path": ".git"},
        {"path": ".."},
        {"path": "sub dir/../../../README.md"},
        {"path": "file:///p/.git/hooks/pre-commit"},
        {"path": "a" * 5000 + "/../../../x"},
        {"path": "/p/.git/hooks/pre-commit\t"},
        {"paths": [f"d{k}/x" for k in range(32)] + ["/p/.git/hooks/pre-commit"]},
        {"deep": _nested(20, "/p/.git/hooks/pre-commit")},
    ],
    ids=["bare-dotfile", "bare-git", "dotdot", "spaces", "file-uri", "long", "tab",
         "past-32", "past-depth"],
)  # fmt: skip
def test_other_mcp_servers_paths_the_scan_cannot_read_are_not_allowed(
    tool_input: dict[str, object],
) -> None:
    """Found probing (a third round): each spelling was skipped by the scan of another
    MCP server's tool input (bare names, spaces, ``file://``, past 4096 characters, a
    trailing tab, past 32 paths or 16 levels) and allowed as ``mcp__fs__write_file``."""
    assert not isinstance(decide("mcp__fs__write_file", tool_input), Allow)
