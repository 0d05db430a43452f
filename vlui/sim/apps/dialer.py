"""Phone: the Google dialer on Android 10 (the Pixel's, ``com.google.android.dialer``), or AOSP's Dialer
(``com.android.dialer``, the Phone app of the android-29 google_apis images B-MoCA release 2.5 runs on; a phone
whose ``DeviceState.dialer`` is ``aosp``): the main screen, the dial pad, outgoing and emergency calls, the in-call
screen. The two share their code and ids (Google's dialer is built from AOSP's) and differ where AOSP's shows
otherwise: its package; its main screen's bottom navigation and its ids; its dial pad,
which formats the digits as they are typed, and its in-call screen, which shows the number formatted, both as
libphonenumber does for a US phone (:mod:`vlui.android.phonenumbers`). On either, Telecom logs what a real device
logs when a call is placed (``EventRecord added as Call`` and ``processOutgoingCallIntent`` with the number), when
the number is an emergency number (``Emergency number detected``) and when the call is removed (``onCallRemoved``).

The dialer's own state, :class:`DialerState` (the digits on the dial pad, the call in progress), is typed here and
registered with the app (:data:`vlui.sim.apps.APPS`); a snapshot or a task sets it under ``phone:`` (``{call: {number:
'6505550123', started_ms: ...}}`` starts with the call in progress, its in-call screen in front)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypedDict, get_args

from vlui.android.apps import app_info
from vlui.android.ids import DIALPAD_KEY_IDS
from vlui.android.phonenumbers import as_you_type, incall_number
from vlui.android.state import EDIT_TEXT_MAX, DeviceState
from vlui.sim.protocol import Phone
from vlui.sim.ui import Node
from vlui.sim.widgets import Ctx, fab, search_box, tabs, text

ScreenName = Literal["main", "keypad", "incall"]  # favourites, the dial pad, the call in progress
SCREENS: tuple[str, ...] = get_args(ScreenName)


class Screen(TypedDict):
    """A screen on the dialer's task."""

    screen: ScreenName


@dataclass
class Call:
    """A call in progress: the number, when it was placed (the virtual clock), whether it is an emergency call, and
    Telecom's id for it (``onCallRemoved`` logs it)."""

    number: str
    started_ms: int
    emergency: bool = False
    id: str = "TC@1"


@dataclass
class DialerState:
    """What the dialer remembers: the digits typed on its dial pad and the call in progress."""

    digits: str = ""
    call: Call | None = None


def dialer_state(dev: Phone) -> DialerState:
    """The dialer's own state on the phone ``dev``."""
    return dev.state.app("phone", DialerState)


def package(dev: Phone) -> str:
    """The package of the phone's Phone app: the Google dialer's, or AOSP's Dialer's."""
    return app_info("phone", dev.state.dialer).package


def aosp(dev: Phone) -> bool:
    """Whether the phone's Phone app is AOSP's Dialer."""
    return dev.state.dialer == "aosp"


DIALABLE = "0123456789*#+,;"  # what the dial pad's field keeps of typed text (PhoneNumberUtils' dialable chars)
EMERGENCY_NUMBERS = ("911", "112", "999", "000", "110", "119", "08")
KEYPAD = (("1", ""), ("2", "ABC"), ("3", "DEF"), ("4", "GHI"), ("5", "JKL"), ("6", "MNO"), ("7", "PQRS"),
          ("8", "TUV"), ("9", "WXYZ"), ("*", ""), ("0", "+"), ("#", ""))
CALL_GREEN = (30, 142, 62)
END_RED = (217, 48, 37)


def on_launch(dev: Phone, key: str, created: bool) -> None:
    if created:
        dev.logi("Dialer", "MainActivity.onCreate", app="phone", offset_ms=120)


def on_back(dev: Phone, key: str) -> bool:
    screen = dev.top_screen()
    if screen and screen["screen"] == "incall":  # BACK leaves the call running; the in-call screen stays
        return True
    return False


def on_state_set(st: DeviceState, fields: dict[str, Any]) -> None:
    """A snapshot or a task that starts with a call in progress (``fields``: what it set of the dialer's state):
    the dialer's in-call screen is in front."""
    if fields.get("call") is not None:
        st.tasks["phone"] = [{"screen": "incall"}]
        st.top = "phone"
        if "phone" in st.recents:
            st.recents.remove("phone")
        st.recents.insert(0, "phone")
        if "phone" not in st.running:
            st.running.append("phone")


