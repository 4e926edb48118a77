"""``exomonad git-gate pre-push REMOTE URL``: the second gate, in git itself.

Every worktree ExoMonad makes for a worker has its own ``core.hooksPath``; its
``pre-push`` runs this command, so a push meets the policy even when the agent's own
hook could not see it (a script that ends in ``git push``, an alias, a program that runs
git). git passes the remote and its URL as arguments and one line per ref on stdin
(``<local ref> <local sha> <remote ref> <remote sha>``). Each line becomes the push it
is, spelled plainly (``git push REMOTE +SHA:BRANCH`` for a push that is not a fast
forward, ``git push REMOTE :BRANCH`` for a deletion), and the server judges it as a tool
call of the pushing agent (its ``EXOMONAD_TOKEN``), escalations and audit included,
by the server of the project the token belongs to (``$EXOMONAD_DIR``, given with it): a
push with the token but without that variable is refused, never judged by a state dir
found from the repository it runs in, which the agent may have made
(:func:`exomonad.state.agent_state_dir`).

Exit 0 lets the push go, anything else stops it (git prints our stderr). A push by a
person (no agent among its parents, no token) is not ours to judge. A push carrying a
token with no server running is refused: the agent's server is gone (an agent that
kills it must not push unjudged). Every other fault stops the push.

The worktree's config alone is not enough: Gemini CLI runs every shell command with
``GIT_CONFIG_COUNT`` entries that set ``core.hooksPath`` to nothing (hooks off). So a
worker's environment (:func:`worker_env`) also names the gate in
``GIT_CONFIG_PARAMETERS``, which git reads after ``GIT_CONFIG_COUNT`` and which Gemini
passes on; the policy treats taking it away (``unset``, ``env -u``) as unknown.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["main", "push_commands", "worker_env"]

ZERO = "0" * 40


def _is_ancestor(old: str, new: str, cwd: str) -> bool:
    done = subprocess.run(["git", "-C", cwd, "merge-base", "--is-ancestor", old, new],
                          capture_output=True, timeout=30, check=False)  # fmt: skip
    return done.returncode == 0  # 1: not an ancestor; 128: unknown object, so unknown


def push_commands(remote: str, lines: list[str], cwd: str) -> list[str]:
    """The plain ``git push`` each pre-push stdin line amounts to.

    >>> push_commands("origin", [f"refs/heads/a {'1' * 40} refs/heads/main {ZERO}"], "/")
    ['git push origin 1111111111111111111111111111111111111111:main']
    >>> push_commands("origin", [f"(delete) {ZERO} refs/heads/old {'2' * 40}"], "/")
    ['git push origin :old']
    """
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) != 4:
            raise ValueError(f"unexpected pre-push line {line!r}")
        _, local_sha, remote_ref, remote_sha = parts
        dest = remote_ref.removeprefix("refs/heads/")
        if set(local_sha) == {"0"}:
            refspec = f":{dest}"
        elif set(remote_sha) == {"0"} or _is_ancestor(remote_sha, local_sha, cwd):
            refspec = f"{local_sha}:{dest}"
        else:  # rewrites the remote branch (or we cannot tell): a forced push
            refspec = f"+{local_sha}:{dest}"
        out.append(f"git push {shlex.quote(remote)} {shlex.quote(refspec)}")
    return out


def _sq(text: str) -> str:
    """``text`` quoted as git quotes ``GIT_CONFIG_PARAMETERS`` entries."""
    return "'" + text.replace("'", "'\\''").replace("!", "'\\!'") + "'"


def worker_env(*, token: str, name: str, team: str, state_dir: str, hooks: str | None,
               inherited: Mapping[str, str] | None = None) -> dict[str, str]:  # fmt: skip
    """What ExoMonad adds to a worker's environment: its identity, and (with a worktree)
    the git gate in ``GIT_CONFIG_PARAMETERS``, after any ``inherited`` entries.

    >>> env = worker_env(token="t", name="w1", team="x", state_dir="/p/.exomonad",
    ...                  hooks="/p/.git/exomonad-hooks")
    >>> env["EXOMONAD_TOKEN"], env["GIT_CONFIG_PARAMETERS"]
    ('t', "'core.hooksPath'='/p/.git/exomonad-hooks'")
    >>> worker_env(token="t", name="w", team="x", state_dir="/s", hooks="/it's",
    ...            inherited={"GIT_CONFIG_PARAMETERS": "'a.b'='c'"})["GIT_CONFIG_PARAMETERS"]
    "'a.b'='c' 'core.hooksPath'='/it'\\\\''s'"
    """
    env = {"EXOMONAD_TOKEN": token, "EXOMONAD_NAME": name, "EXOMONAD_TEAM": team,
           "EXOMONAD_DIR": state_dir}  # fmt: skip
    if hooks is not None:
        earlier = (inherited or {}).get("GIT_CONFIG_PARAMETERS", "").strip()
        gate = f"{_sq('core.hooksPath')}={_sq(hooks)}"
        env["GIT_CONFIG_PARAMETERS"] = f"{earlier} {gate}".strip()
    return env


def _gate(argv: list[str], stdin: str) -> tuple[bool, str]:
    from exomonad.ancestry import agent_session
    from exomonad.client import ServerClient, ServerNotRunningError
    from exomonad.hookclient import NO_SERVER_FOR_AGENT
    from exomonad.state import agent_state_dir

    if len(argv) < 2 or argv[0] != "pre-push":
        return False, "usage: exomonad git-gate pre-push REMOTE [URL]"
    remote, cwd = argv[1], os.getcwd()
    token = os.environ.get("EXOMONAD_TOKEN")
    if not token:
        inside = agent_session()
        if inside is None:
            return True, ""  # a person's push: not ours to judge
        return False, f"an agent's push without its ExoMonad identity ({inside})"
    commands = push_commands(remote, [x for x in stdin.splitlines() if x.strip()], cwd)
    state = agent_state_dir()  # the token's $EXOMONAD_DIR (StateDirError without it)
    if state is None:  # not with a token; for the type
        return False, "no ExoMonad project for this push"
    client = ServerClient(Path(state), token=token, timeout=600)
    for command in commands:
        try:
            answer: Any = client.call("POST", "/gate/pre-push", {"command": command, "cwd": cwd})
        except ServerNotRunningError:
            return False, f"{command}: {NO_SERVER_FOR_AGENT}"
        if not isinstance(answer, dict) or answer.get("decision") != "allow":
            why = answer.get("reason") if isinstance(answer, dict) else answer
            return False, f"{command}: {why}"
    return True, ""


def main(argv: list[str]) -> int:
    """Run the gate; 0 lets the push go."""
    try:
        ok, why = _gate(argv, sys.stdin.read())
    except Exception as exc:  # our own fault never lets a push through
        ok, why = False, f"{type(exc).__name__}: {exc}"
    if not ok:
        sys.stderr.write(f"exomonad: push refused by the project's policy: {why}\n")
        return 1
    return 0
