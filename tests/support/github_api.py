"""A local stand-in for GitHub's REST API, served on loopback, for the poller's tests.

The response shapes follow GitHub's public REST documentation (pull requests, reviews,
review comments, issue comments, check runs, pull request commits, rate-limit headers
and errors), written out here with the fields GitHub documents; the values are made up.
The stand-in keeps a mutable state the tests change step by step, answers conditional
requests (``ETag`` / ``If-None-Match`` → ``304``), pages lists (``per_page``, ``page``,
``Link: rel="next"``), sends ``x-ratelimit-*`` headers, refuses any other token (``401
Bad credentials``), and serves queued faults (a rate limit, a ``5xx``) first.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

WEB = "https://github.com"


def _user(login: str, uid: int = 1) -> dict[str, Any]:
    return {
        "login": login,
        "id": uid,
        "node_id": f"MDQ6VXNlcj{uid}",
        "type": "User",
        "avatar_url": f"https://avatars.example/u/{uid}",
        "url": f"/users/{login}",
        "html_url": f"{WEB}/{login}",
        "site_admin": False,
    }


def pull(
    repo: str,
    number: int,
    *,
    title: str,
    branch: str,
    sha: str,
    author: str = "exo-bot",
    state: str = "open",
    merged_at: str | None = None,
    closed_at: str | None = None,
    draft: bool = False,
    base: str = "main",
) -> dict[str, Any]:
    """A pull request as the pulls list shows it."""
    owner = repo.split("/", maxsplit=1)[0]
    api = f"/repos/{repo}/pulls/{number}"
    return {
        "url": api,
        "id": 1000 + number,
        "node_id": f"PR_{number}",
        "html_url": f"{WEB}/{repo}/pull/{number}",
        "diff_url": f"{WEB}/{repo}/pull/{number}.diff",
        "issue_url": f"/repos/{repo}/issues/{number}",
        "number": number,
        "state": state,
        "locked": False,
        "title": title,
        "user": _user(author, 7),
        "body": "What it does.",
        "created_at": "2024-05-01T10:00:00Z",
        "updated_at": "2024-05-01T10:00:00Z",
        "closed_at": closed_at,
        "merged_at": merged_at,
        "merge_commit_sha": None,
        "draft": draft,
        "author_association": "CONTRIBUTOR",
        "head": {
            "label": f"{owner}:{branch}",
            "ref": branch,
            "sha": sha,
            "user": _user(owner, 2),
            "repo": {"full_name": repo},
        },
        "base": {
            "label": f"{owner}:{base}",
            "ref": base,
            "sha": "0" * 40,
            "user": _user(owner, 2),
            "repo": {"full_name": repo},
        },
        "_links": {"self": {"href": api}, "html": {"href": f"{WEB}/{repo}/pull/{number}"}},
    }


def review(
    repo: str,
    number: int,
    rid: int,
    *,
    user: str,
    state: str,
    body: str,
    commit_id: str,
    submitted_at: str,
) -> dict[str, Any]:
    """A pull request review."""
    return {
        "id": rid,
        "node_id": f"PRR_{rid}",
        "user": _user(user, rid),
        "body": body,
        "state": state,
        "html_url": f"{WEB}/{repo}/pull/{number}#pullrequestreview-{rid}",
        "pull_request_url": f"/repos/{repo}/pulls/{number}",
        "author_association": "MEMBER",
        "submitted_at": submitted_at,
        "commit_id": commit_id,
    }


def review_comment(
    repo: str,
    number: int,
    cid: int,
    *,
    review_id: int,
    user: str,
    path: str,
    line: int | None,
    body: str,
    commit_id: str,
) -> dict[str, Any]:
    """A comment on a line of a pull request's diff."""
    return {
        "url": f"/repos/{repo}/pulls/comments/{cid}",
        "pull_request_review_id": review_id,
        "id": cid,
        "node_id": f"PRRC_{cid}",
        "diff_hunk": "@@ -1,3 +1,4 @@",
        "path": path,
        "position": 4,
        "original_position": 4,
        "commit_id": commit_id,
        "original_commit_id": commit_id,
        "user": _user(user, review_id),
        "body": body,
        "created_at": "2024-05-01T11:00:00Z",
        "updated_at": "2024-05-01T11:00:00Z",
        "html_url": f"{WEB}/{repo}/pull/{number}#discussion_r{cid}",
        "pull_request_url": f"/repos/{repo}/pulls/{number}",
        "author_association": "MEMBER",
        "start_line": None,
        "original_start_line": None,
        "start_side": None,
        "line": line,
        "original_line": line,
        "side": "RIGHT",
        "subject_type": "line",
    }


