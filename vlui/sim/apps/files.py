"""Files (DocumentsUI, ``com.google.android.documentsui`` on an Android 10 Pixel): Recent with the roots, a root's
files, the selection and Share.

The app opens on Recent (``FilesActivity``'s START line, no directory line): the search field ("Search this phone")
over the roots, Images, Videos, Audio, Documents and Downloads (in DocumentsUI they sit in the navigation drawer; here
they are rows of Recent, as they were before Files had a module of its own, and B-MoCA's "list audio files" tasks
tap them). Tapping a root shows its files inside the same activity and logs DirectoryFragment's line for it, at
D, as DirectoryFragment.showDirectory does on a build that is not ``user`` (DocumentsUI's DEBUG; the emulator's
Google APIs images are userdebug): the root's document as DocumentInfo.debugString writes it, its document URI
(``Showing directory: content://com.android.providers.media.documents/document/audio_root``, ``.../com.android.
providers.downloads.documents/document/downloads``: the root document ids of MediaDocumentsProvider and
DownloadStorageProvider). A root lists the files of the state that belong to it (a kind for
the media roots, the ``Download`` folder for Downloads), newest first, in list mode: each row (``item_root``) has the
type's icon (``icon``), the name (``android:id/title``), the date it was last changed (``date``: the time of day
for today's, else the month and day, as DocumentsUI's Shared.formatTime writes them) and the size (``size``, as
Formatter.formatFileSize writes it: units of 1000, ``2.40 MB``). The list scrolls. Typing in the search field on
Recent lists the files whose names hold the text in place of the roots.

Selection as in DocumentsUI's list mode: a tap on an item's icon (its selection hotspot) or a long press on the item
chooses it; while something is chosen a tap on any item adds or removes it, BACK or the bar's close button clears
the choice, and the toolbar gives way to the action mode: close, the number chosen, and Share
(``action_menu_share``). Share does what DocumentsUI's ActionHandler.shareSelectedDocuments does: an ACTION_SEND of
the file's MIME type (ACTION_SEND_MULTIPLE for several) with its content URI, the DEFAULT category and
FLAG_GRANT_READ_URI_PERMISSION, wrapped in ``Intent.createChooser``: the system share sheet starts on Files' task
(:mod:`vlui.sim.apps.chooser`, whose START line is the chooser's, from Files' uid), and Messages, chosen there,
attaches the file to the conversation picked (:func:`vlui.sim.apps.messages.receive_share`).

The app's own state, :class:`FilesState` (the files the phone holds), is typed here and registered with the app
(:data:`vlui.sim.apps.APPS`); a snapshot or a task sets it under ``files:``, which replaces the items::

    files:
      items:
        - {name: boarding_pass.pdf, kind: pdf, size_kb: 212, day: 2, time: "18:40", folder: Download}
        - {name: IMG_2041.jpg, kind: image, size_kb: 2450, day: 5, folder: DCIM}

A file was last changed ``day`` days before the snapshot's day (0: that day) at ``time``; its name's extension must
be one its ``kind`` takes (:data:`EXTENSIONS`), which also gives its MIME type. Resource ids are DocumentsUI's as its
layouts name them (``item_root``, ``icon``, ``icon_mime``, ``icon_check``, ``date``, ``size``, ``dir_list``,
``action_menu_share``), as far as they are remembered here: they could not be checked against the source in this
repository, so a script that needs one exactly should check it on a device. Deviations from DocumentsUI: the roots are
rows of Recent rather than a drawer, and Recent lists no recent files; Images and Videos show a list, not a grid;
the action mode's title is the number alone (DocumentsUI writes "1 selected", a plural the string tables do not
hold) and it offers Share only (no Delete, Select all, Copy to, ...); a file's date never shows its year; opening a
file (a tap on it with nothing chosen) does nothing, where DocumentsUI starts the app that views it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal, Required, TypedDict, get_args

from vlui.android.intents import mime_type
from vlui.android.state import bounded, shaped
from vlui.sim.apps.chooser import SharedFile, open_chooser
from vlui.sim.protocol import Phone
from vlui.sim.ui import Node
from vlui.sim.widgets import Ctx, app_bar, list_row, scroll_list, search_box, text

PKG = "com.google.android.documentsui"
ScreenName = Literal["main", "images", "videos", "audio", "documents", "downloads"]  # Recent, then the roots
SCREENS: tuple[str, ...] = get_args(ScreenName)
Kind = Literal["pdf", "image", "video", "audio", "document", "archive"]
Folder = Literal["Download", "DCIM", "Pictures", "Documents", "Music", "Movies", "Recordings"]
# the extensions a file of each kind may have (its MIME type follows from the extension)
EXTENSIONS: dict[str, tuple[str, ...]] = {"pdf": ("pdf",), "image": ("jpg", "jpeg", "png", "gif"),
                                          "video": ("mp4", "3gp"), "audio": ("m4a", "mp3", "ogg", "wav"),
                                          "document": ("txt", "doc", "docx"), "archive": ("zip", "apk")}
GLYPHS = {"pdf": "document", "image": "image", "video": "video", "audio": "audio", "document": "document",
          "archive": "folder"}
MEDIA = "content://com.android.providers.media.documents/document"


@dataclass(frozen=True)
class Root:
    """A root of DocumentsUI: its label (a string key), icon, the directory DirectoryFragment logs for it, and which
    files it lists (those of these kinds, or in this folder)."""

    label: str
    glyph: str
    uri: str
    kinds: tuple[str, ...] = ()
    folder: str = ""


ROOTS: dict[str, Root] = {
    "images": Root("apps.files_images", "image", f"{MEDIA}/images_root", kinds=("image",)),
    "videos": Root("apps.files_videos", "video", f"{MEDIA}/videos_root", kinds=("video",)),
    "audio": Root("apps.files_audio", "audio", f"{MEDIA}/audio_root", kinds=("audio",)),
    "documents": Root("apps.files_documents", "document", f"{MEDIA}/documents_root", kinds=("pdf", "document")),
    "downloads": Root("apps.files_downloads", "download",
                      "content://com.android.providers.downloads.documents/document/downloads", folder="Download"),
}


class Screen(TypedDict, total=False):
    """A screen on Files' task: Recent or a root, and the items chosen on it (the action mode shows while any are)."""

    screen: Required[ScreenName]
    selected: list[int]  # the chosen items' indices in FilesState.items, in the order they were chosen


