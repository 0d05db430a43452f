"""Instagram (com.instagram.android 325.0.0.35.91, B-MoCA release 2.5) as B-MoCA's phones have it: signed in.

One activity with the tab bar at the bottom (``tab_bar``): ``feed_tab`` (Home), ``search_tab`` (Search and explore),
``creation_tab`` (Create), ``clips_tab`` (Reels) and ``profile_tab`` (Profile), each a FrameLayout whose content
description is its name, ``selected`` on the tab shown, as B-MoCA's evaluators read them.

- Home: the Instagram logo with Notifications and Messenger, the stories tray (``reel_tray_recycler_view``: your
  story first) and the feed's posts (author, picture, likes, caption).
- Search and explore: the search bar (``action_bar_search_edit_text``) over the explore grid.
- Reels: a reel filling the screen (``clips_viewer_container``): its author, caption and audio, Like, Comment and
  Share; the tab bar dark under it.
- Profile: the username as the title (``action_bar_title``), the counts, the name and bio, Edit profile and Share
  profile, the tabs of posts, reels and tagged posts (``profile_tab_layout``, structured as the release's unused
  evaluators of the tagged and reels lists read it) and the posts' grid.
- Create opens New post over the tabs (closed by its X or BACK).

The account, the accounts followed, the feed, the explore grid and the reel are what the real app fetches from
Instagram's servers: fixed here in ``vlui/sim/data/instagram.yaml`` (pictures are plain colours). BACK on a tab other
than Home goes to Home, on Home it leaves the app. Resource ids are the real app's where B-MoCA's evaluators and
scripts written against the app name them (the tabs, ``tab_bar``, ``action_bar_title``, ``profile_tab_layout``,
``clips_viewer_container``, ``reel_tray_recycler_view``, ``action_bar_search_edit_text``); the others are plausible
names. Departures from the real app: nothing opens from a post, a story, a tile or a button other than the tabs,
Create and the profile's tabs; the search bar takes text but finds nothing; one reel, no scrolling to the next.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal, Required, TypedDict, get_args

from vlui.resources import read_yaml
from vlui.sim import DATA_DIR
from vlui.sim.apps.tab_bar import back_to, select_tab as show_tab
from vlui.sim.protocol import Phone
from vlui.sim.ui import Color, Node
from vlui.sim.widgets import Ctx, bottom_navigation, button, paragraph, scroll_list, search_box, text

PKG = "com.instagram.android"
WHITE, BLACK = (255, 255, 255), (0, 0, 0)
Tab = Literal["feed", "search", "reels", "profile"]
TABS: tuple[str, ...] = get_args(Tab)
# the tab bar in its order: (resource id's name, the tab it shows or None for Create, its name's string, its glyph)
BAR = (("feed_tab", "feed", "home", "house"), ("search_tab", "search", "search_explore", "search"),
       ("creation_tab", None, "create", "new_post"), ("clips_tab", "reels", "reels", "reels"),
       ("profile_tab", "profile", "profile", "person"))
PROFILE_TABS = ("image", "reels", "person")  # posts, reels, tagged: the glyphs of the profile's tabs
ScreenName = Literal["main", "create"]
SCREENS: tuple[str, ...] = get_args(ScreenName)


class Screen(TypedDict, total=False):
    """A screen on Instagram's task."""

    screen: Required[ScreenName]
    tab: Tab  # main: the tab shown
    profile_tab: int  # main, on Profile: its tab shown (0 posts, 1 reels, 2 tagged)


@lru_cache(maxsize=1)
def catalogue() -> dict[str, Any]:
    """The account and what it sees (``vlui/sim/data/instagram.yaml``)."""
    return read_yaml(DATA_DIR / "instagram.yaml")


def colour(value: str) -> Color:
    return int(value[1:3], 16), int(value[3:5], 16), int(value[5:7], 16)


# ---------------------------------------------------------------------------------------------------- actions
def select_tab(dev: Phone, tab: str) -> None:
    show_tab(dev, "instagram", tab)


