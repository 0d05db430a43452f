"""Files: its items are typed state set from YAML under ``files:``, listed by root newest first with their dates and
sizes, in a list that scrolls; an item is chosen by a tap on its icon or a long press, and the action mode's Share
starts the framework's share sheet with the file (ChooserActivity's START from Files' uid), whose Messages target
(for the types Messages takes) attaches it to the conversation chosen; sending puts it in Messages' state, not in the
SMS provider. In every locale."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sim.driver import centre, nodes, one, tap
from tests.sim.test_app_state import snapshot_file
from vlui.android.i18n import locales
from vlui.sim.apps.files import File, FilesState, files_state, listed
from vlui.sim.apps.messages import messages_state, sms_rows
from vlui.sim.phone import SimDevice
from vlui.sim.ui import Node

PKG = "com.google.android.documentsui"
MESSAGING = "com.google.android.apps.messaging"
FILES_UID = 10055
ITEMS = [{"name": "lake-trip.jpg", "kind": "image", "size_kb": 2870, "day": 3, "time": "17:20", "folder": "Pictures"},
         {"name": "boarding_pass.pdf", "kind": "pdf", "size_kb": 212, "day": 0, "time": "07:30"},
         {"name": "lake-trip-2.jpg", "kind": "image", "size_kb": 45, "day": 3, "time": "17:24", "folder": "Download"},
         {"name": "song.mp3", "kind": "audio", "size_kb": 4100, "day": 1, "folder": "Music"},
         *({"name": f"IMG_{2030 + i}.jpg", "kind": "image", "size_kb": 2000 + i, "day": 5 + i, "folder": "DCIM"}
           for i in range(12))]
CHOOSER = ("START u0 {act=android.intent.action.CHOOSER cmp=android/com.android.internal.app.ChooserActivity "
           f"(has extras)}} from uid {FILES_UID}")


def phone(snapshot: str = "000", locale: str = "") -> SimDevice:
    dev = SimDevice(snapshot, noise=False)
    if locale:
        dev.reconfigure(locale=locale)
    dev.set_state({"files": {"items": ITEMS}})
    return dev


def rid(name: str, package: str = PKG):
    return lambda n: n.rid == f"{package}:id/{name}"


def titles(dev: SimDevice) -> list[str]:
    return [n.text for n in nodes(dev, lambda n: n.rid == "android:id/title" and n.package == PKG)]


def open_root(dev: SimDevice, key: str) -> None:
    dev.launch("files")
    tap(dev, one(dev, lambda n: n.desc == dev.locale.t(f"apps.files_{key}") and n.on_tap, key))


def item(dev: SimDevice, name: str) -> Node:
    """The row of the item ``name``."""
    return one(dev, lambda n: n.rid == f"{PKG}:id/item_root" and any(c.text == name for c in n.children), name)


def choose(dev: SimDevice, name: str) -> None:
    """A tap on the item's icon, its selection hotspot."""
    tap(dev, next(c for c in item(dev, name).children if c.rid == f"{PKG}:id/icon"))


def share_to_messages(dev: SimDevice, person: str = "Wei Zhang") -> None:
    tap(dev, one(dev, rid("action_menu_share"), "Share"))
    tap(dev, one(dev, lambda n: n.rid == "android:id/text1" and n.text == dev.locale.t("app.messages"), "Messages"))
    tap(dev, one(dev, lambda n: n.rid == f"{MESSAGING}:id/contact_name" and n.text == person, person))


def test_the_state_from_yaml_is_what_the_roots_list_newest_first(tmp_path: Path) -> None:
    path = snapshot_file(tmp_path, "{files: {items: [{name: a.pdf, kind: pdf, size_kb: 12, day: 2, folder: Documents},"
                                   " {name: b.jpg, kind: image}]}}")
    dev = SimDevice(path, noise=False)
    assert files_state(dev) == FilesState([File("a.pdf", "pdf", 12, 2, "09:00", "Documents"), File("b.jpg", "image")])
    assert "boarding_pass.pdf" in [f.name for f in FilesState().items]  # a fresh phone's
    dev = phone()
    assert [files_state(dev).items[i].name for i in listed(dev, "downloads")] == ["boarding_pass.pdf",
                                                                                   "lake-trip-2.jpg"]
    assert [files_state(dev).items[i].name for i in listed(dev, "images")][:3] == ["lake-trip-2.jpg", "lake-trip.jpg",
                                                                                   "IMG_2030.jpg"]
    open_root(dev, "downloads")
    assert titles(dev) == ["boarding_pass.pdf", "lake-trip-2.jpg"]
    xml = dev.ui_xml()
    # today's file shows its time, an older one its date (the snapshot's day is Mon 23 Nov 2026); formatFileSize's sizes
    assert f'text="7:30 AM" resource-id="{PKG}:id/date"' in xml and f'text="Nov 20" resource-id="{PKG}:id/date"' in xml
    assert f'text="212 kB" resource-id="{PKG}:id/size"' in xml and f'text="45.00 kB" resource-id="{PKG}:id/size"' in xml
    assert f'resource-id="{PKG}:id/item_root"' in xml and f'resource-id="{PKG}:id/dir_list"' in xml


