"""Where bash finds the translation of a ``$"..."`` is set only by asking.

Bash replaces ``$"hello"`` by its translation in the catalog ``TEXTDOMAIN`` names under
``TEXTDOMAINDIR``, and reads that as a double-quoted string: a ``$(...)`` in it runs.
Found trying the gate as a worker (in a locale other than C, as most people's machines
are): a catalog in the worktree translating ``hello`` as ``$(grep -r SECRET ../..)``,
then ``TEXTDOMAINDIR=d TEXTDOMAIN=x`` and ``echo $"hello"`` on the next line printed the
lead's token, allowed as an ``echo``. Now both variables are code variables (asked).
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from exomonad.policy.decisions import Allow, Escalate
from tests.policy.worker import bash, scratch_worktree

SECRET = "exo_lead_secret"

COMMANDS = [
    'TEXTDOMAINDIR=d TEXTDOMAIN=x\necho $"hello"',
    "TEXTDOMAINDIR=d TEXTDOMAIN=x bash -c 'echo $\"hello\"'",
    "export TEXTDOMAINDIR=d TEXTDOMAIN=x; eval 'echo $\"hello\"'",
    'declare -x TEXTDOMAIN=x TEXTDOMAINDIR=d\necho $"hello"',
]


def _catalog(translations: dict[str, str]) -> bytes:
    """A GNU message catalog (``.mo``) of ``translations``, as ``msgfmt`` writes one."""
    keys = sorted(translations)
    ids = b"".join(k.encode() + b"\0" for k in keys)
    strs = b"".join(translations[k].encode() + b"\0" for k in keys)
    start = 7 * 4 + 16 * len(keys)
    table, offset = [], start
    for k in keys:
        table.append((len(k.encode()), offset))
        offset += len(k.encode()) + 1
    trans, offset = [], start + len(ids)
    for k in keys:
        trans.append((len(translations[k].encode()), offset))
        offset += len(translations[k].encode()) + 1
    head = struct.pack("<7I", 0x950412DE, 0, len(keys), 28, 28 + 8 * len(keys), 0, 0)
    pairs = b"".join(struct.pack("<2I", *p) for p in table + trans)
    return head + pairs + ids + strs


@pytest.fixture(scope="module")
def locales(tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    """A directory holding the ``en_US.UTF-8`` locale (for ``LOCPATH``), or None."""
    where = tmp_path_factory.mktemp("locales")
    if shutil.which("localedef") is None:
        return None
    made = subprocess.run(["localedef", "-i", "en_US", "-f", "UTF-8", str(where / "en_US.UTF-8")],
                          capture_output=True, check=False)  # fmt: skip
    return where if made.returncode == 0 else None


@pytest.mark.parametrize("command", COMMANDS)
def test_a_translation_catalog_of_the_workers_is_asked(
    tmp_path: Path, command: str, locales: Path | None
) -> None:
    root, wt = scratch_worktree(tmp_path, token=SECRET)
    catalog = wt / "d" / "en_US.UTF-8" / "LC_MESSAGES" / "x.mo"
    catalog.parent.mkdir(parents=True)
    catalog.write_bytes(_catalog({"": "Content-Type: text/plain; charset=UTF-8\n",
                                  "hello": "$(grep -r exo_lead ../..)"}))  # fmt: skip
    if locales is not None:  # the real effect, in a locale the machine may have
        env = {"PATH": "/usr/bin:/bin", "LOCPATH": str(locales), "LC_ALL": "en_US.UTF-8"}
        done = subprocess.run(["bash", "-c", command], cwd=wt, env=env, capture_output=True,
                              text=True, check=False, timeout=10)  # fmt: skip
        assert SECRET in done.stdout, (command, done)  # the real effect
    verdict = bash(command, root=str(root))
    assert isinstance(verdict, Escalate), (command, verdict)


@pytest.mark.parametrize("command", ['echo $"hello"', 'echo "$HOME"', "LANG=C sort f"])
def test_ordinary_strings_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), command