on_back = back_to("feed")  # BACK on another tab shows this one; on it, BACK leaves the app


# ---------------------------------------------------------------------------------------------------- screens
def build(dev: Phone, ctx: Ctx, screen: Screen) -> Node:
    root = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG,
                bg=ctx.theme.background)
    if screen["screen"] == "create":
        return _new_post(dev, ctx, root)
    tab = screen.get("tab", "feed")
    bar_top = ctx.bottom - ctx.dp(50)
    {"feed": _feed, "search": _search, "reels": _reels, "profile": _profile}[tab](dev, ctx, root, bar_top, screen)
    items = []
    for rid, shows, name, glyph_name in BAR:
        def tap(xx, yy, shows=shows) -> None:
            if shows is None:
                dev.push("instagram", "create")
            else:
                select_tab(dev, shows)
        items.append((f"{PKG}:id/{rid}", ctx.t(f"instagram.{name}"), glyph_name, shows == tab, tap))
    dark = tab == "reels"
    return root.add(bottom_navigation(ctx, PKG, bar_top, items, f"{PKG}:id/tab_bar",
                                      color=WHITE if dark else None, bg=BLACK if dark else None))


def _icon_button(ctx: Ctx, x2: int, y: int, glyph_name: str, desc: str, color, rid: str = "") -> Node:
    """A 48 dp button ending at ``x2`` with a 24 dp glyph in its middle (it does nothing: no screen behind it)."""
    node = Node(cls="android.widget.ImageView", bounds=(x2 - ctx.dp(48), y, x2, y + ctx.dp(48)), package=PKG,
                rid=rid, desc=desc, clickable=True, on_tap=lambda xx, yy: None)
    g = ctx.dp(12)
    cx, cy = x2 - ctx.dp(24), y + ctx.dp(24)
    return node.add(Node(bounds=(cx - g, cy - g, cx + g, cy + g), icon=f"glyph:{glyph_name}", icon_color=color,
                         visual=True))


def _avatar(ctx: Ctx, cx: int, cy: int, r: int, fill: Color, rid: str = "", desc: str = "") -> Node:
    return Node(cls="android.widget.ImageView", bounds=(cx - r, cy - r, cx + r, cy + r), package=PKG, rid=rid,
                desc=desc, bg=fill, radius=-1)


def _user_colour(name: str) -> Color:
    """An account's avatar colour, fixed by its name."""
    k = sum(name.encode())
    return 80 + k * 37 % 150, 80 + k * 61 % 150, 80 + k * 89 % 150


def _feed(dev: Phone, ctx: Ctx, root: Node, bottom: int, screen: Screen) -> None:
    """The logo with Notifications and Messenger, then the stories tray and the posts, which scroll together."""
    h = ctx.dp(56)
    left, right = ctx.content_left, ctx.content_right
    bar = Node(cls="android.view.ViewGroup", bounds=(0, ctx.top, ctx.width, ctx.top + h), package=PKG,
               rid=f"{PKG}:id/action_bar_container", bg=ctx.theme.background)
    logo = text(ctx, (left + ctx.dp(16), ctx.top, right - ctx.dp(112), ctx.top + h), "Instagram", 26, bold=True,
                pkg=PKG, rid=f"{PKG}:id/title_logo", desc="Instagram")
    logo.text = ""  # the logo is a picture: its name is its description
    logo.add(Node(bounds=logo.bounds, text="Instagram", size=ctx.sp(26), bold=True, fg=ctx.theme.on_surface,
                  visual=True))
    bar.add(logo)
    bar.add(_icon_button(ctx, right - ctx.dp(52), ctx.top + ctx.dp(4), "heart",
                         ctx.t("instagram.notifications"), ctx.theme.on_surface, f"{PKG}:id/notification"))
    bar.add(_icon_button(ctx, right - ctx.dp(4), ctx.top + ctx.dp(4), "send", "Messenger", ctx.theme.on_surface,
                         f"{PKG}:id/action_bar_inbox_button"))
    root.add(bar)
    rows = [(ctx.dp(104), lambda y: _stories(ctx, y))]
    for post in catalogue()["feed"]:
        rows.append(_post(ctx, post))
    root.add(scroll_list(ctx, PKG, "instagram.feed", ctx.top + h, bottom, rows, dev.state.scroll.get(
        "instagram.feed", 0), rid=f"{PKG}:id/list"))


