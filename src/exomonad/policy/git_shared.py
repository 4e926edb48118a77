"""What a ``git`` command changes in what a linked worktree shares with the lead's checkout
and every other worker's: the repository itself (``git init``), its hooks (``git lfs``),
its objects, refs, tags, stash list and config.

Found as a worker (a sixth round), each allowed and reproduced for real: ``git init
--template=./tpl`` copied the template's hooks into the common ``.git`` (the lead's next
commit ran them), ``git init --separate-git-dir=./sep`` moved the lead's ``.git`` into
the worker's worktree, ``git lfs update --force`` replaced ExoMonad's ``pre-push`` gate,
``git repack -a -d`` deleted the lead's dropped stash, ``git checkout -B feature-x`` and
``git fetch . +HEAD:refs/tags/v1.0`` moved the lead's branch and tag, ``git fetch
--prune-tags`` deleted its tags, ``git stash pop stash@{1}`` dropped its stash entry.
Later (a round on linked worktrees): ``cp -r ../w2 fake`` (a copy of another worker's
``.git`` file), ``git worktree repair fake`` (its ``gitdir`` link rewritten to name
``fake``), ``git worktree remove -f fake`` deleted worker w2's git dir, its index and
``HEAD`` with it: its checkout was no repository any more.

>>> from exomonad.policy.shell_lex import Word
>>> env = ShellEnv("/p/w", "exo/w1", "/p/w")
>>> shares_a_write("init", [Word("--template=t")], "/p/w", "/p/w", env)
True
>>> shares_a_write("init", [Word("--template=t"), Word("new")], "/p/w", "/p/w", env)
False
>>> shares_a_write("lfs", [Word("install")], "/p/w", "/p/w", env)
True
"""

from __future__ import annotations

import os
import posixpath

from exomonad.policy.git_home import local_branch
from exomonad.policy.git_operands import operands
from exomonad.policy.git_plumbing import long_option
from exomonad.policy.git_writes import created_names, onto_protected
from exomonad.policy.shell_env import ShellEnv, is_within, nested_repo, short_cluster
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_paths import resolve_path

__all__ = ["attaches_others", "forced_onto_others", "shares_a_write"]

#: ``git lfs`` subcommands that only read (``track``/``untrack`` install hooks in the
#: common ``.git``; ``logs clear`` deletes the shared logs).
_LFS_READS = frozenset({"ls-files", "status", "env", "version", "logs", "help"})
#: ``git init`` options that change nothing of a repository it re-initialises.
_INIT_QUIET = frozenset({"-q", "--quiet"})


def shares_a_write(sub: str, rest: list[Word], named: str | None, repo: str | None,
                   env: ShellEnv) -> bool:  # fmt: skip
    """Whether ``git SUB REST`` (run in ``named``; ``repo`` None after ``--git-dir`` or
    ``--work-tree``) rewrites what the checkouts of one repository share (see the
    module's doc) in a way no other rule sees."""
    if sub == "init":
        return _reinits(rest, named, repo, env)
    if sub == "lfs":
        return _lfs_writes(rest)
    if sub == "repack":  # -d: packs no longer needed deleted, unreachable objects with them
        return any(short_cluster(w.text, "d") or long_option(w.text, ("--delete",)) for w in rest)
    if sub in ("fetch", "pull"):
        return _fetch_moves_shared(rest)
    if sub == "stash" and _stash_edits_shared(rest):
        return True
    if sub == "rebase" and env.worktree is not None and _updates_refs(rest):
        return True
    if sub == "worktree" and env.worktree is not None and _repairs(rest):
        return True
    return forced_onto_others(sub, rest, env) or attaches_others(sub, rest, env)


