"""System UI of the simulated phone: status bar, 3-button navigation bar, recent apps, brightness dialog, keyboard.

Navigation bar geometry: Android's bar is 48dp tall. B-MoCA presses the buttons by tapping fixed normalised points,
(y, x) = (0.95, 0.22) BACK, (0.95, 0.50) HOME, (0.95, 0.78) OVERVIEW, which on a low-density phone (Pixel 3 at
330 dpi: 99 px of 2160) would fall just above the bar. So the bar is at least 6.5% of the screen height, which
keeps y = 0.95 inside it on every profile. Each button's touch area reaches halfway to its neighbour, so the paper's
points hit the right button on phones (buttons drawn at x = 0.22, 0.50, 0.78) and on the tablet (drawn grouped at
x = 0.40, 0.50, 0.60, as Android 10 tablets do).
"""

from __future__ import annotations

from dataclasses import dataclass

from vlui.android.apps import SYSTEMUI_UID, app_info
from vlui.android.state import GAMMA_SPACE_MAX, brightness_to_gamma, gamma_to_brightness
from vlui.sim import services
from vlui.sim.protocol import Phone
from vlui.sim.typeset import layout, wrap
from vlui.sim.ui import Node
from vlui.sim.widgets import Ctx, button, seek_bar, text

NAV_POINTS = (0.22, 0.50, 0.78)  # B-MoCA's normalised x of BACK, HOME, OVERVIEW on phones (at y = 0.95)
TABLET_NAV_POINTS = (0.40, 0.50, 0.60)  # where a tablet draws them: grouped in the middle of the bar


SYSTEMUI = "com.android.systemui"


# The small icon each app's notification shows in the status bar.
NOTIFICATION_GLYPHS = {"gmail": "mail", "messages": "message", "calendar": "event", "photos": "image",
                       "youtube": "play", "play_store": "download", "maps": "location", "chrome": "download",
                       "phone": "call"}
MAX_NOTIFICATION_ICONS = 4  # more than fit beside the clock show as a dot, as Android 10's status bar does


@dataclass(frozen=True)
class StatusShown:
    """What the status bar shows of the phone's state: :func:`status_bar` draws from this and the screen's ``Ctx``
    alone (its swipe reads the state when it happens), so bars of equal inputs are the same bar, which the phone keeps
    rather than builds again."""

    over_wallpaper: bool  # the home screen shows through it
    clock: str  # the time as the bar writes it
    notifications: tuple[str, ...]  # the apps whose notifications are out, newest first
    icons: tuple[str, ...]  # the glyphs on the right, from the edge: battery, signal (or airplane), Wi-Fi


def status_shown(dev: Phone, ctx: Ctx) -> StatusShown:
    """What :func:`status_bar` shows of ``dev``'s state now."""
    st = dev.state
    now = dev.now()
    clock = (ctx.locale.time(now.hour, now.minute).split(" ")[0] if ctx.locale.meta["hour12"]
             else ctx.locale.time(now.hour, now.minute))
    level = min(100, int(st.battery_level / 10 + 0.5) * 10)  # the icon's drawn level: the nearest tenth
    icons = [f"battery_charging_{level}" if st.charging else f"battery_{level}",
             "airplane" if st.airplane_mode else f"signal_{st.signal_level}"]
    if st.wifi and not st.airplane_mode:
        icons.append(f"wifi_{st.wifi_level}")
    return StatusShown(st.top is None and not st.overview and not st.drawer and not st.shade, clock,
                       tuple(st.notifications), tuple(icons))