def _stories(ctx: Ctx, y: int) -> Node:
    data = catalogue()
    tray = Node(cls="androidx.recyclerview.widget.RecyclerView", bounds=(0, y, ctx.width, y + ctx.dp(104)),
                package=PKG, rid=f"{PKG}:id/reel_tray_recycler_view")
    me = data["account"]["username"]
    people = [(me, ctx.t("instagram.your_story")), *((u, u) for u in data["stories"])]
    x, w = ctx.content_left + ctx.dp(4), ctx.dp(80)
    for user, label in people:
        if x + w > ctx.content_right:
            break
        cell = Node(cls="android.widget.LinearLayout", bounds=(x, y, x + w, y + ctx.dp(104)), package=PKG,
                    desc=label, clickable=True, on_tap=lambda xx, yy: None)
        cell.add(_avatar(ctx, x + w // 2, y + ctx.dp(42), ctx.dp(32), _user_colour(user)))
        cell.add(text(ctx, (x, y + ctx.dp(80), x + w, y + ctx.dp(100)), label, 12, align="center", pkg=PKG,
                      rid=f"{PKG}:id/username"))
        tray.add(cell)
        x += w
    return tray


def _post(ctx: Ctx, post: dict[str, Any]):
    """A post of the feed: its author, its picture (square), its actions, likes and caption."""
    left, right = ctx.content_left, ctx.content_right
    side = right - left
    caption = f"{post['user']} {post['caption']}"
    cap_h = paragraph(ctx, PKG, left + ctx.dp(16), right - ctx.dp(16), 0, caption, 14).bounds[3]
    h = ctx.dp(56) + side + ctx.dp(48) + ctx.dp(24) + cap_h + ctx.dp(16)

    def build_row(y: int) -> Node:
        row = Node(cls="android.widget.LinearLayout", bounds=(left, y, right, y + h), package=PKG)
        row.add(_avatar(ctx, left + ctx.dp(32), y + ctx.dp(28), ctx.dp(16), _user_colour(post["user"])))
        row.add(text(ctx, (left + ctx.dp(56), y, right - ctx.dp(16), y + ctx.dp(56)), post["user"], 14, bold=True,
                     pkg=PKG, rid=f"{PKG}:id/row_feed_photo_profile_name"))
        y2 = y + ctx.dp(56)
        row.add(Node(cls="android.widget.ImageView", bounds=(left, y2, right, y2 + side), package=PKG,
                     rid=f"{PKG}:id/row_feed_photo_imageview", desc=f"Photo by {post['user']}",
                     bg=colour(post["colour"])))
        y2 += side
        for i, (glyph_name, name) in enumerate((("heart", "like"), ("message", "comment"), ("send", "share"))):
            row.add(_icon_button(ctx, left + ctx.dp(56 + 44 * i), y2, glyph_name, ctx.t(f"instagram.{name}"),
                                 ctx.theme.on_surface))
        y2 += ctx.dp(48)
        row.add(text(ctx, (left + ctx.dp(16), y2, right - ctx.dp(16), y2 + ctx.dp(24)),
                     ctx.t("instagram.likes", count=post["likes"]), 14, bold=True, pkg=PKG,
                     rid=f"{PKG}:id/row_feed_textview_likes"))
        row.add(paragraph(ctx, PKG, left + ctx.dp(16), right - ctx.dp(16), y2 + ctx.dp(24), caption, 14,
                          rid=f"{PKG}:id/row_feed_comment_textview_layout"))
        return row
    return h, build_row


def _tiles(ctx: Ctx, colours: list[str], rid: str):
    """A grid three tiles wide, as rows of the scrolling list; a tile a square of a colour."""
    left, right = ctx.content_left, ctx.content_right
    side = (right - left) // 3
    rows = []
    for start in range(0, len(colours), 3):
        def build_row(y: int, chunk=colours[start:start + 3]) -> Node:
            row = Node(cls="android.widget.LinearLayout", bounds=(left, y, right, y + side), package=PKG)
            for i, value in enumerate(chunk):
                x = left + i * side
                row.add(Node(cls="android.widget.ImageView", bounds=(x + 1, y + 1, x + side - 1, y + side - 1),
                             package=PKG, rid=rid, bg=colour(value), clickable=True, on_tap=lambda xx, yy: None))
            return row
        rows.append((side, build_row))
    return rows


def _search(dev: Phone, ctx: Ctx, root: Node, bottom: int, screen: Screen) -> None:
    """The search bar over the explore grid."""
    st = dev.state
    focused = st.focus == ("instagram", "search")
    box = search_box(ctx, PKG, ctx.top + ctx.dp(8), ctx.t("instagram.search"),
                     lambda xx, yy: dev.focus_field("instagram", "search"),
                     rid=f"{PKG}:id/action_bar_search_edit_text", value=st.fields.get("instagram.search", "")
                     if focused else "", focused=focused, h_dp=40, margin_dp=12)
    box.radius = ctx.dp(10)
    root.add(box)
    y = ctx.top + ctx.dp(56)
    rows = _tiles(ctx, catalogue()["explore"], f"{PKG}:id/image_button")
    root.add(scroll_list(ctx, PKG, "instagram.search", y, bottom, rows, st.scroll.get("instagram.search", 0),
                         rid=f"{PKG}:id/recycler_view"))


def _reels(dev: Phone, ctx: Ctx, root: Node, bottom: int, screen: Screen) -> None:
    """A reel over the whole screen: its picture, the Reels title, its author, caption and audio, its actions."""
    reel = catalogue()["reel"]
    left, right = ctx.content_left, ctx.content_right
    viewer = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, bottom), package=PKG,
                  rid=f"{PKG}:id/clips_viewer_container", bg=BLACK)
    viewer.add(Node(cls="android.widget.ImageView", bounds=(left, ctx.top, right, bottom), package=PKG,
                    rid=f"{PKG}:id/clips_video_container", desc=f"Reel by {reel['user']}", bg=colour(reel["colour"])))
    viewer.add(text(ctx, (left + ctx.dp(16), ctx.top, right - ctx.dp(64), ctx.top + ctx.dp(56)),
                    ctx.t("instagram.reels"), 22, color=WHITE, bold=True, pkg=PKG, rid=f"{PKG}:id/action_bar_title"))
    y = bottom - ctx.dp(16)
    for value, size, rid, bold in ((reel["audio"], 13, "clips_audio_attribution", False),
                                   (reel["caption"], 14, "clips_caption_component", False),
                                   (reel["user"], 14, "clips_author_username", True)):
        y -= ctx.dp(24)
        viewer.add(text(ctx, (left + ctx.dp(16), y, right - ctx.dp(72), y + ctx.dp(24)), value, size, color=WHITE,
                        bold=bold, pkg=PKG, rid=f"{PKG}:id/{rid}"))
    y = bottom - ctx.dp(240)
    for glyph_name, name in (("heart", "like"), ("message", "comment"), ("send", "share")):
        viewer.add(_icon_button(ctx, right - ctx.dp(8), y, glyph_name, ctx.t(f"instagram.{name}"), WHITE))
        y += ctx.dp(64)
    root.add(viewer)


