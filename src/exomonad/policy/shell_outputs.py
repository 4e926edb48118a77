"""The files a program writes that are not a redirection's or a known writer's target:
an output option (``sort -o``), an output operand (``uniq IN OUT``, ``split IN PREFIX``,
``rsync SRC DEST``, ``zip ARCHIVE``, ``tar cf ARCHIVE``), the operands compressors and
editors rewrite (``gzip FILE``, ``ed FILE``, ``sponge FILE``), ``patch``'s target.

Found as a worker: ``uniq README.md ../../README.md``, ``sort -o ../../README.md``,
``split -b 1 f ../../x``, ``gzip ../w2/README.md``, ``rsync f ../../z``, ``tar cf
../../z.tar f``, ``zip ../../z.zip f``, ``patch -d ../.. < p``, ``ed ../../README.md``
wrote outside the worktree as plain shell commands (most were judged as readers).
``split --filter`` runs a command: Unknown.

>>> from exomonad.policy.shell_lex import Word
>>> outputs("uniq", [Word("a"), Word("../b")], "/w/x")
[WriteFile(path='/w/b')]
>>> outputs("tar", [Word("czf"), Word("o.tgz"), Word("src")], "/w")
[WriteFile(path='/w/o.tgz')]
>>> outputs("gzip", [Word("-c"), Word("f")], "/w")
[]
"""

from __future__ import annotations

import os
import posixpath

from exomonad.policy.actions import Action, Unknown, WriteFile
from exomonad.policy.shell_env import scan_options
from exomonad.policy.shell_files import SORT_ARG
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_parse import resolve_path
from exomonad.policy.shell_reads import flags

__all__ = ["link_targets", "outputs"]

_COMPRESSORS = frozenset(
    {"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "pigz",
     "compress", "uncompress", "lzma", "unlzma", "brotli"}
)  # fmt: skip
_EDITORS = frozenset({"ed", "red", "ex", "vi", "vim", "nvim", "nano", "emacs", "sponge"})
_EDITOR_ARGS = frozenset({"-S", "--suffix", "-c", "-u"})
#: Options taking a value among split/csplit/uniq/rsync/zip/patch's.
_WITH_ARG = frozenset(
    [
        "-a",
        "-b",
        "-C",
        "-l",
        "-n",
        "-t",
        "-f",
        "-S",
        "-d",
        "-o",
        "-p",
        "-F",
        "-i",
        "-B",
        "-D",
        "-r",
        "--suffix",
        "--prefix",
        "--directory",
        "--output",
        "--input",
        "--filter",
    ]
)
#: Every program :func:`outputs` knows (the rest write nothing by option or operand).
_WRITERS = frozenset({"tar", "sort", "split", "csplit", "uniq", "rsync", "scp", "zip", "patch"}
                     ) | _COMPRESSORS | _EDITORS  # fmt: skip
_TO_STDOUT = frozenset({"-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test"})


def _tar(args: list[Word], cwd: str | None) -> list[Action]:
    """``tar`` creating or updating an archive: the archive (``-f``/``--file``)."""
    if not args:
        return []
    first = args[0].text
    clusters = [first.lstrip("-")] if not first.startswith("--") else []
    clusters += [w.text[1:] for w in args[1:] if w.text[:1] == "-" and w.text[1:2] != "-"]
    longs = {w.text.split("=", 1)[0] for w in args if w.text.startswith("--")}
    modes = set("".join(clusters)) & set("cruA") or longs & {"--create", "--append", "--update"}
    if not modes:
        return []
    for k, w in enumerate(args):
        text = w.text
        if text.startswith("--file="):
            return [WriteFile(resolve_path(cwd, Word(text[7:], w.dynamic, w.quoted)))]
        short = (k == 0 and not text.startswith("--")) or (text[:1] == "-" and text[1:2] != "-")
        if text == "--file" or (short and text.endswith("f")):
            value = args[k + 1] if k + 1 < len(args) else None
            return [WriteFile(resolve_path(cwd, value) if value is not None else None)]
        if short and "f" in text:  # -fARCHIVE, or f mid-cluster (its value follows)
            return [WriteFile(None)]
    return []


def outputs(name: str, args: list[Word], cwd: str | None) -> list[Action]:
    """What ``name ARGS`` writes by option or operand (empty: nothing known)."""

    def at(w: Word | None) -> Action:
        return WriteFile(resolve_path(cwd, w) if w is not None else None)

    if name not in _WRITERS:
        return []
    if name == "tar":
        return _tar(args, cwd)
    if name == "sort":
        _, opts = scan_options(args, frozenset(SORT_ARG.split()))
        return [at(w) for k in ("-o", "--output") for w in opts.get(k, [])]
    positionals, opts = scan_options(args, _WITH_ARG)
    if name in ("split", "csplit"):
        if "--filter" in opts:
            return [Unknown(f"{name} --filter runs a command")]
        prefix = opts.get("-f") or opts.get("--prefix") if name == "csplit" else None
        if prefix:
            return [at(w) for w in prefix]
        return [at(positionals[1])] if name == "split" and len(positionals) > 1 else [at(None)]
    if name == "uniq":
        return [at(positionals[1])] if len(positionals) > 1 else []
    if name in ("rsync", "scp"):
        dest = positionals[-1] if len(positionals) > 1 else None
        local = dest is not None and (":" not in dest.text or dest.text.startswith(("/", "./")))
        return [at(dest)] if local else []
    if name == "zip":
        return [at(positionals[0])] if positionals else []
    if name == "patch":
        target = opts.get("-o") or opts.get("--output") or (positionals[:1] or None)
        where = opts.get("-d") or opts.get("--directory")
        return [at(w) for w in target] if target else [at(where[0] if where else Word("."))]
    if name in _COMPRESSORS or name in _EDITORS:
        with_arg = _EDITOR_ARGS if name in _EDITORS else frozenset({"-S", "--suffix"})
        positionals, opts = scan_options(args, with_arg)
    if name in _COMPRESSORS and not _TO_STDOUT & set(opts):
        if any(k[:1] == "-" and k[1:2] != "-" and set(k[1:]) & {"c", "l", "t"} for k in opts):
            return []
        return [at(w) for w in positionals]
    if name in _EDITORS:
        return [at(w) for w in positionals if not w.text.startswith("+")]
    return []


def link_targets(name: str, opts: dict[str, list[Word | None]], sources: list[Word],
            targets: list[Word], cwd: str | None) -> list[Action]:  # fmt: skip
    """A link makes its target writable through the link: ``ln -s ../../.git/exomonad-hooks
    hk`` (then ``Write hk/pre-push``), a hard link ``ln ../../README.md h`` (then ``echo >>
    h``), ``cp -s``/``cp -l``. The target is a write; a symbolic one is resolved from the
    link's directory."""
    symbolic = flags(opts, "s", "--symbolic", "--symbolic-link") > 0
    if name not in ("ln", "cp") or (
        name == "cp" and not symbolic and not flags(opts, "l", "--link")
    ):
        return []
    base = cwd
    if name == "ln" and symbolic and targets:
        at = resolve_path(cwd, targets[0])
        base = at if at is None or os.path.isdir(at) or len(sources) > 1 else posixpath.dirname(at)
    return [WriteFile(resolve_path(base, w)) for w in sources]
