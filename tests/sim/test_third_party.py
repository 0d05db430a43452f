"""Third-party apps (``third_party: true`` in vlui/android/data/apps.yaml: B-MoCA release 2.5's five): a phone has
one only once it installs it, and a phone that installs none is byte for byte the phone it was before they existed.
The app installed here is the test fixture of tests/fixture_app.py."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from tests import fixture_app
from tests.sim.driver import one, tap
from vlui.android.apps import app_uid, apps, third_party
from vlui.android.i18n import get_locale, locales
from vlui.android.launcher import LAUNCHABLE
from vlui.android.snapshot import ENVS_DIR
from vlui.android.state import state_problem
from vlui.device import PinnedApp
from vlui.errors import VluiError
from vlui.sim import apps as sim_apps
from vlui.sim.icons import APP_ICONS
from vlui.sim.phone import SimDevice

KEY = fixture_app.KEY
# Android gave these uids to the system image's apps before any third-party app existed (vlui 5be42a6)
SYSTEM_UIDS = {"calendar": 10050, "camera": 10051, "chrome": 10052, "clock": 10053, "contacts": 10054, "files": 10055,
               "gmail": 10056, "google": 10057, "maps": 10058, "messages": 10059, "phone": 10060, "photos": 10061,
               "play_music": 10062, "play_store": 10063, "settings": 1000, "youtube": 10065}
# snapshot 000 at vlui 5be42a6, before third-party apps: the drawer's UI tree, and the log of four apps launched
DRAWER_XML_SHA256 = "b967fb778f87688c58560522928143dbcc522cc46e462623b53df41342816053"
LOG_SHA256 = "f55be0936e0a4b9e0d23093cc57f87b07d68c8b5dec1efa74d67aab2375ff7b5"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def looks(dev: SimDevice) -> dict[str, object]:
    """What snapshot 000 shows and logs: the home screen, the drawer (its UI tree and its observation), a search in
    it, Settings' app list, and the log of four apps launched."""
    dev.load_snapshot("000")
    seen: dict[str, object] = {"home": (dev.ui_xml(), dev.screenshot())}
    dev.state.drawer = True
    dev.state_changed()
    seen["drawer"] = (dev.ui_xml(), dev.observation(256, 128))
    dev.state.fields["launcher.search"] = "n"
    dev.state_changed()
    seen["search"] = dev.ui_xml()
    dev.key("HOME")
    for key in ("settings", "clock", "chrome", "files"):
        dev.launch(key)
    dev.push("settings", "app_list")
    seen["app_list"] = (dev.ui_xml(), dev.screenshot())
    seen["log"] = dev.log_lines()
    return seen


def differ(a: dict[str, object], b: dict[str, object]) -> list[str]:
    """The views whose text or pixels differ between ``a`` and ``b``."""
    def parts(v: object) -> tuple:
        return v if isinstance(v, tuple) else (v,)
    return [k for k in a if not all(np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y
                                    for x, y in zip(parts(a[k]), parts(b[k]), strict=True))]


def test_every_third_party_app_comes_with_its_module_label_and_icon() -> None:
    """What makes an apps.yaml entry drawable: the simulated phone never falls back to its generic screens for a
    third-party app, so one that is known is one the task catalog may call supported."""
    for key in third_party():
        assert key in sim_apps.APPS, f"{key}: third-party, but vlui/sim/apps has no module for it (APPS)"
        assert key in APP_ICONS, f"{key}: no launcher icon (vlui/sim/icons.py)"
        assert key not in LAUNCHABLE
        for locale_id in locales():
            get_locale(locale_id).t(f"app.{key}")  # its label, in every language


def test_a_phone_that_installs_no_third_party_app_is_unchanged(monkeypatch) -> None:
    """Snapshot 000's drawer and log, and the system apps' uids, are what they were before third-party apps; and a
    third-party app that is known but not installed changes no pixel, no UI tree and no log line."""
    dev = SimDevice("000")
    before = looks(dev)
    assert sha256(before["drawer"][0]) == DRAWER_XML_SHA256
    assert sha256("\n".join(before["log"])) == LOG_SHA256
    assert {key: app_uid(key) for key in SYSTEM_UIDS} == SYSTEM_UIDS
    fixture_app.register(monkeypatch)
    assert differ(looks(dev), before) == []
    assert {key: app_uid(key) for key in SYSTEM_UIDS} == SYSTEM_UIDS
    # after every system app's, in the third-party apps' order (the release's apps that vlui has come before it)
    assert app_uid(KEY) == 10066 + third_party().index(KEY)


