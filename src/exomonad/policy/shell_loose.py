"""Command text in a word that the reading did not take for an expansion.

The lexer records each ``$(...)`` and backquote it expands (``Word.subs``) and keeps
other text as written. A ``$(``, a backquote or a ``${`` left over is text bash runs
only if it evaluates the word's value again (:mod:`.shell_evaluated`), or one the lexer
missed (single quotes inside ``${...}``, which do not quote everywhere). Each scan here
is linear in the text: a line is judged in bounded time whatever its size.

>>> loose(Word("a[$(id)]", quoted=True)), loose(Word("$(id)", True, subs=("id",)))
([2], [])
>>> loose(Word("$((i+1))x${y}", True)), loose(Word("$((id) )", True))
([], [0])
>>> in_subscript(Word("a[$(id)]", quoted=True), [2]), in_subscript(Word("s/[$(]//"), [3])
(True, False)
"""

from __future__ import annotations

import bisect
import re

from exomonad.policy.shell_ansi import ShellSyntaxError, ansi_c
from exomonad.policy.shell_lex import Word

__all__ = ["ansi_decoded", "hidden_in_expansion", "in_subscript", "loose"]

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
#: What an expansion's text ends in: ``${x}``, ``$(...)``, a backquote, ``$@``, ``$?``...
_EXPANSION_ENDS = frozenset("})`@*#?-$!")
#: How the lexer writes a process substitution and a backquote it expanded.
_PROCESS_SUB = "<process substitution>"
_BACKQUOTED = "`...`"
#: How many recorded substitutions a ``$(`` may be matched against past the next one.
_LOOKAHEAD = 4


def loose(word: Word) -> list[int]:
    """Where in ``word`` a ``$(``, a backquote or (in a word that does not expand) a
    ``${`` begins that the reading did not take for an expansion."""
    return _walk(word)[1]


def _walk(word: Word) -> tuple[list[tuple[int, int]], list[int]]:
    """The spans of ``word``'s text its recorded substitutions take, in order (the
    lexer records them in the order it meets them), and the loose spots."""
    text, subs, dynamic = word.text, word.subs, word.dynamic
    if "$" not in text and "`" not in text:
        return [], []
    closing = _matches(text, "(", ")") if dynamic and "$((" in text else {}
    spans: list[tuple[int, int]] = []
    spots: list[int] = []
    i = k = 0  # k: the next recorded substitution
    while i < len(text):
        if dynamic and text.startswith(_PROCESS_SUB, i):
            k, i = k + 1, i + len(_PROCESS_SUB)
        elif dynamic and text.startswith("$((", i) and _arithmetic(closing, text, i):
            i += 3
        elif text.startswith("$(", i):
            hit = next((j for j in range(k, min(k + _LOOKAHEAD, len(subs)))
                        if dynamic and text.startswith(f"$({subs[j]})", i)), None)  # fmt: skip
            if hit is None:
                spots.append(i)
                i += 2
                continue
            spans.append((i, i + len(subs[hit]) + 3))
            k, i = hit + 1, spans[-1][1]
        elif text[i] == "`":
            close = _backquote_end(text, i)
            hit = None
            if close is not None and dynamic:
                hit = _backquote_sub(word, k, text[i : close + 1])
            if hit is None or close is None:
                spots.append(i)
                i += 1
                continue
            spans.append((i, close + 1))
            k, i = hit + 1, close + 1
        elif text.startswith("${", i) and not dynamic:
            spots.append(i)
            i += 2
        else:
            i += 1
    return spans, spots


def _matches(text: str, opener: str, closer: str) -> dict[int, int]:
    """Each ``opener``'s index in ``text`` mapped to its ``closer``'s (one pass)."""
    stack: list[int] = []
    found: dict[int, int] = {}
    for j, char in enumerate(text):
        if char == opener:
            stack.append(j)
        elif char == closer and stack:
            found[stack.pop()] = j
    return found


def _arithmetic(closing: dict[int, int], text: str, i: int) -> bool:
    """Whether the ``$((`` at ``i`` closes as arithmetic (``))``), not as a command
    substitution of a subshell (``$((id) )``, which bash runs)."""
    inner = closing.get(i + 2)
    return inner is not None and closing.get(i + 1) == inner + 1 and text[inner + 1] == ")"


def _backquote_end(text: str, i: int) -> int | None:
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
        elif text[j] == "`":
            return j
        else:
            j += 1
    return None


