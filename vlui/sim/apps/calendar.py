"""Calendar (Google Calendar on Android 10): the schedule of the phone's events from today on, grouped by day, and
an event's details (title, date, start and end, location, notes), which a tap on the event opens inside the same
activity (AllInOneActivity), so nothing is logged but the launch's START line. Times are written as the locale's
Clock writes them (:meth:`vlui.android.i18n.Locale.time`), dates with the locale's names of days and months.

The calendar's own state, :class:`CalendarState` (its events), is typed here and registered with the app
(:data:`vlui.sim.apps.APPS`); a snapshot or a task sets it under ``calendar:``, which replaces the events::

    calendar:
      events:
      - {title: Dentist, day: 1, hour: 14, minute: 30, minutes: 45, location: 210 Main St}
      - {title: Flight to Lisbon, date: '2026-11-28', hour: 7, minutes: 150, notes: Gate B12}

An event starts on its ``date`` or, without one, ``day`` days after the day the phone's snapshot starts on (its
``time``: 0 is that day, 1 the next), at ``hour:minute``, and lasts ``minutes``. The day is counted from the
snapshot's date, not from the clock's date when the state is read, so an event stays where it is when the virtual
clock passes midnight, as a real calendar's would. Deviations from Google Calendar: no all-day, repeating or
multi-calendar events, and no creating or editing (the "New event" button does nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, Literal, Required, TypedDict, get_args

from vlui.android.state import bounded
from vlui.sim.protocol import Phone
from vlui.sim.ui import Node
from vlui.sim.widgets import Ctx, app_bar, fab, paragraph, scroll_list, text

PKG = "com.google.android.calendar"
ScreenName = Literal["main", "event"]  # the schedule, an event's details
SCREENS: tuple[str, ...] = get_args(ScreenName)
EVENT_COLOR = (3, 155, 229)  # Google Calendar's default event colour ("Peacock")
WHITE = (255, 255, 255)


class Screen(TypedDict, total=False):
    """A screen on the calendar's task."""

    screen: Required[ScreenName]
    event: int  # the details screen's event: its index in CalendarState.events


@dataclass
class Event:
    """An event of the phone's calendar: its title, when it starts (a ``date`` written ``YYYY-MM-DD``, or ``day``
    days after the snapshot's date, and a time of day), how long it lasts, where it is and its notes."""

    title: str
    hour: int = bounded(0, 23)
    minute: int = bounded(0, 59, default=0)
    minutes: int = bounded(1, 7 * 24 * 60, default=60)  # its duration
    day: int = bounded(-3660, 3660, default=0)
    date: str | None = None  # wins over day
    location: str = ""
    notes: str = ""


def _default_events() -> list[Event]:
    """A working week's handful, from the snapshot's day (the snapshots start at 08:00) to four days later."""
    return [
        Event("Team stand-up", 9, 0, 15, location="Room 4B"),
        Event("Lunch with Sam", 12, 30, 60, location="Cafe Rosa"),
        Event("Dentist", 16, 0, 45, location="Dr. Patel, 210 Main St", notes="Bring the insurance card."),
        Event("Project review", 10, 0, 60, day=1, location="Conference room B", notes="Q4 roadmap and budget."),
        Event("Yoga class", 18, 30, 60, day=1, location="Sunrise Studio"),
        Event("Call with Maria", 11, 0, 30, day=2),
        Event("Dinner with Alex", 19, 0, 120, day=4, location="Luigi's Trattoria"),
    ]


@dataclass
class CalendarState:
    """What the calendar holds: its events, in no particular order (the schedule sorts them)."""

    events: list[Event] = field(default_factory=_default_events)


def calendar_state(dev: Phone) -> CalendarState:
    """The calendar's own state on the phone ``dev``."""
    return dev.state.app("calendar", CalendarState)


def entry_problem(fields: Any) -> str | None:
    """What the type of :class:`CalendarState` cannot say about a snapshot's or a task's ``calendar:`` entry: that
    an event's ``date`` is a date written ``YYYY-MM-DD``, quoted (YAML reads an unquoted date as a date object). The
    rest is :func:`vlui.android.state.fields_problem`'s."""
    events = fields.get("events") if isinstance(fields, dict) else None
    for i, entry in enumerate(events if isinstance(events, list) else []):
        value = entry.get("date") if isinstance(entry, dict) else None
        if isinstance(value, date):
            return f"calendar.events[{i}].date must be quoted ('{value:%Y-%m-%d}'): YAML reads an unquoted date as a date"
        if isinstance(value, str) and _parse_date(value) is None:
            return f"calendar.events[{i}].date must be a date written YYYY-MM-DD, not {value!r}"
    return None


