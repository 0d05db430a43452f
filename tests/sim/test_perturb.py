"""env.stochastic: episode-level randomness on the simulated phone, seeded per episode and off by default."""

from __future__ import annotations

import numpy as np
import pytest

from vlui.env.settings import EnvConfig
from vlui.env.env import make_env
from vlui.errors import VluiError
from vlui.sim.phone import SimDevice
from vlui.sim.ui import hit


def _env(stochastic: bool):
    return make_env(EnvConfig(snapshots=["000"], stochastic=stochastic), ["open_clock", "airplane_on"],
                    include_xml=True)


def test_off_by_default_and_the_same_seed_gives_the_same_episode() -> None:
    plain = _env(False)
    obs, info = plain.reset(seed=4, options={"task": "open_clock"})
    assert "perturbations" not in info
    env = _env(True)
    drawn = []
    for seed in (1, 1, 2, 3, 4, 5, 6, 7):
        obs_s, info_s = env.reset(seed=seed, options={"task": "open_clock"})
        drawn.append((info_s["perturbations"], obs_s["screen"].tobytes()))
    assert drawn[0] == drawn[1]  # the same seed: the same draws and the same screen
    assert len({str(d) for d, _ in drawn}) > 4  # other seeds: other draws
    assert any(not np.array_equal(np.frombuffer(s, np.uint8), obs["screen"].ravel()) for _, s in drawn)


def _seed_with(env, key: str) -> int:
    for seed in range(200):
        env.reset(seed=seed, options={"task": "open_clock"})
        if key in env.perturbations:
            return seed
    raise AssertionError(f"no seed draws {key}")


def test_a_notification_arrives_as_a_heads_up_banner_that_opens_its_app_or_goes_away() -> None:
    env = _env(True)
    seed = _seed_with(env, "notification")
    app = env.perturbations["notification"]
    dev: SimDevice = env.device
    banner = next(n for n in dev.frame().walk() if n.rid == "com.android.systemui:id/expandableNotificationRow")
    assert app in dev.state.notifications and banner.children
    assert "expandableNotificationRow" not in dev.ui_xml()  # another window than the app's: not in uiautomator's dump
    x1, y1, x2, y2 = banner.bounds
    dev.tap((x1 + x2) / 2, (y1 + y2) / 2)
    assert dev.state.top == app and dev.state.headsup is None and app not in dev.state.notifications
    env.reset(seed=seed, options={"task": "open_clock"})  # the same notification; left alone, it goes after 5 s
    dev.tap(5, dev.height // 2)
    assert dev.state.headsup is not None
    dev.tap(5, dev.height // 2)
    assert dev.state.headsup is None and app in dev.state.notifications


def test_a_slow_app_start_shows_the_starting_window_for_one_step() -> None:
    env = _env(True)
    _seed_with(env, "slow_start")
    dev: SimDevice = env.device
    assert dev.state.slow_start  # the first app opened in the episode starts slowly
    icon = next(n for n in dev.frame().walk() if n.on_tap is not None and dev.locale.t("app.phone") in (n.text, n.desc))
    dev.tap((icon.bounds[0] + icon.bounds[2]) / 2, (icon.bounds[1] + icon.bounds[3]) / 2)
    dev.frame()
    assert dev.state.top == "phone" and not any(n.on_tap is not None for n in dev._window.walk())  # starting window
    node = hit(dev.frame(), dev.width // 2, dev.height // 2)
    assert node is None or node.package != "com.google.android.dialer"
    dev.tap(dev.width // 2, dev.height // 2)  # a tap on it does nothing; the app has drawn its screen meanwhile
    assert dev.state.starting is None and any(n.on_tap is not None for n in dev.frame().walk() if n.package ==
                                               "com.google.android.dialer")
    assert not dev.state.slow_start  # only the first


def test_settings_may_open_where_its_list_was_left() -> None:
    env = _env(True)
    _seed_with(env, "settings_scroll_px")
    assert env.device.state.scroll["settings.main"] == env.perturbations["settings_scroll_px"]


def test_a_real_device_is_not_randomised() -> None:
    with pytest.raises(VluiError, match="env.stochastic=true randomises the simulated phone's episodes"):
        make_env(EnvConfig(backend="adb", serial="emulator-5554", stochastic=True), ["open_clock"])


def test_a_permission_prompt_shows_over_the_first_app_that_asks_in_the_phones_language() -> None:
    env = make_env(EnvConfig(snapshots=["105"], stochastic=True), ["open_camera"], include_xml=True)
    for seed in range(200):
        env.reset(seed=seed, options={"task": "open_camera"})
        if env.perturbations.get("permission_prompt"):
            break
    dev: SimDevice = env.device
    dev.launch("settings")  # asks for no permission: no prompt, and the next app that asks still gets it
    assert dev.state.permission is None and dev.state.permission_prompt
    dev.launch("camera")
    xml = dev.ui_xml()
    message = dev.locale.t("permission.camera", app=dev.locale.t("app.camera"))
    assert "permission_allow_button" in xml and dev.locale.t("permission.allow") in xml
    assert message.startswith("카메라") and message.split()[0] in xml  # Korean, wrapped over lines
    assert any("REQUEST_PERMISSIONS" in line for line in dev.log_lines())
    allow = next(n for n in dev.frame().walk() if n.rid.endswith(":id/permission_allow_button"))
    dev.tap((allow.bounds[0] + allow.bounds[2]) / 2, (allow.bounds[1] + allow.bounds[3]) / 2)
    assert dev.state.permission is None and dev.state.top == "camera" and "permission_allow_button" not in dev.ui_xml()
