"""Walmart (com.walmart.android 24.19, B-MoCA release 2.5) as B-MoCA's phones have it: a guest (its
``walmart_init`` continues without signing in), the store chosen from the shared location, the cart empty.

One activity with a bottom navigation of five tabs, ``navigation_shop``, ``navigation_my_items``,
``navigation_search``, ``navigation_services`` and ``navigation_account`` (Material's BottomNavigationView: each item
a FrameLayout whose content description is its label, ``selected`` on the tab shown). Every tab has the cart button
at the top end of its header. What B-MoCA's evaluators read, the app shows where the real one does:

- Shop: the search bar ("Search Walmart"), the store the items come from ("Pickup or delivery?") and the deals.
- My Items and Account: what a guest sees (Reorder, Lists, Registries; a sign-in button and the account's rows).
- Search: the search bar over the departments; a department opens its category page, whose title is
  ``category_container_title`` and whose rows are its subcategories, the bottom navigation still below it.
- Services: the store's services; Store map opens the store's in-store map, a web page inside
  ``instoremaps_webview_container``.
- The cart (``cart_fragment_constraint_layout``): what the cart holds, or the empty cart's invitation to shop.

The store, the departments and their subcategories, the deals and the store map's blocks are the content the real
app fetches from Walmart's servers: fixed here in ``vlui/sim/data/walmart.yaml``, in the catalogue's English in every
locale. The app's own strings are English and, on a Spanish phone, Spanish: Walmart ships those two; a phone in any
other language gets its English. The app's state, :class:`WalmartState`, is the cart, set under ``walmart:`` in a
snapshot's or a task's state (``walmart: {cart: [Bananas, each]}``, names of the catalogue's deals).

Resource ids are the real app's where B-MoCA's evaluators read them (the five tabs, ``category_container_title``,
``cart_fragment_constraint_layout``, ``instoremaps_webview_container``); the others (``cart_button``,
``search_bar``, ``department_name``, ...) are plausible names. Departures from the real app: the search bar takes
text but finds nothing, rows that lead to a web page or a sign-in form (a deal, a service other than the map,
Account's rows) do nothing, and the home page is one list where the real one is a feed of banners and carousels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal, Required, TypedDict, get_args

from vlui.resources import read_yaml
from vlui.sim import DATA_DIR
from vlui.sim.apps.tab_bar import back_to, select_tab as show_tab
from vlui.sim.protocol import Phone
from vlui.sim.ui import Node
from vlui.sim.widgets import Ctx, Tap, bottom_navigation, button, list_row, paragraph, scroll_list, search_box, text

PKG = "com.walmart.android"
BLUE = (0, 113, 220)  # Walmart's header blue
YELLOW = (255, 194, 32)
WHITE = (255, 255, 255)
Tab = Literal["shop", "my_items", "search", "services", "account"]
TABS: tuple[str, ...] = get_args(Tab)
TAB_GLYPHS = {"shop": "storefront", "my_items": "heart", "search": "search", "services": "apps",
              "account": "person"}
ScreenName = Literal["main", "category", "cart", "store_map"]
SCREENS: tuple[str, ...] = get_args(ScreenName)
# the Services tab's rows, by section: the in-store ones first (the store map among them)
SERVICES = (("in_store", ("store_map", "pharmacy", "photo", "auto_care", "vision")),
            ("more_services", ("money", "gift_cards", "walmart_plus")))
ACCOUNT_ROWS = ("purchase_history", "walmart_plus", "payment_methods", "addresses", "help", "settings")


class Screen(TypedDict, total=False):
    """A screen on Walmart's task."""

    screen: Required[ScreenName]
    tab: Tab  # main, category: the tab selected in the bottom navigation (a category page: the one it came from)
    department: str  # category: the department shown, a name of the catalogue's


@lru_cache(maxsize=1)
def catalogue() -> dict[str, Any]:
    """The store, departments, deals and store map the app shows (``vlui/sim/data/walmart.yaml``)."""
    return read_yaml(DATA_DIR / "walmart.yaml")


def _prices() -> dict[str, float]:
    return {d["name"]: d["price"] for d in catalogue()["deals"]}


@dataclass
class WalmartState:
    """What Walmart remembers: the cart, names of the catalogue's deals (a name twice: two of it)."""

    cart: list[str] = field(default_factory=list)


