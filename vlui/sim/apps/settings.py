"""Settings (Android 10): the top-level list and the pages the B-MoCA tasks visit.

Each page other than the top level is a ``SubSettings`` activity showing a fragment, as on a real device: opening
one logs the ``START`` line and ``SettingsActivity: Switching to fragment <class>``. Switches and sliders log what
the platform logs when the setting changes (radio on/off for airplane mode, ``setWifiEnabled``, brightness, ...).
"""

from __future__ import annotations

from typing import TypedDict

from vlui.android.i18n import locales
from vlui.android.ids import SETTINGS_TOP
from vlui.android.launcher import drawer_order, launchable, search_matches
from vlui.android.state import VOLUME_MAX, VOLUME_MIN, brightness_percent
from vlui.sim import services
from vlui.sim.protocol import Phone
from vlui.sim.ui import Node
from vlui.sim.widgets import Ctx, app_bar, header, list_row, scroll_list, search_box, slider_row

PKG = "com.android.settings"
SUBSETTINGS = f"{PKG}/.SubSettings"

# top-level rows: (string key, glyph, page); a row's glyph is named after it but for two
_TOP_GLYPHS = {"battery": "battery_setting", "about": "info"}
TOP = tuple((key, _TOP_GLYPHS.get(key, key), key) for key in SETTINGS_TOP)

# page -> the fragment class SubSettings shows
FRAGMENTS = {
    "network": "com.android.settings.network.NetworkDashboardFragment",
    "connected": "com.android.settings.connecteddevice.ConnectedDeviceDashboardFragment",
    "connection_prefs": "com.android.settings.connecteddevice.AdvancedConnectedDeviceDashboardFragment",
    "bluetooth": "com.android.settings.connecteddevice.BluetoothDashboardFragment",
    "apps": "com.android.settings.applications.AppAndNotificationDashboardFragment",
    "app_list": "com.android.settings.applications.manageapplications.ManageApplications",
    "battery": "com.android.settings.fuelgauge.PowerUsageSummary",
    "display": "com.android.settings.DisplaySettings",
    "sound": "com.android.settings.notification.SoundSettings",
    "storage": "com.android.settings.deviceinfo.StorageSettings",
    "privacy": "com.android.settings.privacy.PrivacyDashboardFragment",
    "location": "com.android.settings.location.LocationSettings",
    "security": "com.android.settings.security.SecuritySettings",
    "accounts": "com.android.settings.accounts.AccountDashboardFragment",
    "accessibility": "com.android.settings.accessibility.AccessibilitySettings",
    "wellbeing": "com.android.settings.dashboard.DashboardFragment",
    "google": "com.android.settings.dashboard.DashboardFragment",
    "system": "com.android.settings.system.SystemDashboardFragment",
    "about": "com.android.settings.deviceinfo.aboutphone.MyDeviceInfoFragment",
    "languages_input": "com.android.settings.language.LanguageAndInputSettings",
    "languages": "com.android.settings.localepicker.LocaleListEditor",
}
TITLES = {"connection_prefs": "connection_preferences", "app_list": "all_apps"}  # pages whose title key differs

# Settings' search (SettingsIntelligence's SearchActivity): what it finds, as (title's string key, the page a result
# opens, the string key of the page it lives in: the result's breadcrumb). Matched on the localized titles.
SEARCH_PKG = "com.google.android.settings.intelligence"
SEARCH_INDEX = tuple((f"settings.{key}", page, None) for key, _, page in TOP) + tuple(
    (f"settings.{key}", page, f"settings.{parent}") for key, page, parent in (
        ("wifi", "network", "network"), ("mobile_network", "network", "network"), ("data_usage", "network", "network"),
        ("hotspot", "network", "network"), ("airplane_mode", "network", "network"),
        ("pair_new_device", "connected", "connected"), ("connection_preferences", "connection_prefs", "connected"),
        ("bluetooth", "bluetooth", "connection_preferences"), ("all_apps", "app_list", "apps"),
        ("notifications", "apps", "apps"), ("default_apps", "apps", "apps"), ("brightness", "display", "display"),
        ("dark_theme", "display", "display"), ("adaptive_brightness", "display", "display"),
        ("wallpaper", "display", "display"), ("screen_timeout", "display", "display"),
        ("font_size", "display", "display"), ("display_size", "display", "display"),
        ("auto_rotate", "display", "display"), ("media_volume", "sound", "sound"), ("call_volume", "sound", "sound"),
        ("ring_volume", "sound", "sound"), ("alarm_volume", "sound", "sound"),
        ("vibrate_for_calls", "sound", "sound"), ("do_not_disturb", "sound", "sound"),
        ("phone_ringtone", "sound", "sound"), ("languages_input", "languages_input", "system"),
        ("languages", "languages", "languages_input"), ("virtual_keyboard", "languages_input", "languages_input"),
        ("spell_checker", "languages_input", "languages_input"), ("gestures", "system", "system"),
        ("date_time", "system", "system"), ("backup", "system", "system"), ("reset_options", "system", "system")))


