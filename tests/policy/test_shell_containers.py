"""A container given the host (``--privileged``, host namespaces, capabilities, devices,
confinement off) is a person's to approve, for every role: found probing, ``docker run
--privileged IMAGE CMD`` was allowed for a worker (it names no path). No container
engine runs here, so the effect is Docker's documented one, not measured."""

from __future__ import annotations

import pytest

from exomonad.policy.decisions import Allow, Escalate
from tests.policy.worker import bash

HOST = [
    "docker run --privileged alpine sh -c 'mount /dev/sda1 /m'",
    "docker run --rm --pid=host alpine nsenter -t 1 -m sh",
    "docker run --pid host alpine",
    "docker run --network=host alpine wget -qO- 127.0.0.1:8080",
    "docker run --net host alpine",
    "podman run --userns=host alpine",
    "docker run --cap-add SYS_ADMIN alpine",
    "docker run --cap-add=ALL alpine",
    "docker run --device /dev/sda alpine",
    "docker run --security-opt seccomp=unconfined alpine",
    "docker run --security-opt apparmor=unconfined alpine",
    "nerdctl run --cgroupns=host alpine",
    "docker create --privileged alpine",
    "docker exec --privileged c sh",
    "docker run --volumes-from other alpine",
]


@pytest.mark.parametrize("command", HOST)
@pytest.mark.parametrize("role", ["worker", "tl"])
def test_a_container_given_the_host_goes_to_a_person(command: str, role: str) -> None:
    verdict = bash(command, role=role)
    assert isinstance(verdict, Escalate), verdict
    assert verdict.to == "human"
    assert "gives the container the host" in verdict.reason, verdict.reason


@pytest.mark.parametrize(
    "command",
    ["docker run --rm -it alpine sh", "docker run -v ./src:/src alpine ls", "docker ps",
     "docker build -t app .", "docker run --network bridge alpine", "podman images"],
)  # fmt: skip
def test_ordinary_containers_stay_allowed(command: str) -> None:
    assert isinstance(bash(command), Allow), bash(command)