def entry_problem(value: Any) -> str | None:
    """A cart may hold only the catalogue's products."""
    if isinstance(value, dict):
        unknown = [n for n in value.get("cart", []) if n not in _prices()]
        if unknown:
            return f"walmart: cart: {unknown[0]!r} is not in the catalogue; products: {', '.join(_prices())}"
    return None


def walmart_state(dev: Phone) -> WalmartState:
    return dev.state.app("walmart", WalmartState)


def price(value: float) -> str:
    return f"${value:,.2f}"


# ---------------------------------------------------------------------------------------------------- actions
def select_tab(dev: Phone, tab: str) -> None:
    show_tab(dev, "walmart", tab)


on_back = back_to("shop")  # BACK on another tab shows this one; on it, BACK leaves the app


# ---------------------------------------------------------------------------------------------------- screens
def build(dev: Phone, ctx: Ctx, screen: Screen) -> Node:
    root = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG,
                bg=ctx.theme.background)
    page = screen["screen"]
    if page == "cart":
        return _cart(dev, ctx, root)
    if page == "store_map":
        return _store_map(dev, ctx, root)
    tab = screen.get("tab", "shop")
    nav_top = ctx.bottom - ctx.dp(56)
    if page == "category":
        _category(dev, ctx, root, screen.get("department", ""), nav_top)
    else:
        {"shop": _shop, "my_items": _my_items, "search": _search, "services": _services,
         "account": _account}[tab](dev, ctx, root, nav_top)
    return root.add(_bottom_navigation(dev, ctx, tab, nav_top))


def _bottom_navigation(dev: Phone, ctx: Ctx, selected: str, y: int) -> Node:
    items = [(f"{PKG}:id/navigation_{tab}", ctx.t(f"walmart.{tab}"), TAB_GLYPHS[tab], tab == selected,
              lambda xx, yy, tab=tab: select_tab(dev, tab)) for tab in TABS]
    labels = (f"{PKG}:id/navigation_bar_item_large_label_view", f"{PKG}:id/navigation_bar_item_small_label_view")
    return bottom_navigation(ctx, PKG, y, items, f"{PKG}:id/bottom_nav", labels,
                             color=ctx.theme.accent if ctx.theme.dark else BLUE)


def _cart_button(dev: Phone, ctx: Ctx, x2: int, y: int, color) -> Node:
    count = len(walmart_state(dev).cart)
    node = Node(cls="android.widget.ImageButton", bounds=(x2 - ctx.dp(48), y, x2, y + ctx.dp(48)), package=PKG,
                rid=f"{PKG}:id/cart_button", desc=ctx.t("walmart.cart_desc", count=count), clickable=True,
                on_tap=lambda xx, yy: dev.push("walmart", "cart"))
    g = ctx.dp(12)
    return node.add(Node(bounds=(x2 - ctx.dp(24) - g, y + ctx.dp(24) - g, x2 - ctx.dp(24) + g, y + ctx.dp(24) + g),
                         icon="glyph:cart", icon_color=color, visual=True))


def _header(dev: Phone, ctx: Ctx, root: Node, title: str = "") -> int:
    """The tab's header: on Shop and Search the blue bar with the search bar, elsewhere the tab's title; the cart
    button at its end. Returns the first row below it."""
    st = dev.state
    h = ctx.dp(64)
    right = ctx.content_right - ctx.dp(4)
    if title:
        bar = Node(cls="android.view.ViewGroup", bounds=(0, ctx.top, ctx.width, ctx.top + h), package=PKG,
                   rid=f"{PKG}:id/toolbar", bg=ctx.theme.surface)
        bar.add(text(ctx, (ctx.content_left + ctx.dp(16), ctx.top, right - ctx.dp(48), ctx.top + h), title, 20,
                     bold=True, pkg=PKG, rid=f"{PKG}:id/toolbar_title"))
        bar.add(_cart_button(dev, ctx, right, ctx.top + ctx.dp(8), ctx.theme.on_surface))
        root.add(bar)
        return ctx.top + h
    bar = Node(cls="android.view.ViewGroup", bounds=(0, ctx.top, ctx.width, ctx.top + h), package=PKG,
               rid=f"{PKG}:id/toolbar", bg=BLUE)
    focused = st.focus == ("walmart", "search")
    box = search_box(ctx, PKG, ctx.top + ctx.dp(10), ctx.t("walmart.search_hint"),
                     lambda xx, yy: dev.focus_field("walmart", "search"), rid=f"{PKG}:id/search_bar",
                     value=st.fields.get("walmart.search", "") if focused else "", focused=focused, h_dp=44,
                     margin_dp=12)
    x1, y1, x2, y2 = box.bounds
    box.bounds, box.bg = (x1, y1, right - ctx.dp(52), y2), WHITE
    box.fg = (46, 47, 50) if box.text != ctx.t("walmart.search_hint") else (116, 118, 124)
    bar.add(box)
    bar.add(_cart_button(dev, ctx, right, ctx.top + ctx.dp(8), WHITE))
    root.add(bar)
    return ctx.top + h