def _parse_date(value: str) -> date | None:
    try:
        return datetime.strptime(value, "%Y-%m-%d").date() if len(value) == 10 else None
    except ValueError:
        return None


def event_times(dev: Phone, event: Event) -> tuple[datetime, datetime]:
    """When ``event`` starts and ends on the phone ``dev`` (local time, as the virtual clock counts it)."""
    day = _parse_date(event.date) if event.date else dev.snapshot.start_time.date() + timedelta(days=event.day)
    start = datetime(day.year, day.month, day.day, event.hour, event.minute)
    return start, start + timedelta(minutes=event.minutes)


def schedule(dev: Phone) -> list[tuple[int, Event, datetime, datetime]]:
    """The events the schedule shows, as ``(index in the state's events, event, start, end)``: those not over
    before today, by start time."""
    today = datetime.combine(dev.now().date(), datetime.min.time())
    rows = [(i, e, *event_times(dev, e)) for i, e in enumerate(calendar_state(dev).events)]
    return sorted((r for r in rows if r[3] > today), key=lambda r: (r[2], r[0]))


# ---------------------------------------------------------------------------------------------------- screens
def build(dev: Phone, ctx: Ctx, screen: Screen) -> Node:
    root = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG,
                bg=ctx.theme.background)
    if screen["screen"] == "event":
        return details(dev, ctx, root, screen.get("event"))
    return schedule_view(dev, ctx, root)


def _time_range(ctx: Ctx, start: datetime, end: datetime) -> str:
    return f"{ctx.locale.time(start.hour, start.minute)} – {ctx.locale.time(end.hour, end.minute)}"


def _date(ctx: Ctx, day: date) -> str:
    """``Monday, November 23`` in the locale's words and order (the launcher's date)."""
    return ctx.t("launcher.date_format", weekday=ctx.locale.seq("weekday")[(day.weekday() + 1) % 7],
                 month=ctx.locale.seq("month")[day.month - 1], day=day.day)


def schedule_view(dev: Phone, ctx: Ctx, root: Node) -> Node:
    """The schedule: a row per event, the day's short weekday and number beside its first event (today's in the
    accent colour), a month's name before its first day after the current month."""
    today = dev.now().date()
    scroll_key = "calendar.main"

    def jump_to_today(x: int, y: int) -> None:
        dev.state.scroll[scroll_key] = 0

    root.add(app_bar(ctx, PKG, ctx.locale.seq("month")[today.month - 1],
                     actions=(("event", ctx.t("apps.calendar_today"), jump_to_today),)))
    top = ctx.top + ctx.dp(56)
    events = schedule(dev)
    if not events:
        root.add(text(ctx, (0, top + ctx.dp(120), ctx.width, top + ctx.dp(160)), ctx.t("apps.calendar_no_events"), 16,
                      color=ctx.theme.secondary, align="center", pkg=PKG, rid=f"{PKG}:id/empty_view"))
    rows: list[tuple[int, Any]] = []
    shown_day, shown_month = None, (today.year, today.month)
    for index, event, start, end in events:
        day = max(start.date(), today)
        if (day.year, day.month) != shown_month:
            shown_month = (day.year, day.month)
            rows.append((ctx.dp(56), _month_row(ctx, ctx.locale.seq("month")[day.month - 1])))
        first = day != shown_day
        shown_day = day
        rows.append((ctx.dp(64), _event_row(dev, ctx, index, event, start, end, day if first else None,
                                            day == today)))
    root.add(scroll_list(ctx, PKG, scroll_key, top, ctx.bottom, rows, dev.state.scroll.get(scroll_key, 0),
                         rid=f"{PKG}:id/alternate_timeline_fragment_container"))
    root.add(fab(ctx, PKG, ctx.content_right - ctx.dp(44), ctx.bottom - ctx.dp(44), "add",
                 ctx.t("apps.calendar_new_event"), lambda x, y: None, rid=f"{PKG}:id/floating_action_button"))
    return root


def _month_row(ctx: Ctx, month: str):
    def build_row(y: int) -> Node:
        return text(ctx, (ctx.content_left + ctx.dp(72), y + ctx.dp(16), ctx.content_right - ctx.dp(16),
                          y + ctx.dp(48)), month, 20, pkg=PKG, rid=f"{PKG}:id/month_header")
    return build_row


