"""A ``..`` after a symbolic link climbs from where the link led, as the system reads it.

Found trying the gate as a worker: ``ln -s . s`` (a link to its own worktree, allowed),
then ``cp up.txt s/s/../../Makefile``, ``echo x >> s/s/../../Makefile`` or the Write tool
on ``<wt>/s/s/../../Makefile`` were allowed: the gate took ``..`` off the name before it
(``<wt>/Makefile``) and only then followed links, but the system replaces ``s/s`` by the
worktree first and ``../..`` leaves it: the lead's ``<project>/Makefile`` was
overwritten. And with ``s/`` written 2100 times (a path longer than ``PATH_MAX``, judged
as written), GNU ``mkdir -p``, which walks a name at a time, made a directory in the
lead's checkout. Each now gets what the same write named plainly (``cp up.txt
../../Makefile``) gets, or is asked; a link inside the worktree used as one, and a
``..`` that stays inside, are still ordinary work.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Deny
from tests.policy.worker import bash, decide, scratch_worktree


def _project(tmp_path: Path) -> tuple[Path, Path]:
    """A scratch project with the lead's ``Makefile``, a state dir holding a token, and a
    worktree holding ``up.txt`` and ``s -> .``."""
    root, wt = scratch_worktree(tmp_path)
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "lead.token").write_text("exo_lead_secret\n")
    (root / "Makefile").write_text("all:\n")
    (wt / "up.txt").write_text("planted\n")
    os.symlink(".", wt / "s")
    return root, wt


def _run(command: str, wt: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=wt, capture_output=True, text=True,
                          check=False)  # fmt: skip


THROUGH_A_LINK = [
    "cp up.txt s/s/../../Makefile",
    "echo pwned >> s/s/../../Makefile",
    "tee s/s/../../Makefile < up.txt",
    "mv up.txt s/s/../../Makefile",
]


@pytest.mark.parametrize("command", THROUGH_A_LINK)
def test_a_write_through_a_link_then_dotdot_gets_what_the_plain_write_gets(
    tmp_path: Path, command: str
) -> None:
    """Run for real: the lead's ``Makefile`` changes. The gate's verdict is the one on
    ``cp up.txt ../../Makefile`` (the write outside named plainly): not allowed."""
    root, wt = _project(tmp_path)
    plain = bash("cp up.txt ../../Makefile", root=str(root))
    verdict = bash(command, root=str(root))
    assert not isinstance(verdict, Allow), verdict
    assert type(verdict) is type(plain), (verdict, plain)
    assert str(root / "Makefile") in verdict.reason
    assert _run(command, wt).returncode == 0
    assert (root / "Makefile").read_text() != "all:\n"


@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_the_file_tools_through_a_link_then_dotdot(tmp_path: Path, tool: str) -> None:
    root, wt = _project(tmp_path)
    data = {"file_path": f"{wt}/s/s/../../Makefile", "content": "x", "old_string": "all",
            "new_string": "x"}  # fmt: skip
    plain = decide(tool, {**data, "file_path": f"{root}/Makefile"}, root=str(root))
    verdict = decide(tool, data, root=str(root))
    assert not isinstance(verdict, Allow), verdict
    assert type(verdict) is type(plain), (verdict, plain)


def test_reading_the_state_through_a_link_then_dotdot_is_refused(tmp_path: Path) -> None:
    root, wt = _project(tmp_path)
    command = "cat s/s/../../.exomonad/lead.token"
    assert "exo_lead_secret" in _run(command, wt).stdout
    assert isinstance(bash(command, root=str(root)), Deny)
    verdict = decide("Read", {"file_path": f"{wt}/s/s/../../.exomonad/lead.token"},
                     root=str(root))  # fmt: skip
    assert isinstance(verdict, Deny), verdict


def test_a_read_of_the_state_named_by_no_word(tmp_path: Path) -> None:
    """``x -> ../../.exomonad/sub`` (a link a checkout may hold): ``x/../policy.py`` is
    the state's ``policy.py``, though taking ``..`` off as text gives the worktree's."""
    root, wt = _project(tmp_path)
    (root / ".exomonad" / "sub").mkdir()
    (root / ".exomonad" / "policy.py").write_text("the lead's policy\n")
    os.symlink("../../.exomonad/sub", wt / "x")
    assert "the lead's policy" in _run("cat x/../policy.py", wt).stdout
    assert isinstance(bash("cat x/../policy.py", root=str(root)), Deny)
    assert isinstance(bash("echo x > x/../policy.py", root=str(root)), Deny)
    read = decide("Read", {"file_path": f"{wt}/x/../policy.py"}, root=str(root))
    assert isinstance(read, Deny), read


def test_cd_through_a_link_then_dotdot_leaves_the_directory_unknown(tmp_path: Path) -> None:
    """bash's ``cd`` takes ``..`` off as text, ``cd -P`` (and ``set -P``) as the system
    reads it: which one runs is not known, so the directory is not."""
    root, wt = _project(tmp_path)
    command = "cd -P s/s/../.. && cp up.txt Makefile"
    assert not isinstance(bash(command, root=str(root)), Allow)
    assert not isinstance(bash("cd s/s/../.. && cp up.txt Makefile", root=str(root)), Allow)
    _run(command.replace("up.txt", str(wt / "up.txt")), wt)
    assert (root / "Makefile").read_text() == "planted\n"


def test_a_path_longer_than_path_max_through_links_is_asked(tmp_path: Path) -> None:
    """``mkdir -p`` walks a name at a time: 2100 links then ``../..`` made a directory in
    the lead's checkout. Such a path is not allowed, and is judged in well under a
    second (``realpath`` took 4.7 s on a 320 KB path)."""
    root, wt = _project(tmp_path)
    long = "mkdir -p " + "s/" * 2100 + "../../outside_dir"
    short = "mkdir -p " + "s/" * 20 + "../../outside_dir2"
    for command in (long, short, "mkdir -p " + "s/" * 41 + "x/../../outside_dir3"):
        assert not isinstance(bash(command, root=str(root)), Allow), command[:60]
    for state in ("mkdir -p " + "s/" * 20 + "../../.exomonad/planted",
                  "mkdir -p " + "s/" * 2100 + "../../.exomonad/planted"):  # fmt: skip
        assert isinstance(bash(state, root=str(root)), Deny), state[:60]
    assert _run(long, wt).returncode == 0
    assert (root / "outside_dir").is_dir()
    slow = ("cat " + "s/" * 160_000 + "x", "mkdir -p " + "s/" * 160_000 + "../../d",
            "cat " + "/proc/1/" * 40_000, "mkdir -p " + "a/../" * 60_000 + "d")  # fmt: skip
    for command in slow:
        start = time.perf_counter()
        bash(command, root=str(root))
        assert time.perf_counter() - start < 2.0, command[:40]  # ~0.4 s; realpath: 4.7 s


def test_a_link_deeper_than_path_max_is_not_passed_by(tmp_path: Path) -> None:
    """Directories deeper than ``PATH_MAX`` and a link at the bottom to the project:
    no path names the link in one call, but ``mkdir -p`` walks to it a name at a time."""
    root, wt = _project(tmp_path)
    fd = os.open(wt, os.O_RDONLY)
    try:
        for _ in range(30):
            os.mkdir("d" * 150, dir_fd=fd)
            inner = os.open("d" * 150, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.symlink(str(root), "l", dir_fd=fd)
    finally:
        os.close(fd)
    command = "mkdir -p " + ("d" * 150 + "/") * 30 + "l/outside_deep"
    assert not isinstance(bash(command, root=str(root)), Allow)
    assert _run(command, wt).returncode == 0
    assert (root / "outside_deep").is_dir()


def test_more_links_than_the_system_follows_are_not_a_read_dropped(tmp_path: Path) -> None:
    """A path crossing more than 40 links cannot be followed; a read through it is asked,
    not dropped as ``cat "$f"``'s is."""
    root, wt = _project(tmp_path)
    os.symlink("..", wt / "up")
    verdict = bash("cat " + "s/" * 45 + "up/../.exomonad/lead.token", root=str(root))
    assert not isinstance(verdict, Allow), verdict
    assert not isinstance(bash("cat " + "s/" * 45 + "up.txt", root=str(root)), Allow)


