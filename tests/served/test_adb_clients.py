"""What ADB clients nobody here wrote expect of a phone, checked against the served simulated phone with the real adb
CLI (through a private adb server) and adbutils: top-level ``adb logcat``, the shell_v2 protocol (exit statuses,
stderr of its own), and the stream flow control that keeps a host from queueing unbounded input."""

from __future__ import annotations

import re
import time

import pytest

from tests.served.test_adbd import RawHost
from vlui.served import configure
from vlui.served.adbd import A_CNXN, A_OKAY, A_OPEN, A_WRTE, MAX_PAYLOAD, QUEUE_LIMIT, AdbDaemon
from vlui.served.phone import ServedPhone
from vlui.served.private_adb import PrivateAdb


@pytest.fixture(scope="module")
def pa(adb_client):
    """The served phone behind a private server of each adb client (tests/served/conftest.py: adb_client)."""
    with PrivateAdb("000", noise=False, adb_path=adb_client) as pa:
        yield pa


def adb(pa: PrivateAdb, *args: str, **kwargs):
    return pa.adb("-s", pa.serial, *args, **kwargs)


# ---------------------------------------------------------------------------------------------- shell_v2
def test_adb_shell_reports_exit_statuses_and_keeps_stderr_apart(pa):
    assert "shell_v2" in adb(pa, "features").stdout
    assert adb(pa, "shell", "false").returncode == 1
    assert adb(pa, "shell", "true").returncode == 0
    missing = adb(pa, "shell", "no-such-command")
    assert (missing.returncode, missing.stdout, missing.stderr) == (
        127, "", "/system/bin/sh: no-such-command: not found\n")
    both = adb(pa, "shell", "echo out; cat /sdcard/missing; exit 3")
    assert (both.returncode, both.stdout, both.stderr) == (3, "out\n", "cat: /sdcard/missing: No such file or "
                                                                        "directory\n")


def test_adbutils_shell2_over_v2(pa):
    device = pa.device()
    result = device.shell2("echo hello; ls /nowhere", v2=True)
    assert (result.returncode, result.stdout, result.stderr) == (
        1, "hello\n", "ls: /nowhere: No such file or directory\n")
    assert device.shell2("exit 42", v2=True).returncode == 42
    assert device.shell("echo legacy") == "legacy"  # the legacy shell: service still works


def test_adb_shell_reading_a_script_from_stdin(pa):
    """No terminal: the shell runs the lines it reads, with no prompt and no echo, as ``sh`` reading a pipe."""
    out = adb(pa, "shell", input="cd /sdcard\npwd\necho $?\nexit 5\necho never\n")
    assert (out.returncode, out.stdout) == (5, "/sdcard\n0\n")


# ---------------------------------------------------------------------------------------------- adb logcat
def test_top_level_adb_logcat(pa):
    adb(pa, "logcat", "-c")
    assert adb(pa, "shell", "input keyevent 3; am start -n com.android.settings/.Settings").returncode == 0
    dump = adb(pa, "logcat", "-d")
    assert dump.returncode == 0
    assert re.search(r"^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} +\d+ +\d+ I ActivityTaskManager: START u0 .*"
                     r"cmp=com\.android\.settings/\.Settings", dump.stdout, re.M)
    last = adb(pa, "logcat", "-d", "-t", "1").stdout.splitlines()
    assert len([line for line in last if not line.startswith("-----")]) == 1
    brief = adb(pa, "logcat", "-d", "-s", "ActivityTaskManager:I", "-v", "brief").stdout.splitlines()
    lines = [line for line in brief if not line.startswith("-----")]
    assert lines and all(line.startswith("I/ActivityTaskManager(") for line in lines)
    epoch = [line for line in adb(pa, "logcat", "-d", "-v", "epoch", "-t", "2").stdout.splitlines()
             if not line.startswith("-----")]
    assert all(re.match(r"^\d{10}\.\d{3} +\d+ +\d+ [VDIWEF] ", line) for line in epoch), epoch
    timed = [line for line in adb(pa, "logcat", "-d", "-v", "time", "-t", "2").stdout.splitlines()
             if not line.startswith("-----")]
    assert all(re.match(r"^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} [VDIWEF]/", line) for line in timed), timed
    assert adb(pa, "logcat", "-c").returncode == 0
    assert [line for line in adb(pa, "logcat", "-d").stdout.splitlines() if not line.startswith("-----")] == []


