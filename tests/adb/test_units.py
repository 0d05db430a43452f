"""The ADB backend's parsers and helpers, without a device: quoting, screencap formats, wm output, log streaming,
sharing devices between environments."""

from __future__ import annotations

import shlex
import socket
import struct
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from vlui.adb.console import console_port
from vlui.adb.device import _wm_value, claim, locale_id_of, parse_screencap, text_commands
from vlui.adb.errors import DeviceError
from vlui.adb.logcat import SYNC_TAG, LogcatReader, logcat_command
from vlui.adb.state import require_installed
from vlui.device import PinnedApp, observe
from vlui.errors import VluiError


def typed(commands: list[str]) -> str:
    """What Android's ``input text`` types for these command lines, after the device's shell has parsed them."""
    out = ""
    for line in commands:
        argv = shlex.split(line)
        assert argv[:2] == ["input", "text"] and len(argv) == 3, line
        out += argv[2].replace("%s", " ")
    return out


@pytest.mark.parametrize("value", ["hello world", "it's; rm -rf / $(reboot) `id` \"q\" & | > <", "100%s sure",
                                   "%%s%", "", "a  b", "*.jpg ~ #"])
def test_text_is_typed_literally_and_never_run(value):
    commands = text_commands(value)
    assert typed(commands) == value
    joined = "; ".join(commands)
    # the device's shell sees only `input text ARG` commands: nothing in the text can start another command
    assert [c for c in joined.split("; ") if not c.startswith("input text ")] == []
    for line in commands:
        assert len(shlex.split(line)) == 3


def test_text_outside_ascii_is_refused_with_a_clear_error():
    with pytest.raises(DeviceError, match="ASCII"):
        text_commands("알람 설정")


def rgba(w: int, h: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, (h, w, 4), dtype=np.uint8)


@pytest.mark.parametrize("header", [struct.pack("<III", 6, 4, 1), struct.pack("<IIII", 6, 4, 1, 1)],
                         ids=["android10", "android12"])
def test_raw_screencap_is_decoded_for_both_header_sizes(header):
    pixels = rgba(6, 4)
    frame = parse_screencap(header + pixels.tobytes(), "device x")
    np.testing.assert_array_equal(frame, pixels)
    small = observe(frame, 2, 3)
    assert small.shape == (2, 3, 3)
    np.testing.assert_array_equal(small, observe(np.ascontiguousarray(pixels[:, :, :3]), 2, 3))


def test_a_truncated_or_unknown_screencap_is_an_error_not_garbage():
    pixels = rgba(6, 4).tobytes()
    with pytest.raises(DeviceError, match="screencap"):
        parse_screencap(struct.pack("<III", 6, 4, 1) + pixels[:-5], "device x")
    with pytest.raises(DeviceError, match="format"):
        parse_screencap(struct.pack("<III", 6, 4, 4) + pixels, "device x")
    with pytest.raises(DeviceError, match="screencap"):
        parse_screencap(b"error: no display", "device x")


def test_wm_output_prefers_the_override():
    assert _wm_value("Physical size: 1080x2160\n", "size", "s") == (1080, 2160)
    assert _wm_value("Physical size: 1080x2160\nOverride size: 720x1440\n", "size", "s") == (720, 1440)
    assert _wm_value("Physical density: 440\nOverride density: 320\n", "density", "s") == 320
    with pytest.raises(DeviceError, match="density"):
        _wm_value("/system/bin/sh: wm: not found", "density", "s")


def test_device_locale_tags_map_to_snapshot_locale_ids():
    assert locale_id_of("zh-Hans-CN") == "zh-hans-CN"
    assert locale_id_of("ko-KR") == "ko-KR"
    assert locale_id_of("xx-YY") == "xx-YY"


def test_console_port_comes_from_emulator_serials_only():
    assert console_port("emulator-5554") == 5554
    assert console_port("127.0.0.1:5555") is None
    assert console_port("R58M123ABC") is None


def test_logcat_filter_always_streams_the_sync_markers():
    assert logcat_command(None) == "logcat -v threadtime"
    cmd = shlex.split(logcat_command(["ActivityTaskManager", "AlarmClock"]))
    assert cmd[-1] == "*:S" and f"{SYNC_TAG}:V" in cmd and "AlarmClock:V" in cmd


def line(tag: str, message: str, seq: int = 0) -> bytes:
    return f"11-23 08:00:{seq % 60:02d}.000  1210  1247 I {tag}: {message}\n".encode()


