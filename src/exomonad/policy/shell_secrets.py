"""Commands that print a stored credential, and words that name a store where no read of
a known path shows it.

Found probing as a worker (a sixth round): ``cat ~/.config/gh/hosts.yml`` was refused
as reading credentials while ``gh auth token`` printed the same token, allowed; so did
``aws configure get aws_secret_access_key``, ``gcloud auth print-access-token``,
``kubectl config view --raw``, ``gpg --export-secret-keys`` and ``pass show``. Each is
now a read of its store (:func:`~exomonad.policy.credentials.store`), refused as ``cat`` of
the store is. So are ``cat "$(echo ~)/.ssh/id_rsa"``, ``cat $X/.aws/credentials``,
``python3 -c "print(open('/root/.ssh/id_rsa').read())"`` and ``echo ~/.ssh/id_rsa |
xargs cat``, which named the store in words no read was made of.

>>> from exomonad.policy.shell_lex import Word
>>> printed_credential("gh", [Word("auth"), Word("token")])[0].path.endswith("/.config/gh")
True
>>> printed_credential("gh", [Word("auth"), Word("status")]) is None
True
"""

from __future__ import annotations

import os
import posixpath
import re

from exomonad.policy.actions import ReadFile
from exomonad.policy.credentials import named_secrets, store
from exomonad.policy.shell_env import in_a_row
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_tools import modelled

__all__ = ["attached_process", "credential_words", "git_credential", "printed_credential"]

#: Per program: its store, and the verbs (one of them in a row among its words) that
#: print a credential, each with the options it needs (empty: none).
_PRINTERS: dict[str, tuple[str, tuple[tuple[tuple[str, ...], frozenset[str]], ...]]] = {
    "gh": (".config/gh", (
        (("auth", "token"), frozenset()),
        (("auth", "status"), frozenset({"-t", "--show-token"})),
        (("auth", "git-credential"), frozenset()),
    )),
    "glab": (".config/glab-cli", (
        (("auth", "status"), frozenset({"-t", "--show-token"})),
        (("config", "get", "token"), frozenset()),
    )),
    "aws": (".aws", tuple((verbs, frozenset()) for verbs in (
        ("configure", "get"), ("configure", "export-credentials"),
        ("sts", "get-session-token"), ("sts", "assume-role"), ("sts", "get-federation-token"),
        ("ecr", "get-login-password"), ("ecr-public", "get-login-password"),
        ("codeartifact", "get-authorization-token"), ("sso", "get-role-credentials"),
        ("eks", "get-token"),
    ))),
    "gcloud": (".config/gcloud", tuple((verbs, frozenset()) for verbs in (
        ("auth", "print-access-token"), ("auth", "print-identity-token"),
        ("auth", "application-default", "print-access-token"), ("config", "config-helper"),
    ))),
    "az": (".azure", ((("account", "get-access-token"), frozenset()),)),
    "kubectl": (".kube/config", ((("config", "view"), frozenset({"--raw", "--raw=true"})),)),
    "op": (".config/op", tuple((verbs, frozenset()) for verbs in (
        ("read",), ("inject",), ("run",), ("item", "get"), ("document", "get"),
    ))),
    "vault": (".vault-token", ((("print", "token"), frozenset()),)),
    "heroku": (".netrc", ((("auth:token",), frozenset()),)),
    **dict.fromkeys(("fly", "flyctl"), (".fly", ((("auth", "token"), frozenset()),))),
    "secret-tool": (".local/share/keyrings", ((("lookup",), frozenset()),
                                              (("search",), frozenset()))),
}  # fmt: skip
#: ``pass``'s commands that show no password (any other first word is an entry's name).
_PASS_QUIET = frozenset({"ls", "list", "find", "search", "init", "insert", "add", "generate",
                         "rm", "remove", "delete", "mv", "rename", "cp", "copy", "git",
                         "help", "version"})  # fmt: skip
#: Programs given a store's path in their words only to list it or to use a key, which
#: show no credential (``ls ~/.ssh``, ``ssh -i ~/.ssh/id_ed25519 host``).
_LISTS_OR_USES = frozenset({"ls", "stat", "du", "tree", "test", "[", "[[", "realpath",
                            "readlink", "basename", "dirname", "file", "ssh", "scp", "sftp",
                            "ssh-add", "ssh-keygen"})  # fmt: skip


