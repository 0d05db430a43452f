"""Messages (Google Messages on Android 10): the conversation list, a conversation, the recipient picker.

The list shows each conversation with messages, newest first: the other person's name (or number), the last
message and when it came. Tapping one opens it (``ConversationActivity``'s START line, the component a real device
starts): its messages as bubbles, received ones at the start, sent ones at the end, and the compose bar ("Text
message", send). The compose field takes text through the phone's own machinery (a tap focuses it, the keyboard
comes up, ``input text`` and the keys type into it); send appends the draft to the conversation as a sent message
and empties the field. The "Start chat" button opens the recipient picker (and logs BugleUsageStatistics' ``BUGLE
CREATE CONVERSATION ATTEMPT`` line, B-MoCA's detector for starting a chat); choosing a person opens the conversation
with them, a new one if there was none (it joins the list once a message is sent). The search bar filters the list
by name, number and message text.

Files shared from another app (Files' Share, through the share sheet) come with the recipient picker too: the
conversation chosen gets them as its draft's attachments (a chip per file above the compose field), and send puts
them in the sent message (``Message.attachments``): a multimedia message, which the SMS provider does not hold (on
a phone it is a row of ``content://mms``, which the simulated phone does not serve), so a task reads it from
Messages' own state. The types Messages takes (:data:`SHARE_TYPES`) are those AOSP Messaging's ShareIntentActivity
declares (packages/apps/Messaging, AndroidManifest.xml): Google Messages' own manifest could not be read, so a type
it may take beyond these (a PDF) is not offered to it.

Copy and paste: a long press of a bubble starts the message action mode (its bar has "Copy text", as AOSP
Messaging's ``copy_text`` action, Google Messages' ancestor) and Copy text puts the message on the phone's clipboard
(``DeviceState.clipboard``); a long press of the compose field focuses it and, when the clipboard holds text, shows
Android's floating text toolbar with "Paste" (``android:id/floating_toolbar_menu_item_text``), which appends the
clipboard to the draft. A long press is a touch held in place for the long-press timeout (``input swipe x y x y
800``); B-MoCA's dual-gesture actions have no duration, so an agent acting through them cannot long-press (an LLM
agent with ``agent.actions=extended`` can).

Log lines. Sending prints nothing, on purpose: no line could be confirmed for Google Messages on Android 10. The
telephony stack's lines (SmsController, IccSmsInterfaceManager, GsmSMSDispatcher, ImsSmsDispatcher ``sendText`` /
``sendSms``) are written with ``Rlog``, to the radio buffer, which ``logcat`` does not read by default and which the
simulated phone keeps empty. AOSP Messaging, Bugle's open-source ancestor, logs ``SendMessageAction: Sending SMS
message <id> in conversation <id>`` at INFO under ``MessagingAppDataModel`` (packages/apps/Messaging,
datamodel/action/SendMessageAction.java, doBackgroundWork); current Google Messages builds log through their own
flogger under ``BugleDataModel`` with other wording, and no capture of the Android 10 era's line was found. A task
checks a sent message on the state (``messages.conversations``) or through ``content query --uri content://sms/sent``
(:func:`sms_rows`). The only lines are those a real device prints for what the user does here: the START of
ConversationActivity and the start-chat line above.

The app's own state, :class:`MessagesState` (its conversations), is typed here and registered with the app
(:data:`vlui.sim.apps.APPS`); a snapshot or a task sets it under ``messages:``::

    messages:
      conversations:
        - name: Maria García
          number: "+1 650-555-0178"
          messages:
            - {text: "Lunch tomorrow?", direction: in, time: "2026-11-23 12:05"}
            - {text: "Sure!", direction: out, time: "2026-11-23 12:07"}

Resource ids are Google Messages' where test scripts written against the real app name them (``conversation_name``,
``conversation_snippet``, ``swipeableContainer``, ``start_new_conversation_button``, ``recipient_text_view``,
``conversation_title``, ``message_text``, ``compose_message_text``, ``send_message_button_icon``); the others
(``conversation_timestamp``, ``contact_name``, ``copy_text``) are plausible names, not confirmed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Required, TypedDict, get_args

from vlui.android.apps import short_component
from vlui.android.intents import CATEGORY_DEFAULT, common_mime, mime_type
from vlui.android.launcher import search_matches
from vlui.android.logcat import EPOCH
from vlui.android.state import EDIT_TEXT_MAX, DeviceState, shaped
from vlui.errors import VluiError
from vlui.sim.apps.contacts import people
from vlui.sim.protocol import Phone
from vlui.sim.systemui import keyboard_top
from vlui.sim.typeset import layout, wrap
from vlui.sim.ui import Node
from vlui.sim.widgets import Ctx, app_bar, fab, list_row, scroll_list, search_box, text

PKG = "com.google.android.apps.messaging"
CONVERSATION_ACTIVITY = f"{PKG}/.ui.conversation.ConversationActivity"
SHARE_ACTIVITY = f"{PKG}.ui.conversationlist.ShareIntentActivity"  # takes ACTION_SEND of the SHARE_TYPES
# the MIME types ShareIntentActivity's filter names (AOSP Messaging's, for ACTION_SEND and ACTION_SEND_MULTIPLE)
SHARE_TYPES = ("text/plain", "text/x-vCard", "text/x-vcard", "image/*", "audio/*", "video/*", "application/ogg")
ScreenName = Literal["main", "new_conversation", "conversation"]
SCREENS: tuple[str, ...] = get_args(ScreenName)
TIME_FORMAT = "%Y-%m-%d %H:%M"  # a message's time, as a snapshot's own ``time`` is written
TIME_SHAPE = r"\d{4}-\d\d-\d\d \d\d:\d\d"
# BugleUsageStatistics' line (I) when a chat is started from the Start chat button. Google Messages is closed source
# and no capture of the line was found: what is known of it is what B-MoCA's detectors, written against its
# emulator's log, match: "BUGLE CREATE" and, after it, the source "VIA_DEFAULT" (the release's regex; the paper's
# "DEFAULT" matches it too). The other words are vlui's. Until issue 59 the source was written "DEFAULT", to the
# paper's regex, which the release's did not match.
START_CHAT_LINE = ("BugleUsageStatistics", "logEvent: BUGLE CREATE CONVERSATION ATTEMPT, source: VIA_DEFAULT, "
                   "participants: 0")
BOTTOM = 1 << 30  # a scroll offset past any list's end: the list shows its end (a conversation, its latest message)
MIN_MATCH = 7  # PhoneNumberUtils.compare's loose match: two numbers are one person's when their last 7 digits agree
SENT_BLUE = (26, 115, 232)


class Screen(TypedDict, total=False):
    """A screen on Messages' task; a conversation's names the other person and what its transient UI shows."""

    screen: Required[ScreenName]
    number: str  # conversation: the other person's number
    name: str  # conversation: their name ("" for a number no contact has)
    share: str  # new_conversation: the text another app shared (ShareIntentActivity), the chosen conversation's draft
    attachments: list[str]  # new_conversation: the files shared; conversation: the files the draft carries (names)
    selected: int  # conversation: the message a long press chose (the action bar with Copy text shows)
    paste: str  # conversation: the draft when a long press offered Paste (the toolbar goes once the draft changes)


@dataclass
class Message:
    """One message: its text, whether it was received (``in``) or sent (``out``), when (``YYYY-MM-DD HH:MM`` on
    the phone's clock), for a received one whether it was read, and the files it carries (their names: a message
    with files is a multimedia message, not an SMS)."""

    text: str
    direction: Literal["in", "out"]
    time: str = shaped(TIME_SHAPE, "2026-11-23 09:15")
    read: bool = True
    attachments: list[str] = field(default_factory=list)


@dataclass
class Conversation:
    """The messages exchanged with one person, oldest first."""

    number: str
    name: str = ""  # as the contacts have it; "" shows the number
    messages: list[Message] = field(default_factory=list)


@dataclass
class MessagesState:
    """What Messages keeps (its database): the conversations, in the order they were started."""

    conversations: list[Conversation] = field(default_factory=list)


def messages_state(dev: Phone) -> MessagesState:
    """Messages' own state on the phone ``dev``."""
    return dev.state.app("messages", MessagesState)