def test_adb_logcat_takes_the_hosts_log_tags(pa):
    adb(pa, "logcat", "-c")
    adb(pa, "shell", "log -t Mine hello; log -t Other noise")
    out = adb(pa, "logcat", "-d", "-v", "tag", env_extra={"ANDROID_LOG_TAGS": "*:S Mine:I"})
    lines = [line for line in out.stdout.splitlines() if not line.startswith("-----")]
    version = int(re.search(r"Version (\d+)", pa.adb("version").stdout).group(1))
    if version >= 30:  # adb quotes the tags once: ANDROID_LOG_TAGS='*:S Mine:I'
        assert lines == ["I/Mine    : hello"]
    else:  # adb 29 quotes them twice ("'*:S Mine:I'"): the device reads tags "'*" and "Mine", so *:S is lost, as
        # a real phone driven by that adb loses it
        assert lines == ["I/Mine    : hello", "I/Other   : noise"]
    bad = adb(pa, "logcat", "-d", "-v", "nonsense")
    assert bad.returncode != 0 and 'Invalid parameter "nonsense" to -v' in bad.stderr


# ---------------------------------------------------------------------------------------------- flow control
def test_a_host_cannot_queue_unbounded_input_on_a_stream_that_does_not_read():
    phone = ServedPhone("000", noise=False)
    with AdbDaemon(phone) as daemon:
        host = RawHost(daemon.port)
        try:
            assert host.recv()[0] == A_CNXN
            host.send(A_OPEN, 1, 0, b"shell:sleep 1\0")
            command, stream, _, _ = host.recv()
            assert command == A_OKAY
            chunk = bytes(MAX_PAYLOAD)
            okays = 0
            host.sock.settimeout(0.3)
            for _ in range(4):  # a host sends its next WRTE only after the OKAY of the last
                host.send(A_WRTE, 1, stream, chunk)
                try:
                    okays += host.recv()[0] == A_OKAY
                except TimeoutError:
                    break
            held = max(len(s.inbox) for c in daemon._connections for s in c.streams.values())
            assert okays < 4 and held <= QUEUE_LIMIT + MAX_PAYLOAD
        finally:
            host.close()
        time.sleep(0.1)


# ---------------------------------------------------------------------------------------------- what tools read
def test_adbutils_device_helpers(pa):
    device = pa.device()
    assert tuple(device.window_size()) == (1080, 2160)
    assert device.rotation() == 0
    assert device.is_screen_on() is True
    adb(pa, "shell", "input keyevent 3; am start -n com.android.settings/.Settings")
    current = device.app_current()
    assert (current.package, current.activity) == ("com.android.settings", "com.android.settings.Settings")
    assert device.prop.get("ro.build.version.sdk") == "29"


def test_build_properties_of_an_emulator_image(pa):
    props = dict(re.findall(r"^\[([^\]]+)\]: \[([^\]]*)\]$", adb(pa, "shell", "getprop").stdout, re.M))
    fingerprint = props["ro.build.fingerprint"]
    assert re.fullmatch(r"google/sdk_gphone_x86/generic_x86:10/[A-Z0-9.]+/\d+:userdebug/dev-keys", fingerprint)
    assert props["ro.build.id"] in fingerprint and props["ro.build.version.incremental"] in fingerprint
    assert props["ro.build.version.release"] == "10" and props["ro.product.cpu.abi"] == "x86"
    assert props["ro.hardware"] == "ranchu" and props["ro.build.type"] == "userdebug"


