"""Turn a shell command line into typed actions.

Wrappers are seen through (``sudo``, ``env``, ``time``, ``nohup``, ``nice``, ``timeout``,
``command``, ``exec``, ``xargs``, ``watch``, ``uv run``...), absolute program paths are
reduced to their name, and ``sh -c``/``bash -c``/``eval`` strings and here-documents fed
to a shell are parsed recursively. What cannot be seen through (a program name that is a
variable, a script piped into ``sh``, ``eval "$X"``) becomes
:class:`~exomonad.policy.actions.Unknown`. So does a command that takes a process out of
the agent's process tree or environment (``setsid``, ``nohup``, ``&``, ``env -i``,
``at``...: :mod:`exomonad.policy.shell_escape`), with what it runs classified after it.

>>> classify_shell("cd repo && sudo FOO=1 /usr/bin/git push -f origin main", "/w")
[Shell(argv=('sudo', 'FOO=1', '/usr/bin/git', 'push', '-f', 'origin', 'main'), \
cwd='/w/repo', privileged=True, stdin=None), \
GitPush(remote='origin', branch='main', force=True, lease=False, repo='/w/repo')]
>>> classify_shell('echo "git push -f origin main"', "/w")
[Shell(argv=('echo', 'git push -f origin main'), cwd='/w', privileged=False, stdin=None)]
"""

from __future__ import annotations

import functools
import posixpath

from exomonad.policy.actions import Action, DeleteFile, ReadFile, Shell, Unknown, WriteFile
from exomonad.policy.patch import apply_patch_args, shell_patch_actions
from exomonad.policy.shell_arith import arithmetic_sets
from exomonad.policy.shell_dialect import each_reading
from exomonad.policy.shell_editors import editor_script
from exomonad.policy.shell_env import ShellEnv
from exomonad.policy.shell_escape import (
    DECLARERS,
    detaches,
    nested_agent,
    unsets,
    wrapper_escape,
)
from exomonad.policy.shell_evaluated import evaluated
from exomonad.policy.shell_files import run_file
from exomonad.policy.shell_find import delete_names, find_reads
from exomonad.policy.shell_gh import gh
from exomonad.policy.shell_hub import hub
from exomonad.policy.shell_lex import ShellSyntaxError, Word
from exomonad.policy.shell_links import behind_new_links, beside_links, note_writes
from exomonad.policy.shell_names import line_reads, loop_words, note_reader
from exomonad.policy.shell_network import HTTP_CLIENTS, configured_client, note_client_settings
from exomonad.policy.shell_parse import SimpleCommand, is_assignment, parse_tracking
from exomonad.policy.shell_paths import resolve_path, unfollowable
from exomonad.policy.shell_reads import tree_root
from exomonad.policy.shell_runners import project_run
from exomonad.policy.shell_secrets import (
    attached_process,
    credential_words,
    printed_credential,
)
from exomonad.policy.shell_setvars import sets_at_run_time
from exomonad.policy.shell_shells import nested, run_shell, runner, source, stdin_file
from exomonad.policy.shell_stdin import SHELLS, note_exec, stdin_as_words
from exomonad.policy.shell_stdin_data import program_on_unseen_stdin
from exomonad.policy.shell_tools import handle, modelled, redirect_target
from exomonad.policy.shell_variables import risky_assignment, written_by
from exomonad.policy.shell_where import points_outside, runs, scratch
from exomonad.policy.shell_wrap import (
    OPAQUE_RUNNERS,
    PRIV_WITH_ARG,
    WRAPPERS,
    skip_options,
    unwrap,
)
from exomonad.policy.state_built import mentions_state
from exomonad.policy.state_reads import expands_state_var
from exomonad.policy.vcs import git

__all__ = ["SHELLS", "classify_shell"]

_GIT_REPO_VARS = ("GIT_DIR=", "GIT_WORK_TREE=", "GIT_INDEX_FILE=", "GIT_COMMON_DIR=")