def recipients(dev: Phone) -> list[tuple[str, str]]:
    """The people the recipient picker offers, as (name, number): the contacts with a number, by name, as Contacts
    lists them."""
    return [(p.name, p.phone) for _, p in people(dev) if p.phone]


def same_number(a: str, b: str) -> bool:
    """Whether two phone numbers are one person's, as PhoneNumberUtils.compare loosely decides: their digits agree
    over the last :data:`MIN_MATCH` (or all, when shorter)."""
    da, db = "".join(c for c in a if c.isdigit()), "".join(c for c in b if c.isdigit())
    return bool(da) and da[-MIN_MATCH:] == db[-MIN_MATCH:]


def find(state: MessagesState, number: str) -> Conversation | None:
    """The conversation with ``number``, if there is one."""
    return next((c for c in state.conversations if same_number(c.number, number)), None)


def now(dev: Phone) -> str:
    return dev.now().strftime(TIME_FORMAT)


def receive(st: DeviceState, number: str, text: str, time: str, name: str = "") -> None:
    """An SMS from ``number`` arrives (the emulator console's ``sms send``): it joins the conversation with that
    number, a new one if there is none, unread."""
    messages = st.app("messages", MessagesState)
    conversation = find(messages, number)
    if conversation is None:
        conversation = Conversation(number, name)
        messages.conversations.append(conversation)
    conversation.messages.append(Message(text, "in", time, read=False))


