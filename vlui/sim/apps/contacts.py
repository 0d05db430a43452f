"""Contacts (com.android.contacts on Android 10): the list of people (a search field filters it), a person's card
(QuickContactActivity: their phone number and email), and the contact editor for a new contact and for an existing
one. The card and the editor are activities of their own, so opening them logs ActivityTaskManager's START line
with the intent Contacts sends: ``act=android.provider.action.QUICK_CONTACT`` (ImplicitIntentsUtil), and
``act=android.intent.action.INSERT`` or ``EDIT`` for ContactEditorActivity, which B-MoCA's contacts_insert and
contacts_edit detectors read.

The editor's fields (first name, last name, phone) take text as any field does (a tap focuses one, the keyboard
types into it), and its Save button (``editor_menu_save_button``) saves, as ContactEditorFragment's
``save(SaveMode.CLOSE)``: a new contact joins the people and the editor gives way to the new contact's card
(ContactEditorActivity's ``onSaveFinished`` starts the QuickContact intent that ``composeQuickContactIntent``
makes, so its START line is the one a tap on the person's row logs); an existing contact's editor, which its card
started for a result, closes back to the card, which shows the change. Saving logs nothing else: ContactSaveService
writes no line at the default log level. An editor with every field empty saves nothing and closes.

The app's own state, :class:`ContactsState` (the people), is typed here and registered with the app
(:data:`vlui.sim.apps.APPS`); a snapshot or a task sets it under ``contacts:``, which replaces the people::

    contacts:
      people:
      - {name: Alex Kim, phone: '+1 650-555-0134', email: alex.kim@example.com}
      - {name: Maria García, phone: '+1 650-555-0178'}

Other apps read the people with :func:`people`. Deviations from Contacts: one phone number and one email a person,
no photos, letters or favourites in the list; the editor has no email field, its phone field takes the same keyboard
as the names (a phone's dial pad layout on a real device), and BACK leaves it without saving and without asking
whether to discard the changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Required, TypedDict, get_args

from vlui.sim.protocol import Phone
from vlui.sim.ui import Node
from vlui.sim.widgets import Ctx, app_bar, button, fab, list_row, scroll_list, search_box, text

PKG = "com.android.contacts"
EDITOR = "com.android.contacts/.activities.ContactEditorActivity"
QUICK_CONTACT = "com.android.contacts/.quickcontact.QuickContactActivity"
ScreenName = Literal["main", "contact", "new_contact", "editor"]  # the list, a card, the editor: new, existing
SCREENS: tuple[str, ...] = get_args(ScreenName)


class Screen(TypedDict, total=False):
    """A screen on the contacts' task."""

    screen: Required[ScreenName]
    person: int  # the card's or the editor's person: their index in ContactsState.people


@dataclass
class Person:
    """A person in the phone's contacts: their name (given names, then the family name), phone number and email."""

    name: str
    phone: str = ""
    email: str = ""


def _default_people() -> list[Person]:
    return [Person("Alex Kim", "+1 650-555-0134", "alex.kim@example.com"),
            Person("Maria García", "+1 650-555-0178", "maria.garcia@example.com"),
            Person("Wei Zhang", "+1 415-555-0123"),
            Person("Yuki Tanaka", "+1 408-555-0199")]


@dataclass
class ContactsState:
    """What Contacts holds: the people, in no particular order (the list sorts them by name)."""

    people: list[Person] = field(default_factory=_default_people)


def contacts_state(dev: Phone) -> ContactsState:
    """Contacts' own state on the phone ``dev``."""
    return dev.state.app("contacts", ContactsState)


def people(dev: Phone) -> list[tuple[int, Person]]:
    """The people on the phone ``dev`` as the list shows them, by name, each with their index in the state (their
    contact's id is the index + 1)."""
    return sorted(enumerate(contacts_state(dev).people), key=lambda p: (p[1].name.casefold(), p[0]))


def split_name(name: str) -> tuple[str, str]:
    """A name's given names and family name, as the editor's fields show them (the last word is the family name)."""
    given, _, family = name.strip().rpartition(" ")
    return (given, family) if given else (family, "")


def lookup_key(index: int, person: Person) -> str:
    """The person's contact lookup key, as in ``content://com.android.contacts/contacts/lookup/KEY/ID``: a local
    raw contact's is ``0r``, its id, and its name's collation key, which needs ICU; here the name's letters in hex
    stand in for it."""
    letters = "".join(f"{ord(c) & 0xFF:02X}" for c in person.name.upper() if c.isalnum())
    return f"0r{index + 1}-{letters[:12]}"


