"""`exomonad.demo.timeline`: hops, their latencies within a chain, and a missing hop
(what makes `exomonad demo` exit non-zero, naming it)."""

from __future__ import annotations

import pytest
from rich.console import Console

from exomonad.demo.timeline import Hop, MissingHop, Timeline
from exomonad.errors import ExomonadError
from exomonad.util.waiting import WaitTimeout, retry_until


def test_latency_is_measured_from_the_previous_hop_of_the_same_chain() -> None:
    tl = Timeline(started=100.0)
    tl.record("gemini-1", "prompt typed", 101.0)
    tl.record("codex-1", "prompt typed", 101.5)
    assert tl.wait("gemini-1", "Agent", lambda timeout: 101.25, timeout=5) == 101.25
    tl.record("codex-1", "Agent", 103.0)
    assert [(h.chain, h.latency) for h in tl.hops] == [
        ("gemini-1", None),
        ("codex-1", None),
        ("gemini-1", 0.25),
        ("codex-1", 1.5),
    ]
    assert tl.missing == []
    assert tl.to_json()[2] == {
        "chain": "gemini-1",
        "hop": "Agent",
        "t": 1.25,
        "latency": 0.25,
        "missing": False,
        "note": "",
    }


@pytest.mark.parametrize(
    "late", [TimeoutError("no matching request within 1.0s"), WaitTimeout("probe 'x' never held")]
)
def test_a_hop_that_times_out_is_missing_and_named(late: Exception) -> None:
    seen: list[Hop] = []
    tl = Timeline(started=0.0, echo=lambda _tl, hop: seen.append(hop))
    tl.record("codex-1 push", "the model runs `git push --force origin main`", 1.0)

    def never(timeout: float) -> float:
        raise late

    with pytest.raises(MissingHop) as caught:
        tl.wait("codex-1 push", "the policy denies it [hook]", never, timeout=7)
    assert str(caught.value) == (
        "missing hop: codex-1 push: the policy denies it [hook] (not within 7s)"
    )
    assert isinstance(caught.value, ExomonadError)  # the CLI's exit 1
    [missing] = tl.missing
    assert (missing.label, missing.at, missing.note) == (
        "the policy denies it [hook]",
        None,
        str(late),
    )
    assert seen == tl.hops  # each hop echoed as it was established
    console = Console(record=True, width=160)
    console.print(tl.table())
    out = console.export_text()
    assert "MISSING: the policy denies it [hook]" in out  # markup escaped, not eaten
    assert "git push --force origin main" in out
    assert tl.to_json()[-1]["missing"] is True


def test_a_finder_that_waits_for_a_real_condition() -> None:
    flag: list[bool] = []
    tl = Timeline()

    def find(timeout: float) -> float:
        flag.append(True)
        retry_until(lambda: bool(flag), timeout=timeout)
        return tl.started + 2.0

    tl.wait("lead", "ready", find, timeout=1)
    assert tl.hops[0].at == tl.started + 2.0