def status_bar(dev: Phone, ctx: Ctx, shown: StatusShown) -> Node:
    """Clock and notification icons on the left; Wi-Fi, signal (or airplane) and battery on the right, each
    showing its level."""
    color = (255, 255, 255) if shown.over_wallpaper or ctx.theme.dark else (32, 33, 36)

    def pull_down(xa, ya, xb, yb):  # a swipe down from the status bar pulls the notification shade down
        if yb - ya > ctx.dp(48):
            dev.state.shade, dev.state.focus = True, None
            return True
        return False

    bar = Node(cls="android.widget.FrameLayout", bounds=(0, 0, ctx.width, ctx.top), package=SYSTEMUI,
               rid=f"{SYSTEMUI}:id/status_bar", bg=None if shown.over_wallpaper else ctx.theme.surface,
               on_swipe=pull_down)
    bar.add(text(ctx, (ctx.dp(16), 0, ctx.dp(120), ctx.top), shown.clock, 14, color=color, pkg=SYSTEMUI,
                 rid=f"{SYSTEMUI}:id/clock"))
    g = ctx.dp(16)
    y1 = (ctx.top - g) // 2
    x = ctx.dp(16) + layout(shown.clock, ctx.sp(14), cjk=ctx.locale.cjk_font, arabic=ctx.locale.arabic_font).width \
        + ctx.dp(8)
    for i, app in enumerate(shown.notifications):
        if i == MAX_NOTIFICATION_ICONS:
            dot = ctx.dp(3)
            bar.add(Node(cls="android.widget.ImageView", bounds=(x, (ctx.top - dot) // 2, x + dot,
                                                                (ctx.top + dot) // 2), package=SYSTEMUI,
                         bg=color, radius=-1, rid=f"{SYSTEMUI}:id/notificationIcons"))
            break
        bar.add(Node(cls="android.widget.ImageView", bounds=(x, y1, x + g, y1 + g), package=SYSTEMUI,
                     icon=f"glyph:{NOTIFICATION_GLYPHS[app]}", icon_color=color,
                     desc=ctx.t(f"app.{app}")))
        x += g + ctx.dp(4)
    x = ctx.width - ctx.dp(12)
    for name in shown.icons:
        bar.add(Node(cls="android.widget.ImageView", bounds=(x - g, y1, x, y1 + g), package=SYSTEMUI,
                     icon=f"glyph:{name}", icon_color=color))
        x -= g + ctx.dp(4)
    return bar


def headsup(dev: Phone, ctx: Ctx) -> Node:
    """A notification that has just arrived, over the top of the screen: the app's icon and name, the sender and the
    message. Tapping it opens the app; swiping it up dismisses it."""
    st = dev.state
    note = st.headsup
    margin, h = ctx.dp(8), ctx.dp(80)
    x1, x2, y1 = ctx.content_left + margin, ctx.content_right - margin, ctx.top + margin

    def open_app(x, y):
        st.headsup = None
        open_notification(dev, note["app"])

    def dismiss(xa, ya, xb, yb):
        if ya - yb > ctx.dp(24):
            st.headsup = None
            return True
        return False

    return notification_card(ctx, note["app"], note["title"], note["text"], (x1, y1, x2, y1 + h), open_app, dismiss)


def open_notification(dev: Phone, app: str) -> None:
    """A tap on an app's notification: it is cleared and the app opens."""
    dev.state.notifications = [a for a in dev.state.notifications if a != app]
    dev.launch(app)


def notification_card(ctx: Ctx, app: str, title: str, body: str, bounds: tuple[int, int, int, int], on_tap,
                      on_swipe=None) -> Node:
    """One notification as SystemUI draws it: the app's small icon and name, the title in bold, the text."""
    x1, y1, x2, _ = bounds
    card = Node(cls="android.widget.FrameLayout", bounds=bounds, package=SYSTEMUI,
                rid=f"{SYSTEMUI}:id/expandableNotificationRow", bg=ctx.theme.surface, radius=ctx.dp(8),
                on_tap=on_tap, on_swipe=on_swipe)
    g, pad = ctx.dp(16), ctx.dp(16)
    card.add(Node(cls="android.widget.ImageView", bounds=(x1 + pad, y1 + ctx.dp(12), x1 + pad + g, y1 + ctx.dp(12) + g),
                  package=SYSTEMUI, icon=f"glyph:{NOTIFICATION_GLYPHS[app]}", icon_color=ctx.theme.accent))
    card.add(text(ctx, (x1 + ctx.dp(40), y1 + ctx.dp(8), x2 - pad, y1 + ctx.dp(32)), ctx.t(f"app.{app}"), 12,
                  pkg=SYSTEMUI, rid="android:id/app_name_text"))
    card.add(text(ctx, (x1 + pad, y1 + ctx.dp(32), x2 - pad, y1 + ctx.dp(54)), title, 14, bold=True, pkg=SYSTEMUI,
                  rid="android:id/title"))
    if body:
        card.add(text(ctx, (x1 + pad, y1 + ctx.dp(54), x2 - pad, y1 + ctx.dp(76)), body, 14, pkg=SYSTEMUI,
                      rid="android:id/text"))
    return card


# What a notification of each app says (user content: names, messages, events, numbers, never translated); the one
# shown is chosen by the snapshot, so a phone shows the same notifications every time.
NOTIFICATION_CONTENT = {
    "messages": [("Alex Kim", "On my way"), ("Maria Silva", "See you at 7?"), ("Sam Okafor", "Thanks!")],
    "gmail": [("Priya Nair", "Slides for Monday"), ("Omar Haddad", "Re: trip photos"), ("Yuki Tanaka", "Invoice 2231")],
    "calendar": [("Team meeting", "{time}"), ("Dentist", "{time}"), ("Lunch with Sam", "{time}")],
    "phone": [("Alex Kim", "+1 650-555-0134"), ("Maria Silva", "+44 20 7946 0958"), ("Sam Okafor", "+254 20 555 0199")],
    "chrome": [("report.pdf", "example.com"), ("tickets.pdf", "example.org"), ("menu.pdf", "example.net")],
    "photos": [("Trip to Lisbon", ""), ("Birthday 2026", ""), ("Hiking", "")],
    "youtube": [("Lo-fi beats to study to", "Chill Channel"), ("Bread in 10 minutes", "Kitchen Lab"),
                ("Top goals of the week", "Football Daily")],
    "play_store": [("Duolingo", ""), ("Spotify", ""), ("WhatsApp", "")],
    "maps": [("Golden Gate Park", ""), ("Central Station", ""), ("Blue Bottle Coffee", "")],
}
QUICK_TILES = (("wifi", "settings.wifi"), ("bluetooth", "settings.bluetooth"),
               ("do_not_disturb", "settings.do_not_disturb"), ("auto_rotate", "settings.auto_rotate"))


def _toggle_tile(dev: Phone, tile: str) -> None:
    """A quick settings tile's click, as SystemUI makes it: Wi-Fi and Bluetooth through their services (logged with
    SystemUI as the caller, so B-MoCA's detectors, which name Settings, do not count it), the others as settings."""
    st = dev.state
    if tile == "wifi":
        services.set_wifi(dev, not st.wifi, caller=(SYSTEMUI, SYSTEMUI_UID))
    elif tile == "bluetooth":
        services.set_bluetooth(dev, not st.bluetooth, package=SYSTEMUI)
    else:
        setattr(st, tile, not getattr(st, tile))


def notification_shade(dev: Phone, ctx: Ctx) -> Node:
    """The notification shade pulled down over the screen: the date, a row of quick settings tiles, and a card per
    posted notification. A card's tap opens its app; a swipe up or BACK closes the shade."""
    st = dev.state
    now = dev.now()

    def close(xa, ya, xb, yb):
        if ya - yb > ctx.dp(48):
            st.shade = False
            return True
        return False

    root = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=SYSTEMUI,
                rid=f"{SYSTEMUI}:id/notification_panel", bg=(32, 33, 36) if ctx.theme.dark else (241, 243, 244),
                on_swipe=close, on_tap=lambda x, y: None)
    x1, x2 = ctx.content_left + ctx.dp(16), ctx.content_right - ctx.dp(16)
    weekday = ctx.locale.seq("weekday")[(now.weekday() + 1) % 7]
    date = ctx.t("launcher.date_format", weekday=weekday, month=ctx.locale.seq("month")[now.month - 1],
                 day=now.day)
    y = ctx.top + ctx.dp(8)
    root.add(text(ctx, (x1, y, x2, y + ctx.dp(32)), date, 14, pkg=SYSTEMUI, rid=f"{SYSTEMUI}:id/date"))
    y += ctx.dp(40)
    size, gap = ctx.dp(48), ctx.dp(16)
    tx = x1
    for tile, label in QUICK_TILES:
        on = st.wifi if tile == "wifi" else st.bluetooth if tile == "bluetooth" else getattr(st, tile)
        node = Node(cls="android.widget.Switch", bounds=(tx, y, tx + size, y + size), package=SYSTEMUI,
                    desc=ctx.t(label), checkable=True, checked=on, bg=ctx.theme.accent if on else ctx.theme.surface,
                    radius=-1, on_tap=lambda x, yy, t=tile: _toggle_tile(dev, t))
        node.add(Node(cls="android.widget.ImageView", bounds=(tx + size // 4, y + size // 4, tx + 3 * size // 4,
                                                              y + 3 * size // 4), package=SYSTEMUI,
                      icon=f"glyph:{tile}", icon_color=ctx.theme.on_accent if on else ctx.theme.on_surface))
        root.add(node)
        tx += size + gap
    y += size + ctx.dp(16)
    pick = sum(map(ord, dev.snapshot.id))  # which content: the snapshot's, so it stays the same
    for app in reversed(st.notifications):
        title, body = NOTIFICATION_CONTENT[app][pick % len(NOTIFICATION_CONTENT[app])]
        body = body.format(time=ctx.locale.time(9, 30))

        def open_app(x, yy, app=app):
            st.shade = False
            open_notification(dev, app)

        h = ctx.dp(88)
        if y + h > ctx.bottom:
            break
        card = notification_card(ctx, app, title, body, (x1, y, x2, y + h), open_app)
        root.add(card)
        y += h + ctx.dp(8)
    return root


# The runtime permission an app asks for when it is first opened (env.stochastic), and the group's icon.
PERMISSION_GROUPS = {"camera": "camera", "contacts": "contacts", "phone": "phone", "photos": "storage_isolated"}
PERMISSION_GLYPHS = {"camera": "camera_shutter", "contacts": "person", "phone": "call", "storage_isolated": "image"}
PERMISSION_CONTROLLER = "com.google.android.permissioncontroller"
GRANT_ACTIVITY = "com.android.packageinstaller.permission.ui.GrantPermissionsActivity"


def permission_prompt(dev: Phone, ctx: Ctx) -> Node:
    """Android 10's runtime permission prompt over the app that asked: the group's icon, the request (the
    framework's permission group string, with the app's name), and Allow above Deny. Either closes it."""
    st = dev.state
    app, group = st.permission["app"], st.permission["group"]

    def close(x, y):
        st.permission = None

    width = min(ctx.width - ctx.dp(48), ctx.dp(328))
    x1, x2 = (ctx.width - width) // 2, (ctx.width + width) // 2
    size = ctx.sp(18)
    lines = wrap(ctx.t(f"permission.{group}", app=ctx.t(f"app.{app}")), size, width - ctx.dp(48),
                 cjk=ctx.locale.cjk_font, arabic=ctx.locale.arabic_font)
    line_h = int(size * 1.4)
    height = ctx.dp(24 + 32 + 16) + line_h * len(lines) + ctx.dp(24 + 48 + 48 + 8)
    y1 = (ctx.top + ctx.bottom - height) // 2
    scrim = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom),
                 package=PERMISSION_CONTROLLER, bg=ctx.theme.scrim, on_tap=lambda x, y: None)
    card = Node(cls="android.widget.LinearLayout", bounds=(x1, y1, x2, y1 + height), package=PERMISSION_CONTROLLER,
                rid=f"{PERMISSION_CONTROLLER}:id/grant_dialog", bg=ctx.theme.surface, radius=ctx.dp(8))
    g, cx = ctx.dp(32), (x1 + x2) // 2
    y = y1 + ctx.dp(24)
    card.add(Node(cls="android.widget.ImageView", bounds=(cx - g // 2, y, cx + g // 2, y + g),
                  package=PERMISSION_CONTROLLER, rid=f"{PERMISSION_CONTROLLER}:id/permission_icon",
                  icon=f"glyph:{PERMISSION_GLYPHS[group]}", icon_color=ctx.theme.accent))
    y += g + ctx.dp(16)
    for line in lines:
        card.add(text(ctx, (x1 + ctx.dp(24), y, x2 - ctx.dp(24), y + line_h), line, 18, align="center",
                      pkg=PERMISSION_CONTROLLER, rid=f"{PERMISSION_CONTROLLER}:id/permission_message"))
        y += line_h
    y += ctx.dp(24)
    for key, rid in (("permission.allow", "permission_allow_button"), ("permission.deny", "permission_deny_button")):
        card.add(button(ctx, PERMISSION_CONTROLLER, (x1 + ctx.dp(8), y, x2 - ctx.dp(8), y + ctx.dp(48)), ctx.t(key),
                        close, rid=f"{PERMISSION_CONTROLLER}:id/{rid}"))
        y += ctx.dp(48)
    scrim.add(card)
    return scrim


def starting_window(dev: Phone, ctx: Ctx, key: str) -> Node:
    """An app's starting window, shown until it draws its first screen: its background and its icon."""
    size = ctx.dp(96)
    cx, cy = ctx.width // 2, (ctx.top + ctx.bottom) // 2
    root = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom),
                package=app_info(key, dev.state.dialer).package, bg=ctx.theme.background)
    root.add(Node(cls="android.widget.ImageView", bounds=(cx - size // 2, cy - size // 2, cx + size // 2,
                                                          cy + size // 2), package=app_info(key, dev.state.dialer).package,
                  icon=f"app:{key}"))
    return root


def nav_bar(dev: Phone, ctx: Ctx, home: bool) -> Node:
    """The three buttons, on black over the home screen (``home``: no app in front) and in the dark theme. Built
    from ``ctx`` and ``home`` alone (its buttons act on the phone when pressed), so the phone keeps one while they
    stay equal."""
    xs = TABLET_NAV_POINTS if ctx.tablet else NAV_POINTS
    y1, y2 = ctx.bottom, ctx.height
    dark = home or ctx.theme.dark
    bar = Node(cls="android.widget.FrameLayout", bounds=(0, y1, ctx.width, y2), package=SYSTEMUI,
               rid=f"{SYSTEMUI}:id/navigation_bar_frame", bg=(0, 0, 0) if dark else ctx.theme.nav_bar)
    edges = [0] + [int(ctx.width * (a + b) / 2) for a, b in zip(xs, xs[1:], strict=False)] + [ctx.width]
    g = ctx.dp(24)
    color = (255, 255, 255) if dark else ctx.theme.nav_icon
    for i, (name, glyph, action) in enumerate((("back", "back", dev.press_back), ("home", "home", dev.press_home),
                                               ("recent_apps", "overview", dev.press_overview))):
        cx, cy = int(ctx.width * xs[i]), (y1 + y2) // 2
        button_node = Node(cls="android.widget.ImageView", bounds=(edges[i], y1, edges[i + 1], y2), package=SYSTEMUI,
                           rid=f"{SYSTEMUI}:id/{name}", desc=ctx.t(f"common.{'overview' if i == 2 else name}"),
                           on_tap=lambda x, y, a=action: a(), mirror=False)
        button_node.add(Node(cls="android.widget.ImageView", bounds=(cx - g // 2, cy - g // 2, cx + g // 2,
                             cy + g // 2), package=SYSTEMUI, icon=f"glyph:{glyph}", icon_color=color))
        bar.add(button_node)
    bar.mirror = False  # Android keeps BACK on the left in right-to-left locales
    return bar


def overview(dev: Phone, ctx: Ctx) -> Node:
    """Recent apps as cards side by side, the most recent in the middle; tap to switch, swipe up to dismiss."""

    st = dev.state
    root = Node(cls="android.widget.FrameLayout", bounds=(0, 0, ctx.width, ctx.height), package=SYSTEMUI,
                bg=(60, 64, 67) if not ctx.theme.dark else (20, 20, 20))
    if not st.recents:
        root.add(text(ctx, (0, ctx.height // 2 - ctx.dp(24), ctx.width, ctx.height // 2 + ctx.dp(24)),
                      ctx.t("launcher.overview_empty"), 16, color=(255, 255, 255), align="center", pkg=SYSTEMUI))
        return root
    card_w = int(ctx.width * (0.3 if ctx.tablet else 0.62))
    card_h = int((ctx.bottom - ctx.top) * 0.7)
    gap = ctx.dp(16)
    y1 = ctx.top + ctx.dp(72)
    cx0 = ctx.width // 2
    for i, key in enumerate(st.recents[:3]):
        x1 = cx0 - card_w // 2 + i * (card_w + gap)
        if x1 >= ctx.width:
            break
        label = ctx.t(f"app.{key}")

        def tap(x, y, k=key):
            dev.bring_to_front(k)

        def swipe(xa, ya, xb, yb, k=key):
            if ya - yb > ctx.dp(48):  # swiped up: dismiss the task
                dev.remove_task(k)
                return True
            return False

        card = Node(cls="android.widget.FrameLayout", bounds=(x1, y1, x1 + card_w, y1 + card_h), package=SYSTEMUI,
                    rid=f"{SYSTEMUI}:id/snapshot", desc=label, bg=ctx.theme.background, radius=ctx.dp(8),
                    on_tap=tap, on_swipe=swipe)
        card.add(Node(cls="android.widget.ImageView", bounds=(x1 + card_w // 2 - ctx.dp(20), y1 - ctx.dp(52),
                      x1 + card_w // 2 + ctx.dp(20), y1 - ctx.dp(12)), package=SYSTEMUI, icon=f"app:{key}",
                      desc=label))
        card.add(text(ctx, (x1 + ctx.dp(12), y1 + ctx.dp(12), x1 + card_w - ctx.dp(12), y1 + ctx.dp(40)), label, 16,
                      pkg=app_info(key, dev.state.dialer).package))
        root.add(card)

    def clear_all(x, y):  # every task goes, and with them the overview: the home screen is left
        for key in list(st.recents):  # the last one closes the overview
            dev.remove_task(key)
        st.tasks.clear()

    root.add(button(ctx, SYSTEMUI, (ctx.width // 2 - ctx.dp(64), y1 + card_h + ctx.dp(24), ctx.width // 2 + ctx.dp(64),
                                    y1 + card_h + ctx.dp(64)), ctx.t("launcher.clear_all"), clear_all,
                    rid=f"{SYSTEMUI}:id/clear_all"))
    return root


def brightness_dialog(dev: Phone, ctx: Ctx) -> Node:
    """The system brightness slider that Display > Brightness level opens."""
    st = dev.state
    y1 = ctx.top + ctx.dp(8)
    panel = Node(cls="android.widget.FrameLayout", bounds=(ctx.dp(8), y1, ctx.width - ctx.dp(8), y1 + ctx.dp(72)),
                 package=SYSTEMUI, rid=f"{SYSTEMUI}:id/brightness_mirror", bg=ctx.theme.surface, radius=ctx.dp(8))

    def set_level(fraction: float) -> None:
        services.set_brightness(dev, gamma_to_brightness(fraction * GAMMA_SPACE_MAX))

    panel.add(Node(cls="android.widget.ImageView", bounds=(ctx.dp(20), y1 + ctx.dp(24), ctx.dp(44), y1 + ctx.dp(48)),
                   package=SYSTEMUI, icon="glyph:brightness", icon_color=ctx.theme.icon))
    panel.add(seek_bar(ctx, SYSTEMUI, (ctx.dp(52), y1 + ctx.dp(16), ctx.width - ctx.dp(20), y1 + ctx.dp(56)),
                       brightness_to_gamma(st.brightness) / GAMMA_SPACE_MAX, set_level, rid=f"{SYSTEMUI}:id/slider"))
    return panel


KEY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
SYMBOL_ROWS = ("1234567890", "@#$_&-+()/", "*\"':;!?")  # Gboard's ?123 layer


def keyboard_top(ctx: Ctx) -> int:
    """The first pixel row of the keyboard while it shows: an app that resizes for it (a chat's compose bar) lays
    its bottom out above this row."""
    return ctx.bottom - int((ctx.bottom - ctx.top) * 0.36)


def keyboard(dev: Phone, ctx: Ctx) -> Node:
    """A Gboard-like keyboard over the bottom of the screen while a text field has focus: three rows of letters (or,
    after ?123, of digits and symbols), the delete key at the end of the third, the layer key, the space bar and,
    right of it on both layers, the period key (an email address or a web address needs it)."""
    y0 = keyboard_top(ctx)
    h = ctx.bottom - y0
    kb = Node(cls="android.widget.FrameLayout", bounds=(0, y0, ctx.width, ctx.bottom),
              package="com.google.android.inputmethod.latin", bg=(232, 234, 237) if not ctx.theme.dark else (41, 42, 45),
              mirror=False)
    row_h, kw = h // 4, ctx.width // 10
    symbols = dev.state.keyboard_symbols

    def key(x1: int, r: int, x2: int, tap, label: str = "", **kw_) -> None:
        kb.add(Node(cls=kw_.pop("cls", "android.view.View"), bounds=(x1 + 2, y0 + r * row_h + 4, x2 - 2,
                    y0 + (r + 1) * row_h - 4), package=kb.package, text=label, size=ctx.sp(20), align="center",
                    fg=ctx.theme.on_surface, bg=ctx.theme.surface, radius=ctx.dp(4), on_tap=tap, mirror=False, **kw_))

    for r, row in enumerate(SYMBOL_ROWS if symbols else KEY_ROWS):
        x = (ctx.width - kw * len(row)) // 2
        for ch in row:
            key(x, r, x + kw, lambda x_, y_, c=ch: dev.type_into_focus(c), ch)
            x += kw
    # Gboard's delete key at the end of the third row, where the keys leave room
    key(ctx.width - kw - kw // 2, 2, ctx.width, lambda x_, y_: dev.delete_in_focus(), cls="android.widget.ImageView",
        desc=ctx.t("common.delete"), rid=f"{kb.package}:id/key_pos_del", icon="glyph:delete_digit",
        icon_color=ctx.theme.icon)

    def switch(x_: int, y_: int) -> None:
        dev.state.keyboard_symbols = not symbols
    key(0, 3, ctx.width // 4, switch, "ABC" if symbols else "?123", rid=f"{kb.package}:id/key_pos_symbol")
    key(ctx.width // 4, 3, ctx.width * 3 // 4, lambda x_, y_: dev.type_into_focus(" "), " ")
    key(ctx.width * 3 // 4, 3, ctx.width * 7 // 8, lambda x_, y_: dev.type_into_focus("."), ".")
    return kb

