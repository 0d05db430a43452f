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
from the chooser's process, ``system:ui``, which the simulated phone does not run.

What is shared is text (Chrome's page: an ACTION_SEND of ``text/plain``) or files (Files' selection: an ACTION_SEND,
or ACTION_SEND_MULTIPLE for several, of their MIME types with their content URIs in ``EXTRA_STREAM``). The sheet
shows Android 10's preview of it: the text (``content_preview_text``), an image (``content_preview_image_1_large``)
or a file's name (``content_preview_filename``), over the apps whose share filter takes every type shared
(:data:`TARGETS`), by label: Bluetooth, Gmail and Messages on the simulated phone, Messages only for the types its
filter names (a PDF is offered to Bluetooth and Gmail alone). Choosing Messages closes the sheet and starts Messages'
share flow (:func:`vlui.sim.apps.messages.receive_share`, with the START line the chooser gives the target, as its
caller). Deviations: no direct-share row of people, no copy button on the preview, several files preview as the
first one's name (Android 10 adds "+ N files"), and Bluetooth and Gmail do nothing when chosen (the simulated phone
has no Gmail compose screen and no Bluetooth devices).
"""

from __future__ import annotations

from typing import Literal, Required, TypedDict

from vlui.android.apps import app_uid
from vlui.android.intents import mime_matches
from vlui.sim.apps.messages import SHARE_TYPES, receive_share
from vlui.sim.protocol import Phone
from vlui.sim.ui import Node
from vlui.sim.widgets import Ctx, Tap, text

PKG = "android"
SCREEN = "chooser"
CHOOSER = "android/com.android.internal.app.ChooserActivity"
ANY = ("*/*",)


class SharedFile(TypedDict):
    """A file an ACTION_SEND carries: its display name and MIME type."""

    name: str
    mime: str


class Screen(TypedDict, total=False):
    """The share sheet on the sharing app's task: what it shares, an ACTION_SEND's text or its files."""

    screen: Required[Literal["chooser"]]
    text: str
    files: list[SharedFile]


def open_chooser(dev: Phone, key: str, shared: str = "", files: list[SharedFile] | None = None) -> None:
    """App ``key`` shares the text ``shared`` (text/plain) or ``files``: the share sheet starts on top of its task."""
    params = {"files": list(files)} if files else {"text": shared}
    dev.start_activity(key, SCREEN, CHOOSER, intent="act=android.intent.action.CHOOSER", **params)
    # ActivityMetricsLogger's line once the sheet has drawn; a delay of the kind devices print, fixed per moment
    dev.logi("ActivityTaskManager", f"Displayed {CHOOSER}: +{160 + dev.state.time_ms % 97}ms", offset_ms=300)


def _to_messages(dev: Phone, caller: str, screen: Screen) -> Tap:
    def tap(x: int, y: int) -> None:
        dev.state.tasks[caller].pop()  # the chooser finishes once a target is chosen
        receive_share(dev, screen.get("text", ""), app_uid(caller), screen.get("files", []))
    return tap


# The apps that take a share, with the MIME types their share filters name: Messages' are its own
# (:data:`vlui.sim.apps.messages.SHARE_TYPES`); Gmail's compose and Bluetooth's sharing take any type here.
TARGETS = (("app.messages", "app:messages", SHARE_TYPES), ("app.gmail", "app:gmail", ANY),
           ("settings.bluetooth", "glyph:bluetooth", ANY))


def targets(dev: Phone, ctx: Ctx, caller: str, screen: Screen) -> list[tuple[str, str, Tap]]:
    """The apps the sheet offers for what is shared, as (label, icon, on_tap): those whose filter takes every type
    shared, sorted by label as Android 10 sorts targets nothing ranks yet."""
    types = [f["mime"] for f in screen.get("files", [])] or ["text/plain"]
    found = []
    for label, icon, takes in TARGETS:
        if all(any(mime_matches(t, pattern) for pattern in takes) for t in types):
            found.append((ctx.t(label), icon, _to_messages(dev, caller, screen) if label == "app.messages"
                          else (lambda x, y: None)))
    return sorted(found, key=lambda t: t[0].casefold())


def _preview(ctx: Ctx, screen: Screen, box: tuple[int, int, int, int]) -> Node:
    """Android 10's content preview: the text, an image, or a file's icon and name."""
    x1, y1, x2, y2 = box
    files = screen.get("files", [])
    if not files:
        return text(ctx, box, screen.get("text", ""), 14, pkg=PKG, rid="android:id/content_preview_text")
    first = files[0]
    if len(files) == 1 and first["mime"].startswith("image/"):
        return Node(cls="android.widget.ImageView", bounds=(x1, y1, x1 + (y2 - y1) * 4 // 3, y2), package=PKG,
                    rid="android:id/content_preview_image_1_large", bg=(120, 144, 156), radius=ctx.dp(4),
                    icon="glyph:image", icon_color=(255, 255, 255))
    row = Node(cls="android.widget.LinearLayout", bounds=box, package=PKG, rid="android:id/content_preview_file_area")
    g = ctx.dp(32)
    row.add(Node(cls="android.widget.ImageView", bounds=(x1, (y1 + y2 - g) // 2, x1 + g, (y1 + y2 + g) // 2),
                 package=PKG, rid="android:id/content_preview_file_icon", icon="glyph:document",
                 icon_color=ctx.theme.accent))
    row.add(text(ctx, (x1 + g + ctx.dp(16), y1, x2, y2), first["name"], 14, pkg=PKG,
                 rid="android:id/content_preview_filename"))
    return row


def build(dev: Phone, ctx: Ctx, screen: Screen) -> Node:
    """The sheet at the bottom of the screen, the shared text then a grid of targets, over a dimmed screen."""
    caller = dev.state.top
    root = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG,
                rid="android:id/contentPanel", bg=ctx.theme.scrim, on_tap=lambda x, y: dev.press_back())
    offered = targets(dev, ctx, caller, screen)
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
    sheet.add(_preview(ctx, screen, (left + ctx.dp(24), y, right - ctx.dp(24), y + preview_h - ctx.dp(16))))
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
