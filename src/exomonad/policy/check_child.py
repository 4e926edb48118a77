"""``python -m exomonad.policy.check_child PATH``: load a policy file, print a JSON report.

Run by :func:`exomonad.policy.check.check_policy` in a separate process, so a policy that
crashes, loops or pollutes the interpreter cannot affect the caller. Output (one JSON
object on stdout): ``ok``, ``error``, ``sha256``, ``name``, and ``examples`` (``role``,
``subject``, ``expected``, ``actual``, ``reason``, ``passed``). Exit status 0 if it
loaded (examples may still fail), 1 if not.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from exomonad.policy.decisions import label
from exomonad.policy.errors import PolicyLoadError
from exomonad.policy.loader import load_policy_source

__all__ = ["main", "report"]


def report(path: Path) -> dict[str, Any]:
    """Load ``path`` and describe the outcome (never raises for a bad policy)."""
    out: dict[str, Any] = {
        "path": str(path),
        "ok": False,
        "error": None,
        "sha256": None,
        "name": None,
        "examples": [],
    }
    try:
        source = path.read_bytes()
    except OSError as exc:
        out["error"] = f"{path}: cannot read: {exc}"
        return out
    out["sha256"] = hashlib.sha256(source).hexdigest()
    try:
        policy, results = load_policy_source(source, str(path), check_examples=False)
    except PolicyLoadError as exc:
        out["error"] = str(exc)
        return out
    out["ok"] = True
    out["name"] = policy.name
    out["examples"] = [
        {
            "role": r.example.role,
            "subject": r.example.describe(),
            "expected": r.expected_label,
            "actual": label(r.actual),
            "reason": r.actual.reason,
            "passed": r.passed,
        }
        for r in results
    ]
    return out


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``check_child PATH``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m exomonad.policy.check_child PATH\n")
        return 2
    result = report(Path(args[0]))
    sys.stdout.write(json.dumps(result) + "\n")
    return 0 if result["ok"] else 1


if __name__ == "__main__":  # pragma: no cover - exercised through subprocess
    raise SystemExit(main())
