"""The served phone's processes and kernel, as ``ps``, ``pidof``, ``kill``, ``uname`` and ``/proc`` show them.

The processes are those of an Android 10 emulator after boot, with the pids and uids its log prints (the boot log's
``Start proc`` lines, ``vlui/android/data/boot_log.yaml``; system_server, zygote and the launcher of
:mod:`vlui.android.apps` and :mod:`vlui.served.configure`), then the apps the phone runs now, each with the pid its
``Start proc`` line gave it (``DeviceState.pids``), then the shell. A device runs a few hundred processes (kernel
threads, HALs, daemons); the simulated phone lists the ones tools look for, a deviation said in docs/adb.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from vlui.android.apps import LAUNCHER_PKG, SYSTEM_PID, SYSTEMUI_PID, SYSTEMUI_UID, app_uid, apps
from vlui.served.configure import LAUNCHER_PID, LAUNCHER_UID, ZYGOTE_PID
from vlui.served.phone import ServedPhone

# the kernel of the release's emulator image (system-images;android-29;google_apis;x86_64: goldfish 4.14). The
# release string's build stamp is this image's shape; it was not read off an image here.
KERNEL_RELEASE = "4.14.112+"
KERNEL_VERSION = "#1 SMP PREEMPT Mon Aug 2 18:32:17 UTC 2021"
MACHINE = "x86_64"
NODENAME = "localhost"
PROC_VERSION = (f"Linux version {KERNEL_RELEASE} (android-build@abfarm-east4-101) (Android (5484270 based on "
                f"r353983c) clang version 9.0.3) {KERNEL_VERSION}\n")

ADBD_PID = 1871  # adbd, restarted as root by ``adb root`` after the framework came up
SHELL_PID = 3987  # the shell an adb command runs in (``$$``, the pid of its ``log`` lines)
IME_PID = 1655  # the keyboard's process (dumpsys input_method's client)
IME_UID = 10106


@dataclass(frozen=True)
class Process:
    """One process as ``ps`` prints it: the user's name, pid, parent, virtual size and resident size (KiB), the
    kernel function it waits in, its state letter and its name (``cmdline``'s first word)."""

    user: str
    pid: int
    ppid: int
    vsz: int
    rss: int
    wchan: str
    state: str
    name: str

    @property
    def uid(self) -> int:
        return user_uid(self.user)


def user_name(uid: int) -> str:
    """A uid as Android names it (bionic's getpwuid): ``root``, ``system``, ``shell``, ``u0_a102``."""
    return {0: "root", 1000: "system", 1036: "logd", 2000: "shell"}.get(uid, f"u0_a{uid - 10000}")


def user_uid(name: str) -> int:
    """:func:`user_name` the other way: the uid of ``root``, ``system``, ``u0_a102``, or of a number."""
    named = {"root": 0, "system": 1000, "logd": 1036, "shell": 2000}
    if name in named:
        return named[name]
    if name.startswith("u0_a") and name[4:].isdigit():
        return 10000 + int(name[4:])
    return int(name) if name.isascii() and name.isdigit() else -1


# what every emulator runs before any app: (uid, pid, ppid, vsz, rss, wchan, state, name)
_SYSTEM = (
    (0, 1, 0, 56552, 4384, "SyS_epoll_wait", "S", "init"),
    (0, 2, 0, 0, 0, "kthreadd", "S", "[kthreadd]"),
    (0, 60, 1, 11444, 2640, "SyS_epoll_wait", "S", "ueventd"),
    (1036, 75, 1, 25076, 6660, "SyS_rt_sigsuspend", "S", "logd"),
    (1000, 77, 1, 11456, 3116, "binder_thread_read", "S", "servicemanager"),
    (1000, 78, 1, 16812, 4712, "binder_thread_read", "S", "hwservicemanager"),
    (0, 82, 1, 36100, 7536, "binder_thread_read", "S", "vold"),
    (1000, 178, 1, 77084, 20604, "SyS_epoll_wait", "S", "surfaceflinger"),
    (0, ZYGOTE_PID, 1, 1403588, 131804, "poll_schedule_timeout", "S", "zygote"),
    (1000, SYSTEM_PID, ZYGOTE_PID, 1735644, 225752, "SyS_epoll_wait", "S", "system_server"),
    (SYSTEMUI_UID, SYSTEMUI_PID, ZYGOTE_PID, 1493304, 162484, "SyS_epoll_wait", "S", "com.android.systemui"),
    (IME_UID, IME_PID, ZYGOTE_PID, 1432116, 109356, "SyS_epoll_wait", "S", "com.google.android.inputmethod.latin"),
    (0, ADBD_PID, 1, 23412, 3448, "SyS_epoll_wait", "S", "adbd"),
    (LAUNCHER_UID, LAUNCHER_PID, ZYGOTE_PID, 1520700, 171164, "SyS_epoll_wait", "S", LAUNCHER_PKG),
)


def processes(phone: ServedPhone) -> list[Process]:
    """The phone's processes by pid, the shell last: the system's, then the apps running now (a task's process
    that was killed is gone until the app starts again). The caller holds the phone's lock."""
    procs = [Process(user_name(uid), pid, ppid, vsz, rss, wchan, state, name)
             for uid, pid, ppid, vsz, rss, wchan, state, name in _SYSTEM]
    st = phone.device.state
    for key in st.running:
        pid = st.pids.get(key)
        if pid is not None:
            procs.append(Process(user_name(app_uid(key)), pid, ZYGOTE_PID, 1402216, 98820, "SyS_epoll_wait", "S",
                                 apps()[key].package))
    procs.append(Process("root", SHELL_PID, ADBD_PID, 10784, 3004, "SyS_wait4", "S", "sh"))
    return sorted(procs, key=lambda p: p.pid)


def find(phone: ServedPhone, pid: int) -> Process | None:
    """The process ``pid``, or None. The caller holds the phone's lock."""
    return next((p for p in processes(phone) if p.pid == pid), None)


def app_of(phone: ServedPhone, pid: int) -> str | None:
    """The key of the app whose process is ``pid`` (None for a system process). The caller holds the lock."""
    st = phone.device.state
    return next((key for key in st.running if st.pids.get(key) == pid), None)


def proc_file(phone: ServedPhone, path: str) -> bytes | None:
    """A process's file under ``/proc/PID`` (``cmdline``, ``comm``, ``status``, ``stat``), or None for any other
    path. The caller holds the phone's lock."""
    parts = path.split("/")
    if len(parts) != 4 or parts[1] != "proc" or not (parts[2].isascii() and parts[2].isdigit()):
        return None
    p = find(phone, int(parts[2]))
    if p is None:
        return None
    comm = p.name.strip("[]")[-15:]  # the kernel keeps 15 characters of a task's name
    files = {
        "cmdline": b"" if p.name.startswith("[") else p.name.encode() + b"\0",
        "comm": f"{comm}\n".encode(),
        "stat": f"{p.pid} ({comm}) {p.state} {p.ppid} {p.pid} 0 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 0 "
                f"{p.vsz * 1024} {p.rss // 4}\n".encode(),
        "status": (f"Name:\t{comm}\nState:\t{p.state} (sleeping)\nTgid:\t{p.pid}\nPid:\t{p.pid}\nPPid:\t{p.ppid}\n"
                   f"Uid:\t{p.uid}\t{p.uid}\t{p.uid}\t{p.uid}\nGid:\t{p.uid}\t{p.uid}\t{p.uid}\t{p.uid}\n"
                   f"VmSize:\t{p.vsz:8d} kB\nVmRSS:\t{p.rss:8d} kB\n").encode(),
    }
    return files.get(parts[3])


PROC_PID_FILES = ("cmdline", "comm", "stat", "status")
