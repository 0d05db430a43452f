"""Wikipedia (``org.wikipedia`` 2.7.50484-r-2024-04-19, B-MoCA release 2.5's pinned version): the Explore feed, the
bottom navigation, the More sheet, Settings, Customize the feed and the text size.

MainActivity holds the four tabs of NavTab in their order, as a BottomNavigationView (``main_nav_tab_layout``) whose
items are ``nav_tab_explore``, ``nav_tab_reading_lists`` (Saved), ``nav_tab_search`` and ``nav_tab_edits``, each with
its label as content description and ``selected`` on the tab shown; More (``nav_more_container``) takes the last fifth
of the bar and opens the More sheet (MenuNavTabDialog, logged out: Log in / join Wikipedia, Places, Settings, Donate).
Explore shows the search card (``search_container``) and a card per feed card type that is enabled and has content, in
FeedContentType's order, drawn from the fixed catalogue ``vlui/sim/data/wikipedia.yaml`` (the real app fetches it):
Featured article, Top read, Picture of the day, In the news, On this day, Randomizer and Today on Wikipedia (Because
you read needs a reading history, which the phone has none of). With every type off, the feed says so and offers
Customize (``customize_button``). Saved lists the default reading list; Search (HistoryFragment) has the search card
over the empty history; Edits asks a logged-out user to log in.

Settings (SettingsActivity, its own START line) lists ``res/xml/preferences.xml`` and ``preferences_about.xml`` for a
logged-out user: General (Wikipedia languages, with the app language's own name, the phone's or English; Explore Feed:
ConfigureActivity, "Customize the feed"; Show link previews, a switch written to the preferences at once; Collapse
tables; App theme: ThemeFittingRoomActivity with ThemeChooserDialog, Reading, the text size as a percent, the decrease
and increase buttons around a discrete seek bar from -5 to 8 steps of 10%, and the themes), Syncing, Data usage and
About. Customize the feed lists the configurable card types (FeedContentType's entries in their default order, less
Suggested edits for a logged-out user and the hidden Accessibility card), each with its title, subtitle and switch
(``feed_content_type_checkbox``), and its overflow menu (Show all, Hide all, Restore default view). As
ConfigureFragment does, the switches change the types in memory and ``FeedContentType.saveState`` writes them when the
screen opens (the feed availability answer) and when it pauses (BACK, up, HOME): ``feedCardsEnabled`` (a JSON list of
ten booleans, one per entry of FeedContentType, Suggested edits and Accessibility included), ``feedCardsOrder`` and
the two language maps.

The preferences file (``org.wikipedia_preferences.xml``, read by :func:`shared_prefs`) holds the entries the app
wrote, as Android writes a HashMap (:mod:`vlui.android.shared_prefs`). The state (:class:`WikipediaState`) keeps the
values and which keys were written; a snapshot or a task sets it under ``wikipedia:``, and what it sets counts as
written.

Departures from the real app: the catalogue is English in every locale; cards show no images (a grey block stands for
them), open no article and cannot be dismissed or reordered; the Places, Donate and login rows, Settings' rows other
than Explore Feed, Show link previews and App theme (their switches do not move), and the theme buttons do nothing;
Customize the feed has no language chips and its rows cannot be dragged; no log line is printed besides the
activities' START lines.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal, Required, TypedDict, get_args

from vlui.android.shared_prefs import prefs_xml
from vlui.android.state import DeviceState, bounded
from vlui.resources import read_yaml
from vlui.sim.apps.generic import DATA_DIR
from vlui.sim.protocol import Phone
from vlui.sim.ui import Node
from vlui.sim.widgets import Ctx, app_bar, list_row, menu_popup, paragraph, scroll_list, seek_bar, text

PKG = "org.wikipedia"
SETTINGS_ACTIVITY = f"{PKG}/.settings.SettingsActivity"
CONFIGURE_ACTIVITY = f"{PKG}/.feed.configure.ConfigureActivity"
THEME_ACTIVITY = f"{PKG}/.theme.ThemeFittingRoomActivity"
PREFS_FILE = "org.wikipedia_preferences.xml"
ScreenName = Literal["main", "more", "card_menu", "settings", "customize", "customize_menu", "theme"]
SCREENS: tuple[str, ...] = get_args(ScreenName)
# NavTab's entries, in order, with the ids of their menu items
Tab = Literal["explore", "saved", "search", "edits"]
TAB_IDS = {"explore": "nav_tab_explore", "saved": "nav_tab_reading_lists", "search": "nav_tab_search",
           "edits": "nav_tab_edits"}
# FeedContentType's entries in declaration order (its saveState writes one boolean each, in this order) and codes
CARD_TYPES = ("featured_article", "top_read", "featured_image", "because_you_read", "news", "on_this_day", "random",
              "main_page", "suggested_edits", "accessibility")
CARD_CODES = (6, 3, 7, 8, 0, 1, 5, 4, 9, 10)
CONFIGURABLE = CARD_TYPES[:8]  # logged out: no Suggested edits; Accessibility is never listed
TEXT_SIZE_MIN, TEXT_SIZE_MAX = -5, 8  # res/values/dimens.xml min/maxTextSizeMultiplier; each step is 10%
FEED_KEYS = ("feedCardsEnabled", "feedCardsOrder", "feedCardsLangSupported", "feedCardsLangDisabled")


class Screen(TypedDict, total=False):
    """A screen on Wikipedia's task."""

    screen: Required[ScreenName]
    tab: Tab  # main: the tab shown
    cards: list[bool]  # customize: the card types' isEnabled in memory, not yet saved
    anchor: list[int]  # card_menu: the bounds of the card menu button it drops from


