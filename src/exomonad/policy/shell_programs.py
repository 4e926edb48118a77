"""What programs write where an option or an operand names it, beyond the common tools
of :mod:`~exomonad.policy.shell_outputs` (``iconv -o``, ``dpkg-deb -x``, the files
``chattr``/``setfacl`` change...), and programs whose own sub-commands are not read
(``cmake -E``, an editor's ``-c``, a mount): each found probing as a worker, allowed,
really writing outside the worktree.

>>> program_writes("iconv", [Word("-f"), Word("a"), Word("-o"), Word("../x")], "/w/t")
[WriteFile(path='/w/x')]
>>> program_writes("cat", [Word("a")], "/w") is None
True
"""

from __future__ import annotations

import re

from exomonad.policy.actions import Action, ReadFile, Unknown, WriteFile
from exomonad.policy.shell_env import scan_options
from exomonad.policy.shell_files import operand_reads
from exomonad.policy.shell_gpg import gpg_writes
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_paths import resolve_path
from exomonad.policy.shell_reads import option_set, tree_root
from exomonad.policy.shell_socat import socat_actions
from exomonad.policy.shell_variables import risky_assignment

__all__ = ["EX_EDITORS", "program_writes", "programs"]

#: program → (its options that take a value, those among them naming a file it writes).
_OUTPUT_OPTIONS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "iconv": (option_set("-f -t -o --from-code --to-code --output"), option_set("-o --output")),
    "shuf": (option_set("-o -n -i --output --head-count --input-range --random-source"),
             option_set("-o --output")),
    "tic": (option_set("-o -e -R"), option_set("-o")),
    "ssh-keygen": (option_set("-f -N -t -b -C -P -E -O -Y -n -I -s -V -z -a -m -w -Z"),
                   option_set("-f")),
}  # fmt: skip
#: What in sqlite3's SQL or arguments reaches past its database: a dot-command (``.shell``,
#: ``.system``, ``.output``, ``.once``, ``.read``, ``.save``, ``.load``...: found probing,
#: ``.shell`` ran a command and ``.output ../../README.md`` wrote the lead's file), the
#: shell's file functions (``writefile``, ``readfile``, ``edit``), ``ATTACH``, ``VACUUM
#: INTO`` and ``load_extension``; ``-init``/``-cmd`` files and text likewise.
_SQLITE_ESCAPES = re.compile(
    r"(^|\n|;)\s*\.|writefile|readfile|\bedit\s*\(|attach|vacuum|load_extension",
    re.IGNORECASE,
)
#: openssl's options that name a file it writes (``-out``, ``--out``, ``-out=F`` alike;
#: found as a worker: ``openssl rand -writerand ../../README.md 1`` overwrote the lead's
#: README, ``s_client -msgfile`` and ``-keylogfile`` write their logs; ``cms -verify
#: -signer F`` writes the signer's certificates, ``x509 -CAserial F`` the serial).
_OPENSSL_OUTS = frozenset(
    {"out", "keyout", "certout", "sigout", "signature", "writerand", "msgfile", "keylogfile",
     "sess_out", "certsout", "chainout", "extracertsout", "cacertsout", "reqout", "rspout",
     "respout", "outdir", "signer", "CAserial", "srpvfile", "outpubkey"}
)  # fmt: skip
#: openssl's options that name a file it reads (and may print: ``base64 -in``, ``pkey
#: -in``).
_OPENSSL_INS = frozenset({"in", "inkey", "key", "infiles", "kdfopt"})
#: ``cmake -E`` commands that write nothing and run nothing.
_CMAKE_SAFE = frozenset(
    {"echo", "echo_append", "capabilities", "true", "false", "compare_files", "md5sum",
     "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "sleep", "environment",
     "cat"}
)  # fmt: skip
#: dpkg-deb's options that unpack into the directory operand, and that build a package.
_DEB_UNPACK = frozenset({"-x", "--extract", "-X", "--vextract", "-R", "--raw-extract"})
_DEB_BUILD = frozenset({"-b", "--build"})
#: Editors that run ex commands given on their command line.
EX_EDITORS = frozenset({"vi", "vim", "nvim", "ex", "view", "gvim", "rvim", "rview", "evim",
                         "eview", "gview", "vimdiff", "vim.basic", "vim.tiny", "vim.nox",
                         "vim.gtk3", "nvi", "elvis", "vile"})  # fmt: skip