ORDINARY = [
    "cat lib/x.py",
    "echo x > lib/new.py",
    "cp up.txt lib/copy.py",
    "cp up.txt sub/../b.txt",
    "cp up.txt lib/../b.txt",  # lib -> src: src/../b.txt, in the worktree
    "cat deep/../x.py",  # deep -> src/pkg: src/x.py
    "echo x > deep/../new.py",
    "cat node_modules/.bin/tsc",
    "node_modules/.bin/tsc --version",
    "cat node_modules/.bin/../typescript/package.json",
    "echo x > s/up.txt",
    "cat s/s/up.txt",
    "cd lib && echo x > new2.py",
    "cd sub/.. && echo x > top.txt",
]


@pytest.mark.parametrize("command", ORDINARY)
def test_links_inside_the_worktree_stay_ordinary_work(tmp_path: Path, command: str) -> None:
    root, wt = _project(tmp_path)
    (wt / "src" / "pkg").mkdir(parents=True)
    (wt / "src" / "x.py").write_text("x = 1\n")
    (wt / "sub").mkdir()
    os.symlink("src", wt / "lib")
    os.symlink("src/pkg", wt / "deep")
    (wt / "node_modules" / "typescript" / "bin").mkdir(parents=True)
    (wt / "node_modules" / "typescript" / "bin" / "tsc").write_text("#!/bin/sh\n")
    (wt / "node_modules" / "typescript" / "package.json").write_text("{}\n")
    (wt / "node_modules" / ".bin").mkdir()
    os.symlink("../typescript/bin/tsc", wt / "node_modules" / ".bin" / "tsc")
    assert isinstance(bash(command, root=str(root)), Allow), command
    if command == ORDINARY[0]:
        write = decide("Write", {"file_path": f"{wt}/lib/../b.txt", "content": "x"}, root=str(root))
        assert isinstance(write, Allow), write
        read = decide("Read", {"file_path": f"{wt}/deep/../x.py"}, root=str(root))
        assert isinstance(read, Allow), read