def on_restart(dev: Phone) -> None:
    """The framework restarted: Telecom's call is gone, and the digits the dialer's process held."""
    dialer = dialer_state(dev)
    dialer.call, dialer.digits = None, ""


def place_call(dev: Phone) -> None:
    """The dial pad's call button: Telecom places a call to the typed number and the in-call screen opens."""
    number = dialer_state(dev).digits
    if not number:
        return
    _outgoing_call(dev, number)


def call_intent(dev: Phone, number: str, caller_uid: int) -> None:
    """An ``android.intent.action.CALL`` intent for ``tel:number`` from a process other than the dialer (``am start``
    from the shell): Telecom's UserCallActivity places the call and the in-call screen comes to the front. An
    emergency number is not called: Telecom opens the dial pad with the number typed, for the user to confirm."""
    st = dev.state
    dev.logi("ActivityTaskManager", f"START u0 {{act=android.intent.action.CALL dat=tel:xxxxxxxxxx flg=0x10000000 "
             f"cmp=com.android.server.telecom/.components.UserCallActivity}} from uid {caller_uid}")

    info = app_info("phone", st.dialer)
    dev.start_process("phone", info, info.activity)
    stack = st.tasks.setdefault("phone", [])
    dev.bring_to_front("phone")
    if number in EMERGENCY_NUMBERS:
        dev.logi("Telecom", f"NewOutgoingCallIntentBroadcaster: Cannot call potential emergency number {number} "
                 "with CALL Intent Intent { act=android.intent.action.CALL dat=tel:xxx } unless caller is system or "
                 "default dialer.", level="W", offset_ms=4)
        while stack and stack[-1]["screen"] != "main":
            stack.pop()
        if not stack:
            stack.append({"screen": "main"})
        stack.append({"screen": "keypad"})
        dialer_state(dev).digits = number[:EDIT_TEXT_MAX]
        return
    _outgoing_call(dev, number)


def dial_intent(dev: Phone, number: str) -> None:
    """``DIAL`` (or ``VIEW``) of ``tel:number`` from another app: the dialer comes to the front on its dial pad
    with the number typed, and nothing is called (an empty number: the dial pad, empty)."""
    st = dev.state
    stack = st.tasks.setdefault("phone", [])
    while stack and stack[-1]["screen"] not in ("main", "incall"):
        stack.pop()
    if not stack:
        stack.append({"screen": "main"})
    stack.append({"screen": "keypad"})
    dialer_state(dev).digits = number[:EDIT_TEXT_MAX]  # the digits field's length (a single-line EditText)
    dev.bring_to_front("phone")


def _outgoing_call(dev: Phone, number: str) -> None:
    st = dev.state
    call_id = f"TC@{st.next_pid % 97 + 1}"
    dev.logi("Telecom", f"LogUtils: EventRecord added as Call: {call_id}", app=None)
    dev.logi("Telecom", f"UserCallIntentProcessor: processOutgoingCallIntent: handle=tel:{number}", offset_ms=4)
    emergency = number in EMERGENCY_NUMBERS
    if emergency:
        dev.logi("Telecom", f"NewOutgoingCallIntentBroadcaster: processIntent: Emergency number detected: "
                 f"{number}", offset_ms=8)
    dialer = dialer_state(dev)
    dialer.call = Call(number, st.time_ms, emergency, call_id)
    dialer.digits = ""
    dev.start_activity("phone", "incall", f"{package(dev)}/com.android.incallui.InCallActivity", extras=False)


def end_call(dev: Phone) -> None:
    st, dialer = dev.state, dialer_state(dev)
    if dialer.call is None:
        return
    dev.logi("Telecom", f"InCallController: onCallRemoved: {dialer.call.id}", app=None)
    dialer.call = None
    stack = st.tasks.get("phone", [])
    while stack and stack[-1]["screen"] == "incall":
        stack.pop()
    if not stack:
        st.tasks["phone"] = [{"screen": "main"}]