def _rows(dev: Phone, ctx: Ctx, root: Node, key: str, y1: int, y2: int, rows, rid: str = "") -> None:
    root.add(scroll_list(ctx, PKG, key, y1, y2, rows, dev.state.scroll.get(key, 0), rid=rid))


def _heading(ctx: Ctx, label: str, rid: str = ""):
    h = ctx.dp(48)

    def build_row(y: int) -> Node:
        return text(ctx, (ctx.content_left + ctx.dp(16), y, ctx.content_right - ctx.dp(16), y + h), label, 18,
                    bold=True, pkg=PKG, rid=rid)
    return h, build_row


def _row(ctx: Ctx, title: str, on_tap: Tap | None = None, summary: str = "", rid: str = "", icon: str = ""):
    h = ctx.dp(72 if summary else 56)

    def build_row(y: int) -> Node:
        row = list_row(ctx, PKG, y, title, summary, icon=icon, on_tap=on_tap, rid_title=rid,
                       rid_summary=f"{PKG}:id/item_price" if summary else "")
        row.clickable = on_tap is not None
        return row
    return h, build_row


def _shop(dev: Phone, ctx: Ctx, root: Node, bottom: int) -> None:
    """The home page: the store the items come from, then the deals."""
    y = _header(dev, ctx, root)
    store = catalogue()["store"]
    rows = [_row(ctx, ctx.t("walmart.pickup_or_delivery"), summary=store["name"], rid=f"{PKG}:id/intent_title",
                 icon="glyph:location"),
            _heading(ctx, ctx.t("walmart.deals"), rid=f"{PKG}:id/module_title")]
    rows += [_row(ctx, d["name"], summary=price(d["price"]), rid=f"{PKG}:id/item_name", on_tap=lambda xx, yy: None)
             for d in catalogue()["deals"]]
    _rows(dev, ctx, root, "walmart.shop", y, bottom, rows, rid=f"{PKG}:id/home_recycler_view")


def _search(dev: Phone, ctx: Ctx, root: Node, bottom: int) -> None:
    """The search bar over the departments, a row each."""
    y = _header(dev, ctx, root)
    rows = [_heading(ctx, ctx.t("walmart.departments"), rid=f"{PKG}:id/module_title")]
    for dept in catalogue()["departments"]:
        def open_department(xx, yy, name=dept["name"]) -> None:
            dev.push("walmart", "category", tab="search", department=name)
        rows.append(_row(ctx, dept["name"], open_department, rid=f"{PKG}:id/department_name"))
    _rows(dev, ctx, root, "walmart.search", y, bottom, rows, rid=f"{PKG}:id/departments_recycler_view")


def _my_items(dev: Phone, ctx: Ctx, root: Node, bottom: int) -> None:
    """A guest's My Items: its three lists, and the invitation to sign in to see them."""
    y = _header(dev, ctx, root, ctx.t("walmart.my_items"))
    h = ctx.dp(48)
    strip = Node(cls="android.widget.HorizontalScrollView", bounds=(0, y, ctx.width, y + h), package=PKG,
                 rid=f"{PKG}:id/my_items_tabs", bg=ctx.theme.surface)
    left, right = ctx.content_left, ctx.content_right
    w = (right - left) / 3
    for i, name in enumerate(("reorder", "lists", "registries")):
        x1, x2 = left + int(i * w), left + int((i + 1) * w)
        tab = Node(cls="android.widget.LinearLayout", bounds=(x1, y, x2, y + h), package=PKG,
                   desc=ctx.t(f"walmart.{name}"), selected=i == 0, clickable=True, on_tap=lambda xx, yy: None)
        tab.add(text(ctx, (x1, y, x2, y + h), ctx.t(f"walmart.{name}"), 14, bold=i == 0, align="center", pkg=PKG,
                     color=ctx.theme.on_surface if i == 0 else ctx.theme.secondary))
        if i == 0:
            tab.add(Node(bounds=(x1 + ctx.dp(12), y + h - ctx.dp(3), x2 - ctx.dp(12), y + h), bg=ctx.theme.on_surface,
                         visual=True))
        strip.add(tab)
    root.add(strip)
    _sign_in(dev, ctx, root, y + h + ctx.dp(32), ctx.t("walmart.sign_in_items"))


