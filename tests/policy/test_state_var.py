"""``$EXOMONAD_DIR`` names the state dir, in an argument or a redirection.

ExoMonad gives every agent it starts ``$EXOMONAD_DIR`` (the project's ``.exomonad/``).
Found probing as a worker: ``cat <"$EXOMONAD_DIR/lead.token"`` and ``cat
$EXOMONAD_DIR/config.toml`` were allowed (``cat $EXOMONAD_DIR/tokens.json`` was refused
only for the file's name), and a redirection to a path known only at run time was not
judged at all (``cat <$X/lead.token``). Both are refused now; other run-time paths
behave as before.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny, Escalate
from exomonad.policy.state_reads import expands_state_var
from tests.policy.test_state_tree_live import Live
from tests.policy.worker import bash, scratch_worktree

REFUSED = [
    'cat <"$EXOMONAD_DIR/lead.token"',
    "cat < $EXOMONAD_DIR/tokens.json",
    "cat <${EXOMONAD_DIR}/config.toml",
    "cat $EXOMONAD_DIR/config.toml",
    'cat "${EXOMONAD_DIR}/policy.py"',
    "head -c 99 ${EXOMONAD_DIR:-/nowhere}/lead.token",
    "exec 3<$EXOMONAD_DIR/lead.token; cat <&3",
    "echo x >$EXOMONAD_DIR/policy.py",
    'echo x >>"$EXOMONAD_DIR"/config.toml',
    "cd /tmp && cat <$EXOMONAD_DIR/lead.token",
    "curl --unix-socket $EXOMONAD_DIR/server.sock http://x/",  # was asked, not refused
    'nc -U "$EXOMONAD_DIR/server.sock"',
    "cp x $EXOMONAD_DIR/policy.py",
    "X=$EXOMONAD_DIR make",
    "cat <$X/lead.token",  # a variable set earlier: the name still tells
    "sort <$D/tokens.json",
    # A command substitution naming the variable (printed the lead's token, allowed).
    'cat "$(printenv EXOMONAD_DIR)/$(echo lead).token"',
    "d=$(printenv EXOMONAD_DIR); cat $d/$(ls $d | grep tok)",
    "X=$(env | grep EXOMONAD_DIR | cut -d= -f2); cat $X/x",
    # A loop's words are what its body reads (printed the lead's token, allowed).
    'for f in ../../.exomonad/*; do cat "$f"; done',
    'for f in $EXOMONAD_DIR/*; do cat "$f"; done',
    'for f in "$(printenv EXOMONAD_DIR)"/*; do cat "$f"; done',
    "select f in ../../.exo*/lead.token; do cat $f; done",
]


@pytest.mark.parametrize("command", REFUSED)
def test_the_state_dir_through_its_variable_is_refused(command: str) -> None:
    verdict = bash(command)
    assert isinstance(verdict, Deny), verdict
    assert "ExoMonad's state" in verdict.reason


@pytest.mark.parametrize(
    ("command", "kind"),
    [('while read -r l; do echo "$l"; done < "$f"', Allow),
     ("cat <$f | sort", Allow),
     ('grep -c x <<< "$v"', Allow),
     ("echo $EXOMONAD_DIRS", Allow),  # another variable
     ("printenv EXOMONAD_DIR", Allow),  # the path alone
     ("for i in 1 2 3; do echo $i; done", Allow),
     ('for f in src/*.py; do wc -l "$f"; done', Allow),
     ("for BASH_ENV in ./x; do bash -c true; done", Escalate),  # sets it at run time
     ("make 2>$LOG", Escalate)],  # a write to an unknown path, as before
)  # fmt: skip
def test_other_run_time_paths_are_judged_as_before(command: str, kind: type) -> None:
    assert isinstance(bash(command), kind), bash(command)


def test_a_worker_cannot_read_the_lead_token_through_its_variable(live: Live) -> None:
    """The real effect first: with the environment ExoMonad gives a worker, the command
    prints the lead's token. Then the hook client refuses it."""
    token, worktree = live.spawn_worker()
    command = 'cat <"$EXOMONAD_DIR/lead.token"'
    env = {**os.environ, "EXOMONAD_DIR": str(live.state), "EXOMONAD_TOKEN": token}
    leaked = subprocess.run(["bash", "-c", command], cwd=worktree, env=env,
                            capture_output=True, text=True, timeout=30, check=False)  # fmt: skip
    assert leaked.stdout.strip() == (live.state / "lead.token").read_text().strip()
    for attempt in (command, "cat $EXOMONAD_DIR/config.toml"):
        answer = live.hook(attempt, token=token, cwd=worktree)
        assert answer["permissionDecision"] == "deny", (attempt, answer)