@dataclass
class WikipediaState:
    """What the app keeps in its preferences: the feed card types' ``isEnabled`` (one per FeedContentType entry),
    ``textSizeMultiplier``, ``showLinkPreviews``; and ``written``, the keys the app has written beyond those of
    its first launch, in the order it wrote them first (the order a preferences file depends on)."""

    feed_cards: list[bool] = field(default_factory=lambda: [True] * len(CARD_TYPES))
    text_size: int = bounded(TEXT_SIZE_MIN, TEXT_SIZE_MAX, 0)
    show_link_previews: bool = True
    written: list[str] = field(default_factory=list)


@cache
def catalogue() -> dict[str, Any]:
    """The fixed content (data/wikipedia.yaml)."""
    return read_yaml(DATA_DIR / "wikipedia.yaml")


def wiki_state(dev: Phone) -> WikipediaState:
    return dev.state.app("wikipedia", WikipediaState)


def entry_problem(value: Any) -> str | None:
    if isinstance(value, dict):
        cards = value.get("feed_cards")
        if cards is not None and (not isinstance(cards, list) or len(cards) != len(CARD_TYPES)):
            return f"wikipedia.feed_cards is a list of {len(CARD_TYPES)} booleans ({', '.join(CARD_TYPES)})"
        unknown = set(value.get("written") or ()) - set(_pref_values(WikipediaState()))
        if unknown:
            return f"wikipedia.written names keys the app writes ({', '.join(_pref_values(WikipediaState()))})"
    return None


def on_state_set(st: DeviceState, fields: dict[str, Any]) -> None:
    """What a snapshot or a task sets is in the preferences file, as if the app had written it."""
    state = st.app("wikipedia", WikipediaState)
    keys = {"feed_cards": FEED_KEYS, "text_size": ("textSizeMultiplier",), "show_link_previews": ("showLinkPreviews",)}
    for name in fields:
        _write(state, *keys.get(name, ()))


# ---------------------------------------------------------------------------------------------------- preferences
def _pref_values(state: WikipediaState) -> dict[str, bool | int | str]:
    """The values of the keys the simulated app writes, as Prefs stores them (kotlinx JSON for the feed's)."""
    compact = {"separators": (",", ":")}
    empty_langs = json.dumps({str(code): [] for code in CARD_CODES}, **compact)
    return {"textSizeMultiplier": state.text_size, "showLinkPreviews": state.show_link_previews,
            "feedCardsEnabled": json.dumps(state.feed_cards, **compact),
            "feedCardsOrder": json.dumps(list(range(len(CARD_TYPES))), **compact),
            "feedCardsLangSupported": empty_langs, "feedCardsLangDisabled": empty_langs}


def _write(state: WikipediaState, *keys: str) -> None:
    state.written += [k for k in keys if k not in state.written]


def shared_prefs(dev: Phone, file: str) -> str | None:
    """The text of the app's preferences ``file`` (None for a file it does not keep): the first launch's entries,
    then those written since. A Customize screen in a task that is not in front has paused, and saved."""
    if file != PREFS_FILE:
        return None
    _save_if_paused(dev)
    state = wiki_state(dev)
    values = _pref_values(state)
    return prefs_xml({**catalogue()["initial_prefs"], **{k: values[k] for k in state.written}})


def _save_feed(dev: Phone, cards: list[bool]) -> None:
    """FeedContentType.saveState: the four feed entries, in the order Prefs is set."""
    state = wiki_state(dev)
    state.feed_cards = list(cards)
    _write(state, *FEED_KEYS)


def _save_if_paused(dev: Phone) -> None:
    """A Customize screen under another activity, or in a task not in front, has paused: it saved (its overflow
    menu is no activity of its own)."""
    st = dev.state
    stack = st.tasks.get("wikipedia", [])
    for i, screen in enumerate(stack):
        above = [s["screen"] for s in stack[i + 1:]]
        if screen["screen"] == "customize" and (st.top != "wikipedia" or above not in ([], ["customize_menu"])):
            _save_feed(dev, _edited_cards(dev, screen))


def _edited_cards(dev: Phone, screen: Screen) -> list[bool]:
    """The card types a Customize screen is editing: those it was opened with (the state's when it was opened
    without: a screen restored as it stood)."""
    return screen.setdefault("cards", list(wiki_state(dev).feed_cards))


def set_text_size(dev: Phone, multiplier: int) -> None:
    """WikipediaApp.setFontSizeMultiplier: kept within its bounds; written only when it changes."""
    state = wiki_state(dev)
    multiplier = min(TEXT_SIZE_MAX, max(TEXT_SIZE_MIN, multiplier))
    if multiplier != state.text_size:
        state.text_size = multiplier
        _write(state, "textSizeMultiplier")