def test_log_reader_keeps_lines_in_order_and_waits_for_markers():
    ours, device = socket.socketpair()
    ours.settimeout(1.0)
    reader = LogcatReader(lambda: ours, "test")
    reader.start()
    try:
        data = b"--------- beginning of main\n" + line("A", "one", 1) + line("B", "two", 2)
        data += line(SYNC_TAG, "tok-1", 3) + line("C", "three", 4)
        device.sendall(data[:37])  # a line split across reads
        device.sendall(data[37:])
        assert reader.wait_marker("tok-1", 5.0) == 2
        assert reader.wait_marker("tok-2", 0.2) is None  # never logged
        assert [ln.split(": ", 1)[1] for ln in reader.since(0)] == ["one", "two", "three"]
        assert reader.count() == 3
    finally:
        reader.stop()
        device.close()


def test_log_reader_reports_a_broken_stream():
    ours, device = socket.socketpair()
    ours.settimeout(1.0)
    reader = LogcatReader(lambda: ours, "test")
    reader.start()
    device.close()
    assert reader.wait_marker("never", 5.0) is None
    assert reader.error == "the logcat stream ended"
    reader.stop()


CLAIM = """
import sys, time
from vlui.adb.device import claim
serial, release = claim(["a", "b"], "127.0.0.1", int(sys.argv[1]))
print(serial, flush=True)
time.sleep(30)
"""


def test_each_device_serves_one_environment_at_a_time_across_processes():
    port = 40000 + threading.get_ident() % 20000  # a lock namespace of its own
    holder = subprocess.Popen([sys.executable, "-c", CLAIM, str(port)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "a"
        serial, release = claim(["a", "b"], "127.0.0.1", port)
        assert serial == "b"
        with pytest.raises(DeviceError, match="in use"):
            claim(["a", "b"], "127.0.0.1", port)
        release()
        again, release = claim(["a", "b"], "127.0.0.1", port)
        assert again == "b"
        release()
    finally:
        holder.kill()
        holder.wait()
    serial, release = claim(["a", "b"], "127.0.0.1", port)  # the killed process's device is free again
    assert serial == "a"
    release()


def test_a_reopened_log_stream_adds_only_the_lines_it_had_not_read():
    first, first_dev = socket.socketpair()
    second, second_dev = socket.socketpair()
    for s in (first, second):
        s.settimeout(1.0)
    streams = iter([first, second])
    reader = LogcatReader(lambda: next(streams), "test")
    reader.start()
    try:
        first_dev.sendall(line("A", "one", 1) + line("B", "two", 2) + line(SYNC_TAG, "t1", 3))
        assert reader.wait_marker("t1", 5.0) == 2
        first_dev.close()  # the stream breaks
        assert reader.wait_marker("t2", 2.0) is None and reader.error
        reader.resume("t3")
        # logcat replays its buffer, then goes on with new lines and the marker the backend logs
        second_dev.sendall(line("A", "one", 1) + line("B", "two", 2) + line(SYNC_TAG, "t1", 3)
                           + line("C", "three", 4) + line(SYNC_TAG, "t3", 5) + line("D", "four", 6))
        assert reader.wait_marker("t3", 5.0) == 3
        deadline = time.monotonic() + 5
        while reader.count() < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert [ln.split(": ", 1)[1] for ln in reader.since(0)] == ["one", "two", "three", "four"]
    finally:
        reader.stop()
        second_dev.close()


class _Packages:
    """A device that answers ``pm list packages`` only."""

    serial = "emulator-5554"

    def __init__(self, *packages: str) -> None:
        self.out = "".join(f"package:{p}\n" for p in packages)

    def shell(self, command: str, timeout_s: float | None = None) -> str:
        assert command == "pm list packages"
        return self.out


def test_the_release_apps_are_checked_never_installed_and_one_missing_is_named_with_its_version() -> None:
    calculator = PinnedApp("calculator", "Calculator", "com.google.android.calculator", "8.6 (612662282)")
    wikipedia = PinnedApp("wikipedia", "Wikipedia", "org.wikipedia", "2.7.50484-r-2024-04-19 (50484)")
    require_installed(_Packages("android", "com.google.android.calculator", "org.wikipedia"), [calculator, wikipedia])
    with pytest.raises(VluiError) as e:
        require_installed(_Packages("android", "org.wikipedia.beta"), [calculator, wikipedia])
    assert str(e.value) == (
        "device emulator-5554 lacks Calculator (com.google.android.calculator, version 8.6 (612662282)); Wikipedia "
        "(org.wikipedia, version 2.7.50484-r-2024-04-19 (50484)): B-MoCA's release tasks run on phones with these "
        "apps at these versions; install them there with adb install (vlui downloads no app)")
