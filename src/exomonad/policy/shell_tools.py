"""Classify non-VCS programs: deploy/publish tools, file writers/deleters, and (from
:mod:`~exomonad.policy.shell_network`) network clients.

Each handler takes the program name, its argument words and the working directory, and
returns actions, or ``None`` to fall back to a plain :class:`~exomonad.policy.actions.Shell`.

>>> from exomonad.policy.shell_lex import Word
>>> handle("curl", [Word(t) for t in "-sSL -o out.txt https://example.com/x".split()], "/w")
[WriteFile(path='/w/out.txt'), Network(host='example.com')]
>>> handle("rm", [Word("-rf"), Word("build")], "/w")
[DeleteFile(path='/w/build', recursive=True, include=())]
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from exomonad.policy.actions import (
    Action,
    DeleteFile,
    Deploy,
    ReadFile,
    Shell,
    Unknown,
    WriteFile,
)
from exomonad.policy.shell_env import scan_options
from exomonad.policy.shell_files import file_readers, handle_files
from exomonad.policy.shell_into import into_directory
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_lookups import (
    LOOKUP_CLIENTS,
    getent_client,
    lookup_client,
    openssl_client,
)
from exomonad.policy.shell_network import (
    HTTP_CLIENTS,
    REMOTE_CLIENTS,
    bash_socket,
    http_client,
    remote_client,
)
from exomonad.policy.shell_outputs import link_targets, outputs, writers
from exomonad.policy.shell_paths import resolve_path
from exomonad.policy.shell_programs import programs
from exomonad.policy.shell_reads import flags, handle_read, tree_readers, tree_root
from exomonad.policy.shell_scripts import awk, perl_ruby
from exomonad.policy.shell_sed import escapes
from exomonad.policy.shell_signal import SIGNALLERS, classify_signal
from exomonad.util.digits import is_number

__all__ = ["DEPLOY_VERBS", "handle", "modelled", "redirect_target"]

Handler = Callable[[str, list[Word], str | None], list[Action] | None]


#: Deploy/publish tools and the subcommands that ship something (``None``: any use).
DEPLOY_VERBS: dict[str, frozenset[str] | None] = {
    "kubectl": frozenset(
        {
            "apply",
            "create",
            "delete",
            "replace",
            "patch",
            "rollout",
            "scale",
            "set",
            "edit",
            "drain",
            "cordon",
            "uncordon",
            "taint",
            "label",
            "annotate",
            "expose",
            "run",
            "autoscale",
        }
    ),
    "helm": frozenset({"install", "upgrade", "uninstall", "delete", "rollback"}),
    "terraform": frozenset({"apply", "destroy", "import", "taint", "untaint"}),
    "tofu": frozenset({"apply", "destroy", "import", "taint", "untaint"}),
    "pulumi": frozenset({"up", "update", "destroy", "import"}),
    "cdk": frozenset({"deploy", "destroy"}),
    "fly": frozenset({"deploy", "launch", "destroy", "scale", "secrets"}),
    "flyctl": frozenset({"deploy", "launch", "destroy", "scale", "secrets"}),
    "netlify": frozenset({"deploy"}),
    "serverless": frozenset({"deploy", "remove"}),
    "sls": frozenset({"deploy", "remove"}),
    "wrangler": frozenset({"deploy", "publish", "delete"}),
    "firebase": frozenset({"deploy"}),
    "railway": frozenset({"up", "redeploy", "down"}),
    "kamal": frozenset({"deploy", "redeploy", "rollback"}),
    "skaffold": frozenset({"run", "deploy", "delete"}),
    "heroku": frozenset({"container:release", "releases:rollback", "apps:destroy", "ps:scale"}),
    "docker": frozenset({"push"}),
    "podman": frozenset({"push"}),
    "npm": frozenset({"publish", "unpublish"}),
    "pnpm": frozenset({"publish"}),
    "yarn": frozenset({"publish", "npm"}),
    "twine": frozenset({"upload"}),
    "cargo": frozenset({"publish", "yank"}),
    "gem": frozenset({"push", "yank"}),
    "poetry": frozenset({"publish"}),
    "uv": frozenset({"publish"}),
    "hatch": frozenset({"publish"}),
    "flit": frozenset({"publish"}),
    "ansible-playbook": None,
}
_KUBE_WITH_ARG = frozenset(
    {
        "-n",
        "--namespace",
        "--context",
        "--kubeconfig",
        "-s",
        "--server",
        "--cluster",
        "--user",
        "--kube-context",
    }
)
_CLOUD_WRITE_VERBS = frozenset(
    {
        "deploy",
        "create",
        "delete",
        "update",
        "apply",
        "set",
        "add-iam-policy-binding",
        "remove-iam-policy-binding",
        "resize",
        "import",
        "up",
        "publish",
        "start",
        "stop",
        "restart",
    }
)
_AWS_WITH_ARG = frozenset({"--region", "--profile", "--output", "--endpoint-url", "--query"})
_AWS_READ = ("describe", "list", "get", "head", "wait", "help", "ls", "presign")
_DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty")


def _deploy(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    del cwd
    verbs = DEPLOY_VERBS[name]
    positionals, _ = scan_options(args, _KUBE_WITH_ARG)
    if verbs is None:
        return [Deploy(name)]
    first = positionals[0].text if positionals else ""
    if name in ("terraform", "tofu"):
        first = next((w.text for w in positionals if w.text in verbs), first)
    if first in verbs or (positionals and positionals[0].dynamic):
        return [Deploy(name, first if not positionals[0].dynamic else None)]
    return None


def _cloud(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    del cwd
    positionals, _ = scan_options(args, _AWS_WITH_ARG)
    words = [w.text for w in positionals]
    if name == "aws":
        if len(words) >= 2 and not words[1].startswith(_AWS_READ):
            if words[0] == "s3" and words[1] not in ("cp", "mv", "rm", "sync", "mb", "rb"):
                return None
            return [Deploy("aws", f"{words[0]} {words[1]}")]
        return None
    hit = next((w for w in words if w in _CLOUD_WRITE_VERBS), None)
    return [Deploy(name, " ".join(words[: words.index(hit) + 1]))] if hit else None


def _vercel(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    del cwd
    positionals, opts = scan_options(
        args, frozenset({"--token", "--scope", "-A", "--local-config", "-e", "--env"})
    )
    verb = positionals[0].text if positionals else ""
    if verb in ("", "deploy") or (verb and "/" in verb):
        return [Deploy(name, "production" if "--prod" in opts else "preview")]
    if verb in ("promote", "rollback", "remove", "rm", "redeploy", "alias"):
        return [Deploy(name, verb)]
    return None


def _delete(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    positionals, opts = scan_options(args, frozenset())
    recursive = name == "rm" and flags(opts, "rR", "--recursive") > 0
    return [DeleteFile(resolve_path(cwd, w), recursive) for w in positionals] or None


#: A symbolic ``chmod`` mode that starts with ``-`` (``-x``, ``-w,o+r``): not an option
#: (chmod's are ``-c -f -v -R``, none of the mode letters ``rwxXst``).
_CHMOD_MODE = re.compile(r"-[rwxXst]+(?:,[ugoa]*[-+=][rwxXstugo]*)*")


def _writer(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    with_arg = {
        "cp": "-S --suffix -t --target-directory",
        "mv": "-S --suffix -t --target-directory",
        "install": "-m -o -g -t -S --mode --owner --group --target-directory",
        "ln": "-S -t --suffix --target-directory",
        "truncate": "-s -r --size --reference",
        "tee": "",
        "touch": "-d -t -r --date --reference",
        "mkdir": "-m --mode",
        "chmod": "--reference",
        "chown": "--reference",
        "chgrp": "--reference",
    }[name]
    if name == "chmod":  # a symbolic mode may look like an option: chmod -x FILE
        args = [Word(w.text.lstrip("-") or w.text, w.dynamic, w.quoted)
                if _CHMOD_MODE.fullmatch(w.text) else w for w in args]  # fmt: skip
    positionals, opts = scan_options(args, frozenset(with_arg.split()))
    targets: list[Word] = [
        w for k in ("-t", "--target-directory") for w in opts.get(k, []) if w is not None
    ]
    if name == "install" and flags(opts, "d", "--directory"):  # install -d DIR...: makes them
        targets, positionals = [*targets, *positionals], []
    if name in ("cp", "mv", "install", "ln"):
        if not targets and len(positionals) >= 2:
            targets = [positionals[-1]]
            sources = positionals[:-1]
        else:
            sources = positionals
        out: list[Action] = [WriteFile(resolve_path(cwd, w)) for w in targets]
        if "-T" not in opts and "--no-target-directory" not in opts:
            named = len(sources) > 1 or bool(opts.get("-t") or opts.get("--target-directory"))
            out += [a for t in targets for a in into_directory(sources, t, cwd, named_dir=named)]
        out += link_targets(name, opts, sources, targets, cwd)
        if name in ("cp", "ln", "install"):  # the sources are read (a link exposes its target)
            whole = name == "ln" or flags(opts, "rRa", "--recursive", "--archive") > 0
            out = [*(ReadFile(tree_root(cwd, w), whole) for w in sources), *out]
        if name == "mv":
            out += [DeleteFile(resolve_path(cwd, w), recursive=True) for w in sources]
        return out or None
    if name in ("chmod", "chown", "chgrp") and "--reference" not in opts:
        positionals = positionals[1:]
    return [WriteFile(resolve_path(cwd, w)) for w in positionals] or None


def _sed(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    del name
    positionals, opts = scan_options(
        args, frozenset({"-e", "-f", "--expression", "--file", "-l", "--line-length"})
    )
    given = [*opts.get("-e", []), *opts.get("--expression", [])]
    scripts = given if given or "-f" in opts or "--file" in opts else positionals[:1]
    if "--sandbox" not in opts and any(w is None or escapes(w.text) for w in scripts):
        return [Unknown("sed script runs a command or reads/writes a file: " + " ".join(
            w.text for w in args))]  # fmt: skip
    in_place = (
        "--in-place" in opts
        or any(  # --in: any prefix of --in-place
            k.startswith("-i") or (k[:1] == "-" and k[1:2] != "-" and "i" in k) for k in opts
        )
    )
    if not in_place:
        return None
    if any("/" in suffix for suffix in _in_place_suffixes(args)):
        return [Unknown("sed -i backs its files up in another directory: "
                        + " ".join(w.text for w in args))]  # fmt: skip
    files = (
        positionals if ("-e" in opts or "--expression" in opts or "-f" in opts) else positionals[1:]
    )
    return [WriteFile(resolve_path(cwd, w)) for w in files] or None


def _in_place_suffixes(args: list[Word]) -> list[str]:
    """The backup suffixes of sed's ``-iSUF``/``--in-place=SUF`` (any prefix: ``--in=``).
    One with a ``/`` names a file elsewhere (``FILE + SUF``, ``*`` the file's name):
    found probing, ``sed -i../../../../x 's/a/b/' f`` beside a directory ``f..`` moved
    ``f`` to the project's root, allowed.

    >>> _in_place_suffixes([Word(w) for w in ("-ni.bak", "-es/i/j/", "--in=/x/*", "f")])
    ['.bak', '/x/*']
    """
    suffixes: list[str] = []
    for word in args:
        text = word.text
        if text == "--":
            break
        if text.startswith("--in") and "=" in text:
            suffixes.append("/" if word.dynamic else text.partition("=")[2])
        elif text[:1] == "-" != text[1:2]:
            for j, c in enumerate(text[1:], 1):
                if c == "i":
                    suffixes.append("/" if word.dynamic else text[j + 1 :])
                if c in "iefl":  # the rest of the word is its value
                    break
    return suffixes


def _dd(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    del name
    sources = [tree_root(cwd, Word(w.text[3:], w.dynamic, w.quoted)) for w in args
               if w.text.startswith("if=")]  # fmt: skip
    reads: list[Action] = [ReadFile(path) for path in sources if path is not None]
    return [
        *reads,
        *(WriteFile(None if w.dynamic else resolve_path(cwd, w.text[3:]))
          for w in args if w.text.startswith("of=")),
    ] or None  # fmt: skip


_HANDLERS: dict[str, Handler] = {
    **dict.fromkeys(HTTP_CLIENTS, http_client),
    **dict.fromkeys(REMOTE_CLIENTS, remote_client),
    **dict.fromkeys(LOOKUP_CLIENTS, lookup_client),
    "openssl": openssl_client,
    "getent": getent_client,
    **dict.fromkeys(DEPLOY_VERBS, _deploy),
    **dict.fromkeys(("aws", "gcloud", "az"), _cloud),
    **dict.fromkeys(("vercel", "vc"), _vercel),
    **dict.fromkeys(("rm", "rmdir", "unlink", "shred"), _delete),
    **dict.fromkeys(
        (
            "cp",
            "mv",
            "install",
            "ln",
            "truncate",
            "tee",
            "touch",
            "mkdir",
            "chmod",
            "chown",
            "chgrp",
        ),
        _writer,
    ),
    "sed": _sed,
    "dd": _dd,
    **dict.fromkeys(("perl", "ruby"), perl_ruby),
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk", "busybox-awk"), awk),
    **dict.fromkeys(SIGNALLERS, classify_signal),
}


def handle(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    """Actions for program ``name`` with ``args``; None if it is not a program we model."""
    handler = _HANDLERS.get(name)
    found = handler(name, args, cwd) if handler is not None else None
    if found is None:  # no write or network of its own (sed without -i...): a reader?
        found = handle_read(name, args, cwd)
    if found is None:
        found = handle_files(name, args, cwd)
    written = outputs(name, args, cwd)
    if written:
        return [*written, *(found or [Shell((name, *(w.text for w in args)), cwd)])]
    return found


#: Programs :func:`handle` reads only in part: the verbs that deploy or publish, a
#: client's host, a one-liner's ``-i``; what else they write is not known (found as a
#: worker: ``cmake -B ../..`` replaced the lead's Makefile, ``cargo build --target-dir
#: ../..``, ``uv venv ../../x``, ``docker build -o ../..``, ``curl -o``).
_IN_PART = frozenset(
    {*DEPLOY_VERBS, "aws", "gcloud", "az", "vercel", "vc", "curl", "wget", "http", "https",
     "xh", "aria2c", "ssh", "sftp", "nc", "ncat", "telnet", "mosh", "perl", "ruby",
     *LOOKUP_CLIENTS, "openssl", "getent"}
)  # fmt: skip


@cache
def modelled() -> frozenset[str]:
    """The programs whose reads and writes of their arguments are all judged: the
    readers', writers' and deleters' tables. Not those of which only some verbs or
    options are read (:data:`_IN_PART`, :func:`~exomonad.policy.shell_programs.programs`
    but for the readers and editors among them): a path they are given outside the
    worktree is judged by :func:`~exomonad.policy.shell_where.runs`."""
    whole = (frozenset(_HANDLERS) - _IN_PART) | (writers() - programs())
    return whole | tree_readers() | file_readers()


def redirect_target(op: str, target: Word, cwd: str | None) -> Action | None:
    """A :class:`WriteFile` for an output redirection to a file (not an fd or a device),
    a :class:`ReadFile` for an input one (``cat < ~/.ssh/id_rsa``) whose path is known,
    a :class:`~exomonad.policy.actions.Network` for either to bash's ``/dev/tcp``."""
    text = target.text
    if op not in ("<<", "<<-", "<<<"):  # a here-document's word names no file
        socket = bash_socket(target, cwd)
        if socket is not None:
            return socket
    if op == "<":
        if not target.dynamic and (text in _DEVICES or text.startswith("/dev/fd/")):
            return None
        path = tree_root(cwd, target)
        return ReadFile(path) if path is not None else None
    if op not in (">", ">>", ">|", "&>", "&>>", "<>", ">&"):
        return None
    if op == ">&" and (is_number(text) or text == "-"):
        return None
    if not target.dynamic and (text in _DEVICES or text.startswith("/dev/fd/")):
        return None
    return WriteFile(resolve_path(cwd, target))
