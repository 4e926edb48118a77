"""``exomonad policy``: check, scaffold and try out the project policy; answer approvals.

- ``exomonad policy check [PATH]`` (alias ``exomonad recompile``): import the policy in a
  separate process, type-check it with ``mypy --strict`` and run its examples; exit 0 if
  all is well, 1 otherwise. PATH defaults to ``<state dir>/policy.py``, else the
  built-in policy.
- ``exomonad policy init``: write a documented starter policy to ``<state dir>/policy.py``.
- ``exomonad policy explain --role dev -- git push -f origin main``: show the actions and
  the decision for a shell command (or ``--tool NAME --input JSON``).
- ``exomonad approvals list`` / ``exomonad approve ID`` / ``exomonad deny ID --reason R``:
  the human side of escalations (ids may be abbreviated to a unique prefix).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from exomonad import runtimes
from exomonad.cli.common import JsonOpt, console, emit, err_console, handle_errors, whole_table
from exomonad.cli.popup import popup_lines
from exomonad.policy import default as default_policy
from exomonad.policy import template
from exomonad.policy.approvals import Approval, ApprovalStore
from exomonad.policy.check import check_policy
from exomonad.policy.decisions import label
from exomonad.policy.engine import POLICY_FILE_NAME, PolicyEngine
from exomonad.policy.loader import PolicyStore, load_policy_file
from exomonad.policy.model import Policy
from exomonad.policy.person import answer_as_person, require_person
from exomonad.policy.replay import Outcome, judge_audit, judge_calls, read_jsonl
from exomonad.policy.request import RUNTIMES, Runtime, ToolRequest
from exomonad.state import ensure_state_dir, find_state_dir
from exomonad.util.display import visible

__all__ = ["app", "approvals_app", "register"]

app = typer.Typer(help="Check, scaffold and try the project policy.", no_args_is_help=True)
approvals_app = typer.Typer(help="Pending human approvals.", no_args_is_help=True)

StateDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--state-dir", help="Project state dir (default: nearest .exomonad/; $EXOMONAD_DIR)."
    ),
]


def _state(state_dir: Path | None) -> Path:
    return state_dir if state_dir is not None else find_state_dir()


@app.command("check")
def check(
    path: Annotated[
        Path | None, typer.Argument(help="Policy file (default: <state dir>/policy.py).")
    ] = None,
    no_type_check: Annotated[bool, typer.Option("--no-type-check", help="Skip mypy.")] = False,
    state_dir: StateDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import the policy in a separate process, run mypy --strict and its examples."""
    if path is None:
        path = _state(state_dir) / POLICY_FILE_NAME
        if not path.is_file():
            err_console.print(
                f"no project policy at {escape(str(path))}; checking the built-in policy"
            )
            path = Path(default_policy.__file__)
    report = check_policy(path, type_check=not no_type_check)
    data = {
        "path": str(report.path),
        "ok": report.ok,
        "loaded": report.loaded,
        "error": report.error,
        "sha256": report.sha256,
        "type_check": {"status": report.type_check.status, "output": report.type_check.output},
        "examples": report.examples,
    }

    def human() -> None:
        for line in report.lines():
            style = "red" if "FAIL" in line else ""
            console.print(f"[{style}]{escape(line)}[/{style}]" if style else escape(line))

    emit(data, as_json, human)
    raise typer.Exit(0 if report.ok else 1)


@app.command("init")
@handle_errors
def init(
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
    state_dir: StateDirOpt = None,
) -> None:
    """Write a documented starter policy to <state dir>/policy.py."""
    state = state_dir if state_dir is not None else find_state_dir(create=True)
    ensure_state_dir(state)
    target = state / POLICY_FILE_NAME
    if target.exists() and not force:
        err_console.print(f"[red]error:[/red] {escape(str(target))} exists (use --force)")
        raise typer.Exit(1)
    target.write_text(Path(template.__file__).read_text())
    console.print(f"wrote {escape(str(target))}; check it with: exomonad policy check")


