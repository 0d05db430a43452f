"""docs/architecture.md's recipe for a new app screen, followed in one file: screens built from the state with the
widgets, the app's own state as a dataclass, handlers that act through the phone protocol
(:class:`vlui.sim.protocol.Phone`: post a log line, push a screen), one entry of :data:`vlui.sim.apps.APPS`. The
phone then draws the screens, dumps them as uiautomator XML, routes an agent's taps and BACK to them, logs what they
log and keeps the app's state, which a snapshot or a task sets under the app's key, with nothing else in vlui
changed; and the real phone implements the protocol the apps are written against."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from vlui.android.apps import apps
from vlui.android.state import bounded
from vlui.errors import VluiError
from vlui.sim import apps as sim_apps
from vlui.sim.apps import APPS, App
from vlui.sim.phone import SimDevice
from vlui.sim.protocol import Phone
from vlui.sim.ui import Node
from vlui.sim.widgets import Ctx, app_bar, button, text
from vlui.tasks.catalog import release_pins

PKG = "com.google.android.GoogleCamera"
SCREENS = ("main", "review")  # the viewfinder, and the photo just taken (``{"screen": "review", "photo": n}``)


@dataclass
class CameraState:
    """What the camera remembers: how many photos it has taken (its photos' numbers go on from there)."""

    photos: int = bounded(0, 10**6, default=0)


def camera_state(dev: Phone) -> CameraState:
    """The camera's own state on the phone ``dev``."""
    return dev.state.app("camera", CameraState)


# ---------------------------------------------------------------------------------------------- the new app screens
def build(dev: Phone, ctx: Ctx, screen: dict[str, Any]) -> Node:
    """The camera's two screens: the viewfinder with a shutter button, and the review of the photo just taken."""
    root = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG,
                bg=ctx.theme.background)
    if screen["screen"] == "review":
        root.add(app_bar(ctx, PKG, f"Photo {screen['photo']}", up=lambda x, y: dev.press_back()))
        return root

    def shutter(x: int, y: int) -> None:
        camera_state(dev).photos += 1
        dev.logi("CAM_PhotoModule", "onShutterButtonClick: photo taken", app="camera")
        dev.push("camera", "review", photo=camera_state(dev).photos)

    mid = (ctx.top + ctx.bottom) // 2
    root.add(text(ctx, (0, ctx.top, ctx.width, mid), "Viewfinder", pkg=PKG, rid=f"{PKG}:id/preview"))
    root.add(button(ctx, PKG, (ctx.dp(16), mid, ctx.width - ctx.dp(16), mid + ctx.dp(48)), "Shutter", shutter,
                    rid=f"{PKG}:id/shutter_button", filled=True))
    return root


def on_back(dev: Phone, key: str) -> bool:
    """BACK on the review goes back to the viewfinder (the default); on the viewfinder it logs and leaves."""
    if dev.top_screen() == {"screen": "main"}:
        dev.logi("CAM_Activity", "onBackPressed: leaving", app="camera")
    return False


@pytest.fixture
def camera(monkeypatch):
    monkeypatch.setitem(APPS, "camera", App(build, lambda key: SCREENS, state=CameraState, on_back=on_back))
    return SimDevice("000", noise=False)


def centre(dev: SimDevice, rid: str) -> tuple[int, int]:
    node = next(n for n in dev.frame().walk() if n.rid == rid)
    x1, y1, x2, y2 = node.bounds
    return (x1 + x2) // 2, (y1 + y2) // 2