# ---------------------------------------------------------------------------------------------------- navigation
def on_back(dev: Phone, key: str) -> bool:
    """BACK from Customize the feed saves the card types (onPause) before the screen goes; from a tab other than
    Explore, MainActivity goes back to Explore first."""
    screen = dev.top_screen()
    if screen is None:
        return False
    if screen["screen"] == "customize":
        _save_feed(dev, _edited_cards(dev, screen))
    elif screen["screen"] == "main" and screen.get("tab", "explore") != "explore":
        screen["tab"] = "explore"
        return True
    return False


def on_launch(dev: Phone, key: str, created: bool) -> None:
    """Back in front: a Customize screen saved what it held when it paused."""
    _save_if_paused(dev)


def _open_customize(dev: Phone) -> None:
    cards = list(wiki_state(dev).feed_cards)
    dev.start_activity("wikipedia", "customize", CONFIGURE_ACTIVITY, cards=cards)
    _save_feed(dev, cards)  # the feed availability answer arrives: saveState


def _up(dev: Phone):
    def tap(x: int, y: int) -> None:
        dev.press_back()
    return tap


# ---------------------------------------------------------------------------------------------------- screens
def build(dev: Phone, ctx: Ctx, screen: Screen) -> Node:
    page = screen["screen"]
    if page in ("more", "card_menu", "customize_menu"):
        beneath = dev.state.tasks["wikipedia"][-2]
        root = build(dev, ctx, beneath)
        if page == "customize_menu":
            return root.add(_customize_menu(dev, ctx, beneath))
        return root.add(_more_sheet(dev, ctx) if page == "more" else _card_menu(dev, ctx, screen))
    root = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG,
                bg=ctx.theme.background)
    if page == "settings":
        return _settings(dev, ctx, root)
    if page == "customize":
        return _customize(dev, ctx, root, screen)
    if page == "theme":
        return _theme(dev, ctx, root)
    return _main(dev, ctx, root, screen)


def _main(dev: Phone, ctx: Ctx, root: Node, screen: Screen) -> Node:
    tab = screen.get("tab", "explore")
    bar_h, nav_h = ctx.dp(56), ctx.dp(72)
    y1, y2 = ctx.top + bar_h, ctx.bottom - nav_h
    bar = Node(cls="android.view.ViewGroup", bounds=(0, ctx.top, ctx.width, y1), package=PKG,
               rid=f"{PKG}:id/main_toolbar", bg=ctx.theme.surface)
    if tab == "explore":
        mark = Node(cls="android.widget.ImageView", bounds=(ctx.dp(16), ctx.top, ctx.dp(16) + ctx.sp(150), y1),
                    package=PKG, rid=f"{PKG}:id/main_toolbar_wordmark")
        mark.add(Node(bounds=mark.bounds, text="Wikipedia", size=ctx.sp(22), fg=ctx.theme.on_surface, visual=True))
        bar.add(mark)
    else:
        bar.add(text(ctx, (ctx.dp(16), ctx.top, ctx.width - ctx.dp(16), y1), ctx.t(f"wikipedia.{tab}"), 20, pkg=PKG))
    root.add(bar)
    body = {"explore": _explore, "saved": _saved, "search": _search_tab, "edits": _edits}[tab]
    root.add(body(dev, ctx, y1, y2))
    return root.add(_nav_bar(dev, ctx, screen, y2))


def _nav_bar(dev: Phone, ctx: Ctx, screen: Screen, y: int) -> Node:
    """fragment_main's bar: NavTabLayout over four fifths of the width, More in the last fifth."""
    bar = Node(cls="android.widget.LinearLayout", bounds=(0, y, ctx.width, ctx.bottom), package=PKG,
               rid=f"{PKG}:id/main_nav_tab_container", bg=ctx.theme.surface)
    bar.add(Node(bounds=(0, y, ctx.width, y + max(1, ctx.dp(0.5))), bg=ctx.theme.divider, visual=True))
    tabs_w = ctx.width * 4 // 5
    layout = Node(cls="android.widget.FrameLayout", bounds=(0, y, tabs_w, ctx.bottom), package=PKG,
                  rid=f"{PKG}:id/main_nav_tab_layout")
    shown = screen.get("tab", "explore")
    glyphs = {"explore": "explore", "saved": "star", "search": "search", "edits": "edit"}
    for i, (tab, rid) in enumerate(TAB_IDS.items()):
        x1, x2 = tabs_w * i // 4, tabs_w * (i + 1) // 4
        label = ctx.t(f"wikipedia.{tab}")
        color = ctx.theme.accent if tab == shown else ctx.theme.secondary

        def choose(xx: int, yy: int, tab: str = tab) -> None:
            screen["tab"] = tab

        item = Node(cls="android.widget.FrameLayout", bounds=(x1, y, x2, ctx.bottom), package=PKG,
                    rid=f"{PKG}:id/{rid}", desc=label, selected=tab == shown, on_tap=choose)
        _icon_and_label(ctx, item, glyphs[tab], label, color, rid_label=f"{PKG}:id/navigation_bar_item_large_label_"
                        f"view" if tab == shown else f"{PKG}:id/navigation_bar_item_small_label_view")
        layout.add(item)
    bar.add(layout)
    more = Node(cls="android.widget.FrameLayout", bounds=(tabs_w, y, ctx.width, ctx.bottom), package=PKG,
                rid=f"{PKG}:id/nav_more_container", desc=ctx.t("wikipedia.more"),
                on_tap=lambda xx, yy: dev.push("wikipedia", "more"))
    _icon_and_label(ctx, more, "menu", ctx.t("wikipedia.more"), ctx.theme.secondary, rid_icon=f"{PKG}:id/menu_icon")
    return bar.add(more)


