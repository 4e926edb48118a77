"""Credential stores: which paths are credentials, and which shell text names one.

Split from :mod:`exomonad.policy.predicates`, which exports :func:`secret_path`. The
stores in the home directory are listed once (:data:`SECRET_HOME`); the shell's
classifier asks :func:`named_secrets` which of them a word names where no read of a
known path shows it (``python3 -c "open('/root/.ssh/id_rsa')"``, ``cat
"$(echo ~)/.ssh/id_rsa"``).

>>> from exomonad.policy.actions import ReadFile
>>> ctx = Context(role="w")
>>> [secret_path(ReadFile(ctx.home + p), ctx) for p in ("/.ssh/id_rsa", "/.ssh.md")]
[True, False]
>>> named_secrets("print(open('~/.aws/credentials').read())", "/h", run_time=False)
['/h/.aws/credentials']
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
from collections.abc import Sequence
from typing import Protocol

from exomonad.policy.actions import ReadFile
from exomonad.policy.request import Context
from exomonad.policy.shell_brace import expand
from exomonad.policy.shell_env import is_within
from exomonad.policy.state_reads import expand_now, glob_could_name, shell_glob_matches
from exomonad.util.paths import real_path

__all__ = [
    "SECRET_FILES",
    "SECRET_HOME",
    "STORE_FILE_NAMES",
    "may_name_env",
    "named_secrets",
    "secret_path",
    "store",
]

#: Credential stores, relative to the home directory.
SECRET_HOME = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gh",
    ".netrc",
    ".docker/config.json",
    ".kube/config",
    ".pypirc",
    ".npmrc",
    ".git-credentials",
    ".claude.json",
    ".config/gcloud",
    ".azure",
    # The coding agents' own sign-ins (found probing: a worker read them all; their
    # names as Claude Code 2.1, Codex 0.169 and Gemini CLI 0.61 write them).
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".codex/.credentials.json",
    ".gemini/oauth_creds.json",
    ".gemini/gemini-credentials.json",
    ".gemini/mcp-oauth-tokens.json",
    ".gemini/a2a-oauth-tokens.json",
    # What the commands that print a credential read (:mod:`.shell_secrets`), and the
    # tokens of the package registries and forges' other clients.
    ".config/git/credentials",
    ".config/glab-cli",
    ".config/hub",
    ".config/tea",
    ".config/op",
    ".password-store",
    ".local/share/keyrings",
    ".vault-token",
    ".fly",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".pgpass",
    ".my.cnf",
    ".terraform.d/credentials.tfrc.json",
    ".cache/huggingface/token",
    ".huggingface/token",
)

#: Files that are credentials wherever the home directory is.
SECRET_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers")

#: Names the files in the stores have (each store's own and, for a directory, the files
#: the tools keep there): a tree read narrowed to globs none of these match (``grep -r
#: --include='*.py'``) reads no store, one narrowed to ``*``, ``id_*``, ``hosts.yml`` or
#: ``*.json`` does.
STORE_FILE_NAMES = (
    *{posixpath.basename(s) for s in SECRET_HOME},
    *("id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk"),
    *("config", "credentials", "hosts.yml", "config.yml", "config.yaml", "config.json"),
    *("application_default_credentials.json", "access_tokens.db", "credentials.db"),
    *("adc.json", "msal_token_cache.json", "accessTokens.json", "azureProfile.json"),
    *("secring.gpg", "pubring.kbx", "trustdb.gpg", "0123456789ABCDEF0123.key"),
    *("login.keyring", "default.keyring", "secret.gpg", "token", "session.json"),
)

#: What ``/proc`` shows of another process that carries its secrets: its environment
#: (an agent's ``EXOMONAD_TOKEN``), its memory, the files it holds open (the server's
#: databases) and its mapped files.
_PROC_SECRET = r"/proc/[^/\s'\"]+(?:/task/[^/\s'\"]+)?/(?:environ|mem|fd|map_files)(?=/|$|[^\w.-])"
_PROC = re.compile(_PROC_SECRET)


class _HasPath(Protocol):
    @property
    def path(self) -> str | None: ...


@functools.lru_cache(maxsize=8)
def _secret_roots(home: str) -> tuple[str, ...]:
    return tuple(posixpath.normpath(posixpath.join(home, s)) for s in SECRET_HOME)


def store(relative: str) -> ReadFile:
    """A read of the credential store ``relative`` to the home directory."""
    return ReadFile(posixpath.join(os.path.expanduser("~"), relative))


#: Names of environment files (``.env``, ``.env.local``, ``.env.production``).
_ENV_NAMES = (".env", ".env.local", ".env.production")


def may_name_env(glob: str) -> bool:
    """Whether a tree read's file name glob (``grep --include``, ``rg -g``, Grep's
    ``glob``) may pick out an environment file: found probing, ``grep -r --include=.env
    KEY ../..`` and ``rg -g .env KEY ../..`` printed the lead's ``.env``, allowed, where
    ``cat ../../.env`` is refused. Globs match dot names here (grep's and rg's do).

    >>> [may_name_env(g) for g in (".env", "*.env", ".en[v]", "{.env,x}", "*.py", "!x")]
    [True, True, True, True, False, False]
    """
    base = glob.rstrip("/").rsplit("/", 1)[-1]
    return not glob.startswith("!") and any(
        shell_glob_matches(base.lower(), name, dotglob=True) for name in _ENV_NAMES
    )


def _at(action: _HasPath, path: str) -> ReadFile:
    """A read of ``path`` as ``action`` reads (recursive or not, narrowed or not)."""
    return ReadFile(path, getattr(action, "recursive", False), getattr(action, "include", ()))


def secret_path(action: _HasPath, ctx: Context) -> bool:
    """The path is a credential store (``~/.ssh``, ``~/.aws``, ``/etc/shadow``, ``.env``,
    a process's ``/proc/PID/environ``...), or a recursive read (``grep -r``) of a
    directory holding one of the stores in the home directory, unless it is narrowed to
    names no store's file has (``--include=*.py``; not ``*``, ``id_*``, ``hosts.yml``:
    found probing, each printed a key, allowed). A path known only at run time counts when its
    words name a store (``$X/.ssh/id_rsa``: :func:`named_secrets`)."""
    path = action.path
    if path is None:
        return False
    if "$" in path or "`" in path:
        return bool(named_secrets(path, ctx.home, run_time=True))
    real = real_path(path)  # None: not known, judged by its name (and asked: cascade)
    if real is not None and real != path and secret_path(_at(action, real), ctx):
        return True  # a symlink to a credential (made by a git checkout, say)
    roots = _secret_roots(ctx.home)
    if any(path == root or path.startswith(root + "/") for root in roots):
        return True
    recursive, include = getattr(action, "recursive", False), getattr(action, "include", ())
    held = [root for root in roots if is_within(root, path)] if recursive else []
    if held and _may_name_store(include, held):
        return True
    if recursive and any(may_name_env(g) for g in include):
        return True
    if _PROC.match(path):
        return True
    base = posixpath.basename(path)
    if path in SECRET_FILES or base == ".env" or base.startswith(".env."):
        return True
    if "{" in path:  # a pattern's braces (Glob's **/{.env,x}) name each of their words
        words = expand([(c, True) for c in path])
        if words is None:
            return True
        if words != [path]:
            return any(secret_path(_at(action, w), ctx) for w in words)
        # else its braces are literal (awk '{print}', a quoted '{x}'): a name like others
    if any(c in path for c in "*?["):  # a glob that could name one (cat ~/.ss?/id_rsa)
        low, base = path.lower(), base.lower()  # whatever their case (nocaseglob)
        named = any(glob_could_name(t.lower(), low, below=True, dotglob=True)
                    for t in (*roots, *SECRET_FILES))  # fmt: skip
        if named or any(shell_glob_matches(base, env) for env in (".env", ".env.local")):
            return True
        now = expand_now(path)  # a link among its names (`cat *` next to x -> ~/.ssh/id_rsa)
        return now is None or any(secret_path(ReadFile(name), ctx) for name in now)
    return False


#: At most this many names are listed in the stores a narrowed tree read holds; more,
#: and the read is taken as reaching them.
_STORE_NAMES_AT_MOST = 512


def _may_name_store(include: tuple[str, ...], stores: Sequence[str] = ()) -> bool:
    """Whether a tree read narrowed to ``include`` (none: every file) may read a file of
    the credential ``stores`` it holds: a glob matching one of :data:`STORE_FILE_NAMES`
    or a name the stores hold now (a bounded walk: found probing, ``find ~ -name 'id_*'
    -exec cat {} +`` and ``grep -r --include=credentials aws ~`` printed keys, allowed as
    narrowed reads), whatever its case, or one with a brace (``--include='{x,*}'``: grep
    expands it). A store that cannot be listed, or holds too many names, counts.

    >>> _may_name_store(()), _may_name_store(("*",)), _may_name_store(("id_*",))
    (True, True, True)
    >>> _may_name_store(("*.py", "*.md")), _may_name_store(("*.YML",))
    (False, True)
    """
    if not include:
        return True
    listed = _listed(stores)
    if listed is None:
        return True
    names = [n.lower() for n in (*STORE_FILE_NAMES, *listed)]
    for glob in include:
        last = glob.replace("\\", "").rsplit("/", 1)[-1].lower()
        if "{" in glob or any(shell_glob_matches(last, n, dotglob=True) for n in names):
            return True
    return False


def _listed(stores: Sequence[str]) -> list[str] | None:
    """The names in ``stores`` (each store's own and, for a directory, every name below
    it); None where one cannot be listed or they hold too many."""
    names: list[str] = []
    for store in stores:
        names.append(posixpath.basename(store))
        try:
            for _, dirs, files in os.walk(store, onerror=_raise):
                names += dirs + files
                if len(names) > _STORE_NAMES_AT_MOST:
                    return None
        except OSError:  # not a directory: its own name; else it could not be listed
            if os.path.lexists(store) and not os.path.isfile(store):
                return None
    return names


def _raise(error: OSError) -> None:
    raise error


def _as_named(path: str, home: str) -> str:
    """``path`` with the store it starts with spelled as the store is (``/h/.AWS/x``:
    ``/h/.aws/x``)."""
    low = path.lower()
    for root in (*_secret_roots(home), *SECRET_FILES):
        if low.startswith(root.lower()):
            return root + path[len(root) :]
    return path


#: A character that may continue a file name (what ends a path in code: a quote, a
#: bracket, a space...).
_NAME = r"[\w.@+-]"
#: The rest of a path, in code (up to a quote, a bracket, a space...).
_REST = re.compile(r"[^\s'\"(),;`]*")
#: ``~/``, ``$HOME/`` and ``${HOME}/`` where a path starts (not ``a~/``).
_HOME_REF = re.compile(r"(?<![\w.~/-])(?:~|\$HOME|\$\{HOME\})(?=/)")


@functools.lru_cache(maxsize=8)
def _absolute(home: str) -> re.Pattern[str]:
    """An absolute path into a store of ``home``, or a file in :data:`SECRET_FILES`, or a
    process's secrets in ``/proc``."""
    stores = "|".join(re.escape(p) for p in (*_secret_roots(home), *SECRET_FILES))
    return re.compile(
        rf"(?<![\w.~-])(?:(?:{stores})(?!{_NAME})|{_PROC_SECRET}){_REST.pattern}", re.IGNORECASE
    )  # in any case: `${g,,}` and `declare -l` lower a name when the line runs


