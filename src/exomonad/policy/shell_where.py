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

>>> from exomonad.policy.shell_lex import ARITH_OPEN, Word
>>> def judge(argv, cwd="/p/.worktrees/w1"):
...     words = [Word(w) for w in argv]
...     return type(runs(argv[0], words[1:], tuple(argv), cwd, "/p/.worktrees/w1")[-1]).__name__
>>> judge(["make"]), judge(["make"], "/p"), judge(["ls"], "/p")
('Shell', 'Unknown', 'Shell')
>>> judge(["gcc", "-o", "../../x", "a.c"]), judge(["gcc", "-I/usr/include", "a.c"])
('Unknown', 'Shell')
"""

from __future__ import annotations

import re

from exomonad.policy.actions import Action, Shell, Unknown
from exomonad.policy.shell_containers import escapes, host_side
from exomonad.policy.shell_env import in_a_row, is_within
from exomonad.policy.shell_lex import ARITH_OPEN, Word
from exomonad.policy.shell_network import named_hosts
from exomonad.policy.shell_parse import is_assignment
from exomonad.policy.shell_paths import resolve_path

__all__ = ["QUIET", "names_outside", "points_outside", "runs", "scratch", "sets_user_config"]

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
     "getfacl", "getfattr", "whereis", "man", "help", "tr", ARITH_OPEN}
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
    host = escapes(name, args, cwd)
    if host is not None:  # a person's to approve, for every role (the lead's too)
        return [*shell, Unknown(f"{command} ({host})")]
    if worktree is None or name in QUIET:
        return shell
    shell += named_hosts(name, args, cwd)  # a URL it is given: the host it reaches
    if sets_user_config(name, [w.text for w in args]):
        return [*shell, Unknown(f"{command} (changes the user's configuration)")]
    if cwd is None or not is_within(cwd, worktree):
        where = cwd or "a directory the command line does not tell"
        return [*shell, Unknown(f"{command} (runs in {where}, outside the worktree)")]
    judged, unclear = host_side(name, args, cwd)  # a container's: its mounts' sources
    outside = [] if modelled else _outside(judged, cwd, worktree)
    outside += [UNKNOWN_PATH] if unclear and not modelled else []
    if outside:
        return [*shell, Unknown(f"{command} (names {outside[0]}, outside the worktree)")]
    return shell


#: Variables that list directories a program only searches (``PATH``...), not writes.
_SEARCH_LISTS = frozenset({"PATH", "MANPATH", "INFOPATH", "CDPATH"})


def points_outside(words: list[Word], cwd: str | None, worktree: str | None) -> Unknown | None:
    """An :class:`Unknown` when an assignment among ``words`` points a variable outside
    ``worktree``: the directories programs write into follow them (found probing, a
    fourth round: ``TMPDIR=../.. mktemp`` made its file in the lead's checkout, ``HOME=
    ../.. pip install --user``, ``XDG_CACHE_HOME=``, ``CARGO_TARGET_DIR=``, ``make
    DESTDIR=../.. install``; ``PYTHONPATH=../../src`` makes Python write its caches
    there). ``PATH`` and the other search lists only choose what runs. A value of several
    words is read as options too (found probing: ``BZIP2='-k ../../README.md' bzip2 x``
    wrote ``README.md.bz2`` in the lead's checkout; ``NODE_OPTIONS``, ``*_OPTS`` and the
    like name files the same way).

    >>> wt = "/p/.worktrees/w1"
    >>> points_outside([Word("TMPDIR=../..")], wt, wt).raw
    'sets TMPDIR=../.. (names /p, outside the worktree)'
    >>> points_outside([Word("TMPDIR=/tmp"), Word("PATH=/opt/x:/root/bin")], wt, wt)
    >>> points_outside([Word("X_OPTS=-v --out=../../o")], wt, wt).raw
    'sets X_OPTS=-v --out=../../o (names /p/o, outside the worktree)'
    """
    if worktree is None:
        return None
    for word in words:
        name = word.text.partition("=")[0].rstrip("+")
        if not is_assignment(word) or name in _SEARCH_LISTS:
            continue
        value = word.text.partition("=")[2]
        options = (
            [Word(t, word.dynamic, word.quoted) for t in value.split()] if " " in value else []
        )
        outside = _outside([word, *options], cwd, worktree)
        if outside:
            return Unknown(f"sets {word.text} (names {outside[0]}, outside the worktree)")
    return None


#: A word that starts with a variable naming a directory outside any worktree.
_DIR_VAR = re.compile(r"\$(\{)?(HOME|OLDPWD)\b")
#: What an argument the shell builds at run time is said to name when it may leave.
UNKNOWN_PATH = "a path the command line does not tell"


def _outside(args: list[Word], cwd: str | None, worktree: str) -> list[str]:
    """The paths among ``args`` outside ``worktree`` that are not system directories."""
    paths = [p for w in args for p in _paths(w, cwd)]
    return [p for p in paths if not _fine(p, worktree)]


#: Package managers whose ``config`` (or ``set``) writes the user's configuration, which
#: every later run of them reads (found probing: ``npm config set script-shell X`` made
#: every later ``npm test`` of any project run X).
_CONFIGURED = frozenset({"npm", "pnpm", "yarn", "pip", "pip3", "poetry", "pdm", "conda"})
_READ_ONLY_CONFIG = frozenset({"get", "list", "ls", "show", "debug", "--help", "-h"})


#: Other programs' commands that write the user's own configuration or credentials,
#: which every later run reads (found probing, a sixth round, each allowed: ``kubectl
#: config use-context prod`` points the user's next ``kubectl apply`` elsewhere, ``docker
#: context use``, a registry login (``npm login``, ``cargo login``, ``docker login``),
#: ``npm token create``, the user's default toolchain (``pyenv global``, ``rustup
#: default``, ``nvm alias default``), ``helm repo add``, the desktop's defaults).
_USER_STATE: dict[str, tuple[tuple[str, ...], ...]] = {
    **dict.fromkeys(("npm", "pnpm"), (("login",), ("adduser",), ("logout",), ("token",),
                                      ("profile",), ("owner",))),
    "yarn": (("login",), ("logout",), ("npm", "login"), ("npm", "logout")),
    "cargo": (("login",), ("logout",), ("owner",)),
    "docker": (("login",), ("logout",), ("context", "use"), ("context", "create"),
               ("context", "update"), ("context", "rm"), ("buildx", "use")),
    "kubectl": tuple(("config", verb) for verb in (
        "use-context", "use", "set-context", "set-credentials", "set-cluster", "set",
        "unset", "delete-context", "delete-cluster", "delete-user", "rename-context")),
    "helm": (("repo", "add"), ("repo", "remove"), ("registry", "login"), ("plugin", "install")),
    "gcloud": (("auth", "login"), ("auth", "activate-service-account"), ("auth", "revoke"),
               ("auth", "application-default", "login")),
    "az": (("login",), ("logout",), ("account", "set")),
    "aws": (("sso", "login"), ("sso", "logout")),
    "pyenv": (("global",),),
    "rustup": (("default",), ("override",), ("set",)),
    "nvm": (("alias",), ("unalias",)),
    "xdg-mime": (("default",),),
    "xdg-settings": (("set",),),
    "gsettings": (("set",), ("reset",), ("reset-recursively",)),
    "dconf": (("write",), ("reset",), ("load",)),
}  # fmt: skip


def sets_user_config(name: str, texts: list[str]) -> bool:
    """``npm config set ...``, ``npm set ...``, ``pip config set ...``, ``yarn config
    set``, ``poetry config KEY VALUE``: anything but reading the configuration; the
    commands of :data:`_USER_STATE`; ``ssh-add`` but listing (it adds to, or deletes
    from, the user's agent).

    >>> sets_user_config("npm", ["config", "get", "x"]), sets_user_config("npm", ["set", "a=b"])
    (False, True)
    >>> sets_user_config("kubectl", ["config", "use-context", "prod"])
    True
    """
    words = [t for t in texts if not t.startswith("-")]
    if name == "ssh-add":
        return not texts or any(t not in ("-l", "-L") for t in texts)
    if any(in_a_row(verbs, texts) for verbs in _USER_STATE.get(name, ())):
        return True
    if name not in _CONFIGURED or not words:
        return False
    if words[0] == "set" and name in ("npm", "pnpm", "yarn"):
        return True
    if words[0] != "config":
        return False
    if name == "poetry":
        return len(words) > 2 or "--unset" in texts
    return len(words) > 1 and words[1] not in _READ_ONLY_CONFIG


def _paths(word: Word, cwd: str | None) -> list[str]:
    """The paths an argument names when it looks like one (``../x``, ``/abs``,
    ``--opt=../x``, ``-o../x``, ``NAME=../x``, each of ``PYTHONPATH=/x:/y``), else none. A
    lone ``/`` glued to an option is a separator (``-d/``, ``-F/``); as an operand it is
    the root, every project below it. A word the shell builds from ``$HOME`` or
    ``$OLDPWD`` (not an assignment's value: ``GOPATH=$HOME/go`` is the user's own), or
    that climbs (``$PWD/..``), names :data:`UNKNOWN_PATH`."""
    text, glued = word.text, False
    if text.startswith("-") and "=" in text:
        text, glued = text.split("=", 1)[1], True
    elif text.startswith("-") and len(text) > 2 and text[2] in "./~":
        text, glued = text[2:], True  # -o../x, -I/usr/include, -d/
    elif is_assignment(word):
        text = text.split("=", 1)[1]
    if word.dynamic:  # an assignment from $HOME (GOPATH=$HOME/go) is the user's own
        climbs = ".." in text.split("/")
        from_var = _DIR_VAR.match(text) and not is_assignment(word)
        known = text
        for here in _HERE:
            known = known.replace(here, "")
        computed = is_assignment(word) and _names_dir(word.text) and ("$(" in known or "`" in known)
        return [UNKNOWN_PATH] if climbs or from_var or computed else []
    found = []
    name = word.text.partition("=")[0] if is_assignment(word) else ""
    for part in text.split(":") if name.endswith(("PATH", "DIRS")) else [text]:
        if part.startswith(("/", "..")) or "/../" in part:
            path = resolve_path(cwd, Word(part, False, word.quoted, (), word.glob))
            if path is not None and not (glued and path == "/"):
                found.append(path)
            elif path is None and cwd is not None:
                found.append(UNKNOWN_PATH)  # a glob that may match ..
    return found


#: Scratch directories, where a lock file (``flock /tmp/x.lock make``) is no concern.
_SCRATCH = ("/tmp", "/var/tmp", "/run/lock", "/dev/shm")


def scratch(path: str | None, worktree: str | None) -> bool:
    """Whether ``path`` is in a scratch directory that does not hold the project.

    >>> scratch("/tmp/x.lock", "/p/w"), scratch("/tmp/p/x", "/tmp/p/w"), scratch("/p/x", "/p/w")
    (True, False, False)
    """
    if path is None or worktree is None:
        return False
    return any(is_within(path, d) for d in _SCRATCH) and _fine(path, worktree)


def names_outside(words: list[Word], cwd: str | None, worktree: str | None) -> str | None:
    """The first path among ``words`` outside ``worktree`` (not a system directory)."""
    if worktree is None:
        return None
    found = _outside(words, cwd, worktree)
    return found[0] if found else None


#: Variables that name a directory programs write into: one computed when the command
#: runs (``TMPDIR=$(echo ../..) mktemp``, found probing) is a path not known.
_DIR_NAMES = ("TMPDIR", "TMP", "TEMP", "TEMPDIR", "HOME", "DESTDIR", "PREFIX", "GNUPGHOME")
_DIR_SUFFIXES = ("_DIR", "_HOME", "PATH", "_PREFIX", "_ROOT", "_CACHE", "_FOLDER")


#: Substitutions that name the worktree or scratch space: `PYTHONPATH=$(pwd)/src`.
_HERE = ("$(pwd)", "`pwd`", "$(git rev-parse --show-toplevel)", "$(mktemp -d)", "$(mktemp)")


def _names_dir(assignment: str) -> bool:
    name = assignment.partition("=")[0].rstrip("+")
    return name in _DIR_NAMES or name.startswith("XDG_") or name.endswith(_DIR_SUFFIXES)


def _fine(path: str, worktree: str) -> bool:
    """Inside ``worktree``, or in a system directory that does not hold the project (a
    project under ``/tmp`` keeps its checkout out of what ``/tmp`` vouches for).

    >>> _fine("/tmp/x", "/p/w"), _fine("/tmp/p/README", "/tmp/p/w"), _fine("/tmp", "/tmp/p/w")
    (True, False, False)
    """
    if is_within(path, worktree):
        return True
    if is_within(worktree, path):
        return False  # an ancestor: the lead's checkout, the root
    for prefix in SYSTEM_PREFIXES:
        if is_within(path, prefix):
            top = worktree[len(prefix) :].split("/")[1] if is_within(worktree, prefix) else None
            return top is None or not is_within(path, f"{prefix}/{top}")
    return False