def _icon_and_label(ctx: Ctx, item: Node, glyph: str, label: str, color, rid_icon: str = "",
                    rid_label: str = "") -> None:
    x1, y, x2, _ = item.bounds
    g, cx = ctx.dp(24), (x1 + x2) // 2
    item.add(Node(cls="android.widget.ImageView", bounds=(cx - g // 2, y + ctx.dp(12), cx + g // 2,
                  y + ctx.dp(12) + g), package=item.package, rid=rid_icon, icon=f"glyph:{glyph}", icon_color=color))
    item.add(text(ctx, (x1, y + ctx.dp(40), x2, y + ctx.dp(60)), label, 12, color=color, align="center",
                  pkg=item.package, rid=rid_label))


def _search_card(dev: Phone, ctx: Ctx, y: int) -> Node:
    h = ctx.dp(48)
    left, right = ctx.content_left + ctx.dp(16), ctx.content_right - ctx.dp(16)
    card = Node(cls="android.widget.FrameLayout", bounds=(left, y + ctx.dp(8), right, y + ctx.dp(8) + h),
                package=PKG, rid=f"{PKG}:id/search_container", bg=ctx.theme.search_bar, radius=h // 2,
                on_tap=lambda xx, yy: None)
    y1 = y + ctx.dp(8)
    card.add(Node(cls="android.widget.ImageView", bounds=(left + ctx.dp(12), y1 + ctx.dp(12), left + ctx.dp(36),
                  y1 + ctx.dp(36)), package=PKG, icon="glyph:search", icon_color=ctx.theme.icon))
    card.add(text(ctx, (left + ctx.dp(48), y1, right - ctx.dp(48), y1 + h), ctx.t("wikipedia.search_hint"), 16,
                  color=ctx.theme.secondary, pkg=PKG))
    card.add(Node(cls="android.widget.ImageView", bounds=(right - ctx.dp(40), y1 + ctx.dp(12), right - ctx.dp(16),
                  y1 + ctx.dp(36)), package=PKG, rid=f"{PKG}:id/voice_search_button", icon="glyph:mic",
                  icon_color=ctx.theme.icon))
    return card


# -------------------------------------------------------------------------------------- the Explore feed's cards
def _card(dev: Phone, ctx: Ctx, y: int, kind: str, title: str, lines: list[tuple[str, float, bool]],
          image: bool = False, numbered: bool = False) -> Node:
    """A feed card: its header (``view_card_header_title`` and the card menu), an image block if it has one, then
    paragraphs ``(text, size sp, secondary)``."""
    left, right = ctx.content_left + ctx.dp(8), ctx.content_right - ctx.dp(8)
    card = Node(cls="android.widget.FrameLayout", bounds=(left, y, right, y), package=PKG, bg=ctx.theme.surface,
                radius=ctx.dp(8), rid=f"{PKG}:id/view_{kind}_card" if kind else "")
    head = ctx.dp(48)
    card.add(text(ctx, (left + ctx.dp(16), y, right - ctx.dp(48), y + head), title, 14, bold=True, pkg=PKG,
                  color=ctx.theme.secondary, rid=f"{PKG}:id/view_card_header_title"))
    menu = Node(cls="android.widget.ImageView", bounds=(right - ctx.dp(48), y, right, y + head), package=PKG,
                rid=f"{PKG}:id/view_list_card_header_menu", desc=ctx.t("wikipedia.more_options"),
                icon="glyph:more_vert", icon_color=ctx.theme.icon)
    menu.on_tap = lambda xx, yy: dev.push("wikipedia", "card_menu", anchor=list(menu.bounds))  # where it is drawn
    card.add(menu)
    at = y + head
    if image:
        card.add(Node(bounds=(left, at, right, at + ctx.dp(160)), bg=ctx.theme.divider, visual=True))
        at += ctx.dp(168)
    indent = ctx.dp(32) if numbered else 0  # a list card's rows: the number at the start, then the article
    for i, (value, size, secondary) in enumerate(lines, 1):
        para = paragraph(ctx, PKG, left + ctx.dp(16) + indent, right - ctx.dp(16), at, value, size,
                         color=ctx.theme.secondary if secondary else None)
        if numbered:
            card.add(text(ctx, (left + ctx.dp(16), at, left + ctx.dp(16) + indent, para.bounds[3]),
                          ctx.locale.number(i), size, color=ctx.theme.accent, pkg=PKG))
        card.add(para)
        at = para.bounds[3] + ctx.dp(6)
    card.bounds = (left, y, right, at + ctx.dp(10))
    return card


def _card_content(ctx: Ctx, kind: str) -> tuple[list[tuple[str, float, bool]], bool] | None:
    """The lines of a card type's card from the catalogue and whether it shows an image; None: no card today."""
    c = catalogue()
    if kind == "featured_article" or kind == "random":
        a = c["featured_article" if kind == "featured_article" else "random"]
        return [(a["title"], 20, False), (a["description"], 14, True), (a["extract"], 15, False)], True
    if kind == "top_read":
        return [(a["title"], 16, False) for a in c["top_read"]], False
    if kind == "featured_image":
        return [(c["featured_image"]["description"], 14, True)], True
    if kind == "news":
        return [(item, 15, False) for item in c["news"]], True
    if kind == "on_this_day":
        return [(ctx.locale.number(c["on_this_day"]["year"]), 20, False), (c["on_this_day"]["text"], 15, False)], False
    if kind == "main_page":
        return [(c["main_page"]["title"], 16, False)], False
    return None  # Because you read: no reading history; Suggested edits: logged out