def test_dumpsys_services_tools_read(pa):
    physical, override = configure.density(pa.phone)  # snapshot 000 runs at another density than the Pixel 3's
    assert adb(pa, "shell", "wm density").stdout == f"Physical density: {physical}\nOverride density: {override}\n"
    display = adb(pa, "shell", "dumpsys display").stdout
    assert "orientation=0" in display and "real 1080 x 2160" in display and f"density {override} " in display
    power = adb(pa, "shell", "dumpsys power").stdout
    assert "mWakefulness=Awake" in power and "Display Power: state=ON" in power
    battery = adb(pa, "shell", "dumpsys battery").stdout
    assert "  level: 100\n" in battery and "  AC powered: false\n" in battery and "  status: 3\n" in battery
    # BatteryService's shell commands set what the battery reports, and the status bar shows it
    assert adb(pa, "shell", "dumpsys battery set level 42").returncode == 0
    assert adb(pa, "shell", "dumpsys battery set ac 1").returncode == 0
    battery = adb(pa, "shell", "dumpsys battery").stdout
    assert "  level: 42\n" in battery and "  AC powered: true\n" in battery and "  status: 2\n" in battery
    assert "mBatteryLevel=42" in adb(pa, "shell", "dumpsys power").stdout
    assert pa.phone.device.state.battery_level == 42 and pa.phone.device.state.charging
    assert adb(pa, "shell", "dumpsys battery set colour 1").returncode == 255
    assert "mInputShown=false" in adb(pa, "shell", "dumpsys input_method").stdout
    package = adb(pa, "shell", "dumpsys package com.android.settings").stdout
    assert "versionName=10\n" in package and "versionCode=29 minSdk=29 targetSdk=29" in package
    assert "userId=1000" in package  # Settings runs as the system user, as its log lines say
    assert adb(pa, "shell", "dumpsys package com.example.none").stdout == ""
    unknown = adb(pa, "shell", "dumpsys nosuchservice")
    assert unknown.returncode == 0 and unknown.stderr == "Can't find service: nosuchservice\n"


def test_power_key_puts_the_display_to_sleep_for_the_tools_that_ask(pa):
    device = pa.device()
    try:
        adb(pa, "shell", "input keyevent POWER")
        assert device.is_screen_on() is False
        power = adb(pa, "shell", "dumpsys power").stdout
        assert "mWakefulness=Asleep" in power and "Display Power: state=OFF" in power
        assert "mGlobalDisplayState=OFF" in adb(pa, "shell", "dumpsys display").stdout
    finally:
        adb(pa, "shell", "input keyevent 26")
    assert device.is_screen_on() is True


def test_media_volume_from_the_shell_is_heard_by_systemui(pa):
    """SystemUI's volume controller records every change of a stream's level, whoever made it."""
    adb(pa, "logcat", "-c")
    adb(pa, "shell", "media volume --stream 3 --set 4")
    lines = adb(pa, "logcat", "-d", "-s", "vol.Events", "-v", "tag").stdout.splitlines()
    assert "I/vol.Events: writeEvent level_changed STREAM_MUSIC 4" in lines


# ---------------------------------------------------------------------------------------------- a device's shell (issue 63)
PS_HEADER = "USER           PID  PPID     VSZ    RSS WCHAN            ADDR S NAME"


def _started_pid(pa: PrivateAdb, package: str) -> int:
    """The pid of ``package``'s last ``Start proc`` line in the log."""
    log = adb(pa, "logcat", "-d", "-s", "ActivityManager:I").stdout
    return int(re.findall(rf"Start proc (\d+):{re.escape(package)}/", log)[-1])


