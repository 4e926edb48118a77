"""Commands that take a process out of the agent's process tree or environment.

The server tells an agent's request from a person's by the process that makes it: its
ancestors (an agent's program above it) and its environment (``EXOMONAD_TOKEN`` and the
agents' own markers, see :mod:`exomonad.ancestry`). A process started to outlive the
agent's command (``setsid``, ``nohup``, ``&``) is reparented away from the agent but
keeps its environment, so its markers still tell it apart: that alone is ordinary
(``npm run dev &``). One started without the agent's variables (``env -i``, ``env -u
EXOMONAD_TOKEN``), or handed to a long-lived process that starts it in an environment
of its own (``at``, ``crontab``, the service manager, a tmux server), carries no
marker and, reparented, passes for a person's (git's pre-push gate, the dashboard's
approvals). The classifier reports those as :class:`~exomonad.policy.actions.Unknown`,
so the cascade escalates them; the command is still classified after that (a push in
it is shown too).

What is not a shell command (interpreter code calling ``os.setsid()``, a double fork in a
script) is not read: ``docs/guarantees.md``, "a hostile program of the same Unix user".

>>> from exomonad.policy.shell_lex import Word
>>> detaches("crontab", [Word("-")], ("crontab", "-"))
"leaves the agent's process tree: crontab -"
>>> detaches("crontab", [Word("-l")], ("crontab", "-l")) is None
True
>>> unsets("unset", [Word("EXOMONAD_TOKEN")])
'EXOMONAD_TOKEN'
"""

from __future__ import annotations

from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_parse import is_assignment
from exomonad.policy.shell_variables import agent_var, code_var
from exomonad.policy.shell_wrap import Unwrapped, word_set

__all__ = [
    "AGENT_CLIS",
    "AGENT_PACKAGES",
    "DECLARERS",
    "DETACHERS",
    "detaches",
    "nested_agent",
    "unsets",
    "wrapper_escape",
]

#: Builtins that declare (and with ``-n``/``+x`` un-export) variables.
DECLARERS = frozenset({"export", "declare", "typeset", "local", "readonly"})
#: Programs that hand a command to a long-lived process that starts it in an
#: environment of its own (a scheduler, the service manager or its bus, a terminal
#: multiplexer's server, a process manager) or may (the daemonizers): without the
#: agent's markers, reparented away from it, it would pass for a person's. And
#: ``coproc``, whose command is not read here.
DETACHERS = word_set(
    "coproc daemonize daemon start-stop-daemon at batch crontab systemd-run "
    "systemctl dbus-send busctl gdbus dbus-launch launchctl tmux screen byobu zellij "
    "dtach abduco kitty kitten wezterm emacsclient nq tsp pueue pm2 forever"
)
#: ``systemctl`` verbs that start something or change what a later start runs.
_SYSTEMCTL_STARTS = word_set(
    "start restart try-restart reload-or-restart try-reload-or-restart force-reload "
    "condrestart reload enable reenable link edit revert preset preset-all "
    "set-property set-environment import-environment unset-environment isolate "
    "default rescue emergency daemon-reload daemon-reexec switch-root kexec soft-reboot"
)
_LEAVES = "leaves the agent's process tree: "
#: Coding agents' CLIs and their npm packages: what one does is its own tool calls, which
#: no hook of the agent that started it sees (often with its approvals turned off).
AGENT_CLIS = word_set("claude codex gemini aider opencode cursor-agent goose qwen crush amp")
AGENT_PACKAGES = frozenset(
    {"@openai/codex", "@google/gemini-cli", "@anthropic-ai/claude-code", "opencode-ai",
     "@qwen-code/qwen-code", "@sourcegraph/amp", "@charmland/crush"}
)  # fmt: skip
#: Arguments that only ask an agent's CLI about itself.
_ONLY_ASKS = frozenset({"--version", "-v", "-V", "--help", "-h"})
_NESTED = "starts another coding agent, whose own tool calls ExoMonad does not see: "