def _explore(dev: Phone, ctx: Ctx, y1: int, y2: int) -> Node:
    enabled = wiki_state(dev).feed_cards
    kinds = [k for k, on in zip(CARD_TYPES, enabled, strict=True) if on and _card_content(ctx, k) is not None]
    if not kinds:
        frame = Node(cls="android.widget.LinearLayout", bounds=(0, y1, ctx.width, y2), package=PKG,
                     rid=f"{PKG}:id/empty_container")
        frame.add(text(ctx, (ctx.dp(16), y1 + ctx.dp(80), ctx.width - ctx.dp(16), y1 + ctx.dp(120)),
                       ctx.t("wikipedia.feed_empty"), 16, align="center", pkg=PKG))
        frame.add(Node(cls="android.widget.Button", bounds=(ctx.width // 2 - ctx.dp(90), y1 + ctx.dp(136),
                       ctx.width // 2 + ctx.dp(90), y1 + ctx.dp(176)), package=PKG, rid=f"{PKG}:id/customize_button",
                       text=ctx.t("wikipedia.customize_title"), size=ctx.sp(14), bold=True, align="center",
                       fg=ctx.theme.accent, on_tap=lambda xx, yy: _open_customize(dev)))
        return frame

    def card_row(kind: str):
        lines, image = _card_content(ctx, kind)
        title = ctx.t(f"wikipedia.card_{kind}")
        numbered = kind == "top_read"
        height = _card(dev, ctx, 0, kind, title, lines, image, numbered).bounds[3] + ctx.dp(8)
        return height, lambda y: _card(dev, ctx, y + ctx.dp(4), kind, title, lines, image, numbered)

    rows = [(ctx.dp(64), lambda y: _search_card(dev, ctx, y)), *(card_row(k) for k in kinds)]
    return scroll_list(ctx, PKG, "wikipedia.feed", y1, y2, rows, dev.state.scroll.get("wikipedia.feed", 0),
                       rid=f"{PKG}:id/feed_view")


def _saved(dev: Phone, ctx: Ctx, y1: int, y2: int) -> Node:
    frame = Node(cls="android.widget.FrameLayout", bounds=(0, y1, ctx.width, y2), package=PKG,
                 rid=f"{PKG}:id/reading_list_list")
    frame.add(list_row(ctx, PKG, y1, ctx.t("wikipedia.saved_list"), ctx.t("wikipedia.saved_list_description"),
                       icon="glyph:star", rid_title=f"{PKG}:id/item_title", rid_summary=f"{PKG}:id/item_description",
                       on_tap=lambda xx, yy: None))
    return frame


def _search_tab(dev: Phone, ctx: Ctx, y1: int, y2: int) -> Node:
    frame = Node(cls="android.widget.FrameLayout", bounds=(0, y1, ctx.width, y2), package=PKG)
    frame.add(_search_card(dev, ctx, y1))
    mid = (y1 + y2) // 2
    frame.add(text(ctx, (ctx.dp(24), mid - ctx.dp(28), ctx.width - ctx.dp(24), mid), ctx.t(
        "wikipedia.history_empty_title"), 18, align="center", pkg=PKG, rid=f"{PKG}:id/history_empty_title"))
    frame.add(paragraph(ctx, PKG, ctx.dp(24), ctx.width - ctx.dp(24), mid + ctx.dp(4),
                        ctx.t("wikipedia.history_empty_message"), 14, rid=f"{PKG}:id/history_empty_message",
                        color=ctx.theme.secondary))
    return frame


def _edits(dev: Phone, ctx: Ctx, y1: int, y2: int) -> Node:
    frame = Node(cls="android.widget.FrameLayout", bounds=(0, y1, ctx.width, y2), package=PKG)
    mid = (y1 + y2) // 2
    frame.add(Node(cls="android.widget.Button", bounds=(ctx.dp(32), mid - ctx.dp(24), ctx.width - ctx.dp(32),
                   mid + ctx.dp(24)), package=PKG, text=ctx.t("wikipedia.login"), size=ctx.sp(14), bold=True,
                   align="center", fg=ctx.theme.on_accent, bg=ctx.theme.accent, radius=ctx.dp(4),
                   on_tap=lambda xx, yy: None))
    return frame


def _card_menu(dev: Phone, ctx: Ctx, screen: Screen) -> Node:
    """CardHeaderView's PopupMenu (menu_feed_card_header), below the card's menu button: Hide this card (which the
    simulated app only closes) and Customize the feed (ConfigureActivity); a tap outside closes it."""
    def close(xx: int, yy: int) -> None:
        dev.state.tasks["wikipedia"].pop()

    def customize(xx: int, yy: int) -> None:
        close(xx, yy)
        _open_customize(dev)

    scrim = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG,
                 on_tap=close)
    # where the card's menu button is drawn (the first card's, where the menu was opened without one)
    ax1, ay1, ax2, ay2 = screen.get("anchor") or (ctx.width - ctx.dp(56), ctx.top + ctx.dp(120), ctx.width - ctx.dp(8),
                                                  ctx.top + ctx.dp(168))
    w, h = min(ctx.width - ctx.dp(16), ctx.dp(220)), ctx.dp(48)
    if ctx.locale.rtl:  # the anchor's bounds are already mirrored: the menu is built there, then mirrored back
        ax1, ax2 = ctx.width - ax2, ctx.width - ax1
    x2 = min(ax2, ctx.width - ctx.dp(8))
    y = min(ay2, ctx.bottom - 2 * h - ctx.dp(16))
    card = Node(cls="android.widget.ListView", bounds=(x2 - w, y, x2, y + 2 * h + ctx.dp(16)), package=PKG,
                bg=ctx.theme.surface, radius=ctx.dp(4))
    y += ctx.dp(8)
    for key, tap in (("hide_card", close), ("customize_title", customize)):
        item = Node(cls="android.widget.LinearLayout", bounds=(x2 - w, y, x2, y + h), package=PKG, on_tap=tap)
        item.add(text(ctx, (x2 - w + ctx.dp(16), y, x2 - ctx.dp(8), y + h), ctx.t(f"wikipedia.{key}"), 16,
                      pkg=PKG, rid=f"{PKG}:id/title"))
        card.add(item)
        y += h
    x1, y1, x2, y2 = card.bounds
    scrim.add(Node(bounds=(x1 - 1, y1 - 1, x2 + 1, y2 + ctx.dp(2)), bg=ctx.theme.divider, radius=ctx.dp(4),
                   visual=True))
    return scrim.add(card)


