"""Programs that signal every process at once, or whoever holds a port, a session, a
service: the half of :mod:`exomonad.policy.shell_signal` that needs no ``/proc``.

Found as a worker (a fourth round), each allowed: ``killall5 -15`` and ``killall5 -9``
signalled every process (``exomonad serve`` died), ``loginctl terminate-user root``
ended every process of the user, ``fuser -k -n tcp PORT`` killed whoever held the port
(the dashboard), ``systemctl --user stop``/``kill`` stopped a service.

- :data:`ENDS_ALL`: judges that deny (as ``kill -9 -1`` is denied) what ends every
  process or names ExoMonad: ``killall5``, ``reboot``/``poweroff``/``halt``/
  ``shutdown``, ``telinit N``, ``systemctl poweroff``/``exit``, ``loginctl
  terminate-user``, ``fuser -k -m``.
- :func:`owner_signal`: why ``fuser -k``, ``loginctl`` or ``systemctl`` verbs other than
  looking, ``start-stop-daemon`` may signal processes (the classifier makes it Unknown).

>>> owner_signal("fuser", ["-k", "-n", "tcp", "8080"]) is not None
True
>>> owner_signal("systemctl", ["--user", "status", "x"]) is None
True
>>> ENDS_ALL["killall5"](["-15"]), ENDS_ALL["loginctl"](["list-users"])
(True, False)
"""

from __future__ import annotations

from collections.abc import Callable

from exomonad.policy.shell_env import short_cluster

__all__ = ["ALL_SIGNALLERS", "ENDS_ALL", "SYSTEM_INITS", "owner_signal"]

#: What every ExoMonad process is called, whatever runs it.
_NAME = "exomonad"
#: Where ``init`` is the system's (a project's ``./init 0`` is its own script).
SYSTEM_INITS = frozenset({"init", "/sbin/init", "/usr/sbin/init", "/bin/init", "/usr/bin/init"})
#: Programs that signal every process at once (``killall5``: all but its own session's),
#: shut down or change the runlevel.
_EVERY_PROCESS = frozenset({"killall5", "reboot", "poweroff", "halt", "shutdown", "telinit"})
#: Programs that signal processes chosen otherwise than by pid or name: whoever holds a
#: file or port, a login session or user, a service, a daemon.
_BY_OWNER = frozenset({"fuser", "loginctl", "systemctl", "start-stop-daemon"})
#: The programs of this module (``init`` aside: a common name for a project's script).
ALL_SIGNALLERS = _EVERY_PROCESS | _BY_OWNER

#: What ``loginctl``/``systemctl`` do that only looks (no verb: they list).
_LOGINCTL_LOOKS = frozenset(
    {"", "list-sessions", "session-status", "show-session", "list-users", "user-status",
     "show-user", "list-seats", "seat-status", "show-seat", "help"}
)  # fmt: skip
_SYSTEMCTL_LOOKS = frozenset(
    {"", "list-units", "list-automounts", "list-paths", "list-sockets", "list-timers",
     "list-unit-files", "list-dependencies", "list-jobs", "list-machines", "status", "show",
     "cat", "help", "is-active", "is-failed", "is-enabled", "is-system-running",
     "show-environment", "get-default"}
)  # fmt: skip
#: Their options that take a value (one missing here reads as the verb: Unknown).
_CTL_WITH_ARG = frozenset(
    {"-t", "--type", "--state", "-p", "--property", "-P", "--job-mode", "-s", "--signal",
     "--kill-whom", "--kill-value", "--what", "--root", "--image", "-n", "--lines", "-o",
     "--output", "-H", "--host", "-M", "--machine", "--preset-mode", "--timestamp",
     "--when", "--message", "--drop-in", "--check-inhibitors"}
)  # fmt: skip
#: The verbs that end every process (or every one of the user's).
_SYSTEMCTL_ENDS_ALL = frozenset(
    {"poweroff", "reboot", "halt", "kexec", "soft-reboot", "emergency", "rescue", "isolate",
     "default", "exit", "switch-root"}
)  # fmt: skip
_LOGINCTL_ENDS_ALL = frozenset({"terminate-user", "kill-user", "terminate-seat"})
#: ``start-stop-daemon``'s options that only look.
_DAEMON_LOOKS = frozenset({"--status", "-T", "--help", "-H", "--version", "-V"})


