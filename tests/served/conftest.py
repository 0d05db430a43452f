"""Fixtures for the simulated phone served over ADB: one private adb server (the real, bundled adb binary) and one
served phone per test module."""

from __future__ import annotations

import shlex
import threading
from pathlib import Path

import numpy as np
import pytest

from vlui.served.private_adb import PrivateAdb, bundled_adb
from vlui.served.shell import Shell


class ProbeShell:
    """The phone's shell plus two commands that test the transport, whatever the shell can do yet:
    ``blob N SEED`` writes N seeded random bytes in one write; ``ticks`` writes a line every 10 ms until the stream is
    cancelled, then sets :attr:`ticks_ended`."""

    ticks_ended = threading.Event()

    def __init__(self, phone) -> None:
        self.shell = Shell(phone)

    @property
    def exited(self) -> bool:
        return self.shell.exited

    @property
    def waiting(self) -> bool:
        return self.shell.waiting

    def feed(self, data: bytes, write, cancelled: threading.Event, err=None) -> int:
        """A terminal's line: a probe command runs here, anything else goes to the shell."""
        line = data.decode("utf-8", "replace").strip()
        if not self.shell.waiting and line.split()[:1] in (["blob"], ["ticks"]):
            return self.run(line, write, cancelled, err)
        return self.shell.feed(data, write, cancelled, err)

    def run_script(self, read, write, cancelled: threading.Event, err=None) -> int:
        return self.shell.run_script(read, write, cancelled, err)

    def run(self, command: str, write, cancelled: threading.Event, err=None) -> int:
        argv = shlex.split(command)
        if argv[:1] == ["blob"]:
            write(blob(int(argv[1]), int(argv[2])))
            return 0
        if argv == ["ticks"]:
            try:
                tick = 0
                while not cancelled.wait(0.01):
                    write(b"tick %d\n" % tick)
                    tick += 1
            finally:
                ProbeShell.ticks_ended.set()
            return 0
        return self.shell.run(command, write, cancelled, err)


def blob(size: int, seed: int) -> bytes:
    return np.random.default_rng(seed).bytes(size)


@pytest.fixture(scope="module")
def private_adb():
    """A served phone (threads of this process) registered as ``emulator-P`` with a private adb server; its
    streams run :class:`ProbeShell`."""
    with PrivateAdb("000", noise=False) as pa:
        pa.daemon.shell = ProbeShell
        yield pa


SYSTEM_ADB = Path("/usr/bin/adb")  # the system's adb client: Debian's and Ubuntu's package (adb 29 on Debian 12)


@pytest.fixture(scope="module", params=["bundled", "system"], ids=["adb-bundled", "adb-system"])
def adb_client(request) -> str:
    """The adb binary a client test drives the served phone with: adbutils' bundled adb (36), then the system's
    /usr/bin/adb (Debian's adb 29), which older hosts and distributions run and which quotes and parses differently;
    ``bash scripts/setup.sh --tests`` installs it on Debian and Ubuntu."""
    if request.param == "bundled":
        return bundled_adb()
    if not SYSTEM_ADB.is_file():
        pytest.skip(f"{SYSTEM_ADB} is not installed, so the client tests ran with adbutils' adb alone: "
                    "`bash scripts/setup.sh --tests` installs Debian's adb package where apt is available")
    return str(SYSTEM_ADB)
