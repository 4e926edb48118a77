"""Symbolic links made and used in one command line.

The policy judges a path when the call comes: a link that exists then is resolved (a
worker's ``g -> ../../.git`` is seen for what it is), but one that an earlier command of
the same line makes is not there yet. Found probing as a worker: an archive, a patch or
git's index holding ``g -> ../../.git``, unpacked and written through in one line
(``tar -xf sym.tar && echo ... >> g/config``), rewrote the lead's ``.git/config``. So
once a command that may make links has run, a path in the worktree that a later command
of the line reaches is :class:`~exomonad.policy.actions.Unknown`.

>>> from exomonad.policy.shell_lex import Word
>>> makes_links([Word("tar"), Word("-xf"), Word("a.tar")]), makes_links([Word("cat")])
(True, False)
"""

from __future__ import annotations

import posixpath

from exomonad.policy.actions import Action, DeleteFile, ReadFile, Unknown, WriteFile
from exomonad.policy.shell_env import ShellEnv, is_within
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_parse import SimpleCommand
from exomonad.policy.shell_unpacked import no_git_files
from exomonad.policy.shell_wrap import PRIV_WITH_ARG, WRAPPERS

__all__ = ["behind_new_links", "beside_links", "makes_links", "note_writes"]

#: Programs that may make a link where they write: unpackers, patchers, copiers that
#: keep links, build tools' file commands.
_LINK_MAKERS = frozenset(
    {"tar", "gtar", "bsdtar", "unzip", "jar", "ar", "cpio", "bsdcpio", "pax", "7z", "7za",
     "7zr", "dpkg-deb", "unsquashfs", "busybox", "patch", "rsync", "cp", "mv", "install",
     "cmake", "ln", "link"}
)  # fmt: skip
#: git subcommands that leave the working tree's files as they are (the rest may check
#: out a link).
_GIT_KEEPS_TREE = frozenset(
    {"status", "log", "diff", "show", "grep", "ls-files", "ls-tree", "rev-parse", "add",
     "commit", "push", "fetch", "blame", "describe", "shortlog", "branch", "tag", "remote",
     "config", "rev-list", "cat-file", "show-ref", "for-each-ref", "version", "help",
     "reflog", "worktree", "notes", "check-ignore", "count-objects", "var", "fsck"}
)  # fmt: skip


def makes_links(words: list[Word]) -> bool:
    """Whether a command of these words may make a symbolic link in the working tree:
    its program, or behind a wrapper (``timeout 9 tar -x``, ``sudo git apply``) any word
    that may be the program."""
    names = [posixpath.basename(w.text) for w in words]
    if not names:
        return False
    wrapped = names[0] in WRAPPERS or names[0] in PRIV_WITH_ARG
    programs = names if wrapped else names[:1]
    if _LINK_MAKERS.intersection(programs):
        return True
    if "git" in programs:
        rest = [n for n in names[names.index("git") + 1 :] if not n.startswith("-")]
        return not rest or rest[0] not in _GIT_KEEPS_TREE
    return False


#: Names that make a directory another repository to git (a ``.git`` file or directory;
#: ``HEAD`` beside a ``commondir``: a git dir sharing another's refs).
_GIT_FILES = frozenset({".git", "HEAD", "commondir", "gitdir"})


def note_writes(
    words: list[Word], actions: list[Action], env: ShellEnv, cwd: str | None = None
) -> None:
    """Note in ``env`` what a command of the line (its ``words`` and ``actions``) may have
    made for the commands after it: links (``links_made``), and a ``.git``, ``HEAD`` or
    ``commondir`` (``git_files``): a program other than git that may make links, or a
    write of such a name (found as a worker: ``echo 'ref: refs/heads/main' > sub/HEAD;
    echo ../../../.git > sub/commondir; git -C sub reset --soft exo/w1`` in one line
    moved the lead's ``main``, the files not there when the line was judged). A plain
    ``mv`` or ``cp -r`` changes only the paths it names (``trees_moved``: git run where
    none of them is, or holds its ``.git``, is not reached), and an unzip of an archive
    that holds no such name makes none (``shell_unpacked``)."""
    links = makes_links(words)
    env.links_made = env.links_made or links
    named = any(isinstance(a, (WriteFile, DeleteFile)) and a.path is not None
                and posixpath.basename(a.path) in _GIT_FILES for a in actions)  # fmt: skip
    program = posixpath.basename(words[0].text) if words else ""
    if env.archives_listed and _may_rewrite(program, links, actions, env.archives_listed):
        env.git_files = True  # `unzip x.zip | cp evil.zip x.zip`: run beside the unzip
    if named or not (links and _brings_trees(program, words)):
        env.git_files = env.git_files or named
        return
    moved = _moved(program, words, actions)
    listed = no_git_files(words[1:], cwd) if program == "unzip" else None
    if moved is not None:
        env.trees_moved += moved
    elif listed is not None and not env.commands_seen:
        env.archives_listed += listed
    else:
        env.git_files = True


