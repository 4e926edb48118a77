"""Classify ``git`` command lines into typed actions (``gh``: :mod:`.shell_gh`, ``hub``:
:mod:`.shell_hub`).

>>> from exomonad.policy.shell_lex import Word
>>> git([Word(t) for t in "-C sub push -f origin HEAD:main".split()], "/w", ShellEnv())
[GitPush(remote='origin', branch='main', force=True, lease=False, repo='/w/sub')]
"""

from __future__ import annotations

from exomonad.policy.actions import (
    Action,
    DeleteBranch,
    GitCommit,
    Shell,
    Unknown,
)
from exomonad.policy.git_home import foreign_repository, made_before
from exomonad.policy.git_plumbing import long_option
from exomonad.policy.git_push import push, reached_by
from exomonad.policy.git_reads import git_file_reads
from exomonad.policy.git_shared import shares_a_write
from exomonad.policy.git_writes import (
    GIT_READS,
    moves_a_branch,
    onto_protected,
    renames_others_branch,
    writes_of,
)
from exomonad.policy.request import really_within
from exomonad.policy.shell_env import ShellEnv, scan_options
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_paths import resolve_path
from exomonad.policy.shell_reads import git_tree_reads
from exomonad.policy.shell_secrets import git_credential

__all__ = ["SAFE_CONFIG", "git"]

#: Global options of git before the subcommand (exact spellings: git.c does not abbreviate).
_GIT_GLOBAL_FLAGS = frozenset(
    {
        "-p",
        "--paginate",
        "-P",
        "--no-pager",
        "--no-replace-objects",
        "--bare",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-optional-locks",
        "--no-advice",
        "--no-lazy-fetch",
        "--version",
        "--help",
        "-v",
        "-h",
        "--html-path",
        "--man-path",
        "--info-path",
    }
)
#: Subcommands after which the checked-out branch is no longer the one we were told.
_BRANCH_MOVERS = frozenset(
    {"checkout", "switch", "bisect", "clone", "init", "worktree", "submodule"}
)
#: git's own subcommands that neither push nor run a command given on their command line.
#: Anything else (``git p``: possibly an alias or a ``git-p`` program) is ``Unknown``.
_PLAIN_NAMES = """
add am annotate apply archive bisect blame branch bugreport bundle cat-file check-attr
check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick clean
clone column commit commit-graph commit-tree count-objects describe diagnose diff diff-files
diff-index diff-tree fast-export fetch for-each-ref format-patch fsck gc grep hash-object help
index-pack init interpret-trailers lfs log ls-files ls-remote ls-tree maintenance merge
merge-base merge-file merge-tree mktag mktree mv name-rev notes pack-objects pack-refs prune
pull range-diff read-tree rebase reflog remote repack replace request-pull rerere reset
restore rev-list rev-parse revert rm shortlog show show-branch show-ref sparse-checkout stash
status stripspace submodule switch symbolic-ref tag update-index update-ref var verify-commit
verify-pack verify-tag version whatchanged worktree"""
_GIT_PLAIN = frozenset(_PLAIN_NAMES.split())
_GIT_KNOWN = _GIT_PLAIN | {"push", "config"}
#: Options that make these subcommands run a program or a command line.
_RUNS: dict[str, tuple[str, ...]] = {
    "rebase": ("--exec", "-x"),
    "grep": ("--open-files-in-pager", "-O"),
    "fetch": ("--upload-pack",),
    "pull": ("--upload-pack",),
    "ls-remote": ("--upload-pack", "-u"),
    "clone": ("--upload-pack", "-u", "--template", "--config", "-c"),
    "archive": ("--exec", "--remote"),
    "submodule": ("foreach",),
    "bisect": ("run",),
    "remote": ("--mirror",),
    "am": ("--exec",),
}
#: ``git config`` keys an agent may set (``-c`` or ``git config``): they run nothing.
SAFE_CONFIG = frozenset(
    {
        "user.name",
        "user.email",
        "user.signingkey",
        "init.defaultbranch",
        "core.autocrlf",
        "core.filemode",
        "core.quotepath",
        "pull.rebase",
        "pull.ff",
        "fetch.prune",
        "merge.conflictstyle",
        "rebase.autosquash",
        "rebase.autostash",
        "commit.gpgsign",
        "tag.gpgsign",
        "log.date",
        "diff.algorithm",
        "advice.detachedhead",
        "gc.auto",
        "color.ui",
        "safe.directory",
        "i18n.commitencoding",
        "core.longpaths",
    }
)
_CONFIG_READS = frozenset(
    {
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "-l",
        "--list",
        "--get-color",
        "--get-colorbool",
    }
)
_CONFIG_OK = (
    frozenset(
        {
            "--global",
            "--system",
            "--local",
            "--worktree",
            "--show-origin",
            "--show-scope",
            "--name-only",
            "-z",
            "--null",
            "--bool",
            "--int",
            "--path",
            "--bool-or-int",
            "--expiry-date",
            "--includes",
            "--no-includes",
            "--fixed-value",
            "--type",
            "-t",
            "--add",
            "--replace-all",
        }
    )
    | _CONFIG_READS
)


