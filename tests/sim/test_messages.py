"""Messages: its conversations are typed state set from YAML under ``messages:``, drawn as Google Messages draws them
(the list, a conversation's bubbles, the compose bar), sent to with the phone's own text machinery, in every locale and
mirrored in right-to-left ones; and the phone-wide clipboard, which a long press on a bubble fills and a long press
on the compose field pastes from."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sim.driver import centre, long_press, tap
from tests.sim.test_app_state import snapshot_file
from vlui.android.i18n import locales
from vlui.errors import VluiError
from vlui.sim.apps.messages import COMPOSE_MAX, START_CHAT_LINE, Conversation, Message, messages_state
from vlui.sim.phone import SimDevice
from vlui.sim.ui import Node

PKG = "com.google.android.apps.messaging"
STATE = {"messages": {"conversations": [
    {"name": "Maria García", "number": "+1 650-555-0178", "messages": [
        {"text": "Lunch tomorrow?", "direction": "in", "time": "2026-11-22 12:05"},
        {"text": "Sure, where?", "direction": "out", "time": "2026-11-22 12:07"},
        {"text": "The new place by the office, it has a garden and they say the soup is the best in town",
         "direction": "in", "time": "2026-11-23 07:40", "read": False}]},
    {"name": "Wei Zhang", "number": "+1 650-555-0112", "messages": [
        {"text": "Did you see the headline?", "direction": "in", "time": "2026-11-10 09:30"}]},
    {"number": "+44 20 7946 0958", "messages": [
        {"text": "Your parcel is on its way", "direction": "in", "time": "2026-11-22 18:00"}]},
]}}


def phone(locale: str = "en-US") -> SimDevice:
    dev = SimDevice("000", noise=False)
    if locale != "en-US":
        dev.reconfigure(locale=locale)
    dev.set_state(STATE)
    return dev


def by_id(dev: SimDevice, name: str) -> list[Node]:
    return [n for n in dev.frame().walk() if n.rid == f"{PKG}:id/{name}"]


def test_the_state_from_yaml_is_the_list_newest_first(tmp_path: Path) -> None:
    path = snapshot_file(tmp_path, "{messages: {conversations: [{name: Wei Zhang, number: '+1 650-555-0112', "
                                   "messages: [{text: hi, direction: out, time: '2026-11-20 10:00'}]}]}, "
                                   "clipboard: copied before}")
    dev = SimDevice(path, noise=False)
    assert messages_state(dev).conversations == [Conversation("+1 650-555-0112", "Wei Zhang",
                                                              [Message("hi", "out", "2026-11-20 10:00")])]
    assert dev.state.clipboard == "copied before"
    dev = phone()
    dev.launch("messages")
    names = [n.text for n in by_id(dev, "conversation_name")]
    assert names == ["Maria García", "+44 20 7946 0958", "Wei Zhang"]  # a number no contact has shows itself
    assert [n.text for n in by_id(dev, "conversation_snippet")] == [
        STATE["messages"]["conversations"][0]["messages"][-1]["text"], "Your parcel is on its way",
        "Did you see the headline?"]
    # today: the time of day; this week: the weekday; before: the date
    assert [n.text for n in by_id(dev, "conversation_timestamp")] == ["7:40 AM", "Sun", "Nov 10"]
    assert [n.bold for n in by_id(dev, "conversation_name")] == [True, False, False]  # Maria's last one is unread
    xml = dev.ui_xml()
    assert f'resource-id="{PKG}:id/start_new_conversation_button"' in xml and 'content-desc="Start chat"' in xml
    assert f'text="Search conversations" resource-id="{PKG}:id/search_box"' in xml


def test_an_empty_phone_shows_what_messages_shows_before_any_message() -> None:
    dev = SimDevice("000", noise=False)
    dev.launch("messages")
    assert messages_state(dev).conversations == [] and by_id(dev, "conversation_name") == []
    assert dev.frame().find(text=dev.locale.t("apps.messages_empty")) is not None


def test_a_conversation_opens_as_bubbles_and_is_read() -> None:
    dev = phone()
    dev.launch("messages")
    mark = dev.log_mark()
    tap(dev, by_id(dev, "conversation_name")[0])
    assert dev.top_screen() == {"screen": "conversation", "number": "+1 650-555-0178", "name": "Maria García"}
    assert [line.split(": ", 1)[1] for line in dev.log_lines(mark, tags=["ActivityTaskManager"])] == [
        f"START u0 {{cmp={PKG}/.ui.conversation.ConversationActivity (has extras)}} from uid 10059"]
    assert all(m.read for m in messages_state(dev).conversations[0].messages)
    assert by_id(dev, "conversation_title")[0].text == "Maria García"
    bubbles = by_id(dev, "message_text")
    assert [b.text for b in bubbles] == [m["text"] for m in STATE["messages"]["conversations"][0]["messages"]]
    received, sent = bubbles[0], bubbles[1]
    assert received.bounds[0] < dev.size[0] // 2 < sent.bounds[2]  # received at the start, sent at the end
    assert by_id(dev, "compose_message_text")[0].text == "Text message"  # the hint while the draft is empty
    assert by_id(dev, "send_message_button_icon")[0].desc == "Send SMS"
    dev.key("BACK")
    assert dev.top_screen() == {"screen": "main"}
    assert [n.bold for n in by_id(dev, "conversation_name")] == [False, False, False]


def test_typing_and_sending_appends_a_sent_message_to_the_state_and_the_screen() -> None:
    dev = phone()
    dev.launch("messages")
    tap(dev, by_id(dev, "conversation_name")[2])  # Wei Zhang
    field = by_id(dev, "compose_message_text")[0]
    tap(dev, by_id(dev, "send_message_button_icon")[0])  # nothing to send
    assert len(messages_state(dev).conversations[1].messages) == 1
    tap(dev, field)
    assert dev.state.focus == ("messages", "compose:+16505550112")
    mark = dev.log_mark()
    dev.text("Yes, big news!")
    dev.key("BACK")  # the keyboard hides; the draft stays
    assert by_id(dev, "compose_message_text")[0].text == "Yes, big news!"
    tap(dev, by_id(dev, "send_message_button_icon")[0])
    wei = messages_state(dev).conversations[1]
    assert wei.messages[-1] == Message("Yes, big news!", "out", "2026-11-23 08:00")
    assert by_id(dev, "compose_message_text")[0].text == "Text message"  # the field is empty again
    assert by_id(dev, "message_text")[-1].text == "Yes, big news!"
    assert dev.log_lines(mark) == []  # no SMS line could be confirmed for Android 10's Messages: none is printed
    dev.key("BACK")
    assert [n.text for n in by_id(dev, "conversation_snippet")][0] == "Yes, big news!"  # now the newest


def test_start_chat_picks_a_contact_and_a_new_conversation_joins_the_list_once_sent() -> None:
    dev = SimDevice("000", noise=False)
    dev.launch("messages")
    mark = dev.log_mark()
    tap(dev, by_id(dev, "start_new_conversation_button")[0])
    assert dev.top_screen() == {"screen": "new_conversation"} and dev.state.focus is None
    assert [line.split(": ", 1)[1] for line in dev.log_lines(mark, tags=[START_CHAT_LINE[0]])] == [START_CHAT_LINE[1]]
    assert [n.text for n in by_id(dev, "contact_name")] == ["Alex Kim", "Maria García", "Wei Zhang", "Yuki Tanaka"]
    tap(dev, by_id(dev, "recipient_text_view")[0])
    dev.text("yu")
    assert [n.text for n in by_id(dev, "contact_name")] == ["Yuki Tanaka"]
    dev.key("BACK")
    tap(dev, by_id(dev, "contact_name")[0])
    assert dev.top_screen()["screen"] == "conversation" and dev.top_screen()["name"] == "Yuki Tanaka"
    assert messages_state(dev).conversations == []  # nothing is kept until a message is sent
    dev.key("BACK")
    assert dev.top_screen() == {"screen": "main"} and by_id(dev, "conversation_name") == []
    tap(dev, by_id(dev, "start_new_conversation_button")[0])
    tap(dev, by_id(dev, "recipient_text_view")[0])
    dev.text("+1 555 0100")
    dev.press_keycode(66)  # ENTER: a number no contact has
    assert dev.top_screen()["number"] == "+1 555 0100"
    tap(dev, by_id(dev, "compose_message_text")[0])
    dev.text("Hello")
    tap(dev, by_id(dev, "send_message_button_icon")[0])
    assert messages_state(dev).conversations == [Conversation("+1 555 0100", "", [Message("Hello", "out",
                                                                                          "2026-11-23 08:00")])]


def test_the_search_bar_filters_the_conversations() -> None:
    dev = phone()
    dev.launch("messages")
    tap(dev, by_id(dev, "search_box")[0])
    assert dev.state.focus == ("messages", "search")
    dev.text("parcel")
    assert [n.text for n in by_id(dev, "conversation_name")] == ["+44 20 7946 0958"]
    dev.press_keycode(66)  # ENTER: the keyboard hides, the filter stays
    assert dev.state.focus is None and len(by_id(dev, "conversation_name")) == 1


@pytest.mark.parametrize(("state", "message"), [
    ("{messages: {conversation: []}}", "messages: unknown field 'conversation'; fields: conversations"),
    ("{messages: {conversations: [{name: Ann}]}}", "messages.conversations[0] must give number"),
    ("{messages: {conversations: [{number: '1', messages: [{text: hi, direction: sent, time: '2026-11-23 08:00'}]}]}}",
     "messages.conversations[0].messages[0].direction must be one of in, out, not 'sent'"),
    ("{messages: {conversations: [{number: '1', messages: [{text: hi, direction: in, time: yesterday}]}]}}",
     "messages.conversations[0].messages[0].time must look like '2026-11-23 09:15', not 'yesterday'"),
    ("{messages: {conversations: [{number: '1', messages: [{txt: hi}]}]}}",
     "messages.conversations[0].messages[0]: unknown field 'txt'; fields: attachments, direction, read, text, time"),
    ("{clipboard: 5}", "clipboard must be a string, not 5"),
])
def test_a_wrong_field_is_a_one_line_error_naming_the_valid_ones(tmp_path: Path, state: str, message: str) -> None:
    path = snapshot_file(tmp_path, state)
    with pytest.raises(VluiError) as err:
        SimDevice(path)
    assert str(err.value) == f"{path}: state: {message}"
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("locale", sorted(locales()))
def test_every_locale_draws_the_list_and_a_conversation(locale: str) -> None:
    dev = phone(locale)
    dev.launch("messages")
    assert len(by_id(dev, "conversation_name")) == 3 and dev.screenshot().std() > 0
    tap(dev, by_id(dev, "conversation_name")[0])
    tap(dev, by_id(dev, "compose_message_text")[0])
    assert dev.state.focus is not None
    long_press(dev, by_id(dev, "message_text")[0])
    assert by_id(dev, "copy_text")[0].desc == dev.locale.t("messages.copy_text")
    assert f'package="{PKG}"' in dev.ui_xml() and dev.screenshot().std() > 0


@pytest.mark.parametrize("locale", ["ar-EG", "he-IL", "fa-IR", "ur-PK"])
def test_right_to_left_locales_mirror_the_screens(locale: str) -> None:
    dev = phone(locale)
    width = dev.size[0]
    dev.launch("messages")
    row = by_id(dev, "swipeableContainer")[0]
    avatar, name = by_id(dev, "conversation_icon")[0], by_id(dev, "conversation_name")[0]
    assert avatar.bounds[0] > width // 2 and name.bounds[2] < avatar.bounds[0] <= row.bounds[2]  # the avatar at right
    tap(dev, name)
    received, sent = by_id(dev, "message_text")[:2]
    assert received.bounds[2] > width // 2 > sent.bounds[0]  # received at the right, sent at the left
    send = by_id(dev, "send_message_button_icon")[0]
    assert send.bounds[2] < width // 2  # the send button at the left end of the compose bar


def test_a_long_press_on_a_bubble_copies_its_text_and_paste_puts_it_in_the_draft() -> None:
    dev = phone()
    dev.launch("messages")
    tap(dev, by_id(dev, "conversation_name")[1])  # the parcel
    bubble = by_id(dev, "message_text")[0]
    x, y = centre(bubble)
    dev.swipe(x, y, x, y, 300)  # held less than the long-press timeout: a tap, which does nothing here
    assert "selected" not in dev.top_screen() and by_id(dev, "copy_text") == []
    assert 'long-clickable="true"' in dev.ui_xml()
    long_press(dev, bubble)
    assert dev.top_screen()["selected"] == 0
    dev.key("BACK")  # ends the action mode, not the conversation
    assert dev.top_screen()["screen"] == "conversation" and "selected" not in dev.top_screen()
    long_press(dev, by_id(dev, "message_text")[0])
    tap(dev, by_id(dev, "copy_text")[0])
    assert dev.state.clipboard == "Your parcel is on its way" and "selected" not in dev.top_screen()
    # the compose field: a long press focuses it and offers Paste, which appends the clipboard to the draft
    tap(dev, by_id(dev, "compose_message_text")[0])
    dev.text("Note: ")
    long_press(dev, by_id(dev, "compose_message_text")[0])
    paste = dev.frame().find(rid="android:id/floating_toolbar_menu_item_text")
    assert paste is not None and paste.text == "Paste"
    tap(dev, paste)
    assert by_id(dev, "compose_message_text")[0].text == "Note: Your parcel is on its way"
    assert dev.frame().find(rid="android:id/floating_toolbar_menu_item_text") is None
    long_press(dev, by_id(dev, "compose_message_text")[0])
    dev.text("!")  # typing hides the toolbar, as Android hides it when the text changes
    assert dev.frame().find(rid="android:id/floating_toolbar_menu_item_text") is None


def test_paste_is_offered_only_when_the_clipboard_holds_text() -> None:
    dev = phone()
    dev.launch("messages")
    tap(dev, by_id(dev, "conversation_name")[0])
    long_press(dev, by_id(dev, "compose_message_text")[0])
    assert dev.state.focus is not None and dev.frame().find(rid="android:id/floating_toolbar_menu_item_text") is None
    dev.set_state({"clipboard": "from the task"})
    long_press(dev, by_id(dev, "compose_message_text")[0])
    tap(dev, dev.frame().find(rid="android:id/floating_toolbar_menu_item_text"))
    assert by_id(dev, "compose_message_text")[0].text == "from the task"


def test_the_compose_field_holds_what_messaging_lets_in() -> None:
    """AOSP Messaging's compose field has a LengthFilter of MmsConfig's text limit, 2,000 characters by default."""
    dev = phone()
    dev.launch("messages")
    tap(dev, by_id(dev, "conversation_name")[2])
    tap(dev, by_id(dev, "compose_message_text")[0])
    dev.text("7" * 60_000)
    assert by_id(dev, "compose_message_text")[0].text == "7" * COMPOSE_MAX
