"""The phone's files: ``ls``, ``mkdir``, ``rm``, ``rmdir``, ``cp``, ``mv``, ``touch``, ``chmod``, ``chown``, and the
path helpers the other commands use (reading, writability as on a device, the shared storage's other names, the
read-only ``/proc`` files)."""

from __future__ import annotations

import posixpath

from vlui.served import DATA_DIR
from vlui.served.phone import ServedPhone
from vlui.served.shell.context import Io, Session, UsageError, getopt
from vlui.served.storage import read_only


# Android 10's external storage: /sdcard is a symbolic link on the root file system to /storage/self/primary, which
# leads (through /mnt/user/0/primary) to /storage/emulated/0, the sdcardfs view of /data/media/0. The phone keeps those
# files under /sdcard; every other name of the folder is resolved to it.
SDCARD = "/sdcard"
STORAGE_ALIASES = ("/storage/emulated/0", "/storage/self/primary", "/mnt/user/0/primary", "/storage/emulated/legacy")


# symbolic links as ``ls -l`` shows them: path -> (mode, target, date; None: the phone's boot, as tmpfs links are)
SYMLINKS: dict[str, tuple[str, str, str | None]] = {
    "/sdcard": ("lrw-r--r--", "/storage/self/primary", "2009-01-01 00:00"),  # made with the image (its build time)
    "/storage/self/primary": ("lrwxrwxrwx", "/mnt/user/0/primary", None),
    "/mnt/user/0/primary": ("lrwxrwxrwx", "/storage/emulated/0", None),
}


# folders every Android 10 emulator has that hold no file of the phone's, listed by ``ls``: path -> names
VIRTUAL_DIRS = {"/storage": ("emulated", "self"), "/storage/emulated": ("0",), "/storage/self": ("primary",),
                "/mnt": ("user",), "/mnt/user": ("0",), "/mnt/user/0": ("primary",), "/proc": ()}


# read-only kernel files, as the emulator's kernel shows them (the CPU is the emulator's virtual x86 processor)
PROC_FILES = {f"/proc/{p.name}": p.read_bytes() for p in sorted((DATA_DIR / "proc").iterdir())}


def resolve_storage(path: str) -> str:
    """``path`` (absolute, normalised) with another name of the shared storage folder replaced by /sdcard."""
    for alias in STORAGE_ALIASES:
        if path == alias or path.startswith(alias + "/"):
            return SDCARD + path[len(alias):]
    return path


