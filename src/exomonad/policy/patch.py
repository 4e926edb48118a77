"""Codex CLI's ``apply_patch`` input → the files it writes and deletes.

The patch format (Codex's own, not a unified diff)::

    *** Begin Patch
    *** Add File: <path>        then lines starting with "+"
    *** Update File: <path>     optionally "*** Move to: <new path>", then hunks ("@@ ...")
    *** Delete File: <path>
    *** End Patch

Paths are relative to the hook's ``cwd`` (or absolute). The text is read by the rules of
Codex's own parser (as Codex 0.169 applies it), so no operation Codex applies is missed: the
whole text and each header line are trimmed of whitespace (a `` *** Add File:`` after an
added file's lines is a header, not a line of that file), lines end at ``\n`` or
``\r\n``, a ``<<'EOF'`` ... ``EOF`` wrapper is taken off, ``*** Move to:`` must follow its
``Update File`` at once, and an update's lines stop at one starting with ``*``. Anything
that is not a well-formed patch with at least one file operation, or that could be read
two ways (a context line that reads as a header once trimmed, a path with leading
blanks), reads as None (the caller makes it ``Unknown``, which the policy escalates).

``apply_patch`` run through a shell (``apply_patch <<'EOF'``, ``applypatch PATCH``,
``codex --codex-run-as-apply-patch PATCH``) is read the same: :func:`shell_patch_actions`.

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

import re
from collections.abc import Sequence

from exomonad.policy.actions import Action, DeleteFile, Unknown, WriteFile
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_parse import SimpleCommand
from exomonad.policy.shell_paths import resolve_path

__all__ = ["apply_patch_args", "patch_actions", "shell_patch_actions"]

_BEGIN, _END = "*** Begin Patch", "*** End Patch"
_ADD, _UPDATE, _DELETE, _MOVE = ("*** Add File: ", "*** Update File: ", "*** Delete File: ",
                                 "*** Move to: ")  # fmt: skip
_EOF = "*** End of File"
#: What Codex trims around markers (Rust's ``char::is_whitespace``). Python's bare
#: ``strip()`` also takes U+001C..U+001F, which Codex leaves: a line led by one is no header.
_TRIM = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008" \
        "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"  # fmt: skip
#: The wrappers Codex's lenient mode takes off (``<<'EOF'`` ... a last line ending "EOF").
_HEREDOC_OPENERS = ("<<EOF", "<<'EOF'", '<<"EOF"')
#: A context line that, stripped, reads as a marker: a header to some reading (another
#: Codex version, a line Codex trims), so the patch is escalated rather than guessed.
_MARKER = re.compile(r"\*\*\*\s*(add|delete|update|move|begin|end)\b", re.IGNORECASE)
#: Codex's ``apply_patch`` under its own names (Codex puts both on its shell's PATH).
_PROGRAMS = frozenset({"apply_patch", "applypatch"})
#: ``codex <this> PATCH`` runs the same program (whatever runs ``codex``, with any name).
_RUN_AS_PATCH = "--codex-run-as-apply-patch"


class _Invalid(Exception):
    """Not a patch Codex applies, or one it may read otherwise than we do."""


def _lines(text: str) -> list[str]:
    """``text`` cut into lines as Codex cuts it: trimmed, split at ``\\n``, a ``\\r``
    before it dropped (U+2028 and a lone ``\\r`` end no line)."""
    return [line.removesuffix("\r") for line in text.strip(_TRIM).split("\n")]


def _framed(lines: list[str]) -> bool:
    return (len(lines) >= 2 and lines[0].strip(_TRIM) == _BEGIN
            and lines[-1].strip(_TRIM) == _END)  # fmt: skip


def _body(lines: list[str]) -> list[str]:
    """The lines between the markers, inside the ``<<'EOF'`` wrapper Codex also takes."""
    if _framed(lines):
        return lines[1:-1]
    if (len(lines) >= 4 and lines[0] in _HEREDOC_OPENERS and lines[-1].endswith("EOF")
            and _framed(lines[1:-1])):  # fmt: skip
        return lines[2:-2]
    raise _Invalid


def _path(line: str, prefix: str, cwd: str | None) -> str:
    """The path after ``prefix``. Codex keeps leading blanks (``*** Add File:  x`` is
    `` x``): such a path is escalated rather than read one way."""
    path = line[len(prefix) :]
    resolved = resolve_path(cwd, path) if path and path == path.strip() else None
    if resolved is None or "\0" in path:
        raise _Invalid
    return resolved


def _chunk(body: list[str], i: int) -> int:
    """The end of the chunk of an ``Update File`` whose lines start at ``body[i]``."""
    start = i
    while i < len(body):
        line = body[i]
        if line.rstrip(_TRIM) == _EOF and i > start:  # Codex 0.169 trims its end
            return i + 1
        if line[:1] not in ("", " ", "+", "-"):
            break
        if line.startswith(" ") and _MARKER.match(line.strip()):
            raise _Invalid
        i += 1
    if i == start:
        raise _Invalid
    return i


def _update(body: list[str], i: int) -> int:
    """Skip the chunks of an ``Update File`` from ``body[i]``: the index of the next header.
    Only the first chunk may lack its ``@@`` line; blank lines between chunks are skipped."""
    first = True
    while i < len(body) and not body[i].startswith("*"):
        if not body[i].strip(_TRIM):
            i += 1
            continue
        if body[i] == "@@" or body[i].startswith("@@ "):
            i += 1
        elif not first:
            raise _Invalid
        i, first = _chunk(body, i), False
    if first:
        raise _Invalid
    return i


def _hunks(body: list[str], cwd: str | None) -> list[Action]:
    actions: list[Action] = []
    i = 0
    while i < len(body):
        header, i = body[i].strip(_TRIM), i + 1  # Codex trims a header line
        if header.startswith(_ADD):
            actions.append(WriteFile(_path(header, _ADD, cwd)))
            while i < len(body) and body[i].startswith("+"):
                i += 1
        elif header.startswith(_DELETE):
            actions.append(DeleteFile(_path(header, _DELETE, cwd)))
        elif header.startswith(_UPDATE):
            source = _path(header, _UPDATE, cwd)
            actions.append(WriteFile(source))
            move = body[i].rstrip(_TRIM) if i < len(body) else ""  # right after; its
            if move.startswith(_MOVE):  # end trimmed, its start not (" *** Move" is context)
                actions += [DeleteFile(source), WriteFile(_path(move, _MOVE, cwd))]
                i += 1
            i = _update(body, i)
        else:
            raise _Invalid
    return actions


def patch_actions(text: str, cwd: str | None) -> list[Action] | None:
    """The actions of the patch ``text`` applied in ``cwd``; None if it does not parse."""
    try:
        return _hunks(_body(_lines(text)), cwd) or None
    except _Invalid:
        return None


def apply_patch_args(name: str, args: Sequence[Word]) -> Sequence[Word] | None:
    """The arguments of Codex's ``apply_patch`` when program ``name`` runs it, else None."""
    if name in _PROGRAMS:
        return args
    texts = [w.text for w in args]  # `codex <flag> PATCH`, `node codex.js <flag> PATCH`
    return args[texts.index(_RUN_AS_PATCH) + 1 :] if _RUN_AS_PATCH in texts else None


def _stdin(cmd: SimpleCommand) -> str | None:
    """The here-document or here-string ``cmd`` reads, when its text is known exactly."""
    if cmd.piped_in:
        return None
    redirs = [r for r in cmd.redirs if r.fd in (None, 0) and r.op.startswith("<")]
    if len(redirs) != 1 or redirs[0].op not in ("<<", "<<<"):
        return None
    redir = redirs[0]
    if redir.op == "<<<":
        return None if redir.target.dynamic else redir.target.text + "\n"
    body = redir.heredoc
    if body is None or (not redir.target.quoted and any(c in body for c in "$`\\")):
        return None  # expanded by the shell: not the text we would read
    return body


def shell_patch_actions(args: Sequence[Word], cmd: SimpleCommand, cwd: str | None) -> list[Action]:
    """``apply_patch PATCH`` or ``apply_patch <<'EOF'`` in a shell (what Codex runs for
    both): the patch's actions, Unknown when its text is not known exactly."""
    if len(args) == 1:
        text = None if args[0].dynamic or args[0].glob else args[0].text
    else:
        text = _stdin(cmd) if not args else None
    found = patch_actions(text, cwd) if text is not None else None
    return found if found is not None else [Unknown("apply_patch: " + (text or "?")[:200])]
