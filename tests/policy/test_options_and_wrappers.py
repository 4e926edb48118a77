"""Options read the way the programs read them, and wrappers whose own options write
or move where the wrapped command runs.

Found probing as a worker (a fifth round), each allowed and run for real in a scratch
worktree: ``time -o ../../.git/config -a -f '[core]...'`` appended an ``fsmonitor`` to
the lead's git configuration (the lead's ``git status`` ran it); ``flock
../../.git/hooks/pre-commit true`` made a hook file; ``uv run --directory ../.. git
commit`` moved the lead's ``main``; ``cmake -S . -B ../..`` replaced the lead's
Makefile; ``sort --out=../../README.md`` and ``cp --target=../.. f`` (GNU programs take
any unique prefix of a long option) wrote the lead's files; ``grep -d rec TOKEN ../..``
printed the lead's token; ``RIPGREP_CONFIG_PATH=c rg`` took ``-uu`` from a file; ``rg
--pre rm x ../..`` deleted the lead's files. Now each is not allowed, and the ordinary
forms stay allowed.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow
from exomonad.policy.shell_env import scan_options
from exomonad.policy.shell_lex import Word
from tests.policy.worker import bash, scratch_worktree

HARMFUL = [
    # a fifth look, at this round's own code
    "find . -delete -name '*.pyc'",  # -delete first: everything goes
    "find . -name '*.pyc' , -delete",
    "find . -printf -name -printf '*.pyc' -delete",
    "find . -name '\\.mcp.json' -delete",  # find reads \. as .
    "printf -v GIT_DIR ../../.git; export GIT_DIR; git commit --allow-empty -m x",
    "read GIT_DIR <<< ../../.git",
    ": ${GIT_DIR:=../../.git}",
    "sort -uo ../../.git/config cfg.txt",  # a value option late in a cluster
    "cp -ft ../../.git/hooks pre-commit",
    "install -Dt ../../.git/hooks pre-commit",
    "TMPDIR=$(echo ../..) mktemp",
    "git checkout-index --pref=../../ -f -a",
    "gpg --options evil.conf --enarmor a.txt",
    "gpg --homedir g --enarmor a.txt",
    "GNUPGHOME=g gpg --enarmor a.txt",
    "git restore --pathspec-from-file=f -s evil",
    "git checkout HEAD~1 -- $(cat f)",
    "git rm --pathspec-from-file=f",
    "less -o ../../x README.md",  # less logs what it shows
    "cat README.md | less --log-file=../../x",
    # F1: time's output file, flock's lock file
    "env time -a -f '[core]\\n\\tfsmonitor = \"touch LEAD-PWNED; false\"' "
    "-o ../../.git/config true",
    "command time -a -f x -o ../../.exomonad/policy.py true",
    "/usr/bin/time -ao ../../.git/config -f x true",
    "time -o ../../x true",
    "time --output=../../x true",
    "time --out ../../x true",
    "time -o$HOME/x true",
    "flock ../../.git/hooks/pre-commit true",
    "flock -x ../../.git/hooks/pre-commit -c true",
    "flock -n ../../.git/hooks/pre-commit make",
    # F2: the directory a project runner runs its command in
    "uv run --directory ../.. git commit -qam x",
    "uv run --directory=../.. make",
    "uv run --directory ../.. make",
    "uv --directory ../.. run git commit",
    "uv run --project ../.. make",
    "uv --project ../.. run make",
    "uv --bogus run make",
    "pdm run -p ../.. make",
    "pdm -p ../.. run make",
    "poetry -C ../.. run make",
    "poetry --directory ../.. run make",
    "poetry --directory=../.. run make",
    "poetry run -C ../.. make",
    "hatch --project ../.. run make",
    "uv run --directory $D make",
    # F3: programs of which only some verbs are modelled
    "cmake -S . -B ../..",
    "cmake -B../../.git/hooks",
    "cmake --install . --prefix ../..",
    "uv venv ../../x",
    "uv export -o ../../README.md",
    "uv build -o ../..",
    "cargo build --target-dir ../..",
    "poetry -C ../.. install",
    "docker build -o ../.. .",
    "helm package . -d ../..",
    "gem build -o ../../x.gem",
    # F4: unique prefixes of long options
    "sort --out=../../README.md own.txt",
    "sort --out ../../README.md own.txt",
    "shuf --out=../../README.md own.txt",
    "iconv -f utf8 -t utf8 --out=../../README.md own.txt",
    "sed --in s/readme/PWN/ ../../README.md",
    "sed --in-pl s/readme/PWN/ ../../README.md",
    "cp --target=../.. own.txt",
    "cp --targ ../../.git/hooks pre-commit",
    "mv --target=../.. m.txt",
    "install --target=../.. own.txt",
    "cp --target=../../.git/hooks pre-commit",
    "grep --recur SECRET ../..",
    "grep --deref SECRET ../..",
    "grep --dir=recurse SECRET ../..",
    "grep --direct rec SECRET ../..",
    "grep -d rec SECRET ../..",
    "grep -drecu SECRET ../..",
    "grep --color -r SECRET ../..",
    # F7: variables that hand a reader its options
    "RIPGREP_CONFIG_PATH=c rg SECRET ../..",
    "export RIPGREP_CONFIG_PATH=c; rg SECRET ../..",
    "env RIPGREP_CONFIG_PATH=c rg SECRET ../..",
    "declare -x RIPGREP_CONFIG_PATH=c",
    # F8: rg's preprocessor runs a program on every file
    "rg --pre rm x ../..",
    "rg --pre=rm x ../..",
    "rg --pre ./x.sh x",
    "rg -uu --pre cat TOKEN ../..",
]


@pytest.mark.parametrize("command", HARMFUL)
def test_a_write_or_read_past_the_worktree_is_not_allowed(command: str) -> None:
    assert not isinstance(bash(command), Allow), command


ORDINARY = [
    "sort -uo out.txt in.txt",
    "while read -r line; do echo $line; done < f",
    "VERSION=$(git describe) make",
    "gpg --enarmor a.txt",
    "find . -type f -name '*.pyc' -delete",
    "git checkout HEAD~1 -- src/a.py",
    "less -R out.log",
    "cat x | less -o log.txt",
    "sort -o out.txt in.txt",
    "sort --output=out.txt in.txt",
    "sort --out=out.txt in.txt",
    "grep -r foo src",
    "grep --recursive foo src",
    "grep -d skip foo a.txt",
    "grep --color=auto foo a.txt",
    "cp --target-directory=build a.txt",
    "cp --target=build a.txt",
    "sed -i s/a/b/ a.txt",
    "sed --in-place=.bak s/a/b/ a.txt",
    "time make test",
    "time -p pytest",
    "time -o timing.txt make",
    "/usr/bin/time -f %e -o build/t.txt make",
    "flock /tmp/x.lock make",
    "flock .lock make",
    "flock -n /tmp/x.lock -c 'make test'",
    "uv run pytest",
    "uv run --directory sub pytest",
    "uv run --project . pytest",
    "uv --directory sub run pytest",
    "uv run --with pytest-xdist pytest -n 4",
    "poetry run pytest",
    "poetry -C sub run pytest",
    "pdm run pytest",
    "rg foo src",
    "rg --search-zip foo src",
    "rg --pre-glob '*.gz' foo src",
    "cmake -S . -B build",
    "cmake --build build",
    "cargo build",
    "cargo build --target-dir target",
    "uv sync",
    "uv venv",
    "uv build -o dist",
    "docker build -t x .",
    "rsync --partial a.txt b.txt",
    "rsync --backup a.txt b.txt",
    "RIPGREP_CONFIG_PATH= rg foo src",
]


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_work_stays_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command


def _w(text: str) -> list[Word]:
    return [Word(t) for t in text.split()]


def test_a_unique_prefix_of_an_option_that_takes_a_value_takes_it() -> None:
    pos, opts = scan_options(_w("--out ../x in.txt"), frozenset({"--output", "-o"}))
    assert [w.text for w in pos] == ["in.txt"]
    assert [w.text for w in opts.get("--output", []) if w] == ["../x"]
    assert "--output" in opts
    assert "--outpu" not in opts


def test_a_prefix_is_looked_up_as_the_option_it_abbreviates() -> None:
    _, opts = scan_options(_w("--recur --dir=recurse x"), frozenset({"--directories"}))
    assert "--recursive" in opts
    assert [w.text for w in opts["--directories"] if w] == ["recurse"]
    assert "--exclude" not in opts


def test_an_exact_option_does_not_abbreviate_a_longer_one() -> None:
    # --exclude is grep's own option: it is no abbreviation of --exclude-dir
    _, opts = scan_options(_w("--exclude=.exomonad x"), frozenset({"--exclude", "--exclude-dir"}))
    assert "--exclude-dir" not in opts
    # rsync's --partial is a flag of its own, not --partial-dir
    pos, opts = scan_options(_w("--partial a b"), frozenset({"--partial-dir"}))
    assert [w.text for w in pos] == ["a", "b"]
    assert "--partial-dir" not in opts


def test_without_abbreviations_options_are_exact() -> None:
    pos, opts = scan_options(_w("--out x y"), frozenset({"--output"}), abbrev=False)
    assert [w.text for w in pos] == ["x", "y"]
    assert "--output" not in opts


def _layout(tmp_path: Path) -> tuple[Path, Path]:
    root, wt = scratch_worktree(tmp_path)
    (root / "README.md").write_text("lead readme\n")
    (wt / "own.txt").write_text("pwned\n")
    return root, wt


def _run(command: str, wt: Path) -> None:
    subprocess.run(["bash", "-c", command], cwd=wt, check=True, timeout=60)


def test_the_real_effect_sort_out_writes_the_leads_file(tmp_path: Path) -> None:
    root, wt = _layout(tmp_path)
    command = "sort --out=../../README.md own.txt"
    _run(command, wt)
    assert (root / "README.md").read_text() == "pwned\n"
    assert not isinstance(bash(command, root=str(root)), Allow)


def test_the_real_effect_cp_target_copies_into_the_leads_checkout(tmp_path: Path) -> None:
    root, wt = _layout(tmp_path)
    command = "cp --target=../.. own.txt"
    _run(command, wt)
    assert (root / "own.txt").read_text() == "pwned\n"
    assert not isinstance(bash(command, root=str(root)), Allow)


def test_the_real_effect_sed_in_edits_the_leads_file(tmp_path: Path) -> None:
    root, wt = _layout(tmp_path)
    command = "sed --in s/readme/PWN/ ../../README.md"
    _run(command, wt)
    assert (root / "README.md").read_text() == "lead PWN\n"
    assert not isinstance(bash(command, root=str(root)), Allow)


def test_the_real_effect_grep_d_rec_reads_the_state_dir(tmp_path: Path) -> None:
    root, wt = _layout(tmp_path)
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "lead.token").write_text("SECRET-TOKEN\n")
    command = "grep -d rec SECRET ../.."
    out = subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, text=True,
                         timeout=60, check=False).stdout  # fmt: skip
    assert "SECRET-TOKEN" in out
    assert not isinstance(bash(command, root=str(root)), Allow)


def test_the_real_effect_flock_makes_its_lock_file(tmp_path: Path) -> None:
    root, wt = _layout(tmp_path)
    (root / ".git" / "hooks").mkdir(parents=True)
    command = "flock ../../.git/hooks/pre-commit true"
    _run(command, wt)
    assert (root / ".git" / "hooks" / "pre-commit").exists()
    assert not isinstance(bash(command, root=str(root)), Allow)


def test_the_real_effect_time_o_appends_to_the_leads_file(tmp_path: Path) -> None:
    assert Path("/usr/bin/time").exists(), "GNU time is missing: `make setup` installs it"
    root, wt = _layout(tmp_path)
    command = "/usr/bin/time -a -f PLANTED -o ../../README.md true"
    _run(command, wt)
    assert "PLANTED" in (root / "README.md").read_text()
    assert not isinstance(bash(command, root=str(root)), Allow)


def test_the_real_effect_rg_pre_runs_a_program_on_each_file(tmp_path: Path) -> None:
    assert shutil.which("rg"), "ripgrep is missing: `make setup` installs it"
    root, wt = _layout(tmp_path)
    (root / "victim.txt").write_text("x\n")
    command = "rg --pre rm x ../../victim.txt"
    subprocess.run(["bash", "-c", command], cwd=wt, timeout=60, check=False,
                   capture_output=True)  # fmt: skip
    assert not (root / "victim.txt").exists()
    assert not isinstance(bash(command, root=str(root)), Allow)


def test_the_real_effect_a_cluster_hides_sorts_output(tmp_path: Path) -> None:
    root, wt = _layout(tmp_path)
    command = "sort -uo ../../README.md own.txt"
    _run(command, wt)
    assert (root / "README.md").read_text() == "pwned\n"
    assert not isinstance(bash(command, root=str(root)), Allow)


def test_the_real_effect_a_copy_through_a_link_to_the_root(tmp_path: Path) -> None:
    """``here -> .`` made by an earlier call: a copy into ``here`` writes the root's
    ``.mcp.json`` (found probing); the link is resolved when the copy is judged."""
    root, wt = _layout(tmp_path)
    (wt / ".mcp.json").write_text('{"mcpServers": {"exo": {}}}')
    (wt / "x").mkdir()
    (wt / "x" / ".mcp.json").write_text("{}")
    (wt / "here").symlink_to(".")
    command = "cp x/.mcp.json here"
    assert not isinstance(bash(command, root=str(root)), Allow)
    _run(command, wt)
    assert (wt / ".mcp.json").read_text() == "{}"  # what it would have done
