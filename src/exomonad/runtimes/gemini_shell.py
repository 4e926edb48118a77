"""What Gemini CLI's ``run_shell_command`` runs for the ``command`` its hook is shown.

Gemini CLI 0.61 (``stripShellWrapper``, ``packages/core/src/utils/shell-utils.ts``) takes
a leading ``bash -c``/``sh -c``/``zsh -c`` (any directory before the name, any case, so
``BASH -C`` too), ``cmd.exe /c`` or ``powershell -Command`` off the command and runs the
rest, trimmed (JavaScript's blanks: U+FEFF too, which bash takes for part of a word,
so U+FEFF and ``git`` runs ``git``), as the command; a rest that starts and ends with the same quote
character loses the first and the last character, or, for ``-c`` and a double quote,
is read by the npm ``shell-quote`` parser, whose one word is run if it makes exactly
one. So ``bash -c 'echo a' 'x; echo pwned > ../../Makefile; echo y'``, ``echo a`` with
a ``$0`` to bash (and to ExoMonad), ran ``echo a' 'x; echo pwned > ../../Makefile; echo
y`` (found trying the gate as a worker: the lead's ``Makefile`` overwritten, allowed).
:func:`commands` gives every command Gemini may run for a hook's ``command``: the
policy judges each. Plain standard library: the hook client imports this package.

>>> commands("bash -c 'echo a' 'x; rm -rf ../..'")
["bash -c 'echo a' 'x; rm -rf ../..'", "echo a' 'x; rm -rf ../.."]
>>> commands('sh -c "make test"')
['sh -c "make test"', 'make test']
>>> commands("ls -la")
['ls -la']
"""

from __future__ import annotations

import re

__all__ = ["commands", "shell_quote_word"]

#: JavaScript's ``\\s`` (and what ``String.prototype.trim`` removes): Python's differs
#: (it has U+001C..U+001F, not U+FEFF), and a character one strips and the other keeps
#: would hide the wrapper from one of them.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_S, _NS = f"[{_JS_SPACE}]", f"[^{_JS_SPACE}]"
_WRAPPER = re.compile(
    rf"^{_S}*(?:(?:(?:{_NS}+/)?(?:sh|bash|zsh)){_S}+-c|cmd\.exe{_S}+/c"
    rf"|powershell(?:\.exe)?{_S}+(?:-NoProfile{_S}+)?-Command"
    rf"|pwsh(?:\.exe)?{_S}+(?:-NoProfile{_S}+)?-Command){_S}+",
    re.IGNORECASE,
)
#: The same characters, spelled out for ``str.strip`` (a regex ``\s+$`` is retried at
#: every blank of a long inner run: 33 s for 100,000 spaces between two words).
_TRIMMED = "".join(map(chr, range(0x2000, 0x200B))) + _JS_SPACE.replace("\u2000-\u200a", "")


def _js_trim(text: str) -> str:
    """``text.trim()`` as JavaScript does it, in linear time."""
    return text.strip(_TRIMMED)


def commands(command: str) -> list[str]:
    """``command`` and, where Gemini runs something else for it, what it may run (see
    the module doc): each distinct, the hook's own text first.

    >>> commands('bash -c "a" "b"'), commands(" ls ")
    (['bash -c "a" "b"', 'a" "b'], [' ls ', 'ls'])
    """
    found = _WRAPPER.match(command)
    if found is None:
        return list(dict.fromkeys([command, _js_trim(command)]))
    rest = _js_trim(command[found.end() :])
    run = rest
    if len(rest) >= 2 and rest[0] == rest[-1] and rest[0] in "'\"":
        word = shell_quote_word(rest) if rest[0] == '"' else None
        posix = _js_trim(found.group()).endswith("-c")
        run = word if word is not None and posix else rest[1:-1]
    return list(dict.fromkeys([command, run]))


#: shell-quote's chunker (``parse.js``): an operator, or a run of bare characters (a
#: backslash and a quote or operator character, or anything else but a blank, a quote
#: or an operator character) and quoted strings (where a quote after a backslash does
#: not close one, in single quotes too).
_CONTROL = r"(?:\|\||&&|;;|\|&|<\(|<<<|>>|>&|<&|[&;()|<>])"
_BARE = rf"""(?:\\['"|&;()<> \t]|[^{_JS_SPACE}'"|&;()<> \t])+"""
_CHUNK = re.compile(rf"""({_CONTROL})|((?:{_BARE}|"(?:\\"|[^"])*?"|'(?:\\'|[^'])*?')+)""")


def shell_quote_word(text: str) -> str | None:
    """What npm ``shell-quote``'s ``parse(text, key => "$" + key)`` (1.8, bundled in
    Gemini CLI 0.61) makes of ``text`` if it makes one word of it, by its own rules:
    text its chunker skips (a quote left open) is dropped; a backslash in double quotes
    drops only before ``"``, ``\\`` and ``$``; ``${NAME}`` is ``$NAME``. None where it
    makes something else (two words, an operator, a comment, a glob, an error).

    >>> shell_quote_word('"a \\\\"b\\\\" \\\\x ${HOME}"'), shell_quote_word('"a" "b"')
    ('a "b" \\\\x $HOME', None)
    >>> shell_quote_word('"a" \\'')  # the open quote is skipped: one word
    'a'
    """
    chunks = list(_CHUNK.finditer(text))
    if len(chunks) != 1 or chunks[0].group(1) is not None:
        return None
    return _chunk_word(chunks[0].group())


def _chunk_word(s: str) -> str | None:
    """shell-quote's reading of one chunk, character by character as ``parse.js`` reads
    it (a quote it leaves open stays open to the end); None if not a plain word."""
    out: list[str] = []
    quote, escaped, glob, i = "", False, False, 0
    while i < len(s):
        c = s[i]
        glob = glob or (not quote and c in "*?")
        if escaped:
            out.append(c)
            escaped = False
        elif quote and c == quote:
            quote = ""
        elif quote == "'":
            out.append(c)
        elif quote and c == "\\":
            i += 1
            nxt = s[i : i + 1]
            out.append(nxt if nxt in ('"', "\\", "$") else "\\" + nxt)
        elif c == "$":
            name, i = _variable(s, i)
            if name is None:
                return None  # "Bad substitution": Gemini runs what is between the quotes
            out.append("$" + name)
        elif quote:
            out.append(c)
        elif c in "\"'":
            quote = c
        elif c in "&;()|<>#":
            return None  # an operator, or a comment: not one word
        elif c == "\\":
            escaped = True
        else:
            out.append(c)
        i += 1
    return None if glob else "".join(out)


def _variable(text: str, at: int) -> tuple[str | None, int]:
    """The name of the variable at ``text[at] == "$"`` as shell-quote reads it, and the
    index of its last character (None for a bad ``${``); a one-character name (``$?``)
    also takes the character after it, which shell-quote drops (``"$?x"`` is ``$?``)."""
    rest = text[at + 1 :]
    if rest.startswith("{"):
        end = rest.find("}", 1)
        return (None, at) if end <= 1 else (rest[1:end], at + 1 + end)
    if rest[:1] and rest[0] in "*@#?$!_-":
        return rest[0], at + 2  # shell-quote's own slip: the character after it is lost
    word = re.match(r"[A-Za-z0-9_]*", rest)
    name = word.group() if word else ""
    return name, at + len(name)
