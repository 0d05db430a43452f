"""Scripted users of the simulated phone: they find widgets in the frame's tree and touch them.

They complete the six representative, the 14 open-app and the Clock B-MoCA tasks (each from its task's starting
state), so the tests and benchmarks can drive the phone through realistic trajectories. They look inside the
simulator (the widget tree and the locale's strings); agents only ever see what a real device shows (screens,
uiautomator XML).
"""

from __future__ import annotations

from collections.abc import Callable

from vlui.sim.phone import SimDevice
from vlui.sim.ui import Node


class Driver:
    def __init__(self, dev: SimDevice) -> None:
        self.dev = dev
        self.steps = 0

    # ------------------------------------------------------------------------------------------------ looking
    def find(self, pred: Callable[[Node], bool]) -> Node | None:
        for node in self.dev.frame().walk():
            x1, y1, x2, y2 = node.bounds
            if x2 > x1 and y2 > y1 and pred(node):
                return node
        return None

    def need(self, pred: Callable[[Node], bool], what: str) -> Node:
        node = self.find(pred)
        if node is None:
            raise AssertionError(f"{what} not on screen (snapshot {self.dev.snapshot.id})")
        return node

    def label(self, key: str) -> str:
        return self.dev.locale.t(key)

    # ------------------------------------------------------------------------------------------------ acting
    def tap(self, node: Node) -> None:
        x1, y1, x2, y2 = node.bounds
        self.dev.tap((x1 + x2) / 2, (y1 + y2) / 2)
        self.steps += 1

    def tap_rid(self, rid: str) -> None:
        self.tap(self.need(lambda n: n.rid == rid, rid))

    def swipe(self, fx1: float, fy1: float, fx2: float, fy2: float) -> None:
        w, h = self.dev.size
        self.dev.swipe(fx1 * w, fy1 * h, fx2 * w, fy2 * h)
        self.steps += 1

    def app_icon(self, key: str) -> Node:
        """The app's launcher icon: on the home screen, or else in the app drawer (which this opens)."""
        label = self.label(f"app.{key}")
        icon = self.find(lambda n: n.desc == label and n.on_tap is not None)
        if icon is None:
            self.swipe(0.5, 0.7, 0.5, 0.2)
            icon = self.need(lambda n: n.desc == label and n.on_tap is not None, f"{key} icon in the drawer")
        return icon

    def open_app(self, key: str) -> None:
        """Tap the app's icon on the home screen, or in the app drawer."""
        self.tap(self.app_icon(key))

    def scroll_to(self, pred: Callable[[Node], bool], what: str, tries: int = 4) -> Node:
        for _ in range(tries):
            node = self.find(pred)
            if node is not None and node.bounds[3] - node.bounds[1] > 4:
                return node
            self.swipe(0.5, 0.8, 0.5, 0.3)
        return self.need(pred, what)

    def tap_title(self, key: str) -> None:
        """Tap the settings row titled with string ``key``, scrolling to it if needed."""
        title = self.label(key)
        row = self.scroll_to(lambda n: n.text == title and n.rid == "android:id/title", title)
        self.tap(row)


# ---------------------------------------------------------------------------------------------------- tasks
def airplane_on(d: Driver) -> None:
    d.open_app("settings")
    d.tap_title("settings.network")
    d.tap_title("settings.airplane_mode")


def alarm_9am_on(d: Driver) -> None:
    d.open_app("clock")
    nine = d.dev.locale.time(9, 0)
    card = d.need(lambda n: n.rid.endswith(":id/digital_clock") and n.text == nine, "9:00 alarm")
    switch = d.need(lambda n: n.rid.endswith(":id/onoff") and n.bounds[1] < card.bounds[3] and n.bounds[3] > card.bounds[1],
                    "the 9:00 alarm's switch")
    d.tap(switch)


def create_alarm(d: Driver, hour: int, minute: int) -> None:
    d.open_app("clock")
    d.tap_rid("com.google.android.deskclock:id/fab")
    hour12 = d.dev.locale.meta["hour12"]
    loc = d.dev.locale
    if hour12:
        want_pm = hour >= 12
        marker = d.need(lambda n: n.rid == ("android:id/pm_label" if want_pm else "android:id/am_label"), "am/pm")
        if not marker.checked:
            d.tap(marker)
        h = hour % 12 or 12
        d.tap(d.need(lambda n: n.text == loc.number(str(h)) and n.on_tap and n.rid == "", f"hour {h}"))
    else:
        d.tap(d.need(lambda n: n.text == loc.number(f"{hour:02d}") and n.on_tap and n.rid == "", f"hour {hour}"))
    d.tap(d.need(lambda n: n.text == loc.number(f"{minute:02d}") and n.on_tap and n.rid == "", f"minute {minute}"))
    d.tap_rid("android:id/button1")


