"""The platform services behind the simulated phone's settings: radios, volumes, brightness, calls.

Each function changes the device state as the Android 10 service does and logs what that service logs, with the
caller as Android names it: Settings' switches and sliders call these (package ``com.android.settings``, uid 1000),
and so do the shell's ``svc``, ``media volume``, ``settings put``, ``am broadcast`` and ``am start`` (package
``com.android.shell``, uid 2000, or root), so the two paths cannot drift apart. B-MoCA's detectors name the Settings
package, so a change made from the shell never counts as the agent's.
"""

from __future__ import annotations

from vlui.android.apps import SYSTEMUI_PID
from vlui.android.state import BRIGHTNESS_MAX, BRIGHTNESS_MIN, VOLUME_MAX, VOLUME_MIN
from vlui.errors import VluiError
from vlui.sim.protocol import Phone

SETTINGS_CALLER = ("com.android.settings", 1000)
SHELL_CALLER = ("com.android.shell", 2000)

# The stream name SystemUI's vol.Events writes when a level changes (``writeEvent level_changed <stream> <level>``:
# VolumeDialogControllerImpl.updateStreamLevelW, with AudioSystem.streamToString's names), as Android 10 prints it.
# (Until issue 14 the simulator wrote STREAM_MEDIA and STREAM_RING_MUSIC to fit the paper's printed MEDIA and MUSIC
# regexes; the tasks now use B-MoCA's released detectors, which name Android's streams.)
SLIDER_EVENT_STREAMS = {"media": "STREAM_MUSIC", "call": "STREAM_VOICE_CALL", "ring": "STREAM_RING",
                        "alarm": "STREAM_ALARM"}
# AudioManager's stream numbers and names, as ``media volume --stream N`` takes and prints them.
AUDIO_STREAMS = {0: ("call", "STREAM_VOICE_CALL"), 2: ("ring", "STREAM_RING"), 3: ("media", "STREAM_MUSIC"),
                 4: ("alarm", "STREAM_ALARM")}


def set_airplane_mode(dev: Phone, on: bool, from_settings: bool = True) -> None:
    """Airplane mode on or off. Settings goes through ConnectivityService, which logs the request; the
    ``AIRPLANE_MODE`` broadcast that root sends reaches the phone process directly."""
    st = dev.state
    st.unapplied_settings.pop("global/airplane_mode_on", None)  # the service writes the setting
    if st.airplane_mode == on:
        return
    st.airplane_mode = on
    if from_settings:
        dev.logi("ConnectivityService", f"setAirplaneMode({str(on).lower()})", level="D")
    dev.logi("PhoneGlobals", f"Turning radio {'off' if on else 'on'} - airplane is {'on' if on else 'off'}",
             level="D", offset_ms=15)


def set_wifi(dev: Phone, on: bool, caller: tuple[str, int] = SETTINGS_CALLER) -> None:
    """``WifiManager.setWifiEnabled`` from ``caller`` (package, uid); WifiService logs every request."""
    dev.state.wifi = on
    dev.state.unapplied_settings.pop("global/wifi_on", None)
    dev.logi("WifiService", f"setWifiEnabled package={caller[0]} uid={caller[1]} enable={str(on).lower()}")


def set_bluetooth(dev: Phone, on: bool, package: str | None = SETTINGS_CALLER[0]) -> None:
    """``BluetoothManagerService.enable|disable`` from ``package`` (None: a binder call that names none)."""
    st = dev.state
    was = st.bluetooth
    st.bluetooth = on
    st.unapplied_settings.pop("global/bluetooth_on", None)
    # the adapter's proxy is null while Bluetooth is off, as the service prints it
    proxy = "android.bluetooth.IBluetooth$Stub$Proxy@5d1e3b2" if was else "null"
    dev.logi("BluetoothManagerService", f"{'enable' if on else 'disable'}({package or 'null'}): mBluetooth = {proxy}",
             level="D")


def set_volume(dev: Phone, stream: str, level: int) -> None:
    """Set a stream's volume index. SystemUI's volume controller hears of every change (AudioManager's
    VOLUME_CHANGED_ACTION), whoever made it: a slider, a key or ``media volume``, and records it in vol.Events."""
    lo, hi = VOLUME_MIN[stream], VOLUME_MAX[stream]
    if not lo <= level <= hi:
        raise VluiError(f"the {stream} volume goes from {lo} to {hi}, not {level}")
    if level == dev.state.volume[stream]:
        return
    dev.state.volume[stream] = level

    dev.logi("vol.Events", f"writeEvent level_changed {SLIDER_EVENT_STREAMS[stream]} {level}", pid=SYSTEMUI_PID)


def set_brightness(dev: Phone, level: int) -> None:
    """The manual screen brightness (the linear setting, clamped to what the slider can set), as
    DisplayPowerController applies it."""
    st = dev.state
    level = min(max(level, BRIGHTNESS_MIN), BRIGHTNESS_MAX)
    if level == st.brightness:
        return
    old, st.brightness = st.brightness, level
    dev.logi("DisplayPowerController", f"Brightness [{level}] reason changing to: 'manual', previous reason: "
             f"'manual{' [ dim ]' if level < old else ''}'.")


def setting_notified(dev: Phone, uri: str) -> None:
    """SettingsProvider's line for a setting whose value changed (``uri``: ``secure/ui_night_mode``), as its handler
    thread prints it when it notifies the setting's observers (SettingsRegistry.MyHandler, MSG_NOTIFY_URI_CHANGED):
    ``V SettingsProvider: Notifying for 0: content://settings/secure/ui_night_mode``. AOSP's Android 10 source prints
    it under the provider's DEBUG, which it sets false; B-MoCA's two SettingsProvider detectors (filter
    ``SettingsProvider:V``) match exactly this line's URI for the settings their tasks change, and real devices' logs
    hold it (docs/adb.md)."""
    dev.logi("SettingsProvider", f"Notifying for 0: content://settings/{uri}", level="V", offset_ms=2)


def set_dark_theme(dev: Phone, on: bool) -> None:
    """UiModeManager's night mode, as UiModeManagerService.setNightMode sets it: it writes ``secure ui_night_mode``
    (and logs nothing of its own)."""
    st = dev.state
    st.unapplied_settings.pop("secure/ui_night_mode", None)
    if st.dark_theme == on:
        return
    st.dark_theme = on
    setting_notified(dev, "secure/ui_night_mode")


def set_dark_mode_dialog_seen(dev: Phone, seen: bool) -> None:
    """``secure dark_mode_dialog_seen``: 1 once Settings' dialog about dark theme was acknowledged."""
    if dev.state.dark_mode_dialog_seen != seen:
        dev.state.dark_mode_dialog_seen = seen
        setting_notified(dev, "secure/dark_mode_dialog_seen")


def acknowledge_dark_theme(dev: Phone) -> None:
    """Settings' dark theme dialog acknowledged (DarkUIInfoDialogFragment.enableDarkTheme): it writes ``secure
    dark_mode_dialog_seen`` 1, then turns the night mode on. Android 10's Settings shows the dialog the first time its
    switch turns the dark theme on (DarkUIPreferenceController.setChecked, while the setting is not 1)."""
    set_dark_mode_dialog_seen(dev, True)
    set_dark_theme(dev, True)


def set_vibrate_for_calls(dev: Phone, on: bool) -> None:
    """``system vibrate_when_ringing``: Settings' switch writes it and the provider notifies its observers."""
    if dev.state.vibrate_for_calls == on:
        return
    dev.state.vibrate_for_calls = on
    setting_notified(dev, "system/vibrate_when_ringing")
