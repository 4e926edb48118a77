"""Any other terminal agent: a CLI with neither hooks nor an MCP client (aider, a plain
shell, a program of the user's), started with its own command.

ExoMonad delivers its messages into its pane like any worker's (the one delivery
contract, :mod:`exomonad.panes.contract`), gives it a worker's identity in its
environment (``EXOMONAD_TOKEN``, its worktree and branch, git's pre-push gate), and it
reaches its lead with ``exomonad notify "text"`` (:mod:`exomonad.cli.notify`), which it
or its user runs in its shell.

What it cannot have is the policy on each tool call: it has no hooks to ask. So it is
*ungated* (:attr:`~exomonad.runtimes.Runtime.gated` false), and an ungated worker starts
only under the sandbox (``[workers] sandbox = "bwrap"``: its worktree is all it may
write, ``.exomonad/`` is hidden) or with the user's explicit ``[workers] allow_ungated =
true``; ``docs/guarantees.md`` says what each leaves open. Names ``command`` (the older
spelling, in teammate routes and ``worker start --runtime``) mean this runtime.

>>> TERMINAL.gated, TERMINAL.worker_command, TERMINAL.ready_marker
(False, None, None)
"""

from __future__ import annotations

from exomonad.runtimes.base import Runtime

__all__ = ["TERMINAL", "TerminalAgent"]


class TerminalAgent(Runtime):
    """A terminal agent with no hooks and no MCP client; it runs the command it is given."""

    name = "terminal"
    title = "terminal agent"
    aliases = ("command",)
    gated = False


TERMINAL = TerminalAgent()