def test_processes_are_listed_and_signalled_as_the_log_names_them(pa):
    """ps, pidof and kill as Android 10's toybox prints them, over the processes the phone's log starts: an app's
    pid in ``ps`` is the one of its ``Start proc`` line, and killing the app in front starts it again."""
    mine = adb(pa, "shell", "ps")
    assert mine.returncode == 0 and mine.stdout.splitlines()[0] == PS_HEADER
    assert [line.split()[-1] for line in mine.stdout.splitlines()[1:]] == ["sh", "ps"]
    adb(pa, "shell", "am force-stop com.android.settings")
    adb(pa, "shell", "input keyevent 3; am start -n com.android.settings/.Settings")
    pid = _started_pid(pa, "com.android.settings")
    rows = {line.split()[-1]: line.split() for line in adb(pa, "shell", "ps -A").stdout.splitlines()[1:]}
    assert rows["system_server"][:3] == ["system", "1210", "1052"] and rows["init"][:3] == ["root", "1", "0"]
    assert rows["com.android.settings"][:3] == ["system", str(pid), "1052"]
    assert rows["com.android.systemui"][:2] == ["u0_a102", "1402"]  # the boot log's "Start proc 1402:...u0a102"
    assert adb(pa, "shell", "pidof", "com.android.settings").stdout == f"{pid}\n"
    assert adb(pa, "shell", "ps -o pid,user,name -p 1210").stdout.splitlines()[1].split() == [
        "1210", "system", "system_server"]
    bad = adb(pa, "shell", "ps -o pid,nonsense")
    assert (bad.returncode, bad.stdout, bad.stderr) == (1, "", "ps: bad -o nonsense\n")
    none = adb(pa, "shell", "pidof no.such.process")
    assert (none.returncode, none.stdout) == (1, "")
    adb(pa, "logcat", "-c")
    assert adb(pa, "shell", "kill", "-9", str(pid)).returncode == 0
    log = adb(pa, "logcat", "-d", "-s", "ActivityManager:I").stdout
    assert f"Process com.android.settings (pid {pid}) has died: fg  TOP" in log
    again = _started_pid(pa, "com.android.settings")
    assert again != pid and adb(pa, "shell", "pidof com.android.settings").stdout == f"{again}\n"
    gone = adb(pa, "shell", "kill", str(pid))
    assert (gone.returncode, gone.stderr) == (1, f"kill: {pid}: No such process\n")
    assert adb(pa, "shell", "kill -0 1").returncode == 0
    assert adb(pa, "shell", "kill -NOPE 1").stderr == "kill: Unknown signal 'NOPE'\n"
    assert adb(pa, "shell", "kill $$").returncode == 143  # the shell itself, ended by SIGTERM


def test_the_kernel_and_who_runs_what(pa):
    """uname and /proc/version name the release emulator's kernel; su is the userdebug image's (B-MoCA's own
    environment runs ``su 0 toybox date ...``); run-as refuses what Android 10 refuses."""
    assert adb(pa, "shell", "uname -a").stdout == (
        "Linux localhost 4.14.112+ #1 SMP PREEMPT Mon Aug 2 18:32:17 UTC 2021 x86_64 Android\n")
    assert adb(pa, "shell", "uname").stdout == "Linux\n" and adb(pa, "shell", "uname -rm").stdout == "4.14.112+ x86_64\n"
    assert adb(pa, "shell", "cat /proc/version").stdout.startswith("Linux version 4.14.112+ ")
    assert adb(pa, "shell", "su 0 id").stdout.startswith("uid=0(root) gid=0(root)")
    dated = adb(pa, "shell", "su 0 toybox date 010103302016.00")
    assert (dated.returncode, dated.stdout) == (0, "Fri Jan  1 03:30:00 GMT 2016\n")
    assert adb(pa, "shell", "which su ps").stdout == "/system/xbin/su\n/system/bin/ps\n"
    missing = adb(pa, "shell", "su 0 no-such-program")
    assert (missing.returncode, missing.stderr) == (1, "su: failed to exec no-such-program: No such file or directory\n")
    for package, why in [("com.android.chrome", "package not debuggable"), ("com.android.settings",
                                                                           "package not an application"),
                         ("com.example.none", "unknown package")]:
        refused = adb(pa, "shell", "run-as", package, "ls")
        assert (refused.returncode, refused.stdout, refused.stderr) == (1, "", f"run-as: {why}: {package}\n")


def _listed(pa: PrivateAdb, path: str) -> dict[str, int]:
    """``adb ls PATH``: name -> mode (sync's LIST)."""
    rows = [line.split(maxsplit=3) for line in adb(pa, "ls", path).stdout.splitlines()]
    return {name: int(mode, 16) for mode, _, _, name in rows}


