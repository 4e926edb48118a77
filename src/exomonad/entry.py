"""The ``exomonad`` console script: hooks take a fast path that imports no CLI framework."""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Dispatch ``exomonad hook ...`` to the thin client, everything else to the CLI."""
    if len(sys.argv) > 1 and sys.argv[1] == "hook":
        from exomonad.hookclient import main as hook_main

        sys.exit(hook_main(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "git-gate":  # git's pre-push, in a worktree
        from exomonad.gitgate import main as gate_main

        sys.exit(gate_main(sys.argv[2:]))
    from exomonad.cli.main import main as cli_main

    cli_main()