def _lookup_uri(index: int, person: Person) -> str:
    return f"content://com.android.contacts/contacts/lookup/{lookup_key(index, person)}/{index + 1}"


def open_card(dev: Phone, index: int) -> None:
    """The person's card (QuickContactActivity), started as ImplicitIntentsUtil starts it in the app."""
    person = contacts_state(dev).people[index]
    intent = f"act=android.provider.action.QUICK_CONTACT dat={_lookup_uri(index, person)} flg=0x4000000 pkg={PKG}"
    dev.start_activity("contacts", "contact", QUICK_CONTACT, intent=intent, person=index)


# ---------------------------------------------------------------------------------------------------- the editor
EDITOR_FIELDS = (("first", "apps.contacts_first_name"), ("last", "apps.contacts_last_name"),
                 ("phone", "apps.contacts_phone"))  # the editor's text fields, in order: their ids and hints


def _field_key(name: str) -> str:
    return f"contacts.editor.{name}"


def open_editor(dev: Phone, index: int | None) -> None:
    """ContactEditorActivity for the person at ``index`` (EDIT, its fields filled in) or for a new contact (INSERT,
    its fields empty)."""
    person = contacts_state(dev).people[index] if index is not None else None
    given, family = split_name(person.name) if person is not None else ("", "")
    for name, value in zip(("first", "last", "phone"), (given, family, person.phone if person else ""), strict=True):
        dev.state.fields[_field_key(name)] = value
    if person is None:
        dev.start_activity("contacts", "new_contact", EDITOR,
                           intent="act=android.intent.action.INSERT dat=content://com.android.contacts/contacts")
    else:
        dev.start_activity("contacts", "editor", EDITOR,
                           intent=f"act=android.intent.action.EDIT dat={_lookup_uri(index, person)}", person=index)


def save(dev: Phone, screen: Screen) -> None:
    """The editor's Save: the fields become the person (a new one joins the people and their card opens; an
    existing one's card, beneath, shows the change). Nothing typed in a new contact's editor saves nothing."""
    first, last, phone = (dev.state.fields.get(_field_key(n), "").strip() for n in ("first", "last", "phone"))
    name = " ".join(part for part in (first, last) if part)
    everyone = contacts_state(dev).people
    dev.state.tasks["contacts"].pop()  # the editor finishes
    dev.state.focus = None
    index = screen.get("person")
    if screen["screen"] == "editor" and index is not None and 0 <= index < len(everyone):
        everyone[index].name, everyone[index].phone = name, phone
    elif screen["screen"] == "new_contact" and (name or phone):
        everyone.append(Person(name, phone))
        open_card(dev, len(everyone) - 1)


# ---------------------------------------------------------------------------------------------------- screens
def build(dev: Phone, ctx: Ctx, screen: Screen) -> Node:
    root = Node(cls="android.widget.FrameLayout", bounds=(0, ctx.top, ctx.width, ctx.bottom), package=PKG,
                bg=ctx.theme.background)
    page = screen["screen"]
    everyone = contacts_state(dev).people
    index = screen.get("person")
    person = everyone[index] if index is not None and 0 <= index < len(everyone) else None
    if page == "contact":
        return card(dev, ctx, root, index, person)
    if page in ("new_contact", "editor"):
        return editor(dev, ctx, root, screen, person if page == "editor" else None)
    return contact_list(dev, ctx, root)


def contact_list(dev: Phone, ctx: Ctx, root: Node) -> Node:
    """The search field, a row per person (the typed text finds names and numbers), the create button."""
    st = dev.state
    query = st.fields.get("contacts.search", "")
    y = ctx.top + ctx.dp(12)
    root.add(search_box(ctx, PKG, y, ctx.t("apps.contacts_search"), lambda x, yy: dev.focus_field("contacts", "search"),
                        rid=f"{PKG}:id/search_box", value=query, focused=st.focus == ("contacts", "search")))
    top = y + ctx.dp(60)
    shown = [(i, p) for i, p in people(dev) if _matches(p, query)]
    if not contacts_state(dev).people:
        root.add(text(ctx, (0, top + ctx.dp(120), ctx.width, top + ctx.dp(160)), ctx.t("apps.contacts_empty"), 16,
                      color=ctx.theme.secondary, align="center", pkg=PKG, rid=f"{PKG}:id/message"))
    rows = [(ctx.dp(56), _person_row(dev, ctx, i, p)) for i, p in shown]
    root.add(scroll_list(ctx, PKG, "contacts.main", top, ctx.bottom, rows, st.scroll.get("contacts.main", 0),
                         rid=f"{PKG}:id/list"))

    root.add(fab(ctx, PKG, ctx.content_right - ctx.dp(44), ctx.bottom - ctx.dp(44), "add",
                 ctx.t("apps.contacts_create"), lambda x, y: open_editor(dev, None), rid=f"{PKG}:id/fab"))
    return root