def attaches_others(sub: str, rest: list[Word], env: ShellEnv) -> bool:
    """For an agent with a worktree: a local branch that exists and is not its own
    checked out (``git checkout feature-x``, ``switch``, ``rebase X feature-x``,
    ``worktree add sub feature-x``, ``bisect reset feature-x``, which checks out ``main``
    too), renamed (``branch -m feature-x x``) or shadowed by a tag (``git tag
    feature-x``): its next ``reset --hard``, commit or ``git branch
    feature-x`` moves the lead's branch. Found as a worker (a seventh round): ``git
    checkout feature-x && git reset --hard exo/w1`` and ``git branch -m feature-x x &&
    git branch feature-x exo/w1`` each reset the lead's ``feature-x``, as ``checkout -B``
    (refused) did. Also a new branch named as an existing tag (``git branch v1.0
    exo/w1``: the lead's ``git checkout v1.0`` took the worker's commit). Whether the
    name exists is read from the repository on disk."""
    home = env.worktree
    if home is None:
        return False

    def others(name: Word | None) -> bool:
        if name is None or name.dynamic or name.glob or _own(name, env.branch):
            return False
        return local_branch(home, name.text)

    if onto_protected(sub, rest, others):
        return True
    if sub == "bisect":  # bisect reset X: X checked out, attached if a branch
        pos = [w for w in rest if not w.text.startswith("-")]
        if pos[:1] and pos[0].text == "reset" and len(pos) > 1:
            return others(pos[1]) or env.protects(pos[1])
    return any(w is not None and not w.dynamic and local_branch(home, w.text, "tags")
               for w in created_names(sub, rest))  # fmt: skip


def _updates_refs(rest: list[Word]) -> bool:
    """``git rebase --update-refs`` (any prefix, the last of it and ``--no-update-refs``
    winning): every local branch pointing into the rebased commits is moved, the lead's
    too (found as a worker: ``git rebase --update-refs main`` moved the lead's ``review``,
    made at the worker's commit)."""
    on = False
    for w in rest:
        if w.text == "--":
            break
        if long_option(w.text, ("--update-refs",)):
            on = True
        elif long_option(w.text, ("--no-update-refs",)):
            on = False
    return on


def _repairs(rest: list[Word]) -> bool:
    """``git worktree repair PATH...``: it rewrites the ``gitdir`` link of whichever
    worktree each PATH's ``.git`` names (another worker's, copied there). Without PATH it
    repairs the checkout it runs in, whose ``.git`` git's rules on the repository
    (``git_home``) have judged."""
    verbs = operands("worktree", rest)
    return len(verbs) > 1 and verbs[0].text == "repair"


def _reinits(rest: list[Word], named: str | None, repo: str | None, env: ShellEnv) -> bool:
    """``git init`` with an option (``--template``, ``--separate-git-dir``, ``--shared``,
    ``-b``...) on a repository that exists: the worktree's own (no path, ``.``), one
    holding a ``.git`` or one a command earlier in the line may have made. A new nested
    repository (``git init --template=t new``) is its own."""
    opts = [w.text for w in rest if w.text.startswith("-") and w.text != "--"]
    if all(o in _INIT_QUIET for o in opts):
        return False  # plain re-init: copies only what a template never set here lacks
    if repo is None or named is None:
        return True  # --git-dir, --work-tree or a directory not known
    paths = operands("init", rest)  # --template DIR, -qb NAME: values, not the path
    target = resolve_path(named, paths[0]) if paths else named
    return target is None or _existing(target, env)


def _existing(target: str, env: ShellEnv) -> bool:
    """``target`` is (or may be, by the time git runs) a repository's work tree."""
    home = env.worktree
    if home is not None and is_within(home, target):
        return True  # the worktree itself, or a directory above it
    if home is not None and is_within(target, home):
        return bool(env.commands_seen) or nested_repo(target, posixpath.normpath(home))
    return bool(env.commands_seen) or os.path.lexists(posixpath.join(target, ".git"))


def _lfs_writes(rest: list[Word]) -> bool:
    """``git lfs VERB``: anything but reading (``ls-files``, ``status``, ``env``...)."""
    if any(w.dynamic or w.glob for w in rest):
        return True
    verbs = [w.text for w in rest if not w.text.startswith("-")]
    first = next((k for k, w in enumerate(rest) if not w.text.startswith("-")), len(rest))
    if any(w.text not in ("--version", "--help", "-h") for w in rest[:first]):
        return True  # an option before the verb: not one git-lfs documents
    if not verbs:
        return False
    if verbs[0] == "logs":
        return len(verbs) > 1 and verbs[1] not in ("last", "show")  # clear, boomtown
    return verbs[0] not in _LFS_READS


def _local_source(text: str) -> bool:
    """A ``fetch``/``pull`` repository that is a local path (``.``, ``../..``, ``/p``,
    ``file://``), whose refs the worker chose: not a remote's name or URL."""
    return text in (".", "..") or text.startswith(("/", "./", "../", "~", "file:"))