# ---------------------------------------------------------------------------------------------------- More sheet
def _more_sheet(dev: Phone, ctx: Ctx) -> Node:
    """MenuNavTabDialog, logged out: a bottom sheet over a scrim; a tap on the scrim closes it."""
    def close(xx: int, yy: int) -> None:
        dev.state.tasks["wikipedia"].pop()

    def settings(xx: int, yy: int) -> None:
        dev.state.tasks["wikipedia"].pop()
        dev.start_activity("wikipedia", "settings", SETTINGS_ACTIVITY, extras=False)

    scrim = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG,
                 rid=f"{PKG}:id/touch_outside", on_tap=close)  # drawn clear: the renderer blends no dimming
    rows = [("login", "main_drawer_login_button", "person", None), ("places", "main_drawer_places_container",
            "location", None), ("settings", "main_drawer_settings_container", "settings", settings),
            ("donate", "main_drawer_donate_container", "heart", None)]
    row_h = ctx.dp(56)
    y = ctx.bottom - row_h * len(rows) - ctx.dp(16)
    sheet = Node(cls="android.widget.FrameLayout", bounds=(ctx.content_left, y, ctx.content_right, ctx.bottom),
                 package=PKG, rid=f"{PKG}:id/design_bottom_sheet", bg=ctx.theme.surface, radius=ctx.dp(16))
    y += ctx.dp(8)
    for key, rid, glyph, tap in rows:
        row = Node(cls="android.widget.LinearLayout", bounds=(ctx.content_left, y, ctx.content_right, y + row_h),
                   package=PKG, rid=f"{PKG}:id/{rid}", on_tap=tap or (lambda xx, yy: None))
        row.add(Node(cls="android.widget.ImageView", bounds=(ctx.content_left + ctx.dp(20), y + ctx.dp(16),
                     ctx.content_left + ctx.dp(44), y + ctx.dp(40)), package=PKG, icon=f"glyph:{glyph}",
                     icon_color=ctx.theme.icon))
        row.add(text(ctx, (ctx.content_left + ctx.dp(68), y, ctx.content_right - ctx.dp(16), y + row_h),
                     ctx.t(f"wikipedia.{key}"), 16, pkg=PKG))
        sheet.add(row)
        y += row_h
    return scrim.add(sheet)


# ---------------------------------------------------------------------------------------------------- Settings
def _switch_id(row: Node) -> Node:
    """SwitchPreferenceCompat's switch is the app's ``switchWidget``, not the framework's ``switch_widget``."""
    for node in row.walk():
        if node.kind == "switch":
            node.rid = f"{PKG}:id/switchWidget"
    return row


