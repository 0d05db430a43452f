"""Clock (DeskClock on Android 10): Alarm, Clock, Timer and Stopwatch tabs and the alarm time picker.

The time picker's dial is a circle (Material) or a rectangle, chosen by the snapshot; both select hours then
minutes by the angle of the touch around the dial's centre, as Android's RadialTimePickerView does. Switching an
existing alarm on logs ``AlarmClock: Created new alarm instance``; any change of the next alarm logs the schedule
condition provider's ``nextUserAlarmTime`` with its time of day. Selecting another tab logs ``Events: [<Tab>] [Show Tab]
[Tap]``, the stopwatch's buttons ``Events: [Stopwatch] [Start|Pause|Reset] [Tap]``, a deleted alarm ``Removed alarm``.
No other ``AlarmClock`` line holds the words Start, Pause or Reset: B-MoCA's stopwatch detectors match them anywhere.

Deviation from DeskClock, on purpose: a real device prints "Created new alarm instance" also when a *new* alarm is
saved, which makes B-MoCA's "turn on alarm at 9 am" detector fire on every "create alarm at ..." trajectory. Here a
new alarm logs "Added alarm" and "Scheduled alarm instance" instead, so each detector fires only for its own task.

The Alarm tab lists a card an alarm, in a list that scrolls. A card expands (its arrow, or a tap on it; one at a time;
a new alarm's card comes expanded and scrolled to, as AlarmClockFragment shows it) to show, as DeskClock's
alarm_time_expanded.xml, the Repeat checkbox (``repeat_onoff``), while the alarm repeats the seven day buttons
(``day_button_box`` in ``repeat_days``: the day's narrow name, its full name as content description, from the
locale's first day of the week, mirrored on a right-to-left phone) and Vibrate (``vibrate_onoff``); a collapsed card
names the days it repeats on (``days_of_week``: "Every day", or the days' short names). Checking Repeat makes the
alarm repeat every day, or on the days it repeated on before Repeat was cleared (AlarmTimeClickHandler); a day button
adds or removes its day. The days are the alarm's ``days``, the ``daysofweek`` column B-MoCA's evaluators read
(:func:`alarm_rows`). Expanding and collapsing log ``Events: [Alarm] [Expand|Collapse] [Tap]`` (``Expand Implied``
for a tap on the card), Repeat ``[Toggle Repeat Days]``; a change of days of an alarm that is on logs its instance
scheduled again and, where its next time moved, the schedule condition provider's line. Not drawn: the ringtone and
label rows of the expanded card (nothing the tasks use; the label shows on the card when it has one), and the
collapsed card's "Today"/"Tomorrow"; the collapsed card keeps the Delete button that DeskClock shows only expanded.

Clock's own state, :class:`ClockState` (its alarms, the selected tab, the stopwatch, the timer, the time picker), is
typed here and registered with the app (:data:`vlui.sim.apps.APPS`); the phone keeps it among its apps' states
(``DeviceState.apps["clock"]``) and a snapshot or a task sets it under ``clock:`` (``{tab: stopwatch, stopwatch:
{running: true}}``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal, TypedDict, get_args

from vlui.android import app_data
from vlui.android.app_data import AlarmRow
from vlui.android.i18n import locales
from vlui.android.ids import ALL_DAYS, day_bit
from vlui.android.state import DeviceState, bounded
from vlui.sim.protocol import Phone
from vlui.sim.render import angle_of
from vlui.sim.ui import Node
from vlui.sim.widgets import Ctx, button, fab, scroll_list, tabs, text

PKG = "com.google.android.deskclock"
TABS = (("alarm", "alarm", "Alarm"), ("clock", "clock", "Clock"), ("timer", "timer", "Timer"),
        ("stopwatch", "stopwatch", "Stopwatch"))
ScreenName = Literal["main"]  # one activity: its tabs and the time picker are its state (ClockState.tab, .picker)
SCREENS: tuple[str, ...] = get_args(ScreenName)
Tab = Literal["alarm", "clock", "timer", "stopwatch"]


class Screen(TypedDict):
    """A screen on Clock's task."""

    screen: ScreenName


@dataclass
class Alarm:
    """An alarm in Clock's list: its time of day, whether it is on, its label, and the days it repeats on
    (``days``: DeskClock's ``daysofweek`` bits, Monday 1, Tuesday 2, ... Sunday 64; 0 rings once)."""

    id: int = bounded(1, 10**6)
    hour: int = bounded(0, 23)
    minute: int = bounded(0, 59)
    enabled: bool = False
    label: str = ""
    vibrate: bool = True
    days: int = bounded(0, ALL_DAYS, default=0)
    # the days Repeat last cleared, which checking it again brings back (AlarmTimeClickHandler keeps them in memory)
    days_before_repeat_off: int = bounded(0, ALL_DAYS, default=0)


@dataclass
class Stopwatch:
    """The stopwatch: running since ``started_ms`` (the virtual clock) on top of ``elapsed_ms`` counted before."""

    running: bool = False
    started_ms: int = 0
    elapsed_ms: int = 0


@dataclass
class Timer:
    """The timer: the duration typed on its keypad, then running until ``end_ms`` or paused with ``left_ms`` left."""

    digits: str = ""  # typed on the timer's keypad, up to 6: HHMMSS filled from the right
    end_ms: int | None = None  # a running timer rings at this time
    left_ms: int = 0  # a paused timer's remaining time
    length_ms: int = 0  # the duration it was started with (DeskClock's Timer.length), 0 until started and once deleted