def test_recent_keeps_the_roots_and_each_root_logs_its_directory() -> None:
    dev = phone()
    dev.launch("files")
    assert titles(dev) == ["Images", "Videos", "Audio", "Documents", "Downloads"]
    assert one(dev, rid("search_box"), "search").text == "Search files"
    # DirectoryFragment's debug line (D) names the root's document URI, as DocumentInfo.debugString writes it
    for key, uri in (("audio", "com.android.providers.media.documents/document/audio_root"),
                     ("downloads", "com.android.providers.downloads.documents/document/downloads")):
        mark = dev.log_mark()
        tap(dev, one(dev, lambda n, k=key: n.desc == dev.locale.t(f"apps.files_{k}") and n.on_tap, key))
        assert [line.split(": ", 1)[1] for line in dev.log_lines(mark, tags=["DirectoryFragment"])] == [
            f"Showing directory: content://{uri}"]
        assert [line.split()[4] for line in dev.log_lines(mark, tags=["DirectoryFragment"])] == ["D"]
        assert not [line for line in dev.log_lines(mark, tags=["ActivityTaskManager"]) if "START" in line]
        dev.key("BACK")
    assert titles(dev)[0] == "Images"


def test_a_long_root_scrolls() -> None:
    dev = phone()
    open_root(dev, "images")
    shown = titles(dev)
    assert "IMG_2041.jpg" not in shown
    lst = one(dev, rid("dir_list"), "list")
    assert lst.scrollable
    x, _ = centre(lst)
    dev.swipe(x, lst.bounds[3] - 40, x, lst.bounds[1] + 40, 1000)  # a slow drag: no fling
    assert "IMG_2041.jpg" in titles(dev) and titles(dev)[0] != shown[0]


def test_an_item_is_chosen_by_its_icon_or_a_long_press_and_back_clears_the_choice() -> None:
    dev = phone()
    open_root(dev, "images")
    tap(dev, item(dev, "lake-trip.jpg"))  # a tap on the row with nothing chosen opens nothing here
    assert "selected" not in dev.top_screen() and not nodes(dev, rid("action_menu_share"))
    choose(dev, "lake-trip.jpg")
    assert item(dev, "lake-trip.jpg").selected and one(dev, rid("action_menu_share"), "Share").desc == "Share"
    assert one(dev, lambda n: n.rid == "android:id/action_bar_title", "count").text == "1"
    tap(dev, item(dev, "lake-trip-2.jpg"))  # while something is chosen, a tap on a row chooses it too
    assert one(dev, lambda n: n.rid == "android:id/action_bar_title", "count").text == "2"
    x, y = centre(item(dev, "lake-trip-2.jpg"))
    tap(dev, item(dev, "lake-trip-2.jpg"))
    dev.key("BACK")
    assert "selected" not in dev.top_screen() and dev.top_screen()["screen"] == "images"  # still on Images
    dev.swipe(x, y, x, y, 800)  # a long press chooses
    assert dev.top_screen()["selected"] == [2]
    tap(dev, one(dev, lambda n: n.rid == "android:id/action_mode_close_button", "close"))
    assert "selected" not in dev.top_screen()


def test_share_starts_the_share_sheet_and_messages_sends_the_file() -> None:
    dev = phone()
    open_root(dev, "images")
    choose(dev, "lake-trip.jpg")
    mark = dev.log_mark()
    tap(dev, one(dev, rid("action_menu_share"), "Share"))
    lines = [line.split(": ", 1)[1] for line in dev.log_lines(mark, tags=["ActivityTaskManager"])]
    assert lines[0] == CHOOSER and lines[1].startswith("Displayed android/com.android.internal.app.ChooserActivity")
    assert nodes(dev, lambda n: n.rid == "android:id/content_preview_image_1_large")  # an image's preview
    assert [n.text for n in nodes(dev, rid("text1", "android"))] == ["Bluetooth", "Gmail", "Messages"]
    mark = dev.log_mark()
    tap(dev, one(dev, lambda n: n.rid == "android:id/text1" and n.text == "Messages", "Messages"))
    lines = [line.split(": ", 1)[1] for line in dev.log_lines(mark, tags=["ActivityTaskManager"])]
    assert lines[0] == ("START u0 {act=android.intent.action.SEND cat=[android.intent.category.DEFAULT] typ=image/jpeg "
                        "flg=0xb080001 cmp=com.google.android.apps.messaging/.ui.conversationlist.ShareIntentActivity "
                        f"clip={{image/jpeg {{...}}}} (has extras)}} from uid {FILES_UID}")
    tap(dev, one(dev, lambda n: n.rid == f"{MESSAGING}:id/contact_name" and n.text == "Wei Zhang", "Wei Zhang"))
    assert [n.desc for n in nodes(dev, rid("attachment_preview", MESSAGING))] == ["lake-trip.jpg"]
    send = one(dev, rid("send_message_button_icon", MESSAGING), "send")
    assert send.enabled  # a file alone may be sent
    tap(dev, send)
    (conversation,) = messages_state(dev).conversations
    assert [(m.text, m.direction, m.attachments) for m in conversation.messages] == [("", "out", ["lake-trip.jpg"])]
    assert [n.text for n in nodes(dev, rid("attachment_name", MESSAGING))] == ["lake-trip.jpg"]
    assert not nodes(dev, rid("attachment_preview", MESSAGING))
    assert sms_rows(dev.state, "sent") == []  # a multimedia message: content://mms's, not the SMS provider's
    sent = {"messages.conversations": {"contains": {"number": {"number": "4155550123"}, "messages": {"contains": {
        "direction": "out", "attachments": ["lake-trip.jpg"]}}}}}
    assert dev.check_state(sent)
    assert not dev.check_state({"messages.conversations": {"contains": {"messages": {"contains": {
        "attachments": ["lake-trip-2.jpg"]}}}}})
    assert dev.state.tasks["files"][-1] == {"screen": "images", "selected": [0]}  # Files keeps its choice


