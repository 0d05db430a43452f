"""Chrome (Chrome 80 on Android 10): the new tab page, web pages, the app menu (⋮), History and Share.

The new tab page has the omnibox's search box ("Search or type web address") and, below it, the sites most visited:
a row per page of the state, its title and its address. Tapping one opens the page in the tab, inside Chrome's own
activity (ChromeTabbedActivity): nothing is logged, as a real device logs no START for a page. A page shows the
toolbar (``url_bar`` with the address as Chrome shows it, without ``https://`` and without a bare trailing slash,
and ``menu_button``) over the page's content: its title as a heading, then its paragraphs, as the web content's
accessibility nodes (``android.view.View`` with text, no resource ids) inside an ``android.webkit.WebView``. BACK
goes back to the new tab page. Opening a page adds it to the history.

The app menu lists New tab, History (``HistoryActivity``, its own activity: the START line B-MoCA's chrome_history
detector reads), Downloads, Share… (on a web page only, as in Chrome) and Settings. Share… does what Chrome's
ShareHelper does: it starts the system share sheet (:mod:`vlui.sim.apps.chooser`) with an ``ACTION_SEND`` of
``text/plain`` whose ``EXTRA_TEXT`` is the page's URL (ShareParams puts the URL alone in the text when no text is
given, as for a page shared from the menu; the title goes in ``EXTRA_SUBJECT``, which Messages does not use).

The app's own state, :class:`ChromeState`, is typed here and registered with the app (:data:`vlui.sim.apps.APPS`);
a snapshot or a task sets it under ``chrome:``, which replaces the pages or the history it names::

    chrome:
      pages:
        - url: https://bakery.example.org/
          title: Corner Bakery
          text: [Fresh bread every morning., "Call us at 2125550199."]
      history: [https://bakery.example.org/]

The tabs: the toolbar's tab switcher button (``tab_switcher_button``, an ImageButton drawn as a square with the
number of tabs in it) says how many tabs are open in its content description, as Chrome's ToggleTabStackButton
does with the plural ``accessibility_toolbar_btn_tabswitcher_toggle`` ("2 open tabs, tap to switch tabs"; the
number in the locale's digits, as Android's String.format writes ``%d``: Eastern Arabic digits on an Egyptian Arabic
phone, so B-MoCA's chrome_newtab check, which looks for the character "2", cannot hold there, as on a real phone).
It opens the tab switcher: its toolbar's New tab button (``new_tab_button``) and a card per tab. New tab, from the
menu or the switcher, adds a tab showing the new tab page; BACK on a tab's first page leaves Chrome, the tab kept.

Resource ids are Chrome's where test scripts written against the real app name them (``search_box``, ``url_bar``,
``toolbar``, ``menu_button``, ``tab_switcher_button``, ``new_tab_button``, ``app_menu_list``, ``menu_item_text``,
``tile_view_title``); ``title`` and ``description`` on History's rows and ``tab_title`` on the switcher's cards are
plausible names. Deviations from Chrome: the tabs other than the one in front keep no page of their own (a card
shows the tab in front's title, the others "New tab", and tapping any card goes back to the tab in front); the
switcher is a list of cards, not Chrome 80's stack of tab previews; the most visited sites are rows, not a grid of
tiles; the omnibox takes text but searches nothing; links, History's rows, Downloads and Settings lead nowhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Required, TypedDict, get_args

from vlui.android.state import bounded, shaped
from vlui.sim.apps.chooser import open_chooser
from vlui.sim.protocol import Phone
from vlui.sim.ui import Node
from vlui.sim.widgets import Ctx, app_bar, list_row, menu_popup, paragraph, scroll_list, search_box

PKG = "com.android.chrome"
HISTORY_ACTIVITY = f"{PKG}/org.chromium.chrome.browser.history.HistoryActivity"
ScreenName = Literal["main", "page", "menu", "history", "switcher"]  # new tab page, a page, the menu, History, tabs
SCREENS: tuple[str, ...] = get_args(ScreenName)
URL_SHAPE = r"https?://[a-z0-9.-]+(/\S*)?"
MAX_TABS = 99  # past 99 Chrome's button shows ":D" instead of a number; the simulated Chrome stops there


class Screen(TypedDict, total=False):
    """A screen on Chrome's task."""

    screen: Required[ScreenName]
    url: str  # page: the address of the page shown


@dataclass
class Page:
    """A web page the phone can open: its address, its title and its text, a paragraph a string."""

    url: str = shaped(URL_SHAPE, "https://news.example.org/")
    title: str = ""
    text: list[str] = field(default_factory=list)