def _event_row(dev: Phone, ctx: Ctx, index: int, event: Event, start: datetime, end: datetime, day: date | None,
               today: bool):
    """An event's chip (title and time; its content description says both, with the place), and the day's label
    beside it when it is the day's first."""
    def open_details(x: int, y: int) -> None:
        dev.push("calendar", "event", event=index)

    def build_row(y: int) -> Node:
        left, right = ctx.content_left, ctx.content_right
        row = Node(cls="android.widget.LinearLayout", bounds=(left, y, right, y + ctx.dp(64)), package=PKG)
        if day is not None:
            color = ctx.theme.accent if today else ctx.theme.secondary
            weekday = ctx.locale.seq("weekday_short")[(day.weekday() + 1) % 7]
            row.add(text(ctx, (left, y + ctx.dp(6), left + ctx.dp(64), y + ctx.dp(24)), weekday, 12, color=color,
                         align="center", pkg=PKG, rid=f"{PKG}:id/day_of_week"))
            row.add(text(ctx, (left, y + ctx.dp(24), left + ctx.dp(64), y + ctx.dp(56)), ctx.locale.number(day.day),
                         22, color=color, align="center", pkg=PKG, rid=f"{PKG}:id/day_of_month"))
        when = _time_range(ctx, start, end)
        desc = ", ".join(part for part in (event.title, when, event.location) if part)
        x1 = left + ctx.dp(72)
        chip = Node(cls="android.view.View", bounds=(x1, y + ctx.dp(4), right - ctx.dp(16), y + ctx.dp(60)),
                    package=PKG, rid=f"{PKG}:id/event_chip", desc=desc, bg=EVENT_COLOR, radius=ctx.dp(4),
                    on_tap=open_details)
        chip.add(text(ctx, (x1 + ctx.dp(8), y + ctx.dp(8), right - ctx.dp(24), y + ctx.dp(32)), event.title, 14,
                      color=WHITE, bold=True, pkg=PKG, rid=f"{PKG}:id/event_title"))
        chip.add(text(ctx, (x1 + ctx.dp(8), y + ctx.dp(32), right - ctx.dp(24), y + ctx.dp(54)), when, 12,
                      color=WHITE, pkg=PKG, rid=f"{PKG}:id/event_time"))
        return row.add(chip)
    return build_row


def details(dev: Phone, ctx: Ctx, root: Node, index: int | None) -> Node:
    """An event's details: its colour and title, its date, start and end, then its place and its notes, each after
    an icon. An event that is gone (a task's state replaced the events) leaves the page empty."""
    root.add(app_bar(ctx, PKG, "", up=lambda x, y: dev.press_back()))
    events = calendar_state(dev).events
    if index is None or not 0 <= index < len(events):
        return root
    event = events[index]
    start, end = event_times(dev, event)
    left, right = ctx.content_left, ctx.content_right
    x1, x2 = left + ctx.dp(72), right - ctx.dp(16)
    y = ctx.top + ctx.dp(56) + ctx.dp(16)
    root.add(Node(cls="android.view.View", bounds=(left + ctx.dp(28), y + ctx.dp(6), left + ctx.dp(44),
                  y + ctx.dp(22)), package=PKG, bg=EVENT_COLOR, radius=ctx.dp(4), visual=True))
    title = paragraph(ctx, PKG, x1, x2, y, event.title, 22, f"{PKG}:id/title")
    root.add(title)
    y = title.bounds[3] + ctx.dp(8)
    when = _date(ctx, start.date()) if start.date() == end.date() else (
        f"{_date(ctx, start.date())} – {_date(ctx, end.date())}")
    for value, rid in ((when, "date"), (_time_range(ctx, start, end), "time")):
        line = paragraph(ctx, PKG, x1, x2, y, value, 16, f"{PKG}:id/{rid}", color=ctx.theme.secondary)
        root.add(line)
        y = line.bounds[3]
    y += ctx.dp(16)
    for value, glyph_name, rid in ((event.location, "location", "location"), (event.notes, "document", "description")):
        if not value:
            continue
        root.add(Node(cls="android.widget.ImageView", bounds=(left + ctx.dp(24), y + ctx.dp(12), left + ctx.dp(48),
                      y + ctx.dp(36)), package=PKG, icon=f"glyph:{glyph_name}", icon_color=ctx.theme.icon))
        block = paragraph(ctx, PKG, x1, x2, y + ctx.dp(12), value, 16, f"{PKG}:id/{rid}")
        root.add(block)
        y = max(block.bounds[3], y + ctx.dp(36)) + ctx.dp(12)
    return root
