"""The served phone's file system as data: what ``adb push``, shell redirections, ``screencap FILE``, ``sqlite3`` and
the phone's own services write, held in memory and bounded.

Two rules make it safe to serve to any client that reaches the port (see ``docs/security.md``):

- it is the phone's alone: paths are keys of a dict, never host paths, so no client reads or writes a host file;
- it is bounded: the bytes it holds, and those that pushes in progress have reserved, never exceed
  :attr:`PhoneFiles.budget` (a write past it fails as a full disk does, ``No space left on device``), and the system partitions are read-only, as on a user build (``/system``,
  ``/vendor``, ``/product`` and the root file system itself: ``Read-only file system``).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Iterator, MutableMapping

DEFAULT_BUDGET = 256 << 20  # bytes of files one served phone holds (pushes, dumps, databases)

# Where a device lets root write. Android 10 mounts the root file system (system-as-root) and the system partitions
# read-only; the rest of the tree lives under these.
WRITABLE_ROOTS = ("/data", "/sdcard", "/storage", "/cache", "/mnt", "/dev")


class StorageError(OSError):
    """A write the phone's storage refuses, with the reason a device's ``strerror`` gives."""

    def __init__(self, code: int, path: str) -> None:
        super().__init__(code, os.strerror(code), path)


def read_only(path: str) -> bool:
    """Whether the absolute, normalised ``path`` is on a read-only partition of the phone."""
    return not any(path == root or path.startswith(root + "/") for root in WRITABLE_ROOTS)


class PhoneFiles(MutableMapping[str, bytes]):
    """Absolute path -> content. Directories are implied by their files (see :class:`ServedPhone`).

    Setting a path checks the two rules: a read-only path raises ``StorageError(EROFS)``, and content that would take
    the total past :attr:`budget` raises ``StorageError(ENOSPC)``; the old content then stays. :meth:`room` says how
    many more bytes fit, for writers that stream (a redirection, a push) and must stop before they hold too much.
    A push reserves what it receives (:meth:`reserve`), so that pushes in parallel cannot together hold more than
    the budget in memory, and releases it (:meth:`release`) when it stores its file or fails. Take the phone's lock
    around every call."""

    def __init__(self, items: Iterable[tuple[str, bytes]] | dict[str, bytes] = (),
                 budget: int = DEFAULT_BUDGET) -> None:
        if budget < 0:
            raise ValueError(f"a storage budget is a number of bytes >= 0, not {budget}")
        self.budget = budget
        self._data: dict[str, bytes] = {}
        self.used = 0
        self.reserved = 0  # bytes that pushes in progress hold (see reserve)
        for path, content in dict(items).items():  # restoring a saved state: it fitted when it was saved
            self._data[path] = content
            self.used += len(content)

    def room(self, replacing: str | None = None) -> int:
        """Bytes that still fit; with ``replacing``, counting that path's content as freed."""
        freed = len(self._data.get(replacing, b"")) if replacing is not None else 0
        return self.budget - self.used - self.reserved + freed

    def reserve(self, path: str, size: int) -> None:
        """Set ``size`` more bytes aside for a file that is arriving at ``path``; ``StorageError(ENOSPC)`` if they
        do not fit beside the stored files and the other reservations."""
        if size > self.room(replacing=path):
            raise StorageError(errno.ENOSPC, path)
        self.reserved += size

    def release(self, size: int) -> None:
        """Give back ``size`` reserved bytes (before storing the file they were for, or after a failure)."""
        self.reserved -= size

    def check_write(self, path: str, size: int) -> None:
        """Raise the :class:`StorageError` that writing ``size`` bytes to ``path`` would raise."""
        if read_only(path):
            raise StorageError(errno.EROFS, path)
        if size > self.room(replacing=path):
            raise StorageError(errno.ENOSPC, path)

    def __setitem__(self, path: str, content: bytes) -> None:
        self.check_write(path, len(content))
        self.used += len(content) - len(self._data.get(path, b""))
        self._data[path] = content

    def __getitem__(self, path: str) -> bytes:
        return self._data[path]

    def __delitem__(self, path: str) -> None:
        self.used -= len(self._data.pop(path))

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, path: object) -> bool:
        return path in self._data

    def get(self, path: str, default=None):  # the hot path of every lookup: skip MutableMapping's try/except
        return self._data.get(path, default)

    def snapshot(self) -> dict[str, bytes]:
        """A plain copy (the contents are shared: bytes are immutable)."""
        return dict(self._data)


def unique_bytes(*trees: dict[str, bytes]) -> int:
    """Bytes held by the contents of ``trees``, counting content shared between them once."""
    seen: dict[int, int] = {}
    for tree in trees:
        for content in tree.values():
            seen[id(content)] = len(content)
    return sum(seen.values())
