"""Chrome: its pages are typed state set from YAML under ``chrome:``, listed on the new tab page and opened inside
Chrome's activity (no START line), with the toolbar and the page's text, in every locale; its menu's Share… starts
the framework's share sheet (ChooserActivity's START line), whose Messages target starts Messages' share flow: the
recipient picker, then the conversation with the page's address as its draft, which sending puts in the SMS sent
box."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sim.driver import nodes, one, tap
from tests.sim.test_app_state import snapshot_file
from vlui.android.i18n import locales
from vlui.sim.apps.chrome import ChromeState, Page, chrome_state, shown_url
from vlui.sim.apps.messages import sms_rows
from vlui.sim.phone import SimDevice

PKG = "com.android.chrome"
STATE = {"chrome": {"pages": [
    {"url": "https://bakery.example.org/", "title": "Corner Bakery",
     "text": ["Fresh bread every morning.", "Call us at 2125550199."]},
    {"url": "https://bakery-annex.example.org/contact", "title": "Corner Bakery Annex",
     "text": ["Open on Sundays."]},
], "history": []}}
CHOOSER = ("START u0 {act=android.intent.action.CHOOSER cmp=android/com.android.internal.app.ChooserActivity "
           "(has extras)} from uid 10052")


def phone(snapshot: str = "000", locale: str = "") -> SimDevice:
    dev = SimDevice(snapshot, noise=False)
    if locale:
        dev.reconfigure(locale=locale)
    dev.set_state(STATE)
    return dev


def rid(name: str, package: str = PKG):
    return lambda n: n.rid == f"{package}:id/{name}"


def open_site(dev: SimDevice, title: str) -> None:
    tap(dev, one(dev, lambda n: n.rid == f"{PKG}:id/tile_view_title" and n.text == title, title))


def share_to_messages(dev: SimDevice) -> None:
    tap(dev, one(dev, rid("menu_button"), "menu button"))
    tap(dev, one(dev, lambda n: n.text == dev.locale.t("apps.chrome_share"), "Share…"))
    tap(dev, one(dev, lambda n: n.rid == "android:id/text1" and n.text == dev.locale.t("app.messages"), "Messages"))


def test_the_state_from_yaml_is_the_new_tab_pages_sites(tmp_path: Path) -> None:
    path = snapshot_file(tmp_path, "{chrome: {pages: [{url: 'https://bakery.example.org/', title: Corner Bakery, "
                                   "text: [Fresh bread.]}], history: ['https://bakery.example.org/']}}")
    dev = SimDevice(path, noise=False)
    assert chrome_state(dev) == ChromeState([Page("https://bakery.example.org/", "Corner Bakery", ["Fresh bread."])],
                                            ["https://bakery.example.org/"])
    assert [p.title for p in ChromeState().pages] == ["Example News", "Example Weather", "Example Wiki"]
    dev = phone()
    mark = dev.log_mark()
    dev.launch("chrome")
    assert [n.text for n in nodes(dev, rid("tile_view_title"))] == ["Corner Bakery", "Corner Bakery Annex"]
    xml = dev.ui_xml()
    assert f'text="Search or type web address" resource-id="{PKG}:id/search_box"' in xml
    assert f'resource-id="{PKG}:id/menu_button"' in xml and 'content-desc="More options"' in xml
    assert 'text="bakery.example.org"' in xml and 'text="bakery-annex.example.org/contact"' in xml
    starts = [line for line in dev.log_lines(mark, tags=["ActivityTaskManager"]) if "START" in line]
    assert len(starts) == 1 and "cmp=com.android.chrome/com.google.android.apps.chrome.Main" in starts[0]


def test_a_site_opens_inside_chrome_and_back_returns_to_the_new_tab_page() -> None:
    dev = phone()
    dev.launch("chrome")
    mark = dev.log_mark()
    open_site(dev, "Corner Bakery")
    assert not [line for line in dev.log_lines(mark, tags=["ActivityTaskManager"]) if "START" in line]
    assert one(dev, rid("url_bar"), "URL bar").text == "bakery.example.org"
    xml = dev.ui_xml()
    assert f'resource-id="{PKG}:id/toolbar"' in xml and 'class="android.webkit.WebView"' in xml
    for words in ("Corner Bakery", "Fresh bread every morning.", "Call us at 2125550199."):
        assert f'text="{words}" resource-id="" class="android.view.View"' in xml
    assert chrome_state(dev).history == ["https://bakery.example.org/"]
    dev.key("BACK")
    assert nodes(dev, rid("tile_view_title")) and not nodes(dev, rid("url_bar"))
    open_site(dev, "Corner Bakery Annex")
    assert one(dev, rid("url_bar"), "URL bar").text == "bakery-annex.example.org/contact"
    assert shown_url("https://wiki.example.org/") == "wiki.example.org"


def test_the_menu_offers_share_on_a_page_and_history_starts_its_activity() -> None:
    dev = phone()
    dev.launch("chrome")
    tap(dev, one(dev, rid("menu_button"), "menu button"))
    menu = [n.text for n in nodes(dev, rid("menu_item_text"))]
    assert menu == ["New tab", "History", "Downloads", "Settings"]  # the new tab page shares nothing
    dev.key("BACK")
    open_site(dev, "Corner Bakery")
    open_site_then = dev.log_mark()
    tap(dev, one(dev, rid("menu_button"), "menu button"))
    assert [n.text for n in nodes(dev, rid("menu_item_text"))] == ["New tab", "History", "Downloads", "Share…",
                                                                  "Settings"]
    assert one(dev, rid("app_menu_list"), "menu").cls == "android.widget.ListView"
    tap(dev, one(dev, lambda n: n.text == "History", "History"))
    assert any("cmp=com.android.chrome/org.chromium.chrome.browser.history.HistoryActivity" in line
               for line in dev.log_lines(open_site_then, tags=["ActivityTaskManager"]))
    assert [n.text for n in nodes(dev, rid("title"))] == ["Corner Bakery"]


def test_share_starts_the_share_sheet_and_messages_sends_the_address() -> None:
    dev = phone()
    dev.launch("chrome")
    open_site(dev, "Corner Bakery")
    tap(dev, one(dev, rid("menu_button"), "menu button"))
    mark = dev.log_mark()
    tap(dev, one(dev, lambda n: n.text == "Share…", "Share…"))
    lines = [line.split(": ", 1)[1] for line in dev.log_lines(mark, tags=["ActivityTaskManager"])]
    assert lines[0] == CHOOSER and lines[1].startswith("Displayed android/com.android.internal.app.ChooserActivity: +")
    xml = dev.ui_xml()
    assert 'package="android"' in xml and PKG not in xml  # the framework's window
    assert one(dev, rid("content_preview_text", "android"), "preview").text == "https://bakery.example.org/"
    assert [n.text for n in nodes(dev, rid("text1", "android"))] == ["Bluetooth", "Gmail", "Messages"]
    dev.key("BACK")  # the sheet closes: the page again
    assert one(dev, rid("url_bar"), "URL bar").text == "bakery.example.org"
    mark = dev.log_mark()
    share_to_messages(dev)
    lines = [line.split(": ", 1)[1] for line in dev.log_lines(mark, tags=["ActivityTaskManager"])]
    assert ("START u0 {act=android.intent.action.SEND typ=text/plain flg=0xb080001 cmp=com.google.android.apps."
            "messaging/.ui.conversationlist.ShareIntentActivity clip={text/plain {...}} (has extras)} from uid 10052"
            ) in lines  # started by the chooser as Chrome
    messaging = "com.google.android.apps.messaging"
    assert dev.state.top == "messages" and nodes(dev, rid("recipient_text_view", messaging))
    tap(dev, one(dev, lambda n: n.rid == f"{messaging}:id/contact_name" and n.text == "Wei Zhang", "Wei Zhang"))
    compose = one(dev, rid("compose_message_text", messaging), "compose field")
    assert compose.text == "https://bakery.example.org/" and dev.state.focus is None
    assert dev.state.tasks["chrome"][-1] == {"screen": "page", "url": "https://bakery.example.org/"}
    tap(dev, one(dev, rid("send_message_button_icon", messaging), "send"))
    sent = sms_rows(dev.state, "sent")
    assert [(r["address"], r["body"]) for r in sent] == [("+1 415-555-0123", "https://bakery.example.org/")]
    assert dev.check_state({"sms_sent": {"contains": {"address": {"number": "4155550123"},
                                                      "body": {"includes": "https://bakery.example.org/"}}}})


def test_a_tap_above_the_sheet_closes_it_and_chooses_nothing() -> None:
    dev = phone()
    dev.launch("chrome")
    open_site(dev, "Corner Bakery")
    tap(dev, one(dev, rid("menu_button"), "menu button"))
    tap(dev, one(dev, lambda n: n.text == "Share…", "Share…"))
    sheet = one(dev, rid("chooser_header", "android"), "sheet")
    dev.tap(dev.size[0] / 2, sheet.bounds[1] / 2)
    assert dev.state.top == "chrome" and dev.state.tasks["chrome"][-1]["screen"] == "page"


@pytest.mark.parametrize("locale", list(locales()))
def test_every_locale_draws_the_new_tab_page_a_page_and_the_share_sheet(locale: str) -> None:
    dev = phone(locale=locale)
    dev.launch("chrome")
    assert one(dev, rid("search_box"), "search box").text == dev.locale.t("apps.chrome_search")
    open_site(dev, "Corner Bakery")
    dev.screenshot()
    share_to_messages(dev)
    assert dev.state.top == "messages"
    dev.key("HOME")
    dev.launch("chrome")
    tap(dev, one(dev, rid("menu_button"), "menu button"))
    assert dev.locale.t("apps.chrome_share") in [n.text for n in nodes(dev, rid("menu_item_text"))]
    tap(dev, one(dev, lambda n: n.text == dev.locale.t("apps.chrome_share"), "Share…"))
    assert dev.locale.t("app.messages") in [n.text for n in nodes(dev, rid("text1", "android"))]
    dev.screenshot()


def test_right_to_left_phones_keep_an_english_page_left_to_right_and_the_tablet_its_reading_width() -> None:
    dev = phone("030")  # Arabic
    dev.launch("chrome")
    open_site(dev, "Corner Bakery")
    text = one(dev, lambda n: n.text == "Fresh bread every morning." and n.cls == "android.view.View", "paragraph")
    assert text.bounds[0] < dev.size[0] * 0.1 and not text.mirror
    assert one(dev, rid("menu_button"), "menu").bounds[2] < dev.size[0] / 2  # the toolbar itself is mirrored
    dev = phone("109")  # the tablet
    dev.launch("chrome")
    open_site(dev, "Corner Bakery")
    share_to_messages(dev)
    assert dev.state.top == "messages"


# ---------------------------------------------------------------------------------------------------- tabs
def test_the_tab_switcher_button_counts_the_tabs_and_new_tab_adds_one() -> None:
    dev = phone()
    dev.launch("chrome")
    button = one(dev, rid("tab_switcher_button"), "tab switcher button")
    assert (button.cls, button.desc) == ("android.widget.ImageButton", "1 open tab, tap to switch tabs")
    tap(dev, button)
    assert dev.state.tasks["chrome"][-1] == {"screen": "switcher"}
    assert [n.text for n in nodes(dev, rid("tab_title"))] == ["New tab"]
    tap(dev, one(dev, rid("new_tab_button"), "New tab button"))
    assert chrome_state(dev).tabs == 2 and dev.state.tasks["chrome"] == [{"screen": "main"}]
    assert one(dev, rid("tab_switcher_button"), "button").desc == "2 open tabs, tap to switch tabs"
    open_site(dev, "Corner Bakery")  # the page's toolbar has the button too; the menu's New tab adds a third
    assert one(dev, rid("tab_switcher_button"), "button").desc == "2 open tabs, tap to switch tabs"
    tap(dev, one(dev, rid("tab_switcher_button"), "button"))
    assert [n.text for n in nodes(dev, rid("tab_title"))] == ["New tab", "Corner Bakery"]
    tap(dev, one(dev, rid("tab_title"), "a card"))  # back to the tab in front
    assert dev.state.tasks["chrome"][-1]["screen"] == "page"
    tap(dev, one(dev, rid("menu_button"), "menu button"))
    tap(dev, one(dev, lambda n: n.text == "New tab" and n.rid.endswith("menu_item_text"), "New tab"))
    assert chrome_state(dev).tabs == 3 and "3 open tabs" in one(dev, rid("tab_switcher_button"), "button").desc
    dev.press_back()  # the new tab's first page: BACK leaves Chrome, the tab kept
    assert dev.state.top is None and chrome_state(dev).tabs == 3


@pytest.mark.parametrize("locale_id", list(locales()))
def test_the_tab_count_is_written_in_the_locales_digits_in_every_locale(locale_id: str) -> None:
    """As Android's String.format writes ``%d``: on a phone whose locale has digits of its own (Egyptian Arabic,
    Persian, Bengali) B-MoCA's check, which looks for the character "2", cannot hold, as on a real phone."""
    dev = phone(locale=locale_id)
    dev.launch("chrome")
    tap(dev, one(dev, rid("tab_switcher_button"), "button"))
    tap(dev, one(dev, rid("new_tab_button"), "New tab button"))
    desc = one(dev, rid("tab_switcher_button"), "button").desc
    assert dev.locale.number(2) in desc and ("2" in desc) == (dev.locale.number(2) == "2"), desc