def printed_credential(name: str, args: list[Word]) -> list[ReadFile] | None:
    """A read of the store program ``name`` prints a credential from, or None."""
    texts = [w.text for w in args]
    options = {t for t in texts if t.startswith("-")}
    if name in ("gpg", "gpg2", "gpgsm"):  # any unique prefix of --export-secret-keys...
        hit = any(len(t) > len("--export-s") and t.startswith("--export-se") for t in options)
        return [store(".gnupg")] if hit else None
    if name == "pass":
        words = [t for t in texts if not t.startswith("-")]
        return [store(".password-store")] if words and words[0] not in _PASS_QUIET else None
    if name.startswith("docker-credential-"):
        return [store(".docker/config.json")] if {"get", "list"} & set(texts) else None
    if name not in _PRINTERS:
        return None
    where, verbs = _PRINTERS[name]
    for seq, needs in verbs:
        if in_a_row(seq, texts) and (not needs or needs & options):
            return [store(where)]
    return None


#: Tracers and debuggers that read another process's memory, or the data of its system
#: calls, once attached to it: the options that name the pid (found probing: ``strace -p
#: PID -e read`` of the lead's Claude Code shows what it reads, its tokens among it,
#: asked; ``gcore PID`` and ``py-spy dump --pid PID --locals`` were allowed).
_ATTACH: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("strace", "ltrace"), ("-p", "--attach")),
    **dict.fromkeys(
        ("gdb", "py-spy", "eu-stack", "perf", "memray", "austin"), ("-p", "--pid", "-pid")
    ),
    "lldb": ("-p", "--attach-pid", "-n", "--attach-name"),
}
#: Programs whose operands are the pids they dump or trace.
_PID_OPERANDS = frozenset({"gcore", "gstack", "pstack", "pyrasite", "pystack", "procdump"})


def attached_process(name: str, args: list[Word]) -> list[ReadFile] | None:
    """A read of ``/proc/PID/mem`` when program ``name`` attaches to a process (refused
    as ``cat /proc/PID/mem`` is), else None.

    >>> attached_process("strace", [Word("-fp1234")]), attached_process("strace", [Word("ls")])
    ([ReadFile(path='/proc/PID/mem', recursive=False, include=())], None)
    """
    if name in _PID_OPERANDS:
        return (
            [ReadFile("/proc/PID/mem")] if any(not w.text.startswith("-") for w in args) else None
        )
    opts = _ATTACH.get(name, ())
    for w in args:
        text = w.text
        named = text.split("=", 1)[0] in opts or any(  # -p PID, --pid=PID, -fp1234
            len(o) == 2 and re.fullmatch(rf"-[A-Za-z]*{o[1]}[0-9]*", text) for o in opts
        )
        if named:
            return [ReadFile("/proc/PID/mem")]
    return None


def git_credential(sub: str) -> list[ReadFile] | None:
    """``git credential fill`` and its helpers (``git credential-store get``) print what
    the credential helpers hold: a read of git's store."""
    if sub == "credential" or sub.startswith("credential-"):
        return [store(".git-credentials")]
    return None


def credential_words(words: list[Word], name: str | None) -> list[ReadFile]:
    """Reads of the credential paths a command's words name where the classifier made
    no read of them: a word whose path is known only at run time, and any word of a
    program whose reads are not modelled (inline code, ``echo`` feeding ``xargs``).
    Words given to ``ls`` or ``ssh -i`` count for nothing here: they list a store or use
    a key; nor do git's known words (a commit message; its reads are modelled)."""
    program = posixpath.basename(name) if name is not None else None
    if program in _LISTS_OR_USES:
        return []
    home = os.path.expanduser("~")
    whole = program not in modelled() and program != "git"  # git's reads: vcs.git
    found: list[ReadFile] = []
    for w in words:
        if w.dynamic or whole:
            found.extend(ReadFile(p) for p in named_secrets(w.text, home, run_time=w.dynamic))
    return found
