"""Turn a shell command line into typed actions.

Wrappers are seen through (``sudo``, ``env``, ``time``, ``nohup``, ``nice``, ``timeout``,
``command``, ``exec``, ``xargs``, ``watch``, ``uv run``...), absolute program paths are
reduced to their name, and ``sh -c``/``bash -c``/``eval`` strings and here-documents fed
to a shell are parsed recursively. What cannot be seen through (a program name that is a
variable, a script piped into ``sh``, ``eval "$X"``) becomes
:class:`~exomonad.policy.actions.Unknown`.

>>> classify_shell("cd repo && sudo FOO=1 /usr/bin/git push -f origin main", "/w")
[Shell(argv=('sudo', 'FOO=1', '/usr/bin/git', 'push', '-f', 'origin', 'main'), \
cwd='/w/repo', privileged=True), GitPush(remote='origin', branch='main', force=True, \
lease=False, repo='/w/repo')]
>>> classify_shell('echo "git push -f origin main"', "/w")
[Shell(argv=('echo', 'git push -f origin main'), cwd='/w', privileged=False)]
"""

from __future__ import annotations

import posixpath

from exomonad.policy.actions import Action, DeleteFile, Shell, Unknown
from exomonad.policy.shell_env import ShellEnv
from exomonad.policy.shell_lex import ShellSyntaxError, Word
from exomonad.policy.shell_parse import SimpleCommand, is_assignment, parse, resolve_path
from exomonad.policy.shell_tools import handle, redirect_target
from exomonad.policy.vcs import gh, git

__all__ = ["SHELLS", "classify_shell"]

#: Programs whose ``-c STRING`` (or stdin) is a shell script.
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "mksh", "yash"})
_GIT_REPO_VARS = ("GIT_DIR=", "GIT_WORK_TREE=", "GIT_INDEX_FILE=")
_PLAIN_WRAPPERS = frozenset({"time", "nohup", "setsid", "chronic", "unbuffer", "caffeinate",
                             "builtin", "noglob", "nocorrect", "catchsegv"})
_WITH_ARG: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user",
                       "--group", "--chdir", "--host", "--prompt", "--role", "--type",
                       "--other-user", "--close-from", "--command-timeout"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "exec": frozenset({"-a"}),
    "command": frozenset(),
    "xargs": frozenset({"-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "-n",
                        "--max-args", "-P", "--max-procs", "-s", "--max-chars",
                        "--process-slot-var", "--replace"}),
    "watch": frozenset({"-n", "--interval", "-d", "--differences", "-q", "--equexit"}),
    "flock": frozenset({"-w", "--timeout", "-E", "--conflict-exit-code", "-c", "--command"}),
    "run": frozenset({"--with", "--python", "-p", "--project", "--directory", "--package",
                      "--extra", "--group", "--env-file", "--index", "-w", "--from"}),
}


def classify_shell(src: str, cwd: str | None, env: ShellEnv | None = None,
                   depth: int = 0) -> list[Action]:
    """Every action ``src`` may perform when run in ``cwd`` (in execution order)."""
    env = env if env is not None else ShellEnv(start_cwd=cwd)
    try:
        commands = parse(src, cwd, depth)
    except ShellSyntaxError:
        return [Unknown(src)]
    out: list[Action] = []
    for cmd in commands:
        for redir in cmd.redirs:
            action = redirect_target(redir.op, redir.target, cmd.cwd)
            if action is not None:
                out.append(action)
        words = list(cmd.command_words)
        prefix = cmd.words[: len(cmd.words) - len(words)]
        if any(w.text.startswith(_GIT_REPO_VARS) for w in prefix) or (
                words and words[0].text in ("export", "declare", "typeset") and
                any(w.text.startswith(_GIT_REPO_VARS) for w in words[1:])):
            env.branch_moved = True  # git now works on another repository
        if words:
            out.extend(_argv(words, cmd, cmd.cwd, env, depth))
    return out


def _skip_options(args: list[Word], with_arg: frozenset[str]) -> tuple[int, dict[str, Word]]:
    """Index of the first operand after leading options, and the options' values."""
    i, values = 0, dict[str, Word]()
    while i < len(args):
        text = args[i].text
        if text == "--":
            return i + 1, values
        if not text.startswith("-") or text == "-":
            break
        key = text.split("=", 1)[0]
        if key in with_arg and "=" not in text and i + 1 < len(args):
            values[key] = args[i + 1]
            i += 2
            continue
        if key in with_arg:
            values[key] = Word(text.split("=", 1)[1], args[i].dynamic)
        elif len(text) > 2 and text[:2] in with_arg and not text.startswith("--"):
            values[text[:2]] = Word(text[2:], args[i].dynamic)
        else:
            values[key] = Word("")
        i += 1
    return i, values


