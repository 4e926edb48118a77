"""Sandboxed workers get private agent config homes (``exomonad.sandbox_homes``).

Real ``bwrap``, through :func:`exomonad.sandbox.worker_argv` as ExoMonad spawns a
worker, with a temporary ``$HOME`` holding both homes. Code a worker runs inside the
sandbox must not be able to write what the user's own Gemini CLI or Codex (or an
unsandboxed worker) runs at its next start: settings with hooks and MCP server
commands, ``.env``, ``config.toml``; while the CLI still finds its settings and
credentials where it looks. bwrap missing is a failure, never a skip. The real CLIs in
such a sandbox: ``tests/e2e/test_gemini_sandbox_home.py``, ``test_codex_sandbox_home.py``.
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from exomonad.errors import InvalidNameError, SandboxError
from exomonad.panes.spool import Spool
from exomonad.sandbox import SandboxSpec, bwrap_argv, require_bwrap, worker_argv
from exomonad.sandbox_homes import HOMES_DIR, Mount, private_homes
from tests.support.git import GIT_ENV, git, make_repo

pytestmark = pytest.mark.integration

SETTINGS = '{"hooks": {}}\n'
CONFIG = 'model = "gpt-5"\n'
OAUTH = '{"refresh_token": "r-1"}\n'
AUTH = '{"OPENAI_API_KEY": "sk-1"}\n'


@dataclass
class Homes:
    """A project with a worker's worktree, and a ``$HOME`` with both agent homes."""

    home: Path
    worktree: Path
    state: Path

    def run(self, script: str, name: str = "w1",
            team: str | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
        """``bash -c script`` as sandboxed worker ``name`` (of ``team``) runs, output
        captured."""
        argv = worker_argv(["bash", "-c", script], sandbox="bwrap",
                           worktree=str(self.worktree), state_dir=self.state,
                           name=name, team=team)  # fmt: skip
        return subprocess.run(argv, env={**os.environ, **GIT_ENV}, capture_output=True,
                              text=True, timeout=60, check=False)  # fmt: skip


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Homes:
    try:
        require_bwrap()
    except SandboxError as exc:
        pytest.fail(f"{exc} (`make setup` installs it)")
    home = tmp_path / "home"
    (home / ".gemini" / "tmp").mkdir(parents=True)
    (home / ".gemini" / "tmp" / "chats.json").write_text("[]")
    (home / ".gemini" / "settings.json").write_text(SETTINGS)
    (home / ".gemini" / "oauth_creds.json").write_text(OAUTH)
    (home / ".gemini" / "extensions" / "ext").mkdir(parents=True)
    (home / ".codex" / "sessions").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(CONFIG)
    (home / ".codex" / "auth.json").write_text(AUTH)
    (home / ".codex" / "skills" / "mine").mkdir(parents=True)
    (home / ".codex" / "skills" / "mine" / "SKILL.md").write_text("a skill\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    monkeypatch.setenv("EXOMONAD_SPOOL_DIR", str(tmp_path / "spool"))
    repo = make_repo(tmp_path / "repo")
    worktree = repo / ".worktrees" / "w1"
    git(repo, "worktree", "add", "-q", "-b", "exo/w1", str(worktree))
    state = repo / ".exomonad"
    state.mkdir()
    return Homes(home, worktree, state)


def test_a_worker_sees_its_own_spooled_messages_only(homes: Homes, tmp_path: Path) -> None:
    """Found probing: with the whole spool dir bound, a worker's code read the lead's long
    messages to every other worker (``cat <spool>/*/*/*.md``, which the policy refuses,
    run from a script). Only its own recipient directory is bound now."""
    mine = Spool().write("for w1\n", sender="team-lead", to=("proj", "w1"))
    theirs = Spool().write("for w2: hunter2\n", sender="team-lead", to=("proj", "w2"))
    out = homes.run(f"cat {mine} {theirs} {tmp_path}/spool/*/*/*.md", team="proj")
    assert out.stdout == "for w1\n" * 2, out.stderr  # by its name, and by the glob


def test_a_worker_cannot_write_the_users_agent_config(homes: Homes) -> None:
    """The escape: a settings.json (hooks, MCP commands) or a config.toml (``notify``,
    MCP commands) written inside runs outside at the user's next start."""
    out = homes.run('echo \'{"hooks": "evil"}\' > "$HOME/.gemini/settings.json" && '
                    'echo \'notify = ["evil"]\' > "$HOME/.codex/config.toml" && '
                    'cat "$HOME/.gemini/settings.json" "$HOME/.codex/config.toml"')  # fmt: skip
    assert (homes.home / ".gemini" / "settings.json").read_text() == SETTINGS
    assert (homes.home / ".codex" / "config.toml").read_text() == CONFIG
    assert out.returncode == 0, out.stderr  # the worker's own copies took the writes
    assert out.stdout == '{"hooks": "evil"}\nnotify = ["evil"]\n'


def test_the_cli_finds_its_settings_and_credentials_but_not_the_users_runtime_dirs(
    homes: Homes,
) -> None:
    out = homes.run('cd "$HOME"; ls -A .gemini; ls -A .codex; stat -c "%a %n" '
                    '.gemini/oauth_creds.json .codex/auth.json; cat .gemini/oauth_creds.json '
                    '.codex/auth.json .codex/skills/mine/SKILL.md')  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout == ("extensions\noauth_creds.json\nsettings.json\n"  # no tmp/
                          "auth.json\nconfig.toml\nskills\n"  # no sessions/
                          "600 .gemini/oauth_creds.json\n600 .codex/auth.json\n"
                          f"{OAUTH}{AUTH}a skill\n")  # fmt: skip
    private = homes.state / "sandbox" / HOMES_DIR / "w1"
    for path in (private / "gemini" / "oauth_creds.json", private / "codex" / "auth.json"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((private / "gemini").stat().st_mode) == 0o700


def test_the_users_extensions_are_read_only_inside(homes: Homes) -> None:
    out = homes.run('touch "$HOME/.gemini/extensions/ext/gemini-extension.json"')
    assert out.returncode != 0
    assert "Read-only file system" in out.stderr
    assert list((homes.home / ".gemini" / "extensions" / "ext").iterdir()) == []


def test_a_workers_edits_do_not_survive_its_next_spawn(homes: Homes) -> None:
    """Reseeded at each spawn: a settings change made inside (hooks for the next start)
    is gone, even from a directory the worker made unremovable."""
    first = homes.run('echo \'{"hooks": "evil"}\' > "$HOME/.gemini/settings.json" && '
                      'mkdir -p "$HOME/.codex/x/y" && touch "$HOME/.codex/x/y/z" && '
                      'chmod 0 "$HOME/.codex/x/y" "$HOME/.codex/x"')  # fmt: skip
    assert first.returncode == 0, first.stderr
    second = homes.run('cat "$HOME/.gemini/settings.json"; ls -A "$HOME/.codex"')
    assert second.returncode == 0, second.stderr
    assert second.stdout == SETTINGS + "auth.json\nconfig.toml\nskills\n"
    homes_dir = homes.state / "sandbox" / HOMES_DIR
    assert sorted(p.name for p in homes_dir.iterdir()) == [".trash", "w1"]
    assert list((homes_dir / ".trash").iterdir()) == []  # the old home was removed


def test_each_worker_has_its_own_home_under_its_sanitised_name(homes: Homes) -> None:
    assert homes.run('echo one > "$HOME/.gemini/GEMINI.md"', name="a.b").returncode == 0
    out = homes.run('cat "$HOME/.gemini/GEMINI.md"', name="w2")
    assert out.returncode != 0  # w2 does not see a.b's memory
    homes_dir = homes.state / "sandbox" / HOMES_DIR
    assert (homes_dir / "a-b" / "gemini" / "GEMINI.md").read_text() == "one\n"
    assert not (homes.home / ".gemini" / "GEMINI.md").exists()
    with pytest.raises(InvalidNameError):
        homes.run("true", name="../escape")


def test_codex_home_follows_codex_home(homes: Homes, monkeypatch: pytest.MonkeyPatch,
                                       tmp_path: Path) -> None:  # fmt: skip
    """The worker inherits ``$CODEX_HOME`` (ExoMonad pins it to the home whose hook trust
    it checked): that is the home made private."""
    other = tmp_path / "codex-elsewhere"
    other.mkdir()
    (other / "config.toml").write_text(CONFIG)
    monkeypatch.setenv("CODEX_HOME", str(other))
    out = homes.run('echo evil > "$CODEX_HOME/config.toml" && cat "$CODEX_HOME/config.toml"')
    assert out.returncode == 0, out.stderr
    assert out.stdout == "evil\n"
    assert (other / "config.toml").read_text() == CONFIG


def test_a_home_that_cannot_be_made_stops_the_spawn(homes: Homes) -> None:
    """Never an unsandboxed (or unprivatised) command on a fault."""
    (homes.state / "sandbox").write_text("not a directory")
    with pytest.raises(SandboxError, match="private homes"):
        homes.run("true")


def test_a_special_file_in_a_copied_tree_is_left_out(homes: Homes) -> None:
    os.mkfifo(homes.home / ".codex" / "skills" / "pipe")
    os.mkfifo(homes.home / ".gemini" / "settings.json.fifo")
    (homes.home / ".gemini" / "settings.json").unlink()
    os.mkfifo(homes.home / ".gemini" / "settings.json")  # not a file: not copied
    out = homes.run('ls -A "$HOME/.codex/skills" "$HOME/.gemini"')
    assert out.returncode == 0, out.stderr
    assert "pipe" not in out.stdout
    assert "settings.json\n" not in out.stdout


def test_private_homes_without_real_homes_binds_nothing(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "nobody")}
    assert private_homes(tmp_path / "sandbox", "w1", env) == []
    assert (tmp_path / "sandbox" / HOMES_DIR / "w1").is_dir()


def test_argv_binds_mounts_after_extra_rw_and_before_extra_ro(tmp_path: Path) -> None:
    for d in ("p/.worktrees/w", "p/.exomonad", "rw", "src", "ro"):
        (tmp_path / d).mkdir(parents=True)
    spec = SandboxSpec(tmp_path / "p/.worktrees/w", tmp_path / "p", tmp_path / "p/.exomonad",
                       extra_rw=[tmp_path / "rw"], extra_ro=[tmp_path / "ro"],
                       mounts=[Mount(tmp_path / "src", Path("/home/u/.gemini"), True),
                               Mount(tmp_path / "ro", Path("/home/u/.gemini/x"))])  # fmt: skip
    argv = bwrap_argv(["true"], spec)
    rw = argv.index(str(tmp_path / "rw"))
    home = argv.index("/home/u/.gemini")
    assert argv[home - 2 : home + 1] == ["--bind", str(tmp_path / "src"), "/home/u/.gemini"]
    assert argv[home + 1 : home + 4] == ["--ro-bind", str(tmp_path / "ro"), "/home/u/.gemini/x"]
    assert rw < home < argv.index("--tmpfs", home)
    relative = Mount(tmp_path / "src", Path("rel"))
    with pytest.raises(SandboxError, match="not absolute"):
        bwrap_argv(["true"], SandboxSpec(spec.worktree, spec.project_root, spec.state_dir,
                                         mounts=[relative]))  # fmt: skip


# The old homes are removed by the server, outside the sandbox, from a tree the worker
# wrote (and, if its sandbox still runs, is writing): found probing.


def _worker_gemini(tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    """A sandbox dir whose worker ``w1`` has a private gemini home (made by a first spawn);
    the env that spawns it; that home, where a worker's writes land."""
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(SETTINGS)
    env = {"HOME": str(home)}
    sandbox = tmp_path / "sandbox"
    private_homes(sandbox, "w1", env)
    return sandbox, env, sandbox / HOMES_DIR / "w1" / "gemini"


def _trash(sandbox: Path) -> list[str]:
    return sorted(os.listdir(sandbox / HOMES_DIR / ".trash"))


def test_a_symlink_swapped_in_before_the_chmod_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory the worker made unwritable is made writable again before removal; a
    live old sandbox swapping it with a symlink to a directory outside (``renameat2``
    ``RENAME_EXCHANGE`` in a loop) won, at the probe, 4 respawns in 15: the target
    became 0700. Here the swap comes at the worst moment, just before the chmod."""
    sandbox, env, gemini = _worker_gemini(tmp_path)
    target = tmp_path / "outside"
    target.mkdir()
    (target / "keep").write_text("mine\n")
    target.chmod(0o500)
    (gemini / "victim" / "sub").mkdir(parents=True)
    (gemini / "victim").chmod(0o500)
    real_chmod = os.chmod
    swaps: list[str] = []

    def chmod_after_a_swap(path: str, mode: int, **kw: bool) -> None:
        where = os.readlink(path) if path.startswith("/proc/self/fd/") else path
        if os.path.basename(where) == "victim" and not os.path.islink(where):
            os.rename(where, where + "-moved")
            os.symlink(target, where)
            swaps.append(where)
        real_chmod(path, mode, **kw)

    monkeypatch.setattr(os, "chmod", chmod_after_a_swap)
    private_homes(sandbox, "w1", env)
    monkeypatch.undo()
    assert swaps  # the directory was chmodded (it was 0500), and swapped just before
    assert stat.S_IMODE(target.stat().st_mode) == 0o500
    assert (target / "keep").read_text() == "mine\n"
    private_homes(sandbox, "w1", env)  # what the swap left behind goes at the next spawn
    assert _trash(sandbox) == []
    assert (target / "keep").read_text() == "mine\n"


def test_a_symlink_in_the_old_home_is_removed_not_followed(tmp_path: Path) -> None:
    sandbox, env, gemini = _worker_gemini(tmp_path)
    target = tmp_path / "outside"
    (target / "d").mkdir(parents=True)
    (target / "d" / "keep").write_text("mine\n")
    target.chmod(0o500)
    (gemini / "link").symlink_to(target)
    (gemini / "d").mkdir()
    (gemini / "d" / "link").symlink_to(target / "d")
    private_homes(sandbox, "w1", env)
    assert _trash(sandbox) == []
    assert stat.S_IMODE(target.stat().st_mode) == 0o500
    assert (target / "d" / "keep").read_text() == "mine\n"


def _nest(top: Path, depth: int, mode: int = 0o700) -> None:
    """``depth`` directories ``d/d/...`` under ``top`` (by descriptor: the path can exceed
    ``PATH_MAX``), each left with ``mode``."""
    fds = [os.open(top, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fds[-1])
            fds.append(os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
        for fd in fds[1:]:
            os.chmod(fd, mode)
    finally:
        for fd in fds:
            os.close(fd)


@pytest.mark.parametrize("depth", [1200, 5000])
def test_a_deep_tree_in_an_old_home_stops_no_spawn(tmp_path: Path, depth: int) -> None:
    """1200 nested directories in ``~/.gemini`` made every later spawn, of any worker,
    raise ``RecursionError`` (``os.walk``, ``shutil.rmtree``), the trash entry retried
    forever. Removed now, however deep, each directory unwritable."""
    sandbox, env, gemini = _worker_gemini(tmp_path)
    _nest(gemini, depth, mode=0o500)
    (gemini / "settings.json").write_text('{"hooks": "evil"}')
    try:
        private_homes(sandbox, "w2", env)  # another worker's spawn sweeps the trash too
        private_homes(sandbox, "w1", env)
        assert _trash(sandbox) == []
        assert (gemini / "settings.json").read_text() == SETTINGS
        assert not (gemini / "d").exists()
    finally:  # pytest's own clean-up of old tmp_paths recurses too
        subprocess.run(["chmod", "-R", "u+rwx", str(sandbox)], check=False)
        subprocess.run(["rm", "-rf", str(sandbox)], check=True)


def test_what_resists_removal_stays_in_the_trash_and_the_spawn_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A name that cannot be removed is left (logged), the rest of its entry goes; any
    other failure (a bug) leaves the entry it happened in. Either way the new home is
    made, and the next spawn tries again."""
    sandbox, env, gemini = _worker_gemini(tmp_path)
    (gemini / "stuck" / "x").mkdir(parents=True)
    (gemini / "gone").mkdir()
    real_rmdir = os.rmdir
    fault: dict[str, BaseException] = {"stuck": PermissionError(1, "Not permitted", "stuck")}

    def rmdir(path: str, *, dir_fd: int | None = None) -> None:
        if path in fault:
            raise fault[path]
        real_rmdir(path, dir_fd=dir_fd)

    monkeypatch.setattr(os, "rmdir", rmdir)
    with caplog.at_level("WARNING"):
        mounts = private_homes(sandbox, "w1", env)
    assert [m.source.name for m in mounts] == ["gemini"]
    assert (gemini / "settings.json").read_text() == SETTINGS
    assert not (gemini / "stuck").exists()
    [entry] = _trash(sandbox)
    left = sandbox / HOMES_DIR / ".trash" / entry
    assert sorted(os.listdir(left / "gemini")) == ["stuck"]  # x and "gone" went
    assert "stuck: [Errno 1] Not permitted" in caplog.text
    (gemini / "y").mkdir()
    fault["y"] = RuntimeError("a bug")
    caplog.clear()
    with caplog.at_level("WARNING"):
        private_homes(sandbox, "w1", env)
    assert (gemini / "settings.json").read_text() == SETTINGS
    assert len(_trash(sandbox)) == 2
    assert "RuntimeError('a bug')" in caplog.text
    monkeypatch.undo()
    private_homes(sandbox, "w1", env)
    assert _trash(sandbox) == []


_SWAPPER = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
os.chdir(os.path.expanduser("~/.gemini"))
for i in range(200):
    os.mkdir(f"d{i}")
    os.chmod(f"d{i}", 0o500)
    os.symlink(TARGET, f"l{i}")
open("ready", "w").close()
while True:
    for i in range(200):  # RENAME_EXCHANGE
        libc.renameat2(-100, f"d{i}".encode(), -100, f"l{i}".encode(), 2)
"""


def test_a_live_old_sandbox_swapping_links_changes_nothing_outside(homes: Homes) -> None:
    """The probe's race, run for real for a bounded number of respawns: the old sandbox
    keeps exchanging its directories with symlinks to a directory outside while the next
    spawn removes its home."""
    target = homes.home.parent / "outside"
    target.mkdir()
    target.chmod(0o500)
    script = _SWAPPER.replace("TARGET", repr(str(target)))
    gemini = homes.state / "sandbox" / HOMES_DIR / "w1" / "gemini"
    for _ in range(10):
        argv = worker_argv(["python3", "-c", script], sandbox="bwrap", name="w1",
                           worktree=str(homes.worktree), state_dir=homes.state)  # fmt: skip
        old = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            for _ in range(200):
                if (gemini / "ready").exists() or old.poll() is not None:
                    break
                time.sleep(0.02)
            assert (gemini / "ready").exists(), old.stderr.read() if old.stderr else ""
            time.sleep(0.1)
            private_homes(homes.state / "sandbox", "w1")  # the next spawn, the old alive
        finally:
            old.kill()
            old.wait()
        assert stat.S_IMODE(target.stat().st_mode) == 0o500