def open_page(dev: Phone, page: str) -> None:
    dev.start_activity("settings", page, SUBSETTINGS)
    _show_fragment(dev, page)


def open_from_intent(dev: Phone, page: str) -> None:
    """A page started by another app's intent (``android.settings.*``, resolved to a ``Settings$...Activity``):
    pushed onto Settings' task, which comes to the front (BACK returns to what Settings showed before, or home)."""
    dev.state.tasks.setdefault("settings", []).append({"screen": page})
    dev.bring_to_front("settings")
    if page != "main":
        _show_fragment(dev, page)


def _show_fragment(dev: Phone, page: str) -> None:
    dev.logi("SettingsActivity", f"Switching to fragment {FRAGMENTS[page]}", app="settings", offset_ms=20)
    if page == "bluetooth":
        for controller in ("BluetoothDeviceNamePreferenceController", "BluetoothDeviceRenamePreferenceController"):
            dev.logi("PrefCtrlListHelper", f"Could not find Context-only controller for pref: "
                     f"com.android.settings.bluetooth.{controller}", level="D", app="settings", offset_ms=30)


def build(dev: Phone, ctx: Ctx, screen: Screen) -> Node:
    page = screen["screen"]
    root = Node(cls="android.widget.LinearLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG,
                bg=ctx.theme.background)
    if page == "main":
        return top_level(dev, ctx, root)
    if page == "search":
        return search_page(dev, ctx, root)
    title_key = TITLES.get(page, page)
    title = ctx.t(f"settings.{title_key}")
    root.add(app_bar(ctx, PKG, title, up=lambda x, y: dev.press_back(), actions=(("search", ctx.t("common.search"),
                                                                                    lambda x, y: None),)))
    rows = PAGES.get(page, lambda d, c: [])(dev, ctx)
    list_top = ctx.top + ctx.dp(56)
    root.add(scroll_list(ctx, PKG, f"settings.{page}", list_top, ctx.bottom, rows,
                         dev.state.scroll.get(f"settings.{page}", 0), rid=f"{PKG}:id/recycler_view"))
    return root


def top_level(dev: Phone, ctx: Ctx, root: Node) -> Node:
    y = ctx.top + ctx.dp(16)
    root.add(search_box(ctx, PKG, y, ctx.t("settings.search_hint"), lambda x, yy: open_search(dev),
                        rid=f"{PKG}:id/search_action_bar"))
    summaries = {
        "battery": dict(percent=dev.state.battery_level), "storage": dict(percent=23, free=49),
        "location": dict(count=3),
        "about": dict(model=dev.profile["model"]),
    }
    rows = []
    for key, glyph_name, page in TOP:
        title = ctx.t(f"settings.{key}")
        summary = ctx.t(f"settings.{key}_summary", **summaries.get(key, {}))
        rows.append((ctx.dp(72), _row(dev, ctx, title, summary, f"glyph:{glyph_name}", page)))
    list_top = y + ctx.dp(64)
    root.add(scroll_list(ctx, PKG, "settings.main", list_top, ctx.bottom, rows, dev.state.scroll.get("settings.main", 0),
                         rid=f"{PKG}:id/main_content_scrollable_container", cls="android.widget.ScrollView"))
    return root


def _row(dev: Phone, ctx: Ctx, title: str, summary: str = "", icon: str = "", page: str | None = None,
         action=None, switch: bool | None = None):
    def tap(x, y):
        if action is not None:
            action()
        elif page is not None:
            open_page(dev, page)

    return lambda y: list_row(ctx, PKG, y, title, summary, icon, tap if (page or action) else None, switch)