def test_system_folders_and_proc_as_a_client_sees_them(pa, tmp_path):
    """/system/bin lists the shell's commands and /proc its kernel files and processes, alike through the shell,
    ``adb ls`` and ``adb pull``; ``/sdcard`` is the link a device's lstat reports, and a push to it lands in the
    folder it leads to."""
    shown = adb(pa, "shell", "ls /system/bin").stdout.split()
    assert {"ls", "ps", "uname", "toybox"} <= set(shown) and "cd" not in shown
    assert set(_listed(pa, "/system/bin")) - {".", ".."} == set(shown)
    in_proc = adb(pa, "shell", "ls /proc").stdout.split()
    assert {"1", "1210", "cpuinfo", "meminfo", "version"} <= set(in_proc)
    for name in ("version", "meminfo", "1210/cmdline"):
        assert adb(pa, "pull", f"/proc/{name}", str(tmp_path / "pulled")).returncode == 0
        assert (tmp_path / "pulled").read_bytes() == adb(pa, "exec-out", f"cat /proc/{name}", text=False).stdout
    assert (tmp_path / "pulled").read_bytes() == b"system_server\0"
    assert _listed(pa, "/")["sdcard"] == 0o120644 and _listed(pa, "/storage/self")["primary"] == 0o120777
    (tmp_path / "pushed.txt").write_text("hello")
    for target in ("/sdcard", "/sdcard/", "/storage/self/primary"):
        adb(pa, "shell", "rm -f /sdcard/pushed.txt")
        assert adb(pa, "push", str(tmp_path / "pushed.txt"), target).returncode == 0, target
        assert adb(pa, "shell", "cat /sdcard/pushed.txt").stdout == "hello", target


def test_dev_zero_and_the_log_buffer(pa):
    """/dev/zero gives zeros until its reader has enough; a line that never ends stops in one line. The log holds
    what ``logcat -g`` says: logd's 256 KiB, the oldest entries dropped first."""
    zeros = adb(pa, "exec-out", "head -c 100000 /dev/zero", text=False)
    assert zeros.stdout == bytes(100000)
    assert adb(pa, "shell", "cat /dev/zero | head -c 5 | wc -c").stdout.strip() == "5"
    endless = adb(pa, "shell", "cat /dev/zero | grep x")
    assert endless.returncode == 1 and endless.stderr.startswith("grep: a line longer than 4 MiB")
    adb(pa, "logcat", "-c")
    filler = "x" * 3000
    adb(pa, "shell", f"i=0; while [ $i -lt 120 ]; do log -t Fill \"$i {filler}\"; i=$((i+1)); done")
    kept = [line.split()[-2] for line in adb(pa, "logcat", "-d", "-s", "Fill:I", "-v", "tag").stdout.splitlines()
            if not line.startswith("-----")]
    assert 70 <= len(kept) < 120 and kept[-1] == "119"  # 256 KiB hold about 85 such entries: the newest ones
    sizes = adb(pa, "logcat", "-g").stdout
    consumed = [int(n) for n in re.findall(r"ring buffer is 256 KiB \((\d+) KiB consumed\)", sizes)]
    assert consumed and all(250 <= n <= 256 for n in consumed), sizes


def test_printf_cut_find_and_stat_as_toybox_prints_them(pa):
    """Issue 63: printf, cut, find and stat were missing; each now prints what Android 10's toybox prints."""
    assert adb(pa, "shell", 'printf "%s=%03d|%x\\n" a 7 255 b 8').stdout == "a=007|ff\nb=008|0\n"
    bad = adb(pa, "shell", 'printf "%d\\n" 12x')
    assert (bad.returncode, bad.stdout, bad.stderr) == (1, "12\n", "printf: invalid number '12x'\n")
    assert adb(pa, "shell", "getprop ro.build.fingerprint | cut -d/ -f3").stdout == "generic_x86:10\n"
    assert adb(pa, "shell", "echo abcdef | cut -c 2-3,5-").stdout == "bcef\n"
    adb(pa, "shell", "rm -rf /sdcard/t; mkdir -p /sdcard/t/a; touch /sdcard/t/a/x.txt /sdcard/t/y.TXT /sdcard/t/z.png")
    assert adb(pa, "shell", "find /sdcard/t -iname '*.txt'").stdout == "/sdcard/t/a/x.txt\n/sdcard/t/y.TXT\n"
    assert adb(pa, "shell", "find /sdcard/t -type d").stdout == "/sdcard/t\n/sdcard/t/a\n"
    assert adb(pa, "shell", "find /sdcard -maxdepth 1").stdout == "/sdcard\n"  # a link, not followed
    missing = adb(pa, "shell", "find /nowhere")
    assert (missing.returncode, missing.stderr) == (1, "find: '/nowhere': No such file or directory\n")
    assert adb(pa, "shell", "stat -c '%s %F %A %U:%G' /sdcard/t/y.TXT /sdcard /sdcard/").stdout == (
        "0 regular empty file -rw-rw---- root:sdcard_rw\n21 symbolic link lrw-r--r-- root:root\n"
        "4096 directory drwxrwx--x root:sdcard_rw\n")
    assert adb(pa, "shell", "stat /sdcard/t/a/x.txt").stdout.startswith("  File: /sdcard/t/a/x.txt\n  Size: 0\t")