def _texts(words: list[Word]) -> tuple[str, ...]:
    return tuple(w.text for w in words)


def _safe_key(text: str) -> bool:
    key = text.split("=", 1)[0].lower()
    return key in SAFE_CONFIG or key.startswith(("color.", "advice."))


def _runs_program(sub: str, rest: list[Word]) -> bool:
    """True if ``git SUB REST`` runs a program named on its command line (or may)."""
    marks = _RUNS.get(sub, ())
    for w in rest:
        if sub in _RUNS and (w.glob or (w.dynamic and not w.quoted)):
            return True
        text = w.text
        for mark in marks:
            if mark.startswith("--"):
                name = text.split("=", 1)[0]
                if len(name) > 3 and mark.startswith(name):
                    return True
            elif mark.startswith("-") and text.startswith("-") and not text.startswith("--"):
                if mark[1] in text[1:]:
                    return True
            elif text == mark:
                return True
    return False


def _config(rest: list[Word], raw: str, repo: str | None, shared: bool) -> list[Action]:
    """``git config``: reads and safe keys are a shell command; any other write, or one to a
    config ``shared`` with the lead (but ``--worktree``), is Unknown."""
    positionals = [w for w in rest if not w.text.startswith("-")]
    opts = [w.text.split("=", 1)[0] for w in rest if w.text.startswith("-")]
    shell: list[Action] = [Shell(("git", "config", *_texts(rest)), repo)]
    if any(w.dynamic or w.glob for w in rest) or any(o not in _CONFIG_OK for o in opts):
        return [Unknown(raw)]  # --edit, --file, --unset, --rename-section, a typo...
    if positionals[:1] and positionals[0].text in ("get", "list"):
        return shell
    writes = any(o in ("--add", "--replace-all") for o in opts)
    if not writes and (any(o in _CONFIG_READS for o in opts) or len(positionals) <= 1):
        return shell
    if positionals and _safe_key(positionals[0].text):
        if {"--global", "--system"} & set(opts):
            return [Unknown(raw)]  # ~/.gitconfig, /etc/gitconfig: outside any worktree
        return shell if "--worktree" in opts or not shared else [Unknown(raw)]
    return [Unknown(raw)]