def _default_pages() -> list[Page]:
    return [Page("https://news.example.org/", "Example News",
                 ["Top stories", "The city council approves the new riverside park."]),
            Page("https://weather.example.org/", "Example Weather", ["Today: sunny, high 18, low 9.",
                                                                     "Tomorrow: light rain in the afternoon."]),
            Page("https://wiki.example.org/", "Example Wiki", ["The free encyclopedia that anyone can edit."])]


@dataclass
class ChromeState:
    """What Chrome holds: the pages the new tab page lists (the web, as far as the phone sees it), the history, the
    addresses visited, oldest first, and how many tabs are open."""

    pages: list[Page] = field(default_factory=_default_pages)
    history: list[str] = field(default_factory=lambda: [p.url for p in _default_pages()])
    tabs: int = bounded(1, MAX_TABS, default=1)


def chrome_state(dev: Phone) -> ChromeState:
    """Chrome's own state on the phone ``dev``."""
    return dev.state.app("chrome", ChromeState)


def shown_url(url: str) -> str:
    """An address as Chrome's URL bar shows it (Chrome 76 on): without its scheme, a site's root without the slash."""
    shown = url.partition("://")[2]
    host, slash, path = shown.partition("/")
    return host if slash and not path else shown


def find_page(dev: Phone, url: str) -> Page | None:
    return next((p for p in chrome_state(dev).pages if p.url == url), None)


# ---------------------------------------------------------------------------------------------------- actions
def open_page(dev: Phone, url: str) -> None:
    """The tab goes to ``url`` (a page inside Chrome's activity: nothing is logged), which joins the history."""
    dev.push("chrome", "page", url=url)
    dev.state.scroll.pop("chrome.page", None)
    chrome_state(dev).history.append(url)


def new_tab(dev: Phone) -> None:
    """A new tab in front, showing the new tab page (the tab it was opened from stays, with its pages)."""
    st = chrome_state(dev)
    st.tabs = min(st.tabs + 1, MAX_TABS)
    dev.state.tasks["chrome"] = [{"screen": "main"}]
    dev.state.scroll.pop("chrome.main", None)
    dev.state.focus = None


def _menu_tap(dev: Phone, then):
    def tap(x: int, y: int) -> None:
        dev.state.tasks["chrome"].pop()  # choosing from the menu closes it
        then()
    return tap


# ---------------------------------------------------------------------------------------------------- screens
def build(dev: Phone, ctx: Ctx, screen: Screen) -> Node:
    page = screen["screen"]
    if page == "menu":
        beneath = dev.state.tasks["chrome"][-2]
        root = build(dev, ctx, beneath)
        return root.add(_menu(dev, ctx, beneath))
    root = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG,
                bg=ctx.theme.background)
    if page == "history":
        return _history(dev, ctx, root)
    if page == "switcher":
        return _switcher(dev, ctx, root)
    if page == "page":
        return _page(dev, ctx, root, screen.get("url", ""))
    return _new_tab_page(dev, ctx, root)


def _menu_button(dev: Phone, ctx: Ctx, x2: int, y: int) -> Node:
    return Node(cls="android.widget.ImageButton", bounds=(x2 - ctx.dp(48), y, x2, y + ctx.dp(48)), package=PKG,
                rid=f"{PKG}:id/menu_button", desc=ctx.t("apps.chrome_more"), icon="glyph:more_vert",
                icon_color=ctx.theme.icon, on_tap=lambda x, yy: dev.push("chrome", "menu"))


def tabs_desc(ctx: Ctx, count: int) -> str:
    """The tab switcher button's content description for ``count`` tabs."""
    return ctx.t("apps.chrome_tabs_one" if count == 1 else "apps.chrome_tabs", n=count)


def _tab_switcher_button(dev: Phone, ctx: Ctx, x2: int, y: int, on_tap) -> Node:
    """The square with the number of tabs in it, ``x2`` its end and ``y`` its top."""
    count = chrome_state(dev).tabs
    button = Node(cls="android.widget.ImageButton", bounds=(x2 - ctx.dp(48), y, x2, y + ctx.dp(48)), package=PKG,
                  rid=f"{PKG}:id/tab_switcher_button", desc=tabs_desc(ctx, count), on_tap=on_tap)
    x1 = x2 - ctx.dp(48)
    square = (x1 + ctx.dp(14), y + ctx.dp(14), x2 - ctx.dp(14), y + ctx.dp(34))
    button.add(Node(bounds=square, package=PKG, kind="border", radius=ctx.dp(3), icon_color=ctx.theme.icon,
                    visual=True))
    button.add(Node(bounds=square, package=PKG, text=ctx.locale.number(count), size=ctx.sp(11), bold=True,
                    align="center", fg=ctx.theme.icon, visual=True))
    return button


