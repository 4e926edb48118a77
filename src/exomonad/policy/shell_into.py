"""What a copy writes inside the directory it copies into.

``cp x/.mcp.json .`` writes ``./.mcp.json``, and ``cp -r x/.claude .`` writes
``./.claude`` (with the hooks of the settings inside): judged only as a write of ``.``,
both replaced an agent's settings in a fourth round of probing. A copy's target may be a
directory, so each source's name below it is written too. A copy of a directory's
contents (``cp -r x/. .``, ``rsync -a x/ .``) writes names the command line does not
show: into the directory the command runs in, or one above it (a checkout's root, where
the settings live), that is Unknown.

>>> [a.describe() for a in into_directory([Word("x/.mcp.json")], Word("."), "/w")]
['write /w/.mcp.json']
>>> into_directory([Word("x/.")], Word("."), "/w")[0].describe()
'unrecognised: copies the contents of x/. into /w: the names it writes are not known'
>>> into_directory([Word("src/.")], Word("build/"), "/w")
[]
>>> into_directory([Word("a")], Word("b"), "/w")  # b: a file, or a directory
[]
"""

from __future__ import annotations

import posixpath

from exomonad.policy.actions import Action, Unknown, WriteFile
from exomonad.policy.shell_env import is_within
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_paths import resolve_path
from exomonad.util.paths import real_path

__all__ = ["into_directory"]


def into_directory(
    sources: list[Word],
    target: Word,
    cwd: str | None,
    *,
    slash_is_contents: bool = False,
    named_dir: bool = False,
) -> list[Action]:
    """The writes of copying ``sources`` into ``target`` as a directory (beside the write
    of ``target`` itself, which the caller records), when it surely is one (``-t``,
    several sources: ``named_dir``; ``dir/``, ``.``, ``..``) or is where the command runs
    or above it (a checkout's root). ``slash_is_contents``: a source ending in ``/``
    copies its contents (rsync), not the directory."""
    where = resolve_path(cwd, target)
    if where is None:
        return []
    # `here -> .`: a link to where the command runs (or above) is the same directory;
    # where either's links cannot be followed, it may be
    real_cwd, real_where = (real_path(cwd), real_path(where)) if cwd is not None else ("", "")
    above = cwd is not None and (
        is_within(cwd, where) or real_cwd is None or real_where is None
        or is_within(real_cwd, real_where)
    )  # fmt: skip
    named_dir = named_dir or target.text.endswith("/") or posixpath.basename(
        target.text
    ) in (".", "..")  # fmt: skip
    if not (above or named_dir):
        return []
    out: list[Action] = []
    for source in sources:
        text = source.text
        contents = text.endswith(("/.", "/./")) or text == "." or (
            slash_is_contents and text.endswith("/")
        )  # fmt: skip
        if contents:
            if above:
                out.append(Unknown(f"copies the contents of {text} into {where}: the names "
                                   "it writes are not known"))  # fmt: skip
            continue
        name = posixpath.basename(text.rstrip("/"))
        if source.dynamic or not name or name in (".", ".."):
            continue
        out.append(WriteFile(posixpath.join(where, name)))
    return out