@dataclass
class TimePicker:
    """The alarm time picker while it shows: the time it holds, the hand its dial sets, the alarm it edits (None: a
    new one)."""

    hour: int = bounded(0, 23)
    minute: int = bounded(0, 59)
    mode: Literal["hour", "minute"] = "hour"
    alarm: int | None = None


@dataclass
class ClockState:
    """What Clock remembers: its alarms (two preset ones, off), the tab it last showed, the stopwatch, the timer, the
    time picker while it shows and the alarm whose card is expanded."""

    alarms: list[Alarm] = field(default_factory=lambda: [Alarm(1, 9, 0, False), Alarm(2, 8, 30, False)])
    next_alarm_id: int = bounded(1, 10**6, default=3)
    tab: Tab = "alarm"
    stopwatch: Stopwatch = field(default_factory=Stopwatch)
    timer: Timer = field(default_factory=Timer)
    picker: TimePicker | None = None
    expanded: int | None = None  # the alarm whose card is expanded (one at a time, as AlarmClockFragment keeps)


def clock_state(dev: Phone) -> ClockState:
    """Clock's own state on the phone ``dev``."""
    return dev.state.app("clock", ClockState)


def alarm_rows(state: DeviceState) -> list[dict[str, int]]:
    """Clock's alarms as DeskClock's database holds them (``alarms.db``, table ``alarm_templates``, which B-MoCA's
    evaluators read), in the list's order: ``hour``, ``minutes``, ``daysofweek`` (the days it repeats on, Monday 1,
    Tuesday 2, ... Sunday 64; 0 for a one-time alarm) and ``enabled`` (1 or 0)."""
    return [{"hour": a.hour, "minutes": a.minute, "daysofweek": a.days, "enabled": int(a.enabled)}
            for a in state.app("clock", ClockState).alarms]


def on_back(dev: Phone, key: str) -> bool:
    clock = clock_state(dev)
    if clock.picker is not None:
        clock.picker = None
        return True
    return False


def on_restart(dev: Phone) -> None:
    """The framework restarted: the time picker, which only Clock's process held, is gone."""
    clock_state(dev).picker = None


def event(dev: Phone, category: str, action: str) -> None:
    dev.logi("AlarmClock", f"Events: [{category}] [{action}] [Tap]", app="clock")


# ---------------------------------------------------------------------------------------------------- alarms
def next_alarm(dev: Phone):
    """The datetime the next enabled alarm rings, or None: a one-time alarm at its next time of day, a repeating one
    at the first of its days when that time is still to come (Alarm.getNextAlarmTime)."""
    now = dev.now()
    return min((ring_time(a, now) for a in clock_state(dev).alarms if a.enabled), default=None)


def ring_time(alarm: Alarm, now: datetime) -> datetime:
    """When ``alarm`` (on) next rings after ``now``."""
    t = now.replace(hour=alarm.hour, minute=alarm.minute, second=0, microsecond=0)
    if t <= now:
        t += timedelta(days=1)
    while alarm.days and not alarm.days & 1 << t.weekday():  # datetime's weekday: Monday 0, as the bits
        t += timedelta(days=1)
    return t


def alarms_db(dev: Phone) -> bytes:
    """Clock's ``alarms.db`` as DeskClock holds it now (:func:`vlui.android.app_data.alarms_db`): the list's alarms,
    and the next ringing of each that is on."""
    now = dev.now()

    def row(a: Alarm) -> AlarmRow:
        t = ring_time(a, now) if a.enabled else None
        ring = (t.year, t.month, t.day, t.hour, t.minute, int((t - now).total_seconds() * 1000)) if t else None
        return AlarmRow(a.id, a.hour, a.minute, a.days, a.enabled, a.vibrate, a.label, ring)

    return app_data.alarms_db([row(a) for a in clock_state(dev).alarms], locales()[dev.snapshot.locale]["android"])


def _alarms_changed(dev: Phone) -> None:
    nxt = next_alarm(dev)
    now = dev.now()

    def ts(t):
        return f"{t:%a %b %d %H:%M:%S} GMT {t:%Y} ({int(t.timestamp() * 1000)})" if t else "null"

    dev.logi("ConditionProviders.SCP", f"evaluateSubscriptionLocked cal=null, now={ts(now)}, "
             f"nextUserAlarmTime={ts(nxt)}", level="D", offset_ms=60)


def set_days(dev: Phone, alarm: Alarm, days: int) -> None:
    """The alarm repeats on ``days`` (AlarmUpdateHandler.asyncUpdateAlarm): an enabled alarm's instance is made
    again for its next time, and the schedule's next alarm is evaluated again where that moved."""
    if alarm.days == days:
        return
    before = next_alarm(dev)
    alarm.days = days
    if alarm.enabled:
        _instance_scheduled(dev, alarm)
        if next_alarm(dev) != before:
            _alarms_changed(dev)


def _instance(alarm: Alarm) -> str:
    return f"AlarmInstance{{id={alarm.id}, alarmId={alarm.id}, time={alarm.hour:02d}:{alarm.minute:02d}}}"


def _instance_scheduled(dev: Phone, alarm: Alarm) -> None:
    # A real Clock logs "Created new alarm instance" for every instance it makes; the simulated one keeps those words
    # for an alarm switched on (the module's deviation), so B-MoCA's "turn on alarm at 9 am" detector fires only there
    dev.logi("AlarmClock", f"Scheduled alarm instance: {_instance(alarm)}", app="clock")


