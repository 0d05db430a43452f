"""The simulated device log: ``adb logcat -v threadtime`` lines, a ring buffer, a chronological and deterministic
device log, and background noise that no success detector mistakes for a task done."""

from __future__ import annotations

import random
import re
from datetime import datetime
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from tests.sim.driver import Driver
from vlui.agents.walkthrough import walkthrough
from vlui.android.logcat import EPOCH, Entry, LogBuffer, parse_threadtime
from vlui.sim.noise import catalog, noise_lines
from vlui.sim.phone import SimDevice
from vlui.sim.ui import Node, hit

BMOCA = Path(__file__).resolve().parents[2] / "vlui" / "tasks" / "data" / "bmoca.yaml"


def _ms(*args: int) -> int:
    return int((datetime(*args) - EPOCH).total_seconds() * 1000)


@lru_cache(maxsize=1)
def _detectors() -> list[tuple[str, str, re.Pattern]]:
    tasks = yaml.safe_load(BMOCA.read_text(encoding="utf-8"))["tasks"]
    return [(t["id"], t["log_tag"], re.compile(t["regex"])) for t in tasks]


def _fired(tag: str, message: str) -> list[str]:
    """The tasks whose detector accepts this log line (as AndroidEnv does: tag filter, then re.match)."""
    return [task for task, log_tag, regex in _detectors() if tag == log_tag and regex.match(message)]


def _fired_by_line(line: str) -> list[str]:
    fields = parse_threadtime(line)
    assert fields is not None, line
    return _fired(fields["tag"], fields["message"])


def _centre(node: Node) -> tuple[float, float]:
    x1, y1, x2, y2 = node.bounds
    return (x1 + x2) / 2, (y1 + y2) / 2


# ---------------------------------------------------------------------------------------------- format
def test_threadtime_is_formatted_like_adb_logcat() -> None:
    e = Entry(0, _ms(2026, 11, 23, 8, 0, 3, 7000), 1210, 1247, "I", "ActivityManager",
              "Start proc 4120:com.android.settings/1000 for activity {com.android.settings/.Settings}")
    assert e.threadtime() == ("11-23 08:00:03.007  1210  1247 I ActivityManager: Start proc 4120:com.android.settings"
                              "/1000 for activity {com.android.settings/.Settings}")


def test_short_tags_are_padded_to_eight_characters() -> None:
    e = Entry(0, _ms(2026, 1, 2, 23, 59, 59, 999000), 3345, 3345, "D", "Dialer", "msg")
    assert e.threadtime() == "01-02 23:59:59.999  3345  3345 D Dialer  : msg"
    assert e.threadtime().endswith("D Dialer  : msg")


def test_long_pids_and_milliseconds_are_written_in_full() -> None:
    e = Entry(0, _ms(2026, 11, 23, 0, 0, 0), 123456, 7, "W", "vol.Events", "writeEvent level_changed MEDIA 10")
    assert e.threadtime() == "11-23 00:00:00.000 123456     7 W vol.Events: writeEvent level_changed MEDIA 10"


@pytest.mark.parametrize("tag, message", [
    ("ActivityManager", "Start proc 4120:com.android.settings/1000 for activity {x/.Y}"),
    ("vol.Events", "writeEvent level_changed MEDIA 10"),
    ("ConditionProviders.SCP", "onAlarmChanged nextUserAlarmTime=1700000000000 (06:30:00)"),
    ("Dialer", "MainActivity.onCreate"),
    ("audio_hw_generic", "out_standby: 12"),
    ("Some Tag", "message: with a colon: and more"),
    ("AlarmClock", ""),
    ("Finsky", "  leading spaces kept"),
])
def test_parse_threadtime_round_trips(tag: str, message: str) -> None:
    e = Entry(5, _ms(2026, 3, 4, 5, 6, 7, 89000), 1688, 1725, "E", tag, message)
    fields = parse_threadtime(e.threadtime())
    assert fields == {"date": "03-04", "time": "05:06:07.089", "pid": "1688", "tid": "1725", "level": "E",
                      "tag": tag, "message": message}