@dataclass
class File:
    """A file on the phone: its name, its kind, its size in kB (1000 bytes), when it was last changed (``day`` days
    before the snapshot's day, at ``time``) and the folder it is in."""

    name: str
    kind: Kind
    size_kb: int = bounded(1, 900_000, default=100)
    day: int = bounded(0, 3660, default=0)
    time: str = shaped(r"([01]\d|2[0-3]):[0-5]\d", "09:30", default="09:00")
    folder: Folder = "Download"


def _default_items() -> list[File]:
    """A phone's handful: the files B-MoCA's Files tasks found in each root before Files had state, and photos."""
    return [File("boarding_pass.pdf", "pdf", 212, 2, "18:40"), File("IMG_2041.jpg", "image", 2450, 5, "12:03"),
            File("manual.pdf", "pdf", 3120, 12, "10:15"),
            File("Notes.txt", "document", 4, 20, "21:30", "Documents"),
            File("Invoice_2020.pdf", "pdf", 88, 40, "09:12", "Documents"),
            File("IMG_2038.jpg", "image", 3310, 7, "16:45", "DCIM"), File("IMG_2039.jpg", "image", 2980, 6, "08:20",
                                                                          "DCIM"),
            File("VID_20201012_093512.mp4", "video", 48200, 30, "09:35", "DCIM"),
            File("VID_20201103_181044.mp4", "video", 23900, 9, "18:10", "DCIM"),
            File("Recording_001.m4a", "audio", 1210, 3, "14:02", "Recordings"),
            File("Voice note 2.m4a", "audio", 640, 1, "19:48", "Recordings"),
            File("Ringtone_bells.ogg", "audio", 310, 60, "11:00", "Music")]


@dataclass
class FilesState:
    """What Files shows: the files on the phone's storage, in no particular order (the lists sort them)."""

    items: list[File] = field(default_factory=_default_items)


def files_state(dev: Phone) -> FilesState:
    """Files' own state on the phone ``dev``."""
    return dev.state.app("files", FilesState)


def entry_problem(fields: Any) -> str | None:
    """What the type of :class:`FilesState` cannot say about a snapshot's or a task's ``files:`` entry: that a
    file's name ends in an extension its kind takes. The rest is :func:`vlui.android.state.fields_problem`'s."""
    items = fields.get("items") if isinstance(fields, dict) else None
    for i, entry in enumerate(items if isinstance(items, list) else []):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or entry.get("kind") not in EXTENSIONS:
            continue  # the type check says what is wrong
        extension = entry["name"].rpartition(".")[2].lower() if "." in entry["name"] else ""
        if extension not in EXTENSIONS[entry["kind"]]:
            endings = ", ".join(f".{e}" for e in EXTENSIONS[entry["kind"]])
            return f"files.items[{i}].name {entry['name']!r} is not a {entry['kind']}'s: its name ends in {endings}"
    return None


