"""The served phone's file system as data: what ``adb push``, shell redirections, ``screencap FILE``, ``sqlite3`` and
the phone's own services write, held in memory and bounded.

Three rules make it safe to serve to any client that reaches the port (see ``docs/security.md``):

- it is the phone's alone: paths are keys of a dict, never host paths, so no client reads or writes a host file;
- it is bounded: the bytes it holds (each file's content, and for each entry its path and :data:`ENTRY_BYTES`, what an
  inode and a directory entry take, so that names and empty files cost too), and those that pushes in progress have
  reserved, never exceed :attr:`PhoneFiles.budget` (a write past it fails as a full disk does, ``No space left on
  device``); the entries never exceed :attr:`PhoneFiles.max_entries` (mke2fs's inode count for a file system of that
  size: past it, ``No space left on device`` too); a name is at most 255 bytes and a path at most 4,095, as Linux's
  ``NAME_MAX`` and ``PATH_MAX`` allow (``File name too long``); and the system partitions are read-only, as on a user
  build (``/system``, ``/vendor``, ``/product`` and the root file system itself: ``Read-only file system``);
- directory operations cost what they touch: an index of each directory's entries answers whether a path is a
  directory, what it holds and what lies under it without looking at the rest.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Iterator, MutableMapping

DEFAULT_BUDGET = 256 << 20  # bytes of files one served phone holds (pushes, dumps, databases)
NAME_MAX = 255  # bytes in one name (Linux's NAME_MAX; ext4's and f2fs's limit)
PATH_MAX = 4096  # bytes in a path, its terminating NUL included (Linux's PATH_MAX)
# What an entry costs besides its content and its path: an ext4 inode (256 bytes) and its directory entry. It matches
# what the phone's memory holds for an entry (its key in the dict, its name in its directory's index) within a factor
# of two, so that the budget bounds the memory of a million empty files as it does that of one big file.
ENTRY_BYTES = 256
INODE_RATIO = 4096  # bytes of file system per inode: mke2fs.conf's "small" type, for file systems under 512 MiB

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


def name_too_long(path: str) -> bool:
    """Whether ``path`` (absolute) has a name over NAME_MAX bytes or is itself PATH_MAX bytes or more (ENAMETOOLONG)."""
    if len(path) < NAME_MAX // 4 + 1:  # four bytes a character at most: too short to be too long
        return False
    raw = path.encode("utf-8", "surrogateescape")
    return len(raw) >= PATH_MAX or any(len(name) > NAME_MAX for name in raw.split(b"/"))


def entry_cost(path: str) -> int:
    """What an entry takes besides its content: its path's bytes and :data:`ENTRY_BYTES`."""
    return ENTRY_BYTES + len(path.encode("utf-8", "surrogateescape"))


def _split(path: str) -> tuple[str, str]:
    """(parent, name) of an absolute, normalised path other than ``/``."""
    parent, _, name = path.rpartition("/")
    return parent or "/", name


