"""The pinned agent CLIs (Claude Code, Gemini CLI, Codex CLI), run in isolated homes.

``make setup`` installs the pinned versions with ``npm ci`` under an ExoMonad checkout's
``tests/e2e`` (``node_modules`` there, ``claude/node_modules``, ``codex/node_modules``).
This package finds them, says how to install what is missing, and prepares what each
CLI needs to start unattended with no dialog: a private ``$HOME`` with its settings, an
environment built from scratch, its command line, and a launcher script. A model URL and
key are parameters: ``exomonad demo`` points them at the scripted APIs of
:mod:`exomonad.scripted` (offline, no key) or, with ``--live``, at the real ones; the
end-to-end tests use the same pieces.

* :mod:`exomonad.clis.env`: scrubbed environments, launcher scripts, process checks.
* :mod:`exomonad.clis.claude`, :mod:`exomonad.clis.gemini`, :mod:`exomonad.clis.codex`.
* :mod:`exomonad.clis.launchers`: ExoMonad's shims and the teammate launchers.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["CLI_ROOT", "CLI_ROOT_ENV", "package_version", "setup_hint"]

#: Overrides where the pinned CLIs are installed (default: this checkout's tests/e2e).
CLI_ROOT_ENV = "EXOMONAD_CLI_ROOT"
#: Where ``make setup`` installs the pinned CLIs: ``$EXOMONAD_CLI_ROOT``, else the
#: ``tests/e2e`` directory of the checkout this package runs from.
CLI_ROOT = Path(os.environ.get(CLI_ROOT_ENV) or Path(__file__).resolve().parents[3] / "tests/e2e")


def setup_hint(subdir: str = "") -> str:
    """How to install the CLI whose ``package.json`` is in ``CLI_ROOT / subdir``."""
    where = CLI_ROOT / subdir if subdir else CLI_ROOT
    return (
        f"run `make setup` in the ExoMonad checkout (it must `npm ci` in {where}; by hand: "
        f"`cd {where} && npm ci --no-audit --no-fund`), or set {CLI_ROOT_ENV} to the "
        "tests/e2e directory of a checkout where it ran"
    )


def package_version(package_json: Path) -> str | None:
    """The ``version`` of an npm ``package.json``, or None if unreadable."""
    try:
        data = json.loads(package_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    version = data.get("version") if isinstance(data, dict) else None
    return version if isinstance(version, str) else None
