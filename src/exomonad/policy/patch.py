"""Codex CLI's ``apply_patch`` input → the files it writes and deletes.

The patch format (Codex's own, not a unified diff)::

    *** Begin Patch
    *** Add File: <path>        then lines starting with "+"
    *** Update File: <path>     optionally "*** Move to: <new path>", then hunks ("@@ ...")
    *** Delete File: <path>
    *** End Patch

Paths are relative to the hook's ``cwd`` (or absolute). Anything that is not a well-formed
patch with at least one file operation reads as None (the caller makes it ``Unknown``,
which the policy escalates).

>>> patch_actions("*** Begin Patch\\n*** Add File: a.txt\\n+hi\\n*** End Patch\\n", "/w")
[WriteFile(path='/w/a.txt')]
>>> moved = patch_actions("*** Begin Patch\\n*** Update File: a\\n*** Move to: /t/b\\n@@\\n"
...                       "-x\\n+y\\n*** Delete File: c\\n*** End Patch", "/w")
>>> [a.describe() for a in moved or []]
['write /w/a', 'delete /w/a', 'write /t/b', 'delete /w/c']
>>> patch_actions("rm -rf /", "/w") is None
True
"""

from __future__ import annotations

from exomonad.policy.actions import Action, DeleteFile, WriteFile
from exomonad.policy.shell_parse import resolve_path

__all__ = ["patch_actions"]

_BEGIN, _END = "*** Begin Patch", "*** End Patch"
_ADD, _UPDATE, _DELETE, _MOVE = ("*** Add File: ", "*** Update File: ", "*** Delete File: ",
                                 "*** Move to: ")  # fmt: skip
#: What may follow a file header: hunk headers and lines of a hunk or an added file.
_BODY = ("@@", "+", "-", " ", "*** End of File")


def _target(line: str, prefix: str, cwd: str | None) -> str | None:
    path = line[len(prefix) :].strip()
    return resolve_path(cwd, path) if path and "\0" not in path else None


def patch_actions(text: str, cwd: str | None) -> list[Action] | None:
    """The actions of the patch ``text`` applied in ``cwd``; None if it does not parse."""
    lines = text.strip("\n").split("\n")
    if len(lines) < 2 or lines[0].strip() != _BEGIN or lines[-1].strip() != _END:
        return None
    actions: list[Action] = []
    current: str | None = None  # the header of the file being read
    for line in lines[1:-1]:
        if line.startswith((_ADD, _UPDATE, _DELETE)):
            prefix = next(p for p in (_ADD, _UPDATE, _DELETE) if line.startswith(p))
            path = _target(line, prefix, cwd)
            if path is None:
                return None
            actions.append(DeleteFile(path) if prefix == _DELETE else WriteFile(path))
            current = prefix
        elif line.startswith(_MOVE):
            dest = _target(line, _MOVE, cwd)
            if current != _UPDATE or dest is None:
                return None
            source = actions[-1].path if isinstance(actions[-1], WriteFile) else None
            actions += [DeleteFile(source), WriteFile(dest)]
            current = _MOVE
        elif current in (_ADD, _UPDATE, _MOVE) and (line.startswith(_BODY) or line == ""):
            continue
        else:  # text outside any file, or body lines after a Delete
            return None
    return actions or None
