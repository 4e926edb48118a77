"""The project's state directory, ``.exomonad/``.

Found by walking up from the working directory to the nearest ``.exomonad/``; if there
is none, it is placed at the enclosing git repository's root, else in the working
directory. ``$EXOMONAD_DIR`` overrides all of this.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["STATE_DIR_NAME", "adopt_lock_journal", "find_state_dir"]

STATE_DIR_NAME = ".exomonad"


def find_state_dir(start: Path | None = None, *, create: bool = False) -> Path:
    """Return the project's state dir (``$EXOMONAD_DIR`` wins); make it if ``create``."""
    env = os.environ.get("EXOMONAD_DIR")
    if env:
        found = Path(env).expanduser()
    else:
        here = (start or Path.cwd()).resolve()
        candidates = [here, *here.parents]
        found = next((d / STATE_DIR_NAME for d in candidates if (d / STATE_DIR_NAME).is_dir()),
                     None) or next(
            (d / STATE_DIR_NAME for d in candidates if (d / ".git").exists()),
            here / STATE_DIR_NAME,
        )
    if create:
        found.mkdir(parents=True, exist_ok=True)
    return found


def adopt_lock_journal(state_dir: Path) -> list[Path]:
    """Journal the inbox locks this process holds under ``<state>/locks-held``, after
    removing the ones a killed ExoMonad process left behind (see
    :func:`exomonad.teams.lock.recover_locks`). Returns the lock dirs removed."""
    from exomonad.teams.lock import recover_locks, set_lock_journal

    journal = state_dir / "locks-held"
    removed = recover_locks(journal)
    set_lock_journal(journal)
    return removed
