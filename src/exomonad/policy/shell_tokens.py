"""The tokens :func:`~exomonad.policy.shell_lex.lex` makes: words, operators, redirections."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Op", "Redir", "Token", "Word"]


@dataclass(frozen=True, slots=True)
class Word:
    """A shell word after quote removal. Expansions are left verbatim in ``text``.

    ``glob`` is true when an unquoted ``*``, ``?``, ``[`` or a brace expansion
    (``{a,b}``, ``{1..3}``) may turn the word into other or several words.
    """

    text: str
    dynamic: bool = False
    quoted: bool = False
    subs: tuple[str, ...] = ()
    glob: bool = False


@dataclass(frozen=True, slots=True)
class Op:
    """A control operator: ``&&``, ``||``, ``;``, ``&``, ``|``, ``(``, ``)``, ``;;``, newline."""

    text: str


@dataclass(slots=True)
class Redir:
    """A redirection. ``heredoc`` holds the body of ``<<``/``<<-`` once read."""

    op: str
    target: Word
    fd: int | None = None
    heredoc: str | None = None
    subs: tuple[str, ...] = field(default=(), repr=False)


Token = Word | Op | Redir