def git(args: list[Word], cwd: str | None, env: ShellEnv) -> list[Action]:
    """Actions for ``git ARGS`` run in ``cwd``."""
    raw = "git " + " ".join(_texts(args))
    repo, i, named = cwd, 0, cwd
    where, git_dir = cwd, None  # the directory git starts in; --git-dir's path
    while i < len(args) and args[i].text.startswith("-"):
        word, opt = args[i], args[i].text
        value = args[i + 1] if i + 1 < len(args) else None
        if word.dynamic or word.glob:
            return [Unknown(raw)]
        if opt in ("-C", "-c"):
            if value is None or value.glob or (value.dynamic and not value.quoted):
                return [Unknown(raw)]
            if opt == "-C":
                repo = named = where = resolve_path(where, value)
            elif value.dynamic or not _safe_key(value.text):
                return [Unknown(raw)]  # an alias, a hook path, a pager, remote.*.push...
            i += 2
            continue
        if opt.startswith(("--git-dir=", "--work-tree=")) or opt in ("--git-dir", "--work-tree"):
            repo = None  # another repository: whose branch it is we cannot tell
            path = opt.split("=", 1)[1] if "=" in opt else value
            named = resolve_path(where, path) if path is not None else None
            if opt.startswith("--git-dir"):
                git_dir = named
            i += 1 if "=" in opt else 2
            continue
        if opt not in _GIT_GLOBAL_FLAGS:
            return [Unknown(raw)]  # --exec-path, --config-env, --namespace, a typo...
        if opt == "--bare" and git_dir is None:
            git_dir = where  # git's dir: the directory it runs in
        i += 1
    if i >= len(args):
        return [Shell(("git", *_texts(args)), cwd)]
    sub, rest = args[i], args[i + 1 :]
    printed = git_credential(sub.text) if not (sub.dynamic or sub.glob) else None
    if printed is not None:  # git credential fill: what the helpers hold, printed
        return [*printed, Shell(("git", *_texts(args)), cwd)]
    if sub.dynamic or sub.glob or sub.text not in _GIT_KNOWN:
        return [Unknown(raw)]
    if sub.text == "push":
        return push(rest, repo, env, cwd)
    if sub.text == "config":
        return _config(rest, raw, repo, shared=env.worktree is not None)
    if (moves_a_branch(sub.text, rest) or onto_protected(sub.text, rest, env.protects)
            or renames_others_branch(sub.text, rest, env.branch)
            or shares_a_write(sub.text, rest, named, repo, env)):  # fmt: skip
        return [Unknown(raw)]
    home = env.worktree or env.start_cwd
    own = named is not None and home is not None and really_within(named, home)  # links
    if (own and env.worktree is not None and where is not None and sub.text not in GIT_READS
            and (foreign_repository(where, env.worktree, git_dir)
                 or made_before(where, env.worktree, git_dir, env))):  # fmt: skip
        return [Unknown(raw)]  # sub/.git saying `gitdir: <project>/.git`, a link to ../..
    elsewhere = not own and sub.text != "commit"  # GitCommit names its repository
    writes = writes_of(sub.text, rest, named, repo or named, elsewhere=elsewhere,
                       ran_before=bool(env.commands_seen))  # fmt: skip
    reads = [*git_file_reads(sub.text, rest, repo or named),
             *git_tree_reads(sub.text, rest, repo or named)]  # fmt: skip
    acts = _subcommand(sub, rest, args, repo, raw, env)
    found = [*reads, *writes, *reached_by(sub.text, rest)]
    return [*found, *acts] if found and not isinstance(acts[0], Unknown) else acts


def _subcommand(sub: Word, rest: list[Word], args: list[Word], repo: str | None, raw: str,
                env: ShellEnv) -> list[Action]:  # fmt: skip
    """The actions of a known subcommand other than ``push`` and ``config``."""
    if _runs_program(sub.text, rest) or (
        sub.text == "symbolic-ref" and len([w for w in rest if not w.text.startswith("-")]) > 1
    ):
        return [Unknown(raw)]  # rebase -x, submodule foreach, symbolic-ref HEAD <ref>...
    if sub.text == "commit":
        return [GitCommit(repo, amend="--amend" in _texts(rest))]
    if sub.text == "branch":
        deleted = _branch_delete(rest)
        if deleted is not None:
            return deleted
        if any(
            long_option(w.text, ("--move", "--copy", "--set-upstream-to", "--track"))
            or (w.text[:1] == "-" and w.text[1:2] != "-" and set(w.text[1:]) & set("mMcCut"))
            for w in rest
        ):  # `git branch -M main` (or `--mov`): the current branch renamed; `-u X`: its
            env.branch_moved = True  # upstream, where push.default=upstream sends it
    elif sub.text in _BRANCH_MOVERS:
        env.branch_moved = True
    return [Shell(("git", *_texts(args)), repo)]


def _branch_delete(args: list[Word]) -> list[Action] | None:
    positionals, opts = scan_options(args, frozenset({"-u", "--set-upstream-to", "-t", "--track"}))
    flags: set[str] = set()
    for key in opts:
        flags.update([key] if key.startswith("--") else [f"-{c}" for c in key[1:]])
    # `--del`, `--for`: git takes any unique prefix of a long option (opts resolves them)
    if not flags & {"-d", "-D"} and "--delete" not in opts:
        return None
    force = bool(flags & {"-D", "-f"}) or "--force" in opts
    remote = "<remote-tracking>" if flags & {"-r"} or "--remotes" in opts else None
    names = [None if w.dynamic else w.text for w in positionals] or [None]
    return [DeleteBranch(name, remote, force) for name in names]
