"""The files a ``git`` command reads because its options or operands name them: a commit
message (``commit -F FILE``, ``--template``), a tag's or a note's (``-F``), ``blame
--contents``, the patches ``am`` and ``apply`` take, the blobs ``hash-object`` stores,
a ``--pathspec-from-file`` (its lines echoed in errors), ``init --template=DIR``
(copied whole).

Found as a worker: ``git commit -F ../../.exomonad/lead.token`` made the lead's token a
commit message. Each such file is a :class:`~exomonad.policy.actions.ReadFile`, judged
as ``cat`` of it would be. The trees ``git grep --untracked`` and ``git diff
--no-index`` read are :func:`~exomonad.policy.shell_reads.git_tree_reads`.

>>> from exomonad.policy.shell_lex import Word
>>> git_file_reads("commit", [Word("-F"), Word("../msg")], "/p/w")
[ReadFile(path='/p/msg', recursive=False, include=())]
>>> git_file_reads("commit", [Word("-m"), Word("../msg")], "/p/w")
[]
"""

from __future__ import annotations

from exomonad.policy.actions import Action, ReadFile
from exomonad.policy.shell_env import scan_options
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_reads import tree_root

__all__ = ["git_file_reads"]


#: Per ``git`` subcommand: its short options whose value is a file it reads, its other
#: short options taking a value, and its long options naming a file it reads.
_GIT_FILE_OPTS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "commit": ("Ft", "mCc", ("--file", "--template")),  # -S, -u: optional, attached
    "tag": ("F", "mu", ("--file",)),
    "notes": ("F", "mcC", ("--file",)),
    "merge": ("F", "msX", ("--file",)),
    "commit-tree": ("F", "pmS", ()),
    "blame": ("S", "L", ("--contents", "--ignore-revs-file")),
    "grep": ("f", "eABCm", ()),
    "archive": ("", "o", ("--add-file",)),
    "format-patch": ("", "ov", ("--signature-file",)),
}
#: Subcommands whose positionals are files they read (patches, blobs to hash).
_GIT_READS_OPERANDS = {
    "am": frozenset(),
    "apply": frozenset(),
    "hash-object": frozenset({"-t", "--path"}),
    "merge-file": frozenset({"-L"}),
    "interpret-trailers": frozenset({"--trailer", "--where", "--if-exists", "--if-missing"}),
}


def git_file_reads(sub: str, rest: list[Word], cwd: str | None) -> list[Action]:
    """The files ``git SUB REST`` reads and may show (a commit message, a tag's, a patch):
    ``commit -F FILE``/``--template``, ``tag``/``notes``/``merge -F``, ``blame
    --contents``, ``hash-object FILE``, ``--pathspec-from-file`` (its lines echoed in
    errors), ``init --template=DIR`` (copied whole). Found as a worker: ``git commit -F
    ../../.exomonad/lead.token`` made the lead's token a commit message. ``-`` is stdin."""
    short_files, short_args, longs = _GIT_FILE_OPTS.get(sub, ("", "", ()))
    longs = (*longs, "--pathspec-from-file", *(("--template",) if sub == "init" else ()))
    found: list[Word | None] = []
    i = 0
    while i < len(rest):
        word, text = rest[i], rest[i].text
        nxt = rest[i + 1] if i + 1 < len(rest) else None
        if text == "--":
            break
        name, eq, value = text.partition("=")
        if text.startswith("--") and len(name) > 4 and any(o.startswith(name) for o in longs):
            found.append(Word(value, word.dynamic, word.quoted) if eq else nxt)
            i += 0 if eq else 1
        elif text.startswith("-") and not text.startswith("--"):
            for j, c in enumerate(text[1:], 1):
                if c in short_files or c in short_args:
                    attached = text[j + 1 :]
                    if c in short_files:
                        found.append(Word(attached, word.dynamic, word.quoted) if attached else nxt)
                    i += 0 if attached else 1
                    break
        i += 1
    if sub in _GIT_READS_OPERANDS:
        found += scan_options(rest, _GIT_READS_OPERANDS[sub])[0]
    return [ReadFile(tree_root(cwd, w) if w is not None else None, sub == "init")
            for w in found if w is None or w.text != "-"]  # fmt: skip