def nested_agent(name: str, args: list[Word], full: tuple[str, ...]) -> str | None:
    """Why ``name args`` starts another coding agent (its CLI, or its npm package through
    ``npx``, ``bunx``, ``npm exec``, ``pnpm dlx``, ``yarn dlx``), or None. Asking one its
    version or help is not starting it."""
    texts = [w.text for w in args]
    if name in AGENT_CLIS:
        return None if texts and set(texts) <= _ONLY_ASKS else _NESTED + " ".join(full)
    if name in ("npx", "bunx", "pnpx") or (
        name in ("npm", "pnpm", "yarn") and texts[:1] in (["exec"], ["dlx"], ["x"])
    ):
        for text in texts:
            package = text[: text.rindex("@")] if "@" in text[1:] else text  # no @version
            if package in AGENT_PACKAGES or package in AGENT_CLIS:
                return _NESTED + " ".join(full)
    return None


def detaches(name: str, args: list[Word], full: tuple[str, ...]) -> str | None:
    """Why program ``name`` (not a wrapper) with ``args`` leaves the agent's process tree,
    or None. ``crontab -l`` (listing) and ``systemctl`` verbs that start nothing
    (``status``, ``show``...) stay plain."""
    if name not in DETACHERS:
        return None
    texts = [w.text for w in args]
    if any(w.dynamic or w.glob for w in args):
        return _LEAVES + " ".join(full)
    if name == "crontab":
        if "-u" in texts[:-1]:
            at = texts.index("-u")
            texts = texts[:at] + texts[at + 2 :]
        return None if texts == ["-l"] else _LEAVES + " ".join(full)
    if name == "systemctl" and not _SYSTEMCTL_STARTS.intersection(texts):
        return None
    return _LEAVES + " ".join(full)


def wrapper_escape(name: str, got: Unwrapped, full: tuple[str, ...]) -> str | None:
    """Why wrapper ``name`` (read as ``got``) takes its command out of the agent's
    environment (``env -i``, ``exec -c``), or None. ``setsid`` and ``nohup`` keep it:
    what they start carries the agent's markers wherever it is reparented."""
    del name
    if got.clears_env:
        return "clears the agent's environment: " + " ".join(full)
    return None


def unsets(name: str, args: list[Word]) -> str | None:
    """The variable ``unset``, ``export -n``, ``declare +x``... (or ``env -u``) takes
    away, or None: code variables (taking ``GIT_CONFIG_PARAMETERS`` away turns off
    ExoMonad's git gate for the commands that follow) and an agent's markers
    (``EXOMONAD_TOKEN``...: without them a detached process passes for a person's).

    >>> unsets("unset", [Word("GIT_CONFIG_PARAMETERS")])
    'GIT_CONFIG_PARAMETERS'
    >>> unsets("env", [Word("-uGIT_CONFIG_PARAMETERS"), Word("git")])
    '-uGIT_CONFIG_PARAMETERS'
    >>> unsets("unset", [Word("TMPDIR")]) is None, unsets("unset", [Word("CLAUDECODE[0]")])
    (True, 'CLAUDECODE[0]')
    """
    if name not in ("unset", "env", *DECLARERS):
        return None
    if name == "env":  # its options and their values, up to the command
        head = 0
        while head < len(args) and (args[head].text.startswith("-") or
                                    is_assignment(args[head])):  # fmt: skip
            head += (
                2
                if args[head].text in ("-u", "-C", "-S")
                or (args[head].text.startswith("--") and "=" not in args[head].text)
                else 1
            )
        args = args[:head]
    for word in args:
        if word.dynamic and name == "unset":
            return word.text  # `unset "${!GIT_@}"`: which names is not known
        text = word.text.lstrip("-+")
        for each in (text, text[1:], text.partition("=")[0], text.partition("=")[2]):
            var = each.split("[", 1)[0]  # unset 'GIT_CONFIG_PARAMETERS[0]' unsets the scalar
            if code_var(var) or agent_var(var):
                return word.text
    return None
