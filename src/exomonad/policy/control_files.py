"""The files that carry ExoMonad's gate into an agent, and the paths that reach them.

Every runtime's settings (its hooks, its MCP server), Claude Code's local settings and
the project's MCP config are *control files*; the directories holding them (``.claude``,
``.gemini``, ``.codex``) are *control directories*. A write or delete reaches them when
its path is one of them, a glob that could name one, or, for a recursive delete, a
checkout root or a directory above it (``rm -rf .`` removes ``.claude`` too).

Globs are matched case-insensitively, whatever the shell's options: bash with ``shopt
-s nocaseglob`` matches ``.CLAUD[E]`` to ``.claude`` (and ``.EXOMONA[D]`` to the state
dir), and tracking ``shopt`` through a command line is harder than ignoring case.

>>> names_control("/w/.claude"), names_control("/w/.claude/settings.local.json")
(True, True)
>>> names_control("/w/.claude/commands/x.md"), names_control("/w/.CLAUD[E]")
(False, True)
"""

from __future__ import annotations

import posixpath

from exomonad import runtimes
from exomonad.policy.shell_globs import shell_match

__all__ = [
    "CONTROL_DIRS",
    "CONTROL_FILES",
    "GLOB_CHARS",
    "fold_glob",
    "git_glob_reaches",
    "is_glob",
    "names_control",
    "patterns_may_name_control",
    "under_control_dir",
]

#: Files that carry ExoMonad's gate into an agent: every runtime's settings (its hooks,
#: its MCP server), Claude Code's local settings and the project's MCP config; each
#: relative to a checkout's root.
CONTROL_FILES: tuple[str, ...] = (
    *(r.settings_file for r in runtimes.RUNTIMES.values() if r.settings_file),
    ".claude/settings.local.json",
    ".mcp.json",
)
#: The directories holding control files (``.claude``, ``.codex``, ``.gemini``).
CONTROL_DIRS: tuple[str, ...] = tuple(
    sorted({f.split("/", 1)[0] for f in CONTROL_FILES if "/" in f})
)
#: What makes a word a glob for the shell (the lexer has expanded braces already: a ``{``
#: left is a literal, as in ``awk '{print $1}'``).
GLOB_CHARS = "*?["


def is_glob(text: str) -> bool:
    """``text`` holds a glob character (``*?[``)."""
    return any(c in text for c in GLOB_CHARS)


def fold_glob(text: str) -> str:
    """``text`` lowered if it is a glob (so it matches lowered names as ``nocaseglob``
    would: bash folds both the pattern and the name), else unchanged: a literal path is
    looked up as written, and case counts on the file systems agents work on.

    >>> fold_glob("../../.EXOMONA[D]/LEAD.TOKE[N]"), fold_glob("README.MD")
    ('../../.exomona[d]/lead.toke[n]', 'README.MD')
    """
    return text.lower() if is_glob(text) else text


def names_control(path: str) -> bool:
    """``path`` (absolute, normalised) is a control file or directory, or a glob that
    could name one (case ignored): the last parts of the glob could match a control
    file's path (``.claude/settings.js*``, ``.mcp.js[o]n``) or a control directory's
    name (``.clau*``, ``.[cg]*``). ``*`` skips dot names, as the shell's does.

    >>> [names_control(p) for p in ("/w/.mcp.js[o]n", "/w/*/settings.json", "/w/*.json")]
    [True, False, False]
    """
    path = path.rstrip("/") or "/"
    if not is_glob(path):
        base = posixpath.basename(path)
        return base in CONTROL_DIRS or any(path.endswith("/" + f) for f in CONTROL_FILES)
    parts = path.lower().split("/")
    targets = [*CONTROL_FILES, *CONTROL_DIRS]
    return any(_tail_matches(parts, t.split("/")) for t in targets)


def _tail_matches(parts: list[str], names: list[str]) -> bool:
    """The last ``len(names)`` of ``parts`` could match ``names`` (a ``**`` part matches
    anything)."""
    if len(parts) < len(names):
        return False
    return all(_part_matches(p, n) for p, n in zip(parts[-len(names) :], names, strict=True))


def _part_matches(pattern: str, name: str) -> bool:
    """A shell glob's matching of one path part (no dotglob; ``**`` matches anything)."""
    if "**" in pattern:
        return True
    if name.startswith(".") and not pattern.startswith("."):
        return False
    return shell_match(name, pattern)


def git_glob_reaches(pattern: str, roots: tuple[str, ...]) -> bool:
    """The git pathspec glob ``pattern`` (absolute) could match a control file below
    one of ``roots``: git's ``*`` also matches ``/`` and leading dots (``git checkout
    REV -- '*.json'`` restores ``.claude/settings.json``); case ignored.

    >>> git_glob_reaches("/w/*.json", ("/w",)), git_glob_reaches("/w/src/*.json", ("/w",))
    (True, False)
    """
    pattern = pattern.lower()
    return any(
        shell_match(f"{root}/{name}", pattern, fold=True)
        for root in roots
        for name in (*CONTROL_FILES, *CONTROL_DIRS)
    )


def patterns_may_name_control(patterns: tuple[str, ...]) -> bool:
    """Whether an entry whose name matches one of ``patterns`` (``find -name``'s) could
    be a control file or directory, whatever the case.

    >>> patterns_may_name_control(("*.pyc",)), patterns_may_name_control(("*.json",))
    (False, True)
    >>> patterns_may_name_control(("\\\\.mcp.json",))
    True
    """
    names = {posixpath.basename(f) for f in CONTROL_FILES} | set(CONTROL_DIRS)
    # find reads `\x` as `x` (`-name '\.mcp.json'`); dropping the backslash only widens
    plain = [p.replace("\\", "").lower() for p in patterns]
    return any(shell_match(n, p, fold=True) for p in plain for n in names)


def under_control_dir(path: str) -> bool:
    """``path`` lies in an agent's configuration directory (``.claude``, ``.gemini``,
    ``.codex``) at any depth, or is one, whatever the case of a glob: what a worker may
    not write in its worktree. Found probing: a skill a worker wrote
    (``.claude/skills/x/SKILL.md``) ran shell commands no hook saw when it was invoked,
    and rewrote the settings; a Gemini extension, policy or ``.gemini/.env``, Codex's
    rules, an agent's frontmatter hooks configure the gate in the same way.

    >>> under_control_dir("/w/.claude/skills/x/SKILL.md"), under_control_dir("/w/src/a.py")
    (True, False)
    """
    parts = fold_glob(path).split("/")
    return any(
        part in CONTROL_DIRS
        or (is_glob(part) and any(shell_match(d, part, fold=True) for d in CONTROL_DIRS))
        for part in parts
    )
