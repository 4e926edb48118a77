"""The environment variables whose value changes what a program runs, reads or writes,
as an assignment word (``NAME=value``, before a command or alone) sets them.

Code something runs later (``BASH_ENV``, ``PS4``, ``LD_PRELOAD``, ``GIT_CONFIG_*``:
:data:`CODE_VARS`), an agent's identity (``EXOMONAD_TOKEN``, ``CLAUDECODE``:
:func:`agent_var`), a program's options or configuration (``RIPGREP_CONFIG_PATH``,
``TAR_OPTIONS``: :data:`OPTION_VARS`), the host a client's work goes to
(``DOCKER_HOST``): assigning them is never seen through (:func:`risky_assignment`). A
variable naming a file a program appends to (``GIT_TRACE=PATH``, ``HISTFILE=``) is a
write of that file (:func:`written_by`).

>>> from exomonad.policy.shell_lex import Word
>>> risky_assignment(Word("LD_PRELOAD=./x.so")), risky_assignment(Word("LANG=C"))
(True, False)
>>> written_by(Word("HISTFILE=../h")).text
'../h'
"""

from __future__ import annotations

import re

from exomonad.ancestry import AGENT_ENV
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_loose import loose

__all__ = [
    "CODE_VARS",
    "OPTION_VARS",
    "agent_var",
    "code_var",
    "risky_assignment",
    "written_by",
]


