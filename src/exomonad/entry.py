"""The ``exomonad`` console script: hooks, ``git-gate`` and ``mcp-stdio`` (with a server
running) take fast paths that import no CLI framework and no MCP SDK."""

from __future__ import annotations

import os
import sys

__all__ = ["main"]


def _leave(code: int) -> None:
    """Exit with ``code`` now: flush stdout and stderr, skip the interpreter's teardown
    (freeing every module costs a hook process ~2 ms of CPU, on every tool call). A
    flush that fails exits 120, as Python's own exit would."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        code = 120
    os._exit(code)


def main() -> None:
    """Dispatch ``exomonad hook ...`` to the thin client, everything else to the CLI."""
    command = sys.argv[1] if len(sys.argv) > 1 else None
    if command == "hook":
        from exomonad.hookclient import main as hook_main

        _leave(hook_main(sys.argv[2:]))
    if command == "git-gate":  # git's pre-push, in a worktree
        from exomonad.gitgate import main as gate_main

        sys.exit(gate_main(sys.argv[2:]))
    if command == "mcp-stdio":  # an agent's MCP server: a proxy while a server runs
        from exomonad.server.stdio_proxy import main as proxy_main

        code = proxy_main(sys.argv[2:])
        if code is not None:
            sys.exit(code)
    from exomonad.cli.main import main as cli_main

    cli_main()