def _may_rewrite(
    program: str, links: bool, actions: list[Action], archives: tuple[str, ...]
) -> bool:
    """Whether a command after an unzip whose archive was listed may have rewritten it
    (run beside it, down a pipe): any but a git command that checks nothing out and
    writes no path that is, or holds, the archive."""
    if program != "git" or links:
        return True
    return any(isinstance(a, (WriteFile, DeleteFile, Unknown))
               and (getattr(a, "path", None) is None
                    or any(is_within(z, getattr(a, "path", None)) for z in archives))
               for a in actions)  # fmt: skip


#: The options of ``mv`` and ``cp`` that change nothing but how the named paths are
#: copied or moved (not ``-b``/``-S``: a backup's name is another name; ``-t`` is
#: modelled by the actions, as the last operand is).
_PLAIN_SHORT = frozenset("finvuprRaPLHdTt")
_PLAIN_LONG = frozenset(
    {"--force", "--interactive", "--no-clobber", "--verbose", "--update", "--recursive",
     "--archive", "--no-dereference", "--dereference", "--no-target-directory",
     "--strip-trailing-slashes", "--preserve", "--no-preserve", "--target-directory"}
)  # fmt: skip


def _moved(program: str, words: list[Word], actions: list[Action]) -> tuple[str, ...] | None:
    """The paths a plain ``mv`` or ``cp -r`` writes or takes away (each, and what lies
    below it, may change), or None where that is not known: another program, an option
    that names other files, a path known only at run time, an :class:`Unknown`.

    >>> _moved("mv", [Word("mv"), Word("a"), Word("b")], [WriteFile("/w/b"), DeleteFile("/w/a")])
    ('/w/b', '/w/a')
    >>> _moved("mv", [Word("mv"), Word("-b"), Word("a"), Word("b")], [WriteFile("/w/b")])
    """
    if program not in ("mv", "cp"):
        return None
    for w in words[1:]:
        text = w.text
        if w.dynamic or (text.startswith("--") and text.split("=")[0] not in _PLAIN_LONG):
            return None
        if text.startswith("-") and not text.startswith("--") and set(text[1:]) - _PLAIN_SHORT:
            return None
    paths: list[str] = []
    for action in actions:
        if isinstance(action, ReadFile):
            continue
        if not isinstance(action, (WriteFile, DeleteFile)) or action.path is None:
            return None
        paths.append(action.path)
    return tuple(paths) or None


def _brings_trees(program: str, words: list[Word]) -> bool:
    """A link maker that may bring whole directories (an unpacker, ``rsync``, ``mv``,
    ``cp -r``): not git (it checks out no ``.git``), not a ``cp`` of files or ``install``
    (what they write is named, and judged by its name)."""
    if program in ("install", "git"):
        return False
    if program != "cp":
        return True
    return any((w.text[:1] == "-" and w.text[1:2] != "-" and set(w.text[1:]) & set("rRa"))
               or w.text in ("--recursive", "--archive") for w in words[1:])  # fmt: skip


def beside_links(commands: list[SimpleCommand]) -> set[int]:
    """The commands that may run while a command that may make links does, after it has
    begun: those before it in its pipeline (its parts run at once) that wait, in a group
    or loop or for their input. Found as a worker: ``{ sleep 1; echo x >> g/config; } |
    tar -xf sym.tar`` wrote through the ``g -> ../../.git`` tar made meanwhile, the write
    judged before the link was seen. The pipeline's first command, a simple one, starts
    with it (``gunzip -c a.tgz | tar -x`` reads its archive first).

    >>> from exomonad.policy.shell_parse import parse
    >>> sorted(beside_links(parse("{ sleep 1; cat g/x; } | tar -xf a.tar", "/w")))
    [0, 1]
    >>> beside_links(parse("gunzip -c a.tgz | tar -x; tar -xf a.tar | cat", "/w"))
    set()
    """
    found: set[int] = set()
    for i, cmd in enumerate(commands):
        if not (cmd.piped_in and makes_links(list(cmd.command_words))):
            continue
        j = i
        while j > 0 and commands[j - 1].piped_out:
            j -= 1
        found.update(k for k in range(j, i) if commands[k].grouped or commands[k].piped_in)
    return found


def behind_new_links(actions: list[Action], worktree: str | None) -> list[Action]:
    """``actions`` with each file action in ``worktree`` (where a new link may lie on its
    path) made :class:`Unknown`."""
    if worktree is None:
        return actions
    out: list[Action] = []
    for action in actions:
        if isinstance(action, (ReadFile, WriteFile, DeleteFile)) and (
            action.path is None or is_within(action.path, worktree)
        ):
            out.append(Unknown(f"{action.path}: after a command that may have made links"))
        else:
            out.append(action)
    return out
