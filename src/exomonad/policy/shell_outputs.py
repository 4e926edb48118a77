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
>>> outputs("gzip", [Word("-c"), Word("f")], "/w")  # it reads f, writes nothing
[ReadFile(path='/w/f', recursive=False, include=())]
"""

from __future__ import annotations

import os
import posixpath

from exomonad.policy.actions import Action, Unknown, WriteFile
from exomonad.policy.shell_archive import ARCHIVERS, archive_writes
from exomonad.policy.shell_env import scan_options
from exomonad.policy.shell_files import SORT_ARG, operand_reads
from exomonad.policy.shell_into import into_directory
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_paths import resolve_path
from exomonad.policy.shell_programs import program_writes, programs
from exomonad.policy.shell_reads import flags, option_set

__all__ = ["link_targets", "outputs", "writers"]

_COMPRESSORS = frozenset(
    {"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "pigz",
     "compress", "uncompress", "lzma", "unlzma", "brotli"}
)  # fmt: skip
_DECOMPRESSORS = frozenset(
    {"gunzip", "bunzip2", "unxz", "unzstd", "unlzma", "uncompress", "unpigz"}
)  # fmt: skip
_COMPRESSOR_ARGS = frozenset({"-S", "--suffix", "-o", "--output", "--output-dir-flat",
                              "--output-dir-mirror", "--trace"})  # fmt: skip
#: Options naming a file or directory a compressor writes (found as a worker: ``zstd
#: own.txt --output-dir-flat=../..`` wrote ``own.txt.zst`` in the lead's checkout).
_COMPRESSOR_OUTS = ("-o", "--output", "--output-dir-flat", "--output-dir-mirror", "--trace")
#: Options naming a list of the files to compress (``zstd --filelist``, ``xz --files``):
#: written beside files the command line does not show.
_FILE_LISTS = ("--filelist", "--files", "--files0")
_EDITORS = frozenset({"ed", "red", "ex", "vi", "vim", "nvim", "nano", "emacs", "sponge"})
_EDITOR_ARGS = frozenset({"-S", "--suffix", "-c", "-u"})
#: patch's options that take a value; those naming its reject file; those naming its
#: backups by a prefix or suffix, where a ``/`` puts them elsewhere (found probing:
#: ``patch -b -B ../../ f p.diff`` wrote the lead's ``f``, ``-r ../../x`` wrote ``x``
#: there, ``--suffix=../../../x`` beside a directory ``f..`` wrote ``x`` above).
_PATCH_ARGS = option_set(
    "-B -D -F -V -Y -d -g -i -o -p -r -z --prefix --ifdef --fuzz --version-control "
    "--basename-prefix --directory --get --input --output --strip --reject-file --suffix "
    "--quoting-style --reject-format --read-only"
)
_PATCH_REJECTS = ("-r", "--reject-file")
_PATCH_BACKUPS = ("-B", "--prefix", "-Y", "--basename-prefix", "-z", "--suffix")
#: uniq's options that take a value.
_UNIQ_ARGS = frozenset({"-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"})
#: Options taking a value among split/csplit/patch's.
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
_WRITERS = frozenset({"sort", "split", "csplit", "uniq", "patch"}) | _COMPRESSORS | _EDITORS
_TO_STDOUT = frozenset({"-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test"})


#: Options that take a value, per program read here with its own table (a flag read as
#: taking one hid ``scp -r``'s and ``rsync -a``'s destination, ``zip -r``'s archive).
_OWN_TABLES: dict[str, frozenset[str]] = {
    "scp": option_set("-c -D -F -i -J -l -o -P -S -X"),
    "rsync": option_set(
        "-B -e -f -M -T -@ --info --debug --stderr --backup-dir --suffix --chmod --chown "
        "--usermap --groupmap --timeout --contimeout --modify-window --temp-dir --compare-dest "
        "--copy-dest --link-dest --compress-choice --zc --compress-level --zl --skip-compress "
        "--checksum-choice --cc --checksum-seed --filter --exclude --exclude-from --include "
        "--include-from --files-from --address --port --sockopts --outbuf --bwlimit "
        "--stop-after --time-limit --stop-at --write-batch --only-write-batch --read-batch "
        "--protocol --iconv --max-delete --max-size --min-size --max-alloc --block-size --rsh "
        "--rsync-path --partial-dir --log-file --log-file-format --out-format --password-file "
        "--early-input --remote-option --copy-as"
    ),
    "zip": option_set(
        "-b -n -t -tt -O --out -P --password -s -sp -Z -lf --logfile-path -ds -TT "
        "--unzip-command --temp-path"
    ),
    "mkfifo": option_set("-m --mode -Z"),
    "mknod": option_set("-m --mode -Z"),
    "mktemp": option_set("-p --suffix"),
    "link": frozenset(),
}
#: rsync options naming a file or directory it writes; the directories marked True are
#: relative to the destination (``--link-dest`` hard-links the files it names: writable).
_RSYNC_WRITES = {"--backup-dir": True, "--partial-dir": True, "--temp-dir": True, "-T": True,
                 "--link-dest": True, "--log-file": False, "--write-batch": False,
                 "--only-write-batch": False}  # fmt: skip


def _remote(w: Word) -> bool:
    """An scp/rsync operand on another host (``host:path``, ``rsync://``)."""
    return "://" in w.text or (":" in w.text and not w.text.startswith(("/", "./")))


def _copy_or_zip(name: str, args: list[Word], cwd: str | None) -> list[Action]:
    """scp/rsync: the destination, the last operand, whatever the flags (a remote one is
    their :class:`Network`), and rsync's files by option; zip: its archive and ``-O``
    output, ``-b``'s temporary files; ``-TT`` (the command that tests it): Unknown."""
    positionals, opts = scan_options(args, _OWN_TABLES[name])
    if name == "zip":
        if any("TT" in k or k == "--unzip-command" for k in opts):
            return [Unknown("zip -TT runs a command: " + " ".join(w.text for w in args))]
        named = [w for k in ("-O", "--out", "-b", "--temp-path", "-lf", "--logfile-path")
                 for w in opts.get(k, [])]  # fmt: skip
        written = [
            WriteFile(resolve_path(cwd, w) if w else None) for w in [*positionals[:1], *named]
        ]
        return [*operand_reads(positionals[1:], cwd), *written]  # zip -q - ~/.aws/credentials
    dest = positionals[-1] if len(positionals) > 1 else None
    if dest is None or _remote(dest):
        return []
    where = resolve_path(cwd, dest)
    out: list[Action] = [WriteFile(where)]
    sources = [w for w in positionals[:-1] if not _remote(w)]
    out += into_directory(sources, dest, cwd, slash_is_contents=name == "rsync",
                          named_dir=len(sources) > 1)  # fmt: skip
    if name == "rsync":
        out += [WriteFile(resolve_path(where if below else cwd, w) if w else None)
                for k, below in _RSYNC_WRITES.items() for w in opts.get(k, [])]  # fmt: skip
    return out


def _makes(name: str, args: list[Word], cwd: str | None) -> list[Action]:
    """``mkfifo``/``mknod``/``link``: the files they make (``link A B``: both, as a hard
    link); ``mktemp [-p DIR] [TEMPLATE]``: the file in DIR (``--tmpdir=DIR``), else a
    TEMPLATE with a directory; in ``$TMPDIR`` or ``/tmp`` (no template, ``-t``): none."""
    positionals, opts = scan_options(args, _OWN_TABLES[name])
    if name == "mknod":
        positionals = positionals[:1]
    if name != "mktemp":
        return [WriteFile(resolve_path(cwd, w)) for w in positionals]
    given = [w for k in ("-p", "--tmpdir") for w in opts.get(k, [])]
    template = positionals[-1] if positionals else None
    if given:
        base = given[-1]
        if base is None or not base.text:  # --tmpdir alone: $TMPDIR or /tmp
            return []
        where = resolve_path(cwd, base)
        return [WriteFile(resolve_path(where, template) if template and where else where)]
    if template is None or "-t" in opts:
        return []
    return [WriteFile(resolve_path(cwd, template))]  # relative to the working directory


def writers() -> frozenset[str]:
    """The programs whose writes :func:`outputs` models."""
    return _WRITERS | frozenset(_OWN_TABLES) | ARCHIVERS | programs()


def outputs(name: str, args: list[Word], cwd: str | None) -> list[Action]:
    """What ``name ARGS`` writes by option or operand (empty: nothing known)."""

    def at(w: Word | None) -> Action:
        return WriteFile(resolve_path(cwd, w) if w is not None else None)

    if name in ARCHIVERS:
        return archive_writes(name, args, cwd)
    named = program_writes(name, args, cwd)
    if named is not None:
        return named
    if name in _OWN_TABLES:
        return _copy_or_zip(name, args, cwd) if name in ("rsync", "scp", "zip") else _makes(
            name, args, cwd)  # fmt: skip
    if name not in _WRITERS:
        return []
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
    if name == "uniq":  # its own values: `uniq -s 1 IN OUT` writes OUT, not IN
        positionals, _ = scan_options(args, _UNIQ_ARGS)
        return [at(positionals[1])] if len(positionals) > 1 else []
    if name == "patch":
        positionals, own = scan_options(args, _PATCH_ARGS)
        backups = [w for k in _PATCH_BACKUPS for w in own.get(k, [])]
        if any(w is None or w.dynamic or "/" in w.text for w in backups):
            return [Unknown("patch names its backups in another directory")]
        rejects = [at(w) for k in _PATCH_REJECTS for w in own.get(k, [])
                   if w is None or w.text != "-"]  # fmt: skip
        target = own.get("-o") or own.get("--output") or (positionals[:1] or None)
        where = own.get("-d") or own.get("--directory")
        written = [at(w) for w in target] if target else [at(where[0] if where else Word("."))]
        return [*written, *rejects]
    if name in _COMPRESSORS or name in _EDITORS:
        with_arg = _EDITOR_ARGS if name in _EDITORS else _COMPRESSOR_ARGS
        positionals, opts = scan_options(args, with_arg)
    if name in _COMPRESSORS:  # what it is given it reads (gzip -c ~/.aws/credentials)
        read = operand_reads(positionals, cwd)
        suffixes = [w for k in ("-S", "--suffix") for w in opts.get(k, [])]
        if any(w is None or w.dynamic or "/" in w.text for w in suffixes):
            # FILE + SUFFIX is elsewhere (found probing: ``gzip -S ../../../../x f``
            # beside a directory ``f..`` wrote the lead's ``x``)
            return [*read, Unknown(f"{name}'s suffix names another directory")]
        if _TO_STDOUT & set(opts) or any(
            k[:1] == "-" and k[1:2] != "-" and set(k[1:]) & {"c", "l", "t"} for k in opts
        ):
            return read
        if any(k.startswith(_FILE_LISTS) for k in opts):
            return [Unknown(f"{name} compresses the files a list names")]
        named = [at(w) for k in _COMPRESSOR_OUTS for w in opts.get(k, [])]
        if not _decompresses(name, opts):
            return [*read, *named, *(at(w) for w in positionals)]
        made = (a for w in positionals for a in (at(w), _decompressed(w, opts, cwd)))
        return [*read, *named, *made]
    if name in _EDITORS:
        return [at(w) for w in positionals if not w.text.startswith("+")]
    return []


def _decompresses(name: str, opts: dict[str, list[Word | None]]) -> bool:
    return name in _DECOMPRESSORS or flags(opts, "d", "--decompress", "--uncompress") > 0


def _decompressed(w: Word, opts: dict[str, list[Word | None]], cwd: str | None) -> Action:
    """The file decompressing ``w`` makes: its name without the suffix (``-S SUF`` or
    the last one; ``.tgz`` and the like give ``.tar``), beside it. Found probing:
    ``gunzip -f .git.gz`` was judged a write of ``.git.gz`` and replaced the worktree's
    ``.git``. With ``-N`` (the name stored in the file) it is not known."""
    if flags(opts, "N", "--name") or w.dynamic:
        return WriteFile(None)
    given = [v.text for k in ("-S", "--suffix") for v in opts.get(k, []) if v is not None]
    text = w.text
    if given and given[-1] and text.endswith(given[-1]):
        text = text[: -len(given[-1])]
    else:
        stem, ext = posixpath.splitext(text)
        text = stem + (".tar" if ext[:2] == ".t" and len(ext) > 3 else "")
    return WriteFile(resolve_path(cwd, Word(text, w.dynamic, w.quoted, (), w.glob)))


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
