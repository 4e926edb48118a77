"""`exomonad demo` refusing to start, before anything runs: `--live` without the API
keys (it names them), and CLIs that are not installed (it says how to install them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

KEYS = ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY")


def demo(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in KEYS}
    scratch = tmp_path / "tmp"
    scratch.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "exomonad", "demo", *args],
        capture_output=True,
        text=True,
        env={**base, "TMPDIR": str(scratch), **env},
        timeout=60,
        check=False,
    )


def test_live_without_keys_refuses_and_names_them(tmp_path: Path) -> None:
    done = demo(tmp_path, "--live", GEMINI_API_KEY="g-key")
    assert done.returncode == 1, done.stderr
    err = " ".join(done.stderr.split())
    assert "--live runs the real models and needs their API keys" in err
    assert "ANTHROPIC_API_KEY (Claude Code, the lead)" in err
    assert "OPENAI_API_KEY (Codex CLI)" in err
    assert "GEMINI_API_KEY" not in err  # it is set
    assert "Without --live the demo runs offline" in err
    assert list((tmp_path / "tmp").iterdir()) == []  # nothing was set up


def test_live_with_blank_keys_refuses_too(tmp_path: Path) -> None:
    done = demo(tmp_path, "--live", "--json", **dict.fromkeys(KEYS, " "))
    assert done.returncode == 1
    assert all(k in " ".join(done.stderr.split()) for k in KEYS)


def test_missing_clis_are_named_with_how_to_install_them(tmp_path: Path) -> None:
    empty = tmp_path / "no-clis"
    empty.mkdir()
    done = demo(tmp_path, EXOMONAD_CLI_ROOT=str(empty))
    assert done.returncode == 1
    err = " ".join(done.stderr.split())
    assert "cannot run the demo" in err
    for cli in ("Claude Code 2.1.330", "Gemini CLI 0.61.0", "Codex CLI 0.169.0"):
        assert cli in err
    assert "make setup" in err
    assert list((tmp_path / "tmp").iterdir()) == []


def test_help_says_what_it_does() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "exomonad", "demo", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    text = " ".join(done.stdout.split())
    for option in ("--keep", "--live", "--timeout", "--json"):
        assert option in text
