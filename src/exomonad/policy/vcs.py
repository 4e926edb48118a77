"""Classify ``git`` and ``gh`` command lines into typed actions.

>>> from exomonad.policy.shell_lex import Word
>>> git([Word(t) for t in "-C sub push -f origin HEAD:main".split()], "/w", ShellEnv())
[GitPush(remote='origin', branch='main', force=True, lease=False, repo='/w/sub')]
>>> gh([Word(t) for t in "pr merge 12 --squash".split()], "/w", ShellEnv())
[MergePR(number=12)]
"""

from __future__ import annotations

import re

from exomonad.policy.actions import (
    Action,
    CloseIssue,
    ClosePR,
    CreatePR,
    DeleteBranch,
    Deploy,
    GitCommit,
    GitPush,
    MergePR,
    Shell,
    Unknown,
)
from exomonad.policy.shell_env import ShellEnv, scan_options
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_parse import resolve_path

__all__ = ["gh", "git"]

_GIT_GLOBAL_WITH_ARG = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                                  "--config-env", "--super-prefix", "--exec-path"})
_PUSH_WITH_ARG = frozenset({"-o", "--push-option", "--repo", "--receive-pack", "--exec"})
#: Subcommands after which the checked-out branch is no longer the one we were told.
_BRANCH_MOVERS = frozenset({"checkout", "switch", "bisect"})
_GH_WITH_ARG = frozenset({"-R", "--repo", "-B", "--base", "-H", "--head", "-t", "--title",
                          "-b", "--body", "-F", "--body-file", "-a", "--assignee", "-l",
                          "--label", "-m", "--milestone", "-p", "--project", "-r",
                          "--reviewer", "-T", "--template", "-c", "--comment", "--reason",
                          "--subject", "-X", "--method", "-f", "--field", "--raw-field",
                          "--input", "-q", "--jq", "--hostname", "-A", "--author-email",
                          "--match-head-commit", "--notes", "-n", "--notes-file"})
_NUMBER = re.compile(r"(?:^#?|/(?:pull|issues)/)(\d+)/?$")


def _texts(words: list[Word]) -> tuple[str, ...]:
    return tuple(w.text for w in words)


def _number(word: Word | None) -> int | None:
    if word is None or word.dynamic:
        return None
    match = _NUMBER.search(word.text)
    return int(match.group(1)) if match else None


def _short_ref(ref: str) -> str:
    return ref.removeprefix("refs/heads/")


def git(args: list[Word], cwd: str | None, env: ShellEnv) -> list[Action]:
    """Actions for ``git ARGS`` run in ``cwd``."""
    repo, i = cwd, 0
    while i < len(args) and args[i].text.startswith("-"):
        opt = args[i].text
        value = args[i + 1] if i + 1 < len(args) else None
        if opt == "-C" and value is not None:
            repo = resolve_path(repo, value)
        elif opt in ("-c", "--config-env") and value is not None and (
                value.dynamic or value.text.lower().startswith("alias.")):
            return [Unknown("git " + " ".join(_texts(args)))]  # an alias defined inline
        elif opt.startswith(("--git-dir=", "--work-tree=")) or opt in ("--git-dir",
                                                                         "--work-tree"):
            repo = None  # another repository: whose branch it is we cannot tell
        i += 2 if opt in _GIT_GLOBAL_WITH_ARG else 1
    if i >= len(args):
        return [Shell(("git", *_texts(args)), cwd)]
    sub, rest = args[i], args[i + 1 :]
    if sub.dynamic:
        return [Unknown("git " + " ".join(_texts(args)))]
    if sub.text == "commit":
        return [GitCommit(repo, amend="--amend" in _texts(rest))]
    if sub.text == "push":
        return _push(rest, repo, env, cwd)
    if sub.text == "branch":
        deleted = _branch_delete(rest)
        if deleted is not None:
            return deleted
    elif sub.text in _BRANCH_MOVERS:
        env.branch_moved = True
    return [Shell(("git", *_texts(args)), repo)]


