"""The dashboard of a real ``exomonad serve``: its TCP listener refuses every request
without its token and listens on loopback only; the token is printed once and written
nowhere; the Unix socket's dashboard, ``exomonad dashboard`` and a person's answer are
refused to agents' processes, whatever token they hold."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import orjson
import pytest

from exomonad.errors import ExomonadError
from exomonad.server.config import load_project_config
from exomonad.util.waiting import retry_until
from tests.server.dashboard.conftest import TEAM, Live

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

#: Every kind of path: the page, its files, the dashboard's API, and the server's own
#: routes (which the TCP listener does not serve at all).
ROUTES = [
    ("GET", "/"), ("GET", "/static/app.js"), ("GET", "/static/style.css"),
    ("GET", "/static/index.html"), ("GET", "/api/status"), ("GET", "/api/events"),
    ("POST", "/api/approvals/abcd1234"), ("POST", "/api/reply"), ("POST", "/api/open"),
    ("GET", "/health"), ("POST", "/mcp"), ("POST", "/hook/pre-tool-use"),
    ("POST", "/tool/spawn_workers"), ("GET", "/status"), ("GET", "/events"),
]  # fmt: skip

#: A request to the server's Unix socket from the process this runs in.
_REQUEST = (
    "import json, sys; from exomonad.server.pidfile import server_request\n"
    "sock, method, path, body, token = sys.argv[1:6]\n"
    "print(json.dumps(server_request(sock, method, path, json.loads(body),\n"
    "      headers={'x-exomonad-token': token} if token else None)))"
)


def _worker(live: Live, name: str) -> str:
    """A worker token, issued the way a teammate gets one."""
    code, data = live.unix("POST", "/teammate/token", {"name": name, "team": TEAM,
                                                        "runtime": "terminal"})  # fmt: skip
    assert code == 200, data
    token: str = data["token"]
    return token


def _from_agent(live: Live, method: str, path: str, body: Any = None, *, env_token: str = "",
                header_token: str = "", program: str = "") -> tuple[int, Any]:  # fmt: skip
    """The same request from an agent's process: one holding ``env_token`` as its
    ``EXOMONAD_TOKEN``, or one below a process shown as ``program`` (``exec -a``)."""
    argv = [sys.executable, "-c", _REQUEST, str(live.state / "server.sock"), method, path,
            json.dumps(body), header_token]  # fmt: skip
    env = {**live.env, **({"EXOMONAD_TOKEN": env_token} if env_token else {})}
    if program:  # a child of a bash shown as `program` (`; exit` keeps bash from exec-ing)
        inner = shlex.quote(f"{shlex.join(argv)}; exit $?")
        argv = ["bash", "-c", f"exec -a {program} bash -c {inner}"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=True)
    code, data = json.loads(done.stdout)
    return int(code), data


def test_the_tcp_listener_refuses_every_request_without_its_token(live: Live) -> None:
    lead = (live.state / "lead.token").read_text().strip()
    worker = _worker(live, "w-1")
    first = "1" if live.token.startswith("0") else "0"  # differs from the real token, always
    others = {"none": "", "wrong": f"/{first}{live.token[1:]}", "cut": f"/{live.token[:-1]}",
              "lead": f"/{lead}", "worker": f"/{worker}"}  # fmt: skip
    assert len(set(others.values()) | {f"/{live.token}"}) == len(others) + 1
    with httpx2.Client(base_url=live.origin, timeout=30) as http:
        for method, path in ROUTES:
            for what, prefix in others.items():
                answer = http.request(method, prefix + path, json={"approve": True},
                                      headers={"Authorization": f"Bearer {live.token}",
                                               "x-exomonad-token": lead})  # fmt: skip
                assert answer.status_code == 401, (what, method, path)
                assert live.token not in answer.text
        mine = f"/{live.token}"
        status = http.get(f"{mine}/api/status")
        assert status.status_code == 200
        assert TEAM in [t["name"] for t in status.json()["teams"]]
        assert "ExoMonad" in http.get(f"{mine}/").text
        for method, path in ROUTES[-6:]:  # the server's own routes: not on this listener
            assert http.request(method, mine + path).status_code == 404, path
        assert http.post(f"{mine}/api/open", json={}).status_code == 404  # Unix socket only
        with http.stream("GET", f"{mine}/api/events?since=0") as events:
            assert events.status_code == 200
            assert next(events.iter_lines()) == "retry: 1000"
        rebound = http.get(f"{mine}/api/status", headers={"Host": "attacker.example"})
        assert rebound.status_code == 403  # a page that rebinds its name to 127.0.0.1


def _listeners(port: int) -> list[str]:
    """Local addresses (hex, as the kernel lists them) listening on ``port``."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, _, hexport = local.rpartition(":")
            if state == "0A" and int(hexport, 16) == port:  # 0A: LISTEN
                found.append(address)
    return found


