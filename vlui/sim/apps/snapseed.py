"""Snapseed 2.20 (``com.niksoftware.snapseed``, B-MoCA release 2.5's pinned 2.20.0.526050212): the start screen, the
open-photo panel, the editor with its LOOKS, TOOLS and EXPORT tabs, the tools (Noir with its styles), and Settings.

**Start screen.** The toolbar's OPEN (content description "Open photo") and More options; under it the big logo,
``logo_view``, with "Tap anywhere to open a photo". B-MoCA's set-up taps ``logo_view`` once and allows the storage
permission, so the release's phones start here with the permission granted: no prompt comes.

**Opening a photo.** OPEN or the logo opens Snapseed's own panel, as the real app does, not the system picker: a
strip of the phone's most recent photos (the image files of Files' state, :mod:`vlui.sim.apps.files`, newest first,
the images the phone already has) over "Open from device", "Camera" and "Open latest image". A thumbnail or "Open
latest image" opens that photo in the editor; BACK or a tap outside closes the panel. "Open from device" and
"Camera" start the system's picker and camera on a real phone; here they only close the panel.

**Editor.** The photo (``image_view``), the toolbar (OPEN, Edit stack, Image details, More options) and the bottom
tabs LOOKS (``looks_button``), TOOLS (``tools_button``), EXPORT (``export_button``), one ``selected``. A photo opens
on LOOKS, whose strip holds the eleven looks (Portrait, Smooth, Pop, Accentuate, Faded Glow, Morning, Bright, Fine
Art, Push, Structure, Silhouette), each a thumbnail of the photo with that look and its name. Tapping a look shows
it on the photo and selects it (the item and its name report ``selected``), with Cancel and Apply (✓) in place of
the tabs; Apply keeps it, Cancel or BACK drops it. TOOLS opens the grid of the 28 tools; a tool opens over the photo
with Cancel and Apply, Noir with Styles too, which shows the strip of its styles S01 to S14 (the one shown
``selected``; S01 when Noir opens). EXPORT opens its sheet (Share, Save, Export), whose rows only close it here.

**Settings** (More options → Settings, its own activity): Dark theme (a switch: the app's own theme, whatever the
phone's), Image sizing (Do not resize, 1080, 1366, 1600 or 2000 px on the long edge) and Format and quality (JPG
80%, JPG 95%, JPG 100%, PNG), each chosen in a dialog. They are kept in the app's shared preferences,
``shared_prefs/Preferences.xml``, which B-MoCA's evaluators read: ``pref_appearance_use_dark_theme`` (a boolean),
``pref_export_setting_long_edge`` and ``pref_export_setting_compression`` (strings), written when first set
(:func:`shared_prefs`).

Resource ids: ``logo_view``, ``looks_button`` and ``tools_button`` are the ones B-MoCA's scripts read of the real
app; the others (``export_button``, ``image_view``, ``open_button``, the strips' and the tools' ids) and the settings
activity's class are named after them here and could not be checked against the app. Where a value cannot be known
without the app (the stored value for "Do not resize" and PNG, the sizes offered) docs/simulator.md says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal, Required, TypedDict, get_args

from vlui.android.shared_prefs import prefs_xml
from vlui.sim.apps.files import files_state, modified
from vlui.sim.photos import FILTERS
from vlui.sim.protocol import Phone
from vlui.sim.theme import Theme
from vlui.sim.ui import Color, Node
from vlui.sim.widgets import Ctx, list_row, scroll_list, text

PKG = "com.niksoftware.snapseed"
ID = f"{PKG}:id"
SETTINGS_ACTIVITY = "com.google.android.apps.snapseed.activities.SettingsActivity"
PREFS_FILE = "Preferences.xml"
ScreenName = Literal["main", "settings"]
SCREENS: tuple[str, ...] = get_args(ScreenName)
Tab = Literal["looks", "tools", "export"]
LOOKS = ("portrait", "smooth", "pop", "accentuate", "faded_glow", "morning", "bright", "fine_art", "push",
         "structure", "silhouette")
TOOLS = ("tune_image", "details", "curves", "white_balance", "crop", "rotate", "perspective", "expand", "selective",
         "brush", "healing", "hdr_scape", "glamour_glow", "tonal_contrast", "drama", "vintage", "grainy_film",
         "retrolux", "grunge", "black_white", "noir", "portrait_tool", "head_pose", "lens_blur", "vignette",
         "double_exposure", "text", "frames")
NOIR_STYLES = tuple(f"S{i:02d}" for i in range(1, 15))
LONG_EDGES = (0, 1080, 1366, 1600, 2000)  # 0: do not resize
QUALITIES = ("80", "95", "100", "png")
EXPORT_ROWS = ("share", "save", "export")
ITEM_DP = 72  # the width of a look's or a style's item in its strip
# a glyph for each tool's icon in the grid (the simulated phone's glyphs; the app draws its own)
TOOL_GLYPHS = {"tune_image": "brightness", "details": "search", "crop": "display", "rotate": "auto_rotate",
               "brush": "edit", "healing": "star", "text": "document", "frames": "image", "noir": "dark_theme",
               "black_white": "dark_theme", "portrait_tool": "person", "head_pose": "person", "lens_blur": "display"}


@dataclass(frozen=True)
class Palette:
    """Snapseed's own colours, light or dark (its dark theme is its own setting, not the phone's)."""

    canvas: Color  # behind the photo
    bar: Color  # toolbar, tabs, strips, sheets
    on_bar: Color
    secondary: Color
    accent: Color
    divider: Color


LIGHT = Palette((238, 238, 238), (255, 255, 255), (33, 33, 33), (117, 117, 117), (66, 133, 244), (224, 224, 224))
DARK = Palette((18, 18, 18), (33, 33, 33), (238, 238, 238), (170, 170, 170), (138, 180, 248), (66, 66, 66))


class Screen(TypedDict, total=False):
    """A screen on Snapseed's task: the editor (``main``) with the open-photo panel, the overflow menu or nothing
    over it; Settings (``settings``) with a choice dialog or none."""

    screen: Required[ScreenName]
    panel: Literal["picker", "menu"]
    dialog: Literal["sizing", "quality"]


@dataclass
class SnapseedState:
    """What Snapseed remembers: the photo being edited (an image file's name; "" on the start screen), the tab, the
    look or tool in progress and the edits applied, and its settings (with the preferences it has written)."""

    image: str = ""
    tab: Tab = "looks"
    look: str = ""  # the look shown on the photo: applied, or being tried while ``trying``
    trying: bool = False
    tool: str = ""  # the tool open over the photo ("" none)
    styles_shown: bool = False
    style: int = 1  # Noir's style being tried, 1-based
    edits: list[str] = field(default_factory=list)  # the filters applied, in order (photos.FILTERS' names)
    use_dark_theme: bool = False
    long_edge: int = 0
    quality: str = "95"
    written: list[str] = field(default_factory=list)  # the preferences Snapseed has written, in order


def snapseed_state(dev: Phone) -> SnapseedState:
    return dev.state.app("snapseed", SnapseedState)


def palette(dev: Phone) -> Palette:
    return DARK if snapseed_state(dev).use_dark_theme else LIGHT


# ---------------------------------------------------------------------------------------------------- preferences
PREF_NAMES = {"use_dark_theme": "pref_appearance_use_dark_theme", "long_edge": "pref_export_setting_long_edge",
              "quality": "pref_export_setting_compression"}


def shared_prefs(dev: Phone, file: str) -> str | None:
    """The text of Snapseed's shared-preferences ``file`` as Android's SharedPreferencesImpl writes it: the file
    holds the settings Snapseed has written (none yet: an empty ``<map />``); Snapseed keeps no other file."""
    if file != PREFS_FILE:
        return None
    st = dev.state.app("snapseed", SnapseedState)
    values = {"use_dark_theme": st.use_dark_theme, "long_edge": str(st.long_edge),
              "quality": _stored_quality(st.quality)}
    return prefs_xml({PREF_NAMES[name]: values[name] for name in st.written})


def _stored_quality(quality: str) -> str:
    """A JPG quality is stored as its percentage; PNG as -1 (a guess: see docs/simulator.md)."""
    return "-1" if quality == "png" else quality


def _write(dev: Phone, name: str, value: object) -> None:
    st = snapseed_state(dev)
    setattr(st, name, value)
    if name not in st.written:
        st.written.append(name)


# ---------------------------------------------------------------------------------------------------- actions
def recent_photos(dev: Phone) -> list[str]:
    """The phone's photos, newest first: what the open-photo panel's strip shows."""
    items = [f for f in files_state(dev).items if f.kind == "image"]
    return [f.name for f in sorted(items, key=lambda f: (-modified(dev, f).timestamp(), f.name.casefold()))]


def open_photo(dev: Phone, screen: Screen, name: str) -> None:
    st = snapseed_state(dev)
    st.image, st.tab, st.look, st.trying, st.tool, st.styles_shown, st.edits = name, "looks", "", False, "", False, []
    screen.pop("panel", None)


def _tap_look(dev: Phone, look: str) -> None:
    st = snapseed_state(dev)
    st.look, st.trying = look, True


def _finish(dev: Phone, apply: bool) -> None:
    """Apply (✓) or Cancel the look being tried or the tool open."""
    st = snapseed_state(dev)
    if st.tool:
        if apply:
            st.edits.append(f"noir:{NOIR_STYLES[st.style - 1]}" if st.tool == "noir" else st.tool)
        st.tool, st.styles_shown, st.tab = "", False, "looks"
    elif st.trying:
        if apply:
            st.edits.append(st.look)
        else:  # back to the look applied last, if any
            st.look = next((e for e in reversed(st.edits) if e in LOOKS), "")
        st.trying = False


def _open_tool(dev: Phone, tool: str) -> None:
    st = snapseed_state(dev)
    st.tool, st.styles_shown, st.style = tool, False, 1


def _set_tab(dev: Phone, tab: Tab) -> None:
    st = snapseed_state(dev)
    # a second tap on TOOLS or EXPORT closes its sheet, back to the photo and its looks
    st.tab = "looks" if st.tab == tab else tab


def on_back(dev: Phone, key: str) -> bool:
    """BACK closes what is open over the editor (a panel, a dialog, a look being tried, a tool, a sheet) before it
    leaves the screen; the editor itself is left as Android leaves an activity."""
    screen = dev.top_screen()
    st = snapseed_state(dev)
    if screen is None:
        return False
    if screen.get("panel") or screen.get("dialog"):
        screen.pop("panel", None)
        screen.pop("dialog", None)
        return True
    if screen["screen"] != "main":
        return False
    if st.tool or st.trying:
        _finish(dev, apply=False)
        return True
    if st.image and st.tab != "looks":
        st.tab = "looks"
        return True
    return False


def _open_settings(dev: Phone, screen: Screen) -> None:
    screen.pop("panel", None)
    dev.start_activity("snapseed", "settings", f"{PKG}/{SETTINGS_ACTIVITY}", extras=False)


# ---------------------------------------------------------------------------------------------------- screens
def build(dev: Phone, ctx: Ctx, screen: Screen) -> Node:
    pal = palette(dev)
    root = Node(bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG, bg=pal.canvas)
    if screen["screen"] == "settings":
        return _settings(dev, ctx, screen, root, pal)
    st = snapseed_state(dev)
    if st.image and st.tool:
        return _tool(dev, ctx, root, pal)
    root.add(_toolbar(dev, ctx, screen, pal))
    if not st.image:
        root.add(_logo(dev, ctx, screen, pal))
    else:
        _editor(dev, ctx, root, pal)
    if screen.get("panel") == "picker":
        root.add(_picker(dev, ctx, screen, pal))
    elif screen.get("panel") == "menu":
        root.add(_menu(dev, ctx, screen, pal))
    return root


def _button(ctx: Ctx, bounds, glyph: str, desc: str, tap, pal: Palette, rid: str = "") -> Node:
    x1, y1, x2, y2 = bounds
    g = ctx.dp(24)
    cx, cy = (x1 + x2) // 2, (y1 + y2) // 2
    node = Node(cls="android.widget.ImageButton", bounds=bounds, package=PKG, rid=rid, desc=desc, clickable=True,
                on_tap=tap)
    return node.add(Node(cls="android.widget.ImageView", bounds=(cx - g // 2, cy - g // 2, cx + g // 2, cy + g // 2),
                         package=PKG, icon=f"glyph:{glyph}", icon_color=pal.on_bar, visual=True))


def _toolbar(dev: Phone, ctx: Ctx, screen: Screen, pal: Palette) -> Node:
    y1, y2 = ctx.top, ctx.top + ctx.dp(56)
    bar = Node(cls="android.view.ViewGroup", bounds=(0, y1, ctx.width, y2), package=PKG, rid=f"{ID}/toolbar", bg=pal.bar)

    def open_panel(x: int, y: int) -> None:
        screen["panel"] = "picker"

    def open_menu(x: int, y: int) -> None:
        screen["panel"] = "menu"

    bar.add(text(ctx, (ctx.dp(4), y1, ctx.dp(4) + ctx.dp(96), y2), ctx.t("snapseed.open"), 14, color=pal.on_bar,
                 bold=True, align="center", pkg=PKG, rid=f"{ID}/open_button", cls="android.widget.Button",
                 on_tap=open_panel, desc=ctx.t("snapseed.open_photo")))
    right = ctx.width
    actions = [("more_vert", ctx.t("common.more_options"), open_menu, "")]
    if snapseed_state(dev).image:
        actions += [("info", ctx.t("snapseed.image_details"), None, f"{ID}/info_button"),
                    ("history", ctx.t("snapseed.edit_stack"), None, f"{ID}/stack_button")]
    for glyph, desc, tap, rid in actions:
        bar.add(_button(ctx, (right - ctx.dp(48), y1, right, y2), glyph, desc, tap or (lambda x, y: None), pal,
                        rid))
        right -= ctx.dp(48)
    return bar


def _logo(dev: Phone, ctx: Ctx, screen: Screen, pal: Palette) -> Node:
    """The start screen's logo: tapping anywhere on it opens the open-photo panel."""
    y1, y2 = ctx.top + ctx.dp(56), ctx.bottom

    def tap(x: int, y: int) -> None:
        screen["panel"] = "picker"

    area = Node(cls="android.widget.FrameLayout", bounds=(0, y1, ctx.width, y2), package=PKG, on_tap=tap)
    cx, cy = ctx.width // 2, (y1 + y2) // 2 - ctx.dp(24)
    r = ctx.dp(48)
    logo = Node(cls="android.widget.ImageView", bounds=(cx - r, cy - r, cx + r, cy + r), package=PKG,
                rid=f"{ID}/logo_view", on_tap=tap, desc=ctx.t("snapseed.open_photo"))
    logo.add(Node(bounds=(cx - r, cy - r, cx + r, cy + r), package=PKG, bg=pal.divider, radius=-1, visual=True))
    g = ctx.dp(40)
    logo.add(Node(bounds=(cx - g // 2, cy - g // 2, cx + g // 2, cy + g // 2), package=PKG, icon="glyph:add",
                  icon_color=pal.secondary, visual=True))
    area.add(logo, text(ctx, (ctx.dp(16), cy + r + ctx.dp(16), ctx.width - ctx.dp(16), cy + r + ctx.dp(48)),
                        ctx.t("snapseed.tap_to_open"), 16, color=pal.secondary, align="center", pkg=PKG))
    return area


def _fit(bounds: tuple[int, int, int, int], aspect: float = 4 / 3) -> tuple[int, int, int, int]:
    """The largest box of ``aspect`` (width over height) centred in ``bounds``: a landscape photo on the canvas."""
    x1, y1, x2, y2 = bounds
    w, h = x2 - x1, y2 - y1
    if w / max(1, h) > aspect:
        pw = int(h * aspect)
        return x1 + (w - pw) // 2, y1, x1 + (w - pw) // 2 + pw, y2
    ph = int(w / aspect)
    return x1, y1 + (h - ph) // 2, x2, y1 + (h - ph) // 2 + ph


def _shown_filter(st: SnapseedState) -> str:
    """The filter the canvas shows: Noir's style while Noir is open, the look being tried, else the last look or
    style applied (the simulated photo shows one filter: it does not stack the edits)."""
    if st.tool == "noir":
        return f"noir:{NOIR_STYLES[st.style - 1]}"
    if st.trying:
        return st.look
    return next((e for e in reversed(st.edits) if e in FILTERS), "")


def _canvas(ctx: Ctx, st: SnapseedState, bounds: tuple[int, int, int, int]) -> Node:
    pad = ctx.dp(8)
    x1, y1, x2, y2 = bounds
    box = _fit((x1 + pad, y1 + pad, x2 - pad, y2 - pad))
    view = Node(cls="android.view.View", bounds=(x1, y1, x2, y2), package=PKG, rid=f"{ID}/image_view")
    return view.add(Node(bounds=box, package=PKG, kind="photo", extra=(st.image, _shown_filter(st)), visual=True))


def _editor(dev: Phone, ctx: Ctx, root: Node, pal: Palette) -> None:
    st = snapseed_state(dev)
    bar_h, strip_h = ctx.dp(56), ctx.dp(112)
    top, tabs_top = ctx.top + ctx.dp(56), ctx.bottom - bar_h
    strip = st.tab == "looks"
    root.add(_canvas(ctx, st, (0, top, ctx.width, tabs_top - (strip_h if strip else 0))))
    if st.tab == "looks":
        root.add(_looks_strip(dev, ctx, (0, tabs_top - strip_h, ctx.width, tabs_top), pal))
    elif st.tab == "tools":
        root.add(_tools_sheet(dev, ctx, (0, top, ctx.width, tabs_top), pal))
    else:
        root.add(_export_sheet(dev, ctx, tabs_top, pal))
    if st.trying:
        root.add(_apply_bar(dev, ctx, (0, tabs_top, ctx.width, ctx.bottom), pal))
    else:
        root.add(_tabs(dev, ctx, (0, tabs_top, ctx.width, ctx.bottom), pal))


def _tabs(dev: Phone, ctx: Ctx, bounds, pal: Palette) -> Node:
    st = snapseed_state(dev)
    x1, y1, x2, y2 = bounds
    row = Node(cls="android.widget.LinearLayout", bounds=bounds, package=PKG, rid=f"{ID}/bottom_bar", bg=pal.bar)
    w = (x2 - x1) / 3
    for i, tab in enumerate(get_args(Tab)):
        a, b = int(x1 + i * w), int(x1 + (i + 1) * w)
        chosen = st.tab == tab
        colour = pal.accent if chosen else pal.on_bar

        def tap(x: int, y: int, tab=tab) -> None:
            _set_tab(dev, tab)

        row.add(text(ctx, (a, y1, b, y2), ctx.t(f"snapseed.{tab}"), 14, color=colour, bold=True, align="center",
                     pkg=PKG, rid=f"{ID}/{tab}_button", cls="android.widget.Button", on_tap=tap))
        row.children[-1].selected = chosen
        row.children[-1].clickable = True
    return row


def _apply_bar(dev: Phone, ctx: Ctx, bounds, pal: Palette, middle: list[Node] | None = None) -> Node:
    """Cancel (×) at the start, Apply (✓) at the end, and a tool's own buttons between them."""
    x1, y1, x2, y2 = bounds
    row = Node(cls="android.widget.LinearLayout", bounds=bounds, package=PKG, rid=f"{ID}/apply_bar", bg=pal.bar)
    row.add(_button(ctx, (x1, y1, x1 + ctx.dp(64), y2), "close", ctx.t("snapseed.cancel"),
                    lambda x, y: _finish(dev, apply=False), pal, f"{ID}/cancel_button"))
    row.add(*(middle or []))
    row.add(_button(ctx, (x2 - ctx.dp(64), y1, x2, y2), "check", ctx.t("snapseed.apply"),
                    lambda x, y: _finish(dev, apply=True), pal, f"{ID}/apply_button"))
    return row


def _strip(ctx: Ctx, bounds, items: list[tuple[str, str, bool]], tap, pal: Palette, rid: str, image: str) -> Node:
    """A horizontal strip of thumbnails of ``image`` ``(label, filter, selected)``; ``tap(i)`` when one is tapped.
    It holds what fits (the real strip scrolls sideways; the items past the edge are left out, as a RecyclerView
    lays out only what shows)."""
    x1, y1, x2, y2 = bounds
    strip = Node(cls="androidx.recyclerview.widget.RecyclerView", bounds=bounds, package=PKG, rid=rid, bg=pal.bar)
    item_w, thumb = ctx.dp(ITEM_DP), ctx.dp(60)
    x = x1 + ctx.dp(4)
    for i, (label, filtered, chosen) in enumerate(items):
        if x + item_w > x2:
            break
        item = Node(cls="android.widget.LinearLayout", bounds=(x, y1, x + item_w, y2), package=PKG,
                    clickable=True, selected=chosen, on_tap=lambda xx, yy, i=i: tap(i))
        tx = x + (item_w - thumb) // 2
        ty = y1 + ctx.dp(10)
        if chosen:
            item.add(Node(bounds=(tx - ctx.dp(3), ty - ctx.dp(3), tx + thumb + ctx.dp(3), ty + thumb + ctx.dp(3)),
                          package=PKG, bg=pal.accent, radius=ctx.dp(4), visual=True))
        item.add(Node(cls="android.widget.ImageView", bounds=(tx, ty, tx + thumb, ty + thumb), package=PKG,
                      rid=f"{ID}/thumbnail", kind="photo", extra=(image, filtered), selected=chosen))
        item.add(text(ctx, (x, ty + thumb + ctx.dp(4), x + item_w, y2 - ctx.dp(4)), label, 12,
                      color=pal.accent if chosen else pal.on_bar, align="center", pkg=PKG, rid=f"{ID}/label"))
        item.children[-1].selected = chosen
        strip.add(item)
        x += item_w
    return strip


def _looks_strip(dev: Phone, ctx: Ctx, bounds, pal: Palette) -> Node:
    st = snapseed_state(dev)
    items = [(ctx.t(f"snapseed.look_{look}"), look, st.look == look) for look in LOOKS]
    # the strip scrolls sideways: offset by the looks swiped past (state.scroll, in items)
    first = dev.state.scroll.get("snapseed.looks", 0)
    node = _strip(ctx, bounds, items[first:], lambda i: _tap_look(dev, LOOKS[first + i]), pal, f"{ID}/looks_list",
                  st.image)
    node.on_swipe = lambda xa, ya, xb, yb: _swipe_strip(dev, "snapseed.looks", xa, xb, len(LOOKS), ctx)
    return node


def _swipe_strip(dev: Phone, key: str, xa: int, xb: int, count: int, ctx: Ctx) -> bool:
    """A sideways swipe moves a strip by the items it passes (towards the start in right-to-left layouts, which
    are mirrored: a swipe to the right there moves on)."""
    step = round((xa - xb) / ctx.dp(ITEM_DP)) * (-1 if ctx.locale.rtl else 1)
    dev.state.scroll[key] = min(max(dev.state.scroll.get(key, 0) + step, 0), count - 1)
    return True


def _tools_sheet(dev: Phone, ctx: Ctx, bounds, pal: Palette) -> Node:
    """The tools' grid, as many columns as fit 88 dp each (four on a phone), scrolling down."""
    x1, y1, x2, y2 = bounds
    cols = max(4, (x2 - x1) // ctx.dp(88))
    cell_w, cell_h = (x2 - x1) // cols, ctx.dp(88)
    rows = [TOOLS[i:i + cols] for i in range(0, len(TOOLS), cols)]

    def row(tools: tuple[str, ...]):
        def build_row(y: int) -> Node:
            line = Node(cls="android.widget.LinearLayout", bounds=(x1, y, x2, y + cell_h), package=PKG)
            for c, tool in enumerate(tools):
                a = x1 + c * cell_w
                label = ctx.t(f"snapseed.tool_{tool}")
                cell = Node(cls="android.widget.LinearLayout", bounds=(a, y, a + cell_w, y + cell_h), package=PKG,
                            rid=f"{ID}/tool_item", clickable=True, desc=label,
                            on_tap=lambda xx, yy, tool=tool: _open_tool(dev, tool))
                g = ctx.dp(28)
                cx = a + cell_w // 2
                cell.add(Node(cls="android.widget.ImageView", bounds=(cx - g // 2, y + ctx.dp(16), cx + g // 2,
                              y + ctx.dp(16) + g), package=PKG, icon=f"glyph:{TOOL_GLYPHS.get(tool, 'image')}",
                              icon_color=pal.on_bar))
                cell.add(text(ctx, (a + ctx.dp(2), y + ctx.dp(50), a + cell_w - ctx.dp(2), y + ctx.dp(80)), label, 12,
                              color=pal.on_bar, align="center", pkg=PKG, rid=f"{ID}/tool_label"))
                line.add(cell)
            return line
        return build_row

    sheet = scroll_list(ctx, PKG, "snapseed.tools", y1, y2, [(cell_h, row(r)) for r in rows],
                        dev.state.scroll.get("snapseed.tools", 0), rid=f"{ID}/tools_list")
    sheet.bg = pal.bar
    return sheet


def _export_sheet(dev: Phone, ctx: Ctx, bottom: int, pal: Palette) -> Node:
    h = ctx.dp(56)
    sheet = Node(cls="android.widget.LinearLayout", bounds=(0, bottom - h * len(EXPORT_ROWS), ctx.width, bottom),
                 package=PKG, rid=f"{ID}/export_sheet", bg=pal.bar)
    for i, name in enumerate(EXPORT_ROWS):
        y = bottom - h * (len(EXPORT_ROWS) - i)
        row = list_row(ctx, PKG, y, ctx.t(f"snapseed.export_{name}"), on_tap=lambda x, yy: _set_tab(dev, "export"))
        row.children[-1].fg = pal.on_bar
        sheet.add(row)
    return sheet


def _tool(dev: Phone, ctx: Ctx, root: Node, pal: Palette) -> Node:
    """A tool open over the photo: the photo as the tool makes it, the styles strip (Noir) and the bar."""
    st = snapseed_state(dev)
    bar_h, strip_h = ctx.dp(56), ctx.dp(112)
    bar_top = ctx.bottom - bar_h
    strip_top = bar_top - (strip_h if st.styles_shown else 0)
    root.add(_canvas(ctx, st, (0, ctx.top, ctx.width, strip_top)))
    middle = []
    if st.tool == "noir":
        def toggle(x: int, y: int) -> None:
            st.styles_shown = not st.styles_shown

        cx = ctx.width // 2
        middle.append(_button(ctx, (cx - ctx.dp(24), bar_top, cx + ctx.dp(24), ctx.bottom), "image",
                              ctx.t("snapseed.styles"), toggle, pal, f"{ID}/styles_button"))
        if st.styles_shown:
            items = [(name, f"noir:{name}", st.style == i + 1) for i, name in enumerate(NOIR_STYLES)]
            first = dev.state.scroll.get("snapseed.styles", 0)

            def pick(i: int) -> None:
                st.style = first + i + 1

            strip = _strip(ctx, (0, strip_top, ctx.width, bar_top), items[first:], pick, pal, f"{ID}/styles_list",
                           st.image)
            strip.on_swipe = lambda xa, ya, xb, yb: _swipe_strip(dev, "snapseed.styles", xa, xb, len(NOIR_STYLES), ctx)
            root.add(strip)
    root.add(_apply_bar(dev, ctx, (0, bar_top, ctx.width, ctx.bottom), pal, middle))
    return root


def _picker(dev: Phone, ctx: Ctx, screen: Screen, pal: Palette) -> Node:
    """The open-photo panel from the top of the screen: the recent photos' strip and three rows, over a scrim that
    closes it."""
    def close(x: int, y: int) -> None:
        screen.pop("panel", None)

    scrim = Node(bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG, bg=ctx.theme.scrim, on_tap=close)
    photos = recent_photos(dev)
    thumb, gap = ctx.dp(96), ctx.dp(8)
    y = ctx.top
    panel = Node(cls="android.widget.LinearLayout", bounds=(0, y, ctx.width, y + thumb + 2 * gap + 3 * ctx.dp(56)),
                 package=PKG, rid=f"{ID}/open_panel", bg=pal.bar, on_tap=lambda x, yy: None)
    strip = Node(cls="androidx.recyclerview.widget.RecyclerView", bounds=(0, y, ctx.width, y + thumb + 2 * gap),
                 package=PKG, rid=f"{ID}/recent_images")
    x = gap
    for name in photos:
        if x + thumb > ctx.width:
            break
        strip.add(Node(cls="android.widget.ImageView", bounds=(x, y + gap, x + thumb, y + gap + thumb), package=PKG,
                       rid=f"{ID}/recent_image", clickable=True, desc=name, kind="photo", extra=(name, ""),
                       on_tap=lambda xx, yy, name=name: open_photo(dev, screen, name)))
        x += thumb + gap
    panel.add(strip)
    y += thumb + 2 * gap
    rows = [("open_from_device", "folder", close), ("camera", "camera_shutter", close),
            ("open_latest", "image", lambda xx, yy: photos and open_photo(dev, screen, photos[0]))]
    for key, glyph, tap in rows:
        row = list_row(ctx, PKG, y, ctx.t(f"snapseed.{key}"), icon=f"glyph:{glyph}", on_tap=tap)
        row.rid = f"{ID}/{key}"
        _recolour(row, pal)
        panel.add(row)
        y += ctx.dp(56)
    return scrim.add(panel)


def _recolour(node: Node, pal: Palette) -> None:
    """A shared widget drawn in Snapseed's colours instead of the phone's theme."""
    for n in node.walk():
        if n.text:
            n.fg = pal.on_bar
        if n.icon.startswith("glyph:"):
            n.icon_color = pal.secondary


def _menu(dev: Phone, ctx: Ctx, screen: Screen, pal: Palette) -> Node:
    """More options: Settings, Tutorials, Help & feedback, in a popup at the top end."""
    def close(x: int, y: int) -> None:
        screen.pop("panel", None)

    scrim = Node(bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG, on_tap=close)
    w, h = min(ctx.width - ctx.dp(16), ctx.dp(224)), ctx.dp(48)
    x2, y = ctx.width - ctx.dp(8), ctx.top + ctx.dp(8)
    items = [("settings", lambda xx, yy: _open_settings(dev, screen)), ("tutorials", close), ("help", close)]
    card = Node(cls="android.widget.ListView", bounds=(x2 - w, y, x2, y + h * len(items) + ctx.dp(16)), package=PKG,
                bg=pal.bar, radius=ctx.dp(4))
    y += ctx.dp(8)
    for key, tap in items:
        item = Node(cls="android.widget.LinearLayout", bounds=(x2 - w, y, x2, y + h), package=PKG, clickable=True,
                    on_tap=tap)
        item.add(text(ctx, (x2 - w + ctx.dp(16), y, x2 - ctx.dp(8), y + h), ctx.t(f"snapseed.{key}"), 16,
                      color=pal.on_bar, pkg=PKG, rid=f"{ID}/title"))
        card.add(item)
        y += h
    x1, y1, x2, y2 = card.bounds
    scrim.add(Node(bounds=(x1 - 1, y1 - 1, x2 + 1, y2 + ctx.dp(2)), bg=pal.divider, radius=ctx.dp(4), visual=True))
    return scrim.add(card)


# ---------------------------------------------------------------------------------------------------- settings
def sizing_text(ctx: Ctx, edge: int) -> str:
    return ctx.t("snapseed.do_not_resize") if edge == 0 else ctx.t("snapseed.px", n=ctx.locale.number(edge))


def quality_text(ctx: Ctx, quality: str) -> str:
    return ctx.t("snapseed.png") if quality == "png" else ctx.t("snapseed.jpg", n=ctx.locale.number(quality))


def _settings(dev: Phone, ctx: Ctx, screen: Screen, root: Node, pal: Palette) -> Node:
    st = snapseed_state(dev)
    th = _theme(ctx.theme, pal)
    sctx = Ctx(ctx.width, ctx.height, ctx.dpi, ctx.font_scale, th, ctx.locale, ctx.tablet, ctx.top, ctx.bottom)
    root.bg = pal.bar
    bar_y2 = ctx.top + ctx.dp(56)
    bar = Node(cls="android.view.ViewGroup", bounds=(0, ctx.top, ctx.width, bar_y2), package=PKG,
               rid=f"{ID}/action_bar", bg=pal.bar)
    bar.add(_button(ctx, (0, ctx.top, ctx.dp(56), bar_y2), "arrow_back", ctx.t("common.navigate_up"),
                    lambda x, y: dev.press_back(), pal))
    bar.add(text(ctx, (ctx.dp(72), ctx.top, ctx.width - ctx.dp(16), bar_y2), ctx.t("snapseed.settings"), 20,
                 color=pal.on_bar, pkg=PKG))
    root.add(bar)

    def flip(x: int, y: int) -> None:
        _write(dev, "use_dark_theme", not st.use_dark_theme)

    def ask(dialog: str):
        def tap(x: int, y: int) -> None:
            screen["dialog"] = dialog
        return tap

    rows: list[tuple[int, object]] = [
        (ctx.dp(48), lambda y: _category(sctx, y, "snapseed.appearance")),
        (ctx.dp(56), lambda y: list_row(sctx, PKG, y, ctx.t("snapseed.dark_theme"), on_tap=flip,
                                        switch=st.use_dark_theme)),
        (ctx.dp(48), lambda y: _category(sctx, y, "snapseed.export_settings")),
        (ctx.dp(72), lambda y: list_row(sctx, PKG, y, ctx.t("snapseed.image_sizing"), sizing_text(ctx, st.long_edge),
                                        on_tap=ask("sizing"))),
        (ctx.dp(72), lambda y: list_row(sctx, PKG, y, ctx.t("snapseed.format_quality"),
                                        quality_text(ctx, st.quality), on_tap=ask("quality"))),
    ]
    root.add(scroll_list(sctx, PKG, "snapseed.settings", bar_y2, ctx.bottom, rows,
                         dev.state.scroll.get("snapseed.settings", 0), rid=f"{ID}/recycler_view"))
    if screen.get("dialog"):
        root.add(_choice_dialog(dev, sctx, screen, pal))
    return root


def _theme(base: Theme, pal: Palette) -> Theme:
    """The phone's widgets (rows, switches, dialogs) in Snapseed's colours."""
    return replace(base, background=pal.bar, surface=pal.bar, on_surface=pal.on_bar, secondary=pal.secondary,
                   accent=pal.accent, divider=pal.divider, dark=pal is DARK)


def _category(ctx: Ctx, y: int, key: str) -> Node:
    return text(ctx, (ctx.content_left + ctx.dp(16), y, ctx.content_right - ctx.dp(16), y + ctx.dp(48)), ctx.t(key),
                14, color=ctx.theme.accent, pkg=PKG, rid="android:id/title", bold=True)


def _choice_dialog(dev: Phone, ctx: Ctx, screen: Screen, pal: Palette) -> Node:
    """Image sizing or Format and quality: the choices as radio rows; a choice is kept and closes the dialog."""
    st = snapseed_state(dev)
    kind = screen["dialog"]
    if kind == "sizing":
        title, options = ctx.t("snapseed.image_sizing"), [(sizing_text(ctx, e), e) for e in LONG_EDGES]
        current: object = st.long_edge
    else:
        title, options = ctx.t("snapseed.format_quality"), [(quality_text(ctx, q), q) for q in QUALITIES]
        current = st.quality

    def close(x: int, y: int) -> None:
        screen.pop("dialog", None)

    def choose(value: object):
        def tap(x: int, y: int) -> None:
            _write(dev, "long_edge" if kind == "sizing" else "quality", value)
            screen.pop("dialog", None)
        return tap

    scrim = Node(bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG, bg=ctx.theme.scrim, on_tap=close)
    row_h, head, foot = ctx.dp(48), ctx.dp(64), ctx.dp(52)
    w = min(ctx.width - ctx.dp(48), ctx.dp(320))
    h = head + row_h * len(options) + foot
    x1, y1 = (ctx.width - w) // 2, max(ctx.top + ctx.dp(8), (ctx.top + ctx.bottom - h) // 2)
    card = Node(cls="android.widget.FrameLayout", bounds=(x1, y1, x1 + w, y1 + h), package=PKG, bg=pal.bar,
                radius=ctx.dp(4), rid="android:id/parentPanel", on_tap=lambda x, y: None)
    card.add(text(ctx, (x1 + ctx.dp(24), y1 + ctx.dp(16), x1 + w - ctx.dp(24), y1 + head), title, 20,
                  color=pal.on_bar, pkg=PKG, rid="android:id/alertTitle"))
    lst = Node(cls="android.widget.ListView", bounds=(x1, y1 + head, x1 + w, y1 + head + row_h * len(options)),
               package=PKG, rid="android:id/select_dialog_listview")
    y = y1 + head
    for label, value in options:
        on = value == current
        row = Node(cls="android.widget.CheckedTextView", bounds=(x1, y, x1 + w, y + row_h), package=PKG,
                   rid="android:id/text1", text=label, size=ctx.sp(16), fg=pal.on_bar, inset=ctx.dp(68),
                   checkable=True, checked=on, clickable=True, on_tap=choose(value))
        r = ctx.dp(10)
        cx, cy = x1 + ctx.dp(34), y + row_h // 2
        row.add(Node(bounds=(cx - r, cy - r, cx + r, cy + r), package=PKG, kind="border", radius=r,
                     icon_color=pal.accent if on else pal.secondary, visual=True))
        if on:
            row.add(Node(bounds=(cx - r // 2, cy - r // 2, cx + r // 2, cy + r // 2), package=PKG, bg=pal.accent,
                         radius=-1, visual=True))
        lst.add(row)
        y += row_h
    card.add(lst)
    card.add(text(ctx, (x1 + w - ctx.dp(112), y + ctx.dp(8), x1 + w - ctx.dp(8), y + ctx.dp(44)),
                  ctx.t("common.cancel").upper(), 14, color=pal.accent, bold=True, align="center", pkg=PKG,
                  rid="android:id/button2", cls="android.widget.Button", on_tap=close))
    return scrim.add(card)
