"""An MCP server of the user's own (not ExoMonad's), on the official SDK: what a GitHub
server is to a real team, over a bare repository standing in for the forge.

Run as ``python repo_mcp_server.py <bare repository>`` (stdio). Tools:

* ``get_log(ref)``: the subjects of ``ref``'s commits, newest first (reads);
* ``get_merge_base(branch)``: the commit ``main`` and ``branch`` share (reads; Gemini CLI
  calls it ``mcp_<server>_get_merge_base``, which may be a ``<server>_get``'s
  ``merge_base``);
* ``merge_branch(branch)``: moves the repository's ``main`` to ``branch``, as a forge's
  merge button does (acts).

Each call is appended to ``<bare repository>.calls`` (one line per call), so a test can
tell a tool that ran from one that was refused before it reached the server.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

REPO = Path(sys.argv[1])
server = MCPServer("repo")


def _git(*args: str) -> str:
    done = subprocess.run(["git", "--git-dir", str(REPO), *args], capture_output=True,
                          text=True, check=True)  # fmt: skip
    return done.stdout


def _called(line: str) -> None:
    with open(f"{REPO}.calls", "a", encoding="utf-8") as f:
        f.write(line + "\n")


@server.tool()
def get_log(ref: str) -> str:
    """The subjects of ``ref``'s commits, newest first."""
    _called(f"get_log {ref}")
    return _git("log", "--format=%s", ref)


@server.tool()
def get_merge_base(branch: str) -> str:
    """The commit ``main`` and ``branch`` share."""
    _called(f"get_merge_base {branch}")
    return _git("merge-base", "main", branch)


@server.tool()
def merge_branch(branch: str) -> str:
    """Move ``main`` to ``branch``'s commit."""
    _called(f"merge_branch {branch}")
    _git("update-ref", "refs/heads/main", f"refs/heads/{branch}")
    return f"main is now {branch}"


if __name__ == "__main__":
    server.run("stdio")