def toggle_repeat(dev: Phone, alarm: Alarm) -> None:
    """The Repeat checkbox (AlarmTimeClickHandler.setAlarmRepeatEnabled): checked, the days Repeat last cleared come
    back, or every day; cleared, the days are kept in memory and the alarm rings once."""
    event(dev, "Alarm", "Toggle Repeat Days")
    if alarm.days:
        alarm.days_before_repeat_off = alarm.days
        set_days(dev, alarm, 0)
    else:
        set_days(dev, alarm, alarm.days_before_repeat_off or ALL_DAYS)


def set_enabled(dev: Phone, alarm: Alarm, enabled: bool, new: bool = False) -> None:
    if alarm.enabled == enabled:
        return
    alarm.enabled = enabled
    if enabled and new:
        dev.logi("AlarmClock", f"Added alarm: id={alarm.id}, time={alarm.hour:02d}:{alarm.minute:02d}", app="clock")
        _instance_scheduled(dev, alarm)
    elif enabled:
        dev.logi("AlarmClock", f"Created new alarm instance: {_instance(alarm)}", app="clock")
    else:
        dev.logi("AlarmClock", f"Alarm disabled: id={alarm.id}", app="clock")
    _alarms_changed(dev)


def delete_alarm(dev: Phone, alarm: Alarm) -> None:
    clock = clock_state(dev)
    clock.alarms.remove(alarm)
    if clock.expanded == alarm.id:
        clock.expanded = None
    dev.logi("AlarmClock", f"Removed alarm: id={alarm.id}, time={alarm.hour:02d}:{alarm.minute:02d}", app="clock")
    if alarm.enabled:
        _alarms_changed(dev)


def save_picker(dev: Phone) -> Alarm:
    clock = clock_state(dev)
    p = clock.picker
    hour = p.hour
    if p.alarm is None:
        alarm = Alarm(clock.next_alarm_id, hour, p.minute, False)
        clock.next_alarm_id += 1
        clock.alarms.append(alarm)
        clock.alarms.sort(key=lambda a: (a.hour, a.minute))
    else:
        alarm = next(a for a in clock.alarms if a.id == p.alarm)
        alarm.hour, alarm.minute, alarm.enabled = hour, p.minute, False
    new = p.alarm is None
    clock.picker = None
    clock.expanded = alarm.id  # the alarm set is scrolled to and expanded (AlarmClockFragment.scrollToAlarm)
    set_enabled(dev, alarm, True, new=new)
    return alarm


def set_alarm_intent(dev: Phone, hour: int | None, minutes: int, message: str, skip_ui: bool) -> bool:
    """``AlarmClock.ACTION_SET_ALARM`` as DeskClock's HandleApiCalls handles it: without an hour, Clock opens on
    its Alarm tab with the time picker up for a new alarm; a bad hour or minute is refused (logged, nothing set);
    an alarm with the same time and label is switched on, otherwise a new one is added, switched on. The Alarm tab
    comes to the front unless ``skip_ui``. (DeskClock also shows an "Alarm set for ..." toast; the simulated
    phone has no toasts.) Returns whether Clock's screen was shown."""
    clock = clock_state(dev)
    if hour is None:
        clock.tab = "alarm"
        clock.picker = TimePicker(12 if dev.locale.meta["hour12"] else 0, 0)
        dev.logi("AlarmClock", "HandleApiCalls no/invalid time; opening UI", app="clock", offset_ms=30)
        _show(dev)
        return True
    if not 0 <= hour <= 23:
        dev.logi("AlarmClock", f"Illegal hour: {hour}", level="E", app="clock", offset_ms=30)
        return False
    if not 0 <= minutes <= 59:
        dev.logi("AlarmClock", f"Illegal minute: {minutes}", level="E", app="clock", offset_ms=30)
        return False
    existing = next((a for a in clock.alarms if (a.hour, a.minute, a.label) == (hour, minutes, message)), None)
    if existing is not None:
        set_enabled(dev, existing, True)
    else:
        alarm = Alarm(clock.next_alarm_id, hour, minutes, False, label=message)
        clock.next_alarm_id += 1
        clock.alarms.append(alarm)
        clock.alarms.sort(key=lambda a: (a.hour, a.minute))
        dev.logi("AlarmClock", "Events: [Alarm] [Create] [Intent]", app="clock", offset_ms=20)
        set_enabled(dev, alarm, True, new=True)
    if not skip_ui:
        clock.tab = "alarm"
        _show(dev)
    return not skip_ui


def show_alarms_intent(dev: Phone) -> None:
    """``AlarmClock.ACTION_SHOW_ALARMS``: Clock in front, on its Alarm tab."""
    clock_state(dev).tab = "alarm"
    _show(dev)


def _show(dev: Phone) -> None:
    """Clock's task in front (DeskClock's activity, created if Clock had no task)."""
    st = dev.state
    if "clock" not in st.tasks:
        st.tasks["clock"] = [{"screen": "main"}]
    dev.bring_to_front("clock")


