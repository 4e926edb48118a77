"""Gemini CLI 0.61 rewrites a file tool's path before it uses it: ``read_file``,
``write_file`` and ``replace`` take a leading ``@`` off a path that does not exist
(``resolveDefensiveToolPath``), and ``replace`` looks a relative path that names nothing
up below the workspace, taking the one file of its name whose path ends with it
(``correctPath``).

Found probing as a worker: ``write_file @.gemini/settings.json`` and ``replace
gemini/settings.json`` were allowed as writes of files named so, and wrote the worker's
hook settings (``.gemini/settings.json``), which the policy refuses when named. Here the
CLI's own functions (from its bundle) say where the path lands, and the policy judges
that file.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from exomonad.clis import CLI_ROOT
from exomonad.policy.decisions import Allow, label
from tests.policy.worker import decide

BUNDLE = CLI_ROOT / "node_modules/@google/gemini-cli/bundle"

#: The CLI's path functions, cut from its bundle (start marker, end marker).
PIECES = (
    ("function resolveDefensiveToolPath(", "function trimTrailingSpacesAndDots("),
    ("function bfsFileSearchSync(", "// packages/core/src/utils/pathCorrector.ts"),
    ("function correctPath(", "// packages/core/src/tools/diffOptions.ts"),
)
RUN = """
const W = process.argv[2], p = process.argv[3], tool = process.argv[4];
const cfg = {getTargetDir: () => W, getWorkspaceContext: () => ({getDirectories: () => [W]}),
  getFileService: () => ({shouldIgnoreFile: () => false}), getFileFilteringOptions: () => ({})};
const found = tool === "replace" && !path.isAbsolute(p) ? correctPath(p, cfg) : {};
console.log(found.success ? found.correctedPath
  : path.resolve(W, resolveDefensiveToolPath(p, W)));
"""


def _gemini_target(wt: Path, tool: str, file_path: str) -> str:
    """Where Gemini CLI's ``tool`` puts ``file_path`` in workspace ``wt``."""
    node = shutil.which("node")
    chunk = next((f for f in sorted(BUNDLE.glob("*.js"))
                  if "function correctPath(" in f.read_text(errors="replace")), None)  # fmt: skip
    assert node is not None, "node is missing: `make setup` installs it"
    assert chunk is not None, f"the pinned Gemini CLI bundle is missing in {BUNDLE}: `make setup`"
    text = chunk.read_text()
    code = ['const fs3 = require("fs"), fs35 = fs3, fsSync = fs3, path = require("path"),'
            " path32 = path, path33 = path; const debugLogger = {warn() {}, debug() {}},"
            " logger = debugLogger;"]  # fmt: skip
    for start, end in PIECES:
        at = text.index(start)
        code.append(text[at : text.index(end, at)])
    script = wt.parent / "gemini_paths.js"
    script.write_text("\n".join([*code, RUN]))
    done = subprocess.run([node, str(script), str(wt), file_path, tool], capture_output=True,
                          text=True, check=True, timeout=30)  # fmt: skip
    return done.stdout.strip()


@pytest.mark.parametrize(
    ("tool", "data"),
    [
        ("write_file", {"file_path": "@.gemini/settings.json", "content": "{}"}),
        ("replace", {"file_path": "@.gemini/settings.json", "old_string": "{", "new_string": "["}),
        ("replace", {"file_path": "gemini/settings.json", "old_string": "{", "new_string": "["}),
        ("replace", {"file_path": "ni/settings.json", "old_string": "{", "new_string": "["}),
    ],
)
def test_a_path_gemini_rewrites_is_judged_where_it_lands(
    tmp_path: Path, tool: str, data: dict[str, Any]
) -> None:
    root = tmp_path / "p"
    wt = root / ".worktrees" / "w1"
    (wt / ".gemini").mkdir(parents=True)
    (wt / ".gemini" / "settings.json").write_text(json.dumps({"hooks": {}}))
    assert _gemini_target(wt, tool, data["file_path"]) == str(wt / ".gemini/settings.json")
    verdict = decide(tool, data, root=str(root), runtime="gemini")
    assert label(verdict) == "deny", verdict


def test_a_read_through_an_at_is_judged(tmp_path: Path) -> None:
    root = tmp_path / "p"
    wt = root / ".worktrees" / "w1"
    wt.mkdir(parents=True)
    (root / ".exomonad").mkdir()
    (root / ".exomonad" / "lead.token").write_text("T\n")
    (wt / "st").symlink_to("../../.exomonad")
    verdict = decide("read_file", {"file_path": "@st/lead.token"}, root=str(root),
                     runtime="gemini")  # fmt: skip
    assert label(verdict) == "deny", verdict


@pytest.mark.parametrize(
    ("tool", "data"),
    [
        ("replace", {"file_path": "a.py", "old_string": "x", "new_string": "y"}),
        ("replace", {"file_path": "new.py", "old_string": "", "new_string": "y"}),
        ("write_file", {"file_path": "@types/x.d.ts", "content": "x"}),
        ("read_file", {"file_path": "@/src/a.py"}),
    ],
)
def test_ordinary_edits_stay_allowed(tmp_path: Path, tool: str, data: dict[str, Any]) -> None:
    root = tmp_path / "p"
    wt = root / ".worktrees" / "w1"
    (wt / "src").mkdir(parents=True)
    (wt / "a.py").write_text("x\n")
    (wt / "src" / "a.py").write_text("x\n")
    assert isinstance(decide(tool, data, root=str(root), runtime="gemini"), Allow)