def _profile(dev: Phone, ctx: Ctx, root: Node, bottom: int, screen: Screen) -> None:
    """The account's profile: the username, the counts, name and bio, its buttons, its tabs and posts."""
    me = catalogue()["account"]
    left, right = ctx.content_left, ctx.content_right
    h = ctx.dp(56)
    bar = Node(cls="android.view.ViewGroup", bounds=(0, ctx.top, ctx.width, ctx.top + h), package=PKG,
               rid=f"{PKG}:id/action_bar_container", bg=ctx.theme.background)
    bar.add(text(ctx, (left + ctx.dp(16), ctx.top, right - ctx.dp(104), ctx.top + h), me["username"], 22, bold=True,
                 pkg=PKG, rid=f"{PKG}:id/action_bar_title", desc=me["username"]))
    bar.add(_icon_button(ctx, right - ctx.dp(52), ctx.top + ctx.dp(4), "new_post", ctx.t("instagram.create"),
                         ctx.theme.on_surface))
    bar.add(_icon_button(ctx, right - ctx.dp(4), ctx.top + ctx.dp(4), "more_vert", ctx.t("instagram.options"),
                         ctx.theme.on_surface))
    root.add(bar)
    selected = screen.get("profile_tab", 0)
    rows = [(ctx.dp(104), lambda y: _profile_counts(ctx, y, me))]
    bio = paragraph(ctx, PKG, left + ctx.dp(16), right - ctx.dp(16), 0, me["bio"], 14).bounds[3]
    rows.append((ctx.dp(24) + bio + ctx.dp(8), lambda y: _profile_bio(ctx, y, me)))
    rows.append((ctx.dp(52), lambda y: _profile_buttons(ctx, y)))
    rows.append((ctx.dp(48), lambda y: _profile_tabs(dev, ctx, y, selected)))
    if selected == 0:
        rows += _tiles(ctx, me["grid"], f"{PKG}:id/image_button")
    root.add(scroll_list(ctx, PKG, "instagram.profile", ctx.top + h, bottom, rows,
                         dev.state.scroll.get("instagram.profile", 0), rid=f"{PKG}:id/profile_viewpager"))


