"""The simulated phone's shell: what ``adb shell`` and ``adb exec-out`` run on it.

SKELETON: the full command set is being written. Interface (fixed):

``Shell(phone).run(command, write, cancelled) -> int``: run one command line as ``/system/bin/sh -c`` would,
writing its output (stdout and stderr together, as the legacy ``shell:`` service does) through ``write`` and
returning the exit status. Streaming commands (``logcat`` without ``-d``) return when ``cancelled`` is set or the
phone closes.
"""

from __future__ import annotations

import shlex
import threading
from collections.abc import Callable

from vlui.sim.served import ServedPhone


class Shell:
    def __init__(self, phone: ServedPhone) -> None:
        self.phone = phone

    def run(self, command: str, write: Callable[[bytes], None], cancelled: threading.Event) -> int:
        argv = shlex.split(command)
        if argv and argv[0] == "echo":
            write((" ".join(argv[1:]) + "\n").encode())
            return 0
        name = argv[0] if argv else ""
        write(f"/system/bin/sh: {name}: not found\n".encode())
        return 127
