"""Contacts: the list of people from the app's typed state (a snapshot's or a task's ``contacts: {people: [...]}``
replaces them), searched by name or number, a person's card with their number and email, the editor opened from the
card or the create button with the START lines B-MoCA's detectors read, in every locale."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sim.driver import Driver
from tests.sim.test_app_state import snapshot_file
from vlui.android.i18n import locales
from vlui.sim.apps.contacts import PKG, ContactsState, Person, contacts_state, people
from vlui.sim.phone import SimDevice


def texts(dev: SimDevice) -> list[str]:
    return Driver(dev).texts()


def tap_person(dev: SimDevice, name: str) -> None:
    d = Driver(dev)
    d.tap(d.need(lambda n: n.rid == f"{PKG}:id/cliv_name_textview" and n.text == name, name))


PEOPLE = {"people": [{"name": "Zoë Adams", "phone": "+44 20 7946 0958", "email": "zoe@example.org"},
                     {"name": "ben Ortiz", "phone": "(555) 010-4477"}, {"name": "Cher"}]}


def test_a_fresh_phone_lists_four_people_by_name() -> None:
    dev = SimDevice("000", noise=False)
    assert contacts_state(dev) == ContactsState()
    assert [(p.name, p.phone) for _, p in people(dev)] == [
        ("Alex Kim", "+1 650-555-0134"), ("Maria García", "+1 650-555-0178"), ("Wei Zhang", "+1 415-555-0123"),
        ("Yuki Tanaka", "+1 408-555-0199")]
    dev.launch("contacts")
    assert texts(dev) == [dev.locale.t("apps.contacts_search"), "Alex Kim", "Maria García", "Wei Zhang", "Yuki Tanaka"]
    assert dev.ui_xml().count(f'resource-id="{PKG}:id/cliv_name_textview"') == 4


def test_a_snapshots_people_are_listed_and_a_card_shows_their_number_and_email(tmp_path: Path) -> None:
    path = snapshot_file(tmp_path, "{contacts: {people: [{name: Zoë Adams, phone: '+44 20 7946 0958', email: "
                                   "zoe@example.org}, {name: ben Ortiz, phone: (555) 010-4477}, {name: Cher}]}}")
    dev = SimDevice(path, noise=False)
    assert contacts_state(dev).people[0] == Person("Zoë Adams", "+44 20 7946 0958", "zoe@example.org")
    dev.launch("contacts")
    assert texts(dev)[1:] == ["ben Ortiz", "Cher", "Zoë Adams"]  # by name, whatever the case
    mark = dev.log_mark()
    tap_person(dev, "Zoë Adams")
    assert dev.top_screen() == {"screen": "contact", "person": 0}
    started = dev.log_lines(mark, tags=["ActivityTaskManager"])
    assert len(started) == 1 and started[0].endswith(
        "START u0 {act=android.provider.action.QUICK_CONTACT dat=content://com.android.contacts/contacts/lookup/"
        "0r1-5A4FCB414441/1 flg=0x4000000 pkg=com.android.contacts cmp=com.android.contacts/.quickcontact."
        "QuickContactActivity (has extras)} from uid 10054")
    assert texts(dev) == ["Zoë Adams", "+44 20 7946 0958", "Phone", "zoe@example.org", "Email"]
    dev.key("BACK")
    tap_person(dev, "Cher")
    assert texts(dev) == ["Cher"]  # no number, no email: no entries


def test_search_finds_people_by_name_and_by_number() -> None:
    dev = SimDevice("000", noise=False)
    dev.launch("contacts")
    Driver(dev).tap_rid(f"{PKG}:id/search_box")
    assert dev.state.focus == ("contacts", "search")
    dev.text("mar")
    assert texts(dev)[:2] == ["mar", "Maria García"] and "Alex Kim" not in texts(dev)
    for _ in "mar":
        dev.press_keycode(67)  # DEL
    dev.text("415-555")
    assert "Wei Zhang" in texts(dev) and "Maria García" not in texts(dev)


def test_the_editor_opens_for_the_person_and_for_a_new_contact() -> None:
    dev = SimDevice("000", noise=False)
    dev.launch("contacts")
    tap_person(dev, "Maria García")
    mark = dev.log_mark()
    Driver(dev).tap_rid(f"{PKG}:id/menu_edit")
    assert dev.top_screen() == {"screen": "editor", "person": 1}
    assert dev.log_lines(mark, tags=["ActivityTaskManager"])[0].endswith(
        "START u0 {act=android.intent.action.EDIT dat=content://com.android.contacts/contacts/lookup/0r2-4D4152494147/2"
        " cmp=com.android.contacts/.activities.ContactEditorActivity (has extras)} from uid 10054")
    t = dev.locale.t
    assert texts(dev) == [t("apps.contacts_edit"), t("common.save"), "Maria", "García", "+1 650-555-0178"]
    dev.key("BACK")
    dev.key("BACK")
    mark = dev.log_mark()
    Driver(dev).tap_rid(f"{PKG}:id/fab")
    assert dev.top_screen() == {"screen": "new_contact"}
    assert "act=android.intent.action.INSERT dat=content://com.android.contacts/contacts cmp=com.android.contacts/" \
           ".activities.ContactEditorActivity (has extras)" in dev.log_lines(mark)[0]
    assert texts(dev) == [t("apps.contacts_create"), t("common.save"), t("apps.contacts_first_name"),
                          t("apps.contacts_last_name"), t("apps.contacts_phone")]


def _type_in_field(dev: SimDevice, hint_or_value: str, text: str) -> None:
    d = Driver(dev)
    d.tap(d.need(lambda n: n.cls == "android.widget.EditText" and n.text == hint_or_value, hint_or_value))
    dev.text(text)


def test_a_new_contact_is_saved_and_its_card_opens() -> None:
    """Save in a new contact's editor: the person joins the list, the editor gives way to their card, started as
    ContactEditorActivity starts it after a save (the card's own START line), and nothing else is logged."""
    dev = SimDevice("000", noise=False)
    dev.launch("contacts")
    Driver(dev).tap_rid(f"{PKG}:id/fab")
    t = dev.locale.t
    _type_in_field(dev, t("apps.contacts_first_name"), "Ken")
    assert dev.state.focus == ("contacts", "editor.first")
    _type_in_field(dev, t("apps.contacts_last_name"), "Ito")
    _type_in_field(dev, t("apps.contacts_phone"), "2015550123")
    assert texts(dev)[2:5] == ["Ken", "Ito", "2015550123"]
    mark = dev.log_mark()
    Driver(dev).tap_rid(f"{PKG}:id/editor_menu_save_button")
    assert contacts_state(dev).people[-1] == Person("Ken Ito", "2015550123")
    assert dev.top_screen() == {"screen": "contact", "person": 4} and dev.state.focus is None
    assert dev.log_lines(mark) == [line for line in dev.log_lines(mark) if "ActivityTaskManager" in line]
    assert dev.log_lines(mark)[0].endswith(
        "START u0 {act=android.provider.action.QUICK_CONTACT dat=content://com.android.contacts/contacts/lookup/"
        "0r5-4B454E49544F/5 flg=0x4000000 pkg=com.android.contacts cmp=com.android.contacts/.quickcontact."
        "QuickContactActivity (has extras)} from uid 10054")
    assert texts(dev)[:3] == ["Ken Ito", "2015550123", t("apps.contacts_phone")]
    assert dev.check_state({"contacts.people": {"contains": {"name": "Ken Ito", "phone": {"number": "5550123"}}}})
    dev.key("BACK")
    assert "Ken Ito" in texts(dev)  # in the list, by name


def test_an_edited_contact_is_saved_back_to_its_card_and_an_empty_new_one_is_not_saved() -> None:
    dev = SimDevice("000", noise=False)
    dev.launch("contacts")
    tap_person(dev, "Wei Zhang")
    Driver(dev).tap_rid(f"{PKG}:id/menu_edit")
    _type_in_field(dev, "+1 415-555-0123", "")
    for _ in "0123":
        dev.press_keycode(67)  # DEL
    dev.text("9876")
    mark = dev.log_mark()
    Driver(dev).tap_rid(f"{PKG}:id/editor_menu_save_button")
    assert dev.top_screen() == {"screen": "contact", "person": 2} and dev.log_lines(mark) == []
    assert contacts_state(dev).people[2] == Person("Wei Zhang", "+1 415-555-9876")
    assert texts(dev)[:2] == ["Wei Zhang", "+1 415-555-9876"]
    dev.key("BACK")
    Driver(dev).tap_rid(f"{PKG}:id/fab")
    Driver(dev).tap_rid(f"{PKG}:id/editor_menu_save_button")
    assert len(contacts_state(dev).people) == 4 and dev.top_screen() == {"screen": "main"}
    Driver(dev).tap_rid(f"{PKG}:id/fab")  # a new editor starts empty, whatever the last one held
    assert texts(dev)[2] == dev.locale.t("apps.contacts_first_name")


def test_an_empty_contacts_list_says_so() -> None:
    dev = SimDevice("000", noise=False)
    dev.set_state({"contacts": {"people": []}})
    dev.launch("contacts")
    assert texts(dev) == [dev.locale.t("apps.contacts_search"), dev.locale.t("apps.contacts_empty")]


@pytest.mark.parametrize("locale_id", sorted(locales()))
def test_every_locale_draws_the_list_the_card_and_the_editor(locale_id: str) -> None:
    dev = SimDevice("000", noise=False)
    dev.reconfigure(locale=locale_id)
    dev.set_state({"contacts": PEOPLE})
    t = dev.locale.t
    dev.launch("contacts")
    assert texts(dev)[0] == t("apps.contacts_search") and dev.screenshot().std() > 0
    tap_person(dev, "Zoë Adams")
    assert texts(dev)[2:] == [t("apps.contacts_phone"), "zoe@example.org", t("apps.contacts_email")]
    assert dev.screenshot().std() > 0
    Driver(dev).tap_rid(f"{PKG}:id/menu_edit")
    assert texts(dev) == [t("apps.contacts_edit"), t("common.save"), "Zoë", "Adams", "+44 20 7946 0958"]
    assert dev.screenshot().std() > 0
    Driver(dev).tap_rid(f"{PKG}:id/editor_menu_save_button")  # saved as it was: the card again
    assert texts(dev)[0] == "Zoë Adams"