@pytest.mark.parametrize(
    "command",
    ['cat "$(printenv EXOMONAD_DIR)/$(echo lead).token"',
     'for f in ../../.exomonad/*; do cat "$f"; done'],
)  # fmt: skip
def test_a_worker_cannot_read_the_lead_token_through_a_substitution_or_a_loop(
    live: Live, command: str
) -> None:
    """The real effect first: from the worktree, with the worker's environment, bash
    prints the lead's token. Then the real hook client refuses the command."""
    token, worktree = live.spawn_worker()
    env = {**os.environ, "EXOMONAD_DIR": str(live.state), "EXOMONAD_TOKEN": token}
    leaked = subprocess.run(["bash", "-c", command], cwd=worktree, env=env,
                            capture_output=True, timeout=30, check=False)  # fmt: skip
    assert (live.state / "lead.token").read_bytes().strip() in leaked.stdout, leaked.stderr
    answer = live.hook(command, token=token, cwd=worktree)
    assert answer["permissionDecision"] == "deny", answer
    assert "ExoMonad's state" in answer["permissionDecisionReason"], answer


def test_a_long_command_full_of_substitutions_is_judged_in_one_pass() -> None:
    """Found trying the gate as a worker: the check for a substitution naming the
    variable was a lazy regular expression, quadratic in the number of ``$(``: 30 KB of
    ``$(x`` in a quoted word took 5.6 s of the server's time, 480 KB would take hours.
    Searched from the first ``$(`` now (pytest's time-out is the backstop)."""
    text = "$(x" * 160_000
    assert not expands_state_var(text)
    assert expands_state_var(text + " EXOMONAD_DIR)")
    assert isinstance(bash(f"echo '{text}'"), Allow)


#: Found trying the gate as a worker: a path the shell builds at run time from pieces
#: that name the state (an expansion taken as "anything", the rest could match it),
#: or a ``printf`` format that does (``%s`` taken as "anything", escapes decoded): each
#: printed the lead's token from a worktree, allowed.
BUILT = [
    "cat ../../.exo$(echo mo)nad/lead.to$(echo k)en",
    "cat \"$(printf '../../.exo%snad/lead.tok%sn' mo e)\"",
    "d=mo; cat ../../.exo${d}nad/lead.tok$(echo en)",
    "cat ../../.e$(echo xomonad/lead.token)",
    "cat ../../$(echo .ex)omonad/$(echo le)ad.token",
    "cat ../../`echo .exo`monad/`echo lead.t`oken",
    "cat \"$(printf '../../\\x2eexomonad/lead\\x2etoken')\"",
    "cat \"$(printf '../../%bxomonad/lead%btoken' .e .)\"",
    "cat ../../.EXO$(echo mo)NAD/lead.token",
]


@pytest.mark.parametrize("command", BUILT)
def test_a_path_built_from_pieces_naming_the_state_is_refused(command: str, tmp_path: Path) -> None:
    root, wt = scratch_worktree(tmp_path)
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "lead.token").write_text("exo_lead_token_value")
    real = command.replace(".EXO", ".exo").replace("NAD", "nad")  # case counts on disk
    done = subprocess.run(["bash", "-c", real], cwd=wt, capture_output=True, text=True,
                          timeout=30, check=False)  # fmt: skip
    assert "exo_lead_token_value" in done.stdout, (real, done.stdout, done.stderr)
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Deny), (command, verdict)
    assert "ExoMonad's state" in verdict.reason, verdict.reason


@pytest.mark.parametrize(
    "command",
    [
        'cat "$(git rev-parse --show-toplevel)/README.md"',
        "echo $(date)",
        'for f in src/*.py; do cat "$f"; done',
        'jq . "$name.json"',
        'wc -c "$DB.db"',
        'cat "$f.token.bak"',
        'cat "$dir/$base.$ext"',
        'echo "${HOME}/.config/$app"',
        "printf '%s\\n' \"$x\"",
        "printf '%s.json\\n' a b",
        "cat \"$(printf 'src/%s.py' main)\"",
        'ls "build/$(date +%F)"',
        "ls ../$name",
    ],
)
def test_ordinary_run_time_paths_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), bash(command)
