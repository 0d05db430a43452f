"""The phone's files: ``ls``, ``mkdir``, ``rm``, ``rmdir``, ``cp``, ``mv``, ``ln``, ``touch``, ``chmod``, ``chown``, and the
path functions the shell gives the other commands (:class:`~vlui.served.shell.context.ShellApi`: a typed path, reading,
writability as on a device, the shared storage's other names, the read-only ``/proc`` files)."""

from __future__ import annotations

import hashlib
import posixpath
import re
import zlib
from dataclasses import dataclass
from datetime import datetime

from vlui.android.logcat import EPOCH
from vlui.resources import read_yaml
from vlui.android.apps import app_uid
from vlui.served import DATA_DIR, processes
from vlui.served.device_files import APP_DATA_ROOTS, app_file, app_file_owner, app_files
from vlui.served.patterns import Pattern, PatternError, glob_regex
from vlui.served.phone import ServedPhone
from vlui.served.shell.context import Command, Io, Session, ShellApi, UsageError, getopt
from vlui.served.storage import name_too_long, read_only

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


_SYSTEM_BIN = read_yaml(DATA_DIR / "system_bin.yaml")
# the programs of the system's folders (/system/bin, /system/xbin): folder -> names, each a command of the shell
BIN_DIRS: dict[str, tuple[str, ...]] = {d: tuple(names) for d, names in _SYSTEM_BIN["folders"].items()}
TOYBOX: tuple[str, ...] = tuple(_SYSTEM_BIN["toybox"])  # those of toybox, which ``toybox NAME`` runs


# folders every Android 10 emulator has that hold no file of the phone's, listed by ``ls``: path -> names (the
# programs of BIN_DIRS and the processes' folders of /proc besides)
VIRTUAL_DIRS = {"/storage": ("emulated", "self"), "/storage/emulated": ("0",), "/storage/self": ("primary",),
                "/mnt": ("user",), "/mnt/user": ("0",), "/mnt/user/0": ("primary",), "/proc": (),
                "/system": ("bin", "xbin"), **{d: () for d in BIN_DIRS}}


# read-only kernel files, as the emulator's kernel shows them (the CPU is the emulator's virtual x86 processor)
PROC_FILES = {f"/proc/{p.name}": p.read_bytes() for p in sorted((DATA_DIR / "proc").iterdir())}
PROC_FILES["/proc/version"] = processes.PROC_VERSION.encode()


def system_file(phone: ServedPhone, path: str) -> bytes | None:
    """What a file the system holds reads as (a ``/proc`` file, a process's ``/proc/PID/...`` file, a program of
    BIN_DIRS, whose content the simulated phone does not have: empty), or None for a path that is none. The caller
    holds the lock."""
    if path in PROC_FILES:
        return PROC_FILES[path]
    folder, _, name = path.rpartition("/")
    if name in BIN_DIRS.get(folder, ()):
        return b""
    if path.startswith(APP_DATA_ROOTS):
        return app_file(phone.device, path)
    return processes.proc_file(phone, path) if path.startswith("/proc/") else None


def _app_made(phone: ServedPhone, path: str) -> str:
    """Why the file at ``path`` cannot be removed or moved where it is one the simulated phone makes from an app's
    state (a device would let root remove it, and the app write it anew), else "". The caller holds the lock."""
    owner = app_file_owner(path) if path not in phone.files else None
    if owner is None or app_file(phone.device, path) is None:
        return ""
    return f"the simulated phone makes this file from the {owner} app's state, so it stays"


def _app_dirs(phone: ServedPhone, path: str) -> dict[str, set[str]]:
    """The folders that hold the apps' own files vlui makes (:func:`vlui.served.device_files.app_files`) and their
    parents under ``/data``, each with the names in it, where ``path`` may be one of them (else none). A file is
    named only where the app has written it. The caller holds the lock."""
    if not (path + "/").startswith(APP_DATA_ROOTS) and path not in ("/data", "/data/user_de"):
        return {}
    folders: dict[str, set[str]] = {}
    for file, make in app_files(phone.device).items():
        child, parent = file, posixpath.dirname(file)
        written = make() is not None
        while parent != "/data":
            if written or child != file:
                folders.setdefault(parent, set()).add(posixpath.basename(child))
            else:
                folders.setdefault(parent, set())
            child, parent = parent, posixpath.dirname(parent)
        folders.setdefault("/data", set()).add(posixpath.basename(child))
    return folders