class PhoneFiles(MutableMapping[str, bytes]):
    """Absolute path -> content. Directories are implied by their files (see :class:`ServedPhone`); an empty
    directory made by ``mkdir`` is kept as the key ``DIR/``, an entry without a name that implies it like a file.

    Setting a path checks the rules above: a read-only path raises ``StorageError(EROFS)``, a name too long
    ``StorageError(ENAMETOOLONG)``, and content or an entry that would take the total past :attr:`budget`, or the
    entries past :attr:`max_entries`, ``StorageError(ENOSPC)``; the old content then stays. :meth:`room` says how
    many more bytes fit, for writers that stream (a redirection, a push) and must stop before they hold too much. A
    push reserves what it receives (:meth:`reserve`), so that pushes in parallel cannot together hold more than the
    budget in memory, and releases it (:meth:`release`) when it stores its file or fails. Take the phone's lock
    around every call."""

    def __init__(self, items: Iterable[tuple[str, bytes]] | dict[str, bytes] = (),
                 budget: int = DEFAULT_BUDGET, max_entries: int | None = None) -> None:
        if budget < 0:
            raise ValueError(f"a storage budget is a number of bytes >= 0, not {budget}")
        self.budget = budget
        self.max_entries = budget // INODE_RATIO if max_entries is None else max_entries
        self._data: dict[str, bytes] = {}
        # the index: each directory that holds something (or was made empty) -> its names -> how many keys lie at
        # or under that name (the name goes when none does)
        self._dirs: dict[str, dict[str, int]] = {"/": {}}
        self._markers = 0  # keys ``DIR/`` (their directory is counted in _dirs)
        self.used = 0
        self.reserved = 0  # bytes that pushes in progress hold (see reserve)
        for path, content in dict(items).items():  # restoring a saved state: it fitted when it was saved
            self._add(path, content)

    # ------------------------------------------------------------------------------------------ the budget
    @property
    def entries(self) -> int:
        """The files and directories held (the root aside): what counts against :attr:`max_entries` (inodes)."""
        return len(self._data) - self._markers + len(self._dirs) - 1

    def room(self, replacing: str | None = None) -> int:
        """Bytes that still fit; with ``replacing``, counting that path's content as freed (or, for a path not held
        yet, its entry as taken)."""
        freed = 0
        if replacing is not None:
            old = self._data.get(replacing)
            freed = len(old) if old is not None else -entry_cost(replacing)
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
        if name_too_long(path.rstrip("/")):
            raise StorageError(errno.ENAMETOOLONG, path)
        if size > self.room(replacing=path) or (path not in self._data and self._new_entries(path)
                                                + self.entries > self.max_entries):
            raise StorageError(errno.ENOSPC, path)

    def _new_entries(self, key: str) -> int:
        """How many entries (the file and the directories it implies) storing ``key`` adds."""
        path = key.rstrip("/")
        count = 0 if key.endswith("/") and path in self._dirs else 1
        parent = _split(path)[0]
        while parent not in self._dirs:
            count += 1
            parent = _split(parent)[0]
        return count

    # ------------------------------------------------------------------------------------------ the mapping
    def __setitem__(self, path: str, content: bytes) -> None:
        self.check_write(path, len(content))
        old = self._data.get(path)
        if old is None:
            self._add(path, content)
        else:
            self.used += len(content) - len(old)
            self._data[path] = content

    def __getitem__(self, path: str) -> bytes:
        return self._data[path]

    def __delitem__(self, path: str) -> None:
        content = self._data.pop(path)
        self.used -= len(content) + entry_cost(path)
        self._unlink(path)

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

    # ------------------------------------------------------------------------------------------ the index
    def _add(self, key: str, content: bytes) -> None:
        self._data[key] = content
        self.used += len(content) + entry_cost(key)
        path = key.rstrip("/")
        if key.endswith("/"):
            self._markers += 1
            self._dirs.setdefault(path, {})
        while path != "/":
            parent, name = _split(path)
            names = self._dirs.get(parent)
            if names is None:
                names = self._dirs[parent] = {}
            names[name] = names.get(name, 0) + 1
            path = parent

    def _unlink(self, key: str) -> None:
        path = key.rstrip("/")
        if key.endswith("/"):
            self._markers -= 1
            if not self._dirs.get(path, True):
                del self._dirs[path]
        while path != "/":
            parent, name = _split(path)
            names = self._dirs[parent]
            if names[name] == 1:
                del names[name]
                if not names and parent != "/" and parent + "/" not in self._data:
                    del self._dirs[parent]
            else:
                names[name] -= 1
            path = parent

    def is_dir(self, path: str) -> bool:
        """Whether the absolute, normalised ``path`` holds something or was made a directory."""
        return (path.rstrip("/") or "/") in self._dirs

    def names(self, path: str) -> Iterable[str]:
        """The names in directory ``path`` (none for a path that is not one), unsorted."""
        return self._dirs.get(path.rstrip("/") or "/", {}).keys()

    def under(self, path: str) -> list[str]:
        """The keys at or under ``path``, found through the index (what it costs is what it finds)."""
        path = path.rstrip("/") or "/"
        found = [k for k in (path, path + "/") if k in self._data and k != "//"]
        stack = [path] if path in self._dirs else []
        while stack:
            folder = stack.pop()
            prefix = folder.rstrip("/") + "/"
            for name in self._dirs.get(folder, {}):
                child = prefix + name
                if child in self._data:
                    found.append(child)
                if child in self._dirs:
                    stack.append(child)
                    if child + "/" in self._data:
                        found.append(child + "/")
        return found


def held_bytes(*trees: dict[str, bytes]) -> int:
    """Bytes ``trees`` hold as :class:`PhoneFiles` counts them (contents, paths, entries), counting content shared
    between them once."""
    seen: dict[int, int] = {}
    entries = 0
    for tree in trees:
        for path, content in tree.items():
            seen[id(content)] = len(content)
            entries += entry_cost(path)
    return sum(seen.values()) + entries