def modified(dev: Phone, f: File) -> datetime:
    """When ``f`` was last changed, on the phone's clock (counted from the snapshot's day, as Calendar's events)."""
    hour, minute = map(int, f.time.split(":"))
    day = dev.snapshot.start_time.date() - timedelta(days=f.day)
    return datetime(day.year, day.month, day.day, hour, minute)


def listed(dev: Phone, root: str) -> list[int]:
    """The files root ``root`` lists, as indices into the state's items: newest first (DocumentsUI's "Last
    modified" order), ties by name."""
    spec = ROOTS[root]
    items = files_state(dev).items
    found = [i for i, f in enumerate(items) if f.kind in spec.kinds or f.folder == spec.folder]
    return sorted(found, key=lambda i: (-modified(dev, items[i]).timestamp(), items[i].name.casefold()))


def found(dev: Phone, query: str) -> list[int]:
    """The files whose names hold ``query`` (any case), newest first."""
    items = files_state(dev).items
    hits = [i for i, f in enumerate(items) if query.strip().casefold() in f.name.casefold()]
    return sorted(hits, key=lambda i: (-modified(dev, items[i]).timestamp(), items[i].name.casefold()))


def date_text(ctx: Ctx, moment: datetime, today: datetime) -> str:
    """A file's date as DocumentsUI's Shared.formatTime writes it: the time of day for today's, else the
    abbreviated month and day (the words Messages' list uses for a date, DateUtils' in both apps)."""
    if moment.date() == today.date():
        return ctx.locale.time(moment.hour, moment.minute)
    return ctx.t("messages.date", month=ctx.locale.seq("month_short")[moment.month - 1], day=moment.day)


def size_text(ctx: Ctx, size_kb: int) -> str:
    """A size as Formatter.formatFileSize writes it on Android 8 and later: units of 1000, a unit step past 900,
    two decimals below 100 and none from 100 on (``340 kB``, ``45.60 kB``, ``2.40 MB``)."""
    value, unit = float(size_kb), "apps.files_size_kb"
    if value > 900:
        value, unit = value / 1000, "apps.files_size_mb"
    return ctx.t(unit, size=ctx.locale.decimal(value, 0 if value >= 100 else 2))


# ---------------------------------------------------------------------------------------------------- actions
def open_root(dev: Phone, root: str) -> None:
    """A root tapped on Recent: its files, inside Files' activity, and DirectoryFragment's line."""
    dev.push("files", root)
    dev.state.scroll.pop(f"files.{root}", None)
    dev.logi("DirectoryFragment", f"Showing directory: {ROOTS[root].uri}", level="D", app="files", offset_ms=30)


def toggle(screen: Screen, index: int) -> None:
    """Choose the item ``index``, or let it go if it was chosen."""
    chosen = screen.setdefault("selected", [])
    if index in chosen:
        chosen.remove(index)
    else:
        chosen.append(index)
    if not chosen:
        del screen["selected"]


def share(dev: Phone, screen: Screen) -> None:
    """The action mode's Share: the chosen files go to the share sheet, as DocumentsUI shares them."""
    items = files_state(dev).items
    chosen = [items[i] for i in screen.get("selected", []) if 0 <= i < len(items)]
    if chosen:
        open_chooser(dev, "files", files=[SharedFile(name=f.name, mime=mime_type(f.name)) for f in chosen])


# ---------------------------------------------------------------------------------------------------- hooks
def on_back(dev: Phone, key: str) -> bool:
    """BACK ends the selection before it leaves the list."""
    screen = dev.top_screen()
    if screen and screen.get("selected"):
        del screen["selected"]
        return True
    return False


def on_editor_action(dev: Phone, field_id: str) -> None:
    """ENTER in the search field: the search is submitted, the keyboard hides and the results stay."""
    if field_id == "search":
        dev.state.focus = None


# ---------------------------------------------------------------------------------------------------- screens
def build(dev: Phone, ctx: Ctx, screen: Screen) -> Node:
    root = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG,
                bg=ctx.theme.background)
    page = screen["screen"]
    if page == "main":
        return _recent(dev, ctx, root, screen)
    chosen = screen.get("selected", [])
    if chosen:
        root.add(_action_mode(dev, ctx, screen))
    else:
        root.add(app_bar(ctx, PKG, ctx.t(ROOTS[page].label), up=lambda x, y: dev.press_back()))
    return root.add(_file_list(dev, ctx, screen, listed(dev, page), f"files.{page}", ctx.top + ctx.dp(56)))


