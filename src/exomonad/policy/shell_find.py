"""What ``find``'s expression reads, hands on and deletes: the trees its actions open
(``-exec``, ``-ok``, ``-print0`` for ``xargs -0``, ``-fprint``), and the ``-name`` globs
that narrow them and a ``-delete`` when the expression is a plain conjunction of tests.

``find ../.. -name 'l*n' -exec cat {} +`` reads every matching file below ``../..``: a
tree read narrowed to those names (:class:`~exomonad.policy.actions.ReadFile` with
``include``). A plain listing (``-print``, no action) reads no contents, and the names
it prints are judged where a reader takes them (:mod:`~exomonad.policy.shell_names`).

>>> from exomonad.policy.shell_lex import Word
>>> find_reads(["/p"], [Word(t) for t in "-name l*n -print0".split()])
[ReadFile(path='/p', recursive=True, include=('l*n',))]
>>> delete_names([Word(t) for t in "-name *.pyc -type f -delete".split()])
('*.pyc',)
"""

from __future__ import annotations

from exomonad.policy.actions import Action, ReadFile
from exomonad.policy.shell_lex import Word

__all__ = ["delete_names", "find_names", "find_reads"]


#: ``find`` actions that read or hand on the files found (``-print0`` feeds ``xargs -0``).
_FIND_READS = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-print0", "-fprint",
                         "-fprint0", "-fprintf", "-fls"})  # fmt: skip


def find_reads(roots: list[str | None], args: list[Word]) -> list[Action]:
    """The tree reads of ``find ROOTS ARGS``: one per root when an action reads or hands
    on what it finds, narrowed to its ``-name`` globs when the expression is a plain
    conjunction (no ``-o``, ``!``, ``-not``); none for a listing of names.

    >>> find_reads(["/p"], [Word(t) for t in "-name *.py -exec cat {} +".split()])
    [ReadFile(path='/p', recursive=True, include=('*.py',))]
    >>> find_reads(["/p"], [Word(t) for t in "-name *.py -print".split()])
    []
    """
    texts = [w.text for w in args]
    if not _FIND_READS.intersection(texts):
        return []
    include = find_names(args)
    return [ReadFile(root, True, include) for root in roots]


#: find's tests a ``-delete`` may follow and stay narrowed by its ``-name``s: with a
#: value, and without.
_DELETE_TESTS = frozenset(
    {"-name", "-iname", "-type", "-maxdepth", "-mindepth", "-mtime", "-mmin", "-atime",
     "-amin", "-ctime", "-cmin", "-size", "-newer", "-user", "-group", "-perm", "-links"}
)  # fmt: skip
_DELETE_FLAGS = frozenset({"-empty", "-xdev", "-mount", "-depth", "-daystart", "-true"})


def delete_names(args: list[Word]) -> tuple[str, ...]:
    """The ``-name`` globs that narrow ``find``'s ``-delete``, when the expression is
    only tests and ``-delete`` comes last, once; else empty (any entry may be deleted:
    ``find . -delete -name '*.pyc'``, ``-name x , -delete``, ``-printf -name``).

    >>> delete_names([Word(t) for t in "-type f -name *.pyc -delete".split()])
    ('*.pyc',)
    >>> delete_names([Word(t) for t in "-delete -name *.pyc".split()])
    ()
    """
    texts = [w.text for w in args]
    if not texts or texts[-1] != "-delete" or texts.count("-delete") != 1:
        return ()
    i = 0
    while i < len(texts) - 1:
        if texts[i] in _DELETE_TESTS and i + 1 < len(texts) - 1:
            i += 2
        elif texts[i] in _DELETE_FLAGS:
            i += 1
        else:
            return ()
    return find_names(args[:-1])


def find_names(args: list[Word]) -> tuple[str, ...]:
    """The ``-name``/``-iname`` globs (``-iname``'s lowered) every entry ``find``'s
    expression acts on matches, when it is a plain conjunction (no ``-o``, ``!``,
    ``-not``, ``-path``, ``-regex``); empty when any entry may be.

    >>> find_names([Word(t) for t in "-name *.pyc -delete".split()])
    ('*.pyc',)
    """
    texts = [w.text for w in args]
    names = [(args[i + 1], t == "-iname") for i, t in enumerate(texts[:-1])
             if t in ("-name", "-iname")]  # fmt: skip
    plain = not {"-o", "-or", "!", "-not", "-path", "-wholename", "-regex"}.intersection(texts)
    if not plain or any(w.dynamic for w, _ in names):
        return ()
    return tuple(w.text.lower() if fold else w.text for w, fold in names)