# ---------------------------------------------------------------------------------------------------- screens
def build(dev: Phone, ctx: Ctx, screen: Screen) -> Node:
    clock = clock_state(dev)
    root = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG,
                bg=ctx.theme.background)
    items = []
    for tab, glyph_name, category in TABS:
        def select(x, y, tab=tab, category=category):
            if clock.tab != tab:  # as DeskClock: a tab's Show Tab event on a change of tab, not on a reselect
                clock.tab = tab
                event(dev, category, "Show Tab")
        items.append((ctx.t(f"clock.{tab}"), glyph_name, clock.tab == tab, select))
    root.add(tabs(ctx, PKG, ctx.top, items, h_dp=64, rid=f"{PKG}:id/tab_menu_item"))
    body_top = ctx.top + ctx.dp(64)
    {"alarm": alarm_tab, "clock": clock_tab, "timer": timer_tab, "stopwatch": stopwatch_tab}[clock.tab](
        dev, ctx, root, body_top)
    if clock.picker is not None:
        root.add(time_picker(dev, ctx))
    return root


def alarm_tab(dev: Phone, ctx: Ctx, root: Node, y: int) -> None:
    """The alarms, a card each in a list that scrolls, the expanded one taller; the add button floats below."""
    clock = clock_state(dev)
    rows = [(_card_height(ctx, a, clock.expanded == a.id) + ctx.dp(8),
             lambda yy, a=a: _alarm_card(dev, ctx, a, yy + ctx.dp(8))) for a in clock.alarms]
    lst = scroll_list(ctx, PKG, "clock.alarms", y, ctx.bottom - ctx.dp(96), rows, dev.state.scroll.get("clock.alarms", 0),
                      rid=f"{PKG}:id/alarm_recycler_view")
    if not clock.alarms:
        lst.add(text(ctx, (0, y + ctx.dp(120), ctx.width, y + ctx.dp(160)), ctx.t("clock.no_alarms"), 16,
                     color=ctx.theme.secondary, align="center", pkg=PKG))
    root.add(lst)

    def add(x, y_):
        clock.picker = TimePicker(12 if ctx.locale.meta["hour12"] else 0, 0)
        event(dev, "Alarm", "Add")

    root.add(fab(ctx, PKG, ctx.width // 2, ctx.bottom - ctx.dp(56), "add", ctx.t("clock.add_alarm"), add,
                 rid=f"{PKG}:id/fab"))


def _card_height(ctx: Ctx, alarm: Alarm, expanded: bool) -> int:
    """A collapsed card: the time and the switch over a row of Delete, the label and days, and the expand arrow. An
    expanded one adds Repeat, the day buttons while it repeats, and Vibrate, as alarm_time_expanded.xml lays out."""
    return ctx.dp(128 + (96 + (48 if alarm.days else 0) if expanded else 0))


def scroll_to_card(dev: Phone, ctx: Ctx, alarm: Alarm) -> None:
    """Scroll the alarm list so that ``alarm``'s card shows whole (AlarmClockFragment.smoothScrollTo)."""
    clock = clock_state(dev)
    top = 0
    for a in clock.alarms:
        if a is alarm:
            break
        top += _card_height(ctx, a, clock.expanded == a.id) + ctx.dp(8)
    view = ctx.bottom - ctx.dp(96) - (ctx.top + ctx.dp(64))
    bottom = top + _card_height(ctx, alarm, clock.expanded == alarm.id) + ctx.dp(16)
    offset = dev.state.scroll.get("clock.alarms", 0)
    dev.state.scroll["clock.alarms"] = max(0, min(top, max(offset, bottom - view)))


