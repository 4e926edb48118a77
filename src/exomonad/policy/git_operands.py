"""The operands of a git command as git's option parser reads them: an option that takes
a value takes the next word when none is attached (``--template ./tpl``, ``-j 1``),
also when abbreviated (``--jo 1``) or last in a cluster of short ones (``-qb x``), so
that word is not an operand.

Found trying the gate as a worker (a seventh round), each allowed and run for real:
``git init --bare --template ./tpl ../../.git`` planted the template's hooks in the
common ``.git`` (judged as a write of ``<wt>/tpl``), ``git clone -j 1 ./evil
../../tests/evil`` put a ``conftest.py`` in the lead's tests, ``git bundle create
--version 3 ../../Makefile HEAD`` and ``git merge-file --marker-size 7 ../../Makefile b
o`` overwrote the lead's ``Makefile``, ``git tag -m x main`` made a tag ``main`` (``-m``'s
value taken for its name).

>>> from exomonad.policy.shell_lex import Word
>>> [w.text for w in operands("init", [Word(t) for t in "--template ./tpl ../x".split()])]
['../x']
>>> [w.text for w in operands("clone", [Word(t) for t in "-qj1 src dst".split()])]
['src', 'dst']
"""

from __future__ import annotations

from exomonad.policy.shell_env import scan_options
from exomonad.policy.shell_lex import Word

__all__ = ["VALUE_OPTIONS", "operands"]


def _options(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Per subcommand, its options that take a value (git 2.39 to 2.50; an option git reads
#: with an optional value, ``--shared[=PERMS]``, takes only an attached one).
VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "clone": _options(
        "-o --origin -b --branch -u --upload-pack --reference --reference-if-able "
        "--separate-git-dir --depth --shallow-since --shallow-exclude -j --jobs --filter "
        "--bundle-uri --server-option --template -c --config --ref-format --revision"
    ),
    "init": _options(
        "--template --separate-git-dir --object-format --ref-format -b --initial-branch"
    ),
    "bundle": _options("--version"),
    "merge-file": _options("-L --marker-size --diff-algorithm"),
    "worktree": _options("-b -B --reason"),
    "tag": _options(
        "-m --message -F --file -u --local-user --cleanup --trailer --sort --format --points-at"
    ),
    "interpret-trailers": _options("--trailer --where --if-exists --if-missing"),
}


def operands(sub: str, rest: list[Word]) -> list[Word]:
    """The words of ``git SUB REST`` that are neither options nor an option's value."""
    positionals, _ = scan_options(rest, VALUE_OPTIONS.get(sub, frozenset()))
    return positionals
