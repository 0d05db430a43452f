"""The share sheet: Android 10's ChooserActivity, which an app's Share starts (Chrome's app menu, Share…).

ChooserActivity is the framework's (package ``android``) and starts in the task of the app that shares, as an
activity started without ``FLAG_ACTIVITY_NEW_TASK`` does: its screen goes on top of that app's task (any app's, so
:func:`vlui.sim.apps.check_screen` takes it for every app), its window is the framework's (the dump's package is
``android``), and BACK, or a tap above the sheet, closes it. The START line is the one a device prints for an app's
``Intent.createChooser`` started from an activity (Chrome's TargetChosenReceiver adds no flags), as a logcat of an
Android 11 device published in a public repository shows it (ActivityStarter prints it alike on Android 10; the
clip of the wrapped ACTION_SEND is not promoted to the chooser's intent, Intent.migrateExtraStreamToClipData)::

    START u0 {act=android.intent.action.CHOOSER cmp=android/com.android.internal.app.ChooserActivity (has extras)}
    from uid 10052

then ActivityTaskManager's ``Displayed android/com.android.internal.app.ChooserActivity: +NNNms``. ChooserActivity's
own warning for Chrome's chooser title (``Ignoring intent's EXTRA_TITLE, deprecated in P``) is left out: it comes
from the chooser's process, ``system:ui``, which the simulated phone does not run. The sheet shows
the text shared (``content_preview_text``, Android 10's text preview) over the apps that take ``text/plain``, by
label: Bluetooth, Gmail and Messages on the simulated phone. Choosing Messages closes the sheet and starts Messages'
share flow (:func:`vlui.sim.apps.messages.receive_share`, with the ACTION_SEND START line the chooser gives the
target, as its caller). Deviations: no direct-share row of people, no copy button on the preview, and Bluetooth and
Gmail do nothing when chosen (the simulated phone has no Gmail compose screen and no Bluetooth devices).
"""

from __future__ import annotations

from typing import Literal, TypedDict

from vlui.android.apps import app_uid
from vlui.sim.apps.messages import receive_share
from vlui.sim.protocol import Phone
from vlui.sim.ui import Node
from vlui.sim.widgets import Ctx, Tap, text

PKG = "android"
SCREEN = "chooser"
CHOOSER = "android/com.android.internal.app.ChooserActivity"


class Screen(TypedDict):
    """The share sheet on the sharing app's task: what it shares (an ACTION_SEND's text)."""

    screen: Literal["chooser"]
    text: str


def open_chooser(dev: Phone, key: str, shared: str) -> None:
    """App ``key`` shares ``shared`` (text/plain): the share sheet starts on top of its task."""
    dev.start_activity(key, SCREEN, CHOOSER, intent="act=android.intent.action.CHOOSER", text=shared)
    # ActivityMetricsLogger's line once the sheet has drawn; a delay of the kind devices print, fixed per moment
    dev.logi("ActivityTaskManager", f"Displayed {CHOOSER}: +{160 + dev.state.time_ms % 97}ms", offset_ms=300)


def _to_messages(dev: Phone, caller: str, shared: str) -> Tap:
    def tap(x: int, y: int) -> None:
        dev.state.tasks[caller].pop()  # the chooser finishes once a target is chosen
        receive_share(dev, shared, app_uid(caller))
    return tap


def targets(dev: Phone, ctx: Ctx, caller: str, shared: str) -> list[tuple[str, str, Tap]]:
    """The apps the sheet offers for text/plain, as (label, icon, on_tap), sorted by label as Android 10 sorts
    targets nothing ranks yet."""
    found = [(ctx.t("app.messages"), "app:messages", _to_messages(dev, caller, shared)),
             (ctx.t("app.gmail"), "app:gmail", lambda x, y: None),
             (ctx.t("settings.bluetooth"), "glyph:bluetooth", lambda x, y: None)]
    return sorted(found, key=lambda t: t[0].casefold())


def build(dev: Phone, ctx: Ctx, screen: Screen) -> Node:
    """The sheet at the bottom of the screen, the shared text then a grid of targets, over a dimmed screen."""
    caller = dev.state.top
    shared = screen["text"]
    root = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG,
                rid="android:id/contentPanel", bg=ctx.theme.scrim, on_tap=lambda x, y: dev.press_back())
    offered = targets(dev, ctx, caller, shared)
    cols, row_h, preview_h = 4, ctx.dp(104), ctx.dp(72)
    rows = (len(offered) + cols - 1) // cols
    left, right = ctx.content_left, ctx.content_right
    y0 = ctx.bottom - (ctx.dp(24) + preview_h + rows * row_h + ctx.dp(16))
    sheet = Node(cls="android.widget.LinearLayout", bounds=(left, y0, right, ctx.bottom), package=PKG,
                 rid="android:id/chooser_header", bg=ctx.theme.surface, radius=ctx.dp(16),
                 on_tap=lambda x, y: None)  # a tap on the sheet itself keeps it open
    sheet.add(Node(bounds=(left, y0 + ctx.dp(16), right, ctx.bottom), bg=ctx.theme.surface, visual=True))  # square
    sheet.add(Node(bounds=((left + right) // 2 - ctx.dp(16), y0 + ctx.dp(8), (left + right) // 2 + ctx.dp(16),
                   y0 + ctx.dp(12)), bg=ctx.theme.divider, radius=ctx.dp(2), visual=True))  # the drag handle
    y = y0 + ctx.dp(24)
    sheet.add(text(ctx, (left + ctx.dp(24), y, right - ctx.dp(24), y + preview_h - ctx.dp(16)), shared, 14,
                   pkg=PKG, rid="android:id/content_preview_text"))
    y += preview_h
    sheet.add(Node(bounds=(left, y - ctx.dp(8), right, y - ctx.dp(8) + 1), bg=ctx.theme.divider, visual=True))
    grid = Node(cls="android.widget.ListView", bounds=(left, y, right, y + rows * row_h), package=PKG,
                rid="android:id/resolver_list")
    col_w = (right - left) // cols
    for i, (label, icon, tap) in enumerate(offered):
        x1, yy = left + (i % cols) * col_w, y + (i // cols) * row_h
        item = Node(cls="android.widget.LinearLayout", bounds=(x1, yy, x1 + col_w, yy + row_h), package=PKG,
                    desc=label, on_tap=tap)
        g = ctx.dp(48)
        cx = x1 + col_w // 2
        item.add(Node(cls="android.widget.ImageView", bounds=(cx - g // 2, yy + ctx.dp(12), cx + g // 2,
                      yy + ctx.dp(12) + g), package=PKG, rid="android:id/icon", icon=icon,
                      icon_color=ctx.theme.accent if icon.startswith("glyph:") else None))
        item.add(text(ctx, (x1 + ctx.dp(4), yy + ctx.dp(64), x1 + col_w - ctx.dp(4), yy + ctx.dp(96)), label, 12,
                      align="center", pkg=PKG, rid="android:id/text1"))
        grid.add(item)
    sheet.add(grid)
    return root.add(sheet)