@pytest.mark.parametrize("line", [
    "", "hello world", "--------- beginning of main", "11-23 08:00:03.007 abc",
    "11-23 08:00:03  1210  1247 I Tag: no milliseconds", "11-23 08:00:03.007  1210  1247 X Tag: bad level",
    "2026-11-23 08:00:03.007  1210  1247 I Tag: year in front",
])
def test_parse_threadtime_rejects_garbage(line: str) -> None:
    assert parse_threadtime(line) is None


# ---------------------------------------------------------------------------------------------- buffer
def test_mark_returns_only_later_lines() -> None:
    buf = LogBuffer()
    buf.write(1000, 1, 1, "I", "A", "before")
    mark = buf.mark()
    buf.write(2000, 1, 1, "I", "B", "after 1")
    buf.write(3000, 1, 1, "I", "A", "after 2")
    assert [parse_threadtime(x)["message"] for x in buf.lines(mark)] == ["after 1", "after 2"]
    assert len(buf.lines()) == 3
    assert buf.lines(buf.mark()) == []


def test_tag_filter_keeps_only_those_tags() -> None:
    buf = LogBuffer()
    for i, tag in enumerate(["A", "B", "vol.Events", "A", "AB"]):
        buf.write(i, 1, 1, "D", tag, str(i))
    assert [parse_threadtime(x)["message"] for x in buf.lines(tags=["A"])] == ["0", "3"]
    assert [parse_threadtime(x)["message"] for x in buf.lines(tags=["vol.Events", "B"])] == ["1", "2"]
    assert buf.lines(tags=[]) == []


def test_capacity_drops_the_oldest_lines() -> None:
    buf = LogBuffer(capacity=3)
    for i in range(5):
        buf.write(i, 1, 1, "I", "T", f"m{i}")
    assert [parse_threadtime(x)["message"] for x in buf.lines()] == ["m2", "m3", "m4"]
    assert buf.mark() == 5  # sequence numbers keep counting
    assert [e.seq for e in buf.entries()] == [2, 3, 4]


def test_clear_empties_the_buffer_but_marks_stay_valid() -> None:
    buf = LogBuffer()
    buf.write(0, 1, 1, "I", "T", "old")
    mark = buf.mark()
    buf.clear()
    assert buf.lines() == []
    buf.write(1, 1, 1, "I", "T", "new")
    assert [parse_threadtime(x)["message"] for x in buf.lines(mark)] == ["new"]


def test_copy_and_restore_state() -> None:
    buf = LogBuffer()
    buf.write(0, 1, 1, "I", "T", "a")
    saved = buf.copy_state()
    buf.write(1, 1, 1, "I", "T", "b")
    buf.restore_state(saved)
    assert [parse_threadtime(x)["message"] for x in buf.lines()] == ["a"]
    assert buf.mark() == 1


# ---------------------------------------------------------------------------------------------- the device log
def _drive_to_airplane_mode(dev: SimDevice) -> None:
    """Open Settings (from the home screen or the drawer), Network & internet, and toggle airplane mode."""
    walkthrough(dev, "airplane_on", dev.snapshot.id)


def _stamp(line: str) -> tuple[str, str]:
    fields = parse_threadtime(line)
    assert fields is not None, line
    return fields["date"], fields["time"]


@pytest.mark.parametrize("snapshot", ["000", "030"])
def test_device_log_is_chronological_and_parses(snapshot: str) -> None:
    dev = SimDevice(snapshot)
    w, h = dev.size
    _drive_to_airplane_mode(dev)
    assert dev.state.airplane_mode
    dev.swipe(w / 2, h * 0.6, w / 2, h * 0.3)
    dev.key("BACK")
    dev.tap(w * 0.5, h * 0.5)
    dev.key("HOME")
    lines = dev.log_lines()
    assert len(lines) > 10
    stamps = [_stamp(line) for line in lines]
    late = [(a, b) for a, b in zip(lines, lines[1:], strict=False) if _stamp(b) < _stamp(a)]
    assert not late, f"log lines stamped before the line above them: {late[:3]}"
    assert stamps[0] >= ("11-23", "08:00:00.000")


