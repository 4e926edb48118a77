"""What a ``git`` command writes outside the agent's own checkout, and the ref plumbing
that can move any branch.

Found as a worker: ``git -C ../../../remote.git update-ref refs/heads/main HEAD`` moved a
local bare remote's ``main`` with no push (so neither the policy's push rules nor git's
``pre-push`` gate saw it), ``git update-ref refs/heads/main HEAD`` or ``git fetch .
HEAD:main`` moved the lead's ``main`` in the shared refs, and ``git -C ../.. stash``,
``--work-tree=../.. checkout`` or ``git archive -o ../../x`` wrote the lead's checkout:
each was a plain shell command, allowed.

>>> from exomonad.policy.shell_lex import Word
>>> writes_of("stash", [], "/p", "/p"), writes_of("log", [], "/p", "/p")
([WriteFile(path='/p')], [])
>>> writes_of("clone", [Word("/r.git")], "/w", "/w")
[WriteFile(path='/w'), WriteFile(path='/w/r.git')]
>>> moves_a_branch("fetch", [Word("."), Word("HEAD:main")])
True
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Sequence

from exomonad.policy.actions import Action, DeleteFile, WriteFile
from exomonad.policy.git_home import worktrees_ending
from exomonad.policy.git_operands import operands
from exomonad.policy.git_plumbing import long_option, plumbing_io
from exomonad.policy.shell_env import short_cluster
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_paths import resolve_path

__all__ = [
    "GIT_READS",
    "created_names",
    "moves_a_branch",
    "onto_protected",
    "renames_others_branch",
    "shadows",
    "writes_of",
]

#: Subcommands that write neither the repository nor its work tree (``--output`` aside).
GIT_READS = frozenset(
    """annotate blame cat-file check-attr check-ignore check-mailmap check-ref-format cherry
    column count-objects describe diff diff-files diff-index diff-tree for-each-ref fsck grep
    help interpret-trailers log ls-files ls-remote ls-tree merge-base name-rev range-diff
    rev-list rev-parse shortlog show show-branch show-ref status stripspace var verify-commit
    verify-pack verify-tag version whatchanged""".split()  # noqa: SIM905
)
#: Options naming a file or directory git writes (``git archive -o``, ``format-patch -o``,
#: ``init --separate-git-dir``: the repository itself); git takes unique prefixes, down
#: to one letter (``git bugreport --o=DIR`` wrote DIR).
_GIT_OUTPUTS = ("--output", "--output-directory", "--separate-git-dir")
_GIT_SHORT_OUTPUT = frozenset({"archive", "format-patch", "bugreport", "diagnose"})
#: Subcommands whose positional (after a verb, if any) is a path they create.
_GIT_CREATES = {"clone": 2, "init": 1, "bundle": 2}
#: ``git worktree`` verbs and the positional (after the verb) each writes.
_WORKTREE_WRITES = {"add": 1, "move": 2, "lock": 1, "unlock": 1, "repair": 1}
#: ``git worktree`` verbs whose first positional names a registered worktree, by the
#: ending of its path first (:func:`~exomonad.policy.git_home.worktrees_ending`).
_WORKTREE_FINDS = frozenset({"lock", "unlock", "move", "remove"})


def writes_of(
    sub: str,
    rest: list[Word],
    named: str | None,
    base: str | None,
    *,
    elsewhere: bool = True,
    ran_before: bool = False,
) -> list[Action]:
    """What ``git SUB REST`` writes besides its own checkout: the repository it was sent to
    (``git -C ../../../remote.git update-ref ...``, ``--work-tree=../..``, a ``cd``
    elsewhere), files its options name (``--output``, ``archive -o``) and the paths it
    creates (``clone SRC DEST``, ``worktree add PATH``, ``bundle create FILE``).
    ``elsewhere``: the repository ``named`` is not the agent's own checkout;
    ``ran_before``: a command ran before it in the line (it may have written a template)."""
    out: list[Action] = [] if sub in GIT_READS or not elsewhere else [WriteFile(named)]
    for k, w in enumerate(rest):
        text = w.text
        name, eq, val = text.partition("=")
        nxt = rest[k + 1] if k + 1 < len(rest) else None
        output = long_option(name, _GIT_OUTPUTS) is not None
        short = sub in _GIT_SHORT_OUTPUT and text[:1] == "-" and text[1:2] not in ("-", "")
        at = text.find("o", 1) if short else -1  # -o, -oDIR, a cluster: format-patch -ko DIR
        if output:
            target = Word(val, w.dynamic, w.quoted) if eq else nxt
            out.append(WriteFile(resolve_path(base, target) if target is not None else None))
        elif at > 0:
            target = Word(text[at + 1 :], w.dynamic, w.quoted) if text[at + 1 :] else nxt
            out.append(WriteFile(resolve_path(base, target) if target is not None else None))
    if sub == "merge-file":  # writes its first file (the "current" version)
        out += [WriteFile(resolve_path(base, w)) for w in operands(sub, rest)[:1]]
    for k, w in enumerate(rest):  # checkout-index --prefix ../../: files written below it
        name, eq, value = w.text.partition("=")
        if sub == "checkout-index" and len(name) > 2 and "--prefix".startswith(name):
            # `--pref=X`, `--prefix X` (found probing: the separate word was not read, and
            # `--prefix ../../.git/hooks/pre- commit` planted a hook the lead's git ran)
            after = rest[k + 1] if k + 1 < len(rest) else None
            prefix = Word(value, w.dynamic, w.quoted) if eq else after
            out.append(WriteFile(resolve_path(base, prefix) if prefix is not None else None))
    if sub in _GIT_CREATES:
        positionals = operands(sub, rest)
        at = _GIT_CREATES[sub] - 1
        if sub == "clone" and len(positionals) == 1:
            positionals = [*positionals, Word(positionals[0].text.rstrip("/").rsplit("/", 1)[-1])]
        if sub == "bundle":  # bundle create FILE REVS...: the revisions are no paths
            creates = bool(positionals) and positionals[0].text == "create"
            positionals = positionals[:2] if creates else []
        out += [WriteFile(resolve_path(base, w)) for w in positionals[at:]]
    if sub == "init":
        out += _template_config(rest, base, ran_before)
    return [*out, *_verb_writes(sub, rest, base), *plumbing_io(sub, rest, base)]


def _template_config(rest: list[Word], base: str | None, ran_before: bool) -> list[Action]:
    """``git init --template=DIR [PATH]`` copies ``DIR/config`` into the new repository:
    a write of its config when DIR holds one, is known only at run time, or an earlier
    command of the line (``ran_before``) may have written it. Found probing: a template
    whose config named ``remote.origin.url`` on another host made the new nested
    repository's ``git fetch origin`` (a configured remote's name, allowed) connect
    there, as ``cp tpl/config sub/.git/config`` (asked) would."""
    for k, w in enumerate(rest):
        if long_option(w.text, ("--template",)) is None:
            continue
        _, eq, value = w.text.partition("=")
        after = rest[k + 1] if k + 1 < len(rest) else None
        given = Word(value, w.dynamic, w.quoted) if eq else after
        template = resolve_path(base, given) if given is not None else None
        if template is None or ran_before or os.path.lexists(posixpath.join(template, "config")):
            positionals = operands("init", rest)
            target = resolve_path(base, positionals[0]) if positionals else base
            return [WriteFile(None if target is None else posixpath.join(target, ".git", "config"))]
    return []


def _verb_writes(sub: str, rest: list[Word], base: str | None) -> list[Action]:
    """``worktree add PATH``, ``worktree move SRC DST`` (SRC gone), ``worktree remove
    PATH``, ``worktree lock/unlock/repair PATH`` (another worker's: found probing, a lock
    that blocks its removal; SRC and PATH name the worktree whose path ends so, if one
    does, before a path: ``remove w2`` from inside w1 removes ``.worktrees/w2``);
    ``interpret-trailers --in-place FILE...`` (found as a
    worker: ``git worktree move . ../../moved`` moved its checkout into the lead's)."""
    if sub == "interpret-trailers" and any(long_option(w.text, ("--in-place",)) for w in rest):
        return [WriteFile(resolve_path(base, w)) for w in operands(sub, rest)]  # --in-pl too
    if sub != "worktree":
        return []
    pos = operands(sub, rest)
    verb = pos[0].text if pos else ""
    at = _WORKTREE_WRITES.get(verb)

    def target(k: int) -> str | None:
        word = pos[k]
        if k == 1 and verb in _WORKTREE_FINDS and base is not None and not word.dynamic:
            if word.glob:
                return None  # `w*`, matching a `w2` made in the worktree: any ending
            found = worktrees_ending(base, word.text)  # `lock w2`: <project>/.worktrees/w2
            if len(found) == 1:
                return found[0]
        return resolve_path(base, word)

    out: list[Action] = []
    if at is not None and len(pos) > at:
        out.append(WriteFile(target(at)))
    if verb in ("move", "remove") and len(pos) > 1:
        out.append(DeleteFile(target(1), recursive=True))
    return out


#: (subcommand, verb) that delete entries of what every checkout shares: the stash list
#: and the reflogs (the stash's entries below the top are its reflog).
_SHARED_WORK_LOSS = frozenset(
    {("stash", "clear"), ("stash", "drop"), ("reflog", "expire"), ("reflog", "delete")}
)
#: ``git tag`` options that list or verify tags (their values are not new tag names).
_TAG_LISTS = frozenset({"-l", "--list", "-v", "--verify", "--contains", "--no-contains",
                        "--merged", "--no-merged", "--points-at", "-n", "--sort",
                        "--format", "--column"})  # fmt: skip
#: ``git remote`` verbs that rewrite the repository's shared config.
_REMOTE_EDITS = frozenset({"add", "rename", "remove", "rm", "set-url", "set-head", "set-branches"})


def moves_a_branch(sub: str, rest: list[Word]) -> bool:
    """Ref plumbing that can move any branch, ``main`` included, in the repository's shared
    refs: ``update-ref``, ``branch -f``, a ``fetch`` into a local branch (``fetch .
    HEAD:main``), checking out a branch another worktree holds (the lead's ``main``);
    and edits of what every checkout shares: ``git remote add/set-url/...`` (the lead's
    ``origin``), ``git replace``, ``git tag -f``/``-d``; ``git maintenance
    register``/``start`` (the user's git config and scheduler); what holds the lead's
    uncommitted work: ``git stash clear``/``drop`` (one stash list for every checkout),
    ``git reflog expire``/``delete`` (stash entries are a reflog: found as a worker,
    ``git reflog expire --expire=now --all`` emptied the lead's stash list), and ``git
    gc --prune=<date>``/``git prune``, which delete the dropped entries' commits."""
    texts = [w.text for w in rest]
    checks_out = sub in ("checkout", "switch", "worktree")  # `--ignore-other`: a prefix
    others = ("--ignore-other-worktrees",)
    if sub == "update-ref" or any(t in others or (checks_out and long_option(t, others))
                                  for t in texts):  # fmt: skip
        return True
    verbs = [t for t in texts if not t.startswith("-")]
    if sub == "remote" and verbs[:1] and verbs[0] in _REMOTE_EDITS:
        return True  # the config the lead shares: its pushes sent elsewhere
    if sub == "apply" and any(long_option(t, ("--unsafe-paths",)) for t in texts):
        return True  # a patch's paths outside the work tree
    if sub == "replace" and not {"-l", "--list"} & set(texts):
        return True  # refs/replace/<main>: main's commit read as another, for everyone
    if sub == "tag" and any(
        t.startswith(("--for", "--del")) or short_cluster(t, "fd") for t in texts
    ):
        return True  # an existing tag moved or deleted: every checkout's (a release's)
    if sub == "maintenance" and verbs[:1] and verbs[0] != "run":
        return True  # register, start...: ~/.gitconfig edited, jobs scheduled
    if (sub, verbs[0] if verbs else "") in _SHARED_WORK_LOSS or sub == "prune":
        return True
    if sub == "notes" and _rewrites_notes(texts):
        return True  # refs/notes/commits: every checkout's notes
    if sub == "gc" and any("=" in t and long_option(t, ("--prune",)) for t in texts):
        return True  # unreachable objects deleted now (`--prun=now` too): dropped stashes
    if sub == "branch" and not any(t == "--delete" or short_cluster(t, "dD") for t in texts):
        return any(long_option(t, ("--force",)) or short_cluster(t, "f") for t in texts)  # --forc
    if sub in ("fetch", "pull"):
        for w in rest:
            _src, colon, dst = w.text.lstrip("+").partition(":")
            if w.dynamic or (colon and dst and not dst.startswith(("refs/remotes/", "refs/tags/"))):
                return True
    return False


def _rewrites_notes(texts: list[str]) -> bool:
    """Whether ``git notes [--ref R] VERB`` removes or replaces notes (a new note is
    ordinary, and so is ``append``); ``--ref``'s value may be its own word (``--ref
    commits remove main``). ``edit`` replaces an existing note as a forced ``add`` does
    (found as a worker: ``git notes edit -m y main`` overwrote the lead's note)."""
    refs = [k for k, t in enumerate(texts) if "=" not in t and long_option(t, ("--ref",))]
    verbs = [t for k, t in enumerate(texts) if not t.startswith("-") and k - 1 not in refs]
    verb = verbs[0] if verbs else ""
    if verb in ("remove", "prune", "merge", "edit"):
        return True
    forced = any(long_option(t, ("--force",)) or short_cluster(t, "f") for t in texts)
    return verb in ("add", "copy") and forced


#: Per subcommand: its short options that take a value, its long options that do, and
#: those (among either) naming a branch created, reset or renamed onto.
_BRANCH_VERBS: dict[str, tuple[str, frozenset[str], frozenset[str]]] = {
    "checkout": ("bB", frozenset({"--orphan", "--conflict", "--pathspec-from-file"}),
                 frozenset({"-b", "-B", "--orphan"})),
    "switch": ("cC", frozenset({"--create", "--force-create", "--orphan", "--conflict"}),
               frozenset({"-c", "-C", "--create", "--force-create", "--orphan"})),
    "branch": ("u", frozenset({"--set-upstream-to", "--contains", "--no-contains", "--merged",
                               "--no-merged", "--points-at", "--format", "--sort"}), frozenset()),
    "worktree": ("bB", frozenset({"--reason"}), frozenset({"-b", "-B"})),
    "stash": ("", frozenset(), frozenset()),
}  # fmt: skip
#: Long flags of those subcommands (for abbreviations: ``--mov`` is ``--move``).
_LONG_FLAGS = frozenset({"--force", "--track", "--no-track", "--guess", "--detach", "--list",
                         "--ignore-other-worktrees", "--delete", "--move", "--copy", "--all",
                         "--remotes", "--show-current", "--verbose", "--quiet", "--merge",
                         "--discard-changes"})  # fmt: skip
#: ``git branch`` options that list branches (their positionals are patterns).
_BRANCH_LISTS = frozenset({"-l", "--list", "-a", "--all", "-r", "--remotes", "--contains",
                           "--no-contains", "--merged", "--no-merged", "--points-at",
                           "--show-current", "-v", "-vv", "--verbose"})  # fmt: skip


def _parse(sub: str, rest: list[Word]) -> tuple[list[Word], dict[str, list[Word | None]]]:
    """Positionals and options of ``git SUB REST``: bundled short flags (``-qB main``,
    ``-Bmain``) are split, long ones may be abbreviated (``--force-c=main``)."""
    short_arg, long_args, _ = _BRANCH_VERBS[sub]
    known = long_args | _LONG_FLAGS
    positionals: list[Word] = []
    opts: dict[str, list[Word | None]] = {}
    i = 0
    while i < len(rest):
        word, text = rest[i], rest[i].text
        nxt = rest[i + 1] if i + 1 < len(rest) else None
        if text == "--":
            opts["--"] = list(rest[i + 1 :])
            break
        if text.startswith("--"):
            name, eq, value = text.partition("=")
            found = [k for k in known if k.startswith(name)] if len(name) > 3 else []
            name = name if name in known or len(found) != 1 else found[0]
            if eq:
                opts.setdefault(name, []).append(Word(value, word.dynamic, word.quoted))
            elif name in long_args:
                opts.setdefault(name, []).append(nxt)
                i += 1
            else:
                opts.setdefault(name, []).append(None)
        elif text.startswith("-") and len(text) > 1:
            for j, c in enumerate(text[1:], 1):
                if c in short_arg:
                    attached = text[j + 1 :]
                    taken = Word(attached, word.dynamic, word.quoted) if attached else nxt
                    i += 0 if attached else 1
                    opts.setdefault(f"-{c}", []).append(taken)
                    break
                opts.setdefault(f"-{c}", []).append(None)
        else:
            positionals.append(word)
        i += 1
    return positionals, opts


def onto_protected(sub: str, rest: list[Word], protects: Callable[[Word | None], bool]) -> bool:
    """Whether ``git SUB REST`` creates, resets, renames or copies onto a branch that
    ``protects`` (the policy's ``main``), or checks one out in the agent's worktree, where
    its next commit moves it: ``checkout -B main``, ``switch -C main``, ``branch -M
    exo/w1 main``, ``branch -m main old`` (``main`` gone), ``worktree add -f sub main``,
    ``stash branch main``. Found as a worker (git 2.39): ``git checkout -B main`` moved
    the lead's ``main`` and its HEAD to the worker's commit, no push. ``git rebase
    <upstream> main`` (``--root main``) checks ``main`` out first and rewrites it."""
    if sub == "rebase":
        return _rebases(rest, protects)
    if sub == "tag":  # git tag NAME [COMMIT]: a tag named main is read before the branch
        names = operands(sub, rest)  # `git tag -m x main`: x is the message
        listing = any(t.text.split("=", 1)[0] in _TAG_LISTS for t in rest)
        return bool(names) and not listing and (protects(names[0]) or shadows(names[0]))
    if sub not in _BRANCH_VERBS:
        return False
    pos, opts = _parse(sub, rest)
    named = [w for key in _BRANCH_VERBS[sub][2] for w in opts.get(key, [])]
    if any(protects(w) for w in named):
        return True
    detached = any(k in opts for k in ("--detach", "-d")) and sub != "branch"
    if sub in ("checkout", "switch"):  # a branch checked out (checkout: no paths given)
        paths = opts.get("--", [])
        return not named and not detached and len(pos) == 1 and not paths and protects(pos[0])
    if sub == "stash":
        return bool(pos) and pos[0].text == "branch" and protects(pos[1] if len(pos) > 1 else None)
    if sub == "worktree":
        if not pos or pos[0].text != "add" or named or detached or len(pos) < 2:
            return False
        branch = pos[2] if len(pos) > 2 else Word(pos[1].text.rstrip("/").rsplit("/", 1)[-1],
                                                   pos[1].dynamic, pos[1].quoted)  # fmt: skip
        return protects(branch)
    return _branch_onto_protected(pos, opts, protects)


#: ``git rebase`` options whose value is the next word.
_REBASE_ARGS = frozenset(
    {"--onto", "-s", "--strategy", "-X", "--strategy-option", "-x", "--exec", "-C"}
)


def created_names(sub: str, rest: list[Word]) -> Sequence[Word | None]:
    """The branch names ``git SUB REST`` creates, resets or renames onto: ``checkout -b
    X``, ``switch -c X``, ``worktree add -b X``, ``stash branch X``, ``branch X``,
    ``branch -m A X``, ``branch -c X``."""
    if sub not in _BRANCH_VERBS:
        return []
    pos, opts = _parse(sub, rest)
    if sub == "stash":
        return pos[1:2] if pos[:1] and pos[0].text == "branch" else []
    if sub != "branch":
        return [w for key in _BRANCH_VERBS[sub][2] for w in opts.get(key, [])]
    flags = set(opts)
    if flags & (_BRANCH_LISTS | {"-d", "-D", "--delete", "-u", "--set-upstream-to"}):
        return []
    two = flags & {"-m", "-M", "--move", "-c", "-C", "--copy"} and len(pos) > 1
    return pos[1:2] if two else pos[:1]


def _rebases(rest: list[Word], protects: Callable[[Word | None], bool]) -> bool:
    """Whether ``git rebase REST`` names a protected branch to check out and rewrite:
    the second operand, or the first with ``--root``."""
    operands: list[Word] = []
    words = iter(rest)
    for w in words:
        if w.text == "--":
            operands += words
        elif w.text.startswith("-"):
            if w.text in _REBASE_ARGS:
                next(words, None)
        else:
            operands.append(w)
    branch = 0 if any(w.text == "--root" for w in rest) else 1
    return len(operands) > branch and protects(operands[branch])


def _branch_onto_protected(pos: list[Word], opts: dict[str, list[Word | None]],
                           protects: Callable[[Word | None], bool]) -> bool:  # fmt: skip
    """``git branch``: a new name (created, renamed or copied to) or a renamed old name
    that may be protected, or a new one that shadows another ref; listing and deleting
    name none."""
    flags = set(opts)
    if flags & (_BRANCH_LISTS | {"-d", "-D", "--delete"}) or not pos:
        return False
    if flags & {"-m", "-M", "--move"}:  # the old name disappears too
        return any(protects(w) or shadows(w) for w in pos[:2])
    new = pos[1] if flags & {"-c", "-C", "--copy"} and len(pos) > 1 else pos[0]
    return protects(new) or shadows(new)


def shadows(name: Word | None) -> bool:
    """A new branch or tag name git would read before another ref: ``origin/main`` (a
    local branch read before the remote-tracking one), ``HEAD``, ``refs/...``, ``@``.
    Found probing: ``git tag main HEAD`` made the lead's ``git reset --hard main`` take
    the worker's commit (a tag is read before the branch).

    >>> [shadows(Word(t)) for t in ("origin/main", "upstream/x", "HEAD", "feature/x")]
    [True, True, True, False]
    """
    if name is None or name.dynamic:
        return name is not None
    text = name.text
    return text in ("HEAD", "@", "FETCH_HEAD", "ORIG_HEAD") or text.startswith(
        ("origin/", "upstream/", "refs/", "remotes/", "heads/", "tags/")
    )


def renames_others_branch(sub: str, rest: list[Word], own: str | None) -> bool:
    """``git branch -m OLD NEW`` (or ``-M``) of another worker's branch (one with the
    agent's own prefix, ``exo/``, but not its own; found probing: ``git branch -m exo/w2
    x`` renamed it under w2's worktree). Renaming one's own, the current branch (``-m
    NEW``) or a branch of one's own making is ordinary."""
    if sub != "branch":
        return False
    pos, opts = _parse(sub, rest)
    if not set(opts) & {"-m", "-M", "--move"} or len(pos) < 2:
        return False
    old = pos[0].text.removeprefix("refs/heads/")
    prefix = own.rsplit("/", 1)[0] + "/" if own and "/" in own else None
    return pos[0].dynamic or (old != own and (prefix is None or old.startswith(prefix)))
