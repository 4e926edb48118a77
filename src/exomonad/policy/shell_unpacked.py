"""What an unzip at the start of a line unpacks, read from the archive when judged.

An unpacker may make a ``.git`` (or a ``HEAD`` beside a ``commondir``) that makes git
take a directory of the worktree for another repository (``shell_links.note_writes``:
``tar xf t.tar && git commit`` committed onto the lead's ``main``). But ``unzip -o x.zip
&& git add -A`` with an archive of sources makes none: where the line's first command is
a plain ``unzip`` of a regular file in the worktree (bounded), its members are listed,
and only a member named ``.git``, ``HEAD``, ``commondir`` or ``gitdir`` (any part of its
name, any case) counts; an archive that is not there unpacks nothing (``unzip`` fails).
Anything else (an option that renames or runs, a name made at run time, an archive a
command of the line before it, or one after it but a git command that checks nothing out,
may have written: ``shell_links.note_writes``; one that cannot be read) is not known.

>>> from exomonad.policy.shell_lex import Word
>>> no_git_files([Word("-o"), Word("missing.zip")], "/nonexistent/w")
('/nonexistent/w/missing.zip', '/nonexistent/w/missing.zip.zip', '/nonexistent/w/missing.zip.ZIP')
>>> no_git_files([Word("-o"), Word("$z", dynamic=True)], "/nonexistent/w") is None
True
"""

from __future__ import annotations

import os
import posixpath
import stat
import zipfile

from exomonad.policy.shell_lex import Word

__all__ = ["no_git_files"]

#: Names that make a directory another repository to git.
_GIT_NAMES = frozenset({".git", "head", "commondir", "gitdir"})
#: unzip's options that change nothing but whether and how quietly members are written
#: (``-d DIR``: where, judged as a write there; ``-x``: members left out).
_PLAIN = frozenset("oqnufx")
#: The largest archive and the most members listed.
_MAX_BYTES = 256 << 20
_MAX_MEMBERS = 20000


def no_git_files(args: list[Word], cwd: str | None) -> tuple[str, ...] | None:
    """The paths ``unzip ARGS`` run in ``cwd`` may read its archive from, where it surely
    makes no name that may make git take a directory for another repository (None: it
    may, or that is not known)."""
    archive: str | None = None
    i = 0
    while i < len(args):
        w = args[i]
        if w.dynamic or w.glob or any(c in w.text for c in "*?[\\"):
            return None  # unzip expands wildcards itself
        if w.text.startswith("-"):
            letters = w.text[1:]
            if "d" in letters:  # -d DIR, -dDIR: where, judged as a write there
                letters, _, value = letters.partition("d")
                i += 0 if value else 1
            if not w.text[1:] or set(letters) - _PLAIN:
                return None
        elif archive is None:
            archive = w.text
        i += 1
    if archive is None or cwd is None:
        return None
    path = posixpath.normpath(posixpath.join(cwd, archive))
    tried = (path, path + ".zip", path + ".ZIP")  # unzip tries each in turn
    found = [p for p in tried if os.path.lexists(p)]
    return tried if not found or _members_plain(found[0]) else None


def _members_plain(path: str) -> bool:
    """Whether the regular file at ``path`` is a zip archive none of whose members is
    named as a git dir's files are (read bounded; False where it cannot be read)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_BYTES:
            return False
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except (OSError, zipfile.BadZipFile, ValueError, RuntimeError):
        return False
    if len(infos) > _MAX_MEMBERS:
        return False
    return not any(
        part.lower() in _GIT_NAMES
        for info in infos
        for part in info.filename.replace("\\", "/").split("/")
    )