def _backquote_sub(word: Word, k: int, quoted: str) -> int | None:
    """The recorded substitution (from the ``k``-th on) that the backquoted text
    ``quoted`` is: the lexer writes one it expanded as ```...```, one inside ``${...}``
    as written."""
    subs = word.subs
    if quoted == _BACKQUOTED and k < len(subs):
        return k
    body = re.sub(r"\\([`$\\])", r"\1", quoted[1:-1])
    return next((j for j in range(k, min(k + _LOOKAHEAD, len(subs))) if subs[j] == body), None)


def in_subscript(word: Word, spots: list[int]) -> bool:
    """Whether a spot lies in a subscript: ``[...]`` after a name's character (or, in a
    word that expands, after an expansion, which may end in a name: ``"${x}[\\$(id)]"``),
    or followed by ``=`` / ``+=`` (``a=([...]=v)``); an unclosed one runs to the end."""
    text = word.text
    if "[" not in text or not spots:
        return False
    ends = _NAME_CHARS | _EXPANSION_ENDS if word.dynamic else _NAME_CHARS
    closing = _matches(text, "[", "]")
    ordered = sorted(spots)
    for start, char in enumerate(text):
        if char != "[":
            continue
        end = closing.get(start, len(text))
        named = start > 0 and text[start - 1] in ends
        if not named and not text.startswith(("=", "+="), end + 1):
            continue
        after = bisect.bisect_right(ordered, start)
        if after < len(ordered) and ordered[after] < end:
            return True
    return False


def ansi_decoded(word: Word) -> Word:
    """``word`` with each ``$'...'`` outside its recorded substitutions decoded (the
    lexer keeps an expansion's text as written: ``${a[$'a[\\x24(id)]']}``, which bash
    decodes); one left open is kept as written."""
    text, out, i = word.text, [], 0
    spans = dict(_walk(word)[0])
    while i < len(text):
        if i in spans:
            out.append(text[i : spans[i]])
            i = spans[i]
        elif text.startswith("$'", i):
            try:
                body, i = ansi_c(text, i + 2)
            except ShellSyntaxError:
                out.append(text[i:])
                break
            out.append(body)
        else:
            out.append(text[i])
            i += 1
    return Word("".join(out), True, True, word.subs)


def hidden_in_expansion(src: str) -> list[str]:
    """Each ``${...}`` of ``src`` holding a single quote and after it a ``$(`` or a
    backquote (bash runs that where single quotes do not quote: in double quotes, a
    subscript, an offset: ``"${x:-'$(id)'}"``, ``${x:'$(id)'}``; the lexer took it for
    quoted text), or a ``$'...'`` that decodes to one (``${a[$'a[\\x24(id)]']}``). Read
    from the text, so the words the parser drops count too (``cd``'s, ``case``'s). One
    unclosed runs to the end; one pass over ``src``."""
    if "${" not in src or ("'" not in src):
        return []
    n = len(src)
    next_quote = [n] * (n + 1)
    for j in range(n - 1, -1, -1):
        next_quote[j] = j if src[j] == "'" else next_quote[j + 1]
    last_code = [-1] * (n + 1)  # last_code[j]: the last $( or backquote before j
    for j in range(n):
        last_code[j + 1] = j if src.startswith(("$(", "`"), j) else last_code[j]
    spans = _expansions(src)
    found = [
        (start, end)
        for start, end in spans
        if next_quote[start] < end and last_code[end] > next_quote[start]
    ]
    ansi = [0] * (n + 1)  # ansi[j]: how many $' begin before j
    for j in range(n):
        ansi[j + 1] = ansi[j] + src.startswith("$'", j)
    outer = -1  # decode only the outermost spans: the text once
    for start, end in spans:
        if start >= outer and ansi[end] > ansi[start]:
            outer = end
            decoded = ansi_decoded(Word(src[start:end], True)).text
            if "$(" in decoded or "`" in decoded:
                found.append((start, end))
    return [f"{src[a:b][:80]} (a command in quotes bash may run)" for a, b in sorted(set(found))]


def _expansions(src: str) -> list[tuple[int, int]]:
    """The ``${...}`` of ``src`` (from ``$`` to before ``}``), outer before inner; one
    unclosed runs to the end."""
    spans: list[tuple[int, int]] = []
    stack: list[tuple[int, bool]] = []
    j, n = 0, len(src)
    while j < n:
        if src.startswith("${", j):
            stack.append((j, True))
            j += 2
            continue
        if src[j] == "{":
            stack.append((j, False))
        elif src[j] == "}" and stack:
            start, expansion = stack.pop()
            if expansion:
                spans.append((start, j))
        j += 1
    spans += [(start, n) for start, expansion in stack if expansion]
    return sorted(spans, key=lambda span: (span[0], -span[1]))