def _open_switcher(dev: Phone):
    return lambda x, y: dev.push("chrome", "switcher")


def _new_tab_page(dev: Phone, ctx: Ctx, root: Node) -> Node:
    """The omnibox's search box with the tab switcher and menu buttons at its end, then the most visited sites."""
    st = dev.state
    y = ctx.top + ctx.dp(12)
    box = search_box(ctx, PKG, y, ctx.t("apps.chrome_search"), lambda x, yy: dev.focus_field("chrome", "search"),
                     rid=f"{PKG}:id/search_box", value=st.fields.get("chrome.search", ""),
                     focused=st.focus == ("chrome", "search"))
    x1, y1, x2, y2 = box.bounds
    box.bounds = (x1, y1, x2 - ctx.dp(96), y2)
    root.add(box)
    right = ctx.content_right - ctx.dp(4)
    root.add(_tab_switcher_button(dev, ctx, right - ctx.dp(48), y, _open_switcher(dev)))
    root.add(_menu_button(dev, ctx, right, y))
    top = ctx.top + ctx.dp(72)
    rows = [(ctx.dp(72), _site_row(dev, ctx, p)) for p in chrome_state(dev).pages]
    root.add(scroll_list(ctx, PKG, "chrome.main", top, ctx.bottom, rows, st.scroll.get("chrome.main", 0),
                         rid=f"{PKG}:id/tile_grid_layout"))
    return root


def _site_row(dev: Phone, ctx: Ctx, page: Page):
    def build_row(y: int) -> Node:
        return list_row(ctx, PKG, y, page.title or shown_url(page.url), shown_url(page.url), icon="glyph:language",
                        on_tap=lambda x, yy: open_page(dev, page.url), rid_title=f"{PKG}:id/tile_view_title",
                        rid_summary="", desc=page.title)
    return build_row


def _page(dev: Phone, ctx: Ctx, root: Node, url: str) -> Node:
    """The toolbar (URL bar, menu button) over the page's heading and paragraphs, which scroll when they do not fit.
    A page the state no longer holds shows the toolbar alone."""
    st = dev.state
    h = ctx.dp(56)
    toolbar = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.top + h), package=PKG,
                   rid=f"{PKG}:id/toolbar", bg=ctx.theme.surface)
    focused = st.focus == ("chrome", "search")
    typed = st.fields.get("chrome.search", "") if focused else ""
    right = ctx.content_right - ctx.dp(4)
    toolbar.add(Node(cls="android.widget.EditText", bounds=(ctx.content_left + ctx.dp(8), ctx.top + ctx.dp(8),
                     right - ctx.dp(100), ctx.top + h - ctx.dp(8)), package=PKG, rid=f"{PKG}:id/url_bar",
                     text=typed or shown_url(url), size=ctx.sp(16), inset=ctx.dp(16), fg=ctx.theme.on_surface,
                     bg=ctx.theme.search_bar, radius=(h - ctx.dp(16)) // 2, focusable=True, focused=focused,
                     on_tap=lambda x, y: dev.focus_field("chrome", "search")))
    toolbar.add(_tab_switcher_button(dev, ctx, right - ctx.dp(48), ctx.top + ctx.dp(4), _open_switcher(dev)))
    toolbar.add(_menu_button(dev, ctx, right, ctx.top + ctx.dp(4)))
    root.add(toolbar)
    page = find_page(dev, url)
    if page is None:
        return root
    x1, x2 = ctx.content_left + ctx.dp(16), ctx.content_right - ctx.dp(16)
    blocks = [(page.title, 24, True), *((p, 16, False) for p in page.text)]
    rows = []
    for i, (value, size, bold) in enumerate(blocks):
        gap = ctx.dp(16 if i == 0 else 12)
        height = paragraph(ctx, PKG, x1, x2, 0, value, size, bold=bold).bounds[3] + gap

        def build_block(y: int, value=value, size=size, bold=bold, gap=gap) -> Node:
            return paragraph(ctx, PKG, x1, x2, y + gap, value, size, bold=bold, cls="android.view.View")
        rows.append((height, build_block))
    content = scroll_list(ctx, PKG, "chrome.page", ctx.top + h, ctx.bottom, rows, st.scroll.get("chrome.page", 0),
                          cls="android.webkit.WebView")
    content.desc = page.title
    for node in content.walk():  # the page's own direction (an English page: left to right), whatever the phone's
        node.mirror = False
    root.add(content)
    return root