def classify_shell(
    src: str, cwd: str | None, env: ShellEnv | None = None, depth: int = 0
) -> list[Action]:
    """Every action ``src`` may perform when run in ``cwd`` (in execution order), as
    bash reads it and, where dash may read it otherwise, as dash does too
    (:func:`~.shell_dialect.each_reading`)."""
    env = env if env is not None else ShellEnv(start_cwd=cwd)
    return each_reading(src, depth, lambda: _classify(src, cwd, env, depth))


def _classify(src: str, cwd: str | None, env: ShellEnv, depth: int) -> list[Action]:
    """:func:`classify_shell` for one reading of ``src``."""
    try:
        commands, env.cdpath, moves = parse_tracking(src, cwd, depth, env.cdpath, env.worktree)
        env.moves = env.moves or moves
    except ShellSyntaxError:
        return [Unknown(src)]
    # text bash evaluates again when it runs (``test -v 'a[$(cmd)]'``)
    out: list[Action] = [*note_client_settings(commands, env), *evaluated(commands, src),
                         *arithmetic_sets(commands, src)]  # fmt: skip
    outer, env.made_name_read = env.made_name_read, None
    beside = beside_links(commands)
    for index, cmd in enumerate(commands):
        start = len(out)
        for redir in cmd.redirs:
            action = redirect_target(redir.op, redir.target, cmd.cwd)
            if action is not None:
                out.append(action)
            if isinstance(action, WriteFile) and (
                action.path is None or "/.git/" in action.path + "/"
            ):
                env.branch_moved = True  # a write into a .git: HEAD may differ
        words = list(cmd.command_words)
        prefix = cmd.words[: len(cmd.words) - len(words)]
        declared = words[1:] if words and words[0].text in DECLARERS else []
        for w in (*prefix, *declared):
            if w.text.startswith(_GIT_REPO_VARS):  # git now works on another repository,
                env.branch_moved = True  # which it may write (GIT_DIR=remote.git git ...)
                value = w.text.split("=", 1)[1]
                out.append(WriteFile(resolve_path(cmd.cwd, Word(value, w.dynamic, w.quoted))))
            written = written_by(w)  # GIT_TRACE=/path: git appends its trace to the file
            if written is not None and is_assignment(w):
                out.append(WriteFile(tree_root(cmd.cwd, written)))
        risky = [w.text for w in (*prefix, *declared) if is_assignment(w) and risky_assignment(w)]
        if risky:
            out.append(Unknown("sets " + " ".join(risky)))
        own = [w for w in (*prefix, *declared) if not w.text.startswith(_GIT_REPO_VARS)]
        pointed = points_outside([w for w in own if not written_by(w)], cmd.cwd, env.worktree)
        if pointed is not None:
            out.append(pointed)
        # printf -v GIT_DIR ..., read, ${X:=}, BASH_CMDS named anywhere
        set_later = sets_at_run_time(list(cmd.words), cmd.redirs)
        if set_later is not None:
            out.append(set_later)
        note_exec(words, cmd, env)
        name = posixpath.basename(words[0].text) if words else None
        if words:
            out.extend(_argv(words, cmd, cmd.cwd, env, depth))
        # A here-string is one more word unless only data reads it (a compound command's,
        # with no words, reaches every command inside: ``while read f ...; done <<< X``)
        out.extend(stdin_as_words(cmd, name, cmd.cwd, env.stdout_redirected, env.links_made))
        named = [*cmd.words, *(r.target for r in cmd.redirs if r.target.dynamic or r.op == "<<<")]
        out.extend(_unfollowable(cmd))
        out.extend(r for r in credential_words(named, words[0].text if words else None)
                   if r not in out[start:])  # fmt: skip
        # A path a redirection takes only at run time, and any word that expands the
        # state dir's variable whatever program reads it: judged by their words, as a
        # command's arguments are (``cat <"$EXOMONAD_DIR/lead.token"`` was allowed;
        # ``curl --unix-socket $EXOMONAD_DIR/server.sock`` was asked, not refused).
        at_run_time = tuple(f"{r.op}{r.target.text}" for r in cmd.redirs if r.target.dynamic)
        at_run_time += tuple(w.text for w in cmd.words if expands_state_var(w.text)
                             or (w in prefix and mentions_state(w.text)))  # fmt: skip
        if at_run_time:
            out.append(Shell(at_run_time, cmd.cwd))
        if env.links_made or index in beside:
            out[start:] = behind_new_links(out[start:], env.worktree)
        note_writes(words, out[start:], env, cmd.cwd)  # links, a .git or HEAD made for what follows
        env.commands_seen += _judged_everywhere(commands, index)
    # cat "$f", read x < "$f": what the line (or one in it) may have made $f
    return [*out, *(a for a in line_reads(commands, env, outer) if a not in out)]


