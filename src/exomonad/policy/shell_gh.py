"""``gh``, the GitHub CLI: what a command does to the repository's forge, to the user's
account and to the user's own gh.

Reads, comments, issues and pull requests of one's own are ordinary work (a plain
:class:`~exomonad.policy.actions.Shell`); merging, closing, releasing, running
workflows, deleting or renaming the repository and its secrets are the actions the
policy judges. Found probing as a worker (a sixth round), allowed before: ``gh ssh-key
add``, ``gh gpg-key add`` and ``gh repo deploy-key add`` (a key of the worker's on the
user's account or repository: access that outlives the session), ``gh auth
setup-git``/``login``/``logout``/``refresh`` and ``gh config set`` (the user's own gh
and ``~/.gitconfig``: ``gh config set editor ./x`` runs the worker's file in the user's
next ``gh pr create``), ``gh extension install`` and ``gh alias set`` (code and commands
for the user's gh), ``gh repo create``, ``gh gist create`` (publishes a file), ``gh repo
set-default`` (writes the shared ``.git/config``), ``gh codespace``, and deleting
labels, runs and caches. Each is asked now. ``gh repo clone REPO DIR`` writes DIR.
A worker's ``gh pr checkout`` is asked too: it leaves the worker's own branch for the
pull request's (``-b NAME``: any name), which it creates, fast-forwards or, with
``--force``, resets; a branch of the lead's so moved is the lead's work (as ``git
checkout feature-x`` is asked).

>>> from exomonad.policy.shell_lex import Word
>>> gh([Word(w) for w in "ssh-key add k.pub".split()], "/w")[0].describe()
'unrecognised: gh ssh-key add k.pub'
>>> gh([Word(w) for w in "pr merge 7".split()], "/w")
[MergePR(number=7)]
"""

from __future__ import annotations

import re

from exomonad.policy.actions import (
    Action,
    CloseIssue,
    ClosePR,
    CreatePR,
    Deploy,
    MergePR,
    Shell,
    Unknown,
    WriteFile,
)
from exomonad.policy.shell_env import scan_options
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_paths import resolve_path
from exomonad.policy.shell_reads import option_set

__all__ = ["gh"]

#: gh's options that take a value.
_WITH_ARG = option_set(
    "-R --repo -B --base -H --head -t --title -b --body -F --body-file -a --assignee "
    "-l --label -m --milestone -p --project -r --reviewer -T --template -c --comment "
    "--reason --subject -X --method -f --field --raw-field --input -q --jq --hostname "
    "-A --author-email --match-head-commit --notes -n --notes-file"
)
_NUMBER = re.compile(r"(?:^#?|/(?:pull|issues)/)(\d+)/?$")
#: Commands asked whatever their verb (``None``) or for these verbs: the user's account,
#: the user's own gh and git, the repository's settings, published or deleted things.
_ASKED: dict[str, frozenset[str] | None] = {
    "ssh-key": frozenset({"add", "delete"}),
    "gpg-key": frozenset({"add", "delete"}),
    "auth": frozenset({"login", "logout", "refresh", "setup-git", "switch"}),
    "config": frozenset({"set", "clear-cache"}),
    **dict.fromkeys(("extension", "extensions", "ext"),
                    frozenset({"install", "upgrade", "remove", "create", "exec"})),
    "alias": frozenset({"set", "delete", "import"}),
    "repo": frozenset({"delete", "archive", "unarchive", "rename", "edit", "sync", "create",
                       "fork", "set-default", "deploy-key", "autolink"}),
    "gist": frozenset({"create", "new", "edit", "delete", "rename", "clone"}),
    "codespace": None,
    "cs": None,
    "label": frozenset({"delete", "edit", "clone"}),
    "run": frozenset({"cancel", "delete", "rerun"}),
    "cache": frozenset({"delete"}),
    "secret": frozenset({"set", "delete", "remove"}),
    "variable": frozenset({"set", "delete", "remove"}),
    "workflow": frozenset({"enable", "disable"}),
    "issue": frozenset({"transfer", "pin", "unpin", "lock", "unlock"}),
    "pr": frozenset({"lock", "unlock"}),
    "org": None,
}  # fmt: skip


def _number(word: Word | None) -> int | None:
    if word is None or word.dynamic:
        return None
    match = _NUMBER.search(word.text)
    return int(match.group(1)) if match else None


def gh(args: list[Word], cwd: str | None, worktree: str | None = None) -> list[Action]:
    """Actions for ``gh ARGS``, run by an agent whose own checkout is ``worktree`` (None:
    the lead's)."""
    positionals, opts = scan_options(args, _WITH_ARG)
    words = [w.text for w in positionals]
    texts = tuple(w.text for w in args)
    raw, shell = "gh " + " ".join(texts), Shell(("gh", *texts), cwd)
    if any(w.dynamic for w in positionals[:2]):
        return [Unknown(raw)]
    if len(words) < 2:
        return [shell]
    group, verb = words[0], words[1]
    target = positionals[2] if len(positionals) > 2 else None

    def opt(*names: str) -> str | None:
        for name in names:
            for value in opts.get(name, []):
                return None if value is None or value.dynamic else value.text
        return None

    if group in _ASKED and (_ASKED[group] is None or verb in (_ASKED[group] or ())):
        return [Unknown(raw)]
    if group == "pr" and verb == "checkout" and worktree is not None:
        # a worker leaves its own branch for another, which it may move
        return [Unknown(f"{raw}: checks out another branch in a worker's worktree")]
    if group == "repo" and verb == "clone" and target is not None:  # into DIR, or ./NAME
        named = [w for w in positionals[3:4] if not w.text.startswith("-")]
        name = target.text.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
        into = named[0] if named else Word(name, target.dynamic)
        return [WriteFile(resolve_path(cwd, into)), shell]
    if group == "pr" and verb in ("create", "new"):
        return [CreatePR(opt("-B", "--base"), opt("-H", "--head"))]
    if group == "pr" and verb in ("merge", "close"):
        return [(MergePR if verb == "merge" else ClosePR)(_number(target))]
    if group == "issue" and verb in ("close", "delete"):
        return [CloseIssue(_number(target))]
    if group == "api":
        method = (opt("-X", "--method") or "").upper()
        writes = any(k in opts for k in ("-f", "-F", "--field", "--raw-field", "--input"))
        if method not in ("", "GET") or (writes and method != "GET"):
            return [Unknown(raw)]
    if group == "release" and verb in ("create", "upload", "delete", "edit"):
        return [Deploy("gh", f"release {verb}")]
    if group == "workflow" and verb == "run":
        return [Deploy("gh", "workflow run")]
    return [shell]