def _menu(dev: Phone, ctx: Ctx, beneath: Screen) -> Node:
    """The app menu over the screen it was opened from; Share… only on a web page."""
    def history() -> None:
        dev.start_activity("chrome", "history", HISTORY_ACTIVITY)

    rid = f"{PKG}:id/menu_item_text"
    items = [(ctx.t("apps.chrome_new_tab"), rid, _menu_tap(dev, lambda: new_tab(dev))),
             (ctx.t("apps.chrome_history"), rid, _menu_tap(dev, history)),
             (ctx.t("apps.chrome_downloads"), rid, lambda x, y: None)]
    if beneath["screen"] == "page":
        url = beneath.get("url", "")  # shared as Chrome shares a page: its address, the text of an ACTION_SEND
        items.append((ctx.t("apps.chrome_share"), rid, _menu_tap(dev, lambda: open_chooser(dev, "chrome", url))))
    items.append((ctx.t("apps.chrome_settings"), rid, lambda x, y: None))
    return menu_popup(ctx, PKG, items, lambda x, y: dev.press_back(), rid=f"{PKG}:id/app_menu_list")


def _history(dev: Phone, ctx: Ctx, root: Node) -> Node:
    """History: the pages visited, the latest first, each once."""
    root.add(app_bar(ctx, PKG, ctx.t("apps.chrome_history"), up=lambda x, y: dev.press_back()))
    urls = list(dict.fromkeys(reversed(chrome_state(dev).history)))
    rows = []
    for url in urls:
        page = find_page(dev, url)

        def build_row(y: int, url=url, title=page.title if page else "") -> Node:
            return list_row(ctx, PKG, y, title or shown_url(url), shown_url(url).partition("/")[0],
                            icon="glyph:language", rid_title=f"{PKG}:id/title", rid_summary=f"{PKG}:id/description")
        rows.append((ctx.dp(72), build_row))
    top = ctx.top + ctx.dp(56)
    root.add(scroll_list(ctx, PKG, "chrome.history", top, ctx.bottom, rows, dev.state.scroll.get("chrome.history", 0),
                         rid=f"{PKG}:id/recycler_view"))
    return root


def _switcher(dev: Phone, ctx: Ctx, root: Node) -> Node:
    """The tab switcher: a toolbar with New tab at its start and the tab switcher and menu buttons at its end (the
    first goes back to the tab in front), over a card per tab, the tab in front's last."""
    h = ctx.dp(56)
    toolbar = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.top + h), package=PKG,
                   rid=f"{PKG}:id/toolbar", bg=ctx.theme.surface)
    left, right = ctx.content_left + ctx.dp(4), ctx.content_right - ctx.dp(4)
    toolbar.add(Node(cls="android.widget.ImageButton", bounds=(left, ctx.top + ctx.dp(4), left + ctx.dp(48),
                     ctx.top + ctx.dp(52)), package=PKG, rid=f"{PKG}:id/new_tab_button",
                     desc=ctx.t("apps.chrome_new_tab"), icon="glyph:add", icon_color=ctx.theme.icon,
                     on_tap=lambda x, y: new_tab(dev)))
    toolbar.add(_tab_switcher_button(dev, ctx, right - ctx.dp(48), ctx.top + ctx.dp(4),
                                     lambda x, y: dev.press_back()))
    toolbar.add(_menu_button(dev, ctx, right, ctx.top + ctx.dp(4)))
    root.add(toolbar)
    stack = dev.state.tasks["chrome"]
    front = stack[-2] if len(stack) > 1 else {"screen": "main"}
    page = find_page(dev, front.get("url", "")) if front["screen"] == "page" else None
    shown = (page.title or shown_url(page.url)) if page else ctx.t("apps.chrome_new_tab")
    titles = [ctx.t("apps.chrome_new_tab")] * (chrome_state(dev).tabs - 1) + [shown]
    rows = []
    for title in titles:
        def build_row(y: int, title=title) -> Node:
            return list_row(ctx, PKG, y, title, "", icon="glyph:language", rid_title=f"{PKG}:id/tab_title",
                            rid_summary="", on_tap=lambda x, yy: dev.press_back())
        rows.append((ctx.dp(56), build_row))
    root.add(scroll_list(ctx, PKG, "chrome.switcher", ctx.top + h, ctx.bottom, rows,
                         dev.state.scroll.get("chrome.switcher", 0)))
    return root
