"""Build a snapshot of ``envs/`` on an Android 10 emulator: the device commands that give a running emulator a
snapshot's configuration, then ``avd snapshot save`` on its console.

:func:`build_steps` lists the commands (each a :class:`Step` with its purpose), :func:`run_steps` runs them on a
target: a real emulator (:class:`vlui.adb.device.AdbDevice`) or, in process, the simulated phone
(:class:`SimTarget`, which is how every command here is tested). :func:`transcript` writes them as ``adb`` command
lines to read or run by hand.

What a device cannot be told, and is not built (:func:`not_built` lists it): ``clock_dial`` (the simulated Clock app's
picker shape; a real Clock app draws its own), the Wi-Fi signal's bars and posted notifications; a snapshot with
initial app state (``state`` beyond the status bar's battery, charging and signal) is refused. The home grid is the
simulated launcher's (:func:`vlui.android.launcher.grid`); a real launcher with another grid places or drops
icons by its own rules. See docs/adb.md for what has and has not been run on a real emulator.
"""

from __future__ import annotations

import functools
import shlex
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from vlui.android import launcher
from vlui.android.apps import LAUNCHER_PKG
from vlui.android.i18n import locales
from vlui.android.snapshot import Snapshot
from vlui.errors import VluiError
from vlui.served import device_files
from vlui.served.console import signal_profile
from vlui.served.phone import ServedPhone
from vlui.served.shell import Shell

KINDS = ("root", "shell", "push", "console")
WALLPAPER_TMP = "/data/local/tmp/vlui-wallpaper.png"
BOOT_TIMEOUT_S = 240.0  # an emulator's framework restart takes 10-60 s; a cold, software-rendered one longer
FAILURE_PREFIXES = ("Error", "Exception", "java.lang.")  # Android tools that fail but exit 0 print one of these


@dataclass(frozen=True)
class Step:
    """One build command.

    ``args`` by ``kind``: ``root``: none; ``shell``: the command's words (run by the device's ``sh -c``);
    ``push``: (local file name, remote path), with the file's bytes in ``data`` (or a function that makes them when
    the step runs); ``console``: the console command's words. A shell step with ``expect`` fails unless it prints
    that (surrounding white space aside); with ``retry_s`` too, it is repeated once a second until it does, for up
    to that many seconds."""

    kind: str
    args: tuple[str, ...]
    why: str
    data: bytes | Callable[[], bytes] | None = field(default=None, repr=False, compare=False)
    expect: str | None = None
    retry_s: float = 0.0
    timeout_s: float = 60.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise VluiError(f"unknown step kind {self.kind!r}; choose from: {', '.join(KINDS)}")

    def payload(self) -> bytes:
        """A push step's file content."""
        return self.data() if callable(self.data) else (self.data or b"")

    @property
    def command(self) -> str:
        """The command as the device's shell or the emulator console reads it (push and root: as adb's)."""
        if self.kind == "shell":
            return shlex.join(self.args)
        if self.kind == "push":
            return f"push {self.args[0]} {self.args[1]}"
        return " ".join(self.args) or self.kind


class Target(Protocol):
    """Where steps run: a real emulator (:class:`vlui.adb.device.AdbDevice`) or :class:`SimTarget`."""

    def root(self) -> None: ...
    def shell_out(self, cmd: str, timeout: float) -> tuple[str, int]: ...
    def push_bytes(self, data: bytes, remote: str) -> None: ...
    def console(self, cmd: str) -> str: ...


def _shell(why: str, *args: str) -> Step:
    return Step("shell", args, why)


