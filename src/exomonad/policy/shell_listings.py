"""A listing of file names handed on to a command that may act on them.

``find ../.. -maxdepth 2 -name 'lead.t*' | xargs cat`` names no file of the state dir,
yet prints the lead's token: ``find`` lists it, ``xargs`` makes it ``cat``'s argument.
Found trying the gate as a worker: that, ``find ../.. -maxdepth 2 | grep tok | xargs
cat`` and ``find ~ -name 'id_*' | xargs cat`` were allowed, while ``find ../.. -name
'lead.t*' -exec cat {} +`` (the same read) was refused. So a listing whose output may
reach another command as words (:func:`~exomonad.policy.shell_stdin.passes_on`: a pipe
into ``xargs`` or ``while read``, a substitution) is judged as ``-exec`` is: a read of
the tree it lists (``find``'s narrowed to its ``-name`` globs), which the state's and
the credential stores' rules then judge. A listing written to a file, or read by a data
program only (``find . -name '*.py' | wc -l``), hands nothing on.

>>> from exomonad.policy.shell_parse import parse
>>> first = parse("find ../.. -name 'lead.t*' | xargs cat", "/p/.worktrees/w")[0]
>>> listed_reads("find", list(first.command_words[1:]), first, "/p/.worktrees/w")
[ReadFile(path='/p', recursive=True, include=('lead.t*',))]
>>> first = parse("find ../.. -name 'lead.t*' > names.txt", "/p/.worktrees/w")[0]
>>> listed_reads("find", list(first.command_words[1:]), first, "/p/.worktrees/w")
[]
"""

from __future__ import annotations

from exomonad.policy.actions import ReadFile
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_parse import SimpleCommand
from exomonad.policy.shell_reads import find_names, tree_root
from exomonad.policy.shell_stdin import passes_on

__all__ = ["LISTERS", "listed_reads"]

#: Programs that print the names of the files below the directories they are given
#: (``locate``: of the whole file system), and ``git ls-files``.
LISTERS = frozenset({"find", "ls", "dir", "vdir", "tree", "du", "fd", "fdfind", "locate",
                     "plocate", "mlocate", "slocate", "git"})  # fmt: skip
_LOCATES = frozenset({"locate", "plocate", "mlocate", "slocate"})
#: ``git ls-files``' options that list files git does not track (ignored ones too: the
#: state's runtime files, a ``.env``), below the working directory.
_UNTRACKED = frozenset({"-o", "--others", "-i", "--ignored"})


def listed_reads(
    name: str,
    args: list[Word],
    cmd: SimpleCommand,
    cwd: str | None,
    exec_out: bool = False,
    links: bool = False,
) -> list[ReadFile]:
    """The tree reads a listing by ``name`` amounts to when what it prints is handed on
    (see the module doc); none otherwise."""
    if name not in LISTERS:
        return []
    if name == "git":
        roots = _git_roots(args, cwd)
        if not roots:
            return []
    if not passes_on(cmd, exec_out, links, words=True):
        return []
    if name == "git":
        return [ReadFile(root, True) for root in roots]
    if name in _LOCATES:
        return [ReadFile("/", True)]
    if name == "find":
        start = 0
        while start < len(args) and not args[start].text.startswith(("-", "(", "!")):
            start += 1
        named = [tree_root(cwd, w) for w in args[:start]] or [cwd]
        return [ReadFile(root, True, find_names(args[start:])) for root in named]
    operands = [w for w in args if not w.text.startswith("-") or w.dynamic]
    return [ReadFile(tree_root(cwd, w), True) for w in operands] or [ReadFile(cwd, True)]


def _git_roots(args: list[Word], cwd: str | None) -> list[str | None]:
    """Where ``git ls-files`` lists untracked files (the working directory; unknown
    when git is pointed elsewhere); empty for any other git command."""
    texts = [w.text for w in args]
    if "ls-files" not in texts:
        return []
    at = texts.index("ls-files")
    if not any(t in _UNTRACKED or (t[:1] == "-" and t[1:2] != "-" and set(t[1:]) & {"o", "i"})
               for t in texts[at + 1 :]):  # fmt: skip
        return []
    return [cwd if at == 0 else None]
