"""The simulated phone as a served device: one :class:`~vlui.sim.phone.SimDevice` shared, under a lock, by every
ADB stream and the emulator console (:mod:`vlui.served.adbd`, :mod:`vlui.served.console`).

Besides the phone it holds what a real device keeps outside the UI: a small file system (``/sdcard``, the
uiautomator dump, pushed files), system properties, the settings provider's tables, and the emulator's named
snapshots. Everything that may write to the log calls :meth:`ServedPhone.changed` so that streaming ``logcat``
readers wake up.
"""

from __future__ import annotations

import math
import pickle
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from vlui.android.launcher import LAUNCHER_DB
from vlui.android.logcat import Entry, write_boot_log
from vlui.android.snapshot import Snapshot, load_snapshot, snapshot_ids
from vlui.android.state import DeviceState
from vlui.errors import VluiError
from vlui.served.device_files import device_launcher_db, locale_prop
from vlui.served.storage import DEFAULT_BUDGET, PhoneFiles, held_bytes
from vlui.sim.phone import SimDevice

SDK = 29  # Android 10, as B-MoCA's emulators
RELEASE = "10"
# The build of the Android 10 (API 29) Google APIs emulator image (sdk_gphone_x86, userdebug, which allows
# `adb root`); PRODUCT is sdk_gphone_x86 for phones and sdk_gtablet_x86 for tablets.
BUILD_ID, BUILD_INCREMENTAL, SECURITY_PATCH = "QSR1.210802.001", "7603624", "2021-08-05"


def build_props(product: str) -> dict[str, str]:
    """The ``ro.build.*`` and related properties a device's build sets: what tools read to tell the image."""
    fingerprint = f"google/{product}/generic_x86:{RELEASE}/{BUILD_ID}/{BUILD_INCREMENTAL}:userdebug/dev-keys"
    props = {
        "ro.build.fingerprint": fingerprint,
        "ro.build.id": BUILD_ID,
        "ro.build.display.id": f"{product}-userdebug {RELEASE} {BUILD_ID} {BUILD_INCREMENTAL} dev-keys",
        "ro.build.description": f"{product}-userdebug {RELEASE} {BUILD_ID} {BUILD_INCREMENTAL} dev-keys",
        "ro.build.flavor": f"{product}-userdebug",
        "ro.build.product": "generic_x86",
        "ro.build.type": "userdebug",
        "ro.build.tags": "dev-keys",
        "ro.build.user": "android-build",
        "ro.build.version.incremental": BUILD_INCREMENTAL,
        "ro.build.version.codename": "REL",
        "ro.build.version.all_codenames": "REL",
        "ro.build.version.preview_sdk": "0",
        "ro.build.version.security_patch": SECURITY_PATCH,
        "ro.build.version.base_os": "",
        "ro.build.characteristics": "emulator",
        "ro.bootimage.build.fingerprint": fingerprint,
        "ro.vendor.build.fingerprint": fingerprint,
        "ro.product.board": "goldfish_x86",
        "ro.product.cpu.abi": "x86",
        "ro.product.cpu.abilist": "x86",
        "ro.product.cpu.abilist32": "x86",
        "ro.product.cpu.abilist64": "",
        "ro.hardware": "ranchu",
        "ro.boot.hardware": "ranchu",
        "ro.boot.qemu": "1",
        "ro.debuggable": "1",
        "ro.secure": "1",
        "ro.zygote": "zygote32",
        "ro.treble.enabled": "true",
        "ro.opengles.version": "196609",
        "ro.carrier": "unknown",
        "ro.crypto.state": "encrypted",
        "ro.boot.bootreason": "reboot",
        "persist.sys.timezone": "GMT",
        "gsm.operator.alpha": "Android",
        "gsm.sim.operator.alpha": "Android",
        "gsm.operator.numeric": "310260",
        "gsm.sim.operator.numeric": "310260",
        "gsm.sim.state": "READY",
        "gsm.network.type": "LTE",
        "init.svc.adbd": "running",
        "init.svc.zygote": "running",
        "service.bootanim.exit": "1",
        "dev.bootcomplete": "1",
    }
    return props