def test_driving_the_phone_fires_the_expected_detectors() -> None:
    # the positive control for the noise tests below: detectors do fire on the lines of real actions
    dev = SimDevice("000")
    _drive_to_airplane_mode(dev)
    fired = {task for line in dev.log_lines() for task in _fired_by_line(line)}
    assert {"open_settings", "airplane_on"} <= fired
    assert "airplane_off" not in fired


@pytest.mark.parametrize("seed", range(8))
def test_noise_never_fires_a_detector(seed: int) -> None:
    dev = SimDevice("000")
    rng = random.Random(seed)
    seen = set()
    for _ in range(600):
        for tag, level, message, _pid in noise_lines(rng, dev):
            seen.add(tag)
            assert level in "VDIWEF"
            assert not _fired(tag, message), (tag, message)
    assert len(seen) >= 10  # most of the catalogue was exercised


def test_every_noise_template_is_safe_for_any_number_and_package() -> None:
    lines, _, packages = catalog()
    for tag, _, template in lines:
        for pkg in packages:
            for n in ("10", "99", "1234", "9998"):
                message = template.replace("{pkg}", pkg).replace("{n}", n)
                assert not _fired(tag, message), (tag, message)


def test_no_op_taps_on_the_home_screen_leave_only_noise() -> None:
    dev = SimDevice("000")
    w, h = dev.size
    x, y = w * 0.5, h * 0.4
    assert hit(dev.frame(), x, y) is None, "the test point must be an empty area of the home screen"
    start = dev.state.copy()
    for _ in range(300):
        dev.tap(x, y)
    assert dev.state.top is None and not dev.state.drawer
    assert dev.state.tasks == start.tasks
    lines = dev.log_lines()
    assert len(lines) > 100  # the phone was not silent
    fired = [(line, _fired_by_line(line)) for line in lines if _fired_by_line(line)]
    assert not fired, fired[:5]


@pytest.mark.parametrize("snapshot", ["000", "030"])
def test_launch_line_reports_the_tapped_icon_bounds(snapshot: str) -> None:
    dev = SimDevice(snapshot)
    icon = Driver(dev).app_icon("settings")
    mark = dev.log_mark()
    dev.tap(*_centre(icon))
    starts = [x for x in dev.log_lines(mark, tags=["ActivityTaskManager"]) if "bnds=" in x]
    assert len(starts) == 1
    x1, y1, x2, y2 = map(int, re.search(r"bnds=\[(\d+),(\d+)\]\[(\d+),(\d+)\]", starts[0]).groups())
    ix1, iy1, ix2, iy2 = icon.bounds
    assert ix1 <= x1 < x2 <= ix2 and iy1 <= y1 < y2 <= iy2, (starts[0], icon.bounds)


# ---------------------------------------------------------------------------------------------- determinism
def _session(snapshot: str) -> list[str]:
    dev = SimDevice(snapshot)
    w, h = dev.size
    _drive_to_airplane_mode(dev)
    for i in range(20):
        dev.tap(w * (0.1 + 0.04 * i), h * 0.5)
    dev.key("HOME")
    dev.swipe(w / 2, h * 0.7, w / 2, h * 0.2)
    return dev.log_lines()


def test_same_taps_give_the_same_log() -> None:
    first, second = _session("005"), _session("005")
    assert len(first) > 10
    assert first == second


def test_reloading_the_snapshot_replays_the_same_log() -> None:
    dev = SimDevice("005")
    w, h = dev.size
    taps = [(w * 0.3, h * 0.3), (w * 0.5, h * 0.4), (w * 0.7, h * 0.6)] * 5

    def run() -> list[str]:
        for x, y in taps:
            dev.tap(x, y)
        return dev.log_lines()

    first = run()
    dev.load_snapshot("005")
    assert dev.log_lines() == []
    assert run() == first