def _ctl_verb(args: list[str]) -> str:
    """``loginctl``/``systemctl [OPTIONS] VERB ...``'s verb (``""``: none).

    >>> _ctl_verb(["--user", "-p", "X", "stop", "u"]), _ctl_verb(["--no-pager"])
    ('stop', '')
    """
    i = 0
    while i < len(args):
        text = args[i]
        if text == "--":
            return args[i + 1] if i + 1 < len(args) else ""
        if not text.startswith("-") or text == "-":
            return text
        i += 2 if text in _CTL_WITH_ARG else 1
    return ""


def _kills(args: list[str]) -> bool:
    """``fuser -k`` (``--kill``, ``-km``...)."""
    return any(t == "--kill" or short_cluster(t, "k") for t in args)


def owner_signal(name: str, args: list[str]) -> str | None:
    """Why ``fuser``/``loginctl``/``systemctl``/``start-stop-daemon ARGS`` may signal
    processes, or None when it only looks (or ``name`` is none of them)."""
    command = " ".join((name, *args))
    if name == "fuser":
        return f"{command} (signals whoever holds those files or ports)" if _kills(args) else None
    if name == "start-stop-daemon":
        status = _DAEMON_LOOKS.intersection(args)
        return None if status else f"{command} (starts or stops a daemon)"
    if name not in ("loginctl", "systemctl"):
        return None
    looks = _LOGINCTL_LOOKS if name == "loginctl" else _SYSTEMCTL_LOOKS
    if _ctl_verb(args) in looks:
        return None
    return f"{command} (stops, signals or changes sessions or services)"


def _every(args: list[str]) -> bool:
    """``killall5``, ``reboot``, ``poweroff``, ``halt``, ``shutdown``: every process ends;
    ``--help`` and ``shutdown -c``/``-k`` (cancel; only a warning) do not, nor
    ``killall5 -0`` (signal 0 only asks whether a process exists, as for ``kill``)."""
    return not {"--help", "-c", "-k", "--version", "-0"}.intersection(args)


def _runlevel(args: list[str]) -> bool:
    """``telinit``/``init N``: a new runlevel stops what the old one ran (``q``, ``u``:
    reload, re-exec)."""
    return any(len(a) == 1 and a in "0123456sS" for a in args)


def _names_exomonad(args: list[str]) -> bool:
    return any(_NAME in a.lower() for a in args)


def _stops_exomonad(name: str, args: list[str]) -> bool:
    """A service, session or daemon signalled (not looked at) whose name says ExoMonad."""
    return owner_signal(name, args) is not None and _names_exomonad(args)


def _fuser(args: list[str]) -> bool:
    """``fuser -k -m PATH``: every process using PATH's filesystem; or ExoMonad's files."""
    whole = any(t == "--ismountpoint" or short_cluster(t, "m") for t in args)
    return _kills(args) and (whole or _names_exomonad(args))


#: Per program, whether its arguments end every process or name ExoMonad's (denied).
ENDS_ALL: dict[str, Callable[[list[str]], bool]] = {
    **dict.fromkeys(("killall5", "reboot", "poweroff", "halt", "shutdown"), _every),
    "telinit": _runlevel,
    "init": _runlevel,
    "fuser": _fuser,
    "start-stop-daemon": lambda a: _stops_exomonad("start-stop-daemon", a),
    "systemctl": lambda a: _ctl_verb(a) in _SYSTEMCTL_ENDS_ALL or _stops_exomonad("systemctl", a),
    "loginctl": lambda a: _ctl_verb(a) in _LOGINCTL_ENDS_ALL or _stops_exomonad("loginctl", a),
}