def build_steps(snapshot: Snapshot, name: str | None = None) -> list[Step]:
    """The steps that turn a running Android 10 emulator of ``snapshot``'s device profile into ``snapshot`` and
    save it as emulator snapshot ``name`` (default: the snapshot's id).

    Order: settings that apply at once, then what the framework reads when it starts (locale, wallpaper files),
    the launcher database, one framework restart, the home screen, the clock last (nothing after it advances the
    clock), then the save."""
    snap = snapshot
    name = snap.id if name is None else name
    where = snap.source or f"snapshot {snap.id}"
    if not name or any(c.isspace() or c in "/\\" for c in name):
        raise VluiError(f"invalid emulator snapshot name {name!r}: no spaces or slashes")
    app_state = sorted(set(snap.state) - set(STATUS_STATE))
    if app_state:
        raise VluiError(f"{where}: initial app state ({', '.join(app_state)}) cannot be built on a device; "
                        "remove it from 'state' or set it by hand after building")
    physical = snap.profile["dpi"]
    width, height = snap.size
    tag = locales()[snap.locale]["android"]
    grid = snap.home_grid
    layout = launcher.home_layout(snap.home_layout, *grid)
    sql = launcher.launcher_sql(layout, snap.locale)
    png = f"vlui-wallpaper-{snap.wallpaper}-{width}x{height}.png"
    orig, shown = device_files.WALLPAPER_FILES
    return [
        Step("root", (), "restart adbd as root: setprop, the wallpaper files and the launcher database need it"),
        Step("shell", ("wm", "size"), f"the emulator must have the {snap.device_name}'s screen",
             expect=f"Physical size: {width}x{height}"),
        _shell(f"screen density {snap.dpi} dpi (the {snap.device_name}'s own: {physical}); applies at once",
               *(("wm", "density", str(snap.dpi)) if snap.dpi != physical else ("wm", "density", "reset"))),
        _shell(f"font scale {float(snap.font_scale)}; applies at once",
               "settings", "put", "system", "font_scale", str(float(snap.font_scale))),
        _shell(f"dark theme {'on' if snap.dark_theme else 'off'}; applies at once",
               "cmd", "uimode", "night", "yes" if snap.dark_theme else "no"),
        _shell(f"locale {tag} ({locales()[snap.locale]['name']}); the framework reads it at its restart below",
               "setprop", "persist.sys.locale", tag),
        Step("push", (png, WALLPAPER_TMP), f"wallpaper {snap.wallpaper}, drawn at {width}x{height}",
             data=functools.partial(device_files.wallpaper_png, snap.wallpaper, width, height)),
        _shell("the wallpaper service's original image", "cp", WALLPAPER_TMP, orig),
        _shell("the wallpaper service's shown image; read at the framework restart", "cp", WALLPAPER_TMP, shown),
        _shell("the wallpaper files belong to system_server", "chown", "system:system", orig, shown),
        _shell("only system_server reads them", "chmod", "600", orig, shown),
        _shell(f"home-screen layout: {len(layout[0])} hotseat and {len(layout[1])} workspace icons on a "
               f"{grid[0]}x{grid[1]} grid", "sqlite3", launcher.LAUNCHER_DB, sql),
        _shell("the launcher restarts and loads its database", "am", "force-stop", LAUNCHER_PKG),
        _shell("so that the wait below sees the restarted framework finish booting",
               "setprop", "sys.boot_completed", "0"),
        _shell("restart the framework: the locale and the wallpaper take effect", "setprop", "ctl.restart", "zygote"),
        Step("shell", ("getprop", "sys.boot_completed"), "wait until the framework has booted", expect="1",
             retry_s=BOOT_TIMEOUT_S),
        _shell("the home screen", "input", "keyevent", "3"),
        *_status_steps(snap),
        _shell("keep network time from resetting the clock", "settings", "put", "global", "auto_time", "0"),
        _shell(f"the snapshot's clock: {snap.time} in the emulator's time zone",
               "date", snap.start_time.strftime("%m%d%H%M%Y.%S")),
        Step("console", ("avd", "snapshot", "save", name), f"save emulator snapshot {name}"),
    ]


# The status bar's state a snapshot may set (a generated one does), and what a device can be told of it.
STATUS_STATE = ("battery_level", "charging", "signal_level", "wifi_level", "notifications")
NOT_BUILT = {"wifi_level": "an emulator's Wi-Fi signal cannot be set from a shell or its console",
             "notifications": "a shell cannot post a notification as another app"}


def _status_steps(snap: Snapshot) -> list[Step]:
    st = snap.state
    steps = []
    if "battery_level" in st:
        steps.append(_shell(f"battery at {st['battery_level']}%", "dumpsys", "battery", "set", "level",
                            str(st["battery_level"])))
    if "charging" in st:
        steps.append(_shell("on power" if st["charging"] else "on battery", "dumpsys", "battery", "set", "ac",
                            "1" if st["charging"] else "0"))
    if "signal_level" in st:
        steps.append(Step("console", ("gsm", "signal-profile", str(st["signal_level"])),
                          f"cellular signal: {st['signal_level']} bars"))
    return steps


def not_built(snap: Snapshot) -> list[str]:
    """What of ``snap`` a device cannot be given, each with why (the builder warns of these and goes on)."""
    out = [f"{name} ({why})" for name, why in NOT_BUILT.items() if snap.state.get(name)]
    if snap.clock_dial != "circle":
        out.append(f"clock_dial {snap.clock_dial} (a real Clock app draws its own picker)")
    return out


def run_steps(steps: list[Step], target: Target, progress: Callable[[int, int, Step], None] | None = None) -> None:
    """Run ``steps`` in order on ``target``; ``progress(number, total, step)`` is called before each. A step that
    fails (an error, a non-zero exit status, an error printed) stops the build with a one-line error naming it."""
    for number, step in enumerate(steps, 1):
        if progress is not None:
            progress(number, len(steps), step)
        try:
            _run(step, target)
        except (VluiError, OSError) as err:
            detail = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise VluiError(f"build step {number}/{len(steps)} ({step.why}) failed: {step.command.splitlines()[0]}"
                            f"{' …' if chr(10) in step.command else ''}: {detail}") from None


