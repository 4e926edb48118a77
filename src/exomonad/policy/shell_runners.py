"""Project runners: ``uv run``, ``poetry run``, ``pdm run``, ``hatch run``, ``rye run``,
``pipenv run``: the command they run, and the directory it runs in.

Their options before and after ``run`` are read exactly (an unknown one: ``None``, and
the caller reports ``Unknown``), and the ones naming a directory move the command there:
found as a worker, ``uv run --directory ../.. git commit -qam x`` was judged a commit in
the worktree and moved the lead's ``main``; ``uv --directory ../.. run``, ``uv run
--project ../..``, ``pdm run -p ../..``, ``poetry -C ../.. run`` likewise. A project
directory (``--project``) is where the runner syncs its environment (``.venv``, the lock
file): the command is judged there too, so outside the worktree it is escalated.

>>> from exomonad.policy.shell_lex import Word
>>> got = project_run("uv", [Word(t) for t in "run --directory ../.. git status".split()],
...                   "/p/.worktrees/w1")
>>> [w.text for w in got.rest], got.cwd
(['git', 'status'], '/p')
>>> project_run("uv", [Word("sync")], "/w") is None
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from exomonad.policy.actions import Action, ReadFile, Shell, Unknown
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_paths import resolve_path
from exomonad.policy.shell_reads import tree_root
from exomonad.policy.shell_where import names_outside
from exomonad.policy.shell_wrap import OptSpec, parse_options, word_set

#: Judges a command run in a directory (the classifier's, given by the caller).
Judge = Callable[[list[Word], str | None], list[Action]]

__all__ = ["RUNNERS", "ProjectRun", "project_run"]

_UV = OptSpec(
    "qvnmsU",
    "pwCfP",
    "",
    word_set(
        "quiet verbose no-cache module script gui-script frozen locked no-sync isolated "
        "no-project all-extras no-dev dev only-dev active no-active exact no-editable "
        "offline native-tls no-progress no-config preview no-preview managed-python "
        "no-managed-python no-python-downloads all-packages all-groups no-default-groups "
        "no-env-file no-index upgrade reinstall refresh no-build-isolation compile-bytecode "
        "no-build no-binary no-sources help"
    ),
    word_set(
        "with with-editable with-requirements python project directory package extra group "
        "only-group no-group env-file index default-index index-url extra-index-url "
        "find-links index-strategy keyring-provider resolution prerelease upgrade-package "
        "reinstall-package link-mode cache-dir config-file config-setting color "
        "python-preference allow-insecure-host exclude-newer refresh-package"
    ),
)
_POETRY = OptSpec(
    "qvnhV",
    "CP",
    "",
    word_set("quiet verbose no-interaction ansi no-ansi no-plugins no-cache help version"),
    word_set("directory project"),
)
_PDM = OptSpec(
    "vqIgljsh",
    "cpk",
    "",
    word_set("verbose quiet ignore-python global list json site-packages recreate help"),
    word_set("config project venv skip"),
)
_HATCH = OptSpec(
    "vqh",
    "epix",
    "",
    word_set("verbose quiet color no-color interactive no-interactive help ignore-compat"),
    word_set("env project data-dir cache-dir config include exclude filter force-continue"),
)
_RYE = OptSpec("lvqh", "", "", word_set("list verbose quiet help"), word_set("pyproject"))
_PIPENV = OptSpec(
    "qvh",
    "",
    "",
    word_set("quiet verbose site-packages clear bare help"),
    word_set("python pypi-mirror"),
)
#: Each runner: its options (before and after ``run``), and those naming the directory
#: the command runs in or the project it syncs.
RUNNERS: dict[str, tuple[OptSpec, tuple[str, ...]]] = {
    "uv": (_UV, ("--directory", "--project")),
    "poetry": (_POETRY, ("-C", "--directory", "-P", "--project")),
    "pdm": (_PDM, ("-p", "--project")),
    "hatch": (_HATCH, ("-p", "--project")),
    "rye": (_RYE, ("--pyproject",)),
    "pipenv": (_PIPENV, ()),
}


@dataclass(frozen=True, slots=True)
class ProjectRun:
    """What a runner runs (``rest``; ``None``: its options could not be read), where
    (``cwd``), and the values of its options (paths among them are judged)."""

    rest: list[Word] | None
    cwd: str | None
    values: list[Word]
    reads: tuple[Word, ...] = ()

    def actions(self, full: tuple[str, ...], cwd: str | None, worktree: str | None,
                privileged: bool, judge: Judge) -> list[Action]:  # fmt: skip
        """The command's actions (``judge(rest, cwd)``) where it runs; Unknown when the
        options were not read or one names a path outside the worktree (``--env-file``,
        ``--with``)."""
        read: list[Action] = [ReadFile(tree_root(cwd, w)) for w in self.reads]  # --env-file
        if self.rest is None or names_outside(self.values, cwd, worktree) is not None:
            return [*read, Unknown(" ".join(full))]
        inner = judge(self.rest, self.cwd) if self.rest else []
        return [*read, *(inner or [Shell(full, self.cwd, privileged)])]


def project_run(name: str, args: list[Word], cwd: str | None) -> ProjectRun | None:
    """``NAME [OPTIONS] run [OPTIONS] CMD...``: the command and where it runs; None if
    ``name`` is no runner or this is not its ``run``."""
    if name not in RUNNERS:
        return None
    spec, dirs = RUNNERS[name]
    first = parse_options(args, spec)
    if first is None:  # an option not read: a `run` may follow it
        return ProjectRun(None, cwd, []) if any(w.text == "run" for w in args) else None
    start, opts = first
    if start >= len(args) or args[start].text != "run":
        return None
    second = parse_options(args[start + 1 :], spec)
    if second is None:
        return ProjectRun(None, cwd, [])
    end, more = second
    rest = args[start + 1 + end :]
    given = [*opts.items(), *more.items()]
    for moves in (("--directory", "-C"), tuple(d for d in dirs if d not in ("--directory", "-C"))):
        for key, value in given:  # the directory first: a project is relative to it
            if key in dirs and key in moves and value is not None:
                where = resolve_path(cwd, value)
                cwd = _parent(where) if key == "--pyproject" and where is not None else where
    if name == "uv" and any(k in ("-m", "--module") for k, _ in given):
        rest = [Word("python"), Word("-m"), *rest]
    reads = tuple(v for k, v in given if k == "--env-file" and v is not None)
    return ProjectRun(rest, cwd, [v for _, v in given if v is not None], reads)


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"
