"""A Codex CLI command hook for tests (stdlib only): records what Codex sends, answers
as told.

Run as `python codex_hook_probe.py <log.jsonl> <mode> [<reason>]`. It appends one JSON
line to `<log.jsonl>`: `{"event", "stdin" (the parsed payload), "argv", "cwd", "env"
(the CODEX* and EXO* variables, HOME, PATH, TMPDIR)}`, then answers by `mode`:

* `record`: exit 0, no output (Codex goes on).
* `deny`: exit 0 with the event's JSON "no": PreToolUse `hookSpecificOutput`
  `permissionDecision: "deny"` + `permissionDecisionReason`; PermissionRequest
  `hookSpecificOutput.decision {behavior: "deny", message}`; Stop / PostToolUse /
  UserPromptSubmit `{"decision": "block", "reason"}`.
* `allow`: PermissionRequest `hookSpecificOutput.decision {behavior: "allow"}` (other
  events: like `record`).
* `legacy-block`: `{"decision": "block", "reason"}` (the older PreToolUse shape).
* `exit2`: the reason on stderr, exit 2.
* `exit1`: the reason on stderr, exit 1 (Codex treats it as a failed hook).
* `once-<mode>`: `<mode>` for the first call of this event, `record` after (so a
  blocking Stop hook lets the session end on its second call).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

DEFAULT_REASON = "blocked by codex_hook_probe"
#: The environment variables recorded (by prefix, and by name).
ENV_PREFIXES = ("CODEX", "EXO")
ENV_NAMES = ("HOME", "PATH", "TMPDIR")


def _append(path: str, record: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()


def _seen_before(path: str, event: str) -> int:
    try:
        with open(path, encoding="utf-8") as f:
            return sum(1 for line in f if json.loads(line).get("event") == event)
    except (OSError, ValueError):
        return 0


def answer(event: str, mode: str, reason: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) for `mode` on `event`."""
    if mode == "exit2":
        return 2, "", reason
    if mode == "exit1":
        return 1, "", reason
    if mode == "legacy-block":
        return 0, json.dumps({"decision": "block", "reason": reason}), ""
    if mode == "deny":
        if event == "PreToolUse":
            out: dict[str, Any] = {
                "hookSpecificOutput": {
                    "hookEventName": event,
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reason,
                }
            }
        elif event == "PermissionRequest":
            decision = {"behavior": "deny", "message": reason}
            out = {"hookSpecificOutput": {"hookEventName": event, "decision": decision}}
        else:
            out = {"decision": "block", "reason": reason}
        return 0, json.dumps(out), ""
    if mode == "allow" and event == "PermissionRequest":
        out = {"hookSpecificOutput": {"hookEventName": event, "decision": {"behavior": "allow"}}}
        return 0, json.dumps(out), ""
    return 0, "", ""


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4):
        print("usage: codex_hook_probe.py <log.jsonl> <mode> [<reason>]", file=sys.stderr)
        return 64
    log_path, mode = argv[1], argv[2]
    reason = argv[3] if len(argv) == 4 else DEFAULT_REASON
    raw = sys.stdin.read()
    try:
        payload: Any = json.loads(raw) if raw.strip() else None
    except ValueError:
        payload = {"__unparsed__": raw}
    event = str(payload.get("hook_event_name")) if isinstance(payload, dict) else "?"
    if mode.startswith("once-"):
        mode = mode[5:] if _seen_before(log_path, event) == 0 else "record"
    env = {k: v for k, v in os.environ.items() if k.startswith(ENV_PREFIXES) or k in ENV_NAMES}
    _append(
        log_path,
        {"event": event, "stdin": payload, "argv": argv[1:], "cwd": os.getcwd(), "env": env},
    )
    code, out, err = answer(event, mode, reason)
    if out:
        sys.stdout.write(out + "\n")
    if err:
        sys.stderr.write(err + "\n")
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