def _sign_in(dev: Phone, ctx: Ctx, root: Node, y: int, message: str) -> int:
    """A message and the sign-in button under it; returns the first row below them."""
    x1, x2 = ctx.content_left + ctx.dp(24), ctx.content_right - ctx.dp(24)
    note = paragraph(ctx, PKG, x1, x2, y, message, 16, rid=f"{PKG}:id/sign_in_message")
    for line in note.children:
        line.align = "center"
    root.add(note)
    y = note.bounds[3] + ctx.dp(16)
    b = button(ctx, PKG, (x1, y, x2, y + ctx.dp(44)), ctx.t("walmart.sign_in"), lambda xx, yy: None,
               rid=f"{PKG}:id/sign_in_button", filled=True)
    b.bg, b.fg, b.radius = BLUE, WHITE, ctx.dp(22)
    root.add(b)
    return y + ctx.dp(60)


def _services(dev: Phone, ctx: Ctx, root: Node, bottom: int) -> None:
    """The store's services by section; Store map opens the in-store map."""
    y = _header(dev, ctx, root, ctx.t("walmart.services"))
    rows = []
    for section, names in SERVICES:
        rows.append(_heading(ctx, ctx.t(f"walmart.{section}"), rid=f"{PKG}:id/services_section_title"))
        for name in names:
            tap = (lambda xx, yy: dev.push("walmart", "store_map")) if name == "store_map" else (lambda xx, yy: None)
            rows.append(_row(ctx, ctx.t(f"walmart.{name}"), tap, rid=f"{PKG}:id/services_item_title"))
    _rows(dev, ctx, root, "walmart.services", y, bottom, rows, rid=f"{PKG}:id/services_recycler_view")


def _account(dev: Phone, ctx: Ctx, root: Node, bottom: int) -> None:
    """A guest's account: the greeting, the sign-in button, then the account's rows."""
    y = _header(dev, ctx, root, ctx.t("walmart.account"))
    y = _sign_in(dev, ctx, root, y + ctx.dp(16), ctx.t("walmart.greeting"))
    rows = [_row(ctx, ctx.t(f"walmart.{name}"), lambda xx, yy: None, rid=f"{PKG}:id/account_item_title")
            for name in ACCOUNT_ROWS]
    _rows(dev, ctx, root, "walmart.account", y, bottom, rows, rid=f"{PKG}:id/account_recycler_view")


def _top_bar(dev: Phone, ctx: Ctx, root: Node, title: str, rid: str) -> int:
    """A screen over the tabs: the up arrow and its title. Returns the first row below it."""
    h = ctx.dp(56)
    bar = Node(cls="android.view.ViewGroup", bounds=(0, ctx.top, ctx.width, ctx.top + h), package=PKG,
               rid=f"{PKG}:id/toolbar", bg=ctx.theme.surface)
    bar.add(Node(cls="android.widget.ImageButton", bounds=(0, ctx.top, ctx.dp(56), ctx.top + h), package=PKG,
                 desc=ctx.t("common.navigate_up"), icon="glyph:arrow_back", icon_color=ctx.theme.icon,
                 clickable=True, on_tap=lambda xx, yy: dev.press_back()))
    bar.add(text(ctx, (ctx.dp(72), ctx.top, ctx.width - ctx.dp(16), ctx.top + h), title, 20, bold=True, pkg=PKG,
                 rid=rid))
    root.add(bar)
    return ctx.top + h


