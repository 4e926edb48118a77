"""Shared state and small helpers for the shell classifiers (what the agent's checkout is)."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from exomonad.policy.shell_lex import Word

__all__ = ["ShellEnv", "is_within", "scan_options"]


def is_within(path: str | None, root: str | None) -> bool:
    """True if ``path`` is ``root`` or below it (lexically); False if either is unknown.

    >>> is_within("/w/a/b", "/w/a"), is_within("/w/ab", "/w/a"), is_within(None, "/w")
    (True, False, False)
    """
    if path is None or root is None:
        return False
    root = posixpath.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


@dataclass
class ShellEnv:
    """What one classification knows about the agent's checkout; mutable per command line.

    ``branch`` is the branch checked out in ``worktree`` (or in ``start_cwd`` when the
    worktree is unknown). A ``git checkout``/``switch`` earlier in the same command line
    makes it unknown (``branch_moved``).
    """

    worktree: str | None = None
    branch: str | None = None
    start_cwd: str | None = None
    branch_moved: bool = False

    def branch_in(self, repo: str | None) -> str | None:
        """The branch checked out in ``repo``, if known."""
        if self.branch_moved or self.branch is None:
            return None
        if self.worktree is not None:
            return self.branch if is_within(repo, self.worktree) else None
        return self.branch if repo is not None and repo == self.start_cwd else None


def scan_options(
    args: list[Word], with_arg: frozenset[str]
) -> tuple[list[Word], dict[str, list[Word | None]]]:
    """Split ``args`` into positionals and options (``--x=y``, ``--x y``, ``-x y``).

    Options in ``with_arg`` take the next word as their value; ``--`` ends options.

    >>> pos, opts = scan_options([Word("-B"), Word("dev"), Word("7"), Word("--x=1")],
    ...                          frozenset({"-B"}))
    >>> [w.text for w in pos], {k: [v.text if v else None for v in vs] for k, vs in opts.items()}
    (['7'], {'-B': ['dev'], '--x': ['1']})
    """
    positionals: list[Word] = []
    opts: dict[str, list[Word | None]] = {}
    i = 0
    while i < len(args):
        word = args[i]
        text = word.text
        if text == "--":
            positionals.extend(args[i + 1 :])
            break
        if text.startswith("--") and "=" in text:
            key, _, inline = text.partition("=")
            opts.setdefault(key, []).append(Word(inline, word.dynamic, word.quoted))
        elif text.startswith("-") and len(text) > 1:
            value: Word | None = None
            if text in with_arg and i + 1 < len(args):
                value = args[i + 1]
                i += 1
            elif text[:2] in with_arg and len(text) > 2 and not text.startswith("--"):
                value = Word(text[2:], word.dynamic, word.quoted)
                text = text[:2]
            opts.setdefault(text, []).append(value)
        else:
            positionals.append(word)
        i += 1
    return positionals, opts
