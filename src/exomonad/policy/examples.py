"""Built-in examples: a policy's own test cases, run before it is ever swapped in.

A policy module may define ``examples``: a list of :class:`Example` or of tuples
``(subject, role, expected)``. The subject is a shell command (``str``, run through the
runtime's shell tool), a :class:`Call` (a raw tool call) or an
:class:`~exomonad.policy.actions.Action`. ``expected`` is ``"allow"``, ``"deny"``,
``"tl"`` or ``"human"`` (or a decision object; only its kind and ``to`` are compared).

Examples run in a fixed, fictional checkout (:data:`EXAMPLE_PROJECT`): the lead works in
``/repo`` on ``main``; any other agent, by default ``<role>1``, in
``/repo/.worktrees/<agent>`` on branch ``feature/<agent>``.

>>> from exomonad.policy.default import DEFAULT_POLICY
>>> [r.passed for r in run_examples(DEFAULT_POLICY, [("git push origin main", "dev", "human"),
...                                                  ("ls", "dev", "deny")])]
[True, False]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from exomonad import runtimes
from exomonad.policy.actions import Action
from exomonad.policy.cascade import context_for, decide_request, judge_all
from exomonad.policy.decisions import Decision, DecisionLabel, label, parse_label
from exomonad.policy.model import Policy
from exomonad.policy.request import Runtime, ToolRequest

__all__ = [
    "EXAMPLE_PROJECT",
    "Call",
    "Example",
    "ExampleResult",
    "ExampleSpec",
    "as_example",
    "run_examples",
]

#: The project root examples run in.
EXAMPLE_PROJECT = "/repo"


@dataclass(frozen=True)
class Call:
    """A raw tool call, as the runtime's hook would report it."""

    tool: str
    input: Mapping[str, Any] = field(default_factory=dict, hash=False)
    runtime: Runtime = "claude"


@dataclass(frozen=True)
class Example:
    """One expected decision. ``None`` fields take the defaults described above."""

    subject: str | Call | Action
    role: str
    expect: DecisionLabel | Decision
    agent: str | None = None
    cwd: str | None = None
    worktree: str | None = None
    branch: str | None = None
    runtime: Runtime = "claude"

    def describe(self) -> str:
        """A one-line summary of the subject."""
        subject = self.subject
        if isinstance(subject, str):
            return subject
        if isinstance(subject, Call):
            return f"{subject.tool} {dict(subject.input)}"
        return subject.describe()

    def request(self, policy: Policy) -> ToolRequest:
        """The :class:`ToolRequest` this example stands for (subject must not be an Action)."""
        is_lead = self.role == policy.lead
        agent = self.agent or ("lead" if is_lead else f"{self.role}1")
        worktree = (
            self.worktree
            if self.worktree is not None
            else (None if is_lead else f"{EXAMPLE_PROJECT}/.worktrees/{agent}")
        )
        cwd = self.cwd or worktree or EXAMPLE_PROJECT
        branch = self.branch or ("main" if is_lead else f"feature/{agent}")
        subject = self.subject
        if isinstance(subject, str):
            tool = runtimes.get(self.runtime).shell_tool() or "Bash"
            runtime, name, data = self.runtime, tool, {"command": subject}
        elif isinstance(subject, Call):
            runtime, name, data = subject.runtime, subject.tool, dict(subject.input)
        else:
            raise TypeError("an Action example has no raw request")
        return ToolRequest(
            runtime=runtime,
            role=self.role,
            agent=agent,
            tool_name=name,
            tool_input=data,
            cwd=cwd,
            worktree=worktree,
            branch=branch,
        )


@dataclass(frozen=True)
class ExampleResult:
    """The outcome of one example."""

    example: Example
    actual: Decision
    actions: tuple[Action, ...]

    @property
    def expected_label(self) -> DecisionLabel:
        """What the example expects, as a label."""
        expect = self.example.expect
        return label(parse_label(expect) if isinstance(expect, str) else expect)

    @property
    def passed(self) -> bool:
        """The actual decision has the expected kind (and ``to``)."""
        return label(self.actual) == self.expected_label


#: What a policy's ``examples`` list may hold.
ExampleSpec = Example | tuple[str | Call | Action, str, DecisionLabel | Decision]


def as_example(item: object) -> Example:
    """Accept an :class:`Example` or a ``(subject, role, expected)`` tuple; else TypeError."""
    if isinstance(item, Example):
        example = item
    elif isinstance(item, tuple) and len(item) == 3:
        example = Example(*item)
    else:
        raise TypeError(
            f"an example must be Example(...) or (subject, role, expected), got {item!r}"
        )
    if not isinstance(example.subject, str | Call | Action) or not isinstance(example.role, str):
        raise TypeError(f"bad example subject or role: {item!r}")
    if isinstance(example.expect, str):
        parse_label(example.expect)  # ValueError if it names no decision
    return example


def run_examples(policy: Policy, examples: Iterable[object]) -> list[ExampleResult]:
    """Judge every example with ``policy`` (state dir ``/repo/.exomonad``)."""
    results = []
    for item in examples:
        example = as_example(item)
        state_dir = f"{EXAMPLE_PROJECT}/.exomonad"
        if isinstance(example.subject, Action):
            probe = dataclasses.replace(example, subject="true")
            ctx = context_for(
                probe.request(policy), policy, project_root=EXAMPLE_PROJECT, state_dir=state_dir
            )
            decision, _ = judge_all(policy, [example.subject], ctx)
            actions: list[Action] = [example.subject]
        else:
            decision, actions, _ = decide_request(
                policy, example.request(policy), project_root=EXAMPLE_PROJECT, state_dir=state_dir
            )
        results.append(ExampleResult(example, decision, tuple(actions)))
    return results
