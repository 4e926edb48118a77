"""Where a program the classifier does not model runs, and which paths it is given.

A program the classifier knows nothing about (``make``, ``npm``, ``gcc``, ``python3
tool.py``, a formatter) writes what it wants, relative to where it runs or where its
arguments point. For an agent with a worktree that is fine inside it. Found probing as a
worker (a third round), each allowed and measured: ``cd ../.. && make`` ran the lead's
Makefile in the lead's checkout, ``gcc a.c -o ../../.git/hooks/pre-commit`` planted a
hook the lead's ``git commit`` ran, ``cpp -P a ../../README.md`` and ``xxd -r d
../../.git/config`` rewrote the lead's files, ``yq -i ... ~/.claude/settings.json``
could turn the lead's hooks off. Now such a program is Unknown (a person judges it) when
it runs outside the worktree (or where the command line cannot tell), or when an
argument names a path outside it that is not a system directory (``/usr``, ``/tmp``...).
Programs that write nothing of their own (``ls``, ``echo``, ``pwd``...) keep running
anywhere.

>>> from exomonad.policy.shell_lex import Word
>>> def judge(argv, cwd="/p/.worktrees/w1"):
...     words = [Word(w) for w in argv]
...     return type(runs(argv[0], words[1:], tuple(argv), cwd, "/p/.worktrees/w1")[-1]).__name__
>>> judge(["make"]), judge(["make"], "/p"), judge(["ls"], "/p")
('Shell', 'Unknown', 'Shell')
>>> judge(["gcc", "-o", "../../x", "a.c"]), judge(["gcc", "-I/usr/include", "a.c"])
('Unknown', 'Shell')
"""

from __future__ import annotations

import posixpath

from exomonad.policy.actions import Action, Shell, Unknown
from exomonad.policy.shell_env import is_within
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_parse import resolve_path

__all__ = ["QUIET", "runs", "sets_user_config"]

#: Programs and builtins that write nothing of their own wherever they run.
QUIET = frozenset(
    {"echo", "printf", "true", "false", "test", "[", "[[", "pwd", "ls", "which", "type",
     "command", "date", "whoami", "id", "uname", "hostname", "sleep", "basename", "dirname",
     "realpath", "readlink", "stat", "du", "df", "file", "tree", "exit", "return", "cd",
     "pushd", "popd", "dirs", "export", "set", "shopt", "unset", "alias", "unalias", "read",
     ":", "trap", "hash", "wait", "jobs", "kill", "umask", "ulimit", "times", "local",
     "declare", "typeset", "readonly", "let", "shift", "break", "continue", "getopts",
     "nproc", "tty", "env", "printenv", "groups", "logname", "locale", "seq", "yes",
     "expr", "bc", "factor", "cal", "uptime", "free", "ps", "pgrep", "lsof", "lsattr",
     "getfacl", "getfattr", "whereis", "man", "help"}
)  # fmt: skip
#: Directories a program is given as an argument without writing ExoMonad's concern:
#: the system's (headers, libraries, interpreters), devices, and scratch space.
SYSTEM_PREFIXES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt",
                   "/dev", "/proc", "/sys", "/tmp", "/var/tmp", "/nix", "/snap",
                   "/run")  # fmt: skip


def runs(name: str, args: list[Word], full: tuple[str, ...], cwd: str | None,
         worktree: str | None, privileged: bool = False, *,
         modelled: bool = False) -> list[Action]:  # fmt: skip
    """``[Shell(...)]`` for a program whose own writes the classifier does not know,
    and an :class:`Unknown` beside it when it runs outside ``worktree`` (None: the agent
    has none, e.g. the lead) or, unless ``modelled`` (its reads and writes of its
    arguments are judged already), names a path outside it. The Shell stays, so the
    rules on commands (control commands, signals) still deny."""
    shell: list[Action] = [Shell(full, cwd, privileged)]
    command = " ".join(full)
    if worktree is None or name in QUIET:
        return shell
    if sets_user_config(name, [w.text for w in args]):
        return [*shell, Unknown(f"{command} (changes the user's configuration)")]
    if cwd is None or not is_within(cwd, worktree):
        where = cwd or "a directory the command line does not tell"
        return [*shell, Unknown(f"{command} (runs in {where}, outside the worktree)")]
    outside = [] if modelled else [p for p in (_path(w, cwd) for w in args) if p]
    outside = [p for p in outside if not _fine(p, worktree)]
    if outside:
        return [*shell, Unknown(f"{command} (names {outside[0]}, outside the worktree)")]
    return shell


#: Package managers whose ``config`` (or ``set``) writes the user's configuration, which
#: every later run of them reads (found probing: ``npm config set script-shell X`` made
#: every later ``npm test`` of any project run X).
_CONFIGURED = frozenset({"npm", "pnpm", "yarn", "pip", "pip3", "poetry", "pdm", "conda"})
_READ_ONLY_CONFIG = frozenset({"get", "list", "ls", "show", "debug", "--help", "-h"})


def sets_user_config(name: str, texts: list[str]) -> bool:
    """``npm config set ...``, ``npm set ...``, ``pip config set ...``, ``yarn config
    set``, ``poetry config KEY VALUE``: anything but reading the configuration.

    >>> sets_user_config("npm", ["config", "get", "x"]), sets_user_config("npm", ["set", "a=b"])
    (False, True)
    """
    words = [t for t in texts if not t.startswith("-")]
    if name not in _CONFIGURED or not words:
        return False
    if words[0] == "set" and name in ("npm", "pnpm", "yarn"):
        return True
    if words[0] != "config":
        return False
    if name == "poetry":
        return len(words) > 2 or "--unset" in texts
    return len(words) > 1 and words[1] not in _READ_ONLY_CONFIG


def _path(word: Word, cwd: str) -> str | None:
    """The path an argument names when it looks like one (``../x``, ``/abs``,
    ``--opt=../x``, ``-o../x``), else None."""
    text = word.text
    if text.startswith("-") and "=" in text:
        text = text.split("=", 1)[1]
    elif text.startswith("-") and len(text) > 2 and text[2] in "./~":
        text = text[2:]  # -o../x, -I/usr/include
    if not (text.startswith(("/", "..")) or "/../" in text):
        return None
    return resolve_path(cwd, Word(text, word.dynamic, word.quoted, (), word.glob))


def _fine(path: str, worktree: str) -> bool:
    return (
        is_within(path, worktree)
        or any(path == p or path.startswith(p + "/") for p in SYSTEM_PREFIXES)
        or posixpath.basename(path) == ""
    )