def test_it_listens_on_loopback_only_and_its_token_is_written_nowhere(live: Live) -> None:
    port = int(live.origin.rsplit(":", 1)[1])
    assert _listeners(port) == ["0100007F"]  # 127.0.0.1, no other address, no IPv6
    second = subprocess.run([sys.executable, "-m", "exomonad", "dashboard"], env=live.env,
                            capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    url = second.stdout.strip()
    assert url.startswith(f"{live.origin}/")
    assert url != live.url  # a new token each time
    fresh = url.rstrip("/").rsplit("/", 1)[1]
    assert live.serve.log().count(live.token) == 1  # printed once, at start
    assert fresh not in live.serve.log()  # given to the person who asked, not logged
    written = [p for top in (live.state.parent.parent,) for p in top.rglob("*")
               if p.is_file() and p.name != "serve.log"]  # fmt: skip
    assert len(written) > 10  # state dir, team files, worktrees: all searched
    for path in written:
        data = path.read_bytes()
        assert live.token.encode() not in data, path
        assert fresh.encode() not in data, path
    with httpx2.Client(timeout=30) as http:
        assert http.get(url + "api/status").status_code == 200
        assert http.get(live.url + "api/status").status_code == 200  # the first still works


def test_the_unix_dashboard_and_its_cli_are_a_persons(live: Live) -> None:
    lead = (live.state / "lead.token").read_text().strip()
    worker = _worker(live, "w-2")
    assert live.unix("GET", "/dashboard/api/status")[0] == 200  # this process: a person's
    refusals = {
        "worker token": {"env_token": worker},
        "lead token below gemini": {"program": "gemini", "header_token": lead},
        "below the lead's claude": {"program": "claude", "header_token": lead},
    }
    for what, agent in refusals.items():
        for method, path, body in (("GET", "/dashboard/api/status", None),
                                   ("POST", "/dashboard/api/open", {}),
                                   ("POST", "/dashboard/api/reply",
                                    {"team": TEAM, "to": "w-2", "text": "hi"})):  # fmt: skip
            code, data = _from_agent(live, method, path, body, **agent)
            assert code == 403, (what, path, data)
            assert "the dashboard is a person's" in data["error"]
    cli = [sys.executable, "-m", "exomonad", "dashboard", "--json"]
    inside = subprocess.run(cli, env={**live.env, "EXOMONAD_TOKEN": worker},
                            capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert inside.returncode == 1
    assert "the dashboard is a person's" in inside.stderr
    assert "http://" not in inside.stdout + inside.stderr
    mine = subprocess.run(cli, env=live.env, capture_output=True, text=True, timeout=60,
                          check=True)  # fmt: skip
    assert orjson.loads(mine.stdout)["url"].startswith(live.origin)


def test_an_agent_cannot_answer_a_persons_escalation_through_the_dashboard(live: Live) -> None:
    """A worker's tool call waits for a person; agents' processes (its own token, the
    lead's token from inside an agent) are refused on both channels; the person's Deny
    over the Unix socket releases the hook with deny."""
    worker = _worker(live, "w-3")
    lead = (live.state / "lead.token").read_text().strip()
    hook = live.hook("pre-tool-use", {"session_id": "s3", "tool_name": "Bash", "cwd": "/tmp",
                                      "tool_input": {"command": "sudo apt-get install jq"}},
                     worker)  # fmt: skip
    retry_until(lambda: bool(live.status()["approvals"]), timeout=60,
                message="the escalation never showed")  # fmt: skip
    [approval] = live.status()["approvals"]
    assert (approval["agent"], approval["addressee"]) == ("w-3", "human")
    path = f"/dashboard/api/approvals/{approval['id']}"
    for agent in ({"env_token": worker}, {"program": "gemini", "header_token": lead},
                  {"program": "claude", "header_token": lead}):  # fmt: skip
        code, _ = _from_agent(live, "POST", path, {"approve": True}, **agent)
        assert code == 403, agent
    with httpx2.Client(base_url=live.origin, timeout=30) as http:
        for token in (worker, lead):
            answer = http.post(f"/{token}/api/approvals/{approval['id']}", json={"approve": True})
            assert answer.status_code == 401
    assert hook.poll() is None  # still waiting
    assert [a["state"] for a in live.status()["approvals"]] == ["pending"]
    code, done = live.unix("POST", path, {"approve": False, "reason": "not on this box"})
    assert code == 200, done
    out, err = hook.communicate(timeout=60)
    decision = orjson.loads(out)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny", err
    assert "(dashboard): not on this box" in decision["permissionDecisionReason"]


@pytest.mark.parametrize("live", ["config"], indirect=True)
def test_the_config_opens_the_listener_at_start(live: Live) -> None:
    """``[dashboard] port`` opens it as ``--dashboard-port`` does (here: any free port)."""
    with httpx2.Client(timeout=30) as http:
        assert http.get(live.url + "api/status").status_code == 200
        assert http.get(live.origin + "/api/status").status_code == 401


@pytest.mark.parametrize(
    ("section", "error"),
    [("port = 70000", "less than or equal to 65535"), ('host = "0.0.0.0"', "host"),
     ("port = -1", "greater than or equal to 0")],
)  # fmt: skip
def test_the_dashboard_config_takes_a_port_and_no_host(
    tmp_path: Path, section: str, error: str
) -> None:
    (tmp_path / "config.toml").write_text(f"[dashboard]\n{section}\n")
    with pytest.raises(ExomonadError, match=error):
        load_project_config(tmp_path)
    (tmp_path / "config.toml").write_text("[dashboard]\nport = 8765\n")
    assert load_project_config(tmp_path).dashboard.port == 8765
    (tmp_path / "config.toml").unlink()
    assert load_project_config(tmp_path).dashboard.port is None  # only when asked
