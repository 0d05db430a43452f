"""Device configuration of the served simulated phone, as shell commands change it on a real Android 10 device.

Each public function is what one command does (the shell, :mod:`vlui.served.shell`, parses the command and calls it):

==========================================  ==========================================================
``wm density [N|reset]``                    :func:`density`, :func:`set_density` (at once)
``settings get|put|delete NS KEY``          :func:`get_setting`, :func:`put_setting`, :func:`delete_setting`
                                            (``system font_scale`` at once)
``cmd uimode night [yes|no]``               :func:`night_mode`, :func:`set_night_mode` (at once)
``date MMDDhhmm[[CC]YY][.ss]``              :func:`set_time`
``setprop ctl.restart zygote``              :func:`restart_framework`: ``persist.sys.locale``, the wallpaper
                                            files and the launcher database take effect; every app dies
``am force-stop PACKAGE``                   :func:`force_stop` (the launcher reloads its database)
==========================================  ==========================================================

Reconfiguring keeps the phone's state (apps, settings, alarms) and changes only its configuration: the device's
:class:`~vlui.android.snapshot.Snapshot` is replaced by a copy with new fields, and everything derived from it (locale,
home grid, frames) follows. What a device keeps in files lives in ``phone.files`` as real file contents: the
launcher's SQLite database (:data:`~vlui.android.launcher.LAUNCHER_DB`, Launcher3's ``favorites`` table) and the wallpaper images
(:data:`WALLPAPER_FILES`, PNGs that name the vlui wallpaper they were rendered from in a text chunk).
"""

from __future__ import annotations

import io
import re
import sqlite3
from datetime import datetime

from PIL import Image, UnidentifiedImageError

from vlui.android import launcher
from vlui.android.apps import LAUNCHER_PKG, app_info, app_uid, apps_of, uid_name
from vlui.android.i18n import locale_for_tag
from vlui.android.launcher import DESKTOP, HOTSEAT, ITEM_APPLICATION, LAUNCHER_DB
from vlui.android.logcat import EPOCH
from vlui.android.profiles import is_wallpaper
from vlui.errors import VluiError
from vlui.served.device_files import (
    WALLPAPER_CHUNK,
    WALLPAPER_FILES,
    current_layout,
    db_bytes,
    device_launcher_db,
    open_db,
)
from vlui.served.phone import ServedPhone
from vlui.sim import services
from vlui.sim.apps import messages, on_restart
from vlui.sim.phone import SimDevice

FONT_SCALE_RANGE = (0.5, 2.0)
DENSITY_RANGE = (80, 1000)
DEFAULT_SETTINGS = {("global", "auto_time"): "1"}  # what an emulator reports before anything is put

# Processes outside the app model. Deterministic stand-ins for what a device would print.
ZYGOTE_PID = 1052
LAUNCHER_PID = 1931
LAUNCHER_UID = 10080  # the "from uid 10080" of the launcher's START lines
RESTART_MS = 14000  # virtual time a framework restart takes, from the kill to the home screen


# ---------------------------------------------------------------------------------------------------- density
def density(phone: ServedPhone) -> tuple[int, int | None]:
    """(physical density, override or None), as ``wm density`` prints them."""
    with phone.lock:
        physical = phone.device.snapshot.profile["dpi"]
        dpi = phone.device.snapshot.dpi
        return physical, (dpi if dpi != physical else None)


def set_density(phone: ServedPhone, dpi: int | None) -> None:
    """``wm density N`` (None: ``wm density reset``). The launcher migrates its model when its grid changes."""
    lo, hi = DENSITY_RANGE
    if dpi is not None and not lo <= dpi <= hi:
        raise VluiError(f"density must be between {lo} and {hi} dpi on the simulated phone, not {dpi}")
    with phone.lock:
        dev = phone.device
        before = dev.snapshot.home_grid
        dev.reconfigure(dpi=dpi or dev.snapshot.profile["dpi"])
        if dev.snapshot.home_grid != before:
            if isinstance(dev.snapshot.home_layout, dict):  # explicit icons outside the new grid are dropped
                dev.reconfigure(home_layout=launcher.explicit_layout(current_layout(dev)))
            _write_launcher_db(phone)