def _category(dev: Phone, ctx: Ctx, root: Node, name: str, bottom: int) -> None:
    """A department's category page: its name as the title, its subcategories below."""
    y = _top_bar(dev, ctx, root, name, f"{PKG}:id/category_container_title")
    dept = next((d for d in catalogue()["departments"] if d["name"] == name), {"subcategories": []})
    rows = [_row(ctx, sub, lambda xx, yy: None, rid=f"{PKG}:id/category_item_title") for sub in dept["subcategories"]]
    _rows(dev, ctx, root, "walmart.category", y, bottom, rows, rid=f"{PKG}:id/category_recycler_view")


def _cart(dev: Phone, ctx: Ctx, root: Node) -> Node:
    """The cart: its items and subtotal, or, empty, the invitation to start shopping."""
    y = _top_bar(dev, ctx, root, ctx.t("walmart.cart"), f"{PKG}:id/cart_title")
    body = Node(cls="android.view.ViewGroup", bounds=(0, y, ctx.width, ctx.bottom), package=PKG,
                rid=f"{PKG}:id/cart_fragment_constraint_layout")
    items = walmart_state(dev).cart
    x1, x2 = ctx.content_left + ctx.dp(24), ctx.content_right - ctx.dp(24)
    if not items:
        title = paragraph(ctx, PKG, x1, x2, y + ctx.dp(48), ctx.t("walmart.cart_empty_title"), 20, bold=True,
                          rid=f"{PKG}:id/cart_empty_title")
        note = paragraph(ctx, PKG, x1, x2, title.bounds[3] + ctx.dp(8), ctx.t("walmart.cart_empty_body"), 14,
                         color=ctx.theme.secondary, rid=f"{PKG}:id/cart_empty_message")
        top = note.bounds[3] + ctx.dp(24)
        go = button(ctx, PKG, (x1, top, x2, top + ctx.dp(44)), ctx.t("walmart.start_shopping"),
                    lambda xx, yy: select_tab(dev, "shop"), rid=f"{PKG}:id/cart_empty_button", filled=True)
        go.bg, go.fg, go.radius = BLUE, WHITE, ctx.dp(22)
        root.add(body.add(title, note, go))
        return root
    prices = _prices()
    subtotal = sum(prices[n] for n in items)
    rows = [_row(ctx, ctx.t("walmart.subtotal", count=len(items)), summary=price(subtotal),
                 rid=f"{PKG}:id/cart_subtotal")]
    rows += [_row(ctx, n, summary=price(prices[n]), rid=f"{PKG}:id/item_name") for n in items]
    body.add(scroll_list(ctx, PKG, "walmart.cart", y, ctx.bottom, rows, dev.state.scroll.get("walmart.cart", 0),
                         rid=f"{PKG}:id/cart_recycler_view"))
    return root.add(body)


def _store_map(dev: Phone, ctx: Ctx, root: Node) -> Node:
    """The store's map, a web page: the store's name over its departments, a block each where they stand."""
    y = _top_bar(dev, ctx, root, ctx.t("walmart.store_map"), f"{PKG}:id/toolbar_title")
    store = catalogue()["store"]
    container = Node(cls="android.widget.FrameLayout", bounds=(0, y, ctx.width, ctx.bottom), package=PKG,
                     rid=f"{PKG}:id/instoremaps_webview_container")
    web = Node(cls="android.webkit.WebView", bounds=(0, y, ctx.width, ctx.bottom), package=PKG,
               desc=ctx.t("walmart.store_map"), bg=(245, 246, 247))
    x1, x2 = ctx.content_left + ctx.dp(16), ctx.content_right - ctx.dp(16)
    name = paragraph(ctx, PKG, x1, x2, y + ctx.dp(12), store["name"], 16, bold=True, cls="android.view.View",
                     color=(46, 47, 50))
    web.add(name)
    top = name.bounds[3] + ctx.dp(12)
    side = max(1, min(x2 - x1, ctx.bottom - top - ctx.dp(16)))
    left = (x1 + x2 - side) // 2
    for block in catalogue()["map"]:
        bx1, by1 = left + side * block["x"] // 100, top + side * block["y"] // 100
        bx2, by2 = bx1 + side * block["w"] // 100, by1 + side * block["h"] // 100
        web.add(Node(cls="android.view.View", bounds=(bx1, by1, bx2, by2), package=PKG, text=block["name"],
                     size=ctx.sp(12), align="center", fg=(46, 47, 50), bg=(214, 230, 248), radius=ctx.dp(4)))
    for node in web.walk():  # the page's own direction (an English page: left to right), whatever the phone's
        node.mirror = False
    return root.add(container.add(web))
