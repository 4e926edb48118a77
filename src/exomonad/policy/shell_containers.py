"""Container runs that hand the container the host: ``--privileged``, the host's
process, user, network or cgroup namespace, added capabilities, devices, confinement
switched off.

Such a container is root on the host in all but name (``--privileged`` lets it mount
the host's disks; ``--pid=host`` with ``nsenter`` enters the host's processes;
``--network=host`` reaches every loopback service, ExoMonad's dashboard included), so
its command is :class:`~exomonad.policy.actions.Unknown`: a person's to approve, for
every role (the lead's too), as ``sudo`` is. Found
probing: ``docker run --privileged IMAGE CMD`` was allowed for a worker, named no path
and so met no rule. (No container engine runs on the machines this was found on, so
its effect is Docker's documented one, not measured here.)

>>> escapes("docker", ["run", "--rm", "--privileged", "alpine"])
'--privileged gives the container the host'
>>> escapes("podman", ["run", "--net", "host", "alpine"])
'--net host gives the container the host'
>>> escapes("docker", ["run", "--rm", "-v", "./src:/src", "alpine"]) is None
True
"""

from __future__ import annotations

__all__ = ["CONTAINER_ENGINES", "escapes"]

#: Programs that run containers, Docker's command line or one like it.
CONTAINER_ENGINES = frozenset({"docker", "podman", "nerdctl", "finch"})
#: Options that open the container to the host whatever their value.
_ALWAYS = frozenset({"--privileged", "--cap-add", "--device", "--device-cgroup-rule",
                     "--volumes-from"})  # fmt: skip
#: Options that open it with the value ``host``.
_HOST = frozenset({"--pid", "--ipc", "--userns", "--uts", "--cgroupns", "--network", "--net"})
#: ``--security-opt`` values that switch confinement off.
_UNCONFINED = ("unconfined", "label=disable", "label:disable", "no-new-privileges=false")


def escapes(name: str, texts: list[str]) -> str | None:
    """Why the container ``name`` runs with ``texts`` gets the host, or None."""
    if name not in CONTAINER_ENGINES:
        return None
    for i, text in enumerate(texts):
        option, eq, value = text.partition("=")
        if not eq and i + 1 < len(texts):
            value = texts[i + 1]
        if option in _ALWAYS or (option in _HOST and value == "host"):
            shown = text if eq or option == "--privileged" else f"{option} {value}"
            return f"{shown} gives the container the host"
        if option == "--security-opt" and any(u in value for u in _UNCONFINED):
            return f"--security-opt {value} gives the container the host"
    return None