# ---------------------------------------------------------------------------------------------------- actions
# What the compose field holds: AOSP Messaging sets a LengthFilter of MmsConfig.getMaxTextLimit(), whose default
# (no carrier value) is DEFAULT_MAX_TEXT_LENGTH, 2,000 characters.
COMPOSE_MAX = 2000


def max_length(field: str) -> int:
    """What a field of Messages holds: the compose fields :data:`COMPOSE_MAX`, the others the framework's default."""
    return COMPOSE_MAX if field.startswith("compose:") else EDIT_TEXT_MAX


def compose_field(number: str) -> str:
    """The compose field's id among the phone's text fields: one per conversation, so each keeps its draft."""
    return f"compose:{''.join(c for c in number if c.isdigit() or c == '+')}"


def draft(dev: Phone, number: str) -> str:
    return dev.state.fields.get(f"messages.{compose_field(number)}", "")


def open_conversation(dev: Phone, number: str, name: str) -> None:
    """Open the conversation with ``number`` (ConversationActivity): its received messages are read now, and it
    shows its latest message."""
    conversation = find(messages_state(dev), number)
    if conversation is not None:
        number, name = conversation.number, conversation.name
        for m in conversation.messages:
            m.read = True
    dev.start_activity("messages", "conversation", CONVERSATION_ACTIVITY, number=number, name=name)
    dev.state.scroll["messages.conversation"] = BOTTOM


def send(dev: Phone, screen: Screen) -> None:
    """The send button: the draft and its attachments go to the conversation as a sent message (the conversation
    is made if it is new), and the field empties; a blank draft without attachments sends nothing."""
    number = screen.get("number", "")
    body = draft(dev, number)
    attachments = screen.pop("attachments", [])
    if not number or not (body.strip() or attachments):
        return
    state = messages_state(dev)
    conversation = find(state, number)
    if conversation is None:
        conversation = Conversation(number, screen.get("name", ""))
        state.conversations.append(conversation)
    conversation.messages.append(Message(body, "out", now(dev), attachments=attachments))
    dev.state.fields[f"messages.{compose_field(number)}"] = ""
    screen.pop("paste", None)
    dev.state.scroll["messages.conversation"] = BOTTOM


def copy_selected(dev: Phone, screen: Screen) -> None:
    """The action bar's Copy text: the chosen message's text is the clipboard's, and the action mode ends."""
    conversation = find(messages_state(dev), screen.get("number", ""))
    i = screen.pop("selected", -1)
    if conversation is not None and 0 <= i < len(conversation.messages):
        dev.state.clipboard = conversation.messages[i].text


def paste(dev: Phone, screen: Screen) -> None:
    """The floating toolbar's Paste: the clipboard's text is appended to the draft (the cursor is at its end)."""
    screen.pop("paste", None)
    dev.type_into_focus(dev.state.clipboard)


def start_chat(dev: Phone) -> None:
    """The Start chat button: the recipient picker, its field waiting for a tap before the keyboard comes up."""
    dev.push("messages", "new_conversation")
    dev.state.fields.pop("messages.recipient", None)
    dev.logi(*START_CHAT_LINE, app="messages", offset_ms=30)


# ---------------------------------------------------------------------------------------------------- hooks
def on_back(dev: Phone, key: str) -> bool:
    """BACK ends the message action mode before it leaves the conversation."""
    screen = dev.top_screen()
    if screen and screen["screen"] == "conversation" and "selected" in screen:
        del screen["selected"]
        return True
    return False


def on_editor_action(dev: Phone, field_id: str) -> None:
    """ENTER: the search submits (the keyboard hides, the list stays filtered); in the recipient field it opens the
    conversation with the one person the text finds, or with the number typed; in the compose field nothing (Google
    Messages does not send on ENTER unless a setting says so)."""
    if field_id == "search":
        dev.state.focus = None
    elif field_id == "recipient":
        typed = dev.state.fields.get("messages.recipient", "").strip()
        found = _matching_people(dev, typed)
        if len(found) == 1:
            _choose(dev, *found[0])
        elif typed and all(c.isdigit() or c in "+-() " for c in typed) and any(c.isdigit() for c in typed):
            _choose(dev, "", typed)