def _alarm_card(dev: Phone, ctx: Ctx, alarm: Alarm, yy: int) -> Node:
    clock = clock_state(dev)
    expanded = clock.expanded == alarm.id
    left, right = ctx.content_left + ctx.dp(8), ctx.content_right - ctx.dp(8)

    def expand(x=0, y_=0, action="Expand Implied"):
        if clock.expanded != alarm.id:
            event(dev, "Alarm", action)
            clock.expanded = alarm.id
            scroll_to_card(dev, ctx, alarm)

    def collapse(x=0, y_=0, action="Collapse Implied"):
        event(dev, "Alarm", action)
        clock.expanded = None

    card = Node(cls="android.widget.FrameLayout", bounds=(left, yy, right, yy + _card_height(ctx, alarm, expanded)),
                package=PKG, bg=ctx.theme.surface if not ctx.theme.dark else (48, 49, 52), radius=ctx.dp(8),
                on_tap=collapse if expanded else expand)

    def edit(x, y_):
        clock.picker = TimePicker(alarm.hour, alarm.minute, alarm=alarm.id)
        expand()

    card.add(text(ctx, (left + ctx.dp(16), yy + ctx.dp(8), right - ctx.dp(96), yy + ctx.dp(64)),
                  ctx.locale.time(alarm.hour, alarm.minute), 40,
                  color=ctx.theme.on_surface if alarm.enabled else ctx.theme.secondary, pkg=PKG,
                  rid=f"{PKG}:id/digital_clock", on_tap=edit))
    card.add(Node(cls="android.widget.Switch", bounds=(right - ctx.dp(72), yy + ctx.dp(16), right - ctx.dp(16),
                  yy + ctx.dp(56)), package=PKG, rid=f"{PKG}:id/onoff", kind="switch", checkable=True,
                  checked=alarm.enabled, text=ctx.t("common.switch_on" if alarm.enabled else "common.switch_off"),
                  on_tap=lambda x, y_: set_enabled(dev, alarm, not alarm.enabled)))
    row = yy + ctx.dp(72)
    if expanded:
        card.add(_checkbox(ctx, (left + ctx.dp(8), row, right - ctx.dp(16), row + ctx.dp(48)), ctx.t("clock.repeat"),
                           bool(alarm.days), lambda x, y_: toggle_repeat(dev, alarm), f"{PKG}:id/repeat_onoff"))
        row += ctx.dp(48)
        if alarm.days:
            card.add(_day_buttons(dev, ctx, alarm, left + ctx.dp(4), right - ctx.dp(4), row))
            row += ctx.dp(48)

        def vibrate(x, y_):
            alarm.vibrate = not alarm.vibrate
            event(dev, "Alarm", "Toggle Vibrate")

        card.add(_checkbox(ctx, (left + ctx.dp(8), row, right - ctx.dp(16), row + ctx.dp(48)), ctx.t("clock.vibrate"),
                           alarm.vibrate, vibrate, f"{PKG}:id/vibrate_onoff"))
        row += ctx.dp(52)
    card.add(Node(cls="android.widget.Button", bounds=(left + ctx.dp(8), row + ctx.dp(4), left + ctx.dp(136),
                  row + ctx.dp(48)), package=PKG, rid=f"{PKG}:id/delete", text=ctx.t("clock.delete_alarm"),
                  size=ctx.sp(14), fg=ctx.theme.secondary, on_tap=lambda x, y_: delete_alarm(dev, alarm),
                  inset=ctx.dp(32)))
    card.children[-1].add(Node(bounds=(left + ctx.dp(8), row + ctx.dp(14), left + ctx.dp(32), row + ctx.dp(38)),
                               icon="glyph:close", icon_color=ctx.theme.secondary, visual=True))
    summary = (left + ctx.dp(144), row + ctx.dp(4), right - ctx.dp(64), row + ctx.dp(48))
    if alarm.label:
        card.add(text(ctx, summary, alarm.label, 14, color=ctx.theme.secondary, pkg=PKG, rid=f"{PKG}:id/label"))
    if alarm.days and not expanded:
        days, spoken = _days_text(ctx, alarm.days)
        x1, y1, x2, y2 = summary
        middle = (x1 + x2) // 2 if alarm.label else x1
        card.add(text(ctx, (middle, y1, x2, y2), days, 14, color=ctx.theme.secondary, pkg=PKG,
                      rid=f"{PKG}:id/days_of_week", desc=spoken))
    card.add(Node(cls="android.widget.ImageButton", bounds=(right - ctx.dp(56), row + ctx.dp(4), right - ctx.dp(8),
                  row + ctx.dp(48)), package=PKG, rid=f"{PKG}:id/arrow",
                  desc=ctx.t("clock.collapse_alarm" if expanded else "clock.expand_alarm"),
                  icon=f"glyph:{'expand_less' if expanded else 'expand_more'}", icon_color=ctx.theme.icon,
                  on_tap=(lambda x, y_: collapse(action="Collapse")) if expanded else
                  (lambda x, y_: expand(action="Expand"))))
    return card


