"""The notification shade: pulled down from the status bar, quick settings tiles that act as SystemUI's do, a card
per posted notification."""

from __future__ import annotations

import dataclasses

from vlui.android.snapshot import load_snapshot
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import Detector, tasks

SYSTEMUI = "com.android.systemui"


def _phone(notifications=("messages", "calendar")) -> SimDevice:
    snap = dataclasses.replace(load_snapshot("000"), state={"notifications": list(notifications)})
    return SimDevice(snap)


def _pull_down(dev: SimDevice) -> None:
    dev.swipe(dev.width / 2, 5, dev.width / 2, dev.height * 0.6)


def test_a_swipe_down_from_the_status_bar_opens_the_shade_and_back_home_or_a_swipe_up_close_it() -> None:
    dev = _phone()
    dev.swipe(dev.width / 2, dev.height * 0.3, dev.width / 2, dev.height * 0.8)  # elsewhere: no shade
    assert not dev.state.shade
    for close in (lambda: dev.key("BACK"), lambda: dev.key("HOME"),
                  lambda: dev.swipe(dev.width / 2, dev.height * 0.8, dev.width / 2, dev.height * 0.2)):
        _pull_down(dev)
        assert dev.state.shade
        xml = dev.ui_xml()
        assert f'package="{SYSTEMUI}"' in xml and "notification_panel" in xml  # the shade is the active window
        close()
        assert not dev.state.shade


def test_a_notification_card_opens_its_app() -> None:
    dev = _phone()
    _pull_down(dev)
    cards = [n for n in dev.frame().walk() if n.rid == f"{SYSTEMUI}:id/expandableNotificationRow"]
    assert len(cards) == 2  # the latest first
    assert any(c.text == dev.locale.t("app.calendar") for c in cards[0].walk())
    x1, y1, x2, y2 = cards[1].bounds
    dev.tap((x1 + x2) / 2, (y1 + y2) / 2)
    assert dev.state.top == "messages" and not dev.state.shade and dev.state.notifications == ["calendar"]


def test_the_wifi_tile_switches_wifi_as_systemui_which_b_moca_detectors_do_not_count() -> None:
    dev = _phone(())
    assert dev.state.wifi
    _pull_down(dev)
    dev.clear_log()
    tile = next(n for n in dev.frame().walk() if n.desc == dev.locale.t("settings.wifi") and n.checkable)
    assert tile.checked
    x1, y1, x2, y2 = tile.bounds
    dev.tap((x1 + x2) / 2, (y1 + y2) / 2)
    lines = dev.log_lines()
    assert not dev.state.wifi
    assert any("WifiService" in line and "package=com.android.systemui" in line and "enable=false" in line
               for line in lines)
    assert Detector(tasks()["wifi_off"]).match(lines) is None  # B-MoCA's detector names Settings' package
    tile = next(n for n in dev.frame().walk() if n.desc == dev.locale.t("settings.wifi") and n.checkable)
    assert not tile.checked
