"""``exomonad policy check``: validate a policy file out of process.

Three steps, each reported: (1) import it in a *separate* Python process (the same
interpreter, ``python -I -m exomonad.policy.check_child``), (2) type-check it with
``mypy --strict`` if mypy is installed for that interpreter ("type check skipped: mypy not
installed" otherwise), (3) run its built-in examples. It passes when it loads, mypy finds
nothing (or is absent) and every example gives the expected decision.

The mypy cache lives in ``$EXOMONAD_MYPY_CACHE`` if set, else
``$XDG_CACHE_HOME/exomonad/mypy`` (``~/.cache/exomonad/mypy``).

Both processes run in Python's isolated mode (``-I``): ``-m`` alone would put the working
directory first on ``sys.path``, and a module planted there would run instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = ["CheckReport", "TypeCheck", "check_policy", "default_mypy_cache"]

TypeStatus = Literal["ok", "failed", "skipped"]


@dataclass(frozen=True)
class TypeCheck:
    """mypy's verdict: ``ok``, ``failed`` (``output`` has the errors) or ``skipped``."""

    status: TypeStatus
    output: str = ""


@dataclass(frozen=True)
class CheckReport:
    """The outcome of :func:`check_policy`."""

    path: Path
    loaded: bool
    error: str | None
    type_check: TypeCheck
    examples: list[dict[str, Any]] = field(default_factory=list)
    sha256: str | None = None

    @property
    def failed_examples(self) -> list[dict[str, Any]]:
        """The examples whose decision differed from the expected one."""
        return [e for e in self.examples if not e["passed"]]

    @property
    def ok(self) -> bool:
        """Loaded, type-checked (or skipped) and every example passed."""
        return self.loaded and self.type_check.status != "failed" and not self.failed_examples

    def lines(self) -> list[str]:
        """A human-readable report, one line per item."""
        out = [f"policy: {self.path}" + (f" (sha256 {self.sha256[:12]})" if self.sha256 else "")]
        out.append("load: ok" if self.loaded else f"load: FAILED: {self.error}")
        if self.type_check.status == "skipped":
            out.append("type check skipped: mypy not installed")
        elif self.type_check.status == "ok":
            out.append("type check: ok (mypy --strict)")
        else:
            out.append("type check: FAILED (mypy --strict)")
            out += ["  " + line for line in self.type_check.output.splitlines() if line]
        if self.loaded:
            passed = len(self.examples) - len(self.failed_examples)
            out.append(f"examples: {passed} passed, {len(self.failed_examples)} failed")
            for e in self.examples:
                mark = "PASS" if e["passed"] else "FAIL"
                got = "" if e["passed"] else f"  (got {e['actual']}: {e['reason']})"
                out.append(f"  {mark}  {e['role']:<8} {e['subject']}  -> {e['expected']}{got}")
        out.append("result: ok" if self.ok else "result: FAILED")
        return out


def default_mypy_cache() -> Path:
    """Where mypy's cache goes (see the module docstring)."""
    env = os.environ.get("EXOMONAD_MYPY_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "exomonad" / "mypy"


def _run_mypy(path: Path, python: str, cache_dir: Path, timeout: float) -> TypeCheck:
    cmd = [
        python,
        "-I",
        "-m",
        "mypy",
        "--strict",
        "--config-file=",
        "--no-color-output",
        "--hide-error-context",
        "--no-error-summary",
        "--cache-dir",
        str(cache_dir),
        path.name,
    ]
    try:
        proc = subprocess.run(
            cmd, cwd=path.parent, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return TypeCheck("failed", f"mypy took longer than {timeout:g}s")
    if "No module named mypy" in proc.stderr:
        return TypeCheck("skipped")
    if proc.returncode == 0:
        return TypeCheck("ok")
    return TypeCheck("failed", (proc.stdout + proc.stderr).strip())


def check_policy(
    path: Path,
    *,
    python: str | None = None,
    type_check: bool = True,
    mypy_cache: Path | None = None,
    timeout: float = 120.0,
) -> CheckReport:
    """Check the policy file at ``path`` (see the module docstring)."""
    path = path.resolve()
    python = python or sys.executable
    try:
        proc = subprocess.run(
            [python, "-I", "-m", "exomonad.policy.check_child", str(path)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        data: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        data = {"ok": False, "error": f"{path}: import took longer than {timeout:g}s"}
    except (ValueError, IndexError):
        data = {
            "ok": False,
            "error": f"{path}: checker crashed: {(proc.stderr or proc.stdout).strip()[-2000:]}",
        }
    if not type_check:
        mypy = TypeCheck("skipped")
    elif not path.is_file():
        mypy = TypeCheck("failed", f"{path}: no such file")
    else:
        mypy = _run_mypy(path, python, mypy_cache or default_mypy_cache(), timeout)
    return CheckReport(
        path,
        bool(data.get("ok")),
        data.get("error"),
        mypy,
        list(data.get("examples") or []),
        data.get("sha256"),
    )
