"""Load a project policy (``.exomonad/policy.py``) and keep it fresh: :class:`PolicyStore`.

On every :meth:`PolicyStore.current` call the file is ``stat``-ed (cheap). When its
mtime, size or inode changed, it is executed afresh in a new module namespace, checked
(it must bind ``policy`` to a :class:`~.model.Policy`) and its ``examples`` are run; only
then is the new :class:`LoadedPolicy` swapped in, by a single reference assignment. A
decision holds the :class:`LoadedPolicy` it started with, so it finishes on that policy.

A policy that fails in any way is never used: the last good one stays, and ``error``
says why (for ``/health``). Deleting the file falls back to the built-in policy.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import sys
import threading
import time
import traceback
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from exomonad.policy import default as _default
from exomonad.policy.errors import PolicyLoadError
from exomonad.policy.examples import ExampleResult, run_examples
from exomonad.policy.model import Policy

__all__ = [
    "BUILTIN_SOURCE",
    "LoadedPolicy",
    "PolicyStore",
    "load_policy_file",
    "load_policy_source",
]

#: ``LoadedPolicy.source`` of the embedded default policy.
BUILTIN_SOURCE = "<builtin>"
_counter = itertools.count()


@dataclass(frozen=True)
class LoadedPolicy:
    """A policy that loaded and passed its examples, with its identity.

    ``policy_id`` is ``<first 12 hex of sha256(source)>-v<version>``; ``version`` counts
    swaps in this store (the built-in policy at start-up is version 0).
    """

    policy: Policy
    sha256: str
    version: int
    source: str
    loaded_at: float
    examples: tuple[ExampleResult, ...] = ()

    @property
    def policy_id(self) -> str:
        """Stable for one source text within one store: ``sha256[:12]-vN``."""
        return f"{self.sha256[:12]}-v{self.version}"


def _format_exc(exc: BaseException, filename: str) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    where = f" (line {frames[-1].lineno})" if frames else ""
    if isinstance(exc, SyntaxError):
        where = f" (line {exc.lineno})"
        return f"{filename}: SyntaxError{where}: {exc.msg}"
    return f"{filename}: {type(exc).__name__}{where}: {exc}"


def load_policy_source(
    source: bytes, filename: str, *, check_examples: bool = True
) -> tuple[Policy, list[ExampleResult]]:
    """Execute a policy module's ``source`` and return its policy and example results.

    Raises :class:`~.errors.PolicyLoadError` if it does not compile, raises, binds no
    ``policy`` of the right type, has malformed examples, or (``check_examples``) an
    example fails.
    """
    name = f"exomonad_project_policy_{next(_counter)}"
    module = types.ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module  # dataclasses in the policy look their module up
    try:
        code = compile(source, filename, "exec")
        exec(code, module.__dict__)
    except Exception as exc:
        raise PolicyLoadError(_format_exc(exc, filename)) from exc
    finally:
        sys.modules.pop(name, None)
    namespace: dict[str, Any] = module.__dict__
    policy = namespace.get("policy")
    if not isinstance(policy, Policy):
        raise PolicyLoadError(
            f"{filename}: must bind `policy = Policy(...)`, found {type(policy).__name__}"
        )
    examples = namespace.get("examples", [])
    if not isinstance(examples, list | tuple):
        raise PolicyLoadError(f"{filename}: `examples` must be a list")
    try:
        results = run_examples(policy, examples)
    except (TypeError, ValueError) as exc:
        raise PolicyLoadError(f"{filename}: bad example: {exc}") from exc
    failed = [r for r in results if not r.passed]
    if check_examples and failed:
        first = failed[0]
        raise PolicyLoadError(
            f"{filename}: {len(failed)} of {len(results)} example(s) fail; first: "
            f"{first.example.role} {first.example.describe()!r} expected "
            f"{first.expected_label}, got {first.actual!r}"
        )
    return policy, results


def load_policy_file(
    path: Path, *, check_examples: bool = True
) -> tuple[Policy, list[ExampleResult], str]:
    """Load ``path``; returns (policy, example results, sha256 of the source)."""
    try:
        source = path.read_bytes()
    except OSError as exc:
        raise PolicyLoadError(f"{path}: cannot read: {exc}") from exc
    policy, results = load_policy_source(source, str(path), check_examples=check_examples)
    return policy, results, hashlib.sha256(source).hexdigest()


def _builtin_sha() -> str:
    try:
        return hashlib.sha256(Path(_default.__file__).read_bytes()).hexdigest()
    except OSError:  # pragma: no cover - zipped installs
        return hashlib.sha256(b"exomonad-builtin-policy").hexdigest()


class PolicyStore:
    """The current policy, reloaded from ``path`` when the file changes (thread-safe).

    Parameters
    ----------
    path:
        The project policy file (usually ``<state dir>/policy.py``); ``None`` for the
        built-in policy only.
    load_timeout:
        Seconds a load may take before it is abandoned as an error (a policy that loops
        forever at import must not hang decisions).
    """

    def __init__(self, path: Path | None = None, *, load_timeout: float = 10.0) -> None:
        self.path = path
        self.load_timeout = load_timeout
        self._lock = threading.Lock()
        self._versions = itertools.count(1)
        self._loaded = LoadedPolicy(
            _default.DEFAULT_POLICY, _builtin_sha(), 0, BUILTIN_SOURCE, time.time()
        )
        self._signature: tuple[int, int, int] | None = None
        #: Why the last load failed (None after a good load); for ``/health``.
        self.error: str | None = None
        #: When ``error`` was set (epoch seconds).
        self.error_at: float | None = None
        self.refresh()

    def _stat(self) -> tuple[int, int, int] | None:
        if self.path is None:
            return None
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def current(self) -> LoadedPolicy:
        """The policy to decide with; reloads first if the file changed.

        While another thread is reloading this returns the previous policy at once.
        """
        if self._stat() == self._signature:
            return self._loaded
        if self._lock.acquire(blocking=False):
            try:
                self._check()
            finally:
                self._lock.release()
        return self._loaded

    def current_if_fresh(self) -> LoadedPolicy | None:
        """The policy to decide with if no reload is due (one ``stat``); None if the
        file changed, when :meth:`current` would reload it first (which may take up to
        ``load_timeout``)."""
        return self._loaded if self._stat() == self._signature else None

    def refresh(self) -> LoadedPolicy:
        """Check the file now (waiting for a reload in progress) and return the policy."""
        with self._lock:
            self._check()
        return self._loaded

    @property
    def policy_id(self) -> str:
        """The current policy's id."""
        return self._loaded.policy_id

    def _check(self) -> None:
        signature = self._stat()
        if signature == self._signature:
            return
        self._signature = signature
        if signature is None:
            if self._loaded.source != BUILTIN_SOURCE:
                self._swap(_default.DEFAULT_POLICY, _builtin_sha(), BUILTIN_SOURCE, ())
            self.error = self.error_at = None
            return
        assert self.path is not None
        outcome: list[tuple[Policy, list[ExampleResult], str] | BaseException] = []
        path = self.path

        def work() -> None:
            try:
                outcome.append(load_policy_file(path))
            except BaseException as exc:
                outcome.append(exc)

        worker = threading.Thread(target=work, name="exomonad-policy-load", daemon=True)
        worker.start()
        worker.join(self.load_timeout)
        if not outcome:
            self._fail(f"{path}: loading took longer than {self.load_timeout:g}s; abandoned")
        elif isinstance(outcome[0], BaseException):
            exc = outcome[0]
            self._fail(
                str(exc)
                if isinstance(exc, PolicyLoadError)
                else f"{path}: {type(exc).__name__}: {exc}"
            )
        else:
            policy, results, sha = outcome[0]
            self._swap(policy, sha, str(path), tuple(results))
            self.error = self.error_at = None

    def _fail(self, message: str) -> None:
        self.error = message
        self.error_at = time.time()

    def _swap(
        self, policy: Policy, sha: str, source: str, results: tuple[ExampleResult, ...]
    ) -> None:
        self._loaded = LoadedPolicy(policy, sha, next(self._versions), source, time.time(), results)

    def health(self) -> dict[str, Any]:
        """A JSON-ready summary for ``/health``."""
        loaded = self._loaded
        return {
            "policy_id": loaded.policy_id,
            "sha256": loaded.sha256,
            "version": loaded.version,
            "source": loaded.source,
            "loaded_at": loaded.loaded_at,
            "examples": len(loaded.examples),
            "error": self.error,
            "error_at": self.error_at,
            "path": str(self.path) if self.path is not None else None,
        }
