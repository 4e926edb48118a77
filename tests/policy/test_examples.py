"""The examples runner: subjects of every kind, expectations, defaults, malformed input."""

from __future__ import annotations

import pytest

from exomonad.policy.actions import GitPush, ReadFile
from exomonad.policy.decisions import Deny, Escalate
from exomonad.policy.default import DEFAULT_POLICY
from exomonad.policy.default import examples as builtin_examples
from exomonad.policy.examples import EXAMPLE_PROJECT, Call, Example, as_example, run_examples


def test_the_builtin_policy_passes_its_own_examples() -> None:
    results = run_examples(DEFAULT_POLICY, builtin_examples)
    assert len(results) >= 20
    assert [r.example.describe() for r in results if not r.passed] == []


def test_each_subject_kind() -> None:
    results = run_examples(
        DEFAULT_POLICY,
        [
            ("git push origin feature/dev1", "dev", "allow"),
            (Call("Write", {"file_path": f"{EXAMPLE_PROJECT}/.exomonad/x"}), "dev", "deny"),
            (Call("run_shell_command", {"command": "gh pr merge 1"}, "gemini"), "tl", "human"),
            (GitPush("origin", "feature/dev1"), "dev", "allow"),
            (ReadFile("/repo/x"), "worker", Escalate("tl")),  # wrong on purpose: it's allowed
        ],
    )
    assert [r.passed for r in results] == [True, True, True, True, False]
    assert results[4].expected_label == "tl"
    assert results[0].actions == (
        GitPush("origin", "feature/dev1", False, False, "/repo/.worktrees/dev1"),
    )


def test_expectation_objects_compare_kind_not_reason() -> None:
    [result] = run_examples(DEFAULT_POLICY, [("rm -rf /", "tl", Deny("whatever"))])
    assert result.passed
    assert result.actual.reason != "whatever"


def test_defaults_and_overrides_of_the_example_context() -> None:
    dev = Example("true", "dev", "allow").request(DEFAULT_POLICY)
    assert (dev.agent, dev.worktree, dev.cwd, dev.branch) == (
        "dev1",
        "/repo/.worktrees/dev1",
        "/repo/.worktrees/dev1",
        "feature/dev1",
    )
    lead = Example("true", "tl", "allow").request(DEFAULT_POLICY)
    assert (lead.agent, lead.worktree, lead.cwd, lead.branch) == ("lead", None, "/repo", "main")
    custom = Example(
        "git push origin HEAD", "dev", "allow", agent="zed", branch="feature/z", runtime="gemini"
    ).request(DEFAULT_POLICY)
    assert (custom.agent, custom.branch, custom.tool_name) == (
        "zed",
        "feature/z",
        "run_shell_command",
    )
    [result] = run_examples(
        DEFAULT_POLICY, [Example("git push origin HEAD", "dev", "allow", branch="feature/z")]
    )
    assert result.passed


@pytest.mark.parametrize(
    "bad",
    [
        ("ls", "dev"),
        ["ls", "dev", "allow"],
        ("ls", 3, "allow"),
        (3, "dev", "allow"),
        ("ls", "dev", "perhaps"),
    ],
)
def test_malformed_examples_are_rejected(bad: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        as_example(bad)


def test_an_action_example_has_no_raw_request() -> None:
    with pytest.raises(TypeError):
        Example(ReadFile("/x"), "dev", "allow").request(DEFAULT_POLICY)
