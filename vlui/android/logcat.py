"""The simulated device log: a ring buffer printed in logcat's ``threadtime`` format.

``MM-DD HH:MM:SS.mmm  PID  TID L TAG     : message`` — the same layout as ``adb logcat -v threadtime``, so success
detectors read both backends alike. Timestamps come from the device's virtual clock.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from vlui.resources import read_yaml

EPOCH = datetime(1970, 1, 1)

# The lines an Android 10 emulator logs while it boots: (ms since the kernel started, pid, tid, level, tag, message)
BOOT_LOG: list[tuple[int, int, int, str, str, str]] = [
    tuple(line) for line in read_yaml(Path(__file__).parent / "data" / "boot_log.yaml")]

# One threadtime line: date, time, pid, tid, level, tag, message. Tags may contain spaces and dots.
THREADTIME = re.compile(
    r"^(?P<date>\d\d-\d\d) (?P<time>\d\d:\d\d:\d\d\.\d{3})\s+(?P<pid>\d+)\s+(?P<tid>\d+) "
    r"(?P<level>[VDIWEFA]) (?P<tag>.*?)\s*: (?P<message>.*)$"
)


@dataclass(frozen=True, slots=True)
class Entry:
    seq: int
    time_ms: int  # virtual local time, ms since 1970-01-01
    pid: int
    tid: int
    level: str
    tag: str
    message: str

    def threadtime(self) -> str:
        t = EPOCH + timedelta(milliseconds=self.time_ms)
        stamp = f"{t:%m-%d %H:%M:%S}.{t.microsecond // 1000:03d}"
        return f"{stamp} {self.pid:5d} {self.tid:5d} {self.level} {self.tag:<8}: {self.message}"


def parse_threadtime(line: str) -> dict[str, str] | None:
    """The fields of a ``threadtime`` line (``date, time, pid, tid, level, tag, message``), or None."""
    m = THREADTIME.match(line)
    return m.groupdict() if m else None


LOG_BUFFER_BYTES = 256 << 10  # logd's default ring buffer (LOG_BUFFER_SIZE), what ``logcat -g`` reports
ENTRY_HEADER_BYTES = 28  # logd's header of an entry (logger_entry v4), besides its payload


def entry_bytes(tag: str, message: str) -> int:
    """What an entry takes in logd's buffer: its header and its payload (priority, tag, message and their NULs)."""
    return ENTRY_HEADER_BYTES + 3 + len(tag.encode("utf-8", "surrogateescape")) + len(
        message.encode("utf-8", "surrogateescape"))


class LogBuffer:
    """A bounded log: the oldest entries are dropped first, like logcat's ring buffers, once the entries take more
    than ``max_bytes`` (:func:`entry_bytes`, as logd counts them) or number more than ``capacity``."""

    def __init__(self, capacity: int = 16384, max_bytes: int = LOG_BUFFER_BYTES) -> None:
        self._entries: deque[Entry] = deque(maxlen=capacity)
        self._next = 0
        self.max_bytes = max_bytes
        self.used = 0  # the entries' bytes

    def write(self, time_ms: int, pid: int, tid: int, level: str, tag: str, message: str) -> None:
        if len(self._entries) == self._entries.maxlen:
            self.used -= entry_bytes(self._entries[0].tag, self._entries[0].message)
        self._entries.append(Entry(self._next, time_ms, pid, tid, level, tag, message))
        self._next += 1
        self.used += entry_bytes(tag, message)
        while self.used > self.max_bytes and len(self._entries) > 1:
            old = self._entries.popleft()
            self.used -= entry_bytes(old.tag, old.message)

    def mark(self) -> int:
        """The sequence number the next entry will get."""
        return self._next

    def entries(self, since: int = 0, tags: Iterable[str] | None = None) -> list[Entry]:
        wanted = set(tags) if tags is not None else None
        return [e for e in self._entries if e.seq >= since and (wanted is None or e.tag in wanted)]

    def lines(self, since: int = 0, tags: Iterable[str] | None = None) -> list[str]:
        return [e.threadtime() for e in self.entries(since, tags)]

    def clear(self) -> None:
        self._entries.clear()
        self.used = 0

    def copy_state(self) -> tuple[list[Entry], int]:
        return list(self._entries), self._next

    def restore_state(self, state: tuple[list[Entry], int]) -> None:
        self._entries.clear()
        self._entries.extend(state[0])
        self._next = state[1]
        self.used = sum(entry_bytes(e.tag, e.message) for e in self._entries)


def write_boot_log(log: LogBuffer, booted_ms: int) -> None:
    """Write :data:`BOOT_LOG` into ``log``, the boot's last line 1 s before ``booted_ms`` (the clock when the device
    is ready): what an emulator's log holds when a client first reads it."""
    start = booted_ms - 1000 - BOOT_LOG[-1][0]
    for offset, pid, tid, level, tag, message in BOOT_LOG:
        log.write(start + offset, pid, tid, level, tag, message)