#: Programs that mount one directory over another: a path in the worktree may then be
#: the lead's checkout (``bindfs ../.. x && echo > x/README.md``).
_MOUNTERS = frozenset(
    {"mount", "bindfs", "sshfs", "fuse-overlayfs", "squashfuse", "mergerfs", "unionfs",
     "unionfs-fuse", "rclone", "archivemount", "fuse-zip", "guestmount"}
)  # fmt: skip
#: Emacs, and its options that run Lisp (a file's, an expression's, a function's), or
#: batch mode (found trying the gate as a worker: ``emacs --batch --eval '(copy-file "x"
#: "../../Makefile" t)'`` was allowed as a write of a file named by the expression, in
#: the worktree). ``emacsclient`` evaluates in a running Emacs.
_EMACS = frozenset({"emacs", "emacs-nox", "xemacs", "emacsclient"})
_EMACS_CODE = frozenset({"--eval", "-eval", "--execute", "-l", "--load", "-load", "-f",
                         "--funcall", "-funcall", "--script", "-script", "--batch", "-batch",
                         "-x", "-e", "--init-directory", "-u", "--user", "-L",
                         "--directory"})  # fmt: skip
#: An editor's ``+N`` (a line): the only ``+`` argument that is not a command.
_LINE = re.compile(r"\+\d*")


def programs() -> frozenset[str]:
    """The programs whose writes this module models."""
    named = {"openssl", "sqlite3", "convert", "magick", "cmake", "dpkg-deb", "jar", "ar", "xxd",
             "socat", "man", "gpg", "gpg2"}  # fmt: skip
    return frozenset({*_OUTPUT_OPTIONS, *_MOUNTERS, *_ATTRIBUTES, *EX_EDITORS, *_EMACS, *named})


