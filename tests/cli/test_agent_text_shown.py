"""Text another agent wrote reaches a person's terminal as text: a worker's message to
the user, its task's subject and description and a member's name, through a real
``exomonad serve``, in ``exomonad status``, ``inbox read``, ``task list``/``get`` and
``team show``: no ESC, no C1 control, no BEL, no rich markup read, and the text still
readable, its controls written as escapes.

Found probing: a worker's ``send_message`` to the user of ``\\x1b[2J\\x1b[H`` and a green
"ALL CLEAR - no pending approvals" cleared the pane of ``exomonad status``, hid its
members table, hid the cursor and retitled the pane; an OSC 52 in a message set the
clipboard of terminals that accept it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from exomonad.client import ServerClient
from exomonad.teams import TaskStore, TeamPaths, create_team, register_synthetic
from exomonad.util.display import visible
from exomonad.util.waiting import retry_until
from tests.support.served import ServedProject, served_project
from tests.support.tmux import TmuxServer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

CLEAR = ("status: \x1b[2J\x1b[H\x1b[32mALL CLEAR - no pending approvals\x1b[0m"
         "\x1b[?25l")  # fmt: skip
CLIPBOARD = ("tests pass \x1b]0;owned-title\x1b\\ \x1b]52;c;ZXhvbW9uYWQgYXBwcm92ZSBkZWFkYmVlZgo="
             "\x1b\\ ok")  # fmt: skip
MARKUP = "[red]red?[/red] [link=https://evil.example]click[/link] \x9b2J \x07 :warning:"
SUBJECT = "fix \x1b[2J\x1b[Hparser [bold]now[/bold]"
DESCRIPTION = "details \x1b]52;c;cm0gLXJmIC4K\x07 [link=https://evil.example]x[/link]"
#: An owner as Claude Code's own TaskUpdate tool writes any string there.
OWNER = "w\x1b[2J\u202e[bold]x"
MEMBER = "w[bold]2[reverse]\x9b2J\u202e"  # a name holds no C0 control, no "/"; C1 it may


def _clean(out: str) -> None:
    """No character a terminal acts on: only printable text and newlines."""
    bad = sorted({c for c in out if c != "\n" and not c.isprintable()})
    assert not bad, f"controls reached the output: {bad!r}\n{out}"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedProject]:
    with served_project(tmp_path_factory.mktemp("shown")) as served:
        lead = ServerClient.as_lead(served.state)
        worker = ServerClient(served.state, token=served.worker)
        for text in (CLEAR, CLIPBOARD, MARKUP):
            worker.tool("send_message", {"to": "user", "text": text})
        task = lead.tool("task_create", {"subject": "write the parser"})
        worker.tool("task_claim", {"task_id": task["id"]})
        worker.tool("task_update", {"task_id": task["id"], "subject": SUBJECT,
                                    "description": DESCRIPTION})  # fmt: skip
        second = lead.tool("task_create", {"subject": "review it"})
        paths = TeamPaths("proj", Path(served.env["CLAUDE_CONFIG_DIR"]))
        TaskStore(paths).update(second["id"], owner=OWNER)
        register_synthetic(paths, MEMBER)
        create_team(TeamPaths("other", paths.root))
        yield served


def _run(project: ServedProject, *args: str) -> str:
    env = {**project.env, "COLUMNS": "400", "LINES": "100"}
    done = subprocess.run([sys.executable, "-m", "exomonad", *args], env=env,
                          capture_output=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    out = done.stdout.decode("utf-8")
    _clean(out)
    _clean(done.stderr.decode("utf-8"))
    return out


def test_status_shows_the_users_messages_as_text(project: ServedProject) -> None:
    out = _run(project, "status")
    for text in (CLEAR, CLIPBOARD, MARKUP):
        assert visible(text) in out, out
    assert "\\x1b[2J\\x1b[H\\x1b[32mALL CLEAR" in out
    assert "[red]red?[/red] [link=https://evil.example]click[/link]" in out  # no markup
    assert ":warning:" in out  # no emoji code
    assert visible(MEMBER) in out
    assert "member" in out
    assert "presence" in out


def test_inbox_read_shows_messages_as_text(project: ServedProject) -> None:
    out = _run(project, "inbox", "read", "proj", "user")
    for text in (CLEAR, CLIPBOARD, MARKUP):
        assert visible(text) in out, out


def test_task_list_and_get_show_fields_as_text(project: ServedProject) -> None:
    listed = _run(project, "task", "list", "proj")
    assert visible(SUBJECT) in listed, listed
    assert visible(OWNER) in listed, listed
    got = _run(project, "task", "get", "proj", "1")
    assert visible(SUBJECT) in got, got
    assert visible(DESCRIPTION) in got, got


def test_team_show_shows_member_names_as_text(project: ServedProject) -> None:
    out = _run(project, "team", "show", "proj")
    assert visible(MEMBER) in out, out
    assert _run(project, "team", "list").splitlines() == ["other", "proj"]  # one a line


def test_an_error_quoting_an_owner_is_text(project: ServedProject) -> None:
    env = {**project.env, "COLUMNS": "400"}
    done = subprocess.run([sys.executable, "-m", "exomonad", "task", "claim", "proj", "2",
                           "--owner", "w9"], env=env, capture_output=True, timeout=120,
                          check=False)  # fmt: skip
    assert done.returncode == 1
    err = done.stderr.decode("utf-8")
    _clean(err)
    assert "already owned by" in err, err
    assert "[bold]x" in err, err


def test_status_in_a_real_pane_keeps_its_table(
    project: ServedProject, tmux_server: TmuxServer
) -> None:
    """In a real tmux pane the messages neither clear the screen nor hide the members
    table, the cursor or retitle the pane."""
    env = [f"{k}={v}" for k, v in project.env.items()]
    pane = tmux_server.new_pane(
        "env", *env, "sh", "-c", f"{sys.executable} -m exomonad status; echo STATUS-DONE; "
        "exec sleep 3600",
    )  # fmt: skip

    def screen() -> str:
        return tmux_server.tmux("capture-pane", "-p", "-J", "-t", pane)  # what is on screen

    retry_until(lambda: "STATUS-DONE" in screen(), timeout=120,
                message="exomonad status did not finish in its pane")  # fmt: skip
    shown = screen()
    assert "server pid" in shown, shown
    for header in ("member", "presence", "unread"):
        assert header in shown, shown
    assert "\\x1b[2J" in shown, shown
    assert tmux_server.fmt(pane, "#{pane_title}") != "owned-title"
    assert tmux_server.fmt(pane, "#{cursor_flag}") == "1"
