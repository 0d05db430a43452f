"""What a user of the simulated phone sees from key events, implicit intents, typed text and the log lines that
detectors read (issue 14, part B): the screen and XML after a key or typed text, ``am start``'s output and exit
status, and log lines' exact text as Android 10 prints them."""

from __future__ import annotations

import threading

import pytest

from vlui.sim.apps import settings
from vlui.sim.logcat import parse_threadtime
from vlui.sim.phone import SimDevice
from vlui.sim.served import ServedPhone
from vlui.sim.shell import Shell
from vlui.sim.ui import hit


def sh(phone: ServedPhone, command: str) -> tuple[str, int]:
    out: list[bytes] = []
    status = Shell(phone).run(command, out.append, threading.Event())
    return b"".join(out).decode("utf-8", "replace"), status


def messages(dev: SimDevice, tag: str, since: int = 0) -> list[str]:
    return [parse_threadtime(line)["message"] for line in dev.log_lines(since, tags=[tag])]


def texts(dev: SimDevice) -> list[str]:
    """The texts of the views uiautomator reports, in order."""
    import re

    return re.findall(r' text="([^"]*)"', dev.ui_xml())


def center(node) -> tuple[int, int]:
    x1, y1, x2, y2 = node.bounds
    return (x1 + x2) // 2, (y1 + y2) // 2


@pytest.fixture
def phone() -> ServedPhone:
    return ServedPhone("000", noise=False)


# ---------------------------------------------------------------------------------------------- log lines
@pytest.mark.parametrize("row, stream", [(0, "STREAM_MUSIC"), (1, "STREAM_VOICE_CALL"), (2, "STREAM_RING"),
                                         (3, "STREAM_ALARM")])
def test_volume_sliders_log_androids_stream_names(row: int, stream: str) -> None:
    dev = SimDevice("000", noise=False)
    dev.launch("settings")
    settings.open_page(dev, "sound")
    bars = [n for n in dev.frame().walk() if n.cls == "android.widget.SeekBar"]
    x1, y1, x2, y2 = bars[row].bounds
    mark = dev.log_mark()
    dev.tap(x1 + (x2 - x1) * 0.95, (y1 + y2) / 2)
    level = {"STREAM_MUSIC": dev.state.volume["media"], "STREAM_VOICE_CALL": dev.state.volume["call"],
             "STREAM_RING": dev.state.volume["ring"], "STREAM_ALARM": dev.state.volume["alarm"]}[stream]
    assert messages(dev, "vol.Events", mark) == [f"writeEvent level_changed {stream} {level}"]


def test_a_process_start_is_logged_by_activity_manager_only() -> None:
    dev = SimDevice("000", noise=False)
    dev.launch("camera")
    assert [m for m in messages(dev, "ActivityManager") if m.startswith("Start proc")] == [
        f"Start proc {dev.state.pids['camera']}:com.android.camera2/u0a51 for activity "
        "{com.android.camera2/com.android.camera.CameraLauncher}"]
    atm = messages(dev, "ActivityTaskManager")
    assert not [m for m in atm if m.startswith("Start proc")]
    assert atm[0].startswith("START u0 {act=android.intent.action.MAIN cat=[android.intent.category.LAUNCHER] "
                             "flg=0x10200000 cmp=com.android.camera2/com.android.camera.CameraLauncher")