def _argv(words: list[Word], cmd: SimpleCommand, cwd: str | None, env: ShellEnv,
          depth: int, privileged: bool = False) -> list[Action]:
    full = tuple(w.text for w in words)
    if words[0].dynamic:
        return [Unknown(" ".join(full))]
    name = posixpath.basename(words[0].text)
    args = words[1:]
    wrapper = name if name in _WITH_ARG or name in _PLAIN_WRAPPERS else None
    if name in ("uv", "poetry", "pipenv", "pdm", "rye") and args and args[0].text == "run":
        wrapper, args = "run", args[1:]
    if wrapper is not None and wrapper != "watch":
        start, opts = _skip_options(args, _WITH_ARG.get(wrapper, frozenset()))
        rest = args[start:]
        if wrapper == "command" and ("-v" in opts or "-V" in opts):
            return [Shell(full, cwd, privileged)]
        if wrapper in ("env", "sudo", "doas"):
            while rest and is_assignment(rest[0]):
                rest = rest[1:]
        if wrapper == "env":
            split = opts.get("-S") or opts.get("--split-string")
            if split is not None:
                return _nested(split, rest, cwd, env, depth, full)
        if wrapper == "timeout" and rest:
            rest = rest[1:]  # the duration
        if wrapper == "flock":
            script = opts.get("-c") or opts.get("--command")
            if script is not None:
                return _nested(script, [], cwd, env, depth, full)
            rest = rest[1:]  # the lock file
        chdir = opts.get("-C") or opts.get("--chdir") or opts.get("-D")
        if chdir is not None and wrapper in ("env", "sudo", "doas"):
            cwd = resolve_path(cwd, chdir)
        if wrapper == "xargs" and rest:
            rest = _xargs_input(rest, opts.get("-I") or opts.get("--replace"))
        elevated = privileged or wrapper in ("sudo", "doas")
        inner = _argv(rest, cmd, cwd, env, depth, elevated) if rest else []
        if wrapper in ("sudo", "doas"):
            return [Shell(full, cwd, True), *(a for a in inner if not isinstance(a, Shell))]
        return inner or [Shell(full, cwd, privileged)]
    if name == "watch":
        start, opts = _skip_options(args, _WITH_ARG["watch"])
        rest = args[start:]
        if "-x" in opts or "--exec" in opts:
            return _argv(rest, cmd, cwd, env, depth, privileged) if rest else []
        return _nested(Word(" ".join(w.text for w in rest), any(w.dynamic for w in rest)),
                       [], cwd, env, depth, full)
    if name == "su":
        start, opts = _skip_options(args, frozenset({"-c", "--command", "-s", "--shell"}))
        script = opts.get("-c") or opts.get("--command")
        inner = _nested(script, [], cwd, env, depth, full) if script is not None else []
        return [Shell(full, cwd, True), *(a for a in inner if not isinstance(a, Shell))]
    if name in SHELLS:
        return _shell(name, args, cmd, cwd, env, depth, full)
    if name == "eval":
        joined = Word(" ".join(w.text for w in args), any(w.dynamic for w in args))
        return _nested(joined, [], cwd, env, depth, full)
    if name == "git":
        return git(args, cwd, env)
    if name == "gh":
        return gh(args, cwd, env)
    if name == "find":
        return _find(args, cmd, cwd, env, depth, full, privileged)
    handled = handle(name, args, cwd)
    return handled if handled is not None else [Shell(full, cwd, privileged)]


def _nested(script: Word, extra: list[Word], cwd: str | None, env: ShellEnv, depth: int,
            full: tuple[str, ...]) -> list[Action]:
    """Classify a script given as one word (``sh -c``, ``eval``, ``env -S``)."""
    if script.dynamic:
        return [Unknown(" ".join(full))]
    text = " ".join([script.text, *(w.text for w in extra)])
    return classify_shell(text, cwd, env, depth + 1)


def _xargs_input(rest: list[Word], replace: Word | None) -> list[Word]:
    """The command xargs runs: its input lands in the replace string or at the end."""
    if replace is not None:
        token = replace.text or "{}"
        return [Word(w.text, True, w.quoted) if token in w.text else w for w in rest]
    return [*rest, Word("<xargs input>", dynamic=True)]


def _shell(name: str, args: list[Word], cmd: SimpleCommand, cwd: str | None, env: ShellEnv,
           depth: int, full: tuple[str, ...]) -> list[Action]:
    i, has_c = 0, False
    while i < len(args):
        text = args[i].text
        if text == "--":
            i += 1
            break
        if not text.startswith(("-", "+")) or text in ("-", "+"):
            break
        if text in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        has_c = has_c or (not text.startswith("--") and "c" in text[1:]) or text == "--command"
        i += 1
    operands = args[i:]
    if has_c:
        if not operands:
            return [Unknown(" ".join(full))]
        return _nested(operands[0], [], cwd, env, depth, full)
    if operands:
        return [Shell(full, cwd)]  # runs a script file
    if cmd.stdin_script is not None:
        return classify_shell(cmd.stdin_script, cwd, env, depth + 1)
    if cmd.piped_in:
        return [Unknown(f"script piped into {name}: {' '.join(full)}")]
    return [Shell(full, cwd)]


def _find(args: list[Word], cmd: SimpleCommand, cwd: str | None, env: ShellEnv, depth: int,
          full: tuple[str, ...], privileged: bool) -> list[Action]:
    start = 0
    while start < len(args) and not args[start].text.startswith(("-", "(", "!")):
        start += 1
    roots = [resolve_path(cwd, w) for w in args[:start]] or [cwd]
    out: list[Action] = []
    i = start
    while i < len(args):
        text = args[i].text
        if text == "-delete":
            out += [DeleteFile(root, recursive=True) for root in roots]
        elif text in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and args[j].text not in (";", "+"):
                j += 1
            inner = [Word(w.text, True, w.quoted) if "{}" in w.text else w
                     for w in args[i + 1 : j]]
            if inner:
                out += _argv(inner, cmd, cwd, env, depth, privileged)
            i = j
        i += 1
    return out or [Shell(full, cwd, privileged)]
