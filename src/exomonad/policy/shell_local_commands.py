"""The local commands a remote client runs on its way to a host.

``ssh -o ProxyCommand=CMD``, ``LocalCommand``, ``KnownHostsCommand``, a configuration
file given with ``-F`` (whose commands run the same way), ``scp -S PROGRAM``, ``sftp
-S``/``-D``, ``rsync -e CMD``, ``nc -e``/``-c``, ``ncat --exec``/``--sh-exec``/
``--lua-exec``, ``mosh --ssh``: each runs a program here, with the agent's rights,
whatever the host does. Found probing: each was asked only as "network access to H", so
a person approving a connection also ran ``cat ../../.exomonad/lead.token`` unseen. They
are now :class:`~exomonad.policy.actions.Unknown` parts of the question, named.

>>> from exomonad.policy.shell_env import scan_options
>>> from exomonad.policy.shell_lex import Word
>>> _, opts = scan_options([Word("-oProxyCommand=nc x 22"), Word("h")], frozenset({"-o"}))
>>> local_commands("ssh", opts)
[Unknown(raw='ssh runs a local command: -o ProxyCommand=nc x 22')]
"""

from __future__ import annotations

import re

from exomonad.policy.actions import Action, Unknown
from exomonad.policy.shell_env import Options

__all__ = ["LOCAL_COMMAND_OPTIONS", "local_commands"]

#: ssh configuration keywords whose value is a command run here.
_SSH_KEYS = frozenset({"proxycommand", "localcommand", "knownhostscommand"})
#: Per client: options whose value is a program or command run here.
_RUNS: dict[str, tuple[str, ...]] = {
    "ssh": ("-F",),
    "scp": ("-F", "-S"),
    "sftp": ("-F", "-S", "-D"),
    "rsync": ("-e", "--rsh"),
    "nc": ("-e", "-c"),
    "ncat": ("-e", "-c", "--exec", "--sh-exec", "--lua-exec"),
    "mosh": ("--ssh", "--client"),
}
#: The options of :data:`_RUNS` that take a value (for the clients' option scans).
LOCAL_COMMAND_OPTIONS = " ".join(sorted({o for opts in _RUNS.values() for o in opts}))
#: An rsync remote shell that is plain ssh (``-e ssh``, ``-e 'ssh -p 2222'``): ssh, then
#: flags among ``-p -i -l -q -4 -6 -v -C``, each with at most one plain value (attached,
#: or the next word).
_SSH_FLAG = re.compile(r"-[pilq46vC][\w.@/~-]*")
_SSH_VALUE = re.compile(r"[\w.@/~-]+")


def _plain_ssh(text: str) -> bool:
    """Whether the remote shell ``text`` is plain ssh, read word by word (a regular
    expression with nested repeats took exponential time on ``ssh -p  -p ... !``: 22 s
    for 14 pairs).

    >>> _plain_ssh("ssh -p 2222 -i ~/.ssh/k -q"), _plain_ssh("ssh -o ProxyCommand=x")
    (True, False)
    """
    words = text.split()
    if not words or words[0] not in ("ssh", "/usr/bin/ssh"):
        return False
    after_flag = False
    for word in words[1:]:
        if _SSH_FLAG.fullmatch(word):
            after_flag = len(word) == 2  # `-p2222` holds its value already
        elif after_flag and _SSH_VALUE.fullmatch(word):
            after_flag = False
        else:
            return False
    return True


def local_commands(name: str, opts: Options) -> list[Action]:
    """What ``name`` (a client of :data:`_RUNS`) runs here, by its options ``opts``."""
    found: list[str] = []
    if name in ("ssh", "scp", "sftp"):
        for value in opts.get("-o", []):
            text = value.text.strip() if value is not None else ""
            if re.split(r"[=\s]", text, maxsplit=1)[0].lower() in _SSH_KEYS:
                found.append(f"-o {text}")
    for option in _RUNS.get(name, ()):
        for value in opts.get(option, []):
            text = "" if value is None else value.text
            plain = value is not None and not value.dynamic and _plain_ssh(text)
            if name != "rsync" or not plain:
                found.append(f"{option} {text}".rstrip())
    return [Unknown(f"{name} runs a local command: {what}") for what in found]
