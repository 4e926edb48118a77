"""A here-document or here-string a program may read as instructions is judged by its
words (see :mod:`exomonad.policy.shell_stdin`).

Found probing as a worker: each command below printed ``.exomonad/lead.token`` from a
worktree (run for real here), allowed, while the same code given with ``-c``/``-e``
was refused.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny
from tests.policy.test_state_tree_live import Live
from tests.policy.worker import bash, scratch_worktree

SECRET = "exo_lead_token_value"
TOKEN = "../../.exomonad/lead.token"

READ = [
    f"xargs cat <<< {TOKEN}",
    f'read -r f <<< {TOKEN}; cat "$f"',
    f"sqlite3 :memory: <<< \"select readfile('{TOKEN}');\"",
    f"sed -f - x <<< 'r {TOKEN}'",
    f"ed -s x <<< $'r {TOKEN}\\n,p'",
    f"python3 - <<'EOF'\nprint(open('{TOKEN}').read())\nEOF",
    f"node <<'EOF'\nconsole.log(require('fs').readFileSync('{TOKEN}', 'utf8'))\nEOF",
    f"perl <<< 'open(F, \"<{TOKEN}\"); print <F>'",
]


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    root, wt = scratch_worktree(tmp_path)
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "lead.token").write_text(SECRET)
    (wt / "x").write_text("x\n")
    return root, wt


@pytest.mark.parametrize("command", READ)
def test_a_program_reading_its_here_document_as_code_is_refused(
    command: str, project: tuple[Path, Path]
) -> None:
    root, wt = project
    done = subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert SECRET in done.stdout, (command, done.stdout, done.stderr)  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Deny), (command, verdict)


def test_a_credential_store_named_in_a_here_document_is_a_read() -> None:
    code = "node <<'EOF'\nrequire('fs').readFileSync(process.env.HOME + '/.ssh/id_rsa')\nEOF"
    verdict = bash(code)
    assert isinstance(verdict, Deny), verdict
    assert "reading credentials" in verdict.reason, verdict.reason


@pytest.mark.parametrize(
    "command",
    [
        "cat > notes.md <<'EOF'\nExoMonad keeps its state in .exomonad/\nEOF",
        "git commit -q -F - <<'EOF'\ndocs: explain .exomonad/\nEOF",
        "sed s/a/b/ <<< 'mention .exomonad'",
        "python3 - <<'EOF'\nprint(1)\nEOF",
        "python3 - <<'EOF'\ndef f(*a, **kw): return [x for x in '*?']\nprint(2*3)\nEOF",
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: ok.txt\n+x\n*** End Patch\nEOF",
        "xargs echo <<< 'a b'",
        "bash <<'EOF'\necho hi\nEOF",
    ],
)
def test_data_and_harmless_code_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), bash(command)


def test_the_hook_client_refuses_it_on_a_live_server(live: Live) -> None:
    token, worktree = live.spawn_worker()
    answer = live.hook(f"xargs cat <<< {TOKEN}", token=token, cwd=worktree)
    assert answer["permissionDecision"] == "deny", answer


#: Found trying the gate as a worker after 46d1fba / 6683dfc: a here-string a data
#: program passes on down a pipe (or into a substitution), one given to a loop, a group,
#: a subshell, ``if`` or a function body (whose ``read`` turns it into a variable), and
#: git's ``--stdin-paths`` (the paths on stdin are read): each printed the token, allowed.
PASSED_ON = [
    f"cat <<< {TOKEN} | xargs cat",
    f"tr -d Q <<< {TOKEN}Q | xargs cat",
    f"{{ cat <<< {TOKEN}; }} | xargs cat",
    f"cat <<'EOF' | while read -r f; do cat \"$f\"; done\n{TOKEN}\nEOF",
    f'cat "$(cat <<< {TOKEN})"',
    f'while read f; do cat "$f"; done <<< {TOKEN}',
    f'{{ read f; cat "$f"; }} <<< {TOKEN}',
    f'( read f; cat "$f" ) <<< {TOKEN}',
    f'if read f; then cat "$f"; fi <<< {TOKEN}',
    f'f() {{ read x; cat "$x"; }} <<< {TOKEN}; f',
    f"h=$(git hash-object -w --stdin-paths <<< {TOKEN}); git cat-file -p $h",
]


@pytest.fixture
def repo_project(project: tuple[Path, Path]) -> tuple[Path, Path]:
    root, wt = project
    subprocess.run(["git", "init", "-q", str(wt)], check=True)
    return root, wt


@pytest.mark.parametrize("command", PASSED_ON)
def test_a_here_string_passed_on_to_a_reader_is_refused(
    command: str, repo_project: tuple[Path, Path]
) -> None:
    root, wt = repo_project
    done = subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert SECRET in done.stdout, (command, done.stdout, done.stderr)  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Deny), (command, verdict)


@pytest.mark.parametrize(
    "command",
    [
        'while read line; do echo "$line"; done < file.txt',
        "cat <<'EOF' > notes.md\nExoMonad keeps its state in .exomonad/\nEOF",
        "if true; then cat > notes.md <<'EOF'\nsee .exomonad/\nEOF\nfi",
        'git commit -q -F- <<< "msg"',
        "git commit -q -F- <<< 'docs: explain .exomonad/'",
        'for f in src/*.py; do cat "$f"; done',
        "cat <<< 'a b' | xargs echo",
        "sort <<< $'b\\na' | head -1",
        'while read -r f; do wc -l "$f"; done <<< "$(git ls-files)"',
        "{ read -r a; echo \"$a\"; } <<< 'hello'",
        "git hash-object -w --stdin <<< hi",
        "git commit -q -m \"$(cat <<'EOF'\ndocs: explain .exomonad/\nEOF\n)\"",
    ],
)
def test_ordinary_here_strings_and_loops_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), bash(command)


#: Found trying the gate as a worker after 8a3d6b4: a here-string given to sed, awk, jq
#: or yq as their script file under another spelling of stdin (``--file=``, ``-fX``,
#: ``//dev/stdin``, ``/dev/./stdin``, ``/proc/thread-self/fd/0``, a glob, a link to
#: ``/dev/stdin``), a long option abbreviated as git and GNU tools accept it, and a data
#: program's output piped on through other filters: each printed the token, allowed.
SCRIPT_FROM_STDIN = [
    f"sed --file=/dev/stdin x <<< '1r {TOKEN}'",
    f"sed --fi=/dev/stdin x <<< '1r {TOKEN}'",
    f"sed -f/dev/stdin x <<< '1r {TOKEN}'",
    f"sed -sf /dev/stdin x <<< '1r {TOKEN}'",
    f"sed -f //dev/stdin x <<< '1r {TOKEN}'",
    f"sed -f /dev/./stdin x <<< '1r {TOKEN}'",
    f"sed -f /proc/thread-self/fd/0 x <<< '1r {TOKEN}'",
    f"sed -f /dev/st?in x <<< '1r {TOKEN}'",
    f"sed -f in.sed x <<< '1r {TOKEN}'",  # in.sed -> /dev/stdin
    f"ln -s /dev/stdin s.sed; sed -f s.sed x <<< '1r {TOKEN}'",
    f"awk -f/dev/stdin <<< 'BEGIN{{while((getline l<\"{TOKEN}\")>0)print l}}'",
    f"awk -f /dev/st[d]in <<< 'BEGIN{{while((getline l<\"{TOKEN}\")>0)print l}}'",
    f"h=$(git hash-object -w --stdin-pa <<< {TOKEN}); git cat-file -p $h",
    f"h=$(git hash-object -w --stdin-p <<< {TOKEN}); git cat-file -p $h",
    f"h=$(cat <<< {TOKEN} | git hash-object -w --stdin-paths); git cat-file -p $h",
    f"cat <<< {TOKEN} | sort | xargs cat",
    f"cat <<< {TOKEN} | tee /dev/null | xargs cat",
    f"cat <<< {TOKEN} | tee out.txt | xargs cat",
    f"cat <<< {TOKEN} | {{ xargs cat; }}",
    f"( cat <<< {TOKEN} ) | xargs cat",
    f"{{ {{ cat <<< {TOKEN}; }}; }} | xargs cat",
    f"{{ cat <<< {TOKEN}; }} >&1 | xargs cat",
    f"for i in 1; do cat <<< {TOKEN}; done | xargs cat",
    f"if true; then cat <<< {TOKEN}; fi | sort | xargs cat",
    f"f() {{ cat <<< {TOKEN}; }}; f | xargs cat",
    f"function f {{ cat <<< {TOKEN}; }}; f | xargs cat",
    f"f() ( cat <<< {TOKEN} ); f | xargs cat",
    f"{{ time {{ true; }}; cat <<< {TOKEN}; }} | xargs cat",
    f"{{ time -p ( true ); cat <<< {TOKEN}; }} 2>/dev/null | xargs cat",
    f"cat <<< {TOKEN} | python3 -c 'import sys; print(open(sys.stdin.read().strip()).read())'",
]


@pytest.mark.parametrize("command", SCRIPT_FROM_STDIN)
def test_a_script_or_names_from_stdin_under_another_spelling_is_refused(
    command: str, repo_project: tuple[Path, Path]
) -> None:
    root, wt = repo_project
    (wt / "in.sed").symlink_to("/dev/stdin")
    done = subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert SECRET in done.stdout, (command, done.stdout, done.stderr)  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Deny), (command, verdict)


@pytest.mark.parametrize(
    "command",
    [
        f"sed -f /dev/fd/0/ x <<< '1r {TOKEN}'",
        f"sed -f - x <<< '1r {TOKEN}'",
        f"sed -f \"$(tty)\" x <<< '1r {TOKEN}'",
        f"sed -f /proc/$$/fd/0 x <<< '1r {TOKEN}'",
        f"sed --file /dev/stdin x <<< '1r {TOKEN}'",
        f"awk --file=/dev/stdin <<< 'BEGIN{{while((getline l<\"{TOKEN}\")>0)print l}}'",
        f"gawk --fil /dev/stdin <<< 'BEGIN{{while((getline l<\"{TOKEN}\")>0)print l}}'",
        f"gawk -i /dev/stdin 'BEGIN{{}}' <<< 'BEGIN{{while((getline l<\"{TOKEN}\")>0)print l}}'",
        f"mawk -W exec /dev/stdin <<< 'BEGIN{{while((getline l<\"{TOKEN}\")>0)print l}}'",
        f"yq --from-file /dev/stdin x.yml <<< 'load_str(\"{TOKEN}\")'",
        f"yq --from-file=/dev/stdin x.yml <<< 'load_str(\"{TOKEN}\")'",
        f"jq -nf /dev/stdin <<< 'include \"{TOKEN}\"; 1'",
        f"jq -n --from-file /dev/stdin <<< 'include \"{TOKEN}\"; 1'",
        f"sort --fil=- <<< {TOKEN}",
        f"wc --files0=- <<< {TOKEN}",
        f"git add --pathspec-f=- <<< {TOKEN}",
        f"tar -cf x.tar --files-f=- <<< {TOKEN}",
        f"cat <<< {TOKEN} | tee >(xargs cat)",
        f"cat <<< {TOKEN} | tee /dev/fd/3 3>&1 >/dev/null | xargs cat",
        f"cat <<< {TOKEN} | git commit -F - | xargs cat",
        f"{{ cat <<< {TOKEN}; }} > /dev/stdout | xargs cat",
    ],
)
def test_other_spellings_of_a_script_or_names_on_stdin_are_refused(command: str) -> None:
    verdict = bash(command)
    assert isinstance(verdict, Deny), (command, verdict)


#: Allowed at accc9a8, refused after 8a3d6b4: data that only data programs read, or a
#: group's output sent to a plain file, may mention the state dir or a credential store.
MENTIONS = [
    "cat <<'EOF' | git commit -q -F -\nFix: read ~/.aws/credentials lazily; not .exomonad/\nEOF",
    "cat <<'EOF' | tee docs/x.md\nThe lead's token lives in .exomonad/lead.token\nEOF",
    "cat <<'EOF' | tee -a notes.md\nHosts: ~/.ssh/config; state in .exomonad/\nEOF",
    "{ echo '# T'; cat <<'EOF'; } > README.md\nSee ~/.ssh/config; ~/.config/gh/hosts.yml\nEOF",
    "cat <<'EOF' | python3 gen.py\n~/.aws/credentials and .exomonad/lead.token\nEOF",
    "cat <<'EOF' | sort | uniq > notes.md\n.exomonad/\n~/.aws/credentials\nEOF",
    "{ cat <<'EOF'; } | tee notes.md > /dev/null\n.exomonad/ ~/.netrc\nEOF",
    "if true; then cat <<'EOF'\n.exomonad/ ~/.netrc\nEOF\nfi > notes.md",
    "for i in 1; do cat <<'EOF'; done >> notes.md\n~/.aws/credentials\nEOF",
    "( cat <<'EOF' ) > notes.md\n.exomonad/\nEOF",
    "cat <<'EOF' | sed 's/a/b/' | tee notes.md\n.exomonad/\nEOF",
    "sed -f edit.sed notes.md <<< 'see .exomonad/'",
]


@pytest.mark.parametrize("command", MENTIONS)
def test_a_mention_that_only_data_programs_read_is_allowed_again(
    command: str, tmp_path: Path
) -> None:
    root, wt = scratch_worktree(tmp_path)
    (wt / "docs").mkdir()
    (wt / "gen.py").write_text("import sys\nopen('gen.out', 'w').write(sys.stdin.read())\n")
    (wt / "edit.sed").write_text("s/a/b/\n")
    (wt / "notes.md").write_text("x\n")
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Allow), (command, verdict)
    if "git commit" not in command:  # the real effect: the text reaches a file
        done = subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True,
                              text=True, timeout=60, check=False)  # fmt: skip
        assert done.returncode == 0, (command, done.stderr)


def test_a_pr_body_on_stdin_is_asked_as_before() -> None:
    body = "cat <<'EOF' | gh pr create --title x --body-file -\n{}\nEOF"
    plain = bash(body.format("Docs"))
    verdict = bash(body.format("Docs: explain ~/.netrc and ~/.aws/credentials"))
    assert type(verdict) is type(plain), (verdict, plain)
    assert not isinstance(verdict, Deny), verdict


@pytest.mark.parametrize(
    "command",
    [
        f"cat <<< {TOKEN} | git -c alias.x='!xargs cat' x",
        f"git -c alias.x='!xargs cat' x <<< {TOKEN}",
        f"cat <<< {TOKEN} | gh x",
        f"git fast-import --allow-unsafe-features <<< 'feature import-marks={TOKEN}'",
        f"cat <<< 'cat {TOKEN}' | sed e",
        f"cat <<< 'cat {TOKEN}' | sed -n -e p -e 's/^/x/;s/^x//e'",
        f"cat <<< {TOKEN} | awk '{{while((getline l < $0)>0) print l}}'",
        f"sed -n e <<< 'cat {TOKEN}'",
    ],
)
def test_git_or_gh_commands_not_known_to_read_data_have_their_input_judged(
    command: str,
) -> None:
    verdict = bash(command)
    assert isinstance(verdict, Deny), (command, verdict)


#: Found probing after the second round: data programs told to run a program on what they
#: read, or to open the files it lists. Each printed the token (or, for ``sha256sum -c``,
#: told whether a guessed digest of it matches), allowed: sort spills its input in chunks
#: through ``--compress-program`` (any prefix), zstd compresses the files ``--filelist``
#: names (a here-document over 64 KB is a regular file to it).
SPILL = "\n".join(f"cat {TOKEN} >&2 #{i:06d}" for i in range(6000))
RUNS_OR_OPENS = [
    f"sort -S 64K --compress-program=sh > /dev/null <<'EOF'\n{SPILL}\nEOF",
    f"sort -S 64K --com=sh > /dev/null <<'EOF'\n{SPILL}\nEOF",
    "zstd -qc --filelist=/dev/stdin <<'EOF' | zstd -dc | head -c 100 >&2\n"
    + "\n".join([TOKEN] * 5000)
    + "\nEOF",
]


@pytest.mark.parametrize("command", RUNS_OR_OPENS)
def test_a_data_program_told_to_run_or_open_what_it_reads_is_refused(
    command: str, repo_project: tuple[Path, Path]
) -> None:
    root, wt = repo_project
    done = subprocess.run(
        ["bash", "-s"],
        input=command,
        cwd=wt,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # too long for an argument
    assert SECRET in done.stderr, (command[:80], done.stderr[-500:])  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Deny), (command[:80], verdict)


def test_a_checksum_check_of_a_listed_file_is_refused(repo_project: tuple[Path, Path]) -> None:
    """``sha256sum -c`` opens each file its input lists: whether the token is a guess."""
    root, wt = repo_project
    digest = hashlib.sha256(SECRET.encode()).hexdigest()
    command = f"sha256sum -c <<< '{digest}  {TOKEN}'"
    done = subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.stdout.strip() == f"{TOKEN}: OK", done  # the guess confirmed
    assert isinstance(bash(command, root=str(root)), Deny)


@pytest.mark.parametrize(
    "command",
    [f"cat <<< 'cat {TOKEN}' | sort --compress-prog=bash",
     f"cat <<< {TOKEN} | zstd -c --filelist /dev/stdin",
     f"yq '.a|eval(.)' <<< 'a: load_str(\"{TOKEN}\")'",
     f"md5sum --check <<< 'x  {TOKEN}'"],
)  # fmt: skip
def test_other_programs_run_or_opened_from_stdin_are_refused(command: str) -> None:
    assert isinstance(bash(command), Deny), command


@pytest.mark.parametrize(
    "command",
    ["sort -u <<< $'b\\na'", "cat <<'EOF' | sort -S 1M\nb\na\nEOF", "sha256sum <<< hello",
     "yq .a <<< 'a: 1'", "cat notes.txt | zstd -c > notes.zst", "sort -c <<< $'a\\nb'"],
)  # fmt: skip
def test_data_programs_sorting_hashing_compressing_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