def build(dev: Phone, ctx: Ctx, screen: Screen) -> Node:
    page = screen["screen"]
    pkg = package(dev)
    root = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=pkg,
                bg=ctx.theme.background)
    if page == "incall":
        return in_call(dev, ctx, root, pkg)
    if page == "keypad":
        return keypad(dev, ctx, root, pkg)
    # main: search bar, favourites, the bottom navigation, the dial pad button
    root.add(search_box(ctx, pkg, ctx.top + ctx.dp(12), ctx.t("phone.search_contacts"),
                        lambda x, y: None, rid=f"{pkg}:id/search_box_collapsed"))
    root.add(text(ctx, (0, ctx.top + ctx.dp(200), ctx.width, ctx.top + ctx.dp(240)), ctx.t("phone.no_favorites"), 16,
                  color=ctx.theme.secondary, align="center", pkg=pkg, rid=f"{pkg}:id/empty_list_view_message"))
    tab_y = ctx.bottom - ctx.dp(56)
    root.add(aosp_nav(ctx, pkg, tab_y) if aosp(dev) else
             tabs(ctx, pkg, tab_y, [(ctx.t("phone.favorites"), "star", True, lambda x, y: None),
                                    (ctx.t("phone.recents"), "history", False, lambda x, y: None),
                                    (ctx.t("phone.contacts"), "person", False, lambda x, y: None)], h_dp=56,
                  rid=f"{pkg}:id/bottom_navigation"))

    def open_keypad(x, y):
        dev.push("phone", "keypad")

    root.add(fab(ctx, pkg, ctx.content_right - ctx.dp(44), tab_y - ctx.dp(44), "keypad", ctx.t("phone.keypad"),
                 open_keypad, rid=f"{pkg}:id/fab"))
    return root


def aosp_nav(ctx: Ctx, pkg: str, y: int) -> Node:
    """AOSP Dialer's bottom navigation (``BottomNavBar``): its speed dial tab (``tab_title_speed_dial``, "Favorites",
    selected on a fresh phone), call log ("Recents") and contacts tabs; its voicemail tab shows only with a voicemail
    account, which the release's emulators have not."""
    nav = tabs(ctx, pkg, y, [(ctx.t("phone.favorites"), "star", True, lambda x, y: None),
                             (ctx.t("phone.recents"), "history", False, lambda x, y: None),
                             (ctx.t("phone.contacts"), "person", False, lambda x, y: None)], h_dp=56)
    nav.rid = f"{pkg}:id/bottom_nav_bar"
    for tab, rid in zip(nav.children, ("speed_dial_tab", "call_log_tab", "contacts_tab"), strict=True):
        tab.rid = f"{pkg}:id/{rid}"
    return nav


