"""Text bash evaluates again when it runs: subscripts, prompts, indirection.

Bash evaluates an array subscript wherever it meets ``NAME[...]`` as a variable's name
(``test -v``, ``[[ -v ]]``, ``printf -v``, ``read``, ``declare``, ``local``, ``unset``,
``wait -p``) or in arithmetic (``let``, ``(( ))``, ``$(( ))``, ``[[ A -eq B ]]``, an
assignment's subscript, ``${x:offset}``), and expands the subscript first: a ``$(...)``,
a backquote or a ``${...}`` in it runs, though the line quoted it (found trying the gate
as a worker: ``test -v 'a[$(grep -r SECRET ../.. >&2)]'`` printed the lead's token and
``printf -v 'a[$(git -C ../.. reset -q --hard exo/w1)]' x`` moved the lead's ``main``,
allowed). Arithmetic that reads a variable evaluates its value so (``read x <<<
'a[$(...)]'; echo $((x))``), ``${x@P}`` expands a value as a prompt (its ``$(...)`` run)
and ``${!x}`` takes a value for a name, subscript and all. Each of these is
:class:`Unknown` (:func:`evaluated`):

- a word holding a subscript (``NAME[...]``, or ``[...]=`` in an array's list) with a
  ``$(``, a backquote or a ``${`` the reading did not take for an expansion;
- an expansion holding a ``$(`` or a backquote the reading did not take for one: single
  quotes in ``${...}`` do not quote everywhere (``"${x:-'$(id)'}"``, ``${x:'$(id)'}``);
- every ``${NAME@P}``; ``${!NAME}`` unless the line sets NAME only to plain names
  (``for v in HOME PATH; do echo "${!v}"; done``);
- text of the line that holds such a ``$(``, backquote or ``${`` anywhere (a word, a
  here-document, what ``printf`` or ``echo`` decodes), when the line also evaluates
  something (arithmetic, a subscript, a name given at run time): the text may reach it
  through a variable (``read -d '' x << 'E' ... E``, ``y="a[$x]"; echo $((y))``);
- builtins that run text: ``mapfile -C``, ``compgen``/``complete`` ``-C``, ``-F`` and a
  ``-W`` list with an expansion (it is expanded), ``fc`` but ``fc -l`` (it runs history).

A value the line builds from pieces none of which holds such text (``printf -v x
'a[%s(id)]' '$'``), like one read from a file, is not seen: the sandbox bounds it.

>>> from exomonad.policy.shell_parse import parse
>>> def judge(line):
...     return [a.raw.split(" (")[0] for a in evaluated(parse(line, "/w"), line)]
>>> judge("test -v 'a[$(id)]'"), judge("read x <<< 'a[$(id)]'; echo $((x))")
(['a[$(id)]'], ['a[$(id)]'])
>>> judge('read x <<< "$(id)"; echo "${x@P}"')
['${...@P}: bash runs the value as a prompt, its $(...) too']
>>> judge('a=(1 2); echo "${a[$((1+1))]}" ${#a[@]} $((n+1))'), judge("sed 's/[$(]//' f")
([], [])
"""

from __future__ import annotations

import posixpath
import re

from exomonad.policy.actions import Action, Unknown
from exomonad.policy.shell_arith import ARITH_TESTS
from exomonad.policy.shell_command import in_this_shell
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_loose import ansi_decoded, hidden_in_expansion, in_subscript, loose
from exomonad.policy.shell_parse import SimpleCommand, is_assignment
from exomonad.policy.state_built import printed_text