def _judged_everywhere(commands: list[SimpleCommand], index: int) -> int:
    """1 when ``commands[index]`` is the last of one command judged in each directory it
    may start in (the next is not its ``alternative``), else 0: it is then seen."""
    return int(index + 1 == len(commands) or not commands[index + 1].alternative)


def _unfollowable(cmd: SimpleCommand) -> list[Action]:
    """A path of ``cmd`` whose links cannot be followed (a loop, more than 40 links) is
    unknown, and judged by its words too (one naming the state is refused, not asked)."""
    lost = unfollowable(cmd.cwd, [*cmd.words, *(r.target for r in cmd.redirs)])
    found: list[Action] = [Unknown(f"{t[:80]}: its links cannot be followed") for t in lost]
    return [*found, Shell(tuple(lost), cmd.cwd)] if lost else []


def _argv(
    words: list[Word],
    cmd: SimpleCommand,
    cwd: str | None,
    env: ShellEnv,
    depth: int,
    privileged: bool = False,
) -> list[Action]:
    """What running ``words`` does, beside the read of a file a shell or interpreter
    runs (:func:`~.shell_files.run_file`); an editor given commands on stdin runs them
    (:mod:`.shell_editors`)."""
    done = _command(words, cmd, cwd, env, depth, privileged)
    if words[0].dynamic:
        return done
    name, args = posixpath.basename(words[0].text), words[1:]
    ran = run_file(name, args, cwd)  # python3 x: x read
    if program_on_unseen_stdin(cmd, name, env.stdin_redirected, env.links_made):
        ran.append(Unknown(f"{name} runs the program it reads on stdin"))
    return [*ran, *editor_script(cmd, name, args, env.stdin_redirected), *done]