def issue_comment(
    repo: str, number: int, cid: int, *, user: str, body: str, created_at: str
) -> dict[str, Any]:
    """A comment on a pull request's conversation."""
    return {
        "id": cid,
        "node_id": f"IC_{cid}",
        "url": f"/repos/{repo}/issues/comments/{cid}",
        "html_url": f"{WEB}/{repo}/pull/{number}#issuecomment-{cid}",
        "body": body,
        "user": _user(user, cid),
        "created_at": created_at,
        "updated_at": created_at,
        "issue_url": f"/repos/{repo}/issues/{number}",
        "author_association": "MEMBER",
    }


def check_run(
    repo: str,
    rid: int,
    *,
    name: str,
    sha: str,
    status: str = "completed",
    conclusion: str | None = None,
    completed_at: str | None = None,
) -> dict[str, Any]:
    """A check run on commit ``sha``."""
    return {
        "id": rid,
        "head_sha": sha,
        "node_id": f"CR_{rid}",
        "external_id": str(rid),
        "url": f"/repos/{repo}/check-runs/{rid}",
        "html_url": f"{WEB}/{repo}/runs/{rid}",
        "details_url": f"https://ci.example/{rid}",
        "status": status,
        "conclusion": conclusion,
        "started_at": "2024-05-01T12:00:00Z",
        "completed_at": completed_at,
        "output": {"title": None, "summary": None, "text": None, "annotations_count": 0},
        "name": name,
        "check_suite": {"id": 5},
        "pull_requests": [],
        "app": {"id": 15368, "slug": "github-actions", "name": "GitHub Actions"},
    }


def commit(repo: str, sha: str, message: str, parent: str | None = None) -> dict[str, Any]:
    """A commit as the pull request commits list shows it."""
    who = {"name": "exo-bot", "email": "exo@test.invalid", "date": "2024-05-01T10:00:00Z"}
    return {
        "url": f"/repos/{repo}/commits/{sha}",
        "sha": sha,
        "node_id": f"C_{sha[:8]}",
        "html_url": f"{WEB}/{repo}/commit/{sha}",
        "commit": {
            "author": who,
            "committer": who,
            "message": message,
            "tree": {"sha": "f" * 40},
            "comment_count": 0,
        },
        "author": _user("exo-bot", 7),
        "committer": _user("exo-bot", 7),
        "parents": [{"sha": parent}] if parent else [],
    }