def alarm_1030(d: Driver) -> None:
    create_alarm(d, 10, 30)


def alarm_9am_delete(d: Driver) -> None:
    d.open_app("clock")
    nine = d.dev.locale.time(9, 0)
    card = d.need(lambda n: n.rid.endswith(":id/digital_clock") and n.text == nine, "9:00 alarm")
    d.tap(d.need(lambda n: n.rid.endswith(":id/delete") and n.bounds[1] >= card.bounds[1], "the 9:00 alarm's Delete"))


def clock_tab(d: Driver, tab: str) -> None:
    """Open Clock and select ``tab``; when Clock opens on it, through another tab (a reselect logs nothing)."""
    d.open_app("clock")
    if d.dev.state.clock_tab == tab:
        d.tap(d.need(lambda n: n.desc == d.label("clock.clock") and n.on_tap is not None, "clock tab"))
    d.tap(d.need(lambda n: n.desc == d.label(f"clock.{tab}") and n.on_tap is not None, f"{tab} tab"))


def stopwatch(d: Driver, action: str) -> None:
    """Press the stopwatch's start, pause or reset. From the tasks' starting states one tap in Clock does it; from
    any other state the flow gets there (the stopwatch tab, then start or pause first)."""
    d.open_app("clock")
    st = d.dev.state
    if st.clock_tab != "stopwatch":
        d.tap(d.need(lambda n: n.desc == d.label("clock.stopwatch") and n.on_tap is not None, "stopwatch tab"))
    fab = "com.google.android.deskclock:id/fab"
    if action == "reset":
        if st.stopwatch_running:
            d.tap_rid(fab)
        elif not st.stopwatch_elapsed_ms:
            d.tap_rid(fab)
            d.tap_rid(fab)
        d.tap_rid("com.google.android.deskclock:id/left_button")
        return
    if st.stopwatch_running == (action == "start"):
        d.tap_rid(fab)
    d.tap_rid(fab)


def brightness_down(d: Driver) -> None:
    d.open_app("settings")
    d.tap_title("settings.display")
    d.tap_title("settings.brightness")
    bar = d.need(lambda n: n.rid == "com.android.systemui:id/slider", "brightness slider")
    x1, y1, x2, y2 = bar.bounds
    rtl = d.dev.locale.rtl
    d.dev.tap(x1 + (x2 - x1) * (0.7 if rtl else 0.3), (y1 + y2) / 2)
    d.steps += 1


def call_911(d: Driver) -> None:
    d.open_app("phone")
    d.tap_rid("com.google.android.dialer:id/fab")
    for key in ("nine", "one", "one"):
        d.tap_rid(f"com.google.android.dialer:id/{key}")
    d.tap_rid("com.google.android.dialer:id/dialpad_floating_action_button")


def add_language(d: Driver) -> None:
    d.open_app("settings")
    d.tap_title("settings.system")
    d.tap_title("settings.languages_input")
    d.tap_title("settings.languages")
    d.tap_title("settings.add_language")


def settings_row(*keys: str) -> Callable[[Driver], None]:
    """Open Settings and tap the rows titled with string ``keys`` in turn."""
    def flow(d: Driver) -> None:
        d.open_app("settings")
        for key in keys:
            d.tap_title(key)
    return flow


def volume_up(stream: str) -> Callable[[Driver], None]:
    """Tap the Sound page's ``stream`` slider near its high end."""
    def flow(d: Driver) -> None:
        d.open_app("settings")
        d.tap_title("settings.sound")
        label = d.label(f"settings.{stream}_volume")
        title = d.scroll_to(lambda n: n.rid == "android:id/title" and n.text == label, label)
        bar = d.need(lambda n: n.rid == "android:id/seekbar" and n.bounds[1] >= title.bounds[3], f"{stream} slider")
        x1, y1, x2, y2 = bar.bounds
        d.dev.tap(x1 + (x2 - x1) * (0.1 if d.dev.locale.rtl else 0.9), (y1 + y2) / 2)
        d.steps += 1
    return flow


def app_info_list(d: Driver) -> None:
    from vlui.sim.apps.launcher import LAUNCHABLE

    d.open_app("settings")
    d.tap_title("settings.apps")
    label = d.dev.locale.t("settings.see_all_apps", count=len(LAUNCHABLE) + 1)
    d.tap(d.scroll_to(lambda n: n.text == label and n.rid == "android:id/title", label))