def test_sed_edits_lines_as_toybox_does_and_a_line_cannot_grow_without_bound(pa):
    """Issue 63: sed was missing. Its common commands run as toybox's, matched by RE2 in linear time; a
    substitution that would grow a line past 4 MiB stops with one line; what it does not run is refused in one."""
    assert adb(pa, "shell", "getprop ro.build.version.sdk | sed 's/^/sdk=/'").stdout == "sdk=29\n"
    assert adb(pa, "shell", "printf 'a1\\nb2\\nc3\\n' | sed -E 's/([a-z])([0-9])/\\2\\1/;2d'").stdout == "1a\n3c\n"
    assert adb(pa, "shell", "printf 'x\\ny\\nz\\n' | sed -n '/y/,$p'").stdout == "y\nz\n"
    assert adb(pa, "shell", "printf '1\\n2\\n3\\n' | sed 2q").stdout == "1\n2\n"
    grown = adb(pa, "shell", f"echo {'a' * 5000} | sed 's/x*/{'b' * 1000}/g'")
    assert grown.returncode == 1 and grown.stderr.startswith("sed: a line that grows past 4194304 bytes")
    refused = adb(pa, "shell", "echo a | sed y/a/b/")
    assert (refused.returncode, refused.stdout) == (1, "") and refused.stderr.startswith("sed: unknown command 'y'")


def test_ln_fails_as_the_kernel_refuses_a_link(pa):
    """Issue 63: ln was missing. The shared storage (sdcardfs) takes no links and the system is read-only, so ln
    fails there as on a device, one line each with the kernel's error; where a device would make the link (/data),
    the simulated phone, which keeps no links of its own, says so in one line."""
    adb(pa, "shell", "rm -rf /sdcard/l; mkdir -p /sdcard/l; touch /sdcard/l/a.txt")
    sdcard = adb(pa, "shell", "ln -s /sdcard/l/a.txt /sdcard/l/b.txt")
    assert (sdcard.returncode, sdcard.stdout, sdcard.stderr) == (
        1, "", "ln: cannot create symbolic link from '/sdcard/l/a.txt' to '/sdcard/l/b.txt': Operation not permitted\n")
    many = adb(pa, "shell", "cd /sdcard/l && ln a.txt x y /sdcard/Download")
    assert many.stderr.splitlines() == [
        "ln: cannot create hard link from 'a.txt' to '/sdcard/Download/a.txt': Operation not permitted",
        "ln: cannot create hard link from 'x' to '/sdcard/Download/x': No such file or directory",
        "ln: cannot create hard link from 'y' to '/sdcard/Download/y': No such file or directory"]
    assert adb(pa, "shell", "ln -s a /sdcard/l/a.txt").stderr.endswith(": File exists\n")
    assert adb(pa, "shell", "ln -s /sdcard/l/a.txt /system/bin/x").stderr.endswith(": Read-only file system\n")
    assert adb(pa, "shell", "ln -s a b /sdcard/l/a.txt").stderr == "ln: '/sdcard/l/a.txt' not a directory\n"
    data = adb(pa, "shell", "ln -s /sdcard/l/a.txt /data/local/tmp/a")
    assert data.returncode == 1 and "keeps no links" in data.stderr and len(data.stderr.splitlines()) == 1
    assert adb(pa, "shell", "ls /sdcard/l").stdout == "a.txt\n"  # nothing was made
    assert adb(pa, "shell", "ls /data/local/tmp/a").returncode == 1
    assert adb(pa, "shell", "which ln").stdout == "/system/bin/ln\n"