def test_a_worktree_reached_through_a_link_keeps_its_ordinary_work(tmp_path: Path) -> None:
    """A project under a linked directory (a home on another disk): its ``..`` inside the
    worktree stays allowed, the climb through ``s`` does not."""
    real = tmp_path / "real"
    real.mkdir()
    root, wt = _project(real)
    os.symlink(real, tmp_path / "home")
    linked = tmp_path / "home" / "p"
    assert isinstance(bash("cp up.txt sub/../b.txt", root=str(linked)), Allow)
    assert isinstance(bash("echo x >> s/s/up.txt", root=str(linked)), Allow)
    verdict = bash("cp up.txt s/s/../../Makefile", root=str(linked))
    assert not isinstance(verdict, Allow), verdict
    del root, wt


# A second review, trying the gate as a worker: a file: URL's %2e%2e after a link, a link
# chain too deep to follow (judged as written), a lone surrogate in a path, and the cost.

CURL_THROUGH_A_LINK = [
    "curl -s -T up.txt 'file://{wt}/s/s/%2e%2e/%2e%2e/Makefile'",
    "curl -s -T up.txt 'file://{wt}/s/s/%2E%2e/.%2e/Makefile'",
    "curl -s --path-as-is -T up.txt 'file://{wt}/s/s/../../Makefile'",
    "curl -s --path-as -T up.txt 'file://{wt}/s/s/../../Makefile'",
]


@pytest.mark.parametrize("template", CURL_THROUGH_A_LINK)
def test_curls_file_url_through_a_link_then_dotdot(tmp_path: Path, template: str) -> None:
    """curl removes dot segments from the path as written, then decodes it: ``%2e%2e``
    reaches the system as a ``..``, which it takes after ``s/s`` (``s -> .``); with
    ``--path-as-is`` a ``..`` as written does too. Run for real: the lead's ``Makefile``
    changes. The gate's verdict is the plain write's."""
    root, wt = _project(tmp_path)
    command = template.format(wt=wt)
    plain = bash("cp up.txt ../../Makefile", root=str(root))
    verdict = bash(command, root=str(root))
    assert not isinstance(verdict, Allow), verdict
    assert type(verdict) is type(plain), (verdict, plain)
    assert str(root / "Makefile") in verdict.reason
    assert _run(command, wt).returncode == 0
    assert (root / "Makefile").read_text() == "planted\n"


