"""ExoMonad: heterogeneous coding agents as Claude Code teammates."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs ~10 ms
if TYPE_CHECKING:
    from exomonad.errors import ExomonadError

__version__ = "0.1.0"

__all__ = ["ExomonadError", "__version__"]


def __getattr__(name: str) -> object:
    # Lazy: `exomonad hook` runs on every tool call and must not pay for imports it
    # does not use (importing this package is on its path).
    if name == "ExomonadError":
        from exomonad.errors import ExomonadError

        return ExomonadError
    raise AttributeError(f"module 'exomonad' has no attribute {name!r}")
