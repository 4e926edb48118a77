"""What ``perl``/``ruby`` one-liners and ``awk`` programs write, read or run besides
their stream.

Found as a worker: ``perl -pi -e 's/a/b/' ../../README.md`` and ``ruby -i -pe ...
../../README.md`` rewrote the lead's checkout, allowed (only ``sed -i`` was modelled);
``awk '{print > "../../x"}' f`` wrote it and ``awk 'BEGIN{system("...")}'`` ran a command
while looking like a reader of ``f``. Now:

* an in-place edit (``-i``) writes its files, judged like ``sed -i``'s (a backup suffix
  with a ``/``, ``-i../../../x``, is Unknown: it names a file elsewhere); a one-liner that
  reads its operands (``-n``/``-p``) reads them, judged like ``cat``'s. A ``-C``/``-x``
  directory change with ``-i`` is Unknown (the files are not where they look).
* an awk program (the first operand, ``-e``/``--source``) that redirects its output,
  pipes to or from a command, runs one (``system``, or gawk's indirect ``@f()``), reads
  a file by ``getline <`` or includes one, or a gawk that loads an extension (``-l``),
  is Unknown: a person judges it. A program the scanner cannot read (an expansion) is
  Unknown too.

Code in a script file, or in ``-e`` beyond these, is the interpreter's business: the
policy does not read programs (``docs/sandbox.md``: the sandbox bounds them).

>>> from exomonad.policy.shell_lex import Word
>>> [a.path for a in perl_ruby("perl", [Word(w) for w in ("-pi", "-e", "s/a/b/", "x")], "/w")]
['/w/x']
>>> [type(a).__name__ for a in perl_ruby("perl", [Word(w) for w in ("-l0ane", "1", "f")], "/w")]
['ReadFile']
>>> awk_escapes('{ print $1 > "out" }'), awk_escapes('$1 > 5 { n++ } END { print n }')
(True, False)
>>> awk_escapes('BEGIN { system("id") }'), awk_escapes('$2 == "a" || $3 { print }')
(True, False)
>>> awk_escapes('{ print $1 "|" $2 " > " $3 }'), awk_escapes('"date" | getline d')
(False, True)
"""

from __future__ import annotations

import re

from exomonad.policy.actions import Action, ReadFile, Unknown, WriteFile
from exomonad.policy.shell_env import scan_options
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_paths import resolve_path
from exomonad.policy.shell_reads import tree_root

__all__ = ["awk", "awk_escapes", "perl_ruby"]

#: name → (switch letters whose value is the rest of their cluster, those of them whose
#: value is the next word when the rest is empty, letters that change directory, letters
#: that give the code on the command line).
_SWITCHES: dict[str, tuple[frozenset[str], ...]] = {
    "perl": (frozenset("CdDeEFiImMVx"), frozenset("eEImM"), frozenset("x"), frozenset("eE")),
    "ruby": (frozenset("CeEFiIKrTWx"), frozenset("CeEFIr"), frozenset("Cx"), frozenset("e")),
}
#: Switches followed by a number only (``-l``: ruby's takes none, which matches too).
_DIGITS = frozenset("0l")
_NUMBER = re.compile(r"(?:x[0-9A-Fa-f]*|[0-7]*)")

#: An awk program's output redirection or pipe in a print/printf statement, a pipe into
#: getline or a coprocess, ``system()``, a ``getline < file`` read, gawk's ``@include``,
#: ``@load`` and indirect calls (``@f()`` with ``f = "system"``).
_AWK_OUT = re.compile(
    r"\bprintf?\b[^;{}\n]*(?:>|(?<!\|)\|(?!\|))"
    r"|(?<!\|)\|(?!\|)\s*getline\b|\|&"
    r"|\bsystem\s*\("
    r"|\bgetline\b[^;{}\n]*<"
    r"|@include\b|@load\b|@\w+\s*\("
)
#: An awk string constant (emptied before :data:`_AWK_OUT` is searched).
_AWK_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_AWK_OPTS = frozenset({"-F", "-v", "-f", "--file", "--assign", "--field-separator", "-e",
                       "--source", "-i", "--include", "-l", "--load"})  # fmt: skip


def awk_escapes(program: str) -> bool:
    """Whether an awk program writes, reads or runs something besides its stream (its
    string constants emptied first: ``print $1 "|" $2`` pipes nothing)."""
    return _AWK_OUT.search(_AWK_STRING.sub('""', program)) is not None


def awk(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    """Unknown for an awk program that escapes its stream (see the module doc); None
    otherwise (its operands are read, as the readers' table says)."""
    del cwd
    positionals, opts = scan_options(args, _AWK_OPTS)
    programs = [*opts.get("-e", []), *opts.get("--source", [])]
    if not programs and "-f" not in opts and "--file" not in opts:
        programs = list(positionals[:1])
    loads = "-l" in opts or "--load" in opts or "-i" in opts or "--include" in opts
    if loads or any(w is None or w.dynamic or awk_escapes(w.text) for w in programs):
        return [Unknown(f"{name} program writes, reads or runs something besides its "
                        "stream: " + " ".join(w.text for w in args))]  # fmt: skip
    return None


def perl_ruby(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    """The files a ``perl``/``ruby`` one-liner edits in place (writes) or reads (``-n``,
    ``-p``); None when it names none."""
    rest, next_word, chdir, code = _SWITCHES[name]
    letters: set[str] = set()
    suffix = ""  # -i's backup suffix
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "--":
            i += 1
            break
        if not text.startswith("-") or text == "-" or args[i].dynamic:
            break
        i += 1
        if text.startswith("--"):
            continue
        j = 1
        while j < len(text):
            c = text[j]
            letters.add(c)
            j += 1
            if c in _DIGITS:  # -l[octal], -0[octal], -0xHEX: digits, then more switches
                number = _NUMBER.match(text, j)
                j = number.end() if number else j
            elif c in rest:
                if c == "i":
                    suffix = "/" if args[i - 1].dynamic else text[j:]
                if j == len(text) and c in next_word:
                    i += 1  # its value is the next word
                break
    operands = args[i:] if letters & code else args[i + 1 :]  # else: a script file first
    if "i" in letters:
        if "/" in suffix:  # FILE + SUFFIX (``*``: the file's name) is a file elsewhere
            return [Unknown(f"{name} -i backs its files up in another directory: "
                            + " ".join(w.text for w in args))]  # fmt: skip
        if letters & chdir:
            return [Unknown(f"{name} edits files in place in another directory: "
                            + " ".join(w.text for w in args))]  # fmt: skip
        return [WriteFile(resolve_path(cwd, w)) for w in operands] or None
    if letters & {"n", "p"} and letters & code:
        roots = [tree_root(cwd, w) for w in operands]
        return [ReadFile(root) for root in roots if root is not None] or None
    return None