def _command(
    words: list[Word],
    cmd: SimpleCommand,
    cwd: str | None,
    env: ShellEnv,
    depth: int,
    privileged: bool = False,
) -> list[Action]:
    full = tuple(w.text for w in words)
    if words[0].dynamic or (words[0].glob and words[0].text not in ("[", "[[")):
        return [Unknown(" ".join(full))]
    name = posixpath.basename(words[0].text)
    args = words[1:]
    note_reader(name, args, cwd, env, full)  # cat "$f", xargs cat, zip -@
    if words[0].text in ("for", "select") and not words[0].quoted:
        return loop_words(args[2:], full, cwd)
    dropped = unsets(name, args)
    if dropped:  # here, so a wrapper (`exec`, `builtin`, `timeout`...) cannot hide it
        return [Unknown("unsets " + dropped)]
    if name in ("env", "sudo", "doas") and any(
        is_assignment(w)
        and (risky_assignment(w) or w.text.startswith(_GIT_REPO_VARS) or written_by(w))
        for w in args
    ):  # env GIT_WORK_TREE=../.. git checkout: another repository, written
        return [Unknown(" ".join(full))]
    pointed: list[Action] = []
    if name in ("env", "sudo", "doas"):  # env TMPDIR=../.. mktemp
        pointed = [a for a in [points_outside(args, cwd, env.worktree)] if a is not None]
    left = detaches(name, args, full) or nested_agent(name, args, full)
    if left is not None:
        return [Unknown(left)]
    ran = project_run(name, args, cwd)  # uv run, poetry run...: the command, where it runs
    if ran is not None:
        judge = functools.partial(_argv, cmd=cmd, env=env, depth=depth, privileged=privileged)
        return ran.actions(full, cwd, env.worktree, privileged, lambda w, at: judge(w, cwd=at))
    if name in WRAPPERS:
        return [*pointed, *_wrapper(name, args, full, cmd, cwd, env, depth, privileged)]
    if name in PRIV_WITH_ARG:
        start, opts = skip_options(args, PRIV_WITH_ARG[name])
        rest = args[start:]
        while rest and is_assignment(rest[0]):
            rest = rest[1:]
        chdir = opts.get("-C") or opts.get("--chdir") or opts.get("-D")
        if chdir is not None:
            cwd = resolve_path(cwd, chdir)
        inner = _argv(rest, cmd, cwd, env, depth, True) if rest else []
        wrapped = Shell(full, cwd, True, stdin_file(cmd))
        return [wrapped, *pointed, *(a for a in inner if not isinstance(a, Shell))]
    if name == "su":
        start, sopts = skip_options(args, frozenset({"-c", "--command", "-s", "--shell"}))
        script = sopts.get("-c") or sopts.get("--command")
        inner = (
            nested(script, [], cwd, env, depth, full, classify_shell) if script is not None else []
        )
        wrapped = Shell(full, cwd, True, stdin_file(cmd))
        return [wrapped, *(a for a in inner if not isinstance(a, Shell))]
    printed = printed_credential(name, args) or attached_process(name, args)
    if printed is not None:  # gh auth token, gpg --export-secret-keys, strace -p PID...
        return [*printed, Shell(full, cwd)]
    if name in OPAQUE_RUNNERS:
        return [Unknown(" ".join(full))]
    if name in SHELLS:
        return run_shell(name, args, cmd, cwd, env, depth, full, classify_shell)
    if name in ("source", "."):
        return source(args, cmd, cwd, env, depth, full, classify_shell)
    if name == "eval":
        joined = Word(" ".join(w.text for w in args), any(w.dynamic or w.glob for w in args))
        return nested(joined, [], cwd, env, depth, full, classify_shell)
    if name in ("trap", "script", "hash", "make", "gmake", "npx", "npm", "pnpm", "bunx", "yarn"):
        return runner(name, args, cwd, env, depth, full, privileged, classify_shell)
    if name == "git" or name.startswith("git-"):
        judged = git(args if name == "git" else [Word(name[4:]), *args], cwd, env)
        # ``HOME=.``: git reads ``./.gitconfig``, whose ``url.X.insteadOf`` sends a push
        # to the configured remote's name elsewhere (found probing: ``HOME=. git push
        # origin exo/w1`` reached another host), as ``GIT_CONFIG_GLOBAL=`` would
        return [configured_client("git", full), *judged] if env.client_config else judged
    if name == "gh":
        return gh(args, cwd, env.worktree)
    if name == "hub":
        return hub(args, cwd, env)
    if name == "find":
        return _find(args, cmd, cwd, env, depth, full, privileged)
    patch_args = apply_patch_args(name, args)
    if patch_args is not None:  # Codex's apply_patch: read as the apply_patch tool is
        return shell_patch_actions(patch_args, cmd, cwd)
    handled = _handled(name, args, cwd, env, full)
    if handled is not None:
        return handled
    return runs(name, args, full, cwd, env.worktree, privileged, modelled=name in modelled())


def _handled(
    name: str, args: list[Word], cwd: str | None, env: ShellEnv, full: tuple[str, ...]
) -> list[Action] | None:
    """What a modelled program does; an HTTP client where the command line may point it
    at another configuration (``HOME=. curl`` reads ``./.curlrc``) is Unknown too."""
    handled = handle(name, args, cwd)
    if env.client_config and name in HTTP_CLIENTS:
        return [configured_client(name, full), *(handled or [])]
    return handled


