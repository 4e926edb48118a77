"""What ``gpg`` writes: its ``--output``, its home directory and keyrings, its logs, and
the files it makes beside its operands (``gpg -c F`` writes ``F.gpg``, ``--detach-sign
F`` ``F.sig``, ``--decrypt-files F.gpg`` ``F``).

Found as a worker (a fourth round): ``gpg --homedir ../..`` made a keyring in the lead's
checkout, allowed. gpg takes any unique prefix of a long option (``--hom``, ``--out``),
and ``--opt=VALUE``. Options that make gpg run a program (``--photo-viewer``,
``--agent-program``...) are Unknown, and so are ``--options FILE`` and ``--homedir DIR``
(its ``gpg.conf``), whose configuration may name an output file or a program.

>>> from exomonad.policy.shell_lex import Word
>>> gpg_writes([Word("--hom"), Word("../g"), Word("-k")], "/w/t")[0].describe()
'unrecognised: gpg reads a configuration the command line does not show: gpg --hom ../g -k'
>>> gpg_writes([Word("-c"), Word("../f")], "/w/t")
[WriteFile(path='/w/f')]
>>> gpg_writes([Word("--verify"), Word("../f.sig")], "/w/t")
[]
"""

from __future__ import annotations

import os

from exomonad.policy.actions import Action, Unknown, WriteFile
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_paths import resolve_path

__all__ = ["gpg_writes"]

#: Long options naming a file or directory gpg writes.
#: Options that make gpg read a configuration file (``--options FILE``; a home dir's
#: ``gpg.conf``), which may name an output file or a program it runs (found probing:
#: ``output ../../README.md`` in a worker's file overwrote the lead's README).
_CONFIGURED = ("--options", "--homedir")
_WRITES = ("--output", "--homedir", "--keyring", "--secret-keyring", "--primary-keyring",
           "--trustdb-name", "--status-file", "--logger-file", "--log-file",
           "--attribute-file")  # fmt: skip
#: Long options naming a program gpg runs.
_RUNS = ("--photo-viewer", "--exec-path", "--agent-program", "--dirmngr-program",
         "--keyboxd-program")  # fmt: skip
#: Short options that take a value (``-o`` among them writes).
_SHORT_WITH_ARG = frozenset("orRuzfFN")
#: Commands that only read, print or change the keyring (in the home directory): no
#: file beside an operand.
_LOOKS = frozenset(
    {"--decrypt", "--verify", "--verify-files", "--import", "--export", "--export-secret-keys",
     "--export-secret-subkeys", "--list-keys", "--list-public-keys", "--list-secret-keys",
     "--list-sigs", "--check-sigs", "--check-signatures", "--list-signatures", "--fingerprint",
     "--list-packets", "--show-keys", "--recv-keys", "--receive-keys", "--search-keys",
     "--refresh-keys", "--send-keys", "--print-md", "--print-mds", "--gen-random",
     "--card-status", "--edit-key", "--delete-keys", "--delete-secret-keys",
     "--delete-secret-and-public-key", "--gen-key", "--generate-key", "--full-gen-key",
     "--full-generate-key", "--quick-gen-key", "--quick-generate-key", "--quick-add-uid",
     "--quick-add-key", "--quick-sign-key", "--quick-lsign-key", "--sign-key", "--lsign-key",
     "--locate-keys", "--locate-external-keys", "--fetch-keys", "--import-ownertrust",
     "--export-ownertrust", "--update-trustdb", "--check-trustdb", "--list-config",
     "--dump-options", "--version", "--help", "--warranty", "--list-options"}
)  # fmt: skip
_SHORT_LOOKS = frozenset("dkKh")


#: Commands that change the user's keys or whom they trust, in the home directory's
#: keyring (found probing: ``gpg --quick-gen-key`` and ``--delete-keys`` were allowed).
#: Importing a public key (``--import``, ``--recv-keys``) stays ordinary: it is how a
#: download's signature is checked, and an imported key is not trusted.
_KEYRING = ("--edit-key", "--delete-keys", "--delete-secret-keys",
            "--delete-secret-and-public-key", "--gen-key", "--generate-key", "--full-gen-key",
            "--full-generate-key", "--quick-gen-key", "--quick-generate-key", "--quick-add-uid",
            "--quick-add-key", "--quick-sign-key", "--quick-lsign-key", "--quick-set-expire",
            "--quick-revoke-uid", "--sign-key", "--lsign-key", "--import-ownertrust",
            "--update-trustdb", "--change-passphrase", "--passwd", "--card-edit",
            "--edit-card")  # fmt: skip


def changes_keyring(name: str) -> bool:
    """``name`` (a long option, maybe abbreviated to 8 characters or more) changes the
    keyring in the home directory.

    >>> changes_keyring("--quick-gen"), changes_keyring("--import"), changes_keyring("--sign")
    (True, False, False)
    """
    if name in _KEYRING or name in _LOOKS:  # an option's own name wins over a prefix
        return name in _KEYRING
    return len(name) >= 8 and any(k.startswith(name) for k in _KEYRING)


def _long(name: str, names: tuple[str, ...]) -> str | None:
    """The option among ``names`` that ``name`` abbreviates (gpg takes unique prefixes)."""
    if len(name) < 3 or name in _LOOKS:
        return None
    return next((n for n in names if n.startswith(name)), None)


def gpg_writes(args: list[Word], cwd: str | None) -> list[Action]:
    """What ``gpg ARGS`` run in ``cwd`` writes (or Unknown when it runs a program)."""
    raw = "gpg " + " ".join(w.text for w in args)
    out: list[Action] = []
    operands: list[Word] = []
    looks = output = keyring = False
    i = 0
    while i < len(args):
        w, text = args[i], args[i].text
        nxt = args[i + 1] if i + 1 < len(args) else None
        i += 1
        if text == "--":
            operands += args[i:]
            break
        if text.startswith("--"):
            name, eq, value = text.partition("=")
            if _long(name, _RUNS):
                return [Unknown(f"gpg runs a program: {raw}")]
            if _long(name, _CONFIGURED) is not None:  # gpg.conf may say `output`, a viewer
                return [Unknown(f"gpg reads a configuration the command line does not show: "
                                f"{raw}")]  # fmt: skip
            found = _long(name, _WRITES)
            looks = looks or name in _LOOKS or name.startswith("--list-")
            if changes_keyring(name) and not keyring:
                keyring = True
                out.append(WriteFile(os.path.expanduser("~/.gnupg")))
            if found is not None:
                target = Word(value, w.dynamic, w.quoted) if eq else nxt
                i += 0 if eq else 1
                output = output or found == "--output"
                out.append(WriteFile(resolve_path(cwd, target) if target is not None else None))
        elif text.startswith("-") and len(text) > 1:
            for j, c in enumerate(text[1:], 1):
                looks = looks or c in _SHORT_LOOKS
                if c in _SHORT_WITH_ARG:
                    attached = text[j + 1 :]
                    target = Word(attached, w.dynamic, w.quoted) if attached else nxt
                    i += 0 if attached else 1
                    if c == "o":
                        output = True
                        out.append(WriteFile(resolve_path(cwd, target) if target else None))
                    break
        else:
            operands.append(w)
    if not output and not looks:  # the file made beside each operand (F.gpg, F.sig, F)
        out += [WriteFile(resolve_path(cwd, w)) for w in operands if w.text != "-"]
    return out