def _fetch_moves_shared(rest: list[Word]) -> bool:
    """``git fetch``/``pull``: a refspec into ``refs/tags/`` or ``refs/remotes/`` that is
    forced (``+``, ``-f``) or whose source is the local repository (``fetch .
    +HEAD:refs/tags/v1.0`` moved the lead's tag); ``--prune-tags`` (the lead's local
    tags not on the remote, deleted). A local branch destination: ``moves_a_branch``."""
    texts = [w.text for w in rest]
    if any(short_cluster(t, "P") or (long_option(t, ("--prune-tags",)) and t != "--prune")
           for t in texts):  # fmt: skip
        return True  # -P, --prune-tags, --prune-t (git takes a unique prefix)
    forced = any(short_cluster(t, "f") or long_option(t, ("--force",)) for t in texts)
    positionals = [w for w in rest if not w.text.startswith("-")]
    local = any(_local_source(w.text) for w in positionals)  # `-o X .`: an option's value
    for w in positionals:
        plus = w.text.startswith("+")
        _src, colon, dst = w.text.lstrip("+").partition(":")
        shared = dst.startswith(("refs/tags/", "refs/remotes/"))
        if colon and shared and (plus or forced or local):
            return True
    return False


def _stash_edits_shared(rest: list[Word]) -> bool:
    """``git stash store`` (an entry every checkout's ``stash pop`` takes next) and
    ``pop``/``branch`` naming an entry below the top: one stash list for every checkout,
    so it is the lead's entry the worker drops. ``apply`` of one drops nothing."""
    verbs = [w.text for w in rest if not w.text.startswith("-")]
    if verbs[:1] == ["store"]:
        return True
    entry = verbs[1:2] if verbs[:1] == ["pop"] else verbs[2:3] if verbs[:1] == ["branch"] else []
    return bool(entry) and entry[0] not in ("0", "stash@{0}")


#: Per subcommand: the options that force-create or force-rename onto a branch and, for
#: their values, the short letters and long names (abbreviations read as git does).
_FORCED = {"checkout": ("B", ()), "switch": ("C", ("--force-create",)),
           "worktree": ("B", ()), "branch": ("MC", ())}  # fmt: skip


def forced_onto_others(sub: str, rest: list[Word], env: ShellEnv) -> bool:
    """For an agent with a worktree: ``checkout -B``, ``switch -C``, ``worktree add -B``,
    ``branch -M``/``-C`` onto a name other than its own branch (or one below it,
    ``exo/w1/x``): the lead's ``feature-x`` or another worker's ``exo/w2`` may exist, and
    is then reset to the worker's commit (found probing: ``git checkout -B feature-x``
    moved the lead's branch). Whether it exists cannot be told from the command line."""
    if env.worktree is None or sub not in _FORCED:
        return False
    letters, longs = _FORCED[sub]
    targets: list[Word | None] = []
    words = [w for w in rest if w.text != "--"]
    for k, w in enumerate(words):
        text = w.text
        nxt = words[k + 1] if k + 1 < len(words) else None
        name, eq, value = text.partition("=")
        if text.startswith("--") and long_option(name, longs) and name != "--force":
            targets.append(Word(value, w.dynamic, w.quoted) if eq else nxt)
        elif text[:1] == "-" and text[1:2] != "-":
            at = next((i for i, c in enumerate(text[1:], 1) if c in letters), None)
            if at is not None and sub != "branch":
                targets.append(Word(text[at + 1 :], w.dynamic, w.quoted) if text[at + 1 :]
                               else nxt)  # fmt: skip
            elif at is not None:
                pos = [p for p in words if not p.text.startswith("-")]
                targets.append(pos[1] if len(pos) > 1 else pos[0] if pos else None)
    return any(not _own(t, env.branch) for t in targets)


def _own(name: Word | None, own: str | None) -> bool:
    """``name`` is the agent's own branch or below it (``exo/w1/x`` cannot exist beside
    ``exo/w1``: git keeps no branch inside another's name)."""
    if name is None or name.dynamic or name.glob or own is None:
        return False
    text = name.text.removeprefix("refs/heads/")
    return text == own or text.startswith(own + "/")