def _checkbox(ctx: Ctx, bounds, label: str, checked: bool, on_tap, rid: str) -> Node:
    """A CheckBox row: its box at the start, its label after it."""
    x1, y1, x2, y2 = bounds
    box = Node(cls="android.widget.CheckBox", bounds=bounds, package=PKG, rid=rid, text=label, size=ctx.sp(16),
               fg=ctx.theme.on_surface, checkable=True, checked=checked, on_tap=on_tap, inset=ctx.dp(48))
    mark = (x1 + ctx.dp(12), (y1 + y2) // 2 - ctx.dp(9), x1 + ctx.dp(30), (y1 + y2) // 2 + ctx.dp(9))
    box.add(Node(bounds=mark, radius=ctx.dp(2), visual=True, bg=ctx.theme.accent if checked else None,
                 kind="" if checked else "border", icon="glyph:check" if checked else "",
                 icon_color=ctx.theme.on_accent if checked else ctx.theme.secondary))
    return box


def _day_buttons(dev: Phone, ctx: Ctx, alarm: Alarm, x1: int, x2: int, y: int) -> Node:
    """The seven day buttons (``day_button_box``, DeskClock's day_button.xml), from the locale's first day of the
    week: each the day's narrow name (ICU's ``ccccc``), its full name for content description, checked (a filled
    circle; toggle_circle.xml draws nothing behind an unchecked one) while the alarm repeats on it. A right-to-left
    phone mirrors the row, as it does a LinearLayout."""
    row = Node(cls="android.widget.LinearLayout", bounds=(x1, y, x2, y + ctx.dp(48)), package=PKG,
               rid=f"{PKG}:id/repeat_days")
    narrow, names = ctx.locale.seq("weekday_narrow"), ctx.locale.seq("weekday")
    cell = (x2 - x1) // 7
    size = min(ctx.dp(40), cell)
    for i, weekday in enumerate(ctx.locale.week()):
        on = bool(alarm.days & day_bit(weekday))
        cx = x1 + cell * i + cell // 2
        frame = Node(cls="android.widget.FrameLayout", bounds=(x1 + cell * i, y, x1 + cell * (i + 1), y + ctx.dp(48)),
                     package=PKG)
        frame.add(Node(cls="android.widget.CheckBox", bounds=(cx - size // 2, y + ctx.dp(24) - size // 2,
                       cx + size // 2, y + ctx.dp(24) + size // 2), package=PKG, rid=f"{PKG}:id/day_button_box",
                       text=narrow[weekday], desc=names[weekday], size=ctx.sp(14), align="center", checkable=True,
                       checked=on, radius=-1, bg=ctx.theme.accent if on else None,
                       fg=ctx.theme.on_accent if on else ctx.theme.on_surface, on_tap=lambda x, y_, bit=day_bit(weekday): set_days(dev, alarm, alarm.days ^ bit)))
        row.add(frame)
    return row


def _days_text(ctx: Ctx, days: int) -> tuple[str, str]:
    """The days an alarm repeats on as its collapsed card names them (Weekdays.toString), and as it reads them out:
    "Every day"; one day by its full name; more by their short names, in the locale's week order."""
    if days == ALL_DAYS:
        return (ctx.t("clock.every_day"),) * 2
    on = [d for d in ctx.locale.week() if days & day_bit(d)]
    full = ctx.t("clock.day_concat").join(ctx.locale.seq("weekday")[d] for d in on)
    short = full if len(on) == 1 else ctx.t("clock.day_concat").join(ctx.locale.seq("weekday_short")[d] for d in on)
    return short, full


def clock_tab(dev: Phone, ctx: Ctx, root: Node, y: int) -> None:
    now = dev.now()
    root.add(text(ctx, (0, y + ctx.dp(48), ctx.width, y + ctx.dp(140)), ctx.locale.clock_digits(now.hour, now.minute),
                  64, align="center", pkg=PKG, rid=f"{PKG}:id/digital_clock"))
    weekday = ctx.locale.seq("weekday_short")[(now.weekday() + 1) % 7]
    root.add(text(ctx, (0, y + ctx.dp(140), ctx.width, y + ctx.dp(172)),
                  f"{weekday}, {ctx.locale.seq('month_short')[now.month - 1]} {ctx.locale.number(now.day)}", 16,
                  color=ctx.theme.secondary, align="center", pkg=PKG, rid=f"{PKG}:id/date"))
    root.add(fab(ctx, PKG, ctx.width // 2, ctx.bottom - ctx.dp(56), "language", ctx.t("clock.cities"),
                 lambda x, y_: None, rid=f"{PKG}:id/fab"))


def _hms(ms: int) -> tuple[int, int, int]:
    seconds = max(0, ms + 999) // 1000
    return seconds // 3600, seconds // 60 % 60, seconds % 60


def timer_tab(dev: Phone, ctx: Ctx, root: Node, y: int) -> None:
    """Set a duration on the keypad (digits fill HHMMSS from the right), start, pause, reset. Timer events are not
    logged with the words Start/Pause/Reset: B-MoCA's stopwatch detectors match those anywhere under AlarmClock."""
    st, timer = dev.state, clock_state(dev).timer
    running = timer.end_ms is not None
    if running or timer.left_ms:
        left = timer.end_ms - st.time_ms if running else timer.left_ms
        h, m, sec = _hms(left)
        root.add(text(ctx, (0, y + ctx.dp(96), ctx.width, y + ctx.dp(180)),
                      ctx.locale.number(f"{h:d}:{m:02d}:{sec:02d}" if h else f"{m:02d}:{sec:02d}"), 56, align="center",
                      pkg=PKG, rid=f"{PKG}:id/timer_time_text"))

        def toggle(x, y_):
            if timer.end_ms is not None:
                timer.left_ms, timer.end_ms = timer.end_ms - st.time_ms, None
            else:
                timer.end_ms, timer.left_ms = st.time_ms + timer.left_ms, 0

        def delete(x, y_):
            timer.end_ms, timer.left_ms, timer.digits, timer.length_ms = None, 0, "", 0

        root.add(fab(ctx, PKG, ctx.width // 2, ctx.bottom - ctx.dp(56), "pause" if running else "play",
                     ctx.t("clock.pause" if running else "clock.start"), toggle, rid=f"{PKG}:id/fab"))
        root.add(button(ctx, PKG, (ctx.width // 2 - ctx.dp(160), ctx.bottom - ctx.dp(80), ctx.width // 2 - ctx.dp(56),
                                   ctx.bottom - ctx.dp(32)), ctx.t("common.delete"), delete, rid=f"{PKG}:id/left_button"))
        return
    digits = timer.digits.rjust(6, "0")
    shown = f"{digits[0:2]}h {digits[2:4]}m {digits[4:6]}s"
    root.add(text(ctx, (0, y + ctx.dp(24), ctx.width, y + ctx.dp(96)), ctx.locale.number(shown), 40, align="center",
                  pkg=PKG, rid=f"{PKG}:id/timer_setup_time"))
    key = min(ctx.dp(72), (ctx.bottom - y - ctx.dp(240)) // 4)
    x0 = ctx.width // 2 - key * 3 // 2
    for i, d in enumerate("123456789 0⌫"):
        if d == " ":
            continue
        r, c = divmod(i, 3)

        def press(x, y_, d=d):
            if d == "⌫":
                timer.digits = timer.digits[:-1]
            elif len(timer.digits) < 6 and (timer.digits or d != "0"):
                timer.digits += d

        bounds = (x0 + c * key, y + ctx.dp(112) + r * key, x0 + (c + 1) * key, y + ctx.dp(112) + (r + 1) * key)
        if d == "⌫":
            root.add(Node(cls="android.widget.ImageButton", bounds=bounds, package=PKG, rid=f"{PKG}:id/timer_setup_delete",
                          desc=ctx.t("common.delete"), icon="glyph:delete_digit", icon_color=ctx.theme.icon,
                          on_tap=press, mirror=False))
        else:
            root.add(Node(cls="android.widget.Button", bounds=bounds, package=PKG, rid=f"{PKG}:id/timer_setup_digit_{d}",
                          text=ctx.locale.number(d), size=ctx.sp(28), align="center", fg=ctx.theme.on_surface,
                          on_tap=press, mirror=False))

    def start(x, y_):
        h, m, sec = int(digits[0:2]), int(digits[2:4]), int(digits[4:6])
        total = (h * 3600 + m * 60 + sec) * 1000
        if total:
            timer.end_ms, timer.length_ms = st.time_ms + total, total
            dev.logi("AlarmClock", f"Events: [Timer] [Run] [Tap] duration={total // 1000}s", app="clock")

    if timer.digits:
        root.add(fab(ctx, PKG, ctx.width // 2, ctx.bottom - ctx.dp(56), "play", ctx.t("clock.start"), start,
                     rid=f"{PKG}:id/fab"))


def stopwatch_tab(dev: Phone, ctx: Ctx, root: Node, y: int) -> None:
    st, stopwatch = dev.state, clock_state(dev).stopwatch
    elapsed = stopwatch.elapsed_ms + (st.time_ms - stopwatch.started_ms if stopwatch.running else 0)
    minutes, rest = divmod(elapsed // 10, 6000)
    seconds, hundredths = divmod(rest, 100)
    root.add(text(ctx, (0, y + ctx.dp(96), ctx.width, y + ctx.dp(180)),
                  ctx.locale.number(f"{minutes:02d}:{seconds:02d}.{hundredths:02d}"), 56, align="center", pkg=PKG,
                  rid=f"{PKG}:id/stopwatch_time_text"))

    def start_pause(x, y_):
        if stopwatch.running:
            stopwatch.elapsed_ms += st.time_ms - stopwatch.started_ms
            stopwatch.running = False
            event(dev, "Stopwatch", "Pause")
        else:
            stopwatch.started_ms = st.time_ms
            stopwatch.running = True
            event(dev, "Stopwatch", "Start")

    def reset(x, y_):
        stopwatch.running, stopwatch.elapsed_ms = False, 0
        event(dev, "Stopwatch", "Reset")

    running = stopwatch.running
    root.add(fab(ctx, PKG, ctx.width // 2, ctx.bottom - ctx.dp(56), "pause" if running else "play",
                 ctx.t("clock.pause" if running else "clock.start"), start_pause, rid=f"{PKG}:id/fab"))
    if elapsed and not running:
        root.add(button(ctx, PKG, (ctx.width // 2 - ctx.dp(160), ctx.bottom - ctx.dp(80), ctx.width // 2 - ctx.dp(56),
                                   ctx.bottom - ctx.dp(32)), ctx.t("clock.reset"), reset, rid=f"{PKG}:id/left_button"))


# ---------------------------------------------------------------------------------------------------- picker
def dial_positions(ctx: Ctx, shape: str, cx: int, cy: int, radius: int, count: int = 12) -> list[tuple[int, int]]:
    """Centres of ``count`` labels around a circle, or around a rectangle's edge, clockwise from twelve o'clock."""
    out = []
    for i in range(count):
        a = math.radians(i * 360 / count)
        dx, dy = math.sin(a), -math.cos(a)
        if shape == "rectangle":  # project onto the rectangle's border (a square 2r wide, 2.4r tall)
            scale = min(1 / max(abs(dx), 1e-9), 1.2 / max(abs(dy), 1e-9))
            out.append((int(cx + dx * radius * scale), int(cy + dy * radius * scale)))
        else:
            out.append((int(cx + dx * radius), int(cy + dy * radius)))
    return out


def time_picker(dev: Phone, ctx: Ctx) -> Node:
    p = clock_state(dev).picker
    hour12 = ctx.locale.meta["hour12"]
    shape = dev.snapshot.clock_dial
    width = min(ctx.width - ctx.dp(48), ctx.dp(328))
    x1 = (ctx.width - width) // 2
    height = ctx.dp(520 if shape == "rectangle" else 480)
    # a screen too short for the whole dialog (a landscape tablet, a large display size): the dial shrinks so that
    # the buttons stay above the navigation bar
    squeeze = max(0, height - ctx.dp(16) - (ctx.bottom - ctx.top - ctx.dp(8)))
    height -= squeeze
    y1 = max(ctx.top + ctx.dp(8), (ctx.top + ctx.bottom - height) // 2)
    scrim = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG,
                 bg=ctx.theme.scrim, on_tap=lambda x, y: None)
    dlg = Node(cls="android.widget.FrameLayout", bounds=(x1, y1, x1 + width, y1 + height), package=PKG,
               rid=f"{PKG}:id/time_picker", bg=ctx.theme.surface, radius=ctx.dp(4))
    scrim.add(dlg)
    # header: hours, minutes, AM/PM
    hy2 = y1 + ctx.dp(96)
    dlg.add(Node(cls="android.widget.LinearLayout", bounds=(x1, y1, x1 + width, hy2), package=PKG, bg=ctx.theme.accent,
                 rid=f"{PKG}:id/time_header"))
    shown_h = (p.hour % 12 or 12) if hour12 else p.hour
    # times read left to right in every locale: the header keeps its order in right-to-left layouts
    row = Node(cls="android.widget.LinearLayout", bounds=(x1, y1, x1 + width, hy2), package=PKG, mirror=False)
    dlg.add(row)
    hx = x1 + width // 12
    digit_size = min(ctx.sp(48), width * 22 // 100 * 2 // 3)
    dim = tuple(int(c * 0.7) for c in ctx.theme.on_accent)
    for part, value, mode in (("hours", ctx.locale.number(f"{shown_h:02d}" if not hour12 else shown_h), "hour"),
                              ("separator", ":", None), ("minutes", ctx.locale.number(f"{p.minute:02d}"), "minute")):
        w = width * (22 if mode else 5) // 100
        selected = p.mode == mode
        row.add(Node(cls="android.widget.TextView", bounds=(hx, y1 + ctx.dp(16), hx + w, hy2 - ctx.dp(16)),
                     package=PKG, rid=f"android:id/{part}", text=value, size=digit_size, align="center",
                     fg=ctx.theme.on_accent if selected or not mode else dim,
                     selected=selected, on_tap=(lambda x, y, m=mode: setattr(p, "mode", m)) if mode else None,
                     mirror=False))
        hx += w
    if hour12:
        for i, (marker, pm) in enumerate(((ctx.locale.meta["am"], False), (ctx.locale.meta["pm"], True))):
            is_on = (p.hour >= 12) == pm

            def set_half(x, y, pm=pm):
                p.hour = p.hour % 12 + (12 if pm else 0)

            row.add(Node(cls="android.widget.RadioButton", bounds=(hx + ctx.dp(8), y1 + ctx.dp(20 + 28 * i),
                         x1 + width - ctx.dp(8), y1 + ctx.dp(46 + 28 * i)), package=PKG,
                         rid=f"android:id/{'pm' if pm else 'am'}_label", text=marker, size=ctx.sp(16), checkable=True,
                         checked=is_on, fg=ctx.theme.on_accent if is_on else dim, on_tap=set_half, mirror=False))
    # the dial
    size = width - ctx.dp(48) - int(squeeze / (1.2 if shape == "rectangle" else 1.0))
    cx, cy = x1 + width // 2, hy2 + ctx.dp(24) + size // 2
    dial_bounds = (cx - size // 2, cy - size // 2 - (size // 10 if shape == "rectangle" else 0), cx + size // 2,
                   cy + size // 2 + (size // 10 if shape == "rectangle" else 0))
    radius = int(size * 0.40)
    inner = int(size * 0.27)
    mode = p.mode
    if mode == "hour":  # 12-hour: 12, 1..11 on one ring; 24-hour: 00..11 outside, 12..23 inside
        labels = [12] + list(range(1, 12)) if hour12 else list(range(0, 24))
        selected_idx = p.hour % 12 if hour12 else p.hour
    else:
        labels = list(range(0, 60, 5))
        selected_idx = p.minute // 5 if p.minute % 5 == 0 else None
    positions = dial_positions(ctx, shape, cx, cy, radius)
    if len(labels) > 12:
        positions += dial_positions(ctx, shape, cx, cy, inner)

    def select(x, y):
        idx = round(angle_of(cx, cy, x, y) / 30) % 12
        if mode == "hour":
            if hour12:
                p.hour = idx + (12 if p.hour >= 12 else 0)
            else:  # the ring whose label at that angle is nearer (on a rectangle the rings are not circles)
                (ox, oy), (ix, iy) = positions[idx], positions[12 + idx]
                p.hour = idx + (0 if math.hypot(x - ox, y - oy) < math.hypot(x - ix, y - iy) else 12)
            p.mode = "minute"
        else:
            p.minute = round(angle_of(cx, cy, x, y) / 6) % 60

    if selected_idx is not None:
        hand = positions[selected_idx]
    else:
        a = math.radians(p.minute * 6)
        hand = (int(cx + radius * math.sin(a)), int(cy - radius * math.cos(a)))
    dial = Node(cls="android.view.View", bounds=dial_bounds, package=PKG, rid=f"{PKG}:id/radial_picker",
                kind="dial", extra={"shape": shape, "center": (cx, cy), "hand": hand, "selector": ctx.dp(20)},
                desc=ctx.t("clock.hour" if mode == "hour" else "clock.minute"), on_tap=select, mirror=False)
    r = ctx.dp(20)
    for i, (value, (lx, ly)) in enumerate(zip(labels, positions, strict=False)):
        shown = f"{value:02d}" if mode == "minute" or not hour12 else str(value)
        dial.add(Node(cls="android.widget.TextView", bounds=(lx - r, ly - r, lx + r, ly + r), package=PKG,
                      text=ctx.locale.number(shown), size=ctx.sp(14 if len(labels) > 12 and i >= 12 else 16),
                      align="center", desc=ctx.locale.number(shown),
                      fg=ctx.theme.on_accent if i == selected_idx else ctx.theme.on_surface, on_tap=select,
                      mirror=False))
    dlg.add(dial)
    by = y1 + height - ctx.dp(56)
    dlg.add(button(ctx, PKG, (x1 + width - ctx.dp(192), by, x1 + width - ctx.dp(104), by + ctx.dp(40)),
                   ctx.t("common.cancel"), lambda x, y: on_back(dev, "clock"), rid="android:id/button2"))
    dlg.add(button(ctx, PKG, (x1 + width - ctx.dp(96), by, x1 + width - ctx.dp(16), by + ctx.dp(40)),
                   ctx.t("common.ok"), lambda x, y: scroll_to_card(dev, ctx, save_picker(dev)),
                   rid="android:id/button1"))
    return scrim