def _h(ctx: Ctx, summary: bool = True) -> int:
    return ctx.dp(72 if summary else 56)


def open_search(dev: Phone) -> None:
    """The search bar of the top level: SettingsIntelligence's search screen, its field focused (empty)."""
    dev.state.fields.pop("settings.search", None)
    dev.start_activity("settings", "search", f"{SEARCH_PKG}/.modules.search.SearchActivity", extras=False,
                       intent=f"act=com.android.settings.action.SETTINGS_SEARCH pkg={SEARCH_PKG}")
    dev.focus_field("settings", "search", package=SEARCH_PKG)


def on_editor_action(dev: Phone, field: str) -> None:
    """ENTER in the search field submits the query: the keyboard hides, the results stay."""
    dev.state.focus = None


def search_results(ctx: Ctx, query: str) -> list[tuple[str, str, str]]:
    """(title, breadcrumb, page) of what a query finds, in the index's order, each title once."""

    seen, out = set(), []
    for key, page, parent in SEARCH_INDEX:
        title = ctx.t(key)
        if title not in seen and search_matches(title, query):
            seen.add(title)
            out.append((title, ctx.t(parent) if parent else "", page))
    return out


def search_page(dev: Phone, ctx: Ctx, root: Node) -> Node:
    """The search screen: the field (what was typed, or the hint) and, below, the settings whose title the text
    finds; a result opens its page."""
    st = dev.state
    y = ctx.top + ctx.dp(4)
    bar = Node(cls="android.widget.LinearLayout", bounds=(0, ctx.top, ctx.width, ctx.top + ctx.dp(56)),
               package=SEARCH_PKG, rid=f"{SEARCH_PKG}:id/search_bar", bg=ctx.theme.surface)
    bar.add(Node(cls="android.widget.ImageButton", bounds=(0, ctx.top, ctx.dp(56), ctx.top + ctx.dp(56)),
                 package=SEARCH_PKG, desc=ctx.t("common.navigate_up"), icon="glyph:arrow_back",
                 icon_color=ctx.theme.icon, on_tap=lambda x, yy: dev.press_back()))
    root.add(bar)
    query = st.fields.get("settings.search", "")
    box = search_box(ctx, SEARCH_PKG, y, ctx.t("settings.search_hint"),
                     lambda x, yy: dev.focus_field("settings", "search", package=SEARCH_PKG),
                     rid=f"{SEARCH_PKG}:id/search_src_text", value=query,
                     focused=st.focus == ("settings", "search"), margin_dp=56)
    root.add(box)
    rows = []
    for title, crumb, page in search_results(ctx, query):
        def build_row(yy, title=title, crumb=crumb, page=page):
            return list_row(ctx, SEARCH_PKG, yy, title, crumb, on_tap=lambda x, y_: open_page(dev, page),
                            rid_title=f"{SEARCH_PKG}:id/title", rid_summary=f"{SEARCH_PKG}:id/breadcrumb")
        rows.append((_h(ctx, bool(crumb)), build_row))
    list_top = ctx.top + ctx.dp(56)
    root.add(scroll_list(ctx, SEARCH_PKG, "settings.search", list_top, ctx.bottom, rows,
                         st.scroll.get("settings.search", 0), rid=f"{SEARCH_PKG}:id/list_results"))
    return root


# ---------------------------------------------------------------------------------------------------- pages
def network(dev: Phone, ctx: Ctx):
    st = dev.state

    def toggle_wifi():
        services.set_wifi(dev, not st.wifi)

    def toggle_airplane():
        services.set_airplane_mode(dev, not st.airplane_mode)

    wifi_summary = ctx.t("settings.wifi_summary_on" if st.wifi and not st.airplane_mode else "settings.wifi_summary_off")
    return [
        (_h(ctx), _row(dev, ctx, ctx.t("settings.wifi"), wifi_summary, "glyph:wifi", action=toggle_wifi,
                       switch=st.wifi and not st.airplane_mode)),
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.mobile_network"), "", "glyph:signal", action=lambda: None)),
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.data_usage"), "", "glyph:network", action=lambda: None)),
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.hotspot"), "", "glyph:connected", action=lambda: None)),
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.airplane_mode"), "", "glyph:airplane",
                              action=toggle_airplane, switch=st.airplane_mode)),
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.advanced"), "", "glyph:expand_more", action=lambda: None)),
    ]