def _push(args: list[Word], repo: str | None, env: ShellEnv, cwd: str | None) -> list[Action]:
    positionals, opts = scan_options(args, _PUSH_WITH_ARG)
    flags: set[str] = set()
    for key in opts:
        if key.startswith("--"):
            flags.add(key)
        else:
            flags.update(f"-{c}" for c in key[1:])
    if flags & {"-n", "--dry-run"}:
        return [Shell(("git", "push", *_texts(args)), cwd)]
    lease = any(k.startswith("--force-with-lease") for k in flags)
    force = lease or bool(flags & {"-f", "--force", "--mirror"})
    delete = bool(flags & {"-d", "--delete"})
    remote_word = opts.get("--repo", [None])[-1] or (positionals[0] if positionals else None)
    remote = None if remote_word is None or remote_word.dynamic else remote_word.text
    refspecs = positionals[1:] if positionals else []
    out: list[Action] = []
    if "--prune" in flags or "--mirror" in flags:
        out.append(DeleteBranch(None, remote, force=True))
    if not refspecs:
        if delete:
            out.append(DeleteBranch(None, remote, force=True))
        else:
            every = flags & {"--all", "--branches", "--mirror", "--tags"}
            branch = None if every else env.branch_in(repo)
            out.append(GitPush(remote, branch, force, lease, repo))
        return out
    for ref in refspecs:
        text = ref.text
        plus = text.startswith("+")
        src, colon, dst = text.lstrip("+").partition(":")
        if ref.dynamic:
            name = None
        elif colon:
            name = _short_ref(dst) if dst else None
        else:
            name = _short_ref(src)
        if name in ("HEAD", "@") or (not colon and src in ("HEAD", "@")):
            name = env.branch_in(repo)
        if name is not None and any(c in name for c in "*?["):
            name = None  # a pattern refspec: several branches, possibly protected ones
        if delete or (colon and not src and not ref.dynamic):
            out.append(DeleteBranch(name, remote, force=True))
        else:
            out.append(GitPush(remote, name, force or plus, lease, repo))
    return out


def _branch_delete(args: list[Word]) -> list[Action] | None:
    positionals, opts = scan_options(args, frozenset({"-u", "--set-upstream-to", "-t",
                                                      "--track"}))
    flags: set[str] = set()
    for key in opts:
        flags.update([key] if key.startswith("--") else [f"-{c}" for c in key[1:]])
    if not flags & {"-d", "-D", "--delete"}:
        return None
    force = bool(flags & {"-D", "-f", "--force"})
    remote = "<remote-tracking>" if flags & {"-r", "--remotes"} else None
    names = [None if w.dynamic else w.text for w in positionals] or [None]
    return [DeleteBranch(name, remote, force) for name in names]


def gh(args: list[Word], cwd: str | None, env: ShellEnv) -> list[Action]:
    """Actions for ``gh ARGS`` (GitHub CLI)."""
    del env
    positionals, opts = scan_options(args, _GH_WITH_ARG)
    words = [w.text for w in positionals]
    shell: list[Action] = [Shell(("gh", *_texts(args)), cwd)]
    if any(w.dynamic for w in positionals[:2]):
        return [Unknown("gh " + " ".join(_texts(args)))]
    if len(words) < 2:
        return shell
    group, verb = words[0], words[1]
    target = positionals[2] if len(positionals) > 2 else None

    def opt(*names: str) -> str | None:
        for name in names:
            for value in opts.get(name, []):
                return None if value is None or value.dynamic else value.text
        return None

    if group == "pr":
        if verb in ("create", "new"):
            return [CreatePR(opt("-B", "--base"), opt("-H", "--head"))]
        if verb == "merge":
            return [MergePR(_number(target))]
        if verb == "close":
            return [ClosePR(_number(target))]
    elif group == "issue" and verb in ("close", "delete"):
        return [CloseIssue(_number(target))]
    elif group == "api":
        method = (opt("-X", "--method") or "").upper()
        writes = any(k in opts for k in ("-f", "-F", "--field", "--raw-field", "--input"))
        if method not in ("", "GET") or (writes and method != "GET"):
            return [Unknown("gh " + " ".join(_texts(args)))]
    elif group == "release" and verb in ("create", "upload", "delete", "edit"):
        return [Deploy("gh", f"release {verb}")]
    elif group == "workflow" and verb == "run":
        return [Deploy("gh", "workflow run")]
    elif (group == "repo" and verb in ("delete", "archive", "rename", "edit")) or (
            group in ("secret", "variable") and verb in ("set", "delete", "remove")):
        return [Unknown("gh " + " ".join(_texts(args)))]
    return shell