def dial_call_button(d: Driver) -> None:
    d.open_app("phone")
    d.tap_rid("com.google.android.dialer:id/fab")
    d.tap_rid("com.google.android.dialer:id/one")  # the call button places nothing with an empty number
    d.tap_rid("com.google.android.dialer:id/dialpad_floating_action_button")


def end_call(d: Driver) -> None:
    d.tap_rid("com.google.android.dialer:id/incall_end_call")  # the task starts on the in-call screen


SETTINGS_PHONE = {
    "airplane_off": airplane_on, "wifi_on": settings_row("settings.network", "settings.wifi"),
    "wifi_off": settings_row("settings.network", "settings.wifi"),
    **{f"volume_{stream}_up": volume_up(stream) for stream in ("media", "call", "ring", "alarm")},
    "dark_theme_toggle": settings_row("settings.display", "settings.dark_theme"),
    "vibrate_calls_toggle": settings_row("settings.sound", "settings.vibrate_for_calls"),
    "app_info_list": app_info_list,
    "bluetooth_settings": settings_row("settings.connected", "settings.connection_preferences", "settings.bluetooth"),
    "dial_call_button": dial_call_button, "end_call": end_call,
}
REPRESENTATIVE = {"airplane_on": airplane_on, "alarm_9am_on": alarm_9am_on, "alarm_1030": alarm_1030,
                  "brightness_down": brightness_down, "call_911": call_911, "add_language": add_language}
OPEN_APPS = ("calendar", "camera", "chrome", "clock", "contacts", "files", "gmail", "maps", "messages", "phone",
             "photos", "play_music", "settings", "youtube")
CLOCK = {
    "alarm_9am_delete": alarm_9am_delete,
    **{f"clock_{tab}_tab": (lambda d, tab=tab: clock_tab(d, tab)) for tab in ("alarm", "stopwatch", "timer")},
    **{f"stopwatch_{action}": (lambda d, action=action: stopwatch(d, action)) for action in ("start", "pause", "reset")},
    **{f"alarm_{h:02d}30": (lambda d, h=h: create_alarm(d, h, 30)) for h in (6, 13, 17, 20, 23)}}


def in_app(app: str, *targets: str) -> Callable[[Driver], None]:
    """Open ``app`` and tap ``targets`` in turn: ``@key`` the element labelled with string key, else a resource id
    suffix."""
    def flow(d: Driver) -> None:
        d.open_app(app)
        for t in targets:
            if t.startswith("@"):
                label = d.label(t[1:])
                d.tap(d.need(lambda n: n.desc == label and n.on_tap is not None, label))
            else:
                d.tap(d.need(lambda n: n.rid.endswith(t), t))
    return flow


def search_google(d: Driver) -> None:
    d.tap_rid("com.google.android.apps.nexuslauncher:id/search_container_hotseat")  # opens Google, field focused


APP_SCREENS = {
    **{f"files_{root}": in_app("files", f"@apps.files_{root}") for root in ("audio", "images", "videos", "downloads")},
    "contacts_insert": in_app("contacts", ":id/fab"),
    "contacts_edit": in_app("contacts", ":id/cliv_name_textview", ":id/menu_edit"),
    **{f"search_{app}": in_app(app, ":id/search_box") for app in ("chrome", "maps", "youtube", "messages")},
    "search_google": search_google,
    "messages_start_chat": in_app("messages", ":id/fab"),
    "chrome_history": in_app("chrome", ":id/menu_button", "@apps.chrome_history"),
    "photos_trash": in_app("photos", "@apps.photos_library", "@apps.photos_trash"),
    "youtube_pairing": in_app("youtube", ":id/media_route_button", "@apps.youtube_link_tv"),
}
FLOWS: dict[str, Callable[[Driver], None]] = {
    **REPRESENTATIVE, **{f"open_{app}": (lambda d, app=app: d.open_app(app)) for app in OPEN_APPS}, **CLOCK,
    **SETTINGS_PHONE, **APP_SCREENS}


def record_screens(snapshot: str, flow: Callable[[Driver], None]) -> list:
    """The full-resolution screens before and after every step of ``flow`` on ``snapshot``."""
    dev = SimDevice(snapshot)
    shots = [dev.screenshot()]
    original_tap, original_swipe = dev.tap, dev.swipe

    def tap(*a, **k):
        original_tap(*a, **k)
        shots.append(dev.screenshot())

    def swipe(*a, **k):
        original_swipe(*a, **k)
        shots.append(dev.screenshot())

    dev.tap, dev.swipe = tap, swipe
    flow(Driver(dev))
    return shots