def _wrapper(
    name: str,
    args: list[Word],
    full: tuple[str, ...],
    cmd: SimpleCommand,
    cwd: str | None,
    env: ShellEnv,
    depth: int,
    privileged: bool,
) -> list[Action]:
    """``env``, ``timeout``, ``nice``, ``xargs``, ``watch``... read exactly or Unknown;
    what detaches its command (``setsid``, ``nohup``, ``env -i``) is Unknown as well."""
    got = unwrap(name, args)
    if got is None:
        return [Unknown(" ".join(full))]
    escape = wrapper_escape(name, got, full)
    lead: list[Action] = [] if escape is None else [Unknown(escape)]
    written = [resolve_path(cwd, w) for w in got.writes]  # time -o FILE, flock's lock file
    lead += [WriteFile(p) for p in written if name != "flock" or not scratch(p, env.worktree)]
    if got.probe:
        return [Shell(full, cwd, privileged)]
    if got.chdir is not None:
        cwd = resolve_path(cwd, got.chdir)
    if got.script is not None:
        return [*lead, *nested(got.script, got.rest, cwd, env, depth, full, classify_shell)]
    rest = got.rest
    if name == "watch" and rest and "-x" not in got.opts and "--exec" not in got.opts:
        joined = Word(" ".join(w.text for w in rest), any(w.dynamic for w in rest))
        return nested(joined, [], cwd, env, depth, full, classify_shell)
    if name in ("xargs", "sshpass"):  # xargs -a FILE: its words are FILE's contents (a
        # token, printed); sshpass -f FILE: FILE's first line, sent as a password
        source = got.opts.get("-a") or got.opts.get("--arg-file") or got.opts.get("-f")
        if source is not None:
            lead.append(ReadFile(tree_root(cwd, source)))
    if name == "xargs" and rest:
        replace = got.opts.get("-I") or got.opts.get("--replace") or got.opts.get("-i")
        if replace is None and any(k in got.opts for k in ("-i", "--replace")):
            replace = Word("{}")
        rest = _xargs_input(rest, replace)
    inner = _argv(rest, cmd, cwd, env, depth, privileged) if rest else []
    return [*lead, *(inner or [Shell(full, cwd, privileged)])]


def _xargs_input(rest: list[Word], replace: Word | None) -> list[Word]:
    """The command xargs runs: its input lands in the replace string or at the end."""
    if replace is not None:
        token = replace.text or "{}"
        return [Word(w.text, True, w.quoted) if token in w.text else w for w in rest]
    return [*rest, Word("<xargs input>", dynamic=True)]


def _find(
    args: list[Word],
    cmd: SimpleCommand,
    cwd: str | None,
    env: ShellEnv,
    depth: int,
    full: tuple[str, ...],
    privileged: bool,
) -> list[Action]:
    start = 0
    while start < len(args) and not args[start].text.startswith(("-", "(", "!")):
        start += 1
    roots = [resolve_path(cwd, w) for w in args[:start]] or [cwd]
    reads = find_reads([tree_root(cwd, w) for w in args[:start]] or [cwd], args[start:])
    out: list[Action] = []
    i = start
    while i < len(args):
        text = args[i].text
        if text == "-delete":
            names = delete_names(args[start:])  # find . -name '*.pyc' -delete: those only
            out += [DeleteFile(root, recursive=True, include=names) for root in roots]
        elif text in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < len(args):
            out.append(WriteFile(resolve_path(cwd, args[i + 1])))  # find . -fprint ../../x
        elif text in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and args[j].text not in (";", "+"):
                j += 1
            inner = [Word(w.text, True, w.quoted) if "{}" in w.text else w for w in args[i + 1 : j]]
            if inner:
                out += _argv(inner, cmd, cwd, env, depth, privileged)
            i = j
        i += 1
    return [*reads, *(out or [Shell(full, cwd, privileged)])]