def _run(step: Step, target: Target) -> None:
    if step.kind == "root":
        target.root()
    elif step.kind == "push":
        target.push_bytes(step.payload(), step.args[1])
    elif step.kind == "console":
        target.console(step.command)
    else:
        deadline = time.monotonic() + step.retry_s
        while True:
            out, status = target.shell_out(step.command, step.timeout_s)
            failed = [line for line in out.splitlines() if line.startswith(FAILURE_PREFIXES)]
            if status != 0 or failed:
                first = (failed or out.strip().splitlines() or [""])[0]
                problem = f"exit status {status}" + (f", {first}" if first else "")
            elif step.expect is not None and out.strip() != step.expect:
                problem = f"printed {out.strip()!r}, not {step.expect!r}"
            else:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                raise VluiError(problem + (f" after {step.retry_s:g} s" if step.retry_s else ""))
            time.sleep(min(1.0, left))


def transcript(steps: list[Step], serial: str = "emulator-5554") -> str:
    """The steps as a ``sh`` script of ``adb`` commands, each after a comment saying why. Pushed files are named by
    their local name (:func:`write_files` writes them). The launcher's SQL goes to sqlite3 on its standard input
    here, to keep it readable (the builder passes it as sqlite3's argument)."""
    adb = f"adb -s {shlex.quote(serial)}"
    lines = ["#!/bin/sh", "set -e"]
    for step in steps:
        lines.append(f"# {step.why}")
        if step.kind == "root":
            lines.append(f"{adb} root && {adb} wait-for-device")
        elif step.kind == "push":
            lines.append(f"{adb} push {shlex.quote(step.args[0])} {shlex.quote(step.args[1])}")
        elif step.kind == "console":
            lines.append(f"{adb} emu {step.command}")
        elif step.expect is not None:
            test = f"[ \"$({adb} shell {step.command} | tr -d '\\r')\" = {shlex.quote(step.expect)} ]"
            lines.append(f"until {test}; do sleep 1; done" if step.retry_s else test)
        elif step.args[0] == "sqlite3" and len(step.args) == 3:
            lines += [f"{adb} shell sqlite3 {shlex.quote(step.args[1])} <<'SQL'", step.args[2], "SQL"]
        else:
            # adb joins its arguments with spaces for the device's sh -c: plain words pass as they are, anything
            # else is quoted once more for the host's shell
            plain = all(shlex.quote(a) == a for a in step.args)
            lines.append(f"{adb} shell {step.command if plain else shlex.quote(step.command)}")
    return "\n".join(lines) + "\n"


def write_files(steps: list[Step], directory: str | Path) -> list[Path]:
    """Write the files that ``steps`` push into ``directory`` under their local names; their paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for step in steps:
        if step.kind == "push":
            path = out / step.args[0]
            path.write_bytes(step.payload())
            paths.append(path)
    return paths


class SimTarget:
    """The build target interface on a served simulated phone, in process: the shell is
    :class:`vlui.served.shell.Shell`, pushes write ``phone.files``, and the console saves and loads the phone's
    snapshots. Its adbd runs as root, as an emulator's after ``adb root``."""

    def __init__(self, phone: ServedPhone) -> None:
        self.phone = phone
        self._shell = Shell(phone)

    def root(self) -> None:
        pass

    def shell_out(self, cmd: str, timeout: float) -> tuple[str, int]:
        out: list[bytes] = []
        status = self._shell.run(cmd, out.append, threading.Event())
        return b"".join(out).decode("utf-8", "replace"), status

    def push_bytes(self, data: bytes, remote: str) -> None:
        with self.phone.lock:
            self.phone.files[remote] = bytes(data)

    def console(self, cmd: str) -> str:
        words = cmd.split()
        if words[:2] == ["gsm", "signal-profile"]:
            answer = signal_profile(self.phone, words[2:])[-1]
            if answer != "OK":
                raise VluiError(answer)
            return answer
        if len(words) != 4 or words[:2] != ["avd", "snapshot"] or words[2] not in ("save", "load"):
            raise VluiError(f"KO: unknown command {cmd!r}; this console knows avd snapshot save|load NAME and gsm "
                            "signal-profile N")
        try:
            (self.phone.save_snapshot if words[2] == "save" else self.phone.load_snapshot)(words[3])
        except VluiError as err:
            raise VluiError(f"KO: {err}") from None
        return "OK"
