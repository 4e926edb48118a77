"""ExoMonad: heterogeneous coding agents as Claude Code teammates."""

from __future__ import annotations

from exomonad.errors import ExomonadError

__version__ = "0.1.0"

__all__ = ["ExomonadError", "__version__"]
