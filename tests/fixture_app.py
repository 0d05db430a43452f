"""A third-party app for tests only, ``fixture_notes``: the smallest app that apps.yaml, the simulated phone's app
registry, the English strings, the icons and B-MoCA release 2.5's pinned apps know, registered with monkeypatch for
one test. It tests the mechanism B-MoCA's five apps plug into (``third_party: true`` in vlui/android/data/apps.yaml)
while none of them is simulated yet; it is no part of vlui and no snapshot or task names it."""

from __future__ import annotations

import pytest

from vlui.android.apps import AppInfo, apps
from vlui.android.i18n import get_locale
from vlui.device import PinnedApp
from vlui.sim import apps as sim_apps
from vlui.sim import icons
from vlui.sim.protocol import Phone
from vlui.sim.ui import Node
from vlui.sim.widgets import Ctx, text
from vlui.tasks.catalog import release_pins

KEY = "fixture_notes"
PACKAGE = "org.vlui.fixture.notes"
LABEL = "Notes"  # between Messages and Phone in the drawer
PIN = PinnedApp(KEY, "Notes (test fixture)", PACKAGE, "1.0 (1)")


def _build(dev: Phone, ctx: Ctx, screen: dict) -> Node:
    root = Node(bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PACKAGE, bg=ctx.theme.background)
    return root.add(text(ctx, (0, ctx.top, ctx.width, ctx.top + ctx.dp(56)), LABEL, 20, pkg=PACKAGE,
                         rid=f"{PACKAGE}:id/title"))


def register(monkeypatch: pytest.MonkeyPatch, pinned: bool = False) -> None:
    """Make ``fixture_notes`` known for the test: a third-party app no phone has until it installs it (an English
    label only: use it on English snapshots). ``pinned``: one of the release's apps too, which the environment
    installs for a run of the release's tasks."""
    monkeypatch.setitem(apps(), KEY, AppInfo(KEY, PACKAGE, f"{PACKAGE}.MainActivity", third_party=True))
    monkeypatch.setitem(get_locale("en-US").strings, f"app.{KEY}", LABEL)
    monkeypatch.setitem(icons._APPS, KEY, ("#fbbc04", lambda pen: None))  # a plain yellow disc
    monkeypatch.setitem(sim_apps.APPS, KEY, sim_apps.App(_build))
    if pinned:
        monkeypatch.setitem(release_pins(), KEY, PIN)