@app.command("explain")
@handle_errors
def explain(
    command: Annotated[list[str] | None, typer.Argument(help="Shell command to judge.")] = None,
    role: Annotated[str, typer.Option("--role", help="The agent's role.")] = "dev",
    agent: Annotated[str, typer.Option("--agent", help="The agent's name.")] = "cli",
    runtime: Annotated[str, typer.Option("--runtime", help=f"{', '.join(RUNTIMES)}.")] = "claude",
    tool: Annotated[
        str | None, typer.Option("--tool", help="Raw tool name instead of a shell command.")
    ] = None,
    tool_input: Annotated[str, typer.Option("--input", help="Tool input JSON.")] = "{}",
    cwd: Annotated[str | None, typer.Option("--cwd", help="Working directory.")] = None,
    worktree: Annotated[str | None, typer.Option("--worktree", help="Agent worktree.")] = None,
    branch: Annotated[str | None, typer.Option("--branch", help="Agent branch.")] = None,
    state_dir: StateDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show the typed actions and the decision for one tool call (nothing is run)."""
    if runtime not in RUNTIMES:
        raise typer.BadParameter(f"runtime must be one of {', '.join(RUNTIMES)}")
    rt: Runtime = runtime
    if tool is None:
        if not command:
            raise typer.BadParameter("give a shell command or --tool")
        shell = runtimes.get(rt).shell_tool() if rt != "mcp" else None
        if shell is None:
            raise typer.BadParameter(f"{rt} has no shell tool: give --tool")
        tool = shell
        data: dict[str, Any] = {"command": " ".join(command)}
    else:
        data = json.loads(tool_input)
    state = _state(state_dir).resolve()
    engine = PolicyEngine(PolicyStore(state / POLICY_FILE_NAME), state_dir=state)
    result = engine.evaluate(
        ToolRequest(
            rt,
            role,
            agent,
            tool,
            data,
            cwd=cwd or str(Path.cwd()),
            worktree=worktree,
            branch=branch,
        )
    )

    def human() -> None:
        if engine.store.error:
            err_console.print(
                f"[yellow]policy error (using last good): {escape(engine.store.error)}[/yellow]"
            )
        for action, decision in result.verdicts:
            console.print(
                f"  {escape(action.describe())}  ->  {label(decision)}: {escape(decision.reason)}"
            )
        console.print(
            f"decision: [bold]{label(result.decision)}[/bold] "
            f"({escape(result.decision.reason)}) policy {result.policy_id}"
        )

    emit(result.to_dict(), as_json, human)


def _policy(state: Path, candidate: Path | None) -> Policy:
    if candidate is not None:
        return load_policy_file(candidate)[0]  # a broken candidate: a clear error
    return PolicyStore(state / POLICY_FILE_NAME).current().policy


def _outcomes(outcomes: list[Outcome], show_all: bool, as_json: bool) -> None:
    shown = [o for o in outcomes if show_all or o.changed or o.now == "error"]

    def human() -> None:
        for o in shown:
            mark = (
                "[red]changed[/red]"
                if o.changed
                else "[yellow]error[/yellow]"
                if o.now == "error"
                else "same"
            )
            console.print(
                f"{o.line:>5} {mark} {o.before or '-'} -> [bold]{o.now}[/bold]  "
                f"{escape(o.what)}  ({escape(o.reason)})"
            )
        changed = sum(o.changed for o in outcomes)
        console.print(
            f"{len(outcomes)} calls, {changed} changed, "
            f"{sum(o.now == 'error' for o in outcomes)} unreadable"
        )

    emit([o.to_json() for o in shown], as_json, human)


CandidateOpt = Annotated[
    Path | None,
    typer.Option(
        "--policy", help="A candidate policy file (default: the project's current policy)."
    ),
]


@app.command("test")
@handle_errors
def check_calls(
    file: Annotated[
        Path,
        typer.Argument(
            help="Tool calls, one JSON object a line: runtime, "
            "role, agent, tool_name, tool_input, cwd, worktree, "
            "branch, expect."
        ),
    ],
    candidate: CandidateOpt = None,
    show_all: Annotated[bool, typer.Option("--all", help="Show every call.")] = False,
    state_dir: StateDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Judge recorded tool calls with the policy; exit 1 if an `expect` is not met."""
    state = _state(state_dir).resolve()
    outcomes = judge_calls(_policy(state, candidate), read_jsonl(file.read_text("utf-8")),
                           project_root=str(state.parent), state_dir=str(state))  # fmt: skip
    _outcomes(outcomes, show_all, as_json)
    if any(o.changed or o.now == "error" for o in outcomes):
        raise typer.Exit(1)


@app.command("replay")
@handle_errors
def replay(
    file: Annotated[
        Path | None, typer.Argument(help="An audit log (default: .exomonad/audit.jsonl).")
    ] = None,
    candidate: CandidateOpt = None,
    show_all: Annotated[bool, typer.Option("--all", help="Show every decision.")] = False,
    state_dir: StateDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Judge the audit log's decisions again and show what would change."""
    state = _state(state_dir).resolve()
    path = file or state / "audit.jsonl"
    outcomes = judge_audit(_policy(state, candidate), read_jsonl(path.read_text("utf-8")),
                           project_root=str(state.parent), state_dir=str(state))  # fmt: skip
    _outcomes(outcomes, show_all, as_json)


def _store(state_dir: Path | None) -> ApprovalStore:
    return ApprovalStore(_state(state_dir) / "approvals.db")


def _show(approval: Approval) -> str:
    return (f"{approval.id} {approval.state} {visible(approval.agent)} ({approval.role}): "
            f"{visible(approval.reason)}")  # fmt: skip


@approvals_app.command("list")
@handle_errors
def list_approvals(
    show_all: Annotated[bool, typer.Option("--all", help="Answered ones too.")] = False,
    state_dir: StateDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Pending approvals (oldest first)."""
    store = _store(state_dir)
    try:
        rows = store.records() if show_all else store.list_pending()
    finally:
        store.close()

    def human() -> None:
        if not rows:
            console.print("no pending approvals" if not show_all else "no approvals")
            return
        table = whole_table("id", "state", "agent", "role", "reason", "age", "expires in")
        now = time.time()
        for a in rows:
            left = "" if a.deadline is None else f"{max(0.0, a.deadline - now):.0f}s"
            table.add_row(
                a.id,
                a.state,
                escape(visible(a.agent)),
                escape(visible(a.role)),
                escape(visible(a.reason)),
                f"{now - a.created_at:.0f}s",
                left,
            )
        console.print(table)

    emit([a.to_dict() for a in rows], as_json, human)


def _answer(approval_id: str, approved: bool, reason: str, state_dir: Path | None,
            as_json: bool) -> None:  # fmt: skip
    """A person's answer: refused inside any agent's session; recorded as the Unix user
    who runs it (never a name the caller chooses)."""
    require_person(os.getpid())
    store = _store(state_dir)
    try:
        approval = answer_as_person(store, approval_id, approved, reason)
    finally:
        store.close()
    emit(approval.to_dict(), as_json, lambda: console.print(escape(_show(approval))))


@approvals_app.command("prompt")
@handle_errors
def prompt(
    approval_id: Annotated[str, typer.Argument(metavar="ID", help="Approval id or prefix.")],
    state_dir: StateDirOpt = None,
) -> None:
    """Show one pending request with its context and answer it with y/n (the tmux popup)."""
    store = _store(state_dir)
    try:
        approval = store.get(store.resolve(approval_id))
        size = shutil.get_terminal_size((80, 24))
        # Sized to the popup (no scrollback): what needs the answer next to the question.
        for line in popup_lines(approval, size.columns, size.lines):
            console.print(escape(line), soft_wrap=True)
        if approval.state != "pending":
            console.print(f"already {approval.state}")
            return
        answer = typer.prompt("approve? [y/n]", default="n").strip().lower()
        approved = answer in ("y", "yes")
        reason = "" if approved else typer.prompt("reason (shown to the agent)", default="")
        done = answer_as_person(store, approval.id, approved, reason, via="popup")
        console.print(f"{done.state}")
    finally:
        store.close()


@handle_errors
def approve(
    approval_id: Annotated[str, typer.Argument(metavar="ID", help="Approval id or prefix.")],
    reason: Annotated[str, typer.Option("--reason", help="Why (shown to the agent).")] = "",
    state_dir: StateDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Approve a pending request: the waiting tool call runs. Only a person answers
    (refused inside an agent's session; recorded as your Unix user)."""
    _answer(approval_id, True, reason, state_dir, as_json)


@handle_errors
def deny(
    approval_id: Annotated[str, typer.Argument(metavar="ID", help="Approval id or prefix.")],
    reason: Annotated[str, typer.Option("--reason", help="Why (shown to the agent).")] = "",
    state_dir: StateDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Deny a pending request: the waiting tool call is blocked with REASON. Only a
    person answers (refused inside an agent's session; recorded as your Unix user)."""
    _answer(approval_id, False, reason, state_dir, as_json)


def register(root: typer.Typer) -> None:
    """Add ``approve``, ``deny``, ``recompile`` and the ``approvals`` group to ``root``."""
    root.command("approve")(approve)
    root.command("deny")(deny)
    root.command("recompile", help="Alias of `exomonad policy check`.")(check)
    root.add_typer(approvals_app, name="approvals")