def _profile_counts(ctx: Ctx, y: int, me: dict[str, Any]) -> Node:
    left, right = ctx.content_left, ctx.content_right
    row = Node(cls="android.widget.LinearLayout", bounds=(left, y, right, y + ctx.dp(104)), package=PKG)
    row.add(_avatar(ctx, left + ctx.dp(60), y + ctx.dp(52), ctx.dp(42), _user_colour(me["username"]),
                    rid=f"{PKG}:id/row_profile_header_imageview", desc=ctx.t("instagram.profile_picture")))
    x0 = left + ctx.dp(116)
    w = (right - ctx.dp(8) - x0) // 3
    for i, (field, name) in enumerate((("posts", "post_count"), ("followers", "followers_count"),
                                       ("following", "following_count"))):
        x = x0 + i * w
        row.add(text(ctx, (x, y + ctx.dp(28), x + w, y + ctx.dp(52)), ctx.locale.number(me[field]), 17, bold=True,
                     align="center", pkg=PKG, rid=f"{PKG}:id/row_profile_header_textview_{name}"))
        row.add(text(ctx, (x, y + ctx.dp(52), x + w, y + ctx.dp(74)), ctx.t(f"instagram.{field}"), 13,
                     align="center", pkg=PKG))
    return row


def _profile_bio(ctx: Ctx, y: int, me: dict[str, Any]) -> Node:
    left, right = ctx.content_left, ctx.content_right
    box = Node(cls="android.widget.LinearLayout", bounds=(left, y, right, y + ctx.dp(24)), package=PKG)
    box.add(text(ctx, (left + ctx.dp(16), y, right - ctx.dp(16), y + ctx.dp(24)), me["name"], 14, bold=True,
                 pkg=PKG, rid=f"{PKG}:id/profile_header_full_name"))
    bio = paragraph(ctx, PKG, left + ctx.dp(16), right - ctx.dp(16), y + ctx.dp(24), me["bio"], 14,
                    rid=f"{PKG}:id/profile_header_bio_text")
    box.bounds = (left, y, right, bio.bounds[3] + ctx.dp(8))
    return box.add(bio)