def test_an_installed_app_is_in_the_drawer_settings_and_search_not_on_the_home_screen(monkeypatch) -> None:
    fixture_app.register(monkeypatch)
    dev = SimDevice("000", noise=False)
    home = dev.ui_xml()
    dev.install_apps([fixture_app.PIN])
    assert dev.state.installed == [KEY] and dev.log_lines() == []  # as if the snapshot had been made with it
    assert dev.ui_xml() == home
    dev.state.drawer = True
    dev.state_changed()
    labels = [n.text for n in dev.frame().walk() if n.package == "com.google.android.apps.nexuslauncher"
              and n.cls == "android.widget.TextView" and n.on_tap is not None]
    assert labels.index("Notes") == labels.index("Messages") + 1  # alphabetical, as the drawer lists every app
    tap(dev, one(dev, lambda n: n.text == "Notes" and n.on_tap is not None, "the Notes icon"))
    assert dev.state.top == KEY and f'package="{fixture_app.PACKAGE}"' in dev.ui_xml()
    user = f"u0a{66 + third_party().index(KEY)}"
    assert f"Start proc {dev.state.pids[KEY]}:{fixture_app.PACKAGE}/{user} for activity" in "\n".join(dev.log_lines())
    dev.key("HOME")
    dev.state.drawer, dev.state.focus = True, ("launcher", "search")
    dev.state.fields["launcher.search"] = "no"
    dev.press_keycode(66)  # ENTER in the drawer's search: the first app found starts
    assert dev.state.top == KEY
    dev.launch("settings")
    dev.push("settings", "apps")
    assert "See all 17 apps" in dev.ui_xml()
    dev.push("settings", "app_list")
    assert 'text="Notes"' in dev.ui_xml()


def test_an_app_not_installed_cannot_be_launched_nor_left_open(monkeypatch, tmp_path) -> None:
    fixture_app.register(monkeypatch)
    dev = SimDevice("000")
    with pytest.raises(VluiError, match=f"the {KEY} app is not installed on the phone .installed: no third-party "
                                        "app.: it cannot be launched"):
        dev.launch(KEY)
    with pytest.raises(VluiError, match=f"tasks: the {KEY} app is not installed on the phone"):
        dev.set_state({"tasks": {KEY: [{"screen": "main"}]}, "recents": [KEY], "top": KEY})
    # installed by a snapshot's state, it may be left open by a task's
    text = (ENVS_DIR / "000.yaml").read_text().replace("id: '000'", "id: mine")
    (tmp_path / "mine.yaml").write_text(text.replace("state: {}", f"state: {{installed: [{KEY}]}}"))
    dev.load_snapshot(tmp_path / "mine.yaml")
    dev.set_state({"tasks": {KEY: [{"screen": "main"}]}, "recents": [KEY], "top": KEY})
    assert dev.state.top == KEY and KEY in dev.state.running


def test_only_a_third_party_app_can_be_installed(monkeypatch) -> None:
    assert state_problem({"installed": ["clock"]}) == (
        "installed: 'clock' is a system app, on every phone; installable (third-party) apps: "
        f"{', '.join(third_party()) or 'none yet'} (vlui/android/data/apps.yaml)")
    fixture_app.register(monkeypatch)
    assert state_problem({"installed": ["calculater"]}) == (
        f"installed: 'calculater' is not an app vlui knows; installable (third-party) apps: "
        f"{', '.join(third_party())} (vlui/android/data/apps.yaml)")
    assert KEY in third_party() and state_problem({"installed": [KEY]}) is None
    dev = SimDevice("000")
    with pytest.raises(VluiError, match="installed: 'clock' is a system app"):
        dev.install_apps([PinnedApp("clock", "Clock", apps()["clock"].package, "6.0")])
    with pytest.raises(VluiError, match=f"Notes is org.other.notes at version 2.0, but vlui's {KEY} app is "
                                        f"{fixture_app.PACKAGE}"):
        dev.install_apps([PinnedApp(KEY, "Notes", "org.other.notes", "2.0")])