def _settings(dev: Phone, ctx: Ctx, root: Node) -> Node:
    state = wiki_state(dev)
    root.add(app_bar(ctx, PKG, ctx.t("wikipedia.settings_title"), up=_up(dev)))

    def toggle_previews(xx: int, yy: int) -> None:
        state.show_link_previews = not state.show_link_previews
        _write(state, "showLinkPreviews")

    def open_theme(xx: int, yy: int) -> None:
        dev.start_activity("wikipedia", "theme", THEME_ACTIVITY, extras=False)

    theme_name = ctx.t("wikipedia.theme_dark" if ctx.theme.dark else "wikipedia.theme_light")
    noop = lambda xx, yy: None  # noqa: E731 - rows whose screens or preferences the simulated app does not have

    def heading(key: str):
        return ctx.dp(48), lambda y: text(ctx, (ctx.content_left + ctx.dp(16), y, ctx.content_right - ctx.dp(16),
                                                y + ctx.dp(48)), ctx.t(f"wikipedia.{key}"), 14,
                                          color=ctx.theme.accent, pkg=PKG, rid="android:id/title")

    def row(key: str, summary: str = "", tap=noop, on: bool | None = None, shown: str = ""):
        """A preference titled string ``key``, its summary string ``summary`` (or the text ``shown``)."""
        summary_text = shown or (ctx.t(f"wikipedia.{summary}") if summary else "")
        return ctx.dp(72 if summary_text else 56), lambda y: _switch_id(list_row(
            ctx, PKG, y, ctx.t(f"wikipedia.{key}"), summary_text, on_tap=tap, switch=on))

    # res/xml/preferences.xml, then preferences_about.xml, as SettingsPreferenceLoader loads them (logged out)
    rows = [heading("general"), row("languages", "app_language"), row("explore_feed", "explore_feed_summary",
                                                        lambda xx, yy: _open_customize(dev)),
            row("link_previews", "link_previews_summary", toggle_previews, state.show_link_previews),
            row("collapse_tables", "collapse_tables_summary", on=True),
            row("app_theme", tap=open_theme, shown=theme_name),
            heading("syncing"), row("sync_reading_lists", "sync_reading_lists_summary", on=False),
            row("download_reading_lists", on=True),
            heading("data_usage"), row("wifi_only", on=False), row("show_images", "show_images_summary", on=True),
            row("prefer_offline", "prefer_offline_summary", on=False),
            heading("about"), row("about_app"), row("faq"), row("privacy"), row("terms")]
    y1 = ctx.top + ctx.dp(56)
    return root.add(scroll_list(ctx, PKG, "wikipedia.settings", y1, ctx.bottom, rows,
                                dev.state.scroll.get("wikipedia.settings", 0), rid=f"{PKG}:id/recycler_view"))


def _customize_menu(dev: Phone, ctx: Ctx, customize: Screen) -> Node:
    """menu_feed_configure, from the toolbar's overflow: Show all and Hide all set every FeedContentType entry (the
    two not listed too), Restore default view removes the feed's preferences (Prefs.resetFeedCustomizations) and
    enables every type again."""
    def choose(action: str):
        def tap(xx: int, yy: int) -> None:
            dev.state.tasks["wikipedia"].pop()
            _edited_cards(dev, customize)[:] = [action != "hide_all"] * len(CARD_TYPES)
            if action == "restore_default":
                state = wiki_state(dev)
                state.written = [k for k in state.written if k not in FEED_KEYS]
                state.feed_cards = [True] * len(CARD_TYPES)
        return tap

    items = [(ctx.t(f"wikipedia.{action}"), f"{PKG}:id/title", choose(action))
             for action in ("show_all", "hide_all", "restore_default")]
    return menu_popup(ctx, PKG, items, lambda xx, yy: dev.state.tasks["wikipedia"].pop())