#: Variables whose value is code something runs later (or a file of code, or where git
#: finds its programs and configuration): assigning them is never seen through. Bash's
#: ``BASH_CMDS`` and ``BASH_ALIASES`` are its ``hash -p`` and ``alias`` tables; its
#: ``TEXTDOMAIN`` and ``TEXTDOMAINDIR`` pick the message catalog whose translation of a
#: ``$"..."`` it reads as a double-quoted string, ``$(...)`` and all.
CODE_VARS = frozenset(
    {
        "BASH_ENV",
        "BASH_CMDS",
        "BASH_ALIASES",
        "ENV",
        "PROMPT_COMMAND",
        "PS0",
        "PS1",
        "PS2",
        "PS3",
        "PS4",
        "TEXTDOMAIN",
        "TEXTDOMAINDIR",
        "SHELLOPTS",
        "BASHOPTS",
        "LD_PRELOAD",
        "LD_AUDIT",
        "LD_LIBRARY_PATH",
        "GIT_EXEC_PATH",
        "GIT_CONFIG",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_TEMPLATE_DIR",
        "GIT_SSH",
        "GIT_PROXY_COMMAND",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "GIT_EXTERNAL_DIFF",
        "GIT_NAMESPACE",
        "GIT_CEILING_DIRECTORIES",
        "GIT_ALLOW_PROTOCOL",
        "GIT_PROTOCOL_FROM_USER",
        "GIT_COMMON_DIR",
        "GIT_OBJECT_DIRECTORY",
        "GIT_SHALLOW_FILE",
    }
)
_CODE_PREFIXES = ("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "BASH_FUNC_")
#: Editors and pagers: fine when they are one of these plain programs.
_PROGRAM_VARS = frozenset(
    {
        "GIT_EDITOR",
        "GIT_SEQUENCE_EDITOR",
        "EDITOR",
        "VISUAL",
        "GIT_PAGER",
        "PAGER",
        "MANPAGER",
        "SYSTEMD_PAGER",
    }
)
#: Variables that hand a program its options or a command to run when set to anything
#: but empty: ``RIPGREP_CONFIG_PATH`` (a file of rg flags: ``-uu`` read the state dir, found
#: as a worker), ``GREP_OPTIONS`` (older greps), ``TAR_OPTIONS`` (GNU tar: ``-C DIR``),
#: ``ZIPOPT``/``UNZIP``/``UNZIPOPT`` (Info-ZIP), ``LESSOPEN``/``LESSCLOSE`` (commands less
#: runs), ``RSYNC_RSH`` (rsync's remote shell command), ``WGETRC``/``CURL_HOME`` (their
#: configuration files, which name output files); ``BZIP2``/``BZIP`` and zip's ``ZIP``
#: take file operands too (found probing: ``BZIP2='-f ../../a.txt' bzip2 x.txt``
#: replaced the lead's ``a.txt`` with ``a.txt.bz2``, ``ZIP='-r ../../o.zip' zip ...``
#: wrote ``o.zip`` there, both allowed).
OPTION_VARS = frozenset(
    {"RIPGREP_CONFIG_PATH", "GREP_OPTIONS", "TAR_OPTIONS", "ZIPOPT", "ZIP", "UNZIP",
     "UNZIPOPT", "BZIP2", "BZIP", "LESSOPEN", "LESSCLOSE", "RSYNC_RSH", "WGETRC", "CURL_HOME",
     "GNUPGHOME"}
)  # fmt: skip
#: Variables that send a program's work to another host or name a program it runs, when
#: set to anything but empty: a container engine's (``DOCKER_HOST=tcp://evil.example:2375
#: docker run ...``, found probing: allowed, the container ran there; ``DOCKER_CONFIG`` and
#: ``CONTAINERS_CONF`` name files that name the engine), ``AUTOSSH_PATH``
#: (the ssh autossh runs), ``RSYNC_CONNECT_PROG`` (the command rsync connects through),
#: ``TAPE`` (GNU tar's archive without ``-f``: ``HOST:FILE`` is reached through rsh).
CLIENT_VARS = frozenset({"DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "CONTAINER_HOST",
                         "CONTAINER_CONNECTION", "CONTAINERS_CONF", "AUTOSSH_PATH",
                         "RSYNC_CONNECT_PROG", "TAPE"})  # fmt: skip
_PLAIN_PROGRAMS = frozenset(
    {"", "true", ":", "cat", "less", "more", "head", "vi", "vim", "nano", "less -R", "less -FRX"}
)


def code_var(name: str) -> bool:
    """Whether variable ``name`` holds code or points git at other configuration (so
    setting it, and unsetting it too, changes what runs: ExoMonad's git gate lives in
    ``GIT_CONFIG_PARAMETERS``).

    >>> code_var("GIT_CONFIG_PARAMETERS"), code_var("GIT_CONFIG_KEY_3"), code_var("HOME")
    (True, True, False)
    """
    return name in CODE_VARS or name.startswith(_CODE_PREFIXES)


def agent_var(name: str) -> bool:
    """Whether variable ``name`` marks a process as an agent's (``EXOMONAD_TOKEN``, any
    ``EXOMONAD_*``, ``CLAUDECODE``, ``GEMINI_CLI``...: :data:`exomonad.ancestry.AGENT_ENV`).
    A process that loses them (and leaves the agent's process tree) passes for a person's.

    >>> agent_var("EXOMONAD_TOKEN"), agent_var("CLAUDECODE"), agent_var("EXOMONAD"), agent_var("X")
    (True, True, False, False)
    """
    return name in AGENT_ENV or (name.startswith("EXOMONAD_") and len(name) > 9)


def risky_assignment(word: Word) -> bool:
    """True if ``NAME=value`` plants code (``BASH_ENV``, ``GIT_CONFIG_*``, ``PS4``...),
    points git at other programs or configuration, stores command text for later, hands
    a program options (:data:`OPTION_VARS`), or changes an agent's identity
    (:func:`agent_var`).

    >>> risky_assignment(Word("GIT_EDITOR=true")), risky_assignment(Word("PS4=$(id)"))
    (False, True)
    >>> risky_assignment(Word("GIT_SSH_COMMAND=ssh -i k")), risky_assignment(Word("X=1"))
    (False, False)
    >>> risky_assignment(Word("RIPGREP_CONFIG_PATH=c")), risky_assignment(Word("TAR_OPTIONS="))
    (True, False)

    ``GIT_TRACE_REDACT=0`` (found probing: ``GIT_TRACE_REDACT=0 GIT_TRACE_CURL=1 git
    fetch origin`` printed the credential helper's password, base64 in an
    ``Authorization`` header, allowed) is risky too.
    """
    name, _, value = word.text.partition("=")
    name = name.rstrip("+").split("[", 1)[0]
    if code_var(name) or agent_var(name):
        return True
    if name in OPTION_VARS or name in CLIENT_VARS:
        return word.dynamic or value != ""
    if name in _PROGRAM_VARS:
        return word.dynamic or value not in _PLAIN_PROGRAMS
    if name == "GIT_SSH_COMMAND":
        return word.dynamic or not _plain_ssh(value)
    if name == "GIT_TRACE_REDACT":  # off, git's traces print the Authorization it sends
        return word.dynamic or value.lower() not in ("1", "true", "yes", "on")
    if name == "PATH":
        return any(p == "" or not p.startswith(("/", "$", "~")) for p in value.split(":"))
    # command text the shell does not expand here, stored to run later (``x='$(id)'``);
    # not an arithmetic expansion (``n=$((n+1))``)
    return any(word.text.startswith(("$(", "`"), spot) for spot in loose(word))


#: ssh's options that change no host, file or program (``-v``, ``-T``, ``-4``...), and
#: those taking the key, port or user: all ``GIT_SSH_COMMAND`` may add to ``ssh``.
_SSH_FLAGS = frozenset("46aAkKqTtvxC")
_SSH_VALUED = frozenset({"-i", "-p", "-l"})
#: What may spell such a command with no shell syntax in it (git runs it with ``sh -c``).
_SSH_CHARS = re.compile(r"[A-Za-z0-9_./~@:+,%= -]*")


def _plain_ssh(value: str) -> bool:
    """Whether ``value`` is ``ssh`` with only :data:`_SSH_FLAGS` and a key, port or
    user: found probing, ``GIT_SSH_COMMAND='ssh -J HOST' git fetch`` connected to HOST
    and ``'ssh -E ../../log' git push`` wrote the log in the lead's checkout, allowed
    (``-L``/``-R`` forward ports, ``-S`` names a socket, ``-I`` loads a library).

    >>> [_plain_ssh(v) for v in ("ssh -i ~/.ssh/k -p 2222", "ssh -vT", "ssh -J h", "sshx")]
    [True, True, False, False]
    """
    words = value.split()
    if not _SSH_CHARS.fullmatch(value) or not words or words[0] not in ("ssh", "/usr/bin/ssh"):
        return False
    i = 1
    while i < len(words):
        text = words[i]
        if text in _SSH_VALUED:
            i += 2
        elif text[:2] in _SSH_VALUED or (
            text[:1] == "-" and len(text) > 1 and all(c in _SSH_FLAGS for c in text[1:])
        ):
            i += 1
        else:
            return False
    return len(words) >= i


#: Variables naming a file a program appends to: git's traces (``GIT_TRACE``,
#: ``GIT_TRACE2_EVENT``, ``GIT_TRACE_PACKET``... any ``GIT_TRACE*``), the shell's history.
_FILE_VARS = frozenset({"HISTFILE", "LESSHISTFILE"})
#: Values of a ``GIT_TRACE*`` that name no file: off, stderr, a file descriptor.
_TRACE_TO_FD = frozenset({"", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "true", "false"})


def written_by(word: Word) -> Word | None:
    """The file ``NAME=value`` makes a program write, or None: ``GIT_TRACE=/path`` (git
    appends its trace there; ``af_unix:PATH``, a socket), ``HISTFILE=``.

    >>> written_by(Word("GIT_TRACE2_EVENT=af_unix:/p/s")).text, written_by(Word("GIT_TRACE=1"))
    ('/p/s', None)
    """
    name, eq, value = word.text.partition("=")
    name = name.rstrip("+").split("[", 1)[0]
    if not eq or not (name.startswith("GIT_TRACE") or name in _FILE_VARS):
        return None
    if name.startswith("GIT_TRACE") and not word.dynamic and value.lower() in _TRACE_TO_FD:
        return None
    for prefix in ("af_unix:stream:", "af_unix:dgram:", "af_unix:"):
        value = value.removeprefix(prefix)
    return Word(value, word.dynamic, word.quoted)
