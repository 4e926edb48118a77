"""Tilde expansion as bash makes it: ``~``, ``~user`` and the directory stack's ``~+``,
``~-``, ``~N``, also on each word a brace expansion made (bash expands braces first)."""

from __future__ import annotations

import os
import re

from exomonad.policy.shell_brace import Item

__all__ = ["tilde_after_braces", "tilde_text"]

#: The part after ``~`` that names the directory stack: ``+``, ``-``, ``N``, ``+N``, ``-N``.
_DIR_STACK = re.compile(r"[+-]\d*|\d+")


def _dir_stack(spec: str) -> str:
    """The expansion bash makes of ``~SPEC`` (``SPEC`` matching :data:`_DIR_STACK`):
    ``$PWD`` for ``+`` and ``+0`` (and ``0``), ``$OLDPWD`` for ``-``, else an entry of
    ``DIRSTACK`` (``~N`` and ``~+N`` count from its top, ``~-N`` from its bottom).

    >>> [_dir_stack(s) for s in ("+", "+0", "-", "1", "+2")]
    ['$PWD', '$PWD', '$OLDPWD', '${DIRSTACK[1]}', '${DIRSTACK[2]}']
    >>> _dir_stack("-0"), _dir_stack("-1")
    ('${DIRSTACK[-1]}', '${DIRSTACK[-2]}')
    """
    if spec in ("+", "+0", "0"):
        return "$PWD"
    if spec == "-":
        return "$OLDPWD"
    if spec.startswith("-"):
        return f"${{DIRSTACK[-{int(spec[1:]) + 1}]}}"
    return f"${{DIRSTACK[{int(spec.lstrip('+'))}]}}"


def tilde_text(prefix: str) -> tuple[str, bool]:
    """What bash makes of the tilde-prefix ``prefix`` (``~``, ``~user``, ``~+``...), and
    whether that is known only at run time (the directory stack, :func:`_dir_stack`)."""
    if _DIR_STACK.fullmatch(prefix[1:]):
        return _dir_stack(prefix[1:]), True
    if "\0" in prefix:  # ~\0: no such user
        return prefix, True
    return os.path.expanduser(prefix), False


def tilde_after_braces(chars: list[Item]) -> tuple[str, bool]:
    """A word brace expansion made (its characters, each with whether it is unquoted)
    after bash's tilde expansion, which comes next (:func:`tilde_text` on a prefix up
    to the first ``/`` that is all unquoted), and whether it is known only at run time.
    Found trying the gate as a worker: ``grep -r SECRET {~+/../..,.}`` printed the
    lead's token, allowed as a read of a directory ``~+`` in the worktree, and ``cat
    {~,x}/.ssh/id_rsa`` and ``tee -a {~,.}/.bash_profile`` were allowed the same way."""
    text = "".join(c for c, _ in chars)
    if not chars or chars[0] != ("~", True):
        return text, False
    end = text.find("/") if "/" in text else len(text)
    if not all(bare for _, bare in chars[:end]):
        return text, False
    expanded, dynamic = tilde_text(text[:end])
    return expanded + text[end:], dynamic