def _customize(dev: Phone, ctx: Ctx, root: Node, screen: Screen) -> Node:
    root.add(app_bar(ctx, PKG, ctx.t("wikipedia.customize_title"), up=_up(dev), actions=(
        ("more_vert", ctx.t("wikipedia.more_options"), lambda xx, yy: dev.push("wikipedia", "customize_menu")),)))
    cards = screen.get("cards") or list(wiki_state(dev).feed_cards)

    def row(kind: str):
        i = CARD_TYPES.index(kind)
        title, subtitle = ctx.t(f"wikipedia.card_{kind}"), ctx.t(f"wikipedia.type_{kind}")
        left, right = ctx.content_left, ctx.content_right
        text_x1, text_x2 = left + ctx.dp(56), right - ctx.dp(72)
        sub_h = paragraph(ctx, PKG, text_x1, text_x2, 0, subtitle, 14).bounds[3]
        height = ctx.dp(40) + sub_h + ctx.dp(12)

        def toggle(xx: int, yy: int) -> None:
            cards[i] = not cards[i]

        def build_row(y: int) -> Node:
            item = Node(cls="android.widget.LinearLayout", bounds=(left, y, right, y + height), package=PKG,
                        desc=f"{title}, {subtitle}")
            item.add(Node(cls="android.widget.ImageView", bounds=(left + ctx.dp(16), y + (height - ctx.dp(24)) // 2,
                          left + ctx.dp(40), y + (height + ctx.dp(24)) // 2), package=PKG,
                          rid=f"{PKG}:id/feed_content_type_drag_handle", icon="glyph:menu",
                          icon_color=ctx.theme.icon))
            item.add(text(ctx, (text_x1, y + ctx.dp(12), text_x2, y + ctx.dp(40)), title, 16, pkg=PKG,
                          rid=f"{PKG}:id/feed_content_type_title"))
            item.add(paragraph(ctx, PKG, text_x1, text_x2, y + ctx.dp(40), subtitle, 14,
                               rid=f"{PKG}:id/feed_content_type_subtitle", color=ctx.theme.secondary))
            sw_x2 = right - ctx.dp(16)
            item.add(Node(cls="android.widget.Switch", bounds=(sw_x2 - ctx.dp(48), y + (height - ctx.dp(32)) // 2,
                          sw_x2, y + (height + ctx.dp(32)) // 2), package=PKG,
                          rid=f"{PKG}:id/feed_content_type_checkbox", kind="switch", checkable=True,
                          checked=cards[i], text=ctx.t("common.switch_on" if cards[i] else "common.switch_off"),
                          on_tap=toggle))
            return item
        return height, build_row

    y1 = ctx.top + ctx.dp(56)
    return root.add(scroll_list(ctx, PKG, "wikipedia.customize", y1, ctx.bottom, [row(k) for k in CONFIGURABLE],
                                dev.state.scroll.get("wikipedia.customize", 0),
                                rid=f"{PKG}:id/content_types_recycler"))


def _theme(dev: Phone, ctx: Ctx, root: Node) -> Node:
    """ThemeFittingRoomActivity: a sample of article text at the chosen size, under ThemeChooserDialog."""
    state = wiki_state(dev)
    root.add(app_bar(ctx, PKG, ctx.t("wikipedia.app_theme"), up=_up(dev)))
    sample = catalogue()["featured_article"]
    scale = 1 + state.text_size / 10
    y = ctx.top + ctx.dp(64)
    root.add(paragraph(ctx, PKG, ctx.content_left + ctx.dp(16), ctx.content_right - ctx.dp(16), y, sample["title"],
                       24 * scale, cls="android.view.View"))
    root.add(paragraph(ctx, PKG, ctx.content_left + ctx.dp(16), ctx.content_right - ctx.dp(16),
                       y + ctx.sp(40 * scale), sample["extract"], 16 * scale, cls="android.view.View"))
    # the bottom sheet, over the sample
    sheet_h = ctx.dp(300)
    top = max(ctx.top + ctx.dp(120), ctx.bottom - sheet_h)
    left, right = ctx.content_left, ctx.content_right
    sheet = Node(cls="android.widget.FrameLayout", bounds=(left, top, right, ctx.bottom), package=PKG,
                 rid=f"{PKG}:id/design_bottom_sheet", bg=ctx.theme.surface, radius=ctx.dp(16))
    y = top + ctx.dp(16)
    sheet.add(text(ctx, (left + ctx.dp(16), y, right - ctx.dp(16), y + ctx.dp(24)), ctx.t("wikipedia.reading"), 14,
                   bold=True, color=ctx.theme.accent, pkg=PKG, rid=f"{PKG}:id/textSettingsCategory"))
    y += ctx.dp(28)
    percent = f"{ctx.locale.number(100 + 10 * state.text_size)}%"
    shown = ctx.t("wikipedia.text_size_default", value=percent) if state.text_size == 0 else percent
    sheet.add(text(ctx, (left + ctx.dp(16), y, right - ctx.dp(16), y + ctx.dp(24)), shown, 14, pkg=PKG,
                   rid=f"{PKG}:id/text_size_percent"))
    y += ctx.dp(32)
    span = TEXT_SIZE_MAX - TEXT_SIZE_MIN

    def step(delta: int):
        return lambda xx, yy: set_text_size(dev, state.text_size + delta)

    sheet.add(Node(cls="android.widget.TextView", bounds=(left + ctx.dp(8), y, left + ctx.dp(56), y + ctx.dp(48)),
                   package=PKG, rid=f"{PKG}:id/buttonDecreaseTextSize", text="T", size=ctx.sp(14), align="center",
                   desc=ctx.t("wikipedia.text_size_decrease"), fg=ctx.theme.on_surface, on_tap=step(-1)))
    sheet.add(seek_bar(ctx, PKG, (left + ctx.dp(56), y, right - ctx.dp(56), y + ctx.dp(48)),
                       (state.text_size - TEXT_SIZE_MIN) / span,
                       lambda f: set_text_size(dev, TEXT_SIZE_MIN + round(f * span)),
                       rid=f"{PKG}:id/text_size_seek_bar"))
    sheet.add(Node(cls="android.widget.TextView", bounds=(right - ctx.dp(56), y, right - ctx.dp(8), y + ctx.dp(48)),
                   package=PKG, rid=f"{PKG}:id/buttonIncreaseTextSize", text="T", size=ctx.sp(22), align="center",
                   desc=ctx.t("wikipedia.text_size_increase"), fg=ctx.theme.on_surface, on_tap=step(1)))
    y += ctx.dp(64)
    sheet.add(text(ctx, (left + ctx.dp(16), y, right - ctx.dp(16), y + ctx.dp(24)), ctx.t("wikipedia.theme_select"),
                   14, bold=True, color=ctx.theme.accent, pkg=PKG))
    y += ctx.dp(32)
    themes = ("light", "sepia", "dark", "black")
    w = (right - left - ctx.dp(32)) // len(themes)
    for i, name in enumerate(themes):
        x1 = left + ctx.dp(16) + i * w
        sheet.add(Node(cls="android.widget.Button", bounds=(x1 + ctx.dp(4), y, x1 + w - ctx.dp(4), y + ctx.dp(48)),
                       package=PKG, rid=f"{PKG}:id/button_theme_{name}", text=ctx.t(f"wikipedia.theme_{name}"),
                       size=ctx.sp(13), align="center", fg=ctx.theme.on_surface, bg=ctx.theme.search_bar,
                       radius=ctx.dp(8), on_tap=lambda xx, yy: None))
    y += ctx.dp(60)
    sheet.add(_switch_id(list_row(ctx, PKG, y, ctx.t("wikipedia.match_system_theme"), on_tap=lambda xx, yy: None,
                                  switch=True)))
    return root.add(sheet)