def connected(dev: Phone, ctx: Ctx):
    return [
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.pair_new_device"), "", "glyph:add", action=lambda: None)),
        (_h(ctx), _row(dev, ctx, ctx.t("settings.connection_preferences"), ctx.t("settings.bluetooth_summary"),
                       "glyph:bluetooth", page="connection_prefs")),
    ]


def connection_prefs(dev: Phone, ctx: Ctx):
    on = dev.state.bluetooth
    return [(_h(ctx), _row(dev, ctx, ctx.t("settings.bluetooth"), ctx.t("common.switch_on" if on else "common.switch_off"),
                           "glyph:bluetooth", page="bluetooth"))]


def bluetooth(dev: Phone, ctx: Ctx):
    st = dev.state

    def toggle():
        services.set_bluetooth(dev, not st.bluetooth)

    return [
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.bluetooth"), "", "", action=toggle, switch=st.bluetooth)),
        (_h(ctx), _row(dev, ctx, ctx.t("settings.device_name"), dev.profile["model"], "", action=lambda: None)),
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.pair_new_device"), "", "glyph:add", action=lambda: None)),
    ]


def apps_page(dev: Phone, ctx: Ctx):
    rows = [(ctx.dp(48), lambda y: header(ctx, PKG, y, ctx.t("settings.recently_opened")))]
    for key in (dev.state.recents or ["settings"])[:3]:
        rows.append((_h(ctx, False), _row(dev, ctx, ctx.t(f"app.{key}"), "", f"app:{key}", action=lambda: None)))
    count = len(listed_apps(dev.state.installed))
    rows.append((_h(ctx, False), _row(dev, ctx, ctx.t("settings.see_all_apps", count=count), "",
                                      "glyph:expand_more", page="app_list")))
    rows.append((_h(ctx, False), _row(dev, ctx, ctx.t("settings.notifications"), "", "glyph:info", action=lambda: None)))
    rows.append((_h(ctx, False), _row(dev, ctx, ctx.t("settings.default_apps"), "", "glyph:apps", action=lambda: None)))
    return rows


def listed_apps(installed: list[str]) -> tuple[str, ...]:
    """The apps Settings lists: those the launcher starts (the third-party ones installed too) and Google."""
    return (*launchable(installed), "google")


def app_list(dev: Phone, ctx: Ctx):
    keys = drawer_order(listed_apps(dev.state.installed), ctx.locale)
    return [(_h(ctx, False), _row(dev, ctx, ctx.t(f"app.{k}"), "", f"app:{k}", action=lambda: None)) for k in keys]


def display(dev: Phone, ctx: Ctx):
    st = dev.state

    def brightness_dialog():
        st.dialog = "brightness"

    def toggle_dark():
        # the first turn-on shows Android 10's dialog about dark theme and its acknowledgement turns it on; the
        # simulated Settings draws no dialog and does what acknowledging it does, at once (docs/simulator.md)
        if not st.dark_theme and not st.dark_mode_dialog_seen:
            services.acknowledge_dark_theme(dev)
        else:
            services.set_dark_theme(dev, not st.dark_theme)

    return [
        (_h(ctx), _row(dev, ctx, ctx.t("settings.brightness"),
                       ctx.t("settings.brightness_summary", percent=brightness_percent(st.brightness)),
                       "glyph:brightness", action=brightness_dialog)),
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.dark_theme"), "", "glyph:dark_theme", action=toggle_dark,
                              switch=st.dark_theme)),
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.adaptive_brightness"), "", "", action=lambda: None,
                              switch=st.adaptive_brightness)),
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.wallpaper"), "", "", action=lambda: None)),
        (_h(ctx), _row(dev, ctx, ctx.t("settings.screen_timeout"), ctx.t("settings.screen_timeout_summary"), "",
                       action=lambda: None)),
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.font_size"), "", "", action=lambda: None)),
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.display_size"), "", "", action=lambda: None)),
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.auto_rotate"), "", "", action=lambda: None, switch=False)),
    ]


