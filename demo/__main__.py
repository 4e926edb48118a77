"""`make demo`: a Gemini CLI worker in a Claude Code team, with everything real but the
models (scripted, offline; no API key).

1. `exomonad init` a fresh git project and commit what it wrote (hooks, MCP settings:
   nothing machine-specific); `exomonad serve` in a private tmux server.
2. The lead (MCP client with the lead's token, as Claude Code's `.mcp.json` runs it)
   creates the team and calls `spawn_workers`: the worker gets its own git worktree on
   branch `exo/gemini-1`, the real Gemini CLI opens there in a tmux pane and, once
   ready, the task is typed into it by the inbox watcher.
3. Gemini's model calls `notify_parent` over MCP: the report lands in the lead's inbox,
   under Claude Code's lock, verified.
4. The lead asks for a push; Gemini tries `git push --force origin main`; its BeforeTool
   hook asks the server's policy, which denies it, and the reason reaches Gemini's model.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import orjson
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from tests.e2e.gemini_cli import gemini_install_problem, prepare_home, worker_launcher

from exomonad.scripted.gemini import ScriptedGemini
from exomonad.teams import Mailbox, TeamPaths, create_team
from exomonad.util.waiting import retry_until

console = Console(highlight=False)
EXO = [sys.executable, "-m", "exomonad"]
TEAM = "demo-team"
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "demo",
    "GIT_AUTHOR_EMAIL": "demo@example.invalid",
    "GIT_COMMITTER_NAME": "demo",
    "GIT_COMMITTER_EMAIL": "demo@example.invalid",
}


def step(title: str) -> float:
    console.rule(f"[bold cyan]{title}")
    return time.monotonic()


def run(args: list[str], env: dict[str, str], **kw: Any) -> str:
    done = subprocess.run(args, env=env, check=True, capture_output=True, text=True, **kw)
    return str(done.stdout)


def launcher(root: Path, model_url: str) -> Path:
    """Gemini CLI offline against the scripted model, in the worktree ExoMonad opens its
    pane in, keeping the identity ExoMonad gives it."""
    return worker_launcher(prepare_home(root / "gemini"), model_url, extra_env=GIT_IDENTITY)


async def lead_call(env: dict[str, str], calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """The scripted lead's MCP calls. It is no Claude Code process, so it presents the
    lead's token itself (a tokenless `--role tl` is the lead only below Claude Code)."""
    token = (Path(env["EXOMONAD_DIR"]) / "lead.token").read_text().strip()
    params = StdioServerParameters(command=EXO[0], args=[*EXO[1:], "mcp-stdio", "--role", "tl"],
                                   env={**env, "EXOMONAD_TOKEN": token})  # fmt: skip
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        return [(await s.call_tool(name, args)).structured_content for name, args in calls]


