"""Text bash evaluates again when it runs: a subscript's command, a prompt, a name.

Found trying the gate as a worker (each allowed, and run for real in a scratch
project): bash evaluates an array subscript wherever it meets ``NAME[...]`` as a
variable's name or in arithmetic, and runs the ``$(...)`` in it though the line quoted
it. ``test -v 'a[$(grep -r SECRET ../.. >&2)]'`` printed the lead's token, ``printf -v
'a[$(git -C ../.. reset -q --hard exo/w1)]' x`` moved the lead's ``main``, and the same
through ``[[ -v ]]``, ``read``, ``declare``, ``local``, ``let``, ``(( ))``, ``[[ A -eq 1
]]``, ``unset``, ``wait -p``, an assignment's subscript; a value planted on the line ran
as code when arithmetic, ``${x@P}`` or ``${!x}`` read it (``read x <<< 'a[$(...)]';
echo $((x))``); single quotes inside ``${...}`` hid a command the shell runs
(``"${x:-'$(...)'}"``, ``${a['$(...)']}``); ``mapfile -C``, ``compgen -C``/``-W`` and
``fc -s`` ran text as code. Now each is asked (``policy/shell_evaluated.py``), and the
common arithmetic, subscripts and indirection stay allowed.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Escalate
from tests.policy.worker import bash, scratch_worktree

SECRET = "exo_lead_secret"
#: What each command runs unseen: it prints the lead's token.
RUN = "grep -r lead_secret ../.. >&2"

SUBSCRIPTS = [
    "test -v 'a[$(RUN)]'",
    "[ -v 'a[$(RUN)]' ]",
    "[[ -v 'a[$(RUN)]' ]]",
    'test -v "a[\\$(RUN)]"',
    "test -v 'a[`RUN`]'",
    "test -v 'a[$((RUN) )]'",
    "test -v $'a[\\x24(RUN)]'",
    "a['$(RUN)']=1",
    "(( 'a[$(RUN)]' ))",
    "printf -v 'a[$(RUN)]' x",
    "read 'a[$(RUN)]' <<< x",
    "declare 'a[$(RUN)]=1'",
    "f(){ local 'a[$(RUN)]=1'; }; f",
    "let 'a[$(RUN)]'",
    "[[ 'a[$(RUN)]' -eq 1 ]]",
    "a=(1); unset 'a[$(RUN)]'",
    "sleep 0 & wait -p 'a[$(RUN)]' -n",
    "echo $[ 'a[$(RUN)]' ]",
    "x=abc; echo ${x:1:'a[$(RUN)]'}",
    "f(){ test -v \"$1\"; }; f 'a[$(RUN)]'",
    'x=a; test -v "${x}[\\$(RUN)]"',
    "test -v \"$(echo a)\"'[$(RUN)]'",
]
HIDDEN = [
    "echo ${a['$(RUN)']}",
    "unset x; echo \"${x:-'$(RUN)'}\"",
    "x=abc; echo ${x:'$(RUN)'}",
    "echo ${a[$'a[\\x24(RUN)]']}",
    "echo $(( $'a[\\x24(RUN)]' ))",
    "cd \"${x:-'$(RUN)'}\"",
    "cd ${a[$'a[\\x24(RUN)]']}",
    "case ${a[$'a[\\x24(RUN)]']} in *) ;; esac",
]
#: A value the line plants, run when arithmetic, a prompt or a name reads it; and text in
#: single quotes that arithmetic expands (``(( '$(...)' ))``).
VALUES = [
    "(( '$(RUN)' ))",
    "read -r x <<< '$(RUN)'; echo \"${x@P}\"",
    "printf -v x '%s' '$(RUN)'; echo \"${x@P}\"",
    "read x <<< 'a[$(RUN)]'; echo ${!x}",
    "read -r x <<< 'a[$(RUN)]'; echo $((x))",
    "read -r y <<< 'a[$(RUN)]'; x=abc; echo ${x:y}",
    "read -r y <<< 'a[$(RUN)]'; z=(1 2); echo ${z[y]}",
    "read -r y <<< 'a[$(RUN)]'; [[ $y -eq 0 ]]",
    "mapfile -t arr <<< 'a[$(RUN)]'; echo $((arr))",
    "declare -i x; read x <<< 'a[$(RUN)]'",
    "printf -v x 'a[\\x24(RUN)]'; echo $((x))",
    "read -r x <<< '$(RUN)'; y=\"a[$x]\"; echo $((y))",
    "read -r x <<< '$(RUN)'; y=\"a[$x]\"; case ${z[y]} in *) ;; esac",
    "read v <<< 'a['; read w <<< '$(RUN)]'; test -v \"$v$w\"",
    "read -d '' x <<'E'\na[$(RUN)]\nE\necho $((x))",
    "x=$(cat <<'E'\na[$(RUN)]\nE\n); [[ $x -eq 1 ]]",
]
BUILTINS = [
    "mapfile -C 'RUN #' -c 1 arr <<< x",
    "compgen -C 'RUN' x",
    "compgen -W '$(RUN)' x",
    "compgen -aW '$(RUN)' x",
    "history -s 'RUN'; fc -s",
]


@pytest.mark.parametrize("command", SUBSCRIPTS + HIDDEN + VALUES + BUILTINS)
def test_text_bash_evaluates_again_is_asked(tmp_path: Path, command: str) -> None:
    command = command.replace("RUN", RUN)
    root, wt = scratch_worktree(tmp_path)
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "lead.token").write_text(SECRET + "\n")
    done = subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, text=True,
                          check=False, timeout=30)  # fmt: skip
    assert SECRET in done.stdout + done.stderr, (command, done)  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Escalate), (command, verdict)


def test_a_subscripts_command_moving_the_leads_branch_is_asked(tmp_path: Path) -> None:
    """``printf -v 'a[$(git ...)]' x``: the lead's ``main`` reset to the worker's branch."""
    root, wt = scratch_worktree(tmp_path)
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run([*git, "init", "-q", "-b", "main", str(root)], check=True)
    (root / "README.md").write_text("hi\n")
    subprocess.run([*git, "-C", str(root), "commit", "-qm", "one", "--allow-empty"], check=True)
    subprocess.run([*git, "-C", str(root), "branch", "exo/w1"], check=True)
    subprocess.run([*git, "-C", str(root), "commit", "-qm", "two", "--allow-empty"], check=True)
    wt.rmdir()
    subprocess.run([*git, "-C", str(root), "worktree", "add", "-q", str(wt), "exo/w1"],
                   check=True)  # fmt: skip
    command = "printf -v 'a[$(git -C ../.. reset -q --hard exo/w1)]' x"
    before = subprocess.run(["git", "-C", str(root), "rev-parse", "main"], capture_output=True,
                            text=True, check=True).stdout  # fmt: skip
    subprocess.run(["bash", "-c", command], cwd=wt, check=False)
    after = subprocess.run(["git", "-C", str(root), "rev-parse", "main"], capture_output=True,
                           text=True, check=True).stdout  # fmt: skip
    assert before != after  # the real effect: the lead's main moved
    assert isinstance(bash(command, root=str(root)), Escalate)


ORDINARY = [
    "n=5; echo $((n+1))",
    "n=5; n=$((n*2)); echo $n",
    "i=0; while (( i < 3 )); do i=$((i+1)); done; echo $i",
    'total=0; for f in *.md; do n=$(wc -l < "$f"); total=$((total+n)); done; echo $total',
    "arr=(a b c); echo ${#arr[@]}",
    'arr=(a b c); for i in "${!arr[@]}"; do echo "$i ${arr[$i]}"; done',
    'arr=(a b c); echo "${arr[$((1+1))]}" "${arr[$(( ${#arr[@]} - 1 ))]}"',
    'arr=(x y); i=1; echo "${arr[i]}" "${arr[$i]}" "${arr[i-1]}"',
    "n=$(wc -l < README.md); echo $((n+1))",
    "n=$(wc -l < README.md); [[ $n -gt 0 ]] && echo yes",
    "if [[ $(git status --porcelain | wc -l) -gt 0 ]]; then echo dirty; fi",
    "echo $(( $(date +%s) - 100 ))",
    'echo "Result: $((${#PATH} * 2))"',
    "awk '{print $1}' README.md",
    "awk '{a[$1]++} END {for (k in a) print k, a[k]}' README.md",
    "jq '.[0]' <<< '[1,2]'",
    "jq --arg x a '.[$x]' <<< '{\"a\":1}'",
    "sed 's/[$(]//' README.md",
    "grep -n '\\$(' README.md",
    "grep -E '[$(]' README.md",
    "sed -E 's/\\$\\{([A-Z_]+)\\}/\\1/g' README.md",
    "envsubst '${HOME}' < README.md",
    "x=hello; echo ${x:1:2}",
    's=hello; n=2; echo "${s:0:n}" "${s:$n}" "${s: -1}"',
    'for v in HOME PATH; do echo "$v=${!v}"; done',
    'x=HOME; echo "${!x}"',
    'set -- a b c; echo "${@:2}" "${!#}"',
    'echo "${!BASH*}"',
    'read -r a b <<< "1 2"; echo $((a+b))',
    "printf -v out '%s-%s' a b; echo \"$out\"",
    "mapfile -t lines < README.md; echo ${#lines[@]}",
    "declare -A m; m[key]=1; echo ${m[key]}",
    "let x=1+2; echo $x",
    "test -v HOME && echo set",
    "[[ -v arr ]] || echo unset",
    'echo "${PATH//:/x}"',
    "python3 -c 'import sys; a=[1]; print(a[0])'",
    "node -e 'const a=[1,2]; console.log(`${a[0]}`)'",
    "kubectl get pods -o jsonpath='{.items[0].metadata.name}'",
    "git commit --allow-empty -m 'Use $(pwd) instead of `pwd`'",
    "cat <<'EOF' > notes.sh\necho \"$(date)\" ${arr[$i]} ${!v}\nEOF",
    "fc -l",
    "compgen -c | head -3",
    "compgen -W 'start stop' -- st",
    "mapfile -t -n 2 lines < README.md",
]


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_arithmetic_subscripts_and_indirection_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