def _profile_buttons(ctx: Ctx, y: int) -> Node:
    left, right = ctx.content_left + ctx.dp(16), ctx.content_right - ctx.dp(16)
    row = Node(cls="android.widget.LinearLayout", bounds=(left, y, right, y + ctx.dp(52)), package=PKG)
    mid = (left + right) // 2
    for (x1, x2), name in (((left, mid - ctx.dp(3)), "edit_profile"), ((mid + ctx.dp(3), right), "share_profile")):
        b = button(ctx, PKG, (x1, y + ctx.dp(8), x2, y + ctx.dp(42)), ctx.t(f"instagram.{name}"),
                   lambda xx, yy: None, rid=f"{PKG}:id/profile_header_{name}_button")
        b.bg, b.fg, b.radius = ctx.theme.search_bar, ctx.theme.on_surface, ctx.dp(8)
        row.add(b)
    return row


def _profile_tabs(dev: Phone, ctx: Ctx, y: int, selected: int) -> Node:
    """Posts, reels, tagged: HorizontalScrollView > LinearLayout > a LinearLayout a tab > its FrameLayout."""
    left, right = ctx.content_left, ctx.content_right
    h = ctx.dp(48)
    strip = Node(cls="android.widget.HorizontalScrollView", bounds=(left, y, right, y + h), package=PKG,
                 rid=f"{PKG}:id/profile_tab_layout")
    inner = Node(cls="android.widget.LinearLayout", bounds=(left, y, right, y + h), package=PKG)
    w = (right - left) // 3
    names = ("posts_tab", "reels", "tagged")
    for i, glyph_name in enumerate(PROFILE_TABS):
        x1, x2 = left + i * w, left + (i + 1) * w
        on = i == selected

        def show(xx, yy, i=i) -> None:
            dev.top_screen()["profile_tab"] = i
        tab = Node(cls="android.widget.LinearLayout", bounds=(x1, y, x2, y + h), package=PKG)
        frame = Node(cls="android.widget.FrameLayout", bounds=(x1, y, x2, y + h), package=PKG,
                     desc=ctx.t(f"instagram.{names[i]}"), selected=on, clickable=True, on_tap=show)
        g, cx = ctx.dp(12), (x1 + x2) // 2
        frame.add(Node(bounds=(cx - g, y + ctx.dp(12), cx + g, y + ctx.dp(36)), icon=f"glyph:{glyph_name}",
                       icon_color=ctx.theme.on_surface if on else ctx.theme.secondary, visual=True))
        if on:
            frame.add(Node(bounds=(x1, y + h - ctx.dp(1) - 1, x2, y + h), bg=ctx.theme.on_surface, visual=True))
        inner.add(tab.add(frame))
    return strip.add(inner)


def _new_post(dev: Phone, ctx: Ctx, root: Node) -> Node:
    """New post: its title between the close button and Next, over the gallery (the phone has no picture)."""
    h = ctx.dp(56)
    bar = Node(cls="android.view.ViewGroup", bounds=(0, ctx.top, ctx.width, ctx.top + h), package=PKG,
               rid=f"{PKG}:id/action_bar_container", bg=ctx.theme.background)
    close = Node(cls="android.widget.ImageView", bounds=(0, ctx.top, ctx.dp(56), ctx.top + h), package=PKG,
                 rid=f"{PKG}:id/action_bar_button_back", desc=ctx.t("instagram.close"), clickable=True,
                 on_tap=lambda xx, yy: dev.press_back())
    g = ctx.dp(12)
    close.add(Node(bounds=(ctx.dp(28) - g, ctx.top + h // 2 - g, ctx.dp(28) + g, ctx.top + h // 2 + g),
                   icon="glyph:close", icon_color=ctx.theme.on_surface, visual=True))
    bar.add(close)
    bar.add(text(ctx, (ctx.dp(72), ctx.top, ctx.width - ctx.dp(16), ctx.top + h), ctx.t("instagram.new_post"), 20,
                 bold=True, pkg=PKG, rid=f"{PKG}:id/action_bar_title"))
    root.add(bar)
    root.add(Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top + h, ctx.width, ctx.bottom), package=PKG,
                  rid=f"{PKG}:id/gallery_grid_container", bg=(30, 30, 30)))
    return root
