"""A shell or a runner a command starts: ``sh -c TEXT``, ``bash script``, a script on a
shell's stdin, ``source FILE``, ``trap CMD``, ``script -c CMD``, ``make -f -``.

The text such a command runs is classified as a command line of its own, one level
deeper, by the ``classify`` it is handed (:func:`exomonad.policy.shell_classify.
classify_shell`); what cannot be seen (a script file, a word the shell builds, a script
of unknown source on stdin) is :class:`~exomonad.policy.actions.Unknown` or a plain
:class:`~exomonad.policy.actions.Shell`.
"""

from __future__ import annotations

from collections.abc import Callable

from exomonad.policy.actions import Action, Shell, Unknown, WriteFile
from exomonad.policy.shell_env import ShellEnv
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_parse import SimpleCommand
from exomonad.policy.shell_paths import resolve_path
from exomonad.policy.shell_tools import handle
from exomonad.policy.shell_where import runs
from exomonad.policy.shell_wrap import SCRIPT_OPTS, parse_options

__all__ = ["Classify", "nested", "run_shell", "runner", "source", "stdin_file"]

#: Classify a command line: ``(text, cwd, env, depth) -> actions``.
Classify = Callable[[str, str | None, ShellEnv, int], list[Action]]

_STDIN_FILES = ("/dev/stdin", "/dev/fd/", "/proc/")


def nested(
    script: Word,
    extra: list[Word],
    cwd: str | None,
    env: ShellEnv,
    depth: int,
    full: tuple[str, ...],
    classify: Classify,
) -> list[Action]:
    """Classify a script given as one word (``sh -c``, ``eval``, ``env -S``)."""
    if script.dynamic or script.glob or any(w.dynamic or w.glob for w in extra):
        return [Unknown(" ".join(full))]
    text = " ".join([script.text, *(w.text for w in extra)])
    return classify(text, cwd, env, depth + 1)


def runner(
    name: str,
    args: list[Word],
    cwd: str | None,
    env: ShellEnv,
    depth: int,
    full: tuple[str, ...],
    privileged: bool,
    classify: Classify,
) -> list[Action]:
    """``trap CMD``, ``script -c CMD``, ``hash -p``, ``make -f -``, ``npx -c``."""
    texts = [w.text for w in args]
    plain = runs(name, args, full, cwd, env.worktree, privileged)
    if name == "trap":
        ops = args[1:] if texts[:1] == ["--"] else args
        if not ops or ops[0].text in ("-", "-p", "-l") or len(ops) == 1:
            return plain
        later = None if env.moves else cwd  # run at exit, on a signal: after any cd
        return nested(ops[0], [], later, env, depth, full, classify)
    if name == "script":
        parsed = parse_options(args, SCRIPT_OPTS)
        script = None if parsed is None else (parsed[1].get("-c") or parsed[1].get("--command"))
        if script is None:
            return [Unknown(" ".join(full))]
        logs = [w for w in args if w is not script and not w.text.startswith(("-", "/dev/"))]
        log = [WriteFile(resolve_path(cwd, w)) for w in logs[:1]]  # its typescript file
        return [*log, *nested(script, [], cwd, env, depth, full, classify)]
    if name == "hash":
        return (
            [Unknown(" ".join(full))]
            if any(t.startswith("-") and "p" in t for t in texts)
            else plain
        )
    if name in ("make", "gmake"):
        stdin = any(
            t in ("-", "/dev/stdin")
            or t.startswith(("--eval", "-E", "--file=-", "-f-", "/dev/fd/"))
            for t in texts
        ) or any(w.dynamic for w in args)
        return [Unknown(" ".join(full))] if stdin else plain
    if any(t in ("-c", "--call") or t.startswith("--call=") for t in texts):
        return [Unknown(" ".join(full))]
    handled = handle(name, args, cwd)
    return handled if handled is not None else plain


def _stdin(cmd: SimpleCommand, env: ShellEnv) -> str | None:
    """How a shell's stdin is known: ``"script"``, ``"file"``, ``"tty"`` or None."""
    if cmd.stdin_script is not None:
        return "script"
    reads = [r for r in cmd.redirs if r.op in ("<", "<&", "<>") and r.fd in (None, 0)]
    if reads:
        target = reads[-1].target
        plain = (
            reads[-1].op != "<&"
            and not target.dynamic
            and not target.glob
            and not target.text.startswith(_STDIN_FILES)
        )
        return "file" if plain else None
    if cmd.piped_in or cmd.grouped or env.stdin_redirected:
        return None
    return "tty"


def stdin_file(cmd: SimpleCommand) -> str | None:
    """The file ``cmd`` reads its input from (``sudo bash < setup.sh``: ``setup.sh``), as
    written, for its description: it is what a privileged shell runs."""
    reads = [r for r in cmd.redirs if r.op in ("<", "<>") and r.fd in (None, 0)]
    return reads[-1].target.text if reads else None


def run_shell(
    name: str,
    args: list[Word],
    cmd: SimpleCommand,
    cwd: str | None,
    env: ShellEnv,
    depth: int,
    full: tuple[str, ...],
    classify: Classify,
) -> list[Action]:
    """``sh``/``bash``/...: ``-c TEXT`` classified, a script file a plain Shell, a script
    on stdin classified when it is known (a here-document), else Unknown."""
    i, has_c, has_s = 0, False, False
    while i < len(args):
        text = args[i].text
        if args[i].dynamic or args[i].glob:
            return [Unknown(" ".join(full))]
        if text == "--":
            i += 1
            break
        if not text.startswith(("-", "+")) or text in ("-", "+"):
            break
        if text in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        short = not text.startswith("--")
        has_c = has_c or (short and "c" in text[1:]) or text == "--command"
        has_s = has_s or (short and "s" in text[1:])
        i += 1
    operands = args[i:]
    if has_c:
        if not operands:
            return [Unknown(" ".join(full))]
        return nested(operands[0], [], cwd, env, depth, full, classify)
    script = operands[0] if operands and not has_s else None
    if script is not None and (script.dynamic or script.glob):
        return [Unknown(" ".join(full))]
    if script is not None and script.text != "-" and not script.text.startswith(_STDIN_FILES):
        return [Shell(full, cwd)]  # runs a script file
    stdin = _stdin(cmd, env)
    if stdin == "script" and cmd.stdin_script is not None:
        return classify(cmd.stdin_script, cwd, env, depth + 1)
    if stdin in ("file", "tty") and script is None:
        return [Shell(full, cwd, stdin=stdin_file(cmd))]
    return [Unknown(f"script fed to {name} on stdin: {' '.join(full)}")]


def source(
    args: list[Word],
    cmd: SimpleCommand,
    cwd: str | None,
    env: ShellEnv,
    depth: int,
    full: tuple[str, ...],
    classify: Classify,
) -> list[Action]:
    """``source FILE`` / ``. FILE``: a file is opaque text; stdin-like files are read."""
    if not args or args[0].dynamic or args[0].glob:
        return [Unknown(" ".join(full))]
    if args[0].text.startswith(_STDIN_FILES) or args[0].text == "-":
        if _stdin(cmd, env) == "script" and cmd.stdin_script is not None:
            return classify(cmd.stdin_script, cwd, env, depth + 1)
        return [Unknown(" ".join(full))]
    return [Shell(full, cwd)]