@dataclass(frozen=True)
class ServeLimits:
    """What the clients of the served phone may use, so that no client can starve the others or the host
    (``docs/security.md``). A *client* is one connection: every client comes from loopback, so a peer's address
    tells none apart, and an adb server sends all its commands over one connection. The ``client_*`` quotas bound
    one connection; the ``max_*`` caps above them bound them all. ``None`` turns a timeout off."""

    storage_bytes: int = DEFAULT_BUDGET  # the phone's files; the console's saved snapshots get as much again
    sql_timeout_s: float = 5.0  # one sqlite3 invocation
    max_connections: int = 64  # per server (the adb transport, the console)
    max_streams: int = 256  # open adb streams (services running) across every connection
    client_streams: int = 32  # open adb streams on one connection
    client_pushes: int = 4  # pushes one connection sends at once; more wait their turn
    client_buffer_bytes: int = 16 << 20  # output queued for one connection before its services wait for the host
    max_buffer_bytes: int = 256 << 20  # output queued for every connection together
    handshake_timeout_s: float = 10.0  # to send CNXN (adb), and to finish a packet begun
    auth_timeout_s: float = 60.0  # to authenticate on the console (time enough to paste the token by hand)
    idle_timeout_s: float | None = None  # a connection that sends nothing this long; None: kept, as adbd does

    def __post_init__(self) -> None:
        for name in ("storage_bytes", "max_connections", "max_streams", "client_streams", "client_pushes",
                     "client_buffer_bytes", "max_buffer_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < (0 if name == "storage_bytes" else 1):
                raise VluiError(f"serve limit {name} must be an integer >= {0 if name == 'storage_bytes' else 1}, "
                                f"not {value!r}")
        for name in ("sql_timeout_s", "handshake_timeout_s", "auth_timeout_s", "idle_timeout_s"):
            value = getattr(self, name)
            if value is None and name == "idle_timeout_s":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                    or value <= 0:
                raise VluiError(f"serve limit {name} must be a number of seconds > 0, not {value!r}")

    @property
    def reserved_streams(self) -> int:
        """Streams every connection can open however many the others hold: half of :attr:`max_streams` is set
        aside in equal shares for :attr:`max_connections` connections, and the other half is first come, first
        served."""
        return self.max_streams // (2 * self.max_connections)


@dataclass
class SavedSnapshot:
    """An emulator snapshot saved from the console: the configuration, the state and the log."""

    snapshot: Snapshot
    state: DeviceState
    log: tuple[list[Entry], int]
    files: dict[str, bytes]
    props: dict[str, str]
    settings: dict[str, dict[str, str]]


MAX_SAVED_SNAPSHOTS = 32  # snapshots the console keeps at once
LOG_ENTRY_BYTES = 120  # what a log entry holds besides its tag and message (its object, times and ids)


def saved_bytes(snapshots: Iterable[SavedSnapshot]) -> int:
    """What ``snapshots`` hold, whole: their files (as :class:`PhoneFiles` counts them), their logs, their state
    (pickled: about what its objects take), properties and settings. Contents and log entries that several share
    (a file no one changed, the log's older lines) are counted once."""
    snapshots = list(snapshots)
    entries = {id(e): e for s in snapshots for e in s.log[0]}
    log = sum(LOG_ENTRY_BYTES + len(e.tag) + len(e.message) for e in entries.values())
    rest = sum(len(pickle.dumps(s.state)) + sum(len(k) + len(v) for k, v in s.props.items())
               + sum(len(k) + len(v) for table in s.settings.values() for k, v in table.items()) for s in snapshots)
    return held_bytes(*(s.files for s in snapshots)) + log + rest


class ServedPhone:
    """The shared phone. Take :attr:`lock` around every use of :attr:`device`."""

    def __init__(self, snapshot: str | Path | Snapshot = "000", envs_dir: str | Path | None = None,
                 step_ms: int = 3000, noise: bool = True, serial: str = "EMULATOR29X0X0X0",
                 limits: ServeLimits = ServeLimits()) -> None:
        self.device = SimDevice(snapshot, envs_dir, step_ms=step_ms, noise=noise)
        write_boot_log(self.device.log, self.device.state.time_ms)  # an emulator's log starts with its boot
        self.boot_snapshot = snapshot  # what ``adb reboot`` comes back on
        self.envs_dir = envs_dir
        self.serial = serial
        self.limits = limits
        self.lock = threading.RLock()
        self.log_changed = threading.Condition(self.lock)  # notified after anything that may have logged
        # absolute path -> content; directories are implied by their files
        self.files = PhoneFiles(budget=limits.storage_bytes)
        self.props: dict[str, str] = {}  # set with setprop; overrides the derived ones (see prop())
        self.settings: dict[str, dict[str, str]] = {"system": {}, "secure": {}, "global": {}}
        self.saved: dict[str, SavedSnapshot] = {}
        self.closed = threading.Event()  # set when the server shuts down: streams end
        self._on_boot()

    def _on_boot(self) -> None:
        """After boot and every snapshot load: the launcher writes its database when the disk has none."""
        with self.lock:
            if LAUNCHER_DB not in self.files:
                self.files[LAUNCHER_DB] = device_launcher_db(self.device)

    def holds_lock(self) -> bool:
        """Whether the calling thread holds :attr:`lock` (the transport never waits for the network then).
        ``_is_owned`` is what :class:`threading.Condition` asks every lock; both RLocks have it."""
        return self.lock._is_owned()

    # ------------------------------------------------------------------------------------------ notifications
    def changed(self) -> None:
        """Wake streaming readers (call after any command that may have written to the log)."""
        with self.lock:
            self.log_changed.notify_all()

    # ------------------------------------------------------------------------------------------ properties
    def prop(self, name: str) -> str:
        """``getprop NAME``: an empty string for an unknown property, as on Android."""
        return self.all_props().get(name, "")

    def all_props(self) -> dict[str, str]:
        snap = self.device.snapshot
        model = snap.profile["model"]
        product = "sdk_gphone_x86" if snap.profile["kind"] == "phone" else "sdk_gtablet_x86"
        derived = {
            **build_props(product),
            "ro.build.version.sdk": str(SDK),
            "ro.build.version.release": RELEASE,
            "ro.build.characteristics": "emulator" if snap.profile["kind"] == "phone" else "tablet,emulator",
            "ro.product.model": model,
            "ro.product.manufacturer": "Google",
            "ro.product.brand": "google",
            "ro.product.name": product,
            "ro.product.device": "generic_x86",
            "ro.serialno": self.serial,
            "ro.boot.serialno": self.serial,
            "ro.kernel.qemu": "1",
            "ro.sf.lcd_density": str(snap.profile["dpi"]),
            "persist.sys.locale": locale_prop(self.device),
            "ro.product.locale": "en-US",
            "sys.boot_completed": "1",
            "ro.vlui.simulated": "1",  # lets the ADB backend skip the wait a real device needs to settle
        }
        return {**derived, **self.props}

    # ------------------------------------------------------------------------------------------ snapshots
    def snapshot_names(self) -> list[str]:
        """Names ``avd snapshot load`` accepts: those saved on this device, then the snapshot ids of ``envs/``."""
        return list(self.saved) + [s for s in snapshot_ids("all", self.envs_dir) if s not in self.saved]

    def load_snapshot(self, name: str) -> None:
        """``avd snapshot load NAME``: a snapshot saved here, else the snapshot definition ``envs/NAME.yaml``."""
        with self.lock:
            saved = self.saved.get(name)
            if saved is not None:
                dev = self.device
                dev.load_snapshot(saved.snapshot)
                dev.state = saved.state.copy()
                dev.log.restore_state((list(saved.log[0]), saved.log[1]))
                dev.state_changed()
                self.files, self.props = PhoneFiles(saved.files, self.limits.storage_bytes), dict(saved.props)
                self.settings = {k: dict(v) for k, v in saved.settings.items()}
                self._on_boot()
                self.log_changed.notify_all()
            else:
                if "/" in name or name.endswith((".yaml", ".yml")):
                    raise VluiError(f"snapshot '{name}' not found")
                load_snapshot(name, self.envs_dir)  # raises VluiError for an unknown name
                self._boot(name)

    def reboot(self) -> None:
        """``adb reboot``: the phone comes back on the snapshot it was served with, files and properties too, as
        an emulator that boots from its snapshot. Snapshots saved on the console stay."""
        self._boot(self.boot_snapshot)

    def _boot(self, snapshot: str | Path | Snapshot) -> None:
        """The phone as ``snapshot`` defines it, with fresh files, properties and settings."""
        with self.lock:
            self.device.load_snapshot(snapshot)
            write_boot_log(self.device.log, self.device.state.time_ms)
            self.files, self.props = PhoneFiles(budget=self.limits.storage_bytes), {}
            self.settings = {"system": {}, "secure": {}, "global": {}}
            self._on_boot()
            self.log_changed.notify_all()

    def save_snapshot(self, name: str) -> None:
        """``avd snapshot save NAME``: the current configuration, state and log, under ``name``."""
        if not name or any(c in name for c in "/\\ \t"):
            raise VluiError(f"invalid snapshot name {name!r}")
        with self.lock:
            if name not in self.saved and len(self.saved) >= MAX_SAVED_SNAPSHOTS:
                raise VluiError(f"too many snapshots: at most {MAX_SAVED_SNAPSHOTS} are saved; delete one first")
            dev = self.device
            saved = SavedSnapshot(dev.snapshot, dev.state.copy(), dev.log.copy_state(), self.files.snapshot(),
                                  dict(self.props), {k: dict(v) for k, v in self.settings.items()})
            others = [s for n, s in self.saved.items() if n != name]
            if saved_bytes([saved, *others]) > self.limits.storage_bytes:
                raise VluiError(f"not enough space to save snapshot '{name}': saved snapshots (files, logs and "
                                f"state) may hold {self.limits.storage_bytes >> 20} MiB; delete one first")
            self.saved[name] = saved

    def delete_snapshot(self, name: str) -> None:
        with self.lock:
            if self.saved.pop(name, None) is None:
                raise VluiError(f"snapshot '{name}' not found")

    # ------------------------------------------------------------------------------------------ files
    # Directories are implied: those every device has (below) and the parents of every path in ``files`` (whose
    # index answers for them). An empty directory made by ``mkdir`` is kept as the key ``DIR/``.
    STANDARD_DIRS = ("/data/data", "/data/local/tmp", "/data/system/users/0", "/system/bin", *(
        f"/sdcard/{d}" for d in ("Alarms", "DCIM", "Download", "Movies", "Music", "Notifications", "Pictures",
                                 "Podcasts", "Ringtones")))

    def is_dir(self, path: str) -> bool:
        """Whether the absolute, normalised ``path`` is a directory. Take :attr:`lock` around it."""
        return self.files.is_dir(path) or (path.rstrip("/") or "/") in _STANDARD_NAMES

    def list_dir(self, path: str) -> list[str]:
        """The sorted names (files and directories) in directory ``path``. Take :attr:`lock` around it."""
        path = path.rstrip("/") or "/"
        return sorted({*self.files.names(path), *_STANDARD_NAMES.get(path, ())})

    def make_dir(self, path: str) -> None:
        """Make ``path`` a directory that stays one while it holds nothing (``mkdir``)."""
        if not self.is_dir(path):
            self.files[path.rstrip("/") + "/"] = b""


def _standard_names() -> dict[str, set[str]]:
    """The standard directories and their parents -> the names in them that are standard directories."""
    names: dict[str, set[str]] = {}
    for d in ServedPhone.STANDARD_DIRS:
        names.setdefault(d, set())
        while d != "/":
            parent, _, name = d.rpartition("/")
            parent = parent or "/"
            names.setdefault(parent, set()).add(name)
            d = parent
    return names


_STANDARD_NAMES = _standard_names()
