"""Real emulators and phones (and the simulated phone served over ADB) as a :class:`~vlui.device.Device`.

Everything goes through an adb server with adbutils' connection, as ``adb`` itself does:

- screen size and density from ``wm size`` / ``wm density``; screenshots from ``screencap`` over ``exec:`` (raw or
  PNG: ``screencap="auto"`` times both once and keeps the faster);
- the view hierarchy from ``uiautomator dump`` and ``cat``;
- ``input tap|swipe|keyevent|text``, with every argument quoted for the device's shell;
- the log from one streaming ``logcat -v threadtime`` per device (:mod:`vlui.adb.logcat`). After each input the
  backend logs a marker; reading the log waits for it, so no line of that step is missed on a fast device;
- snapshots through the emulator console (``avd snapshot load``).

A command that fails to reach the device is retried once after a reconnect attempt (``adb connect`` for network
serials, then ``wait-for-device``); a command that hangs past ``command_timeout_s`` or a device that stays away
raises :class:`~vlui.adb.errors.DeviceError` naming the serial. An input is never sent twice: once the device has
accepted the command, a failure is an error, not a retry.
"""

from __future__ import annotations

import fcntl
import io
import itertools
import logging
import math
import os
import shlex
import socket
import struct
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import adbutils
import numpy as np
from adbutils import AdbConnection, AdbError
from PIL import Image

from vlui.adb import state as task_state
from vlui.adb.console import TOKEN_FILE, EmulatorConsole
from vlui.adb.console import console_port as emulator_console_port
from vlui.adb.errors import DeviceError
from vlui.adb.logcat import SYNC_TAG, LogcatReader, logcat_command
from vlui.android.apps import app_info, apps
from vlui.android.i18n import locales
from vlui.android.logcat import parse_threadtime
from vlui.android.snapshot import load_snapshot
from vlui.device import KEYCODE_ENTER, KEYS, Device, HomeScreen, PinnedApp, observe

log = logging.getLogger(__name__)
KEYCODES = {"BACK": 4, "HOME": 3, "APP_SWITCH": 187}
WAIT_S = 1.0  # how long AndroidWorld's wait lets the device run, before the step's own observation wait
SCREENCAP_MODES = ("auto", "raw", "png")
RESET_MODES = ("console", "none")
DUMP_PATH = "/sdcard/window_dump.xml"
T = TypeVar("T")
_tokens = itertools.count(1)


class _Connection(AdbConnection):
    """adbutils' connection to the adb server, except that it never starts a server on the default port when it
    finds none: vlui starts the one it was told to use, and leaves a user's own server alone."""

    def _safe_connect(self) -> socket.socket:
        return self._create_socket()

    def close(self) -> None:
        """Close at once (adbutils waits 10 ms after a half-close, which would be most of a step's time)."""
        self.conn.close()


