"""What the approval popup (``exomonad approvals prompt``) shows above ``approve?``.

A tmux popup is a fixed window with no scrollback, so what a worker controls (the size of
its tool call's parts) must never push what the person is asked out of view: the parts
needing the answer are cut to fit, the allowed ones only counted, the reason last.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from rich.cells import cell_len

from exomonad.policy.actions import action_from_dict
from exomonad.policy.approvals import Approval
from exomonad.util.clip import clip, collapse
from exomonad.util.display import visible

__all__ = ["popup_lines"]

#: The reason's share of the popup: at least this many rows, more if the parts leave room.
_WHY_ROWS = 4
#: The cut-marker's room (``… (12345 more characters)``) in a clipped line.
_MARKER = 30


def _rows(line: str, width: int) -> int:
    """Rows ``line`` takes on a terminal ``width`` cells wide (it wraps there)."""
    return max(1, -(-cell_len(line) // max(1, width)))


def _fit(prefix: str, text: str, rows: int, width: int) -> str:
    """``prefix + text``, ``text`` escaped, its whitespace runs collapsed and cut (saying
    so) to fit ``rows`` rows of ``width`` cells, when it can be (at least 20 characters)."""
    text = collapse(visible(text))
    limit = max(20, rows * width - len(prefix) - _MARKER)
    line = prefix + clip(text, limit)
    while _rows(line, width) > rows and limit > 20:  # wide characters take two cells
        limit = max(20, limit * 2 // 3)
        line = prefix + clip(text, limit)
    return line


def _part(data: Any) -> str:
    """One recorded action as its :meth:`~exomonad.policy.actions.Action.describe`."""
    try:
        return action_from_dict(dict(data)).describe()
    except (TypeError, ValueError):  # not a recorded action (an older or a test record)
        return json.dumps(data, ensure_ascii=False, default=str)


def _more(count: int) -> str:
    return f"  … and {count} more parts (exomonad approvals list)"


def popup_lines(approval: Approval, width: int, height: int) -> list[str]:
    """What the popup shows above ``approve?``, in ``height - 1`` rows of ``width``: the
    parts that need the answer (each cut to fit, saying so), how many allowed parts are
    left out, and the reason last, next to the question. Found probing: every action
    printed whole, a worker's allowed ``true '<20000 spaces>'`` pushed the ``why:`` naming
    a delete out of the popup (which has no scrollback); ``y`` ran the delete."""
    actions = approval.action if isinstance(approval.action, list) else [approval.action]
    asks = approval.asks or ()
    picked = [actions[i] for i in asks if 0 <= i < len(actions)]
    if not picked:  # an older record, or one made without: every part
        picked = actions
    left_out = len(actions) - len(picked)
    # The rarest kinds first: 199 ``sudo true N`` cannot push the one delete out of view.
    kinds = Counter(d.get("type") if isinstance(d, dict) else None for d in picked)
    picked = sorted(picked, key=lambda d: kinds[d.get("type") if isinstance(d, dict) else None])
    head = [
        _fit("ExoMonad approval ", approval.id, 1, width),
        _fit("agent: ", f"{approval.agent} (role {approval.role})", 1, width),
        f"needs your answer: {len(picked)} of {len(actions)} part{'s' * (len(actions) != 1)}"
        + (f" ({left_out} allowed part{'s' * (left_out != 1)} not shown)" if left_out else ""),
    ]
    room = max(1, height - 1 - sum(_rows(line, width) for line in head))
    budget = max(0, room - min(_WHY_ROWS, max(1, room // 3)))
    parts: list[str] = []
    used = 0
    for n, data in enumerate(picked):
        remaining = len(picked) - n
        # Room kept for "… and N more" after this one, if others follow.
        more = _rows(_more(remaining), width) if remaining > 1 else 0
        share = (budget - used - more) // remaining
        line = _fit("  - ", _part(data), max(1, share), width)
        if used + _rows(line, width) + more > budget and parts:
            parts.append(_more(remaining))
            used += _rows(parts[-1], width)
            break
        parts.append(line)
        used += _rows(line, width)
    why = _fit("why:   ", approval.reason, max(1, room - used), width)
    return [*head, *parts, why]