def _recent(dev: Phone, ctx: Ctx, root: Node, screen: Screen) -> Node:
    """The search field over the roots, or over the files the typed text finds."""
    st = dev.state
    query = st.fields.get("files.search", "")
    y = ctx.top
    if screen.get("selected"):
        root.add(_action_mode(dev, ctx, screen))
    else:
        root.add(search_box(ctx, PKG, y + ctx.dp(12), ctx.t("apps.files_search"),
                            lambda x, yy: dev.focus_field("files", "search"), rid=f"{PKG}:id/search_box", value=query,
                            focused=st.focus == ("files", "search")))
    y += ctx.dp(72)
    if query.strip():
        return root.add(_file_list(dev, ctx, screen, found(dev, query), "files.search", y))
    for name, spec in ROOTS.items():
        label = ctx.t(spec.label)
        h = ctx.dp(56)
        if y + h > ctx.bottom:
            break
        root.add(list_row(ctx, PKG, y, label, icon=f"glyph:{spec.glyph}",
                          on_tap=lambda x, yy, name=name: open_root(dev, name), desc=label))
        y += h
    return root


def _action_mode(dev: Phone, ctx: Ctx, screen: Screen) -> Node:
    """The bar that replaces the toolbar while items are chosen: close, how many, Share."""
    def close(x: int, y: int) -> None:
        screen.pop("selected", None)

    bar = app_bar(ctx, PKG, ctx.locale.number(len(screen.get("selected", []))), up=close,
                  actions=[("share", ctx.t("apps.files_share"), lambda x, y: share(dev, screen))])
    bar.children[0].desc, bar.children[0].icon = ctx.t("common.done"), "glyph:close"
    bar.children[0].rid = "android:id/action_mode_close_button"
    bar.children[1].rid = f"{PKG}:id/action_menu_share"
    bar.children[-1].rid = "android:id/action_bar_title"
    bar.rid = f"{PKG}:id/action_mode_bar"
    return bar


def _file_list(dev: Phone, ctx: Ctx, screen: Screen, indices: list[int], key: str, top: int) -> Node:
    items = files_state(dev).items
    today = dev.now()
    rows = [(ctx.dp(72), lambda y, i=i: _item(dev, ctx, screen, i, items[i], y, today)) for i in indices]
    return scroll_list(ctx, PKG, key, top, ctx.bottom, rows, dev.state.scroll.get(key, 0), rid=f"{PKG}:id/dir_list")


def _item(dev: Phone, ctx: Ctx, screen: Screen, index: int, f: File, y: int, today: datetime) -> Node:
    """A file's row: its icon (the selection hotspot), name, date and size."""
    h = ctx.dp(72)
    left, right = ctx.content_left, ctx.content_right
    chosen = index in screen.get("selected", [])

    def pick(x: int, yy: int) -> None:
        toggle(screen, index)

    def tap(x: int, yy: int) -> None:
        if screen.get("selected"):  # while something is chosen a tap chooses too
            toggle(screen, index)

    row = Node(cls="android.widget.LinearLayout", bounds=(left, y, right, y + h), package=PKG,
               rid=f"{PKG}:id/item_root", selected=chosen, on_tap=tap, on_long_press=pick,
               bg=ctx.theme.divider if chosen else None)
    g = ctx.dp(40)
    x = left + ctx.dp(16)
    icon = Node(cls="android.widget.FrameLayout", bounds=(x, y + (h - g) // 2, x + g, y + (h + g) // 2), package=PKG,
                rid=f"{PKG}:id/icon", on_tap=pick, bg=ctx.theme.accent if chosen else ctx.theme.search_bar,
                radius=-1)
    inner = ctx.dp(24)
    cx, cy = x + g // 2, y + h // 2
    icon.add(Node(cls="android.widget.ImageView", bounds=(cx - inner // 2, cy - inner // 2, cx + inner // 2,
                  cy + inner // 2), package=PKG, rid=f"{PKG}:id/{'icon_check' if chosen else 'icon_mime'}",
                  icon=f"glyph:{'check' if chosen else GLYPHS[f.kind]}",
                  icon_color=ctx.theme.on_accent if chosen else ctx.theme.accent))
    row.add(icon)
    x = left + ctx.dp(72)
    row.add(text(ctx, (x, y + ctx.dp(14), right - ctx.dp(16), y + ctx.dp(38)), f.name, 16, pkg=PKG,
                 rid="android:id/title"))
    stamp = date_text(ctx, modified(dev, f), today)
    stamp_w = ctx.dp(120)
    row.add(text(ctx, (x, y + ctx.dp(38), x + stamp_w, y + ctx.dp(60)), stamp, 14, color=ctx.theme.secondary,
                 pkg=PKG, rid=f"{PKG}:id/date"))
    row.add(text(ctx, (x + stamp_w, y + ctx.dp(38), right - ctx.dp(16), y + ctx.dp(60)), size_text(ctx, f.size_kb),
                 14, color=ctx.theme.secondary, pkg=PKG, rid=f"{PKG}:id/size"))
    return row