class FileCommands:
    """The files commands of :class:`~vlui.served.shell.runner.Shell` (a mixin: ``self`` is the shell)."""

    phone: ServedPhone

    # ---------------------------------------------------------------------------------------------- files
    def _path(self, s: Session, path: str) -> str:
        """The phone's path of ``path`` typed in ``s``: absolute, normalised, the storage links followed."""
        return resolve_storage(self._lexical(s, path))

    def _lexical(self, s: Session, path: str) -> str:
        norm = posixpath.normpath(posixpath.join(s.cwd, path))
        return "/" + norm.lstrip("/")

    def _read(self, path: str) -> tuple[bytes, str]:
        """(content, "") or (b"", why it cannot be read)."""
        if path in ("/dev/null", "/dev/zero"):
            return b"", ""
        if path in PROC_FILES:
            return PROC_FILES[path], ""
        with self.phone.lock:
            data = self.phone.files.get(path)
            if data is not None:
                return data, ""
            return b"", "Is a directory" if self.phone.is_dir(path) else "No such file or directory"

    def _unwritable(self, path: str) -> str:
        """Why ``path`` cannot be written ("" when it can). The caller holds the lock."""
        if self.phone.is_dir(path):
            return "Is a directory"
        parent = posixpath.dirname(path)
        while parent != "/" and parent not in self.phone.files:
            parent = posixpath.dirname(parent)
        if parent != "/":
            return "Not a directory"
        if not self.phone.is_dir(posixpath.dirname(path)):
            return "No such file or directory"
        return "Read-only file system" if read_only(path) else ""

    def _exists(self, path: str) -> bool:
        return path in self.phone.files or path in PROC_FILES or self._is_dir(path)

    def _tree(self, path: str) -> list[str]:
        """The keys of ``files`` at or under ``path``."""
        prefix = path.rstrip("/") + "/"
        return [p for p in self.phone.files if p == path or p.startswith(prefix)]

    def _ls(self, s: Session, io: Io, args: list[str]) -> int:
        opts, operands = getopt(args, "la1dAhnFL")
        o = {k for k, _ in opts}
        errors, blocks = [], []
        with self.phone.lock:
            now = self.phone.device.now().strftime("%Y-%m-%d %H:%M")
            files, dirs = [], []
            for arg in operands or ["."]:
                lexical = self._lexical(s, arg)
                path = resolve_storage(lexical)
                # as toybox: a link named on the command line is shown itself with -l or -d, unless it ends in "/"
                if lexical in SYMLINKS and o & {"l", "d"} and not arg.endswith("/") and "L" not in o:
                    files.append((arg, lexical, True))
                elif path in self.phone.files or path in PROC_FILES or (
                        path != "/" and "d" in o and self._is_dir(path)):
                    files.append((arg, path, False))
                elif self._is_dir(path):
                    dirs.append((arg, path))
                else:
                    errors.append(f"ls: {arg}: No such file or directory\n")

            def row(name: str, p: str, link: bool) -> tuple[str, str, int, str, str]:
                """(mode and links, owner and group, size, date, name) of one entry."""
                if link:
                    mode, target, date = SYMLINKS[p]
                    return f"{mode} 1", "root root", len(target), date or now, f"{name} -> {target}"
                group = "sdcard_rw" if p == SDCARD or p.startswith(SDCARD + "/") else "root"
                if p in PROC_FILES:
                    return "-r--r--r-- 1", "root root", 0, now, name
                if self._is_dir(p):
                    return "drwxrwx--x 2", f"root {group}", 4096, now, name
                return "-rw-rw---- 1", f"root {group}", len(self.phone.files.get(p, b"")), now, name

            def rows(entries: list[tuple[str, str, bool]]) -> str:
                if "l" not in o:
                    return "".join(name + "\n" for name, _, _ in entries)
                stats = [row(*entry) for entry in entries]
                width = max((len(str(size)) for _, _, size, _, _ in stats), default=1)
                return "".join(f"{mode} {owner} {size:>{width}} {date} {name}\n"
                               for mode, owner, size, date, name in stats)

            if files:
                blocks.append(rows(files))
            for arg, path in dirs:
                names = [n for n in self._dir_names(path) if o & {"a", "A"} or not n.startswith(".")]
                entries = [(n, p, p in SYMLINKS) for n in names for p in [posixpath.join(path, n)]]
                total = sum(-(-len(self.phone.files.get(p, b"")) // 4096) * 4 for _, p, _ in entries)
                blocks.append((f"{arg}:\n" if len(files) + len(dirs) > 1 else "")
                              + (f"total {total}\n" if "l" in o else "") + rows(entries))
        io.complain("".join(errors))
        io.say("\n".join(blocks))
        return 1 if errors else 0

    def _is_dir(self, path: str) -> bool:
        """Whether ``path`` (the phone's) is a directory: the phone's, or one of the system's folders it lists."""
        return self.phone.is_dir(path) or path in VIRTUAL_DIRS

    def _dir_names(self, path: str) -> list[str]:
        names = set(self.phone.list_dir(path)) | set(VIRTUAL_DIRS.get(path, ()))
        names |= {p[len(path.rstrip("/")) + 1:] for p in (*SYMLINKS, *VIRTUAL_DIRS, *PROC_FILES)
                  if posixpath.dirname(p) == path}
        return sorted(names)

    def _mkdir(self, s: Session, io: Io, args: list[str]) -> int:
        opts, operands = getopt(args, "pv", "m")
        parents = any(k == "p" for k, _ in opts)
        if not operands:
            raise UsageError("Needs 1 argument")
        errors = []
        with self.phone.lock:
            for arg in operands:
                path = self._path(s, arg)
                if self._exists(path):
                    if not (parents and self.phone.is_dir(path)):
                        errors.append(f"mkdir: '{arg}': File exists\n")
                    continue
                problem = self._unwritable(path)
                if problem == "No such file or directory" and parents:
                    problem = self._unwritable(self._nearest_dir_below(path))
                if problem:
                    errors.append(f"mkdir: '{arg}': {problem}\n")
                else:
                    self.phone.make_dir(path)
        io.complain("".join(errors))
        return 1 if errors else 0

    def _nearest_dir_below(self, path: str) -> str:
        """The highest missing directory on the way to ``path`` (what ``mkdir -p`` makes first)."""
        while not self._exists(posixpath.dirname(path)):
            path = posixpath.dirname(path)
        return path

    def _rm(self, s: Session, io: Io, args: list[str]) -> int:
        opts, operands = getopt(args, "frRiv")
        o = {k for k, _ in opts}
        force, recursive = "f" in o, bool(o & {"r", "R"})
        if not operands and not force:
            raise UsageError("Needs 1 argument")
        errors = []
        with self.phone.lock:
            for arg in operands:
                path = self._path(s, arg)
                if read_only(path) and self._exists(path):
                    errors.append(f"rm: {arg}: Read-only file system\n")
                    continue
                if path in self.phone.files:
                    del self.phone.files[path]
                elif not self.phone.is_dir(path):
                    if not force:
                        errors.append(f"rm: {arg}: No such file or directory\n")
                    continue
                elif not recursive:
                    errors.append(f"rm: {arg}: Is a directory\n")
                    continue
                else:
                    for p in self._tree(path):
                        del self.phone.files[p]
                self.phone.make_dir(posixpath.dirname(path))  # a directory stays when its last file goes
        io.complain("".join(errors))
        return 1 if errors else 0

    def _rmdir(self, s: Session, io: Io, args: list[str]) -> int:
        errors = []
        with self.phone.lock:
            for arg in args:
                path = self._path(s, arg)
                if not self.phone.is_dir(path):
                    why = "Not a directory" if path in self.phone.files else "No such file or directory"
                    errors.append(f"rmdir: '{arg}': {why}\n")
                elif self.phone.list_dir(path):
                    errors.append(f"rmdir: '{arg}': Directory not empty\n")
                elif read_only(path):
                    errors.append(f"rmdir: '{arg}': Read-only file system\n")
                else:
                    self.phone.files.pop(path.rstrip("/") + "/", None)
        io.complain("".join(errors))
        return 1 if errors else 0

    def _cp(self, s: Session, io: Io, args: list[str]) -> int:
        return self._copy(s, io, args, "cp")

    def _mv(self, s: Session, io: Io, args: list[str]) -> int:
        return self._copy(s, io, args, "mv")

    def _copy(self, s: Session, io: Io, args: list[str], name: str) -> int:
        opts, operands = getopt(args, "rRafpnvuHLP" if name == "cp" else "fnvi")
        recursive = name == "mv" or bool({k for k, _ in opts} & {"r", "R", "a"})
        if len(operands) < 2:
            raise UsageError("Needs 2 arguments")
        *sources, dest_arg = operands
        errors = []
        with self.phone.lock:
            dest = self._path(s, dest_arg)
            into = self.phone.is_dir(dest)
            if len(sources) > 1 and not into:
                raise UsageError(f"'{dest_arg}' not directory")
            for arg in sources:
                src = self._path(s, arg)
                target = posixpath.join(dest, posixpath.basename(src)) if into else dest
                if not self._exists(src):
                    errors.append(f"{name}: {arg}: No such file or directory\n")
                    continue
                if src == target or target.startswith(src.rstrip("/") + "/"):
                    errors.append(f"{name}: '{arg}' and '{dest_arg}' are the same or nested\n")
                    continue
                is_file = src in self.phone.files
                if name == "mv" and read_only(src):
                    errors.append(f"mv: '{arg}': Read-only file system\n")
                    continue
                if not (is_file or recursive):
                    errors.append(f"cp: Skipped dir '{arg}'\n")
                    continue
                problem = self._unwritable(target)
                if problem and (is_file or problem != "Is a directory"):
                    errors.append(f"{name}: '{dest_arg}': {problem}\n")
                    continue
                moved = {src: target} if is_file else {p: target + p[len(src):] for p in self._tree(src)}
                for old, new in (moved or {src + "/": target + "/"}).items():
                    self.phone.files[new] = self.phone.files.get(old, b"")
                if name == "mv":
                    for old in moved:
                        self.phone.files.pop(old, None)
                    self.phone.make_dir(posixpath.dirname(src))
        io.complain("".join(errors))
        return 1 if errors else 0

    def _touch(self, s: Session, io: Io, args: list[str]) -> int:
        _, operands = getopt(args, "acmh", "dtr")
        errors = []
        with self.phone.lock:
            for arg in operands:
                path = self._path(s, arg)
                problem = "" if self._exists(path) else self._unwritable(path)
                if problem:
                    errors.append(f"touch: '{arg}': {problem}\n")
                elif not self._exists(path):
                    self.phone.files[path] = b""
        io.complain("".join(errors))
        return 1 if errors else 0

    def _chmod(self, s: Session, io: Io, args: list[str]) -> int:
        return self._set_owner_or_mode(s, io, args, "chmod")

    def _chown(self, s: Session, io: Io, args: list[str]) -> int:
        return self._set_owner_or_mode(s, io, args, "chown")

    def _set_owner_or_mode(self, s: Session, io: Io, args: list[str], name: str) -> int:
        """The simulated phone keeps no owners or modes: the command checks its paths and changes nothing."""
        operands = [a for a in args if a not in ("-R", "-h", "-v", "-f")]
        if len(operands) < 2:
            raise UsageError("Needs 2 arguments")
        with self.phone.lock:
            errors = [f"{name}: {arg}: No such file or directory\n" for arg in operands[1:]
                      if not self._exists(self._path(s, arg))]
        io.complain("".join(errors))
        return 1 if errors else 0