def _matching_people(dev: Phone, query: str) -> list[tuple[str, str]]:
    if not query.strip():
        return recipients(dev)
    return [(name, number) for name, number in recipients(dev)
            if search_matches(name, query) or (any(c.isdigit() for c in query) and same_number(number, query))]


def _choose(dev: Phone, name: str, number: str) -> None:
    """A recipient chosen: the picker gives way to the conversation (BACK from it returns to the list); text shared
    to Messages is the conversation's draft, files shared its attachments."""
    stack = dev.state.tasks["messages"]
    picker = stack.pop() if stack and stack[-1]["screen"] == "new_conversation" else {}
    open_conversation(dev, number, name)
    if "share" in picker:
        dev.state.fields[f"messages.{compose_field(dev.top_screen()['number'])}"] = picker["share"][:COMPOSE_MAX]
    if picker.get("attachments"):
        dev.top_screen()["attachments"] = list(picker["attachments"])


def receive_share(dev: Phone, shared: str, caller_uid: int, files: list[dict[str, str]] | None = None) -> None:
    """Text (ACTION_SEND, text/plain) or files (ACTION_SEND, or ACTION_SEND_MULTIPLE for several: ``files``, each
    ``{name, mime}``) shared to Messages from the share sheet: ShareIntentActivity starts, for the app that shared
    (the chooser starts the target as its caller), and shows the recipient picker; the person chosen gets a
    conversation whose draft is the text, or carries the files. The START line is the form devices print for a
    chooser's target (``flg=0xb080001``: NEW_DOCUMENT, MULTIPLE_TASK, FORWARD_RESULT, PREVIOUS_IS_TOP,
    GRANT_READ_URI_PERMISSION; the clip Intent.migrateExtraStreamToClipData makes of EXTRA_TEXT or EXTRA_STREAM,
    printed with its type and without its content), as captured for this very activity and for other apps' share
    targets in public sources. Files' share adds the DEFAULT category (DocumentsUI's ActionHandler does, and the
    line prints it); Chrome's adds none. Deviation: the picker goes on Messages' own task, so BACK from it returns to
    Messages' list (or home), not to the app that shared."""
    component = short_component(PKG, SHARE_ACTIVITY)
    if files:
        mimes = [f["mime"] for f in files]
        action = "SEND" if len(files) == 1 else "SEND_MULTIPLE"
        kind = common_mime(mimes)
        intent = (f"act=android.intent.action.{action} cat=[{CATEGORY_DEFAULT}] typ={kind} flg=0xb080001 "
                  f"cmp={component} clip={{{kind} {{...}}}} (has extras)")
        params = {"attachments": [f["name"] for f in files]}
    else:
        intent = (f"act=android.intent.action.SEND typ=text/plain flg=0xb080001 cmp={component}"
                  " clip={text/plain {...}} (has extras)")
        params = {"share": shared}
    dev.start_for_intent("messages", SHARE_ACTIVITY, intent, caller_uid)
    dev.push("messages", "new_conversation", **params)
    dev.state.fields.pop("messages.recipient", None)
    dev.bring_to_front("messages")
    dev.displayed("messages", SHARE_ACTIVITY)


# ---------------------------------------------------------------------------------------------------- screens
def build(dev: Phone, ctx: Ctx, screen: Screen) -> Node:
    root = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG,
                bg=ctx.theme.background)
    page = screen["screen"]
    if page == "conversation":
        return _conversation(dev, ctx, root, screen)
    if page == "new_conversation":
        return _picker(dev, ctx, root)
    return _conversation_list(dev, ctx, root)


def when(ctx: Ctx, time: str, today: datetime) -> str:
    """A message's time as the list shows it: the time of day today, the weekday within the week, else the date."""
    t = datetime.strptime(time, TIME_FORMAT)
    if t.date() == today.date():
        return ctx.locale.time(t.hour, t.minute)
    if 0 < (today.date() - t.date()).days < 7:
        return ctx.locale.seq("weekday_short")[(t.weekday() + 1) % 7]
    return ctx.t("messages.date", month=ctx.locale.seq("month_short")[t.month - 1], day=t.day)


