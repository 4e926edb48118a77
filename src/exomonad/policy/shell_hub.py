"""``hub``, GitHub's older CLI: git's commands are git's, its own are the forge's.

hub runs git with every command it does not know itself, so ``hub push`` is ``git push``.
Found probing as a worker (a sixth round): ``hub push --no-verify origin HEAD:main``
was allowed, as an unmodelled program, and pushed to ``main`` past the pre-push gate
(which ``--no-verify`` skips). Its own commands: ``pull-request`` opens a pull request,
``release create`` publishes, ``api`` with a method or fields writes, ``create``,
``delete``, ``fork``, ``gist`` and ``sync`` change the forge or move local branches
(``sync`` fast-forwards ``main``): each is asked, as ``gh``'s are.

>>> from exomonad.policy.shell_env import ShellEnv
>>> hub([Word(w) for w in "push --no-verify origin HEAD:main".split()], "/w", ShellEnv())
[GitPush(remote='origin', branch='main', force=False, lease=False, repo='/w')]
>>> hub([Word("pull-request")], "/w", ShellEnv())
[CreatePR(base=None, head=None)]
"""

from __future__ import annotations

from exomonad.policy.actions import Action, CreatePR, Deploy, Shell, Unknown
from exomonad.policy.shell_env import ShellEnv
from exomonad.policy.shell_lex import Word
from exomonad.policy.vcs import git

__all__ = ["hub"]

#: hub's own commands that change the forge or move local branches.
_ASKED = frozenset({"create", "delete", "fork", "gist", "sync"})
#: hub's own commands that only read from the forge (``pr checkout`` checks out as git
#: would, in the worktree; ``gh pr checkout`` is the same).
_READS = frozenset({"browse", "compare", "ci-status", "issue", "pr"})
#: ``hub api``'s options that make it write.
_API_WRITES = ("-X", "--method", "-F", "--field", "-f", "--raw-field", "--input")


def hub(args: list[Word], cwd: str | None, env: ShellEnv) -> list[Action]:
    """Actions for ``hub ARGS``."""
    texts = tuple(w.text for w in args)
    shell: list[Action] = [Shell(("hub", *texts), cwd)]
    i = 0
    while i < len(args) and args[i].text.startswith("-"):  # git's -C DIR, -c K=V...
        i += 2 if args[i].text in ("-C", "-c") else 1
    if i >= len(args) or args[i].dynamic or args[i].glob:
        return git(args, cwd, env)
    sub, rest = args[i].text, [w.text for w in args[i + 1 :]]
    if sub == "pull-request":
        return [CreatePR()]
    if sub == "release" and rest[:1] and rest[0] in ("create", "edit", "delete"):
        return [Deploy("hub", f"release {rest[0]}")]
    if sub == "api":
        writes = any(t.startswith(_API_WRITES) for t in rest)
        return [Unknown("hub " + " ".join(texts))] if writes else shell
    if sub in _ASKED:
        return [Unknown("hub " + " ".join(texts))]
    if sub in _READS:
        return shell
    return git(args, cwd, env)