def keypad(dev: Phone, ctx: Ctx, root: Node, pkg: str) -> Node:
    """The dial pad: the digits (AOSP's formatted as they are typed), backspace, the twelve keys, call."""
    dialer = dialer_state(dev)
    digits_y2 = ctx.top + ctx.dp(96)
    shown = as_you_type(dialer.digits) if aosp(dev) else dialer.digits
    root.add(Node(cls="android.widget.EditText", bounds=(ctx.dp(56), ctx.top + ctx.dp(24), ctx.width - ctx.dp(56),
                  digits_y2), package=pkg, rid=f"{pkg}:id/digits", text=shown, size=ctx.sp(34), align="center",
                  fg=ctx.theme.on_surface, focusable=True, mirror=False))

    def backspace(x, y):
        dialer.digits = dialer.digits[:-1]

    if dialer.digits:
        root.add(Node(cls="android.widget.ImageButton", bounds=(ctx.width - ctx.dp(56), ctx.top + ctx.dp(36),
                      ctx.width - ctx.dp(8), ctx.top + ctx.dp(84)), package=pkg, rid=f"{pkg}:id/deleteButton",
                      desc=ctx.t("phone.delete_digit"), icon="glyph:delete_digit", icon_color=ctx.theme.icon,
                      on_tap=backspace, mirror=False))
    call_y = ctx.bottom - ctx.dp(56)
    key_w = min(ctx.dp(112), (ctx.content_right - ctx.content_left) // 3)
    key_h = min(ctx.dp(80), (call_y - ctx.dp(56) - digits_y2 - ctx.dp(16)) // 4)
    x0 = (ctx.width - 3 * key_w) // 2
    y0 = digits_y2 + ctx.dp(16)
    pad = Node(cls="android.widget.TableLayout", bounds=(x0, y0, x0 + 3 * key_w, y0 + 4 * key_h), package=pkg,
               rid=f"{pkg}:id/dialpad_view", mirror=False)
    for i, (digit, letters) in enumerate(KEYPAD):
        r, c = divmod(i, 3)
        kx, ky = x0 + c * key_w, y0 + r * key_h

        def press(x, y, d=digit):
            dialer.digits = (dialer.digits + d)[:EDIT_TEXT_MAX]

        key = Node(cls="android.widget.FrameLayout", bounds=(kx, ky, kx + key_w, ky + key_h), package=pkg,
                   rid=f"{pkg}:id/{DIALPAD_KEY_IDS[digit]}",
                   desc=f"{digit},{letters}" if letters else digit, on_tap=press, mirror=False)
        key.add(Node(bounds=(kx, ky, kx + key_w, ky + key_h * 2 // 3), text=digit, size=ctx.sp(30), align="center",
                     fg=ctx.theme.on_surface, visual=True, mirror=False))
        if letters:
            key.add(Node(bounds=(kx, ky + key_h * 3 // 5, kx + key_w, ky + key_h - ctx.dp(4)), text=letters,
                         size=ctx.sp(11), align="center", fg=ctx.theme.secondary, visual=True, mirror=False))
        pad.add(key)
    root.add(pad)
    root.add(fab(ctx, pkg, ctx.width // 2, call_y, "call", ctx.t("phone.call"), lambda x, y: place_call(dev),
                 rid=f"{pkg}:id/dialpad_floating_action_button", color=CALL_GREEN))
    return root


def in_call(dev: Phone, ctx: Ctx, root: Node, pkg: str) -> Node:
    """The call in progress: its status, the number (AOSP's formatted for the phone's country), the call's buttons
    and end call."""
    root.bg = (32, 33, 36) if not ctx.theme.dark else (0, 0, 0)
    call = dialer_state(dev).call or Call("", 0)
    white = (255, 255, 255)
    y = ctx.top + ctx.dp(64)
    root.add(text(ctx, (0, y, ctx.width, y + ctx.dp(32)), ctx.t("phone.emergency_call" if call.emergency
                                                                else "phone.calling"), 16, color=white,
                  align="center", pkg=pkg, rid=f"{pkg}:id/contactgrid_status_text"))
    number = incall_number(call.number) if aosp(dev) else call.number
    root.add(Node(cls="android.widget.TextView", bounds=(0, y + ctx.dp(40), ctx.width, y + ctx.dp(96)), package=pkg,
                  rid=f"{pkg}:id/contactgrid_contact_name", text=number, size=ctx.sp(34), align="center",
                  fg=white, mirror=False))
    grid_y = ctx.top + (ctx.bottom - ctx.top) // 2
    cell = min(ctx.dp(104), ctx.width // 3)
    x0 = (ctx.width - 3 * cell) // 2
    for i, (glyph_name, key) in enumerate((("mic_off", "mute"), ("keypad", "keypad"), ("speaker_phone", "speaker"),
                                           ("add", "add_call"), ("pause", "hold"), ("history", "recents"))):
        r, c = divmod(i, 3)
        bx, by = x0 + c * cell, grid_y + r * ctx.dp(96)
        b = Node(cls="android.widget.ToggleButton", bounds=(bx, by, bx + cell, by + ctx.dp(88)), package=pkg,
                 desc=ctx.t(f"phone.{key}"), checkable=True, on_tap=lambda x, y: None)
        g = ctx.dp(28)
        b.add(Node(bounds=(bx + (cell - g) // 2, by + ctx.dp(12), bx + (cell + g) // 2, by + ctx.dp(12) + g),
                   icon=f"glyph:{glyph_name}", icon_color=white, visual=True))
        b.add(Node(bounds=(bx, by + ctx.dp(52), bx + cell, by + ctx.dp(76)), text=ctx.t(f"phone.{key}"),
                   size=ctx.sp(12), align="center", fg=white, visual=True))
        root.add(b)
    root.add(fab(ctx, pkg, ctx.width // 2, ctx.bottom - ctx.dp(72), "call_end", ctx.t("phone.end_call"),
                 lambda x, y: end_call(dev), rid=f"{pkg}:id/incall_end_call", color=END_RED))
    return root