@dataclass
class Fault:
    """One answer served instead of the real one (the next request on ``path_re``)."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    path_re: str = ".*"


@dataclass
class Seen:
    """One request the stand-in answered."""

    path: str
    query: dict[str, str]
    status: int
    authorized: bool
    conditional: bool


class GitHubStandIn:
    """The stand-in's state and server (start with :meth:`serving`)."""

    def __init__(self, token: str, repo: str = "octo/demo", *, per_page_cap: int = 100) -> None:
        self.token = token
        self.repo = repo
        self.per_page_cap = per_page_cap
        self.lock = threading.Lock()
        self.pulls: list[dict[str, Any]] = []
        self.reviews: dict[int, list[dict[str, Any]]] = {}
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.conversation: dict[int, list[dict[str, Any]]] = {}
        self.checks: dict[str, list[dict[str, Any]]] = {}
        self.commits: dict[int, list[dict[str, Any]]] = {}
        self.faults: list[Fault] = []
        self.seen: list[Seen] = []
        self.remaining = 5000
        self.url = ""

    @contextmanager
    def serving(self) -> Iterator[GitHubStandIn]:
        """Serve on 127.0.0.1 (a free port) until the block ends."""
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            server.shutdown()
            server.server_close()

    def fault(self, fault: Fault) -> None:
        """Serve ``fault`` to the next request it matches."""
        with self.lock:
            self.faults.append(fault)

    def answer(
        self, method: str, target: str, headers: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        """The answer to one request (status, headers, body)."""
        url = urlsplit(target)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        authorized = headers.get("authorization") == f"Bearer {self.token}"
        with self.lock:
            status, extra, body = self._answer(method, url.path, query, headers, authorized)
            self.seen.append(Seen(url.path, query, status, authorized, "if-none-match" in headers))
            if status == 200:
                self.remaining -= 1
            rate = {
                "x-ratelimit-limit": "5000",
                "x-ratelimit-remaining": str(self.remaining),
                "x-ratelimit-reset": str(int(time.time()) + 3600),
                "x-ratelimit-used": str(5000 - self.remaining),
                "x-ratelimit-resource": "core",
            }
        return status, {**rate, **extra}, body

    def _answer(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        headers: dict[str, str],
        authorized: bool,
    ) -> tuple[int, dict[str, str], bytes]:
        if not authorized:
            return _json(
                401,
                {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"},
            )
        for i, fault in enumerate(self.faults):
            if re.search(fault.path_re, path):
                del self.faults[i]
                status, extra, body = _json(fault.status, fault.body)
                return status, {**extra, **fault.headers}, body
        data = self._resource(method, path, query)
        if data is None:
            return _json(404, {"message": "Not Found"})
        items, key = (data["check_runs"], "check_runs") if isinstance(data, dict) else (data, None)
        page = int(query.get("page", "1"))
        per = min(int(query.get("per_page", "30")), self.per_page_cap)
        chunk = items[(page - 1) * per : page * per]
        payload: Any = {"total_count": len(items), key: chunk} if key else chunk
        status, extra, body = _json(200, payload)
        etag = 'W/"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        extra["etag"] = etag
        if page * per < len(items):
            nxt = urlencode({**query, "page": str(page + 1)})
            extra["link"] = f'<{self.url}{path}?{nxt}>; rel="next"'
        if headers.get("if-none-match") == etag:
            return 304, {k: v for k, v in extra.items() if k != "content-type"}, b""
        return status, extra, body

    def _resource(self, method: str, path: str, query: dict[str, str]) -> Any:
        base = f"/repos/{self.repo}"
        if method != "GET" or not path.startswith(base + "/"):
            return None
        rest = path[len(base) :]
        if rest == "/pulls":
            state = query.get("state", "open")
            return [
                p
                for p in self.pulls
                if p["head"]["label"] == query.get("head", p["head"]["label"])
                and state in ("all", p["state"])
            ]
        if found := re.fullmatch(r"/commits/([0-9a-f]+)/check-runs", rest):
            return {"check_runs": list(self.checks.get(found[1], []))}
        if found := re.fullmatch(r"/(pulls|issues)/(\d+)/(reviews|comments|commits)", rest):
            table = {
                ("pulls", "reviews"): self.reviews,
                ("pulls", "comments"): self.comments,
                ("issues", "comments"): self.conversation,
                ("pulls", "commits"): self.commits,
            }.get((found[1], found[3]))
            return None if table is None else list(table.get(int(found[2]), []))
        return None


def _json(status: int, payload: Any) -> tuple[int, dict[str, str], bytes]:
    body = json.dumps(payload).encode()
    return status, {"content-type": "application/json; charset=utf-8"}, body


def _handler(api: GitHubStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out as two writes

        def do_GET(self) -> None:
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, extra, body = api.answer("GET", self.path, headers)
            self.send_response(status)
            for key, value in extra.items():
                self.send_header(key, value)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
