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

from exomonad.policy.actions import Action, WriteFile
from exomonad.policy.shell_env import scan_options
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_parse import resolve_path

__all__ = ["moves_a_branch", "writes_of"]

#: Subcommands that write neither the repository nor its work tree (``--output`` aside).
_GIT_READS = frozenset(
    """annotate blame cat-file check-attr check-ignore check-mailmap check-ref-format cherry
    column count-objects describe diff diff-files diff-index diff-tree for-each-ref fsck grep
    help interpret-trailers log ls-files ls-remote ls-tree merge-base name-rev range-diff
    rev-list rev-parse shortlog show show-branch show-ref status stripspace var verify-commit
    verify-pack verify-tag version whatchanged""".split()  # noqa: SIM905
)
#: Options naming a file or directory git writes (``git archive -o``, ``format-patch -o``).
_GIT_OUTPUTS = ("--output", "--output-directory")
_GIT_SHORT_OUTPUT = frozenset({"archive", "format-patch"})
#: Subcommands whose positional (after a verb, if any) is a path they create.
_GIT_CREATES = {"clone": 2, "init": 1, "bundle": 2, "worktree": 2}


def writes_of(
    sub: str, rest: list[Word], named: str | None, base: str | None, *, elsewhere: bool = True
) -> list[Action]:
    """What ``git SUB REST`` writes besides its own checkout: the repository it was sent to
    (``git -C ../../../remote.git update-ref ...``, ``--work-tree=../..``, a ``cd``
    elsewhere), files its options name (``--output``, ``archive -o``) and the paths it
    creates (``clone SRC DEST``, ``worktree add PATH``, ``bundle create FILE``).
    ``elsewhere``: the repository ``named`` is not the agent's own checkout."""
    out: list[Action] = [] if sub in _GIT_READS or not elsewhere else [WriteFile(named)]
    for k, w in enumerate(rest):
        text = w.text
        name, eq, val = text.partition("=")
        nxt = rest[k + 1] if k + 1 < len(rest) else None
        if name in _GIT_OUTPUTS or (text == "-o" and sub in _GIT_SHORT_OUTPUT):
            target = Word(val, w.dynamic, w.quoted) if eq else nxt
            out.append(WriteFile(resolve_path(base, target) if target is not None else None))
        elif text.startswith("-o") and len(text) > 2 and sub in _GIT_SHORT_OUTPUT:
            out.append(WriteFile(resolve_path(base, Word(text[2:], w.dynamic, w.quoted))))
    if sub == "merge-file":  # writes its first file (the "current" version)
        positionals, _ = scan_options(rest, frozenset({"-L"}))
        out += [WriteFile(resolve_path(base, w)) for w in positionals[:1]]
    for w in rest:  # checkout-index --prefix=../../: files written below any prefix
        if sub == "checkout-index" and w.text.startswith("--prefix="):
            prefix = Word(w.text[9:], w.dynamic, w.quoted)
            out.append(WriteFile(resolve_path(base, prefix)))
    if sub in _GIT_CREATES:
        positionals, _ = scan_options(rest, frozenset({"-b", "-B", "--branch", "--reason",
                                                       "--depth", "--origin", "-o"}))  # fmt: skip
        at = _GIT_CREATES[sub] - 1
        if sub == "clone" and len(positionals) == 1:
            positionals = [*positionals, Word(positionals[0].text.rstrip("/").rsplit("/", 1)[-1])]
        if len(positionals) > at and (sub != "bundle" or positionals[0].text == "create"):
            out.append(WriteFile(resolve_path(base, positionals[at])))
    return out


#: ``git remote`` verbs that rewrite the repository's shared config.
_REMOTE_EDITS = frozenset({"add", "rename", "remove", "rm", "set-url", "set-head", "set-branches"})


def moves_a_branch(sub: str, rest: list[Word]) -> bool:
    """Ref plumbing that can move any branch, ``main`` included, in the repository's shared
    refs: ``update-ref``, ``branch -f``, a ``fetch`` into a local branch (``fetch .
    HEAD:main``), checking out a branch another worktree holds (the lead's ``main``);
    and edits of what every checkout shares: ``git remote add/set-url/...`` (the lead's
    ``origin``), ``git replace``."""
    texts = [w.text for w in rest]
    if sub == "update-ref" or "--ignore-other-worktrees" in texts:
        return True
    verbs = [t for t in texts if not t.startswith("-")]
    if sub == "remote" and verbs[:1] and verbs[0] in _REMOTE_EDITS:
        return True  # the config the lead shares: its pushes sent elsewhere
    if sub == "apply" and "--unsafe-paths" in texts:
        return True  # a patch's paths outside the work tree
    if sub == "replace" and not {"-l", "--list"} & set(texts):
        return True  # refs/replace/<main>: main's commit read as another, for everyone
    if sub == "branch" and not any(t == "--delete" or _short(t, "dD") for t in texts):
        return any(t == "--force" or _short(t, "f") for t in texts)
    if sub in ("fetch", "pull"):
        for w in rest:
            _src, colon, dst = w.text.lstrip("+").partition(":")
            if w.dynamic or (colon and dst and not dst.startswith(("refs/remotes/", "refs/tags/"))):
                return True
    return False


def _short(text: str, letters: str) -> bool:
    """Whether ``text`` is a cluster of short options holding one of ``letters``."""
    return text[:1] == "-" and text[1:2] != "-" and any(c in text[1:] for c in letters)