__all__ = ["evaluated"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: ``${!NAME...`` / ``${!N...``: the name, a subscript after it, the next character.
_INDIRECT = re.compile(r"\$\{!([A-Za-z_][A-Za-z0-9_]*|[0-9]+)(\[[^][]{0,64}\])?(.?)(.?)", re.DOTALL)
#: How many of the findings a line's judgement names.
_MOST_SHOWN = 4
#: How many indirections' names are looked up before the line is asked as it stands.
_MOST_NAMES = 16
#: ``${NAME:offset}`` / ``${NAME[...]:offset}`` (not ``:-``, ``:=``, ``:+``, ``:?``).
_OFFSET = re.compile(r"\$\{#?[A-Za-z_0-9@*#?]+(?:\[[@*]\])?:(?![-=+?])")
#: ``${NAME[i]}``, ``${#NAME[i]}``: a subscript that is not ``@`` or ``*``.
_READ_SUBSCRIPT = re.compile(r"\$\{[#!]?[A-Za-z_][A-Za-z0-9_]*\[(?![@*]\])")
#: Commands whose words the parser does not keep as a command's (its ``cd``, a ``case``).
_DROPPED = re.compile(r"(?<![\w-])(cd|pushd|popd|case)(?![\w-])")
#: Builtins that take a variable's name, which may come at run time.
_NAMED = frozenset({"read", "mapfile", "readarray", "unset", "declare", "typeset", "local",
                    "export", "readonly", "wait", "getopts"})  # fmt: skip
_TRIGGERS = ("$(", "`", "${")
#: An escape ``printf`` or ``echo -e`` decodes to a ``$`` or a backquote.
_SIGN_ESCAPE = re.compile(r"\\(x0?(24|60)|u0{0,2}(24|60)|U0{0,6}(24|60)|0{0,2}44|0?140)")


def evaluated(commands: list[SimpleCommand], src: str) -> list[Action]:
    """The :class:`Unknown` s for text of ``src`` (parsed into ``commands``) that bash
    may run when it evaluates a subscript, a prompt or a name (see the module)."""
    found: list[str] = []
    tainted: list[str] = []
    for cmd in commands:
        argv = _argv(cmd)
        found += _runs_text(argv)
        for word in _words(cmd, argv):
            spots = loose(word)
            if spots and in_subscript(word, spots):
                found.append(f"{word.text[:80]} (a subscript: bash runs the $(...) in it)")
            elif spots and word.dynamic and "${" in word.text:
                found.append(f"{word.text[:80]} (an expansion holding a command not seen)")
            elif spots:
                tainted.append(word.text)
        tainted += [r.heredoc for r in cmd.redirs if r.heredoc and _holds_trigger(r.heredoc)]
    found += hidden_in_expansion(src)
    shown = _expanded_text(commands, src)
    if "@P}" in shown:
        found.append("${...@P}: bash runs the value as a prompt, its $(...) too")
    found += _indirection(commands, shown)
    if tainted and not found and _evaluates(commands, src):
        found.append(f"{tainted[0][:80]} (code text, and the line evaluates a value)")
    return [Unknown(raw) for raw in list(dict.fromkeys(found))[:_MOST_SHOWN]]


def _expanded_text(commands: list[SimpleCommand], src: str) -> str:
    """``src`` but the bodies of here-documents whose delimiter is quoted (text bash
    does not expand: a script written to a file), each where it stands alone in ``src``."""
    for cmd in commands:
        for redir in cmd.redirs:
            if redir.heredoc and redir.target.quoted and src.count(redir.heredoc) == 1:
                src = src.replace(redir.heredoc, "")
    return src


def _words(cmd: SimpleCommand, argv: list[Word]) -> list[Word]:
    """The words of ``cmd`` and its redirections' targets; as words too, an expansion's
    ``$'...'`` decoded (``${a[$'a[\\x24(id)]']}``: the lexer keeps an expansion's text as
    written, bash decodes it) and what ``printf`` or ``echo`` print with their escapes
    decoded (``'a[\\x24(id)]'``)."""
    words = [*cmd.words, *(r.target for r in cmd.redirs)]
    for word in list(words):
        if word.dynamic and "$'" in word.text:
            words.append(ansi_decoded(word))
    if argv and argv[0].text in ("printf", "echo"):
        for word in argv[1:]:
            if _SIGN_ESCAPE.search(word.text):
                words.append(Word(printed_text(word.text), quoted=True))
    return words


def _argv(cmd: SimpleCommand) -> list[Word]:
    """The command's words past what still runs it in this shell (``builtin``,
    ``command``, ``time``: :func:`~exomonad.policy.shell_command.in_this_shell`)."""
    argv = in_this_shell(cmd.command_words) or list(cmd.command_words)
    if argv and "/" in argv[0].text:
        argv[0] = Word(posixpath.basename(argv[0].text), argv[0].dynamic, argv[0].quoted)
    return argv


def _holds_trigger(text: str) -> bool:
    return any(t in text for t in _TRIGGERS)


def _indirection(commands: list[SimpleCommand], src: str) -> list[str]:
    """``${!NAME}`` (and ``${!NAME[i]}``, ``${!N}``, ``${!NAME@Q}``...): a value taken for
    a name. Not the lists ``${!NAME[@]}`` (keys), ``${!PREFIX*}`` (names), nor a NAME the
    line sets only to plain names."""
    out: list[str] = []
    names: set[str] = set()
    for match in _INDIRECT.finditer(src):
        name, subscript, nxt, after = match.groups()
        names.add(name)
        if len(names) > _MOST_NAMES:
            return [*out, "${!...}: too many indirections to look up"]
        if subscript in ("[@]", "[*]") and nxt == "}":
            continue
        if not subscript and nxt in ("*", "@") and after == "}":
            continue
        if not subscript and nxt == "}" and _plain_names(name, commands, src):
            continue
        out.append(f"{match.group()[:40]}...: a value taken for a name, subscript and all")
    return out


def _plain_names(name: str, commands: list[SimpleCommand], src: str) -> bool:
    """Whether the line sets ``name`` only to plain names: by assignment words
    (``v=HOME``) or as a loop's variable over plain names (``for v in HOME PATH``),
    and names it nowhere else but in expansions."""
    if not _IDENT.fullmatch(name):
        return False
    sets = 0
    for cmd in commands:
        words = cmd.words
        head = words[0] if words else None
        if head and head.text in ("for", "select") and not head.quoted and len(words) > 1:
            if words[1].text == name:
                items = words[3:] if len(words) > 2 and words[2].text == "in" else []
                if not items or not all(_plain(w) for w in items):
                    return False
                sets += 1
            continue
        for word in words:
            if word.text.startswith(name + "="):
                if not _plain(Word(word.text[len(name) + 1 :], word.dynamic, word.quoted)):
                    return False
                sets += 1
    mentions = len(re.findall(rf"(?<![A-Za-z0-9_]){name}(?![A-Za-z0-9_])", src))
    expanded = len(re.findall(rf"\${name}(?![A-Za-z0-9_])|\$\{{!?{name}(?![A-Za-z0-9_]|:?=)", src))
    return sets > 0 and mentions == sets + expanded


def _plain(word: Word) -> bool:
    return not word.dynamic and not word.glob and _IDENT.fullmatch(word.text) is not None


def _evaluates(commands: list[SimpleCommand], src: str) -> bool:
    """Whether the line evaluates something bash may take from a variable's value:
    arithmetic, a subscript, an offset, an indirection, an integer or a reference
    variable, a name a builtin is given at run time."""
    if "((" in src or "$[" in src:
        return True
    if _DROPPED.search(src) and (_OFFSET.search(src) or _READ_SUBSCRIPT.search(src)):
        return True  # the words of cd and case, which the parser does not keep
    for cmd in commands:
        argv = _argv(cmd)
        head = argv[0].text if argv else ""
        texts = [w.text for w in argv[1:]]
        if head == "let" or any(t in ARITH_TESTS for t in texts):
            return True
        if head in ("test", "[", "[[") and ("-v" in texts or "-R" in texts):
            return True
        if head == "printf" and any(t.startswith("-v") for t in texts):
            return True
        if head in _NAMED and any(w.dynamic for w in argv[1:]):
            return True
        flags = [t for t in texts if t.startswith("-")]
        if head in ("declare", "typeset", "local") and any("i" in t or "n" in t for t in flags):
            return True
        for word in (*cmd.words, *(r.target for r in cmd.redirs)):
            text = word.text
            if word.dynamic and (_OFFSET.search(text) or _READ_SUBSCRIPT.search(text)):
                return True
            if is_assignment(word) and "[" in text.split("=", 1)[0]:
                return True
            if text.startswith("[") and "]=" in text:
                return True
    return False


def _runs_text(argv: list[Word]) -> list[str]:
    """Builtins that run text as code: ``mapfile -C`` (a callback), ``compgen`` and
    ``complete`` with ``-C``/``-F`` or a ``-W`` list with an expansion (the list is
    expanded), ``fc`` but ``fc -l`` (it runs commands from the history, which ``history
    -s`` writes); ``argv`` as :func:`_argv` gives it."""
    if not argv:
        return []
    head, args = argv[0].text, argv[1:]
    opts = [w.text for w in args if w.text.startswith("-") and not w.text.startswith("--")]
    full = " ".join(w.text for w in argv)[:80]
    if head in ("mapfile", "readarray") and any("C" in t for t in opts):
        return [f"{full} (a callback: code it runs)"]
    if head in ("compgen", "complete"):
        texts = [w.text for w in args]
        lists = [  # -W LIST, -WLIST, -aW LIST: the word list, which bash expands
            t[t.index("W") + 1 :] or (texts[i + 1] if i + 1 < len(texts) else "")
            for i, t in enumerate(texts)
            if t in opts and "W" in t
        ]
        if any("$" in t or "`" in t for t in lists) or any("C" in t or "F" in t for t in opts):
            return [f"{full} (completion: code it runs)"]
    if head == "fc" and not any("l" in t for t in opts):
        return [f"{full} (runs commands from the history)"]
    return []