def test_a_pdf_is_not_offered_to_messages_and_several_files_go_as_send_multiple() -> None:
    dev = phone()
    open_root(dev, "downloads")
    choose(dev, "boarding_pass.pdf")
    tap(dev, one(dev, rid("action_menu_share"), "Share"))
    assert one(dev, lambda n: n.rid == "android:id/content_preview_filename", "name").text == "boarding_pass.pdf"
    assert [n.text for n in nodes(dev, rid("text1", "android"))] == ["Bluetooth", "Gmail"]  # Messages' filter
    dev.key("BACK")
    assert dev.top_screen() == {"screen": "downloads", "selected": [1]}
    tap(dev, item(dev, "boarding_pass.pdf"))  # let the PDF go, take both photos
    dev.key("BACK")
    dev.key("BACK")
    open_root(dev, "images")
    choose(dev, "lake-trip.jpg")
    tap(dev, item(dev, "lake-trip-2.jpg"))
    mark = dev.log_mark()
    share_to_messages(dev)
    lines = [line.split(": ", 1)[1] for line in dev.log_lines(mark, tags=["ActivityTaskManager"])]
    assert ("START u0 {act=android.intent.action.SEND_MULTIPLE cat=[android.intent.category.DEFAULT] typ=image/jpeg "
            "flg=0xb080001 cmp=com.google.android.apps.messaging/.ui.conversationlist.ShareIntentActivity "
            f"clip={{image/jpeg {{...}}}} (has extras)}} from uid {FILES_UID}") in lines
    assert [n.desc for n in nodes(dev, rid("attachment_preview", MESSAGING))] == ["lake-trip.jpg", "lake-trip-2.jpg"]


def test_the_search_lists_the_files_whose_names_hold_the_text() -> None:
    dev = phone()
    dev.launch("files")
    tap(dev, one(dev, rid("search_box"), "search"))
    dev.text("lake")
    assert titles(dev) == ["lake-trip-2.jpg", "lake-trip.jpg"]
    dev.press_keycode(66)  # ENTER: the search is submitted
    assert dev.state.focus is None and titles(dev) == ["lake-trip-2.jpg", "lake-trip.jpg"]
    choose(dev, "lake-trip.jpg")
    share_to_messages(dev)
    assert [n.desc for n in nodes(dev, rid("attachment_preview", MESSAGING))] == ["lake-trip.jpg"]


@pytest.mark.parametrize("locale", list(locales()))
def test_every_locale_draws_the_roots_a_chosen_item_and_the_share_sheet(locale: str) -> None:
    dev = phone(locale=locale)
    open_root(dev, "images")
    dates = [n.text for n in nodes(dev, rid("date"))]
    sizes = [n.text for n in nodes(dev, rid("size"))]
    assert len(dates) == len(sizes) >= 6 and all(dates) and all(sizes)
    assert sizes[0] == dev.locale.t("apps.files_size_kb", size=dev.locale.decimal(45, 2))  # lake-trip-2.jpg
    choose(dev, "lake-trip.jpg")
    assert one(dev, rid("action_menu_share"), "Share").desc == dev.locale.t("apps.files_share")
    dev.screenshot()
    share_to_messages(dev)
    assert dev.state.top == "messages" and nodes(dev, rid("attachment_preview", MESSAGING))
    dev.screenshot()


def test_right_to_left_phones_mirror_the_list_and_the_tablet_keeps_its_reading_width() -> None:
    dev = phone("030")  # Arabic
    open_root(dev, "images")
    row = item(dev, "lake-trip.jpg")
    icon = next(c for c in row.children if c.rid == f"{PKG}:id/icon")
    assert icon.bounds[0] > dev.size[0] / 2  # the icon at the start: the right
    assert one(dev, rid("size"), "size").text.endswith("كيلوبايت")
    dev = phone("109")  # the tablet
    open_root(dev, "images")
    choose(dev, "lake-trip.jpg")
    share_to_messages(dev)
    assert dev.state.top == "messages"