# ---------------------------------------------------------------------------------------------- the tests
def test_the_new_screens_are_drawn_dumped_touched_and_logged(camera: SimDevice) -> None:
    home = camera.screenshot()
    camera.launch("camera")
    xml = camera.ui_xml()
    assert f'resource-id="{PKG}:id/shutter_button"' in xml and 'text="Viewfinder"' in xml
    assert f'package="{PKG}"' in xml
    viewfinder = camera.screenshot()
    assert not np.array_equal(home, viewfinder)

    mark = camera.log_mark()
    camera.tap(*centre(camera, f"{PKG}:id/shutter_button"))  # an agent's tap, hit-tested against the tree
    assert camera.top_screen() == {"screen": "review", "photo": 1}
    assert 'text="Photo 1"' in camera.ui_xml()
    logged = camera.log_lines(mark)
    assert any("CAM_PhotoModule" in line and "photo taken" in line for line in logged), logged
    pid = camera.state.pids["camera"]
    assert any(f" {pid} " in line for line in logged if "CAM_PhotoModule" in line)  # from the camera's process

    camera.key("BACK")  # the review goes, the viewfinder is back
    assert camera.top_screen() == {"screen": "main"}
    assert np.array_equal(camera.screenshot(), viewfinder)
    mark = camera.log_mark()
    camera.key("BACK")  # the app's own hook runs, then the task ends
    assert any("onBackPressed: leaving" in line for line in camera.log_lines(mark))
    assert camera.state.top is None and "camera" not in camera.state.tasks


def test_the_apps_state_is_kept_and_set_under_its_key(camera: SimDevice) -> None:
    assert camera.state.app("camera", CameraState) == CameraState()
    camera.set_state({"camera": {"photos": 41}})  # as a snapshot's or a task's starting state sets it
    camera.launch("camera")
    camera.tap(*centre(camera, f"{PKG}:id/shutter_button"))
    assert camera.top_screen() == {"screen": "review", "photo": 42} and camera.check_state({"camera.photos": 42})
    with pytest.raises(VluiError, match=r"camera: unknown field 'flash'; fields: photos$"):
        camera.set_state({"camera": {"flash": True}})
    with pytest.raises(VluiError, match="camera.photos must be between 0 and 1000000, not -1"):
        camera.set_state({"camera": {"photos": -1}})


def test_a_screen_the_app_does_not_have_is_a_one_line_error(camera: SimDevice) -> None:
    camera.launch("camera")
    with pytest.raises(VluiError, match="the camera app has no screen 'gallery'; its screens: main, review"):
        camera.push("camera", "gallery")
    assert camera.top_screen() == {"screen": "main"}  # nothing was pushed


def test_without_the_entry_the_app_is_the_generic_one() -> None:
    assert sim_apps.app("camera") is sim_apps.GENERIC
    dev = SimDevice("000", noise=False)
    dev.launch("camera")
    assert "shutter_button" not in dev.ui_xml() and "camera" not in dev.state.apps
    with pytest.raises(VluiError, match="camera: the app keeps no state a snapshot or a task sets; apps that do: "):
        dev.set_state({"camera": {"photos": 1}})


def test_the_phone_implements_the_protocol_the_apps_are_written_against() -> None:
    dev = SimDevice("000", noise=False)
    members = [name for name in dir(Phone) if not name.startswith("_")]
    members += list(inspect.get_annotations(Phone))
    assert {"logi", "launch", "start_activity", "push", "state", "snapshot"} <= set(members)
    for name in members:
        assert hasattr(dev, name), f"SimDevice lacks the protocol's {name}"
        wanted = getattr(Phone, name, None)
        if callable(wanted):
            assert inspect.signature(getattr(SimDevice, name)) == inspect.signature(wanted), name


def every_screen() -> list[tuple[str, str]]:
    return [(key, name) for key in apps() for name in sim_apps.app(key).screens(key)]


@pytest.mark.parametrize(("key", "name"), every_screen(), ids=lambda v: v)
def test_every_screen_an_app_declares_is_drawn_and_dumped(key: str, name: str) -> None:
    dev = SimDevice("000", noise=False)
    if apps()[key].third_party:  # on a phone that has installed it
        dev.set_state({"installed": [key]})
    if key == "phone" and name == "incall":
        dev.set_state({"phone": {"call": {"number": "911", "started_ms": dev.state.time_ms, "emergency": True}}})
    if apps()[key].third_party:  # B-MoCA release 2.5's apps: on a phone that installs them
        dev.install_apps([release_pins()[key]])
    dev.launch(key)
    if name != "main":
        dev.push(key, name)
    assert dev.top_screen()["screen"] == name
    xml = dev.ui_xml()
    assert f'package="{apps()[key].package}"' in xml or name == "search"  # Settings' search is its own package
    assert dev.screenshot().std() > 0
