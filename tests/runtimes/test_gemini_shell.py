"""Gemini CLI's ``run_shell_command`` takes a ``bash -c`` wrapper off before it runs the
command (``stripShellWrapper``): what it runs is judged, not only the hook's text.

Found trying the gate as a worker (``tests/e2e/test_gemini_shell_wrapper.py`` shows it
with the real Gemini CLI 0.61): ``bash -c 'echo a' 'x; echo pwned > ../../Makefile;
echo y'`` is ``echo a`` with a ``$0`` to bash and was allowed as that, but Gemini ran
what lies between the first and the last quote, and the lead's ``Makefile`` was
overwritten. :func:`commands` is checked against Gemini's own ``stripShellWrapper`` and
``shell-quote`` (copied out of the pinned bundle and run by node).
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from exomonad.clis.gemini import GEMINI_PACKAGE_DIR, gemini_install_problem
from exomonad.policy.decisions import Allow, Deny
from exomonad.runtimes.gemini_shell import commands, shell_quote_word
from tests.e2e.harness import fail_if_missing
from tests.policy.worker import decide

HOLES = [
    "bash -c 'echo a' 'x; echo pwned > ../../Makefile; echo y'",
    'bash -c "echo a" "x; echo pwned > ../../Makefile; echo y"',
    "sh -c 'true' '; git -C ../.. commit --allow-empty -m x; echo'",
    "/bin/zsh -c 'true' 'x; rm -rf ../../src; echo'",
    "BASH -C 'true' 'x; echo pwned > ../../Makefile; echo'",  # any case
    "cmd.exe /c 'true' 'x; echo pwned > ../../Makefile; echo'",
    "bash\ufeff-c 'true' 'x; echo pwned > ../../Makefile; echo'",  # JavaScript's blank
    "bash -c echo; echo pwned > ../../Makefile",  # unquoted: the rest runs
    "\ufeffgit -C ../.. commit --allow-empty -m x",  # trimmed: git runs
]


@pytest.mark.parametrize("command", HOLES)
def test_what_gemini_runs_for_a_bash_c_is_judged(command: str) -> None:
    verdict = decide("run_shell_command", {"command": command}, runtime="gemini")
    assert not isinstance(verdict, Allow), verdict  # each was allowed


@pytest.mark.parametrize(
    "command",
    [
        "sh -c 'echo a' 'x; cat ../../.exomonad/lead.token; echo y'",
        "\ufeffexomonad approve 1",  # was allowed: a worker answering its own escalation
        "\ufeffgit push -f origin HEAD:main",
    ],
)
def test_what_runs_inside_is_refused(command: str) -> None:
    verdict = decide("run_shell_command", {"command": command}, runtime="gemini")
    assert isinstance(verdict, Deny), verdict


@pytest.mark.parametrize(
    "command",
    [
        "bash -c 'make test'",
        'sh -c "pytest -q && echo ok"',
        "bash -c ls",
        "ls -la",
        "bash -lc 'git status'",
        'bash -c "echo \\"hi\\""',
    ],
)
def test_ordinary_wrapped_commands_stay_allowed(command: str) -> None:
    verdict = decide("run_shell_command", {"command": command}, runtime="gemini")
    assert isinstance(verdict, Allow), verdict


def test_other_runtimes_run_the_command_as_written() -> None:
    command = "bash -c 'echo a' 'x; echo pwned > ../../Makefile; echo y'"
    assert isinstance(decide("Bash", {"command": command}), Allow)


def test_shell_quote_words() -> None:
    assert shell_quote_word('"a b"') == "a b"
    assert shell_quote_word('"$?x"') == "$?"  # shell-quote drops the character after
    assert shell_quote_word('"${}"') is None  # its "Bad substitution"
    assert shell_quote_word('"a"*') is None  # a glob
    assert commands('bash -c "a\\"b"') == ['bash -c "a\\"b"', 'a"b']


_BUNDLE = GEMINI_PACKAGE_DIR / "bundle"
_ALPHABET = [*"ab $\\\"'{}; #*?x_-()|&<>\t", "\ufeff", "\u00a0", "\x1c", "${a}", "${}", "\n"]
_PREFIXES = ["bash -c ", "sh -c ", "BASH -C ", "/bin/zsh -c ", "cmd.exe /c ", "ls ",
             "powershell -Command ", " bash  -c\t", "bash\ufeff-c ", "bash\x1c-c "]  # fmt: skip


def _gemini_strip(cases: list[str], tmp_path: Path) -> list[str]:
    """Gemini CLI's own ``stripShellWrapper`` (with its ``shell-quote``) on each case,
    copied out of the pinned bundle and run by node."""
    chunk = next(p for p in sorted(_BUNDLE.glob("chunk-*.js"))
                 if "function stripShellWrapper(" in p.read_text())  # fmt: skip
    lines = chunk.read_text().split("\n")
    start = lines.index("var require_parse2 = __commonJS({")
    end = lines.index("// node_modules/shell-quote/index.js")
    strip = lines.index("function stripShellWrapper(command) {")
    close = lines.index("}", strip)
    script = tmp_path / "strip.js"
    script.write_text("\n".join([
        "var __commonJS = (cb, mod) => function __require() { return mod || (0, "
        "cb[Object.keys(cb)[0]])((mod = { exports: {} }).exports, mod), mod.exports; };",
        *lines[start:end], "var import_shell_quote = { parse: require_parse2() };",
        *lines[strip : close + 1],
        "for (const c of JSON.parse(require('fs').readFileSync(0, 'utf8')))",
        "  console.log(JSON.stringify(stripShellWrapper(c)));",
    ]))  # fmt: skip
    out = subprocess.run(["node", str(script)], input=json.dumps(cases), capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.integration
def test_commands_hold_what_gemini_runs(tmp_path: Path) -> None:
    fail_if_missing(gemini_install_problem)
    rng = random.Random(61)
    cases = [rng.choice(_PREFIXES) + q + "".join(rng.choices(_ALPHABET, k=rng.randint(0, 12)))
             + q + rng.choice(["", " ", "\ufeff"])
             for q in rng.choices(['"', "'", ""], k=4000)]  # fmt: skip
    for case, ran in zip(cases, _gemini_strip(cases, tmp_path), strict=True):
        found = commands(case)
        assert ran in found, (case, ran, found)


def test_a_long_blank_run_is_trimmed_in_one_pass() -> None:
    """Found reviewing this round: the trim was a regex retried at every blank of an
    inner run, 33 s of the server's CPU for 100,000 spaces between two words (a Gemini
    command up to 8 MB is judged); it is ``str.strip`` over JavaScript's spaces now, and a
    million blanks between two words are judged at once (the old trim would outlast the
    test's time-out). What it strips is JavaScript's ``\\s`` exactly."""
    command = "ls" + " " * 1_000_000 + "x"
    assert commands(command) == [command]
    spaces = "\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff"
    spaces += "".join(map(chr, range(0x2000, 0x200B)))
    assert commands(spaces + "ls" + spaces) == [spaces + "ls" + spaces, "ls"]
    assert commands("\x1cls") == ["\x1cls"]  # Python's whitespace, not JavaScript's
