"""Hypothesis: arbitrary shell text never crashes the classifier, and no error path allows.

The shell classifier must return actions for any string (``Unknown`` at worst); the whole
``classify`` must never fall back to its catch-all (a classifier exception); and a text
that fails to parse is never allowed.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exomonad.policy.actions import Unknown
from exomonad.policy.cascade import decide_request
from exomonad.policy.decisions import label
from exomonad.policy.default import DEFAULT_POLICY
from exomonad.policy.request import ToolRequest
from exomonad.policy.shell_classify import classify_shell
from exomonad.policy.shell_dialect import sh_differs
from exomonad.policy.shell_lex import ShellSyntaxError
from exomonad.policy.shell_parse import parse

W = "/w/repo/.worktrees/w1"
_PIECES = [
    "git",
    "push",
    "-f",
    "--force",
    "origin",
    "main",
    "exo/w1",
    "HEAD:main",
    ":main",
    "+main",
    "$'\\x6dain'",
    "$'",
    "{",
    "}",
    "{a,b}",
    "(",
    ")",
    "$(",
    "`",
    "'",
    '"',
    "\\",
    "|",
    "&&",
    "&",
    "setsid -f",
    "nohup",
    "env -i",
    ";",
    "\n",
    "<<EOF",
    "EOF",
    "<<<",
    "<(",
    ">",
    "bash",
    "sh -c",
    "eval",
    "env",
    "xargs",
    "timeout 5",
    "function f",
    "f()",
    "$X",
    "${X:-",
    "$((",
    "*",
    "?",
    "[",
    "]",
    "#",
    "-c",
    "alias",
    "git -c alias.p=x",
    "cd ..",
    "trap",
    " ",
]
_TEXT = st.one_of(
    st.text(max_size=60),
    st.lists(st.sampled_from(_PIECES), max_size=14).map(" ".join),
    st.lists(st.sampled_from(_PIECES), max_size=14).map("".join),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TEXT)
def test_shell_classifier_never_raises(text: str) -> None:
    actions = classify_shell(text, W)
    assert isinstance(actions, list)
    try:
        parse(text, W)
    except ShellSyntaxError:  # dash's reading, where it differs, may add its own
        assert actions[0] == Unknown(text)
        assert actions == [Unknown(text)] or sh_differs(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TEXT)
def test_no_allow_from_an_error_path(text: str) -> None:
    request = ToolRequest(
        "claude", "worker", "w1", "Bash", {"command": text}, cwd=W, worktree=W, branch="exo/w1"
    )
    decision, actions, _ = decide_request(DEFAULT_POLICY, request, project_root="/w/repo")
    if text:  # an empty command is no command: the tool call itself is Unknown
        assert not any(isinstance(a, Unknown) and a.raw.startswith("claude:Bash") for a in actions)
    if any(isinstance(a, Unknown) for a in actions):
        assert label(decision) != "allow"