def sound(dev: Phone, ctx: Ctx):
    st = dev.state
    rows = []
    for stream, glyph_name in (("media", "volume"), ("call", "call"), ("ring", "sound"), ("alarm", "alarm")):
        lo, hi = VOLUME_MIN[stream], VOLUME_MAX[stream]

        def set_volume(fraction: float, stream=stream, lo=lo, hi=hi) -> None:
            services.set_volume(dev, stream, max(lo, int(round(fraction * hi))))

        def build_slider(y, stream=stream, glyph_name=glyph_name, hi=hi, set_volume=set_volume):
            node, _ = slider_row(ctx, PKG, y, ctx.t(f"settings.{stream}_volume"), st.volume[stream] / hi, set_volume,
                                 icon=f"glyph:{glyph_name}")
            return node

        rows.append((ctx.dp(88), build_slider))

    def toggle_vibrate():
        services.set_vibrate_for_calls(dev, not st.vibrate_for_calls)

    rows.append((_h(ctx, False), _row(dev, ctx, ctx.t("settings.vibrate_for_calls"), "", "glyph:vibrate",
                                      action=toggle_vibrate, switch=st.vibrate_for_calls)))
    rows.append((_h(ctx, False), _row(dev, ctx, ctx.t("settings.do_not_disturb"), "", "", action=lambda: None)))
    rows.append((_h(ctx, False), _row(dev, ctx, ctx.t("settings.phone_ringtone"), "", "", action=lambda: None)))
    return rows


def system(dev: Phone, ctx: Ctx):
    return [
        (_h(ctx), _row(dev, ctx, ctx.t("settings.languages_input"), _language_name(dev, ctx), "glyph:language",
                       page="languages_input")),
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.gestures"), "", "glyph:info", action=lambda: None)),
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.date_time"), "", "glyph:clock", action=lambda: None)),
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.backup"), "", "glyph:download", action=lambda: None)),
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.reset_options"), "", "glyph:history", action=lambda: None)),
    ]


def _language_name(dev: Phone, ctx: Ctx) -> str:
    return locales()[dev.state.languages[0]]["native_name"]


def languages_input(dev: Phone, ctx: Ctx):
    return [
        (_h(ctx), _row(dev, ctx, ctx.t("settings.languages"), _language_name(dev, ctx), "glyph:language",
                       page="languages")),
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.virtual_keyboard"), "", "glyph:keypad", action=lambda: None)),
        (_h(ctx, False), _row(dev, ctx, ctx.t("settings.spell_checker"), "", "", action=lambda: None)),
    ]


def languages(dev: Phone, ctx: Ctx):
    rows = []
    for i, loc in enumerate(dev.state.languages, 1):
        name = f"{ctx.locale.number(i)}  {locales()[loc]['native_name']}"
        rows.append((_h(ctx, False), _row(dev, ctx, name, "", "", action=lambda: None)))

    def add_language():
        dev.start_activity("settings", "add_language", f"{PKG}/.localepicker.LocalePickerWithRegionActivity",
                           extras=False)

    rows.append((_h(ctx, False), _row(dev, ctx, ctx.t("settings.add_language"), "", "glyph:add", action=add_language)))
    return rows


def add_language(dev: Phone, ctx: Ctx):
    rows = [(ctx.dp(48), lambda y: header(ctx, PKG, y, ctx.t("settings.suggested")))]
    rows.append((_h(ctx, False), _row(dev, ctx, locales()[dev.state.languages[0]]["native_name"], "", "",
                                      action=lambda: None)))
    rows.append((ctx.dp(48), lambda y: header(ctx, PKG, y, ctx.t("settings.all_languages"))))
    names = sorted({m["native_name"].split(" (")[0] for m in locales().values()}, key=str.casefold)
    rows += [(_h(ctx, False), _row(dev, ctx, n, "", "", action=lambda: None)) for n in names]
    return rows


def simple(dev: Phone, ctx: Ctx):
    return [(_h(ctx, False), _row(dev, ctx, ctx.t("settings.advanced"), "", "glyph:expand_more", action=lambda: None))]


PAGES = {
    "network": network, "connected": connected, "connection_prefs": connection_prefs, "bluetooth": bluetooth,
    "apps": apps_page, "app_list": app_list, "display": display, "sound": sound, "system": system,
    "languages_input": languages_input, "languages": languages, "add_language": add_language,
    **{page: simple for page in ("battery", "storage", "privacy", "location", "security", "accounts",
                                  "accessibility", "wellbeing", "google", "about")},
}
SCREENS: tuple[str, ...] = ("main", "search", *PAGES)  # the top level, the search, and each page


class Screen(TypedDict):
    """A screen on Settings' task: one of :data:`SCREENS`."""

    screen: str
