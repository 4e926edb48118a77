"""The files git's plumbing writes (and reads) by its own options and operands: marks
files, index files, pack base names, object directories.

Found as a worker (a fourth round), each allowed and run in a scratch worktree: ``git
fast-export --export-marks=../../README.md HEAD`` (and git's abbreviation
``--export-mark=``) replaced the lead's README with a marks list, ``--export-marks=
/p/.git/config`` broke the lead's git; ``git index-pack -o ../../README.md x.pack`` made
it a pack index. git takes any unique prefix of a long option, so a prefix of one of
these counts as it (an ambiguous one makes git stop: counting it is only cautious).

>>> from exomonad.policy.shell_lex import Word
>>> plumbing_io("fast-export", [Word("--export-mark=../m"), Word("HEAD")], "/w/x")
[WriteFile(path='/w/m')]
>>> plumbing_io("index-pack", [Word("../x.pack")], "/w/t")
[WriteFile(path='/w/x.pack'), WriteFile(path='/w/x.idx')]
>>> plumbing_io("pack-objects", [Word("--stdout")], "/w")
[]
"""

from __future__ import annotations

from exomonad.policy.actions import Action, ReadFile, WriteFile
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_paths import resolve_path

__all__ = ["long_option", "plumbing_io"]

#: Per subcommand, its long options naming a file or directory git writes: the marks
#: (``fast-export``), an index (``read-tree --index-output``, ``apply
#: --build-fake-ancestor``), an object directory's files (``commit-graph write``,
#: ``multi-pack-index``), the packs a repack moves out (``--expire-to``, ``--filter-to``).
_OUTPUTS: dict[str, tuple[str, ...]] = {
    "fast-export": ("--export-marks",),
    "fast-import": ("--export-marks",),
    "read-tree": ("--index-output",),
    "apply": ("--build-fake-ancestor",),
    "commit-graph": ("--object-dir",),
    "multi-pack-index": ("--object-dir",),
    "repack": ("--expire-to", "--filter-to"),
}
#: Long options naming a file git reads and may echo (``fatal: corrupt mark line: ...``).
_INPUTS: dict[str, tuple[str, ...]] = {
    "fast-export": ("--import-marks", "--import-marks-if-exists"),
    "fast-import": ("--import-marks", "--import-marks-if-exists"),
}


def long_option(text: str, names: tuple[str, ...]) -> str | None:
    """The long option among ``names`` that ``text`` (``--opt``, ``--opt=value``) gives,
    git's unique prefixes included (``--export-mark=`` is ``--export-marks``).

    >>> long_option("--index-o=x", ("--index-output",)), long_option("--all", ("--a-b",))
    ('--index-output', None)
    """
    name = text.partition("=")[0]
    if not name.startswith("--") or len(name) < 3:
        return None
    return next((n for n in names if n.startswith(name)), None)


def plumbing_io(sub: str, rest: list[Word], base: str | None) -> list[Action]:
    """What ``git SUB REST`` writes (and reads) by its plumbing options and operands,
    paths resolved from ``base``: ``fast-export --export-marks`` (``--import-marks``:
    read), ``read-tree --index-output``, ``apply --build-fake-ancestor``,
    ``commit-graph --object-dir``, ``repack --expire-to``; ``index-pack [-o IDX]
    PACK`` (the index beside the pack; ``--stdin PACK`` writes the pack too);
    ``pack-objects BASE`` (``BASE-<hash>.pack``, ``.idx``)."""

    def at(w: Word | None) -> str | None:
        return resolve_path(base, w) if w is not None else None

    if sub == "index-pack":
        return _index_pack(rest, base)
    if sub == "pack-objects":  # every operand: its base name (an option's value, harmless)
        if any(long_option(w.text, ("--stdout",)) for w in rest):
            return []
        return [WriteFile(at(w)) for w in _operands(rest)]
    outputs, inputs = _OUTPUTS.get(sub, ()), _INPUTS.get(sub, ())
    out: list[Action] = []
    for k, w in enumerate(rest):
        if w.text == "--":
            break
        found = long_option(w.text, (*outputs, *inputs))
        if found is None:
            continue
        _, eq, value = w.text.partition("=")
        target = Word(value, w.dynamic, w.quoted) if eq else (rest[k + 1] if k + 1 < len(rest)
                                                              else None)  # fmt: skip
        out.append(WriteFile(at(target)) if found in outputs else ReadFile(at(target)))
    return out


def _operands(rest: list[Word]) -> list[Word]:
    """The words of ``rest`` that are not options (each after ``--`` too)."""
    out: list[Word] = []
    for k, w in enumerate(rest):
        if w.text == "--":
            return [*out, *rest[k + 1 :]]
        if not w.text.startswith("-") or w.text == "-":
            out.append(w)
    return out


def _index_pack(rest: list[Word], base: str | None) -> list[Action]:
    """``git index-pack [-o IDX] [--stdin] [PACK]``: IDX, or the ``.idx`` beside PACK;
    PACK itself (written with ``--stdin``; read otherwise: counted as a write)."""
    out: list[Action] = []
    skip = False
    for k, w in enumerate(rest):
        if skip:
            skip = False
            continue
        text = w.text
        if text == "-o" or (text.startswith("-o") and not text.startswith("--")):
            target = Word(text[2:], w.dynamic, w.quoted) if len(text) > 2 else None
            if target is None:
                target = rest[k + 1] if k + 1 < len(rest) else None
                skip = True
            out.append(WriteFile(resolve_path(base, target) if target is not None else None))
        elif not text.startswith("-"):
            out.append(WriteFile(resolve_path(base, w)))
            if text.endswith(".pack"):
                idx = Word(text[: -len(".pack")] + ".idx", w.dynamic, w.quoted)
                out.append(WriteFile(resolve_path(base, idx)))
    return out