def start(root: Path, project: Path, env: dict[str, str], sock: str, url: str
          ) -> subprocess.Popen[str]:  # fmt: skip
    """Step 1: init the project, configure the worker command, start the server."""
    t = step("1. exomonad init + exomonad serve")
    console.print(run([*EXO, "init", str(project)], env))
    run(["git", "-C", str(project), "add", "-A"], env)
    run(["git", "-C", str(project), "commit", "-q", "-m", "exomonad init"], env)
    console.print("committed what init wrote (workers' worktrees are made from HEAD)")
    config = project / ".exomonad" / "config.toml"
    worker = launcher(root, url)
    extra = f'\n[workers]\ncommand = "{worker}"\ntmux_session = "demo"\n'
    config.write_text(config.read_text() + extra)
    subprocess.run(["tmux", "-L", sock, "-f", "/dev/null", "new-session", "-d", "-s", "demo",
                    "-x", "160", "-y", "45", "sleep 3600"], check=True)  # fmt: skip
    server = subprocess.Popen([*EXO, "serve", "--tmux-socket", sock], env=env,
                              stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    retry_until((project / ".exomonad" / "server.sock").exists, timeout=30)
    console.print(f"server up ({time.monotonic() - t:.1f}s)")
    return server


def spawn(claude: Path, env: dict[str, str], model: ScriptedGemini) -> None:
    """Step 2: the lead creates the team and spawns gemini-1 with a task."""
    t = step("2. the lead creates a team and spawns a Gemini CLI worker")
    create_team(TeamPaths(TEAM, claude))
    hook = orjson.dumps({"session_id": "lead-demo", "tool_name": "TeamCreate",
                         "tool_input": {"team_name": TEAM}}).decode()  # fmt: skip
    run([*EXO, "hook", "post-tool-use", "--runtime", "claude"], env, input=hook)
    report = "parser.py reviewed: 2 bugs, fixes on branch fix/parser"
    model.add_function_call("mcp_exo_notify_parent", {"status": "success", "message": report})
    model.add_text("Reported to the lead.")
    task = "Review parser.py and report back with notify_parent."
    workers = [{"name": "gemini-1", "task": task}]
    [spawned] = anyio.run(lead_call, env, [("spawn_workers", {"workers": workers})])
    w = spawned["workers"][0]
    console.print(f"gemini-1 in pane {w['pane']}, ready={w['ready']} "
                  f"({time.monotonic() - t:.1f}s)")  # fmt: skip
    console.print(f"its worktree: {w['worktree']} on branch {w['branch']}")
    req = model.wait_for_user_text(task, 90)
    console.print(f"the task reached Gemini's model request #{req.index}")


def report(claude: Path) -> None:
    """Step 3: the worker's notify_parent lands in the lead's inbox."""
    step("3. the worker reports back over MCP (notify_parent)")
    inbox = Mailbox(TeamPaths(TEAM, claude))

    def mine() -> list[dict[str, Any]]:
        return [e for e in inbox.read_raw("team-lead") if e["from"] == "gemini-1"]

    retry_until(lambda: bool(mine()), timeout=90, message="no report in the lead's inbox")
    entry = mine()[0]
    text = escape(f"{entry['text']}\nsummary: {entry['summary']}")
    console.print(Panel(text, title="inboxes/team-lead.json"))


def policy(project: Path, env: dict[str, str], model: ScriptedGemini) -> None:
    """Step 4: a forced push to main is denied by the policy, with the reason."""
    step("4. policy: a forced push to main is denied")
    model.add_function_call("run_shell_command", {"command": "git push --force origin main"})
    model.add_text("Understood: I will not force-push main.")
    since = len(model.requests)
    message = {"to": "gemini-1", "text": "Please push your work."}
    anyio.run(lead_call, env, [("send_message", message)])
    denied = model.wait_for_request(
        lambda r: any("blocked" in str(fr) for fr in r.function_responses()), 90, since=since
    )
    shown = escape(str(denied.function_responses()[-1])[:400])
    console.print(Panel(shown, title="Gemini's next model request"))
    audit = (project / ".exomonad" / "audit.jsonl").read_text().splitlines()
    console.print(escape(f"audit.jsonl: {len(audit)} decisions; last: {audit[-1][:200]}"))
    console.print(run([*EXO, "team", "show", TEAM], env))
    console.print(run([*EXO, "worker", "list"], env, cwd=project))


def main() -> int:
    """Run the four steps; returns the exit code."""
    problem = gemini_install_problem()
    if problem:
        console.print(f"[red]{escape(problem)}[/red]")
        return 1
    root = Path(tempfile.mkdtemp(prefix="exomonad-demo-"))
    project, claude = root / "project", root / "claude"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    sock = f"exo-demo-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "EXOMONAD_TOKEN")}
    env.update(
        GIT_IDENTITY,
        CLAUDE_CONFIG_DIR=str(claude),
        EXOMONAD_DIR=str(project / ".exomonad"),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    started = time.monotonic()
    server: subprocess.Popen[str] | None = None
    with ScriptedGemini() as model:
        try:
            server = start(root, project, env, sock, model.url)
            spawn(claude, env, model)
            report(claude)
            policy(project, env, model)
            console.rule(f"[bold green]done in {time.monotonic() - started:.1f}s")
            return 0
        finally:
            if server is not None:
                server.send_signal(signal.SIGTERM)
                server.wait(20)
            subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True, check=False)
            Path(f"/tmp/tmux-{os.getuid()}/{sock}").unlink(missing_ok=True)
            console.print(f"(files kept in {root})")


if __name__ == "__main__":
    sys.exit(main())
