"""The phone's files: ``ls``, ``mkdir``, ``rm``, ``rmdir``, ``cp``, ``mv``, ``touch``, ``chmod``, ``chown``, and the
path helpers the other commands use (reading, writability as on a device)."""

from __future__ import annotations

import posixpath

from vlui.served.phone import ServedPhone
from vlui.served.shell.context import _getopt, _Io, _Session, _UsageError
from vlui.served.storage import read_only


class FileCommands:
    """The files commands of :class:`~vlui.served.shell.runner.Shell` (a mixin: ``self`` is the shell)."""

    phone: ServedPhone

    # ---------------------------------------------------------------------------------------------- files
    def _path(self, s: _Session, path: str) -> str:
        norm = posixpath.normpath(posixpath.join(s.cwd, path))
        return "/" + norm.lstrip("/")

    def _read(self, path: str) -> tuple[bytes, str]:
        """(content, "") or (b"", why it cannot be read)."""
        if path in ("/dev/null", "/dev/zero"):
            return b"", ""
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
        return path in self.phone.files or self.phone.is_dir(path)

    def _tree(self, path: str) -> list[str]:
        """The keys of ``files`` at or under ``path``."""
        prefix = path.rstrip("/") + "/"
        return [p for p in self.phone.files if p == path or p.startswith(prefix)]

    def _ls(self, s: _Session, io: _Io, args: list[str]) -> int:
        opts, operands = _getopt(args, "la1dAhnF")
        o = {k for k, _ in opts}
        errors, blocks = [], []
        with self.phone.lock:
            now = self.phone.device.now().strftime("%Y-%m-%d %H:%M")
            files, dirs = [], []
            for arg in operands or ["."]:
                path = self._path(s, arg)
                if path in self.phone.files or (path != "/" and "d" in o and self.phone.is_dir(path)):
                    files.append((arg, path))
                elif self.phone.is_dir(path):
                    dirs.append((arg, path))
                else:
                    errors.append(f"ls: {arg}: No such file or directory\n")

            def rows(entries: list[tuple[str, str]]) -> str:
                if "l" not in o:
                    return "".join(name + "\n" for name, _ in entries)
                stats = [(name, p not in self.phone.files, len(self.phone.files.get(p, b"")) or 4096)
                         for name, p in entries]
                width = max((len(str(size)) for _, _, size in stats), default=1)
                return "".join(f"{'drwxrwx--x 2' if is_dir else '-rw-rw---- 1'} root root {size:>{width}} {now} "
                               f"{name}\n" for name, is_dir, size in stats)

            if files:
                blocks.append(rows(files))
            for arg, path in dirs:
                names = [n for n in self.phone.list_dir(path) if o & {"a", "A"} or not n.startswith(".")]
                entries = [(n, posixpath.join(path, n)) for n in names]
                total = sum(-(-len(self.phone.files.get(p, b"")) // 4096) * 4 for _, p in entries)
                blocks.append((f"{arg}:\n" if len(files) + len(dirs) > 1 else "")
                              + (f"total {total}\n" if "l" in o else "") + rows(entries))
        io.complain("".join(errors))
        io.say("\n".join(blocks))
        return 1 if errors else 0

    def _mkdir(self, s: _Session, io: _Io, args: list[str]) -> int:
        opts, operands = _getopt(args, "pv", "m")
        parents = any(k == "p" for k, _ in opts)
        if not operands:
            raise _UsageError("Needs 1 argument")
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

    def _rm(self, s: _Session, io: _Io, args: list[str]) -> int:
        opts, operands = _getopt(args, "frRiv")
        o = {k for k, _ in opts}
        force, recursive = "f" in o, bool(o & {"r", "R"})
        if not operands and not force:
            raise _UsageError("Needs 1 argument")
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

    def _rmdir(self, s: _Session, io: _Io, args: list[str]) -> int:
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

    def _cp(self, s: _Session, io: _Io, args: list[str]) -> int:
        return self._copy(s, io, args, "cp")

    def _mv(self, s: _Session, io: _Io, args: list[str]) -> int:
        return self._copy(s, io, args, "mv")

    def _copy(self, s: _Session, io: _Io, args: list[str], name: str) -> int:
        opts, operands = _getopt(args, "rRafpnvuHLP" if name == "cp" else "fnvi")
        recursive = name == "mv" or bool({k for k, _ in opts} & {"r", "R", "a"})
        if len(operands) < 2:
            raise _UsageError("Needs 2 arguments")
        *sources, dest_arg = operands
        errors = []
        with self.phone.lock:
            dest = self._path(s, dest_arg)
            into = self.phone.is_dir(dest)
            if len(sources) > 1 and not into:
                raise _UsageError(f"'{dest_arg}' not directory")
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

    def _touch(self, s: _Session, io: _Io, args: list[str]) -> int:
        _, operands = _getopt(args, "acmh", "dtr")
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

    def _chmod(self, s: _Session, io: _Io, args: list[str]) -> int:
        return self._set_owner_or_mode(s, io, args, "chmod")

    def _chown(self, s: _Session, io: _Io, args: list[str]) -> int:
        return self._set_owner_or_mode(s, io, args, "chown")

    def _set_owner_or_mode(self, s: _Session, io: _Io, args: list[str], name: str) -> int:
        """The simulated phone keeps no owners or modes: the command checks its paths and changes nothing."""
        operands = [a for a in args if a not in ("-R", "-h", "-v", "-f")]
        if len(operands) < 2:
            raise _UsageError("Needs 2 arguments")
        with self.phone.lock:
            errors = [f"{name}: {arg}: No such file or directory\n" for arg in operands[1:]
                      if not self._exists(self._path(s, arg))]
        io.complain("".join(errors))
        return 1 if errors else 0