def test_a_file_url_through_a_link_to_the_state_is_refused(tmp_path: Path) -> None:
    root, wt = _project(tmp_path)
    url = f"file://{wt}/s/s/%2e%2e/%2e%2e/.exomonad/lead.token"
    assert "exo_lead_secret" in _run(f"curl -s '{url}'", wt).stdout
    assert isinstance(bash(f"curl -s '{url}'", root=str(root)), Deny)
    fetched = decide("WebFetch", {"url": url, "prompt": "x"}, root=str(root))
    assert isinstance(fetched, Deny), fetched
    node = decide("WebFetch", {"url": f"file://{wt}/s/s/.%2E/%2e./.exomonad/lead.token",
                               "prompt": "x"}, root=str(root))  # fmt: skip
    assert isinstance(node, Deny), node
    written = decide("mcp__filesystem__write_file",
                     {"path": f"file://{wt}/s/s/%2e%2e/%2e%2e/Makefile", "content": "x"},
                     root=str(root))  # fmt: skip
    assert not isinstance(written, Allow), written
    assert str(root / "Makefile") in written.reason


ORDINARY_CURL = [
    "curl -s -T up.txt file://{wt}/x",
    "curl -s file://{wt}/sub/../up.txt",
    "curl -s file://{wt}/sub/%2e%2e/up.txt",
    "curl -s file://{wt}/lib/x.py",
    "curl -s -o out.txt file://{wt}/s/up.txt",
]


@pytest.mark.parametrize("template", ORDINARY_CURL)
def test_curls_file_urls_in_the_worktree_stay_ordinary_work(tmp_path: Path, template: str) -> None:
    root, wt = _project(tmp_path)
    (wt / "src").mkdir()
    (wt / "src" / "x.py").write_text("x = 1\n")
    (wt / "sub").mkdir()
    os.symlink("src", wt / "lib")
    command = template.format(wt=wt)
    assert isinstance(bash(command, root=str(root)), Allow), command
    assert _run(command, wt).returncode == 0
    url = command.split()[-1]
    if "-T" not in command and "-o" not in command:
        fetched = decide("WebFetch", {"url": url, "prompt": "x"}, root=str(root))
        assert isinstance(fetched, Allow), fetched