class _Accepted(Exception):
    """A failure after the device accepted a command: it may have run, so it is not retried."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def _read_all(sock: socket.socket) -> bytes:
    """Everything until the device closes the stream, in large reads (a raw screenshot is several MB)."""
    parts = []
    while True:
        chunk = sock.recv(1 << 20)
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)


def _read_screencap(sock: socket.socket) -> bytes | bytearray:
    """A raw screencap read straight into a buffer of its final size (its header says how big it is)."""
    head = bytearray()
    while len(head) < 12:
        chunk = sock.recv(12 - len(head))
        if not chunk:
            return bytes(head)
        head += chunk
    w, h, _ = struct.unpack_from("<III", head)
    if not 0 < w * h <= 1 << 26:  # not a raw frame (an error message): the parser says what came
        return bytes(head) + _read_all(sock)
    buf = bytearray(16 + w * h * 4)
    buf[:12] = head
    view, n = memoryview(buf), 12
    while n < len(buf):
        k = sock.recv_into(view[n:])
        if not k:
            break
        n += k
    return buf if n == len(buf) else bytes(buf[:n])


def _num(value: float) -> str:
    """A coordinate for ``input``: the exact float, so a device that parses it sees the same number."""
    return repr(float(value))


def text_commands(value: str) -> list[str]:
    """``input text`` command lines that type ``value`` literally.

    Android's ``input text`` types one argument and turns ``%s`` into a space: spaces are sent as ``%s``, a literal
    ``%s`` is typed in two commands (``%`` then ``s``), and every argument is quoted for the device's shell, so
    nothing in ``value`` is ever run. Only printable ASCII can be typed this way.
    """
    bad = sorted({c for c in value if not (" " <= c <= "~")})
    if bad:
        raise DeviceError(f"input text over ADB types printable ASCII only; cannot type {''.join(bad)!r}")
    chunks, start = [], 0
    for i in range(len(value) - 1):
        if value[i] == "%" and value[i + 1] == "s":
            chunks.append(value[start:i + 1])
            start = i + 1
    chunks.append(value[start:])
    return [f"input text {shlex.quote(chunk.replace(' ', '%s'))}" for chunk in chunks]


def parse_screencap(data: bytes | bytearray, where: str) -> np.ndarray:
    """A raw ``screencap`` (header width, height, format[, colour space], then RGBA/RGBX pixels) as an ``(H, W, 4)``
    view of ``data``, without a copy (a frame is 9 MB: copies and fresh allocations are most of a step's time)."""
    if len(data) < 12:
        raise DeviceError(f"{where}: screencap returned {len(data)} bytes ({bytes(data[:80])!r})")
    w, h, fmt = struct.unpack_from("<III", data)
    header = len(data) - w * h * 4
    if header not in (12, 16) or fmt not in (1, 2):  # RGBA_8888, RGBX_8888; Android 12+ adds a colour space
        raise DeviceError(f"{where}: unexpected screencap format (width {w}, height {h}, format {fmt}, "
                          f"{len(data)} bytes); use env.screencap=png")
    return np.frombuffer(data, np.uint8, w * h * 4, header).reshape(h, w, 4)


class AdbDevice(Device):
    """A device an adb server knows by ``serial``. ``console_port`` defaults to the emulator's (``emulator-5554``
    → 5554); snapshots need it unless ``snapshot_reset="none"`` (a phone: episodes start from the home screen)."""

    def __init__(self, serial: str, adb_host: str = "127.0.0.1", adb_port: int = 5037, console_port: int | None = None,
                 *, command_timeout_s: float = 30.0, connect_timeout_s: float = 30.0, log_tags: list[str] | None = None,
                 screencap: str = "auto", snapshot_reset: str = "console", console_token_file: str = TOKEN_FILE,
                 envs_dir: str | Path | None = None, release: Callable[[], None] | None = None) -> None:
        if screencap not in SCREENCAP_MODES:
            raise DeviceError(f"unknown screencap mode {screencap!r}; choose from: {', '.join(SCREENCAP_MODES)}")
        if snapshot_reset not in RESET_MODES:
            raise DeviceError(f"unknown snapshot_reset {snapshot_reset!r}; choose from: {', '.join(RESET_MODES)}")
        self.serial, self.adb_host, self.adb_port = serial, adb_host, adb_port
        self.console_port = console_port if console_port is not None else emulator_console_port(serial)
        self.command_timeout_s, self.connect_timeout_s = command_timeout_s, connect_timeout_s
        self.screencap_mode = screencap
        self.snapshot_reset = snapshot_reset
        self.console_token_file = console_token_file
        self.envs_dir = envs_dir
        self._release = release
        self._console: EmulatorConsole | None = None
        self._pending: str | None = None  # the marker logged after the last input, not yet seen by the reader
        self._size: tuple[int, int] | None = None
        self._density: int | None = None
        self._locale: str | None = None
        self._sdk: int | None = None
        self._wait: float | None = None
        self._warned_reset = False
        self._start_server()
        self._ensure_device()
        self.reader = LogcatReader(self._open_logcat, serial)
        self.log_tags = log_tags
        self.reader.start()

    # ------------------------------------------------------------------------------------------ Device API
    @property
    def size(self) -> tuple[int, int]:
        if self._size is None:
            self._size = _wm_value(self.shell("wm size"), "size", self.serial)
        return self._size

    @property
    def density(self) -> int:
        if self._density is None:
            self._density = _wm_value(self.shell("wm density"), "density", self.serial)
        return self._density

    @property
    def observation_wait_s(self) -> float:
        """3 s (B-MoCA's 1/3 Hz) on emulators and phones; 0 on the simulated phone, which says so in a property."""
        if self._wait is None:
            self._wait = 0.0 if self.shell("getprop ro.vlui.simulated").strip() == "1" else 3.0
        return self._wait

    def locale_id(self) -> str:
        if self._locale is None:
            tag = self.shell("getprop persist.sys.locale").strip() or self.shell("getprop ro.product.locale").strip()
            self._locale = locale_id_of(tag or "en-US")
        return self._locale

    def screenshot(self) -> np.ndarray:
        return self._grab()[:, :, :3]

    def observation(self, height: int, width: int) -> np.ndarray:
        return observe(self._grab(), height, width)

    def ui_xml(self) -> str:
        for attempt in range(2):  # uiautomator sometimes fails while the screen is changing; once more then
            out = self.shell(f"uiautomator dump {DUMP_PATH} >/dev/null && cat {DUMP_PATH}")
            start = out.find("<?xml")
            if start >= 0:
                return out[start:]
            if attempt == 0:
                time.sleep(0.2)
        raise DeviceError(f"device {self.serial}: uiautomator dump failed ({out.strip()[:200] or 'no output'})")

    def tap(self, x: float, y: float) -> None:
        if math.isfinite(x) and math.isfinite(y):
            self._input(f"input tap {_num(x)} {_num(y)}")

    def swipe(self, x1: float, y1: float, x2: float, y2: float, duration_ms: int = 300) -> None:
        if all(math.isfinite(v) for v in (x1, y1, x2, y2)):
            self._input(f"input swipe {_num(x1)} {_num(y1)} {_num(x2)} {_num(y2)} {int(duration_ms)}")

    def key(self, name: str) -> None:
        if name not in KEYS:
            raise DeviceError(f"unknown key {name!r}; choose from: {', '.join(KEYS)}")
        self._input(f"input keyevent {KEYCODES[name]}")

    def text(self, value: str) -> None:
        self._input("; ".join(text_commands(value)))

    def keyboard_enter(self) -> None:
        self._input(f"input keyevent {KEYCODE_ENTER}")

    def open_app(self, app: str) -> None:
        """As AndroidWorld starts an app: monkey with the app's package and the launcher category. Its report (or
        "No activities found" for an app the device lacks) is not an error: a device without the app stays as it
        was. The Phone app is Google's dialer or, where monkey finds none (B-MoCA's release phones), AOSP's."""
        if app not in apps():
            raise DeviceError(f"unknown app {app!r}; apps: {', '.join(apps())}")
        packages = dict.fromkeys(app_info(app, dialer).package for dialer in ("google", "aosp"))
        self._input(" || ".join(f"monkey -p {p} -c android.intent.category.LAUNCHER 1 >/dev/null 2>&1"
                                for p in packages))

    def wait(self) -> None:
        time.sleep(WAIT_S)

    def log_mark(self) -> int:
        self._sync()
        return self.reader.count()

    def log_lines(self, since: int = 0, tags: Iterable[str] | None = None) -> list[str]:
        self._sync()
        lines = self.reader.since(since)
        if tags is None:
            return lines
        wanted = set(tags)
        return [ln for ln in lines if (f := parse_threadtime(ln)) is not None and f["tag"] in wanted]

    def clear_log(self) -> None:
        self.reader.stop()
        self.shell("logcat -c")
        self._pending = None
        self.reader = LogcatReader(self._open_logcat, self.serial)
        self.reader.start()
        self._sync()

    def load_snapshot(self, snapshot: str) -> None:
        name = load_snapshot(snapshot, self.envs_dir).id
        if self.snapshot_reset == "none":
            if not self._warned_reset:
                log.warning("device %s has no snapshots to load (env.snapshot_reset=none): every episode starts "
                            "from the device as it is, at the home screen", self.serial)
                self._warned_reset = True
            return
        self.console(f"avd snapshot load {name}")
        self._ensure_device()
        self._size = self._density = self._locale = None
        self.reader.stop()
        self.reader = LogcatReader(self._open_logcat, self.serial)
        self.reader.start()
        self._pending = None

    def install_apps(self, pinned: Sequence[PinnedApp], home: HomeScreen | None = None) -> None:
        """Checks that the device has the apps (``pm list packages``): vlui installs none on a real device, and
        leaves its home screen as it is (``home`` is what the benchmark's set-up gives it: docs/environment.md)."""
        task_state.require_installed(self, pinned)

    def set_state(self, fields: dict) -> None:
        """A task's starting state through shell commands (:mod:`vlui.adb.state`: radios, volumes, brightness,
        dark theme, a call); state inside apps is refused by name."""
        task_state.set_state(self, fields)

    def check_state(self, spec: dict) -> bool:
        return task_state.check_state(self, spec)

    @property
    def sdk(self) -> int:
        """The device's Android API level (``ro.build.version.sdk``)."""
        if self._sdk is None:
            value = self.shell("getprop ro.build.version.sdk").strip()
            if not value.isdigit():
                raise DeviceError(f"device {self.serial}: getprop ro.build.version.sdk printed {value!r}")
            self._sdk = int(value)
        return self._sdk

    def close(self) -> None:
        self.reader.stop()
        if self._console is not None:
            self._console.close()
            self._console = None
        if self._release is not None:
            self._release()
            self._release = None

    # ------------------------------------------------------------------------------------------ commands
    def shell(self, command: str, timeout_s: float | None = None) -> str:
        """Run ``command`` in the device's shell; its output (stdout and stderr) as text."""
        return self.exec(command, timeout_s, service="shell").decode("utf-8", "replace")

    def exec(self, command: str, timeout_s: float | None = None, service: str = "exec") -> bytes:
        """Run ``command`` without a terminal (``adb exec-out``); its output, byte for byte."""
        return self._call(f"{service}:{command}", _read_all, timeout_s)

    def shell_out(self, command: str, timeout: float | None = None) -> tuple[str, int]:
        """``command``'s output and exit status (the status is echoed after it, as adbutils' ``shell2`` does)."""
        marker = "__vlui_exit__"
        out = self.shell(f"{command}; echo {marker}$?", timeout)
        body, sep, status = out.rpartition(marker)
        if not sep or not status.strip().isdigit():
            raise DeviceError(f"device {self.serial}: no exit status from {command!r} (output {out[-200:]!r})")
        return body, int(status.strip())

    def push_bytes(self, data: bytes, remote: str) -> None:
        """Write ``data`` to the file ``remote`` on the device (adb's sync protocol)."""
        device = adbutils.AdbClient(host=self.adb_host, port=self.adb_port).device(serial=self.serial)
        try:
            device.sync.push(data, remote)
        except (AdbError, OSError) as err:
            raise DeviceError(f"device {self.serial}: pushing {remote} failed ({err})") from None

    def pull_bytes(self, remote: str) -> bytes:
        """The content of the file ``remote`` on the device, byte for byte (adb's sync protocol, as ``adb pull``)."""
        device = adbutils.AdbClient(host=self.adb_host, port=self.adb_port).device(serial=self.serial)
        try:
            return device.sync.read_bytes(remote)
        except (AdbError, OSError) as err:
            raise DeviceError(f"device {self.serial}: pulling {remote} failed ({err})") from None

    def shared_prefs(self, app: str, file: str) -> str | None:
        """The app's file, copied as root and pulled (:func:`vlui.adb.state.shared_prefs`)."""
        return task_state.shared_prefs(self, app, file)

    def root(self) -> None:
        """Restart adbd as root (``adb root``; emulator images without Google Play allow it)."""
        out = self._call("root:", _read_all, None).decode("utf-8", "replace").strip()
        if "cannot run as root" in out:
            raise DeviceError(f"device {self.serial}: {out}")
        if "already running as root" not in out:
            time.sleep(1.0)  # adbd restarts: the device goes away for a moment
            self._ensure_device()

    def console(self, command: str) -> str:
        """Run an emulator console command (``avd snapshot load 000``); its reply."""
        if self.console_port is None:
            raise DeviceError(f"device {self.serial} has no emulator console: set env.console_port for an emulator "
                              "reached by address, or env.snapshot_reset=none for a phone")
        if self._console is None:
            self._console = EmulatorConsole(self.console_port, "127.0.0.1", self.console_token_file,
                                            timeout_s=max(self.command_timeout_s, 60.0))
        return "\n".join(self._console.command(command))

    # ------------------------------------------------------------------------------------------ internals
    def _input(self, command: str) -> None:
        token = f"{os.getpid()}-{next(_tokens)}"
        out = self.shell(f"{command}; log -t {SYNC_TAG} {token}")
        if out.strip():
            raise DeviceError(f"device {self.serial}: {command!r} failed: {out.strip().splitlines()[0]}")
        self._pending = token

    def _sync(self) -> None:
        """Wait until the log reader has every line logged so far (the marker of the last input, or a new one)."""
        token = self._pending
        if token is None:
            token = f"{os.getpid()}-{next(_tokens)}"
            self.shell(f"log -t {SYNC_TAG} {token}")
        self._pending = None
        if self.reader.wait_marker(token, self.command_timeout_s) is not None:
            return
        reason = self.reader.error or f"no log line arrived within {self.command_timeout_s:g} s"
        log.warning("device %s: %s; reopening the log stream", self.serial, reason)
        token = f"{os.getpid()}-{next(_tokens)}"
        try:
            self.reader.resume(token)
            self.shell(f"log -t {SYNC_TAG} {token}")
        except (AdbError, OSError) as err:
            raise DeviceError(f"device {self.serial}: the log stream stopped ({reason}) and could not be reopened "
                              f"({err})") from None
        if self.reader.wait_marker(token, self.command_timeout_s) is None:
            raise DeviceError(f"device {self.serial}: the log stream stopped ({reason}) and did not recover")

    def _grab(self) -> np.ndarray:
        """The screen as ``(H, W, 4)`` (raw) or ``(H, W, 3)`` (PNG) uint8."""
        if self.screencap_mode == "auto":
            self.screencap_mode = self._pick_screencap()
        pixels = self.screencap_as(self.screencap_mode)
        self._size = (pixels.shape[1], pixels.shape[0])  # follows a rotation
        return pixels

    def screencap_as(self, mode: str) -> np.ndarray:
        if mode == "raw":
            data = self._call("exec:screencap", _read_screencap, None)
            return parse_screencap(data, f"device {self.serial}")
        data = self.exec("screencap -p")
        try:
            return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
        except OSError:
            raise DeviceError(f"device {self.serial}: screencap -p did not return a PNG ({data[:80]!r})") from None

    def _pick_screencap(self) -> str:
        times = {}
        for mode in ("raw", "png"):
            start = time.perf_counter()
            try:
                self.screencap_as(mode)
            except DeviceError:
                continue
            times[mode] = time.perf_counter() - start
        if not times:
            raise DeviceError(f"device {self.serial}: neither raw nor PNG screencap works")
        mode = min(times, key=times.get)
        log.info("device %s: screencap %s", self.serial, ", ".join(f"{m} {t * 1000:.0f} ms" for m, t in times.items()))
        return mode

    def _open_logcat(self) -> socket.socket:
        conn = self._open(f"shell:{logcat_command(self.log_tags)}", timeout_s=self.connect_timeout_s)
        conn.conn.settimeout(1.0)  # the reader wakes up each second to see whether it should stop
        return conn.conn

    def _open(self, service: str, timeout_s: float | None) -> AdbConnection:
        conn = _Connection(self.adb_host, self.adb_port)
        conn.conn.settimeout(timeout_s or self.command_timeout_s)
        conn.conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            conn.send_command(f"host:transport:{self.serial}")
            conn.check_okay()
            conn.send_command(service)
            conn.check_okay()
        except BaseException:
            conn.close()
            raise
        return conn

    def _call(self, service: str, read: Callable[[socket.socket], T], timeout_s: float | None) -> T:
        """Open ``service`` and ``read`` its reply, reconnecting once when the device cannot be reached."""
        timeout = timeout_s or self.command_timeout_s
        for attempt in range(2):
            try:
                return self._attempt(service, read, timeout)
            except _Accepted as err:
                if isinstance(err.cause, (socket.timeout, TimeoutError)):
                    raise DeviceError(f"device {self.serial}: {service!r} did not finish within {timeout:g} s") \
                        from None
                raise DeviceError(f"device {self.serial}: connection lost during {service!r} ({err})") from None
            except (AdbError, OSError) as err:
                if attempt == 1:
                    raise DeviceError(f"device {self.serial} cannot be reached ({err}); check `adb devices`") \
                        from None
                self._ensure_device()
        raise AssertionError("unreachable")

    def _attempt(self, service: str, read: Callable[[socket.socket], T], timeout: float) -> T:
        conn = self._open(service, timeout)
        try:
            return read(conn.conn)
        except (AdbError, OSError) as err:
            raise _Accepted(err) from None
        finally:
            conn.close()

    def _start_server(self) -> None:
        """Use the adb server at adb_host:adb_port, starting one there (loopback only) if none answers."""
        try:
            socket.create_connection((self.adb_host, self.adb_port), timeout=3).close()
            return
        except OSError:
            pass
        if not _loopback(self.adb_host):
            raise DeviceError(f"no adb server answers at {self.adb_host}:{self.adb_port}")
        try:
            subprocess.run([adbutils.adb_path(), "-P", str(self.adb_port), "start-server"], check=True,
                           capture_output=True, timeout=60)
        except (subprocess.SubprocessError, OSError, AdbError) as err:
            raise DeviceError(f"could not start an adb server on port {self.adb_port} ({err})") from None

    def _ensure_device(self) -> None:
        """Make sure the server sees the device online: ``adb connect`` for an address, then wait for it."""
        client = adbutils.AdbClient(host=self.adb_host, port=self.adb_port, socket_timeout=self.connect_timeout_s)
        try:
            if ":" in self.serial and self._state(client) != "device":
                client.connect(self.serial, timeout=self.connect_timeout_s)
            deadline = time.monotonic() + self.connect_timeout_s
            while (state := self._state(client)) != "device":
                if time.monotonic() > deadline:
                    known = ", ".join(f"{serial} ({s})" for serial, s in self._devices(client).items()) or "none"
                    raise DeviceError(f"device {self.serial} is {state or 'not connected'} after "
                                      f"{self.connect_timeout_s:g} s (the adb server at {self.adb_host}:"
                                      f"{self.adb_port} lists: {known})")
                time.sleep(0.2)
        except (AdbError, OSError) as err:
            raise DeviceError(f"the adb server at {self.adb_host}:{self.adb_port} failed ({err})") from None

    def _devices(self, client: adbutils.AdbClient) -> dict[str, str]:
        """Serial -> state (``device``, ``offline``, ...) of every device the server lists."""
        with client.make_connection() as c:
            c.send_command("host:devices")
            c.check_okay()
            return dict(ln.split("\t", 1) for ln in c.read_string_block().splitlines() if "\t" in ln)

    def _state(self, client: adbutils.AdbClient) -> str | None:
        return self._devices(client).get(self.serial)


def _wm_value(out: str, what: str, serial: str) -> Any:
    """``wm size`` / ``wm density`` output: the override if any, else the physical value."""
    values = {}
    for line in out.splitlines():
        kind, _, value = line.partition(f" {what}: ")
        if value:
            values[kind.strip()] = value.strip()
    value = values.get("Override") or values.get("Physical")
    try:
        if what == "size":
            w, h = value.split("x")
            return int(w), int(h)
        return int(value)
    except (AttributeError, TypeError, ValueError):
        raise DeviceError(f"device {serial}: cannot read the screen {what} from `wm {what}` ({out.strip()!r})") \
            from None


def locale_id_of(tag: str) -> str:
    """A device's locale tag (``zh-Hans-CN``) as the id vlui's snapshots use (``zh-hans-CN``) when it knows it."""
    known = {k.lower(): k for k in locales()}
    return known.get(tag.lower(), tag)


def online_serials(adb_host: str, adb_port: int, connect: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The serials the adb server at ``adb_host:adb_port`` lists online (state ``device``), after ``adb connect``
    to each address of ``connect`` (``host:port`` serials) it does not list yet; [] when no server answers."""
    client = adbutils.AdbClient(host=adb_host, port=adb_port, socket_timeout=10)

    def listed() -> dict[str, str]:
        with client.make_connection() as c:
            c.send_command("host:devices")
            c.check_okay()
            return dict(ln.split("\t", 1) for ln in c.read_string_block().splitlines() if "\t" in ln)

    try:
        devices = listed()
        addresses = [s for s in connect if ":" in s and devices.get(s) != "device"]
        for serial in addresses:
            try:
                client.connect(serial, timeout=10)
            except (AdbError, OSError):
                pass
        if addresses:
            devices = listed()
    except (AdbError, OSError):
        return []
    return sorted(s for s, state in devices.items() if state == "device")


# ---------------------------------------------------------------------------------------------- sharing devices
def claim(serials: list[str], adb_host: str, adb_port: int) -> tuple[str, Callable[[], None]]:
    """The first of ``serials`` no other environment uses (a lock file per device, across processes), and the
    function that frees it."""
    root = Path(tempfile.gettempdir()) / f"vlui-adb-{os.getuid()}"
    root.mkdir(exist_ok=True)
    for serial in serials:
        path = root / f"{adb_host}_{adb_port}_{serial.replace('/', '_').replace(':', '_')}.lock"
        f = open(path, "a")  # noqa: SIM115 - held until the device is released
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            continue

        def release(f=f) -> None:
            fcntl.flock(f, fcntl.LOCK_UN)
            f.close()

        return serial, release
    raise DeviceError(f"every device of env.serial ({', '.join(serials)}) is in use by another environment; give "
                      "one serial per parallel environment (env.num_envs)")