def _conversation_list(dev: Phone, ctx: Ctx, root: Node) -> Node:
    st = dev.state
    query = st.fields.get("messages.search", "")
    root.add(search_box(ctx, PKG, ctx.top + ctx.dp(12), ctx.t("apps.messages_search"),
                        lambda x, y: dev.focus_field("messages", "search"), rid=f"{PKG}:id/search_box", value=query,
                        focused=st.focus == ("messages", "search")))
    y1 = ctx.top + ctx.dp(72)
    shown = [c for c in messages_state(dev).conversations if c.messages]
    if not shown:
        root.add(text(ctx, (ctx.content_left + ctx.dp(24), y1, ctx.content_right - ctx.dp(16), y1 + ctx.dp(56)),
                      ctx.t("apps.messages_empty"), 16, pkg=PKG, on_tap=lambda x, y: None))
    if query.strip():
        shown = [c for c in shown if search_matches(c.name, query) or query.strip() in c.number
                 or any(query.strip().casefold() in m.text.casefold() for m in c.messages)]
    shown.sort(key=lambda c: max(m.time for m in c.messages), reverse=True)  # stable: ties keep their order
    today = dev.now()
    rows = [(ctx.dp(76), lambda y, c=c: _conversation_row(dev, ctx, y, c, today)) for c in shown]
    root.add(scroll_list(ctx, PKG, "messages.main", y1, ctx.bottom, rows, st.scroll.get("messages.main", 0),
                         rid=f"{PKG}:id/list"))
    root.add(fab(ctx, PKG, ctx.content_right - ctx.dp(44), ctx.bottom - ctx.dp(44), "add",
                 ctx.t("apps.messages_start_chat"), lambda x, y: start_chat(dev),
                 rid=f"{PKG}:id/start_new_conversation_button"))
    return root


def _avatar(ctx: Ctx, x: int, y: int, size: int, name: str) -> Node:
    """A contact's round avatar with their initial (a person glyph for a number no contact has)."""
    palette = ((26, 115, 232), (217, 48, 37), (30, 142, 62), (249, 171, 0), (161, 66, 244), (0, 137, 123))
    colour = palette[sum(map(ord, name)) % len(palette)]
    node = Node(cls="android.widget.ImageView", bounds=(x, y, x + size, y + size), package=PKG,
                rid=f"{PKG}:id/conversation_icon", bg=colour, radius=-1, icon="" if name else "glyph:person",
                icon_color=(255, 255, 255))
    if name:
        node.add(Node(bounds=node.bounds, text=name[0].upper(), size=size // 2, align="center", fg=(255, 255, 255),
                      visual=True))
    return node


