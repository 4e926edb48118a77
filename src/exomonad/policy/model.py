"""The policy author's vocabulary: :class:`Grant`, :class:`Forbid`, :class:`Role`, :class:`Policy`.

A :class:`Grant` says "this role may do actions of this type, when this predicate holds";
its ``delegate`` says what the lead's policy does when *another* agent asks for it (the
cascade's middle step). A :class:`Forbid` is an explicit deny that no grant overrides.

>>> from exomonad.policy.actions import GitPush
>>> push = Grant(GitPush, lambda a, ctx: not a.force, delegate="allow")
>>> dev = Role(push, description="pushes without force")
>>> ctx = Context(role="dev")
>>> dev.grant_for(GitPush(branch="x"), ctx) is push, dev.grant_for(GitPush(force=True), ctx)
(True, None)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Generic, Literal, TypeVar

from exomonad.policy.actions import Action
from exomonad.policy.decisions import Decision
from exomonad.policy.request import Context

__all__ = ["Delegation", "Forbid", "ForbidBase", "Grant", "GrantBase", "Policy", "Role", "Rule"]

A = TypeVar("A", bound=Action)

#: What the lead's policy does with another agent's request that the lead's grant covers:
#: ``allow`` it outright, ``ask`` the lead agent, send it to a ``human``, or ``deny`` it.
Delegation = Literal["allow", "ask", "human", "deny"]

#: A free-form rule: return a decision to settle the action, or None to fall through.
Rule = Callable[[Action, Context], Decision | None]


class GrantBase:
    """The type-erased view of a :class:`Grant`, as roles store it.

    Roles take ``GrantBase`` rather than ``Grant[Any]`` on purpose: an ``Any`` in the
    expected type would make a type checker infer ``Any`` for an inline ``when=lambda``.
    """

    action: type[Action]
    delegate: Delegation
    why: str

    def applies(self, action: Action, ctx: Context) -> bool:
        """True if ``action`` is covered."""
        raise NotImplementedError


class ForbidBase:
    """The type-erased view of a :class:`Forbid` (see :class:`GrantBase`)."""

    action: type[Action]
    reason: str

    def applies(self, action: Action, ctx: Context) -> bool:
        """True if ``action`` is forbidden."""
        raise NotImplementedError


@dataclass(frozen=True)
class Grant(GrantBase, Generic[A]):
    """Permission to perform ``action``-typed actions for which ``when`` holds.

    ``when`` receives the action already narrowed to ``action``'s type, so a type checker
    sees its fields (``Grant(GitPush, lambda a, ctx: a.branch == ctx.branch)``).
    """

    action: type[A]
    when: Callable[[A, Context], bool] | None = None
    delegate: Delegation = field(default="ask", kw_only=True)
    why: str = field(default="", kw_only=True)

    def applies(self, action: Action, ctx: Context) -> bool:
        """True if ``action`` is of this grant's type and ``when`` holds for it."""
        if not isinstance(action, self.action):
            return False
        return self.when is None or bool(self.when(action, ctx))


@dataclass(frozen=True)
class Forbid(ForbidBase, Generic[A]):
    """An explicit deny: ``action``-typed actions for which ``when`` holds are refused."""

    action: type[A]
    when: Callable[[A, Context], bool] | None = None
    reason: str = field(default="forbidden by policy", kw_only=True)

    def applies(self, action: Action, ctx: Context) -> bool:
        """True if ``action`` is of this type and ``when`` holds for it."""
        if not isinstance(action, self.action):
            return False
        return self.when is None or bool(self.when(action, ctx))


class Role:
    """A role's permission set: an ordered collection of grants.

    ``Role(*grants, description="...")``; :meth:`extend` and :meth:`without` derive new
    roles (roles are immutable).
    """

    __slots__ = ("_index", "description", "grants")

    def __init__(self, *grants: GrantBase, description: str = "") -> None:
        for grant in grants:
            if not isinstance(grant, GrantBase):
                raise TypeError(f"Role() takes Grant(...) values, got {grant!r}")
        self.grants: tuple[GrantBase, ...] = grants
        self.description = description
        self._index: dict[type[Action], tuple[GrantBase, ...]] = {}

    def extend(self, *grants: GrantBase, description: str | None = None) -> Role:
        """A new role with ``grants`` added after this role's."""
        return Role(
            *self.grants,
            *grants,
            description=self.description if description is None else description,
        )

    def without(self, *action_types: type[Action]) -> Role:
        """A new role minus every grant for one of ``action_types``."""
        kept = [g for g in self.grants if g.action not in action_types]
        return Role(*kept, description=self.description)

    def grants_for_type(self, kind: type[Action]) -> tuple[GrantBase, ...]:
        """The grants that can apply to actions of type ``kind`` (cached)."""
        found = self._index.get(kind)
        if found is None:
            found = tuple(g for g in self.grants if issubclass(kind, g.action))
            self._index[kind] = found
        return found

    def grant_for(self, action: Action, ctx: Context) -> GrantBase | None:
        """The first grant that permits ``action``, or None."""
        for grant in self.grants_for_type(type(action)):
            if grant.applies(action, ctx):
                return grant
        return None

    def __repr__(self) -> str:
        kinds = ", ".join(g.action.__name__ for g in self.grants)
        return f"Role({kinds}; {self.description!r})"


@dataclass(frozen=True, eq=False)
class Policy:
    """A complete policy: roles, explicit denies, free-form rules and settings.

    ``lead`` names the role of the team lead (the cascade's middle step);
    ``protected_branches`` are ``fnmatch`` patterns (``"release/*"``); ``mcp_servers``
    lists MCP server names that contain ``_``: Gemini's ``mcp_<server>_<tool>`` tool
    names split there first (other splits still count when they act:
    :func:`~exomonad.policy.mcp_names.riskiest`).
    """

    roles: Mapping[str, Role]
    forbid: Sequence[ForbidBase] = ()
    rules: Sequence[Rule] = ()
    lead: str = "tl"
    protected_branches: Sequence[str] = ("main", "master")
    mcp_servers: Sequence[str] = ()
    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.roles, Mapping) or not self.roles:
            raise TypeError("Policy(roles=...) must be a non-empty mapping of name -> Role")
        for name, role in self.roles.items():
            if not isinstance(name, str) or not isinstance(role, Role):
                raise TypeError(f"Policy.roles[{name!r}] must be a Role, got {role!r}")
        for item in self.forbid:
            if not isinstance(item, ForbidBase):
                raise TypeError(f"Policy.forbid takes Forbid(...) values, got {item!r}")
        for rule in self.rules:
            if not callable(rule):
                raise TypeError(f"Policy.rules takes callables, got {rule!r}")
        object.__setattr__(self, "roles", MappingProxyType(dict(self.roles)))
        object.__setattr__(self, "forbid", tuple(self.forbid))
        object.__setattr__(self, "rules", tuple(self.rules))
        object.__setattr__(self, "protected_branches", tuple(self.protected_branches))
        object.__setattr__(self, "mcp_servers", tuple(self.mcp_servers))

    def with_role(self, name: str, role: Role) -> Policy:
        """A copy with role ``name`` added or replaced."""
        return dataclasses.replace(self, roles={**self.roles, name: role})

    def replace(self, **changes: Any) -> Policy:
        """A copy with some fields changed (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)