# ---------------------------------------------------------------------------------------------------- settings
def _flag(value: bool) -> str:
    return "1" if value else "0"


def _int_setting(key: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise VluiError(f"settings: {key} takes an integer on the simulated phone, not {value!r}") from None


# Settings the device state holds, as Android 10 reports them: ``(namespace, key) -> (read, apply)``. ``apply`` is
# what writing the setting does at once (its observer in the system server); None: writing it changes nothing until
# something else acts on it (airplane mode takes the AIRPLANE_MODE broadcast; the radios, their own services; the
# night mode, ``cmd uimode``), and until then ``settings get`` reports the written value.
STATE_SETTINGS = {
    ("global", "airplane_mode_on"): (lambda st: _flag(st.airplane_mode), None),
    # Wi-Fi is 2 while airplane mode holds it off (WIFI_DISABLED_AIRPLANE_ON)
    ("global", "wifi_on"): (lambda st: "0" if not st.wifi else "2" if st.airplane_mode else "1", None),
    ("global", "bluetooth_on"): (lambda st: _flag(st.bluetooth), None),
    ("secure", "ui_night_mode"): (lambda st: "2" if st.dark_theme else "1", None),
    # written by Settings' dialog about dark theme (null until then); the dialog shows while it is not 1
    ("secure", "dark_mode_dialog_seen"): (
        lambda st: "1" if st.dark_mode_dialog_seen else None,
        lambda dev, v: services.set_dark_mode_dialog_seen(dev, _int_setting("dark_mode_dialog_seen", v) == 1)),
    ("system", "screen_brightness"): (
        lambda st: str(st.brightness),
        lambda dev, v: services.set_brightness(dev, _int_setting("screen_brightness", v))),
    ("system", "screen_brightness_mode"): (
        lambda st: _flag(st.adaptive_brightness),
        lambda dev, v: setattr(dev.state, "adaptive_brightness", _int_setting("screen_brightness_mode", v) == 1)),
    ("system", "vibrate_when_ringing"): (
        lambda st: _flag(st.vibrate_for_calls),
        lambda dev, v: services.set_vibrate_for_calls(dev, _int_setting("vibrate_when_ringing", v) == 1)),
}


def get_setting(phone: ServedPhone, namespace: str, key: str) -> str | None:
    """``settings get NS KEY``: None where Android prints ``null``."""
    with phone.lock:
        table = _table(phone, namespace)
        backed = STATE_SETTINGS.get((namespace, key))
        if backed is not None:
            st = phone.device.state
            return st.unapplied_settings.get(f"{namespace}/{key}", backed[0](st))
        value = table.get(key)
        if value is None and (namespace, key) == ("system", "font_scale"):
            return str(float(phone.device.snapshot.font_scale))
        return value if value is not None else DEFAULT_SETTINGS.get((namespace, key))


def put_setting(phone: ServedPhone, namespace: str, key: str, value: str) -> None:
    """``settings put NS KEY VALUE``. ``system font_scale`` resizes text at once, as on Android; so do the
    brightness settings and ``vibrate_when_ringing`` change the device (see :data:`STATE_SETTINGS`)."""
    with phone.lock:
        table = _table(phone, namespace)
        if (namespace, key) == ("system", "font_scale"):
            phone.device.reconfigure(font_scale=_font_scale(value))
        backed = STATE_SETTINGS.get((namespace, key))
        if backed is not None and backed[1] is not None:
            backed[1](phone.device, value)
            phone.device.state_changed()
            return
        if backed is not None:
            phone.device.state.unapplied_settings[f"{namespace}/{key}"] = value
            return
        size = sum(len(k) + len(v) for k, v in table.items()) - len(table.get(key, "")) + len(value) + \
            (0 if key in table else len(key))
        if size > SETTINGS_BYTES[namespace]:
            raise VluiError(SETTINGS_FULL[namespace])
        table[key] = value


def delete_setting(phone: ServedPhone, namespace: str, key: str) -> int:
    """``settings delete NS KEY``: the number of rows deleted (0 or 1). A setting the device state backs loses
    only a written value not yet applied."""
    with phone.lock:
        deleted = _table(phone, namespace).pop(key, None) is not None
        deleted |= phone.device.state.unapplied_settings.pop(f"{namespace}/{key}", None) is not None
        if deleted and (namespace, key) == ("system", "font_scale"):
            phone.device.reconfigure(font_scale=1.0)
        return int(deleted)


def list_settings(phone: ServedPhone, namespace: str) -> dict[str, str]:
    """``settings list NS``: every row, those the device state backs included."""
    with phone.lock:
        keys = set(_table(phone, namespace)) | {k for ns, k in (*STATE_SETTINGS, *DEFAULT_SETTINGS) if ns == namespace}
        return {key: value for key in sorted(keys) if (value := get_setting(phone, namespace, key)) is not None}


def apply_airplane_mode(phone: ServedPhone, on: bool | None) -> None:
    """The ``android.intent.action.AIRPLANE_MODE`` broadcast (root only on Android 10): the phone process turns the
    radios off or on, to the ``state`` extra or else to the setting."""
    with phone.lock:
        if on is None:
            on = get_setting(phone, "global", "airplane_mode_on") not in (None, "0")
        services.set_airplane_mode(phone.device, on, from_settings=False)
        phone.device.state_changed()


# What the settings a client writes may hold, as characters of keys and values. The system table's bound and message
# are SettingsProvider's for a package other than the system (the shell's writes count against com.android.shell);
# the others have none on a device, and get one here so that no client fills the host's memory.
SETTINGS_BYTES = {"system": 20000, "secure": 1 << 20, "global": 1 << 20}
SETTINGS_FULL = {
    "system": "You are adding too many system settings. You should stop using system settings for app specific data "
              "package: com.android.shell",
    "secure": "the simulated phone's secure settings are full (1 MiB); delete some first",
    "global": "the simulated phone's global settings are full (1 MiB); delete some first",
}


def _table(phone: ServedPhone, namespace: str) -> dict[str, str]:
    if namespace not in phone.settings:
        raise VluiError(f"unknown settings namespace {namespace!r}; choose from: {', '.join(phone.settings)}")
    return phone.settings[namespace]


def _font_scale(value: str) -> float:
    lo, hi = FONT_SCALE_RANGE
    try:
        scale = float(value)
    except ValueError:
        scale = float("nan")
    if not lo <= scale <= hi:
        raise VluiError(f"font_scale must be a number between {lo} and {hi} on the simulated phone, not {value!r}")
    return scale


# ---------------------------------------------------------------------------------------------------- night mode
def night_mode(phone: ServedPhone) -> str:
    """``cmd uimode night``: "yes" or "no"."""
    with phone.lock:
        return "yes" if phone.device.state.dark_theme else "no"


def set_night_mode(phone: ServedPhone, mode: str) -> None:
    """``cmd uimode night yes|no``: Android 10 switches the dark theme at once. ("auto" follows sunset on a device;
    the simulated phone has no location, so it is refused.)"""
    if mode not in ("yes", "no"):
        raise VluiError(f"night mode must be yes or no on the simulated phone, not {mode!r}")
    with phone.lock:
        dev = phone.device
        services.set_dark_theme(dev, mode == "yes")  # UiModeManagerService writes ui_night_mode, as for Settings
        dev.reconfigure(dark_theme=dev.state.dark_theme)


# ---------------------------------------------------------------------------------------------------- clock
def set_time(phone: ServedPhone, when: datetime) -> None:
    """``date MMDDhhmm[[CC]YY][.ss]`` as root: the wall clock jumps to ``when`` (local time). Log lines written
    after a jump back are stamped by the new clock, as logd stamps them on a device."""
    if when < EPOCH:
        raise VluiError(f"cannot set the clock before 1970: {when}")
    with phone.lock:
        phone.device.set_clock(int((when - EPOCH).total_seconds() * 1000))


# ---------------------------------------------------------------------------------------------------- sensors, radio
ROTATIONS = 4  # Surface.ROTATION_0 .. ROTATION_270


def rotation(phone: ServedPhone) -> int:
    """The display's rotation (0-3, quarter turns counter-clockwise as Surface.ROTATION_*): the ``system
    user_rotation`` setting, which Android 10's WindowManager applies while auto-rotate is off."""
    with phone.lock:
        value = phone.settings["system"].get("user_rotation", "0")
    return int(value) % ROTATIONS if value.isascii() and value.isdigit() else 0


def rotate(phone: ServedPhone) -> None:
    """The console's ``rotate``: the emulator turns the device a quarter clockwise. Deviation: on the emulator the
    sensor turns and the display follows the system's rotation rules; the simulated phone sets the display's rotation
    itself (``user_rotation``), and keeps drawing its screen in portrait."""
    with phone.lock:
        phone.settings["system"]["user_rotation"] = str((rotation(phone) + 1) % ROTATIONS)
        phone.device.state_changed()


def set_battery(phone: ServedPhone, level: int | None = None, charging: bool | None = None) -> None:
    """The console's ``power capacity N`` and ``power ac on|off``: the emulated battery's charge and charger, which the
    status bar, ``dumpsys battery`` and ``dumpsys power`` report."""
    with phone.lock:
        st = phone.device.state
        if level is not None:
            st.battery_level = min(max(level, 0), 100)
        if charging is not None:
            st.charging = charging
        phone.device.state_changed()


SMS_HEADSUP_MS = 5000  # how long the heads-up of an arriving message shows (Android 10's minimum display time)


def receive_sms(phone: ServedPhone, number: str, text: str) -> None:
    """The console's ``sms send NUMBER TEXT``: a message arrives; it joins Messages' conversation with that number
    (unread; a new conversation, named as the contact with that number, if there was none) and Messages posts its
    notification, shown as a heads-up over the screen."""
    with phone.lock:
        dev = phone.device
        st = dev.state
        name = next((n for n, known in messages.recipients(dev) if messages.same_number(known, number)), "")
        messages.receive(st, number, text, messages.now(dev), name)
        st.headsup = {"app": "messages", "title": name or number, "text": text,
                      "until_ms": st.time_ms + SMS_HEADSUP_MS}
        st.notifications = [a for a in st.notifications if a != "messages"] + ["messages"]
        phone.device.state_changed()


# ---------------------------------------------------------------------------------------------------- processes
def restart_framework(phone: ServedPhone) -> None:
    """``setprop ctl.restart zygote`` (or ``stop`` then ``start``): the framework reboots. ``persist.sys.locale``
    and the wallpaper files take effect, the launcher reloads its database, every app process and task is gone,
    and the phone shows the home screen."""
    with phone.lock:
        dev = phone.device
        languages = _persisted_languages(phone)  # may refuse before anything changes
        wallpaper_id, problem = _wallpaper_from_files(phone)
        st = dev.state
        dev.logi("Zygote", "begin preload", pid=ZYGOTE_PID, offset_ms=900)
        dev.logi("SystemServer", "Entered the Android system server!", offset_ms=3200)
        if problem:
            dev.logi("WallpaperManagerService", f"{problem}; the simulated phone keeps wallpaper {wallpaper_id}",
                     level="W", offset_ms=5100)
        dev.logi("ActivityManager", "System now ready", offset_ms=RESTART_MS - 2500)
        st.tasks, st.recents, st.running, st.pids = {}, [], [], {}
        st.top, st.drawer, st.overview, st.dialog, st.focus = None, False, False, None, None
        st.scroll, st.fields = {}, {}
        on_restart(dev)  # each app forgets what only its process held (Clock's time picker, the dialer's call)
        st.time_ms += RESTART_MS
        st.languages = languages
        dev.reconfigure(locale=languages[0], wallpaper=wallpaper_id)
        _reload_launcher(phone)
        phone.props.pop("sys.boot_completed", None)  # the new framework finished booting: back to the derived "1"
        dev.press_home()  # ActivityManager starts the home activity
        phone.changed()


def force_stop(phone: ServedPhone, package: str) -> None:
    """``am force-stop PACKAGE``: the app's processes are killed and its task is gone. The launcher is restarted
    at once (it is the home app) and reloads its model from its database, as Launcher3 does."""
    with phone.lock:
        dev = phone.device
        st = dev.state
        caller = st.next_pid  # the `am` process
        st.next_pid += 3
        if package == LAUNCHER_PKG:
            dev.logi("ActivityManager", f"Force stopping {package} appid={LAUNCHER_UID} user=0: from pid {caller}")
            dev.logi("ActivityManager", f"Killing {LAUNCHER_PID}:{package}/u0a{LAUNCHER_UID - 10000} "
                     f"(adj {0 if st.top is None else 600}): stop {package}", offset_ms=2)
            st.drawer = False
            st.scroll.pop("drawer", None)
            if st.focus is not None and st.focus[0] == "launcher":
                st.focus = None
            _reload_launcher(phone)
        else:
            key = next((k for k, info in apps_of(st.dialer).items() if info.package == package), None)
            if key is None:
                dev.logi("ActivityManager", f"Invalid packageName: {package}", level="W")
            else:
                dev.logi("ActivityManager", f"Force stopping {package} appid={app_uid(key)} user=0: "
                         f"from pid {caller}")
                if key in st.running:
                    adj = 0 if st.top == key else 900
                    dev.logi("ActivityManager", f"Killing {st.pids[key]}:{package}/{uid_name(key)} (adj {adj}): "
                             f"stop {package}", offset_ms=2)
                    st.running.remove(key)
                    st.pids.pop(key, None)
                st.tasks.pop(key, None)
                if key in st.recents:
                    st.recents.remove(key)
                if st.top == key:
                    st.top, st.dialog = None, None  # the home screen is behind every app started from it
                if st.focus is not None and st.focus[0] == key:
                    st.focus = None
        dev.state_changed()
        phone.changed()


def _persisted_languages(phone: ServedPhone) -> list[str]:
    value = phone.prop("persist.sys.locale") or phone.prop("ro.product.locale")
    return [locale_for_tag(tag) for tag in value.split(",")]


def _wallpaper_from_files(phone: ServedPhone) -> tuple[str, str | None]:
    """The wallpaper the restarted WallpaperManagerService shows: the one the wallpaper file names, else the
    current one, with why when a file is there but names none."""
    current = phone.device.snapshot.wallpaper
    path = next((p for p in reversed(WALLPAPER_FILES) if p in phone.files), None)
    if path is None:
        return current, None
    try:
        with Image.open(io.BytesIO(phone.files[path])) as img:
            found = getattr(img, "text", {}).get(WALLPAPER_CHUNK)
    except (UnidentifiedImageError, OSError, SyntaxError):
        return current, f"{path} is not an image"
    if found is None:
        return current, f"{path} has no {WALLPAPER_CHUNK} text chunk"
    if not is_wallpaper(found):
        return current, f"{path} names unknown wallpaper {found!r}"
    return found, None


def _write_launcher_db(phone: ServedPhone) -> None:
    phone.files[LAUNCHER_DB] = device_launcher_db(phone.device)


def _reload_launcher(phone: ServedPhone) -> None:
    """The launcher process starts and loads its model from its database (which it creates when missing, and
    recreates with the stock layout when unreadable). Rows it cannot place are logged and deleted, as Launcher3's
    loader does."""
    dev = phone.device
    data = phone.files.get(LAUNCHER_DB)
    if data is None:
        dev.reconfigure(home_layout="default")
        _write_launcher_db(phone)
        return
    con = None
    try:
        con = open_db(data)
        rows = con.execute("SELECT _id, title, intent, container, screen, cellX, cellY, itemType FROM favorites "
                           "ORDER BY _id").fetchall()
        layout, rejected = _layout_from_rows(dev, rows)
        if rejected:
            con.execute(f"DELETE FROM favorites WHERE _id IN ({', '.join(map(str, rejected))})")
            phone.files[LAUNCHER_DB] = db_bytes(con)
    except sqlite3.DatabaseError as err:
        dev.logi("LauncherProvider", f"Unable to open {LAUNCHER_DB} ({err}); recreating it with the default "
                 "workspace", level="E", pid=LAUNCHER_PID)
        dev.reconfigure(home_layout="default")
        _write_launcher_db(phone)
        return
    finally:
        if con is not None:
            con.close()
    dev.reconfigure(home_layout=launcher.explicit_layout(layout))


def _layout_from_rows(dev: SimDevice, rows: list[tuple]) -> tuple[launcher.Layout, list[int]]:
    """The layout that ``favorites`` rows describe on the current grid, and the ids of the rows that do not fit."""
    columns, rows_n = dev.snapshot.home_grid
    by_component = {}
    for key in launcher.LAUNCHABLE:  # the system image's apps: a third-party app lives in the drawer, not on the grid
        info = app_info(key, dev.state.dialer)  # a release phone's Phone app is AOSP's Dialer
        by_component[(info.package, info.activity)] = key
    hotseat: dict[int, str] = {}
    workspace: dict[tuple[int, int], str] = {}
    rejected = []

    def reject(_id: int, tag: str, message: str) -> None:
        dev.logi(tag, message, level="E", pid=LAUNCHER_PID)
        rejected.append(_id)

    for _id, title, intent, container, screen, x, y, item_type in rows:
        match = re.search(r";component=([^;/]+)/([^;]+);", intent or "")
        if item_type != ITEM_APPLICATION:
            reject(_id, "LoaderTask", f"Item {_id} ({title}) has itemType {item_type}: the simulated launcher shows "
                   "application icons only")
            continue
        if match is None:
            reject(_id, "LoaderTask", f"Invalid intent removed: {intent}")
            continue
        package, activity = match.groups()
        key = by_component.get((package, package + activity if activity.startswith(".") else activity))
        if key is None:
            reject(_id, "LoaderTask", f"Missing activity found in getShortcutInfo: ComponentName{{{package}/"
                   f"{activity}}}")
        elif container == HOTSEAT:
            if not (isinstance(screen, int) and 0 <= screen < columns) or screen in hotseat:
                reject(_id, "LoaderCursor", f"Error loading shortcut into hotseat {title} into position ({screen}:"
                       f"{x},{y}) already occupied or outside the hotseat of {columns}")
            else:
                hotseat[screen] = key
        elif container == DESKTOP:
            cell = (y, x)
            if screen != 0 or not (isinstance(x, int) and isinstance(y, int) and 0 <= x < columns
                                   and 0 <= y < rows_n) or cell in workspace:
                reject(_id, "LoaderCursor", f"Error loading shortcut {title} into cell ({screen}-{container}:{x},{y}) "
                       f"occupied or out of screen bounds ( {columns}x{rows_n})")
            else:
                workspace[cell] = key
        else:
            reject(_id, "LoaderTask", f"Item {_id} ({title}) is in container {container}: the simulated launcher "
                   "has no folders")
    layout = (tuple(hotseat[i] for i in sorted(hotseat)),
              tuple((key, r, c) for (r, c), key in sorted(workspace.items())))
    return layout, rejected