def _matches(person: Person, query: str) -> bool:
    """Whether the search text finds the person: in their name, any case, or, written as a number, among the digits
    of their number."""
    query = query.strip().casefold()
    if not query or query in person.name.casefold():
        return True
    digits = "".join(c for c in query if c.isdigit())
    return bool(digits) and all(c.isdigit() or c in " +-()" for c in query) and digits in "".join(
        c for c in person.phone if c.isdigit())


def _person_row(dev: Phone, ctx: Ctx, index: int, person: Person):
    def build_row(y: int) -> Node:
        return list_row(ctx, PKG, y, person.name, icon="glyph:person", on_tap=lambda x, yy: open_card(dev, index),
                        rid_title=f"{PKG}:id/cliv_name_textview", desc=person.name)
    return build_row


def card(dev: Phone, ctx: Ctx, root: Node, index: int | None, person: Person | None) -> Node:
    """A person's card: their name, an Edit action (the editor for them), and an entry for their number and one for
    their email, each with what it is below it. A person who is gone (a task's state replaced the people) leaves
    the card empty."""
    if person is None:
        root.add(app_bar(ctx, PKG, "", up=lambda x, y: dev.press_back()))
        return root

    bar = app_bar(ctx, PKG, person.name, up=lambda x, y: dev.press_back(),
                  actions=(("edit", ctx.t("apps.contacts_edit"), lambda x, y: open_editor(dev, index)),))
    for node in bar.children:
        if node.desc == ctx.t("apps.contacts_edit"):
            node.rid = f"{PKG}:id/menu_edit"
    root.add(bar)
    y = ctx.top + ctx.dp(64)
    for value, label, glyph_name in ((person.phone, "apps.contacts_phone", "call"),
                                     (person.email, "apps.contacts_email", "mail")):
        if value:
            root.add(list_row(ctx, PKG, y, value, ctx.t(label), icon=f"glyph:{glyph_name}",
                              rid_title=f"{PKG}:id/header", rid_summary=f"{PKG}:id/sub_header"))
            y += ctx.dp(72)
    return root


def editor(dev: Phone, ctx: Ctx, root: Node, screen: Screen, person: Person | None) -> Node:
    """The contact editor: its Save button in the toolbar, then first name, last name and phone, each a text field
    showing its hint while empty (an existing person's values filled in when the editor opened)."""
    bar = app_bar(ctx, PKG, ctx.t("apps.contacts_edit" if person is not None else "apps.contacts_create"),
                  up=lambda x, y: dev.press_back())
    title = bar.children[-1]
    save_x2 = ctx.width - ctx.dp(8)
    save_x1 = save_x2 - ctx.dp(88)
    title.bounds = (title.bounds[0], title.bounds[1], save_x1, title.bounds[3])
    bar.add(button(ctx, PKG, (save_x1, bar.bounds[1] + ctx.dp(8), save_x2, bar.bounds[3] - ctx.dp(8)),
                   ctx.t("common.save"), lambda x, y: save(dev, screen), rid=f"{PKG}:id/editor_menu_save_button"))
    root.add(bar)
    st = dev.state
    y = ctx.top + ctx.dp(72)
    left, right = ctx.content_left + ctx.dp(72), ctx.content_right - ctx.dp(16)
    for (name, hint), glyph_name in zip(EDITOR_FIELDS, ("person", "", "call"), strict=True):
        if glyph_name:
            root.add(Node(cls="android.widget.ImageView", bounds=(ctx.content_left + ctx.dp(24), y + ctx.dp(16),
                          ctx.content_left + ctx.dp(48), y + ctx.dp(40)), package=PKG, icon=f"glyph:{glyph_name}",
                          icon_color=ctx.theme.icon))
        value = st.fields.get(_field_key(name), "")
        field_id = f"editor.{name}"
        root.add(Node(cls="android.widget.EditText", bounds=(left, y, right, y + ctx.dp(56)), package=PKG,
                      text=value or ctx.t(hint), size=ctx.sp(16), focusable=True,
                      focused=st.focus == ("contacts", field_id),
                      fg=ctx.theme.on_surface if value else ctx.theme.secondary,
                      on_tap=lambda x, yy, f=field_id: dev.focus_field("contacts", f)))
        root.add(Node(bounds=(left, y + ctx.dp(48), right, y + ctx.dp(49)), bg=ctx.theme.divider, visual=True))
        y += ctx.dp(64)
    return root