def _conversation_row(dev: Phone, ctx: Ctx, y: int, c: Conversation, today: datetime) -> Node:
    h = ctx.dp(76)
    left, right = ctx.content_left, ctx.content_right
    last = max(reversed(c.messages), key=lambda m: m.time)  # the latest; among equal times the last one listed
    unread = any(m.direction == "in" and not m.read for m in c.messages)
    row = Node(cls="android.widget.FrameLayout", bounds=(left, y, right, y + h), package=PKG,
               rid=f"{PKG}:id/swipeableContainer", on_tap=lambda x, yy: open_conversation(dev, c.number, c.name))
    row.add(_avatar(ctx, left + ctx.dp(16), y + (h - ctx.dp(48)) // 2, ctx.dp(48), c.name))
    x = left + ctx.dp(80)
    stamp_w = ctx.dp(72)
    colour = ctx.theme.on_surface if unread else ctx.theme.secondary
    row.add(text(ctx, (x, y + ctx.dp(12), right - ctx.dp(16) - stamp_w, y + ctx.dp(40)), c.name or c.number, 16,
                 bold=unread, pkg=PKG, rid=f"{PKG}:id/conversation_name"))
    row.add(text(ctx, (right - ctx.dp(16) - stamp_w, y + ctx.dp(12), right - ctx.dp(16), y + ctx.dp(40)),
                 when(ctx, last.time, today), 12, color=colour, bold=unread, align="end", pkg=PKG,
                 rid=f"{PKG}:id/conversation_timestamp"))
    row.add(text(ctx, (x, y + ctx.dp(40), right - ctx.dp(16), y + ctx.dp(64)), last.text or ", ".join(last.attachments), 14, color=colour,
                 bold=unread, pkg=PKG, rid=f"{PKG}:id/conversation_snippet"))
    return row


def _picker(dev: Phone, ctx: Ctx, root: Node) -> Node:
    st = dev.state
    root.add(app_bar(ctx, PKG, ctx.t("apps.messages_new_conversation"), up=lambda x, y: dev.press_back()))
    y = ctx.top + ctx.dp(56)
    typed = st.fields.get("messages.recipient", "")
    focused = st.focus == ("messages", "recipient")
    root.add(Node(cls="android.widget.MultiAutoCompleteTextView", bounds=(ctx.content_left, y, ctx.content_right,
                  y + ctx.dp(56)), package=PKG, rid=f"{PKG}:id/recipient_text_view",
                  text=typed or ctx.t("apps.messages_to"), size=ctx.sp(16), inset=ctx.dp(16), focusable=True,
                  focused=focused, fg=ctx.theme.on_surface if typed else ctx.theme.secondary,
                  on_tap=lambda x, yy: dev.focus_field("messages", "recipient")))
    y += ctx.dp(56)
    for name, number in _matching_people(dev, typed):
        row = list_row(ctx, PKG, y, name, number, icon="glyph:person",
                       on_tap=lambda x, yy, n=name, num=number: _choose(dev, n, num),
                       rid_title=f"{PKG}:id/contact_name", rid_summary=f"{PKG}:id/contact_details", desc=name)
        root.add(row)
        y += row.bounds[3] - row.bounds[1]
    return root


def _conversation(dev: Phone, ctx: Ctx, root: Node, screen: Screen) -> Node:
    st = dev.state
    number, name = screen.get("number", ""), screen.get("name", "")
    conversation = find(messages_state(dev), number) if number else None
    messages = conversation.messages if conversation is not None else []
    selected = screen.get("selected")
    if selected is not None:  # the message action mode: its bar replaces the toolbar
        bar = app_bar(ctx, PKG, "1", up=lambda x, y: screen.pop("selected", None),
                      actions=[("content_copy", ctx.t("messages.copy_text"), lambda x, y: copy_selected(dev, screen))])
        bar.children[0].desc, bar.children[0].icon = ctx.t("common.done"), "glyph:close"
        bar.children[1].rid = f"{PKG}:id/copy_text"
    else:
        bar = app_bar(ctx, PKG, name or number, up=lambda x, y: dev.press_back())
        bar.children[-1].rid = f"{PKG}:id/conversation_title"
    root.add(bar)
    field_id = compose_field(number)
    focused = st.focus == ("messages", field_id)
    bottom = keyboard_top(ctx) if st.focus is not None else ctx.bottom
    compose_h = ctx.dp(64)
    attached = screen.get("attachments", [])
    bar_y = bottom - compose_h
    list_y1, list_y2 = ctx.top + ctx.dp(56), bar_y - (ctx.dp(56) if attached else 0)
    size = ctx.sp(16)
    max_w = (ctx.content_right - ctx.content_left) * 3 // 4 - ctx.dp(24)
    rows = []
    for i, m in enumerate(messages):
        lines = [] if m.attachments and not m.text else (
            wrap(m.text, size, max_w, cjk=ctx.locale.cjk_font, arabic=ctx.locale.arabic_font) or [""])
        h = (len(lines) * int(size * 1.4) + ctx.dp(20) if lines else 0) + ctx.dp(8) + ctx.dp(60) * len(m.attachments)
        rows.append((h, lambda y, i=i, m=m, lines=lines: _bubble(dev, ctx, screen, y, i, m, lines, selected == i)))
    root.add(scroll_list(ctx, PKG, "messages.conversation", list_y1, list_y2, rows,
                         st.scroll.get("messages.conversation", BOTTOM), rid=f"{PKG}:id/messages_list"))
    body = draft(dev, number)
    if attached:  # the draft's files, as cards above the compose bar
        root.add(_draft_attachments(ctx, attached, (ctx.content_left, list_y2, ctx.content_right, bar_y)))
    root.add(Node(cls="android.widget.LinearLayout", bounds=(0, bar_y, ctx.width, bar_y + compose_h), package=PKG,
                  rid=f"{PKG}:id/compose_message_view", bg=ctx.theme.background))
    field_box = (ctx.content_left + ctx.dp(12), bar_y + ctx.dp(8), ctx.content_right - ctx.dp(64),
                 bar_y + compose_h - ctx.dp(8))

    def focus(x: int, y: int) -> None:
        screen.pop("paste", None)
        dev.focus_field("messages", field_id)

    def offer_paste(x: int, y: int) -> None:
        dev.focus_field("messages", field_id)
        if st.clipboard:
            screen["paste"] = draft(dev, number)

    root.add(Node(cls="android.widget.EditText", bounds=field_box, package=PKG, rid=f"{PKG}:id/compose_message_text",
                  text=body or ctx.t("messages.compose_hint"), size=size, inset=ctx.dp(16), focusable=True,
                  focused=focused, fg=ctx.theme.on_surface if body else ctx.theme.secondary, bg=ctx.theme.search_bar,
                  radius=(field_box[3] - field_box[1]) // 2, on_tap=focus, on_long_press=offer_paste))
    send_x = ctx.content_right - ctx.dp(56)
    send_button = Node(cls="android.widget.ImageView", bounds=(send_x, bar_y + ctx.dp(8), send_x + ctx.dp(48),
                       bar_y + ctx.dp(56)), package=PKG, rid=f"{PKG}:id/send_message_button_icon",
                       desc=ctx.t("messages.send"), icon="glyph:send", enabled=bool(body.strip() or attached),
                       icon_color=ctx.theme.accent if body.strip() or attached else ctx.theme.secondary,
                       on_tap=lambda x, y: send(dev, screen))
    root.add(send_button)
    if focused and screen.get("paste") == body and st.clipboard:
        root.add(_paste_toolbar(dev, ctx, screen, field_box))
    return root


def _bubble(dev: Phone, ctx: Ctx, screen: Screen, y: int, i: int, m: Message, lines: list[str],
            selected: bool) -> Node:
    """A message: a rounded bubble, received ones at the start, sent ones at the end; its TextView holds the whole
    text (what a dump reports), the lines it wraps to are drawn inside."""
    size = ctx.sp(16)
    line_h = int(size * 1.4)
    width = max((layout(line, size, cjk=ctx.locale.cjk_font, arabic=ctx.locale.arabic_font).width for line in lines),
                default=0)
    w = width + ctx.dp(24)
    h = len(lines) * line_h + ctx.dp(20) if lines else 0
    files_h = ctx.dp(60) * len(m.attachments)
    left, right = ctx.content_left + ctx.dp(12), ctx.content_right - ctx.dp(12)
    x1 = right - w if m.direction == "out" else left
    sent = m.direction == "out"
    colour = (255, 255, 255) if sent else ctx.theme.on_surface
    bg = SENT_BLUE if sent else ctx.theme.search_bar

    def choose(x: int, yy: int) -> None:
        screen["selected"] = i

    def tap(x: int, yy: int) -> None:
        if "selected" in screen:  # in the action mode a tap chooses this message instead
            screen["selected"] = i

    row = Node(cls="android.widget.LinearLayout", bounds=(ctx.content_left, y, ctx.content_right,
               y + files_h + h + ctx.dp(8)), package=PKG, rid=f"{PKG}:id/message_content", selected=selected,
               bg=ctx.theme.divider if selected else None)
    for k, name in enumerate(m.attachments):  # the files first, each a card with its icon and name
        card_w = min(right - left, ctx.dp(240))
        x = right - card_w if sent else left
        row.add(_attachment(ctx, name, (x, y + ctx.dp(4) + k * ctx.dp(60), x + card_w, y + k * ctx.dp(60) + ctx.dp(60)),
                            f"{PKG}:id/message_attachment"))
    y += files_h
    if not lines:
        return row
    bubble = Node(cls="android.widget.TextView", bounds=(x1, y + ctx.dp(4), x1 + w, y + ctx.dp(4) + h), package=PKG,
                  rid=f"{PKG}:id/message_text", text=m.text, bg=bg, radius=ctx.dp(18), on_tap=tap,
                  on_long_press=choose)
    for k, line in enumerate(lines):
        ly = y + ctx.dp(14) + k * line_h
        bubble.add(Node(bounds=(x1 + ctx.dp(12), ly, x1 + w - ctx.dp(12), ly + line_h), text=line, size=size,
                        fg=colour, visual=True))
    return row.add(bubble)


ATTACHMENT_GLYPHS = {"image": "image", "video": "video", "audio": "audio"}


def _attachment(ctx: Ctx, name: str, box: tuple[int, int, int, int], rid: str) -> Node:
    """A file a message carries, or its draft: a card with the file's type icon and its name."""
    x1, y1, x2, y2 = box
    card = Node(cls="android.widget.FrameLayout", bounds=box, package=PKG, rid=rid, desc=name, bg=ctx.theme.search_bar,
                radius=ctx.dp(12))
    g = ctx.dp(24)
    kind = mime_type(name).partition("/")[0]
    card.add(Node(cls="android.widget.ImageView", bounds=(x1 + ctx.dp(12), (y1 + y2 - g) // 2, x1 + ctx.dp(12) + g,
                  (y1 + y2 + g) // 2), package=PKG, icon=f"glyph:{ATTACHMENT_GLYPHS.get(kind, 'document')}",
                  icon_color=ctx.theme.accent))
    card.add(text(ctx, (x1 + ctx.dp(48), y1, x2 - ctx.dp(12), y2), name, 14, pkg=PKG, rid=f"{PKG}:id/attachment_name"))
    return card


def _draft_attachments(ctx: Ctx, names: list[str], box: tuple[int, int, int, int]) -> Node:
    """The files the draft carries, side by side above the compose field."""
    x1, y1, x2, y2 = box
    strip = Node(cls="android.widget.LinearLayout", bounds=box, package=PKG, rid=f"{PKG}:id/attachment_draft_view",
                 bg=ctx.theme.background)
    w = min(ctx.dp(240), (x2 - x1 - ctx.dp(12)) // max(1, len(names)))
    for k, name in enumerate(names):
        left = x1 + ctx.dp(12) + k * w
        strip.add(_attachment(ctx, name, (left, y1 + ctx.dp(4), left + w - ctx.dp(8), y2 - ctx.dp(4)),
                              f"{PKG}:id/attachment_preview"))
    return strip


def _paste_toolbar(dev: Phone, ctx: Ctx, screen: Screen, field_box: tuple[int, int, int, int]) -> Node:
    """Android's floating text toolbar over the field that was long-pressed, offering Paste."""
    x1, y1 = field_box[0] + ctx.dp(8), field_box[1] - ctx.dp(56)
    label = ctx.t("messages.paste")
    w = ctx.dp(96)
    card = Node(cls="android.widget.LinearLayout", bounds=(x1, y1, x1 + w, y1 + ctx.dp(48)), package=PKG)
    card.add(Node(bounds=(x1 - 1, y1 - 1, x1 + w + 1, y1 + ctx.dp(50)), bg=ctx.theme.divider, radius=ctx.dp(8),
                  visual=True))  # the card's edge and shadow
    card.add(Node(bounds=card.bounds, bg=ctx.theme.surface, radius=ctx.dp(8), visual=True))
    card.add(text(ctx, (x1, y1, x1 + w, y1 + ctx.dp(48)), label, 14, align="center", pkg=PKG,
                  rid="android:id/floating_toolbar_menu_item_text", on_tap=lambda x, y: paste(dev, screen)))
    return card

# ------------------------------------------------------------------------------------------ the SMS provider
# What ``content query --uri content://sms[/inbox|/sent]`` reads on an Android 10 device (TelephonyProvider's
# SmsProvider), made from the conversations, so that a task checks what was sent as on a real phone. Columns are
# Android's (``Telephony.TextBasedSmsColumns``) that the state gives: ``_id``, ``thread_id``, ``address``, ``body``,
# ``date`` (ms since 1970 on the phone's clock), ``type`` (1 received, 2 sent) and ``read`` (1 or 0), newest first
# (SmsProvider's ``date DESC``). Deviation: ``_id`` numbers the messages in the order of their times (SmsProvider
# numbers them in the order they were written), and a thread is a conversation's place in Messages' list, from 1.
MESSAGE_TYPE = {"in": 1, "out": 2}  # Telephony.TextBasedSmsColumns.MESSAGE_TYPE_INBOX, MESSAGE_TYPE_SENT
BOXES = {"": None, "inbox": 1, "sent": 2, "draft": 3, "outbox": 4, "failed": 5, "queued": 6}  # content://sms/<box>
COLUMNS = ("_id", "thread_id", "address", "body", "date", "type", "read")


def sms_rows(state: DeviceState, box: str = "") -> list[dict[str, int | str]]:
    """The rows of ``content://sms/<box>`` (``box`` "" for ``content://sms``: every message), newest first, each a
    mapping of :data:`COLUMNS`. The simulated phone's drafts, outbox, failed and queued boxes are always empty (a
    draft is the compose field's text, not a row). An unknown box is an error naming the known ones."""
    if box not in BOXES:
        raise VluiError(f"content://sms/{box}: no such box; boxes: {', '.join(b for b in BOXES if b)}")
    messages = state.app("messages", MessagesState)
    found = [(m.time, thread, m) for thread, c in enumerate(messages.conversations, 1) for m in c.messages
             if not m.attachments]  # a message with files is an MMS: content://mms holds it
    numbers = {thread: c.number for thread, c in enumerate(messages.conversations, 1)}
    found.sort(key=lambda row: row[0])  # stable: messages of one minute keep their order
    rows = []
    for n, (time, thread, m) in enumerate(found, 1):
        date = int((datetime.strptime(time, TIME_FORMAT) - EPOCH).total_seconds() * 1000)
        kind = MESSAGE_TYPE[m.direction]
        if BOXES[box] in (None, kind):
            rows.append({"_id": n, "thread_id": thread, "address": numbers[thread], "body": m.text, "date": date,
                         "type": kind, "read": int(m.read or m.direction == "out")})
    return rows[::-1]
