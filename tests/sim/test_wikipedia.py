"""Wikipedia (org.wikipedia 2.7.50484): the bottom navigation and its ids, the Explore feed of the card types enabled,
More > Settings, Customize the feed (the switches in FeedContentType's order, saved when the screen opens and when it
pauses), Show link previews, the text size from 50% to 180%, and the preferences file as Android writes it. On a
phone, the tablet, a small screen with a large font, right to left, and in every locale."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tests.sim.driver import nodes, one, tap
from tests.sim.test_app_state import snapshot_file
from vlui.android.apps import app_uid
from vlui.android.i18n import locales
from vlui.android.shared_prefs import hashmap_order, java_string_hash, prefs_xml, table_size
from vlui.errors import VluiError
from vlui.sim.apps.wikipedia import CONFIGURABLE, PREFS_FILE, wiki_state
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import release_pins

PKG = "org.wikipedia"
TABS = ["nav_tab_explore", "nav_tab_reading_lists", "nav_tab_search", "nav_tab_edits"]
UID = app_uid("wikipedia")  # after the system apps', among the third-party ones in key order
SMALL = {"width": 480, "height": 800, "dpi": 320, "kind": "phone", "model": "small"}  # 240 x 400 dp


def phone(snapshot: str = "000", locale: str = "", **changes) -> SimDevice:
    dev = SimDevice(snapshot, noise=False)
    if locale or changes:
        dev.reconfigure(**({"locale": locale} if locale else {}), **changes)
    dev.install_apps([release_pins()["wikipedia"]])
    dev.launch("wikipedia")
    return dev


def rid(name: str):
    return lambda n: n.rid == f"{PKG}:id/{name}"


def prefs(dev: SimDevice) -> list[tuple[str, str]]:
    """The preferences file's entries, (name, value or text), in the file's order."""
    root = ET.fromstring(dev.shared_prefs("wikipedia", PREFS_FILE).encode())
    return [(e.get("name"), e.get("value") if e.tag != "string" else e.text) for e in root]


def open_settings(dev: SimDevice) -> None:
    tap(dev, one(dev, rid("nav_more_container"), "More"))
    tap(dev, one(dev, rid("main_drawer_settings_container"), "Settings in the More sheet"))


def settings_row(dev: SimDevice, key: str):
    label = dev.locale.t(key)
    return one(dev, lambda n: n.on_tap is not None and any(c.text == label for c in n.children), label)


def open_customize(dev: SimDevice) -> None:
    open_settings(dev)
    tap(dev, settings_row(dev, "wikipedia.explore_feed"))


def switch(dev: SimDevice, kind: str):
    """Customize the feed's switch of card type ``kind``, scrolled into view."""
    title = dev.locale.t(f"wikipedia.card_{kind}")
    for _ in range(12):  # the rows in order, so downwards, a third of the list at a time
        rows = nodes(dev, lambda n: n.desc.startswith(title + ", "))
        found = [n for n in rows[0].walk() if n.rid == f"{PKG}:id/feed_content_type_checkbox"] if rows else []
        if found and (found[0].bounds[3] - found[0].bounds[1]) * 3 >= (found[0].bounds[2] - found[0].bounds[0]) * 2:
            return found[0]
        x1, y1, x2, y2 = one(dev, rid("content_types_recycler"), "the list").bounds
        dev.swipe((x1 + x2) / 2, y2 - (y2 - y1) // 6, (x1 + x2) / 2, y2 - (y2 - y1) // 2)
    raise AssertionError(f"no row for {kind}")


def test_the_bottom_navigation_has_nav_tab_items_in_navtab_order_and_selects_the_one_shown() -> None:
    dev = phone()
    items = nodes(dev, lambda n: n.rid.startswith(f"{PKG}:id/nav_tab_"))
    assert [n.rid.split("/")[1] for n in items] == TABS
    assert [n.desc for n in items] == ["Explore", "Saved", "Search", "Edits"]
    assert [n.selected for n in items] == [True, False, False, False]
    assert one(dev, rid("nav_more_container"), "More").desc == "More"
    tap(dev, items[1])
    assert one(dev, rid("nav_tab_reading_lists"), "Saved").selected and one(dev, rid("item_title"), "list").text == \
        "Saved"
    tap(dev, one(dev, rid("nav_tab_search"), "Search"))
    assert one(dev, rid("nav_tab_search"), "Search").selected and one(dev, rid("search_container"), "search")
    dev.key("BACK")  # MainActivity goes back to Explore before it goes
    assert one(dev, rid("nav_tab_explore"), "Explore").selected
    dev.key("BACK")
    assert dev.state.top is None


def test_the_feed_shows_the_card_types_enabled_in_feedcontenttypes_order() -> None:
    dev = phone()
    titles = [n.text for n in nodes(dev, rid("view_card_header_title"))]
    assert titles[:2] == ["Featured article", "Top read"]
    wiki_state(dev).feed_cards[0] = False
    dev.state_changed()
    assert [n.text for n in nodes(dev, rid("view_card_header_title"))][:1] == ["Top read"]
    wiki_state(dev).feed_cards[:] = [False] * 10
    dev.state_changed()
    assert not nodes(dev, rid("view_card_header_title"))
    tap(dev, one(dev, rid("customize_button"), "Customize"))  # the empty feed's way to the switches
    assert one(dev, rid("content_types_recycler"), "Customize the feed")


def test_customize_the_feed_lists_the_configurable_types_and_saves_them_when_it_opens_and_when_it_pauses() -> None:
    dev = phone()
    assert all(name != "feedCardsEnabled" for name, _ in prefs(dev))  # the first launch writes none
    open_customize(dev)
    assert dev.log_lines()[-1].endswith(f"START u0 {{cmp={PKG}/.feed.configure.ConfigureActivity (has extras)}} from "
                                        f"uid {UID}")
    titles = [n.text for n in nodes(dev, rid("feed_content_type_title"))]
    assert titles == ["Featured article", "Top read", "Picture of the day", "Because you read", "In the news",
                      "On this day", "Randomizer", "Today on Wikipedia"][:len(titles)]
    assert prefs(dev)[-1] == ("feedCardsEnabled", "[" + ",".join(["true"] * 10) + "]")  # the availability answer
    for kind in ("featured_article", "random"):
        tap(dev, switch(dev, kind))
    assert not switch(dev, "featured_article").checked
    assert prefs(dev)[-1][1] == "[" + ",".join(["true"] * 10) + "]"  # in memory only, until it pauses
    dev.key("BACK")
    want = "[false,true,true,true,true,true,false,true,true,true]"
    assert prefs(dev)[-1] == ("feedCardsEnabled", want)
    assert ("feedCardsOrder", "[0,1,2,3,4,5,6,7,8,9]") in prefs(dev)
    dev.key("BACK")
    assert one(dev, rid("nav_tab_explore"), "Explore").selected
    assert "Featured article" not in [n.text for n in nodes(dev, rid("view_card_header_title"))]
    # HOME pauses the screen: what it holds is saved
    open_customize(dev)
    tap(dev, switch(dev, "top_read"))
    dev.key("HOME")
    assert prefs(dev)[-1] == ("feedCardsEnabled", "[false,false,true,true,true,true,false,true,true,true]")
    dev.launch("wikipedia")
    assert not switch(dev, "top_read").checked


def test_customize_the_feeds_overflow_menu_sets_every_type_and_restores_the_default() -> None:
    dev = phone()
    open_customize(dev)

    def choose(key: str) -> None:
        tap(dev, one(dev, lambda n: n.desc == dev.locale.t("wikipedia.more_options") and n.on_tap, "overflow"))
        tap(dev, one(dev, lambda n: n.text == dev.locale.t(f"wikipedia.{key}") and n.rid == f"{PKG}:id/title", key))

    choose("hide_all")
    assert not switch(dev, "featured_article").checked and prefs(dev)[-1][0] == "feedCardsEnabled"
    dev.key("BACK")
    assert prefs(dev)[-1] == ("feedCardsEnabled", "[" + ",".join(["false"] * 10) + "]")  # the two not listed too
    tap(dev, settings_row(dev, "wikipedia.explore_feed"))
    choose("restore_default")
    assert all(name not in ("feedCardsEnabled", "feedCardsOrder") for name, _ in prefs(dev))  # removed
    dev.key("BACK")
    assert prefs(dev)[-1] == ("feedCardsEnabled", "[" + ",".join(["true"] * 10) + "]")


def test_a_feed_cards_menu_hides_nothing_and_leads_to_customize_the_feed() -> None:
    for locale in ("", "ar-EG"):
        dev = phone(locale=locale)
        button = one(dev, rid("view_list_card_header_menu"), "the card's menu")
        tap(dev, button)
        items = [n for n in nodes(dev, rid("title")) if n.text]
        assert [n.text for n in items] == [dev.locale.t("wikipedia.hide_card"), dev.locale.t("wikipedia.customize_title")]
        assert abs(items[0].bounds[2 if not locale else 0] - button.bounds[2 if not locale else 0]) < 40  # beside it
        tap(dev, items[1])
        assert dev.log_lines()[-1].endswith(f"cmp={PKG}/.feed.configure.ConfigureActivity (has extras)}} from uid {UID}")
        dev.key("BACK")
        assert one(dev, rid("nav_tab_explore"), "Explore").selected and prefs(dev)[-1][0] == "feedCardsEnabled"


def test_show_link_previews_is_written_at_once_and_its_place_in_the_file_is_the_hashmaps() -> None:
    dev = phone()
    open_settings(dev)
    assert dev.log_lines()[-1].endswith(f"START u0 {{cmp={PKG}/.settings.SettingsActivity}} from uid {UID}")
    row = settings_row(dev, "wikipedia.link_previews")
    assert next(n for n in row.walk() if n.kind == "switch").rid == f"{PKG}:id/switchWidget"
    tap(dev, row)
    assert ("showLinkPreviews", "false") in prefs(dev)
    tap(dev, settings_row(dev, "wikipedia.explore_feed"))
    dev.key("BACK")
    assert prefs(dev)[-1][0] == "feedCardsEnabled"  # the same bucket, written after
    # the other way round: the feed first, then the previews, which then come last (as on the real app)
    dev = phone()
    open_customize(dev)
    dev.key("BACK")
    tap(dev, settings_row(dev, "wikipedia.link_previews"))
    assert prefs(dev)[-1] == ("showLinkPreviews", "false")


@pytest.mark.parametrize("percent,multiplier", [(50, -5), (180, 8)])
def test_the_text_size_goes_from_50_to_180_percent_in_steps_of_ten(percent: int, multiplier: int) -> None:
    dev = phone()
    open_settings(dev)
    tap(dev, settings_row(dev, "wikipedia.app_theme"))
    assert one(dev, rid("text_size_percent"), "percent").text == "100% (Default)"
    bar = one(dev, rid("text_size_seek_bar"), "seek bar")
    x1, y1, x2, y2 = bar.bounds
    pad = (y2 - y1) // 2
    dev.tap(x1 + pad if multiplier < 0 else x2 - pad - 1, (y1 + y2) / 2)
    assert one(dev, rid("text_size_percent"), "percent").text == f"{percent}%"
    assert ("textSizeMultiplier", str(multiplier)) in prefs(dev)
    button = "buttonIncreaseTextSize" if multiplier < 0 else "buttonDecreaseTextSize"
    tap(dev, one(dev, rid(button), button))
    assert one(dev, rid("text_size_percent"), "percent").text == f"{percent + (10 if multiplier < 0 else -10)}%"
    tap(dev, one(dev, rid("buttonIncreaseTextSize" if multiplier > 0 else "buttonDecreaseTextSize"), "button"))
    tap(dev, one(dev, rid("buttonIncreaseTextSize" if multiplier > 0 else "buttonDecreaseTextSize"), "button"))
    assert wiki_state(dev).text_size == multiplier  # no further than the ends
    dev.key("BACK")
    dev.key("BACK")
    assert one(dev, rid("nav_tab_explore"), "Explore").selected


def test_the_preferences_file_is_written_in_a_java_hashmaps_order() -> None:
    assert java_string_hash("hello") == 99162322 and java_string_hash("") == 0
    assert [table_size(n) for n in (0, 12, 13, 24, 25, 48, 49)] == [16, 16, 32, 32, 64, 64, 128]
    keys = ["feedCardsEnabled", "textSizeMultiplier", "feedCardsOrder"]
    assert hashmap_order(keys) == ["textSizeMultiplier", "feedCardsOrder", "feedCardsEnabled"]
    assert prefs_xml({"a": True, "b": 3, "c": "x<y"}) == (
        "<?xml version='1.0' encoding='utf-8' standalone='yes' ?>\n<map>\n    <boolean name=\"a\" value=\"true\" />\n"
        "    <int name=\"b\" value=\"3\" />\n    <string name=\"c\">x&lt;y</string>\n</map>\n")


def test_a_snapshot_sets_the_apps_preferences_and_they_count_as_written(tmp_path) -> None:
    path = snapshot_file(tmp_path, "{installed: [wikipedia], wikipedia: {text_size: 3, show_link_previews: false}}")
    dev = SimDevice(str(path))
    assert ("textSizeMultiplier", "3") in prefs(dev) and ("showLinkPreviews", "false") in prefs(dev)
    with pytest.raises(VluiError, match="wikipedia.text_size"):
        SimDevice(str(snapshot_file(tmp_path, "{installed: [wikipedia], wikipedia: {text_size: 9}}")))
    assert SimDevice("000").shared_prefs("wikipedia", PREFS_FILE) is None  # not installed: no file
    with pytest.raises(VluiError, match="SimDevice cannot read the clock app's shared preferences"):
        SimDevice("000").shared_prefs("clock", "x.xml")


@pytest.mark.parametrize("where", ["tablet", "small", "rtl"])
def test_every_row_of_customize_the_feed_is_reached_on_the_tablet_a_small_screen_and_right_to_left(where) -> None:
    dev = {"tablet": lambda: phone("109"), "small": lambda: phone(screen=SMALL, font_scale=1.3),
           "rtl": lambda: phone(locale="he-IL")}[where]()
    explore, more = one(dev, rid("nav_tab_explore"), "Explore"), one(dev, rid("nav_more_container"), "More")
    assert (explore.bounds[0] > more.bounds[0]) is (where != "small")  # mirrored right to left (109: ar-EG)
    open_customize(dev)
    for kind in CONFIGURABLE:
        tap(dev, switch(dev, kind))
    dev.key("BACK")
    assert prefs(dev)[-1][1] == "[" + ",".join(["false"] * 8 + ["true"] * 2) + "]"


def test_every_screen_draws_in_every_locale() -> None:
    dev = phone()
    for locale_id in locales():
        dev.reconfigure(locale=locale_id)
        for screen in ({"screen": "main", "tab": "explore"}, {"screen": "settings"}, {"screen": "theme"},
                       {"screen": "customize", "cards": [True] * 10}):
            dev.state.tasks["wikipedia"] = [screen]
            dev.state_changed()
            xml = dev.ui_xml()  # laid out: the texts wrapped and placed
            assert dev.locale.t("wikipedia.explore") in xml or screen["screen"] != "main", locale_id
        assert dev.screenshot().shape[0] == dev.size[1], locale_id  # and drawn: the longest texts, Customize's
