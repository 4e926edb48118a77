"""Shell commands that signal ExoMonad's own processes (``kill``, ``pkill``, ``killall``...).

Killing the project's server (``exomonad serve``: delivery, gating, the inbox watcher)
or an ``exomonad teammate`` stops the whole team, so the built-in policy refuses it to
every role. Two halves:

- :func:`classify_signal`, a program handler of the classifier: a ``kill`` whose pids
  are a variable or a command substitution, or a ``pkill``/``killall`` whose pattern is,
  becomes :class:`~exomonad.policy.actions.Unknown` (escalated), next to the plain
  :class:`~exomonad.policy.actions.Shell` whose literal targets are still judged. A pid
  that is exactly ``$(pgrep ...)`` or ```pidof ...``` is as precise as that lookup, which
  is judged on its own, so ``kill $(pgrep -f vite)`` stays a plain command.
- :func:`signals_exomonad`, a predicate judged at decision time against the live
  server (``<state>/server.pid``, then ``/proc/<pid>``): ``kill`` of its pid, of ``-1``,
  of its process group or of any pid whose command line says ``exomonad``; ``pkill``/
  ``pgrep`` whose pattern matches its command line (``-f``) or name; ``killall``/
  ``pidof``/``skill`` naming it; and any pattern containing ``exomonad``, server or not.

>>> signals_exomonad(Shell(("pkill", "-f", "exomonad serve")), Context(role="tl"))
True
>>> signals_exomonad(Shell(("kill", "-9", "-1")), Context(role="tl"))
True
>>> signals_exomonad(Shell(("pkill", "vite")), Context(role="tl"))
False
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass

from exomonad.policy.actions import Action, Shell, Unknown
from exomonad.policy.request import Context
from exomonad.policy.shell_lex import ShellSyntaxError, Word
from exomonad.policy.shell_parse import parse
from exomonad.policy.shell_signal_all import ALL_SIGNALLERS, ENDS_ALL, SYSTEM_INITS, owner_signal
from exomonad.uds import server_pid
from exomonad.util.digits import is_number
from exomonad.util.proc import proc_argv, proc_stat

__all__ = ["SIGNALLERS", "classify_signal", "signals_exomonad"]

#: Programs that signal processes chosen by pid, name or pattern (``pgrep``/``pidof``
#: find the pids that ``kill $(pgrep ...)`` and ``pgrep ... | xargs kill`` signal), and
#: those that signal every process or whoever holds a port, a session, a service
#: (:mod:`exomonad.policy.shell_signal_all`).
SIGNALLERS = frozenset({"kill", "pkill", "pgrep", "killall", "pidof", "skill"}) | ALL_SIGNALLERS
#: What every ExoMonad process is called, whatever runs it.
_NAME = "exomonad"
#: Command lines of ExoMonad's processes, matched even when no server runs.
_CANONICAL = ("exomonad serve", "exomonad teammate", "python -m exomonad serve")
_LOOKUPS = frozenset({"pgrep", "pidof"})
_PGREP_WITH_ARG = frozenset("dgGPstuUFq")
_PGREP_LONG_WITH_ARG = frozenset({"--delimiter", "--pgroup", "--group", "--parent", "--session",
                                  "--terminal", "--euid", "--uid", "--pidfile", "--ns",
                                  "--nslist", "--queue", "--signal", "--runstates",
                                  "--cgroup", "--env"})  # fmt: skip
_KILLALL_WITH_ARG = frozenset("ounsyZ")
_KILL_WITH_ARG = frozenset({"-s", "-n", "--signal", "-q", "--queue"})
_SIGNAL_NAMES = (
    "HUP INT QUIT ILL TRAP ABRT IOT BUS FPE KILL USR1 SEGV USR2 PIPE ALRM TERM STKFLT CHLD "
    "CLD CONT STOP TSTP TTIN TTOU URG XCPU XFSZ VTALRM PROF WINCH IO POLL PWR SYS"
)
_SIGNALS = frozenset(_SIGNAL_NAMES.split())


@dataclass(frozen=True, slots=True)
class _Proc:
    """What ``/proc`` says about one process."""

    pid: int
    pgid: int
    comm: str
    argv: tuple[str, ...]

    @property
    def cmdline(self) -> str:
        """The command line as ``pkill -f`` sees it (arguments joined by spaces)."""
        return " ".join(self.argv)

    def names(self) -> tuple[str, ...]:
        """What ``killall``/``pidof`` compare a name with: ``comm``, the program's and
        (for a script run through its ``#!`` interpreter) the script's base name."""
        return (self.comm, *(posixpath.basename(a) for a in self.argv[:2]))


def _proc(pid: int) -> _Proc | None:
    """``/proc/<pid>``'s name, process group and command line; None if it is gone."""
    stat, argv = proc_stat(pid), proc_argv(pid)
    if stat is None or argv is None:
        return None
    return _Proc(pid, stat[3], stat[0], argv)


def _server(ctx: Context) -> _Proc | None:
    """The project's live server (its pid file, then ``/proc``), or None."""
    if ctx.state_dir is None:
        return None
    pid = server_pid(ctx.state_dir)
    return _proc(pid) if pid is not None else None


# --- classification: dynamic targets ------------------------------------------------------


def _lookup(word: Word) -> bool:
    """``word`` is exactly one ``$(pgrep ...)`` / ```pidof ...``` (judged on its own)."""
    if len(word.subs) != 1 or word.text not in (f"$({word.subs[0]})", "`...`"):
        return False
    try:
        commands = parse(word.subs[0], None)
    except ShellSyntaxError:
        return False
    return (
        len(commands) == 1
        and bool(commands[0].argv)
        and posixpath.basename(commands[0].argv[0]) in _LOOKUPS
        and not any(w.dynamic or w.glob for w in commands[0].words)
    )


def classify_signal(name: str, args: list[Word], cwd: str | None) -> list[Action] | None:
    """The classifier's handler for :data:`SIGNALLERS`: None (a plain command, judged by
    :func:`signals_exomonad`) unless a target is computed at run time, or the program
    signals whoever holds a port, a session, a service (``fuser -k``, ``loginctl
    terminate-session``, ``systemctl stop``); then the command (its literal targets are
    judged) and an :class:`Unknown`."""
    dynamic = [
        w.text for w in args if (w.dynamic or w.glob) and not (name == "kill" and _lookup(w))
    ]
    shell = Shell((name, *(w.text for w in args)), cwd)
    if dynamic:
        return [shell, Unknown(f"{name} of processes chosen at run time: {' '.join(dynamic)}")]
    why = owner_signal(name, [w.text for w in args])
    return None if why is None else [shell, Unknown(why)]


# --- decision: the live server ------------------------------------------------------------


def _kill(args: list[str], server: _Proc | None) -> bool:
    """``kill [-s SIG|-SIG] [--] pid|-pgid|%job|name...`` hits an ExoMonad process."""
    i, signal = 0, None
    while i < len(args):
        text = args[i]
        if text == "--":
            i += 1
            break
        if text in ("-l", "-L", "--list", "--table") or text.startswith("--list="):
            return False  # lists signal names
        if text.startswith("--signal="):
            signal, i = text.partition("=")[2], i + 1
        elif text in _KILL_WITH_ARG or text == "--timeout":
            if text in ("-s", "-n", "--signal") and i + 1 < len(args):
                signal = args[i + 1]
            i += 3 if text == "--timeout" else 2
        elif text in ("-a", "--all", "-p", "--pid", "--verbose", "-r", "--require-handler"):
            i += 1
        elif text.startswith("-") and len(text) > 1 and signal is None and i + 1 < len(args):
            signal, i = text[1:], i + 1  # -9, -KILL: a negative number after it is a group
        else:
            break
    if signal is not None and signal.upper().removeprefix("SIG") == "0":
        return False  # signal 0 only asks whether the process exists
    return any(_kill_target(t, server) for t in args[i:])


def _kill_target(text: str, server: _Proc | None) -> bool:
    if text.startswith("%"):
        return False  # a job of the agent's own shell
    try:
        pid = int(text)
    except ValueError:  # util-linux kill takes a process name too
        return _names_match([text], server, regex=False, icase=False)
    if pid == -1:
        return True  # every process the user may signal
    if pid == 0:
        return False  # the agent shell's own process group
    if server is not None and (pid == server.pid or -pid == server.pgid):
        return True
    argv = proc_argv(abs(pid))  # a teammate, another project's server: named by its command line
    return argv is not None and any(_NAME in a for a in argv)


def _options(args: list[str], short_arg: frozenset[str],
             long_arg: frozenset[str]) -> tuple[set[str], list[str]]:  # fmt: skip
    """``pkill``/``killall``-style options: the options given (not their values) and the
    operands; ``-9``, ``-KILL``, ``-SIGTERM`` are signals, not options."""
    flags: set[str] = set()
    operands: list[str] = []
    i = 0
    while i < len(args):
        text = args[i]
        i += 1
        if text == "--":
            operands += args[i:]
            break
        if not text.startswith("-") or text == "-":
            operands.append(text)
        elif text.startswith("--"):
            key = text.partition("=")[0]
            if key in long_arg and "=" not in text:
                i += 1
            if key not in ("--signal", "--delimiter", "--queue"):
                flags.add(key)
        elif is_number(text[1:]) or text[1:].upper().removeprefix("SIG") in _SIGNALS:
            continue  # -9, -KILL, -SIGTERM
        else:
            for j, char in enumerate(text[1:], 1):
                if char in short_arg:
                    i += 0 if text[j + 1 :] else 1
                    flags.add("-" + char)
                    break
                flags.add("-" + char)
    return flags, operands


def _regex_hits(patterns: list[str], candidates: list[str], icase: bool, exact: bool) -> bool:
    for pattern in patterns:
        try:
            regex = re.compile(pattern, re.IGNORECASE if icase else 0)
        except (re.error, OverflowError, RecursionError):
            return True  # Python cannot read it: assume it matches (fail closed)
        find = regex.fullmatch if exact else regex.search
        if any(find(c) for c in candidates):
            return True
    return False


def _names_match(names: list[str], server: _Proc | None, regex: bool, icase: bool) -> bool:
    """A ``killall``/``pidof`` name (or ``-r`` regex) that selects an ExoMonad process."""
    candidates = [_NAME, *(server.names() if server is not None else ())]
    if any(_NAME in n.lower() for n in names):
        return True
    if regex:
        return _regex_hits(names, candidates, icase, exact=False)
    fold = str.lower if icase else str
    wanted = {fold(c) for c in candidates}
    return any(fold(n) in wanted or fold(n[:15]) in wanted for n in names)


def _pkill(args: list[str], server: _Proc | None) -> bool:
    """``pkill``/``pgrep [-f] [-x] [-i] PATTERN``: the pattern as a regex against the
    server's name (``-f``: command line) and ExoMonad's usual ones."""
    flags, patterns = _options(args, _PGREP_WITH_ARG, _PGREP_LONG_WITH_ARG)
    if not patterns or flags & {"-v", "--inverse"}:
        return True  # selected by user, parent, session... or by what does not match
    if any(_NAME in p.lower() for p in patterns):
        return True
    full = bool(flags & {"-f", "--full"})
    candidates = list(_CANONICAL) if full else [_NAME]
    if server is not None:
        candidates.append(server.cmdline if full else server.comm)
    icase = bool(flags & {"-i", "--ignore-case"})
    return _regex_hits(patterns, candidates, icase, exact=bool(flags & {"-x", "--exact"}))


def _killall(args: list[str], server: _Proc | None) -> bool:
    """``killall``/``pidof [-r] [-I] NAME...``: names compared with the server's."""
    flags, names = _options(args, _KILLALL_WITH_ARG, frozenset())
    if not names:
        return True  # killall -u USER: every process of that user
    regex = bool(flags & {"-r", "--regexp"})
    return _names_match(names, server, regex, icase=bool(flags & {"-I", "--ignore-case"}))


def _skill(args: list[str], server: _Proc | None) -> bool:
    """``skill [-SIG] [-c CMD] [-p PID] [-u USER] [-t TTY] [WORD...]``."""
    flags, words = _options(args, frozenset(), frozenset())
    if flags & {"-u", "-t", "--user", "--tty"} or not words:
        return True
    return any(_kill_target(w, server) for w in words) or _names_match(words, server, False,
                                                                        False)  # fmt: skip


def _pidof(args: list[str], server: _Proc | None) -> bool:
    """``pidof [-s] [-x] [-o PID] NAME...``."""
    return _names_match(_options(args, frozenset("o"), frozenset())[1] or [_NAME], server,
                        regex=False, icase=False)  # fmt: skip


def _without_server(
    judge: Callable[[list[str]], bool],
) -> Callable[[list[str], _Proc | None], bool]:
    """A judge of :mod:`~exomonad.policy.shell_signal_all` (it needs no server)."""

    def judged(args: list[str], server: _Proc | None) -> bool:
        del server
        return judge(args)

    return judged


_JUDGES: dict[str, Callable[[list[str], _Proc | None], bool]] = {
    "kill": _kill, "pkill": _pkill, "pgrep": _pkill, "killall": _killall, "pidof": _pidof,
    "skill": _skill, **{name: _without_server(judge) for name, judge in ENDS_ALL.items()},
}  # fmt: skip


def signals_exomonad(action: Shell, ctx: Context) -> bool:
    """The command signals (or looks up the pids of) the project's live server, an
    ``exomonad`` process or every process of the user. Reads the server's pid file and
    ``/proc`` only for the programs in :data:`SIGNALLERS`."""
    argv = action.argv
    start = 0
    if action.privileged:  # sudo [opts] kill ...: the wrapper leads argv
        start = next((i for i, w in enumerate(argv) if posixpath.basename(w) in _JUDGES), -1)
        if start < 0:
            return False
    name = posixpath.basename(argv[start]) if argv else ""
    judge = _JUDGES.get(name)
    if judge is None or (name == "init" and argv[start] not in SYSTEM_INITS):
        return False  # a project's own ./init is its script
    return judge(list(argv[start + 1 :]), _server(ctx))