def _deep_chain(wt: Path, root: Path, depth: int = 1900) -> None:
    """``L -> a/a/.../a`` (``depth`` names) and ``a/.../a/up -> root``: following ``L/up``
    takes more looking up than ExoMonad does for one path."""
    fd = os.open(wt, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("a", dir_fd=fd)
            inner = os.open("a", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.symlink(str(root), "up", dir_fd=fd)
    finally:
        os.close(fd)
    os.symlink("/".join(["a"] * depth), wt / "L")


def _unchain(wt: Path) -> None:
    """Take the chain down a directory at a time (``shutil.rmtree`` recurses a frame a
    directory: pytest's clean-up of its old directories failed on it)."""
    top = wt / "a"
    while top.is_dir() and not top.is_symlink():
        for name in os.listdir(top):
            if name != "a":
                os.unlink(top / name)
        if not (top / "a").is_dir():
            os.rmdir(top)
            break
        os.rename(top / "a", wt / "a.next")
        os.rmdir(top)
        os.rename(wt / "a.next", top)


@pytest.fixture
def chain(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A scratch project whose worktree holds ``L`` (:func:`_deep_chain`)."""
    root, wt = _project(tmp_path)
    try:
        _deep_chain(wt, root)
        yield root, wt
    finally:
        _unchain(wt)


def test_a_path_whose_links_cannot_be_followed_is_not_judged_as_written(
    chain: tuple[Path, Path],
) -> None:
    """With ``L`` too deep to follow, each was judged as its text (a write in the
    worktree) and allowed; run for real, the lead's ``Makefile`` changes. Now asked."""
    root, wt = chain
    commands = [f"curl -s -T up.txt file://{wt}/L/up/Makefile", "cp up.txt L/up/Makefile",
                "echo x > L/up/Makefile", "cat L/up/.exomonad/lead.token"]  # fmt: skip
    for command in commands:
        assert not isinstance(bash(command, root=str(root)), Allow), command
    for tool, key in (("Write", "file_path"), ("Edit", "file_path"), ("Read", "file_path")):
        data = {key: f"{wt}/L/up/Makefile", "content": "x", "old_string": "a", "new_string": "b"}
        assert not isinstance(decide(tool, data, root=str(root)), Allow), tool
    fetched = decide("WebFetch", {"url": f"file://{wt}/L/up/Makefile", "prompt": "x"},
                     root=str(root))  # fmt: skip
    assert not isinstance(fetched, Allow), fetched
    assert _run(commands[0], wt).returncode == 0
    assert (root / "Makefile").read_text() == "planted\n"


def test_a_bare_name_whose_links_cannot_be_followed_is_not_a_read_dropped(
    chain: tuple[Path, Path],
) -> None:
    """``tok -> L/up/.exomonad/lead.token``: ``cat tok`` printed the token, allowed (the
    read of a path not known was dropped, and only words with a ``/`` were looked at)."""
    root, wt = chain
    os.symlink("L/up/.exomonad/lead.token", wt / "tok")
    assert "exo_lead_secret" in _run("cat tok", wt).stdout
    assert "exo_lead_secret" in _run("diff --from-file=tok up.txt", wt).stdout
    assert "exo_lead_secret" in _run("cat t*", wt).stdout  # a glob naming it
    assert "exo_lead_secret" in _run("sort --files0-from=tok", wt).stderr
    for command in ("cat tok", "cat < tok", "head -c 9 tok", "wc -c tok",
                    "diff --from-file=tok up.txt", "sort --files0-from=tok",
                    "grep --file=tok up.txt", "grep -ftok up.txt", "cat t*"):  # fmt: skip
        assert not isinstance(bash(command, root=str(root)), Allow), command
    for tool in ("Read", "Grep"):
        data = {"file_path": f"{wt}/tok", "path": f"{wt}/tok", "pattern": "x"}
        assert not isinstance(decide(tool, data, root=str(root)), Allow), tool


def test_many_words_through_a_deep_chain_are_asked(chain: tuple[Path, Path]) -> None:
    """Fifty words through ``L`` took 4 s, each followed several times with its own
    budget; one judgement shares one (the time is measured, not asserted, here)."""
    root, wt = chain
    words = " ".join(f"L/x{i}" for i in range(50))
    urls = " ".join(f"file://{wt}/L/x{i}" for i in range(30))
    assert not isinstance(bash("cat " + words, root=str(root)), Allow)
    assert not isinstance(bash("curl -s " + urls, root=str(root)), Allow)
    assert isinstance(bash("cat up.txt s/up.txt", root=str(root)), Allow)


SURROGATE_PATHS = ["{wt}/\udc80/\udc80/../../Makefile", "{wt}/\ud800/x", "{wt}/\udcff"]


@pytest.mark.parametrize("template", SURROGATE_PATHS)
def test_a_path_with_a_lone_surrogate_is_not_known(tmp_path: Path, template: str) -> None:
    """A link named U+FFFD to ``.``: Claude Code (Node) writes ``\\udc80`` as U+FFFD, the
    gate looked up byte 0x80 (not there: judged as text, ``<wt>/Makefile``, allowed), and
    the lead's ``Makefile`` was overwritten. A path with a lone surrogate is asked."""
    root, wt = _project(tmp_path)
    os.symlink(".", wt / "\ufffd")
    path = template.format(wt=wt)
    for tool in ("Write", "Edit", "Read"):
        data = {"file_path": path, "content": "x", "old_string": "a", "new_string": "b"}
        assert not isinstance(decide(tool, data, root=str(root)), Allow), tool
    relative = path[len(str(wt)) + 1 :]
    for command in (f"cp up.txt {relative}", f"echo x > {relative}", f"cat {relative}"):
        assert not isinstance(bash(command, root=str(root)), Allow), command


def test_node_writes_a_lone_surrogate_as_u_fffd(tmp_path: Path) -> None:
    """What the Write tool does with such a path, for real (Node, as Claude Code)."""
    node = shutil.which("node")
    assert node is not None, "`node` is not on PATH: run `make setup`"
    root, wt = _project(tmp_path)
    os.symlink(".", wt / "\ufffd")
    script = ('const fs = require("fs"); const p = JSON.parse(process.argv[1]).file_path;'
              ' fs.writeFileSync(p, "pwned\\n");')  # fmt: skip
    data = '{"file_path": "' + str(wt) + '/\\udc80/\\udc80/../../Makefile"}'
    subprocess.run([node, "-e", script, data], check=True)
    assert (root / "Makefile").read_text() == "pwned\n"
