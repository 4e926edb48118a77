"""Environment variables a command sets without an assignment word.

``printf -v GIT_DIR ../../.git; export GIT_DIR; git commit`` moved the lead's ``main``
(found probing, a fourth round): the rules on ``GIT_DIR=``, ``TMPDIR=``, code variables
and the like read assignment words, and ``printf -v``, ``read``, ``mapfile``,
``${NAME:=value}`` and a loop (``for NAME in ...``) set a variable too. Such a setter of
an environment-style name (upper case, or npm's ``npm_config_*``) is :class:`Unknown`; a
shell's own lower-case variables (``while read -r line``) stay ordinary.

>>> from exomonad.policy.shell_lex import Word
>>> def judge(line):
...     found = sets_at_run_time([Word(t) for t in line.split()])
...     return found.raw if found else None
>>> judge("printf -v GIT_DIR ../../.git"), judge(": ${TMPDIR:=../..}")
('sets GIT_DIR at run time (printf -v)', 'sets TMPDIR at run time (${TMPDIR:=...})')
>>> judge("read -r line"), judge("printf -v out %s x") is None
(None, True)
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from exomonad.policy.actions import Unknown
from exomonad.policy.shell_command import in_this_shell
from exomonad.policy.shell_escape import DECLARERS
from exomonad.policy.shell_lex import Redir, Word

__all__ = ["sets_at_run_time"]

#: ``${NAME:=value}``, ``${NAME=value}``, ``${NAME[k]:=value}``: the expansion assigns
#: NAME when it is unset.
_DEFAULTING = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:\[[^]]*\])?:?=")
#: Bash's tables of the commands it runs and of aliases: ``BASH_CMDS[ls]=/bin/rm`` makes
#: ``ls`` run rm, as ``hash -p`` does, ``BASH_ALIASES[ls]=rm`` as ``alias`` does. Named
#: anywhere on a line, they may be set (an arithmetic ``(( BASH_CMDS[ls]=1 ))`` or ``let``
#: runs ``./1``; a name reference's target, ``r=BASH_CMDS``; a value ``(( v ))`` evaluates).
_TABLES = re.compile(r"(?<![A-Za-z0-9_])BASH_(?:CMDS|ALIASES)(?![A-Za-z0-9_])")
#: Options of ``read`` that take a value (the names come after them).
_READ_ARGS = frozenset({"-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"})
#: Options of ``mapfile``/``readarray`` that take a value.
_MAPFILE_ARGS = frozenset({"-d", "-n", "-O", "-s", "-u", "-C", "-c"})


def _environmental(name: str) -> bool:
    """A name programs read from the environment: upper case, or npm's settings (an
    element of one, ``PS4[0]``, is the variable itself when it is not an array)."""
    name = name.split("[", 1)[0]
    return (name.isupper() and name.replace("_", "").isalnum()) or name.startswith("npm_config_")


def _names(words: list[Word], with_arg: frozenset[str]) -> list[str]:
    """The operands after options (and their values) of a setter builtin."""
    out, i = [], 0
    while i < len(words):
        text = words[i].text
        if text == "--":
            return [w.text for w in words[i + 1 :]]
        if text.startswith("-") and len(text) > 1:
            i += 2 if text in with_arg else 1
            continue
        out.append(text)
        i += 1
    return out


def _array(words: list[Word]) -> list[str]:
    """The array ``read -a NAME`` (or ``-aNAME``) fills."""
    out: list[str] = []
    for i, word in enumerate(words):
        if word.text == "-a" and i + 1 < len(words):
            out.append(words[i + 1].text)
        elif word.text.startswith("-a") and len(word.text) > 2:
            out.append(word.text[2:])
    return out


def sets_at_run_time(words: list[Word], redirs: Sequence[Redir] = ()) -> Unknown | None:
    """An :class:`Unknown` when the command of ``words`` sets an environment-style
    variable other than by an assignment word, names bash's command or alias table
    (:data:`_TABLES`, in a word, a here-string or a here-document), or declares a name
    reference whose target is not written in it, else None.

    >>> judge = lambda line: sets_at_run_time([Word(t) for t in line.split()])
    >>> judge("let BASH_CMDS[ls]=1").raw, judge("printf -v PS4[0] x").raw
    ('names BASH_CMDS[ls]=1', 'sets PS4[0] at run time (printf -v)')
    >>> judge("read -a PS4").raw, judge("declare -n r").raw, judge("declare -n r=x")
    ('sets PS4 at run time (read)', 'sets a name reference at run time: r', None)
    >>> judge("IFS= read GIT_DIR").raw, judge("builtin command -p printf -v GIT_DIR x").raw
    ('sets GIT_DIR at run time (read)', 'sets GIT_DIR at run time (printf -v)')
    """
    seen = [w.text for w in words]
    seen += [t for r in redirs for t in (r.target.text, r.heredoc or "")]
    named = next((t for t in seen if _TABLES.search(t)), None)
    if named is not None:
        return Unknown(f"names {named}")
    for word in words:
        for name in _DEFAULTING.findall(word.text):
            if _environmental(name):
                return Unknown(f"sets {name} at run time (${{{name}:=...}})")
    words = in_this_shell(words)  # `IFS= read GIT_DIR`, `builtin printf -v`: it sets it
    if not words:
        return None
    head, rest = words[0].text, words[1:]
    names: list[str] = []
    how = head
    if head == "printf":
        texts = [w.text for w in rest]
        for i, text in enumerate(texts):
            if text == "-v" and i + 1 < len(texts):
                names.append(texts[i + 1])
            elif text.startswith("-v") and len(text) > 2:
                names.append(text[2:])
        how = "printf -v"
    elif head == "read":
        names = _names(rest, _READ_ARGS) + _array(rest)
    elif head in ("declare", "typeset", "local") and any(
        w.text.startswith("-") and "n" in w.text for w in rest
    ):  # declare -n r; read r: r names the variable read into it
        unset = [
            w.text for w in rest if not w.text.startswith("-") and (w.dynamic or "=" not in w.text)
        ]
        if unset:
            return Unknown(f"sets a name reference at run time: {' '.join(unset)}")
    elif head in ("mapfile", "readarray"):
        names = _names(rest, _MAPFILE_ARGS)[:1]
    elif head == "getopts":
        names = [w.text for w in rest[1:2]]
    elif head in ("for", "select") and not words[0].quoted:
        names = [w.text for w in rest[:1]]
    elif head in DECLARERS:  # its assignment words are judged as such (GIT_DIR=...)
        built = [w.text.split("=", 1)[0] for w in rest if "=" in w.text]
        names = [name for name in built if _built(name)]
    for name in names:
        if _environmental(name):
            return Unknown(f"sets {name} at run time ({how})")
        if _built(name):
            return Unknown(f"sets a variable named at run time ({how}): {name}")
    return None


def _built(name: str) -> bool:
    """Whether the name a setter is given is one the shell builds when it runs: found
    trying the gate as a worker, ``x=GIT_DIR; export $x=../../.git; git commit`` moved
    the lead's ``main``, allowed (``$x=...`` is no assignment word to read)."""
    return any(c in name for c in "$`")