def _process_dir(phone: ServedPhone, path: str) -> bool:
    """Whether ``path`` is ``/proc/PID`` of a live process. The caller holds the lock."""
    folder, _, name = path.rpartition("/")
    return folder == "/proc" and name.isascii() and name.isdigit() and processes.find(phone, int(name)) is not None


def resolve_storage(path: str) -> str:
    """``path`` (absolute, normalised) with another name of the shared storage folder replaced by /sdcard."""
    for alias in STORAGE_ALIASES:
        if path == alias or path.startswith(alias + "/"):
            return SDCARD + path[len(alias):]
    return path


def phone_path(s: Session, path: str) -> str:
    """The phone's path of ``path`` typed in ``s``: absolute, normalised, the storage links followed."""
    return resolve_storage(_lexical(s, path))


def _lexical(s: Session, path: str) -> str:
    norm = posixpath.normpath(posixpath.join(s.cwd, path))
    return "/" + norm.lstrip("/")


def read_file(phone: ServedPhone, path: str) -> tuple[bytes, str]:
    """(content, "") or (b"", why it cannot be read)."""
    if path in ("/dev/null", "/dev/zero"):
        return b"", ""
    if name_too_long(path):
        return b"", "File name too long"
    with phone.lock:
        data = phone.files.get(path)
        if data is None:
            data = system_file(phone, path)
        if data is not None:
            return data, ""
        return b"", "Is a directory" if is_dir(phone, path) else "No such file or directory"


def unwritable(phone: ServedPhone, path: str) -> str:
    """Why ``path`` cannot be written ("" when it can). The caller holds the lock."""
    if name_too_long(path):
        return "File name too long"
    if is_dir(phone, path):
        return "Is a directory"
    parent = posixpath.dirname(path)
    while parent != "/" and parent not in phone.files:
        parent = posixpath.dirname(parent)
    if parent != "/":
        return "Not a directory"
    if not is_dir(phone, posixpath.dirname(path)):
        return "No such file or directory"
    return "Read-only file system" if read_only(path) else ""


def exists(phone: ServedPhone, path: str) -> bool:
    """Whether ``path`` (the phone's) is a file or a directory, the system's folders and files included. The caller
    holds the lock."""
    return path in phone.files or system_file(phone, path) is not None or is_dir(phone, path)


def _tree(phone: ServedPhone, path: str) -> list[str]:
    """The keys of ``files`` at or under ``path`` (found through the directories' index)."""
    return phone.files.under(path)