#: After an expansion, a store's name as a path's parts: ``$X/.ssh/id_rsa``,
#: ``"$(echo ~)/.aws/credentials"``, ``$D/.env``.
_RELATIVE = re.compile(
    rf"/(?:{'|'.join(re.escape(s) for s in SECRET_HOME)}|\.env(?:\.{_NAME}*)?)(?!{_NAME})",
    re.IGNORECASE,
)


#: What a word holds when it is code, not a path (``-c``'s or ``-e``'s program).
_CODE = re.compile(r"[\s()'\"+,;]")


def named_secrets(text: str, home: str, *, run_time: bool) -> list[str]:
    """The credential paths shell text names: absolute ones, ones from ``~/`` or
    ``$HOME/`` and, where the rest of the path is not known (``run_time``: the text
    expands something whose value is known only when it runs; or the text is code, a
    ``-c`` or ``-e`` program), a store's name as a path's last parts (``$X/.ssh``,
    ``HOME + '/.ssh/id_rsa'``). Best effort: code that builds the name itself from parts
    names none (guarantees.md, "What a script does").

    >>> named_secrets("curl -F f=@/h/.ssh/id_rsa", "/h", run_time=False)
    ['/h/.ssh/id_rsa']
    >>> named_secrets("$(echo ~)/.ssh/id_rsa", "/h", run_time=True)
    ['$(echo ~)/.ssh/id_rsa']
    >>> named_secrets("os.environ['HOME'] + '/.aws/credentials'", "/h", run_time=False)
    ['/h/.aws/credentials']
    >>> named_secrets("/h/.sshrc /h/.ssh.md notes/.sshx", "/h", run_time=False)
    []
    >>> named_secrets("g=$HOME/.AWS/CREDENTIALS", "/h", run_time=True)  # cat "${g,,}"
    ['/h/.aws/CREDENTIALS']
    """
    found = [m.group(0) for m in _absolute(home).finditer(_HOME_REF.sub(lambda _: home, text))]
    if found:
        return [_as_named(f, home) for f in found]
    after = min((i for i in (text.find("$"), text.find("`")) if i >= 0), default=-1)
    if run_time and after >= 0 and _RELATIVE.search(text, after):
        return [text]
    named = _RELATIVE.search(text) if _CODE.search(text) else None
    if named is not None:  # HOME + '/.ssh/id_rsa' in code: taken to be the home's
        rest = _REST.match(text, named.end())
        return [home + named.group(0) + (rest.group(0) if rest else "")]
    return []