def program_writes(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    """What ``name ARGS`` writes (or Unknown), for the programs of this module; None for
    any other program."""

    def at(w: Word | None) -> WriteFile:
        return WriteFile(resolve_path(cwd, w) if w is not None else None)

    if name in _OUTPUT_OPTIONS:
        with_arg, writes = _OUTPUT_OPTIONS[name]
        _, opts = scan_options(args, with_arg)
        return [at(w) for k in writes for w in opts.get(k, [])]
    if name == "openssl":
        return _openssl(args, cwd)
    if name == "socat":
        return socat_actions(args, cwd)
    if name == "man":
        return _man(args, cwd)
    if name in ("gpg", "gpg2"):
        return gpg_writes(args, cwd)
    if name == "sqlite3":  # its database: created or rewritten
        positionals, opts = scan_options(args, option_set("-cmd -init -separator -newline"))
        script = [*positionals[1:], *(w for k in ("-cmd", "-init") for w in opts.get(k, []))]
        if any(w is None or w.dynamic or _SQLITE_ESCAPES.search(w.text) for w in script):
            return [Unknown("sqlite3 runs dot-commands or file functions: "
                            + " ".join(w.text for w in args))]  # fmt: skip
        return [at(positionals[0])] if positionals else []
    if name == "xxd":  # xxd [-r] [options] [infile [outfile]]: outfile is written
        positionals, _ = scan_options(args, option_set("-c -g -l -o -s -n -C -cols -len"))
        return [at(positionals[1])] if len(positionals) > 1 else []
    if name in ("convert", "magick"):
        positionals, _ = scan_options(args, frozenset())
        return [at(positionals[-1])] if len(positionals) > 1 else []
    if name in _MOUNTERS and (name != "rclone" or [w.text for w in args[:1]] == ["mount"]):
        return [Unknown(f"{name} mounts a directory: " + " ".join(w.text for w in args))]
    if name in _ATTRIBUTES:
        return _attributes(name, args, cwd)
    if name == "cmake":
        return _cmake(args)
    if name == "dpkg-deb":
        return _deb(args, cwd)
    if name in ("jar", "ar"):
        return _jar_ar(name, args, cwd)
    if name in _EMACS:
        texts = [w.text for w in args]
        if any(t.split("=", 1)[0] in _EMACS_CODE for t in texts):
            return [Unknown(f"{name} runs Lisp: " + " ".join(texts))]
        return None
    if name in EX_EDITORS:
        texts = [w.text for w in args]
        if any(_editor_option(t) for t in texts) or _editor_script_option(name, texts):
            return [Unknown(f"{name} runs editor commands: " + " ".join(texts))]
        return None
    return None


#: An ex editor's options that run, read or write nothing by themselves (read-only,
#: no swap file, binary, lisp, diff, windows and tabs, Ex mode, silent in Ex mode: vi's
#: ``-s`` otherwise, and nvim's ``-l``, are :func:`_editor_script_option`), in a cluster;
#: and its long options of that kind. Any other may (found trying the gate as a
#: worker: ``ex -sc 'w! ../../Makefile|q' x`` overwrote the lead's Makefile, allowed,
#: where ``-c`` alone was asked; ``-V20FILE``, ``-w FILE`` and ``--startuptime FILE``
#: write a file, ``-u``/``-S`` run one, ``-i`` rewrites a viminfo).
_EDITOR_FLAGS = re.compile(r"-[RMmnNbldoOpvyZXeEsAHFL0-9]*")
_EDITOR_LONG = frozenset({"--", "--help", "--version", "--noplugin", "--clean", "--nofork"})


def _editor_script_option(name: str, texts: list[str]) -> bool:
    """Whether an ex editor's options give it a script of its own among the flags
    :data:`_EDITOR_FLAGS` lets by: vi's ``-s FILE`` (keystrokes read from ``FILE``, unless
    Ex mode came first, ``ex -s`` or ``vim -es``, where ``-s`` is silent) and nvim's ``-l``
    (a Lua script). Found trying the gate as a worker: ``vim -s keys.txt x``, ``keys.txt``
    holding ``:w! ../../Makefile``, overwrote the lead's Makefile, allowed.

    >>> [_editor_script_option(n, t.split()) for n, t in [("vim", "-s k x"), ("vim", "-es x"),
    ...  ("ex", "-s x"), ("vim", "-s -e x"), ("nvim", "-l x.lua"), ("vim", "-l x")]]
    [True, False, False, True, True, False]
    """
    ex_mode = name == "ex"
    for text in texts:
        if text == "--":
            break
        if text[:1] != "-" or text[1:2] == "-":
            continue
        for letter in text[1:]:
            ex_mode = ex_mode or letter in "eE"
            if (letter == "s" and not ex_mode) or (letter == "l" and name == "nvim"):
                return True
    return False


def _editor_option(text: str) -> bool:
    """Whether an ex editor's argument ``text`` is an option that may run a command or
    touch a file of its own (a ``+N`` line number does not)."""
    if text.startswith("+"):
        return not _LINE.fullmatch(text)
    if text.startswith("--"):
        return text not in _EDITOR_LONG
    return text.startswith("-") and text != "-" and not _EDITOR_FLAGS.fullmatch(text)


#: Programs that change a file's attributes, ACL, extended attributes or security
#: context, with their options that take a value: each file operand is written, as by
#: ``chmod`` (found as a worker: ``chattr +i ../../README.md`` was allowed).
_ATTRIBUTES: dict[str, frozenset[str]] = {
    "chattr": option_set("-v -p"),
    "setfacl": option_set(
        "-m -M -x -X --set --set-file --modify --modify-file --remove --remove-file"
    ),
    "setfattr": option_set("-n -v -x --name --value --remove"),
    "chcon": option_set("-u -r -t -l --user --role --type --range --reference"),
}
#: ``chattr``'s modes (``+i``, ``-i``, ``=ai``): not options.
_CHATTR_MODE = re.compile(r"[-+=][aAcCdDeFijmPsStTux]+")


def _attributes(name: str, args: list[Word], cwd: str | None) -> list[Action]:
    """The files ``chattr``/``setfacl``/``setfattr``/``chcon`` change; a ``--restore``
    (the files a dump names) is Unknown."""
    if any(w.text.startswith("--restore") for w in args):
        return [Unknown(f"{name} --restore changes the files its dump names")]
    if name == "chattr":
        args = [w for w in args if not _CHATTR_MODE.fullmatch(w.text)]
    positionals, opts = scan_options(args, _ATTRIBUTES[name])
    if name == "chcon" and not set(opts) & _ATTRIBUTES["chcon"]:
        positionals = positionals[1:]  # chcon CONTEXT FILE...
    return [WriteFile(resolve_path(cwd, w)) for w in positionals]


def _cmake(args: list[Word]) -> list[Action]:
    """``cmake -E CMD``: Unknown unless CMD writes and runs nothing (``copy``, ``rm``,
    ``chdir DIR CMD``, ``env CMD``, ``tar``... are not read)."""
    texts = [w.text for w in args]
    if "-E" not in texts:
        return []
    sub = texts[texts.index("-E") + 1] if texts.index("-E") + 1 < len(texts) else ""
    return [] if sub in _CMAKE_SAFE else [Unknown("cmake -E " + " ".join(texts))]


def _deb(args: list[Word], cwd: str | None) -> list[Action]:
    """``dpkg-deb -x PKG DIR`` (and its kin) write DIR; ``-b DIR [OUT]`` writes OUT."""
    texts = [w.text for w in args]
    operands = [w for w in args if not w.text.startswith("-")]
    if _DEB_UNPACK.intersection(texts):
        return [WriteFile(resolve_path(cwd, operands[-1]) if len(operands) > 1 else None)]
    if _DEB_BUILD.intersection(texts):
        out = operands[1] if len(operands) > 1 else None
        return [WriteFile(resolve_path(cwd, out) if out is not None else cwd)]
    return []


def _jar_ar(name: str, args: list[Word], cwd: str | None) -> list[Action]:
    """``jar x``/``ar x`` unpack into the working directory; creating or updating writes
    the archive (``ar``: the operand after the key; ``jar``: ``f``'s file)."""
    if not args:
        return []
    key = args[0].text.lstrip("-")
    if "x" in key:
        return [WriteFile(cwd)]
    if set(key) & set("cruqdmU" if name == "ar" else "cu"):
        named = args[1:2] if name == "ar" or "f" in key else []
        return [WriteFile(resolve_path(cwd, w)) for w in named]
    return []


def _openssl(args: list[Word], cwd: str | None) -> list[Action]:
    """The files ``openssl CMD ARGS`` writes: its output options' (openssl takes ``-opt``,
    ``--opt`` and ``-opt=VALUE``), and the serial ``x509 -CAcreateserial`` makes beside
    its ``-CA`` file."""
    out: list[Action] = []
    ca: Word | None = None
    for i, w in enumerate(args):
        name, eq, value = w.text.removeprefix("-").removeprefix("-").partition("=")
        if not w.text.startswith("-"):
            continue
        given = Word(value, w.dynamic, w.quoted) if eq else (args[i + 1] if i + 1 < len(args)
                                                             else None)  # fmt: skip
        if name in _OPENSSL_OUTS:
            out.append(WriteFile(resolve_path(cwd, given) if given is not None else None))
        elif name in _OPENSSL_INS and given is not None:  # openssl base64 -in F prints F
            path = tree_root(cwd, given)
            out += [ReadFile(path)] if path is not None else []
        elif name == "CA":
            ca = given
    if ca is not None and any(w.text.lstrip("-") == "CAcreateserial" for w in args):
        stem = ca.text.rsplit(".", 1)[0] if "." in ca.text.rsplit("/", 1)[-1] else ca.text
        out.append(WriteFile(resolve_path(cwd, Word(stem + ".srl", ca.dynamic, ca.quoted))))
    return out


#: man's short options that take a value (attached or the next word); ``-H[BROWSER]``,
#: ``-X[DPI]``, ``-T[DEVICE]`` take one only attached.
_MAN_WITH_ARG = frozenset("CELmMSseprRP")
#: man's long options that run a program (a browser, gxditview) or read a configuration
#: naming the programs it runs (``DEFINE pager ...``); git's prefixes count, as argp's do.
_MAN_RUNS = ("--html", "--gxditview", "--config-file")


def _man(args: list[Word], cwd: str | None) -> list[Action]:
    """``man -P PAGER``/``--pager=PAGER``: with a terminal, man runs PAGER through the
    shell (found as a worker: ``man -P 'touch /p/x' git`` ran it); Unknown unless a plain
    pager (``less``, ``cat``...). ``-H``/``--html`` (a browser), ``-X``, ``-C FILE``:
    Unknown. ``-l``/``--local-file``: its operands are files it reads and prints."""
    raw = "man " + " ".join(w.text for w in args)
    pagers: list[Word | None] = []
    operands: list[Word] = []
    local = False
    i = 0
    while i < len(args):
        w, text = args[i], args[i].text
        nxt = args[i + 1] if i + 1 < len(args) else None
        i += 1
        if text == "--":
            operands += args[i:]
            break
        if not text.startswith("-"):
            operands.append(w)
            continue
        if text.startswith("--"):
            local = local or (len(text) > 4 and "--local-file".startswith(text.partition("=")[0]))
            name, eq, value = text.partition("=")
            if len(name) > 2 and any(o.startswith(name) for o in _MAN_RUNS):
                return [Unknown(f"man runs a browser or reads another configuration: {raw}")]
            if len(name) > 3 and "--pager".startswith(name):
                pagers.append(Word(value, w.dynamic, w.quoted) if eq else nxt)
                i += 0 if eq else 1
            continue
        for j, c in enumerate(text[1:] if text.startswith("-") else "", 1):
            local = local or c == "l"
            if c in "HX":
                return [Unknown(f"man runs a browser or a viewer: {raw}")]
            if c in _MAN_WITH_ARG or c == "T":
                attached = text[j + 1 :]
                if c == "P":
                    pagers.append(Word(attached, w.dynamic, w.quoted) if attached else nxt)
                if c == "C":
                    return [Unknown(f"man reads another configuration: {raw}")]
                i += 0 if attached or c == "T" else 1
                break
    for pager in pagers:
        if pager is None or risky_assignment(Word(f"MANPAGER={pager.text}", pager.dynamic)):
            return [Unknown(f"man runs its pager through the shell: {raw}")]
    return operand_reads(operands, cwd) if local else []  # man -l x: x printed