def ls(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    opts, operands = getopt(args, "la1dAhnFL")
    o = {k for k, _ in opts}
    errors, blocks = [], []
    with sh.phone.lock:
        now = sh.phone.device.now().strftime("%Y-%m-%d %H:%M")
        files, dirs = [], []
        for arg in operands or ["."]:
            lexical = _lexical(s, arg)
            path = resolve_storage(lexical)
            # as toybox: a link named on the command line is shown itself with -l or -d, unless it ends in "/"
            if lexical in SYMLINKS and o & {"l", "d"} and not arg.endswith("/") and "L" not in o:
                files.append((arg, lexical, True))
            elif (path in sh.phone.files or system_file(sh.phone, path) is not None
                  or ("d" in o and is_dir(sh.phone, path))):
                files.append((arg, path, False))
            elif is_dir(sh.phone, path):
                dirs.append((arg, path))
            else:
                errors.append(f"ls: {arg}: No such file or directory\n")

        def row(name: str, p: str, link: bool) -> tuple[str, str, int, str, str]:
            """(mode and links, owner and group, size, date, name) of one entry."""
            st = entry_stat(sh.phone, p, link)
            shown = f"{name} -> {st.target}" if link else name
            return f"{st.mode} {st.links}", f"{st.owner} {st.group}", st.size, st.date or now, shown

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
            names = [n for n in dir_names(sh.phone, path) if o & {"a", "A"} or not n.startswith(".")]
            entries = [(n, p, p in SYMLINKS) for n in names for p in [posixpath.join(path, n)]]
            total = sum(-(-len(sh.phone.files.get(p) or app_file(sh.phone.device, p) or b"") // 4096) * 4
                        for _, p, _ in entries)
            blocks.append((f"{arg}:\n" if len(files) + len(dirs) > 1 else "")
                          + (f"total {total}\n" if "l" in o else "") + rows(entries))
    io.complain("".join(errors))
    io.say("\n".join(blocks))
    return 1 if errors else 0


@dataclass(frozen=True)
class EntryStat:
    """What ``ls -l`` and ``stat`` show of an entry: mode (``-rw-rw----``), links, owner, group, size, date (None: the
    phone's clock now) and a link's target ("" for none)."""

    mode: str
    links: int
    owner: str
    group: str
    size: int
    date: str | None
    target: str = ""


def entry_stat(phone: ServedPhone, p: str, link: bool) -> EntryStat:
    """An entry's :class:`EntryStat`, as the device shows it: the shared storage's files ``root sdcard_rw``, the
    system's programs ``root shell`` from the image's build, /proc's files read-only, links as they are made.
    ``link``: ``p`` is a link of SYMLINKS shown as itself. The caller holds the lock."""
    if link:
        mode, target, date = SYMLINKS[p]
        return EntryStat(mode, 1, "root", "root", len(target), date, target)
    group = "sdcard_rw" if p == SDCARD or p.startswith(SDCARD + "/") else "root"
    if p.startswith("/proc/") and not is_dir(phone, p):
        return EntryStat("-r--r--r--", 1, "root", "root", 0, None)
    owner = app_file_owner(p) if p not in phone.files else None
    if owner is not None:  # an app's own file or folder: its uid's, as the app made it
        user = processes.user_name(app_uid(owner))
        if is_dir(phone, p):
            return EntryStat("drwxrwx--x", 2, user, user, 4096, None)
        return EntryStat("-rw-rw----", 1, user, user, len(system_file(phone, p) or b""), None)
    if posixpath.dirname(p) in BIN_DIRS:
        return EntryStat("-rwxr-xr-x", 1, "root", "shell", 0, "2009-01-01 00:00")
    if is_dir(phone, p):
        return EntryStat("drwxrwx--x", 2, "root", group, 4096, None)
    return EntryStat("-rw-rw----", 1, "root", group, len(phone.files.get(p, b"")), None)


def is_dir(phone: ServedPhone, path: str) -> bool:
    """Whether ``path`` (the phone's) is a directory: the phone's, or one of the system's folders it lists (a live
    process's folder of /proc too). The caller holds the lock."""
    return (phone.is_dir(path) or path in VIRTUAL_DIRS or _process_dir(phone, path)
            or path in _app_dirs(phone, path))


def dir_names(phone: ServedPhone, path: str) -> list[str]:
    """What directory ``path`` holds, as ``ls`` and ``adb ls`` list it: the phone's files and directories, the
    system's folders and links, and the ``/proc`` files. The caller holds the lock."""
    names = set(phone.list_dir(path)) | set(VIRTUAL_DIRS.get(path, ())) | set(BIN_DIRS.get(path, ()))
    names |= {p[len(path.rstrip("/")) + 1:] for p in (*SYMLINKS, *VIRTUAL_DIRS, *PROC_FILES)
              if posixpath.dirname(p) == path}
    names |= _app_dirs(phone, path).get(path, set())
    if path == "/proc":
        names |= {str(p.pid) for p in processes.processes(phone)}
    elif _process_dir(phone, path):
        names |= set(processes.PROC_PID_FILES)
    return sorted(names)


def mkdir(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    opts, operands = getopt(args, "pv", "m")
    parents = any(k == "p" for k, _ in opts)
    if not operands:
        raise UsageError("Needs 1 argument")
    errors = []
    with sh.phone.lock:
        for arg in operands:
            path = phone_path(s, arg)
            if exists(sh.phone, path):
                if not (parents and sh.phone.is_dir(path)):
                    errors.append(f"mkdir: '{arg}': File exists\n")
                continue
            problem = unwritable(sh.phone, path)
            if problem == "No such file or directory" and parents:
                problem = unwritable(sh.phone, _nearest_dir_below(sh.phone, path))
            if problem:
                errors.append(f"mkdir: '{arg}': {problem}\n")
            else:
                sh.phone.make_dir(path)
    io.complain("".join(errors))
    return 1 if errors else 0


def _nearest_dir_below(phone: ServedPhone, path: str) -> str:
    """The highest missing directory on the way to ``path`` (what ``mkdir -p`` makes first)."""
    while not exists(phone, posixpath.dirname(path)):
        path = posixpath.dirname(path)
    return path


def rm(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    opts, operands = getopt(args, "frRiv")
    o = {k for k, _ in opts}
    force, recursive = "f" in o, bool(o & {"r", "R"})
    if not operands and not force:
        raise UsageError("Needs 1 argument")
    errors = []
    for arg in operands:
        path = phone_path(s, arg)
        with sh.phone.lock:
            if read_only(path) and exists(sh.phone, path):
                errors.append(f"rm: {arg}: Read-only file system\n")
                continue
            kept = _app_made(sh.phone, path)
            if kept:
                errors.append(f"rm: {arg}: {kept}\n")
                continue
            if path in sh.phone.files:
                gone = [path]
            elif not sh.phone.is_dir(path):
                if not force:
                    errors.append(f"rm: {arg}: No such file or directory\n")
                continue
            elif not recursive:
                errors.append(f"rm: {arg}: Is a directory\n")
                continue
            else:
                gone = _tree(sh.phone, path)
        _in_batches(sh.phone, gone, lambda p: sh.phone.files.pop(p, None))
        with sh.phone.lock:
            sh.phone.make_dir(posixpath.dirname(path))  # a directory stays when its last file goes
    io.complain("".join(errors))
    return 1 if errors else 0


BATCH = 1024  # entries a command changes at a time under the phone's lock: other clients are served in between


def _in_batches(phone: ServedPhone, items: list, act) -> None:
    """``act(item)`` for each of ``items``, :data:`BATCH` of them under the phone's lock at a time, so that a command
    over a large tree (``rm -r``, ``cp -r``) holds the lock for what a batch costs, not for the whole tree (on a
    device, too, the tree changes file by file while other processes run)."""
    for start in range(0, len(items), BATCH):
        with phone.lock:
            for item in items[start:start + BATCH]:
                act(item)


def rmdir(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    errors = []
    with sh.phone.lock:
        for arg in args:
            path = phone_path(s, arg)
            if not sh.phone.is_dir(path):
                why = "Not a directory" if path in sh.phone.files else "No such file or directory"
                errors.append(f"rmdir: '{arg}': {why}\n")
            elif sh.phone.list_dir(path):
                errors.append(f"rmdir: '{arg}': Directory not empty\n")
            elif read_only(path):
                errors.append(f"rmdir: '{arg}': Read-only file system\n")
            else:
                sh.phone.files.pop(path.rstrip("/") + "/", None)
    io.complain("".join(errors))
    return 1 if errors else 0


def cp(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    return _copy(sh, s, io, args, "cp")


def mv(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    return _copy(sh, s, io, args, "mv")


def _copy(sh: ShellApi, s: Session, io: Io, args: list[str], name: str) -> int:
    opts, operands = getopt(args, "rRafpnvuHLP" if name == "cp" else "fnvi")
    recursive = name == "mv" or bool({k for k, _ in opts} & {"r", "R", "a"})
    if len(operands) < 2:
        raise UsageError("Needs 2 arguments")
    *sources, dest_arg = operands
    errors = []
    files = sh.phone.files
    with sh.phone.lock:
        dest = phone_path(s, dest_arg)
        into = sh.phone.is_dir(dest)
    if len(sources) > 1 and not into:
        raise UsageError(f"'{dest_arg}' not directory")
    for arg in sources:
        src = phone_path(s, arg)
        target = posixpath.join(dest, posixpath.basename(src)) if into else dest
        with sh.phone.lock:
            problem = _copy_problem(sh.phone, name, arg, src, dest_arg, target, recursive)
            if problem:
                errors.append(problem)
                continue
            system = system_file(sh.phone, src) if src not in files else None  # cp /proc/cpuinfo: its content
            moved = ({src: target} if src in files or system is not None
                     else {p: target + p[len(src):] for p in _tree(sh.phone, src)} or {src + "/": target + "/"})
        _in_batches(sh.phone, list(moved.items()),
                    lambda pair: files.__setitem__(pair[1], files.get(pair[0], system or b"")))
        if name == "mv":
            _in_batches(sh.phone, list(moved), lambda old: files.pop(old, None))
            with sh.phone.lock:
                sh.phone.make_dir(posixpath.dirname(src))
    io.complain("".join(errors))
    return 1 if errors else 0


def _copy_problem(phone: ServedPhone, name: str, arg: str, src: str, dest_arg: str, target: str,
                  recursive: bool) -> str:
    """Why ``cp`` or ``mv`` cannot copy ``src`` to ``target`` (its error line), or "". The caller holds the lock."""
    if not exists(phone, src):
        return f"{name}: {arg}: No such file or directory\n"
    if src == target or target.startswith(src.rstrip("/") + "/"):
        return f"{name}: '{arg}' and '{dest_arg}' are the same or nested\n"
    is_file = src in phone.files or system_file(phone, src) is not None
    if name == "mv" and read_only(src):
        return f"mv: '{arg}': Read-only file system\n"
    if name == "mv" and _app_made(phone, src):
        return f"mv: '{arg}': {_app_made(phone, src)}\n"
    if not (is_file or recursive):
        return f"cp: Skipped dir '{arg}'\n"
    problem = unwritable(phone, target)
    if problem and (is_file or problem != "Is a directory"):
        return f"{name}: '{dest_arg}': {problem}\n"
    return ""


def ln(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``ln [-sfnvT] [-t DIR] [FROM...] TO``: toybox's, its arguments placed as ``cp`` places them and each failure
    one line, ``ln: cannot create symbolic link from 'FROM' to 'TO': WHY``, with the error the device's kernel gives:
    the shared storage (sdcardfs) holds no links (``Operation not permitted``), the system's partitions are read-only.
    Deviation: the phone's files hold no links of their own, so a link a device would make (in ``/data``) is refused
    with a line that says so."""
    opts, operands = getopt(args, "Tvnfs", "t")
    o = {k for k, _ in opts}
    if not operands:
        raise UsageError("Needs 1 argument")
    dest_arg = next((v for k, v in reversed(opts) if k == "t"), None)
    if dest_arg is None:
        dest_arg = operands.pop() if len(operands) > 1 else "."
    if "T" in o and len(operands) > 1:
        raise UsageError("Max 2 arguments")
    kind = "symbolic" if "s" in o else "hard"
    errors = []
    with sh.phone.lock:
        dest = phone_path(s, dest_arg)
        into = sh.phone.is_dir(dest) and not ({"n", "T"} & o and _lexical(s, dest_arg) in SYMLINKS)
        if (into and "T" in o) or (not into and exists(sh.phone, dest) and (len(operands) > 1 or "t" in o)):
            raise UsageError(f"'{dest_arg}' {'is' if into else 'not'} a directory")
        for arg in operands:
            new_arg = f"{dest_arg}/{posixpath.basename(arg)}" if into else dest_arg
            why = _link_problem(sh.phone, phone_path(s, arg), phone_path(s, new_arg), kind, "f" in o)
            errors.append(f"ln: cannot create {kind} link from '{arg}' to '{new_arg}': {why}\n")
    io.complain("".join(errors))
    return 1 if errors else 0


def _link_problem(phone: ServedPhone, src: str, new: str, kind: str, force: bool) -> str:
    """Why the kernel refuses to link ``new`` to ``src`` (a ``kind`` link), in its order of checks: a missing source
    (hard links only), a missing folder, a name taken (unless ``force``), a read-only partition, sdcardfs, another file
    system; or, where a device would make it, the simulated phone's deviation. The caller holds the lock."""
    if kind == "hard" and not exists(phone, src):
        return "No such file or directory"
    problem = unwritable(phone, new)
    if problem in ("File name too long", "Not a directory", "No such file or directory"):
        return problem
    if exists(phone, new) and not force:
        return "File exists"
    if read_only(new) or problem == "Read-only file system":
        return "Read-only file system"
    if new == SDCARD or new.startswith(SDCARD + "/"):
        return "Operation not permitted"
    if kind == "hard" and (is_dir(phone, src) or read_only(src)):
        return "Operation not permitted" if is_dir(phone, src) else "Invalid cross-device link"
    return "the simulated phone keeps no links of its own (cp copies a file)"


def touch(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    _, operands = getopt(args, "acmh", "dtr")
    errors = []
    with sh.phone.lock:
        for arg in operands:
            path = phone_path(s, arg)
            problem = "" if exists(sh.phone, path) else unwritable(sh.phone, path)
            if problem:
                errors.append(f"touch: '{arg}': {problem}\n")
            elif not exists(sh.phone, path):
                sh.phone.files[path] = b""
    io.complain("".join(errors))
    return 1 if errors else 0


def chmod(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    return _set_owner_or_mode(sh, s, io, args, "chmod")


def chown(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    return _set_owner_or_mode(sh, s, io, args, "chown")


def _set_owner_or_mode(sh: ShellApi, s: Session, io: Io, args: list[str], name: str) -> int:
    """The simulated phone keeps no owners or modes: the command checks its paths and changes nothing."""
    operands = [a for a in args if a not in ("-R", "-h", "-v", "-f")]
    if len(operands) < 2:
        raise UsageError("Needs 2 arguments")
    with sh.phone.lock:
        errors = [f"{name}: {arg}: No such file or directory\n" for arg in operands[1:]
                  if not exists(sh.phone, phone_path(s, arg))]
    io.complain("".join(errors))
    return 1 if errors else 0


def md5sum(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``md5sum [FILE...]``: toybox's lines, ``HASH  NAME`` (standard input, or ``-``, when none is named)."""
    _, operands = getopt(args, "bcs")
    status = 0
    for arg in operands or ["-"]:
        data, problem = (io.inp.read(), "") if arg == "-" else sh.read(sh.path(s, arg))
        if problem:
            io.complain(f"md5sum: {arg}: {problem}\n")
            status = 1
            continue
        io.say(f"{hashlib.md5(data).hexdigest()}  {arg}\n")
    return status


def _kind(phone: ServedPhone, path: str, follow: bool) -> str:
    """``l`` (a link, unless ``follow``), ``d``, ``f``, or "" for nothing. The caller holds the lock."""
    if not follow and path in SYMLINKS:
        return "l"
    real = resolve_storage(path)
    if is_dir(phone, real):
        return "d"
    return "f" if real in phone.files or system_file(phone, real) is not None else ""


class _FindTest:
    """One test of ``find``'s expression: (kind, value, negated)."""

    def __init__(self, kind: str, value: str, negated: bool) -> None:
        self.kind, self.value, self.negated = kind, value, negated
        self.pattern = None
        if kind in ("name", "iname", "path"):
            try:
                self.pattern = Pattern(("(?i)" if kind == "iname" else "") + glob_regex(value, path=False))
            except PatternError:
                self.pattern = Pattern(r"\b\B")

    def holds(self, shown: str, kind: str) -> bool:
        if self.kind == "type":
            found = kind == self.value
        else:
            found = self.pattern.fullmatch(shown if self.kind == "path" else posixpath.basename(shown) or shown)
        return bool(found) != self.negated


def find(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``find [PATH...] [-name PAT] [-iname PAT] [-path PAT] [-type f|d|l] [-maxdepth N] [-mindepth N] [!] [-print]``:
    toybox's, the tests joined by "and"; every path found under each PATH (``.`` when none), each folder before what
    it holds, names in order, links not followed (``find /sdcard`` prints the link alone, ``find /sdcard/`` its
    folder's files, as on a device). It looks at each entry once, between ticks of the CPU budget."""
    k = next((i for i, a in enumerate(args) if a.startswith("-") or a in ("!", "(")), len(args))
    roots, expr = args[:k] or ["."], args[k:]
    tests: list[_FindTest] = []
    depth = [0, 1 << 30]
    negated = False
    i = 0
    while i < len(expr):
        word = expr[i]
        i += 1
        if word in ("!", "-not"):
            negated = not negated
            continue
        if word in ("-print", "-a", "-and"):
            continue
        if word not in ("-name", "-iname", "-path", "-type", "-maxdepth", "-mindepth"):
            raise UsageError(f"Unknown option '{word}'")
        if i == len(expr):
            raise UsageError(f"'{word}' needs 1 arg")
        value = expr[i]
        i += 1
        if word in ("-maxdepth", "-mindepth"):
            depth[word == "-maxdepth"] = _depth(value)
        elif word == "-type" and value not in ("f", "d", "l"):
            raise UsageError(f"bad -type '{value}'")
        else:
            tests.append(_FindTest(word[1:], value, negated))
        negated = False
    status = 0
    for root in roots:
        with sh.phone.lock:
            kind = _kind(sh.phone, _lexical(s, root), follow=root.endswith("/"))  # "/sdcard/" follows the link
        if not kind:
            io.complain(f"find: '{root}': No such file or directory\n")
            status = 1
            continue
        stack = [(root, _lexical(s, root), kind, 0)]
        while stack:
            sh.tick(s)
            shown, path, kind, level = stack.pop()
            if level >= depth[0] and all(t.holds(shown, kind) for t in tests):
                io.say(shown + "\n")
            if kind == "d" and level < depth[1]:
                with sh.phone.lock:
                    real = resolve_storage(path)
                    children = [(posixpath.join(shown, n), posixpath.join(path, n)) for n in dir_names(sh.phone, real)]
                    children = [(c, p, _kind(sh.phone, p, follow=False), level + 1) for c, p in children]
                stack.extend(reversed(children))
    return status


_UIDS = {"root": 0, "shell": 2000, "sdcard_rw": 1015}
_STAT_FORMAT = ("  File: %N\n  Size: %s\t Blocks: %b\t IO Blocks: 512\t%F\nDevice: %Dh/%dd\t Inode: %i\t Links: %h\n"
                "Access: (%a/%A)\tUid: (%5u/%8U)\tGid: (%5g/%8G)\nAccess: %x\nModify: %y\nChange: %z\n")


def stat(sh: ShellApi, s: Session, io: Io, args: list[str]) -> int:
    """``stat [-L] [-c FORMAT] FILE...``: toybox's, its default layout or FORMAT's ``%n %N %s %b %B %F %a %A %u %U
    %g %G %h %i %d %D %x %X %y %Y %z %Z %%``. A link is shown as itself unless ``-L`` or a trailing ``/``. The
    simulated phone keeps no times, inodes or devices of its own: every time is its clock's, an inode a hash of the
    path and the device /data's."""
    opts, operands = getopt(args, "Lt", "c")
    if not operands:
        raise UsageError("Needs 1 argument")
    follow = any(k == "L" for k, _ in opts)
    fmt = next((v + "\n" for k, v in reversed(opts) if k == "c"), _STAT_FORMAT)
    status = 0
    for arg in operands:
        lexical = _lexical(s, arg)
        with sh.phone.lock:
            kind = _kind(sh.phone, lexical, follow=follow or arg.endswith("/"))
            st = entry_stat(sh.phone, lexical if kind == "l" else resolve_storage(lexical), kind == "l") if kind else None
            now = sh.phone.device.now()
        if st is None:
            io.complain(f"stat: cannot stat '{arg}': No such file or directory\n")
            status = 1
            continue
        io.say(_stat_line(fmt, arg, kind, st, now))
    return status


def _stat_line(fmt: str, arg: str, kind: str, st: EntryStat, now: datetime) -> str:
    """One file's ``stat`` in ``fmt``; ``kind``: ``f``, ``d`` or ``l``."""
    stamp = now.strftime("%Y-%m-%d %H:%M:%S.000000000 +0000")
    epoch = str(int((now - EPOCH).total_seconds()))
    perms = "".join("1" if c != "-" else "0" for c in st.mode[1:])
    kinds = {"l": "symbolic link", "d": "directory", "f": "regular file" if st.size else "regular empty file"}
    values = {
        "n": arg, "N": f"{arg} -> {st.target}" if kind == "l" else arg, "s": str(st.size),
        "b": str(-(-st.size // 4096) * 8), "B": "512", "F": kinds[kind], "a": f"{int(perms, 2):o}", "A": st.mode,
        "u": str(_UIDS.get(st.owner, 0)), "U": st.owner, "g": str(_UIDS.get(st.group, 0)), "G": st.group,
        "h": str(st.links), "i": str(zlib.crc32(arg.encode("utf-8", "surrogateescape")) & 0xFFFFF), "d": "64773",
        "D": "fd05", "x": stamp, "y": stamp, "z": stamp, "X": epoch, "Y": epoch, "Z": epoch, "%": "%",
    }

    def one(m: re.Match[str]) -> str:
        width, key = m.group(1), m.group(2)
        value = values.get(key)
        if value is None:
            return m.group(0)
        return value.rjust(int(width)) if width else value

    return re.sub(r"%(\d{0,3})([a-zA-Z%])", one, fmt)


def _depth(value: str) -> int:
    if not (value.isascii() and value.isdigit()) or len(value) > 9:
        raise UsageError(f"bad depth '{value}'")
    return int(value)


COMMANDS: dict[str, Command] = {"ls": ls, "mkdir": mkdir, "rm": rm, "rmdir": rmdir, "cp": cp, "mv": mv, "touch": touch,
                                "chmod": chmod, "chown": chown, "md5sum": md5sum, "find": find, "stat": stat,
                                "ln": ln}
