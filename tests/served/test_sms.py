"""The SMS provider's rows (``content://sms``, ``/inbox``, ``/sent``) made from Messages' conversations: Android's
columns, newest first, what was sent on the phone's screen among them."""

from __future__ import annotations

import threading

import pytest

from tests.sim.test_messages import by_id, phone, tap
from vlui.errors import VluiError
from vlui.served.phone import ServedPhone
from vlui.served.shell import Shell
from vlui.sim.apps.messages import COLUMNS, sms_rows
from vlui.sim.phone import SimDevice
from vlui.tasks.catalog import resolve_tasks
from vlui.tasks.templates import instances

MARIA, WEI, PARCEL = "+1 650-555-0178", "+1 650-555-0112", "+44 20 7946 0958"
NOV_23_0740 = 1795419600000  # 2026-11-23 07:40 on the phone's clock, in ms since 1970


def test_the_sms_boxes_hold_the_conversations_messages_newest_first() -> None:
    dev = phone()
    everything = sms_rows(dev.state)
    assert all(tuple(row) == COLUMNS for row in everything)
    assert [(r["address"], r["type"], r["read"]) for r in everything] == [
        (MARIA, 1, 0), (PARCEL, 1, 1), (MARIA, 2, 1), (MARIA, 1, 1), (WEI, 1, 1)]
    assert everything[0]["date"] == NOV_23_0740 and everything[0]["thread_id"] == 1 and everything[0]["_id"] == 5
    assert [r["_id"] for r in everything] == [5, 4, 3, 2, 1]
    assert [r["body"] for r in sms_rows(dev.state, "sent")] == ["Sure, where?"]
    assert [r["address"] for r in sms_rows(dev.state, "inbox")] == [MARIA, PARCEL, MARIA, WEI]
    assert sms_rows(dev.state, "draft") == [] and sms_rows(SimDevice("000", noise=False).state) == []
    with pytest.raises(VluiError, match=r"content://sms/spam: no such box; boxes: inbox, sent, draft, outbox, "):
        sms_rows(dev.state, "spam")


def test_a_message_sent_on_the_screen_is_the_newest_sent_row() -> None:
    dev = phone()
    dev.launch("messages")
    tap(dev, by_id(dev, "conversation_name")[2])  # Wei Zhang
    tap(dev, by_id(dev, "compose_message_text")[0])
    dev.text("On it")
    tap(dev, by_id(dev, "send_message_button_icon")[0])
    newest = sms_rows(dev.state, "sent")[0]
    assert {k: newest[k] for k in ("address", "body", "type", "thread_id")} == {
        "address": WEI, "body": "On it", "type": 2, "thread_id": 2}
    assert newest["date"] == NOV_23_0740 + 20 * 60_000  # 08:00, the phone's clock when it was sent


def test_a_file_sent_is_a_multimedia_message_that_content_sms_leaves_out() -> None:
    """A message that carries a file (Files' Share to Messages) is an MMS: content://mms holds it on a phone, not the
    SMS provider, so ``content query --uri content://sms/sent`` over ADB lists only the texts; a task that sends a
    file is judged on Messages' own state, and so runs on the simulated phone only."""
    served = ServedPhone("000", noise=False)
    with served.lock:
        served.device.set_state({"messages": {"conversations": [{"name": "Wei Zhang", "number": WEI, "messages": [
            {"text": "", "direction": "out", "time": "2026-11-23 07:50", "attachments": ["lake-trip.jpg"]},
            {"text": "Here it is", "direction": "out", "time": "2026-11-23 07:51"}]}]}})
    out: list[bytes] = []
    status = Shell(served).run("content query --uri content://sms/sent --projection address:body", out.append,
                               threading.Event())
    assert status == 0 and b"".join(out).decode() == f"Row: 0 address={WEI}, body=Here it is\n"
    task = instances("share_photo", 0, 1)[0]
    with pytest.raises(VluiError, match=r"over ADB, no shell command reaches .*share_photo@.*\(contacts.people, "
                                        r"files.items, messages.conversations\)"):
        resolve_tasks([task.id], backend="adb")
