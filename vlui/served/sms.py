"""The SMS provider's rows (``content://sms``, TelephonyProvider's SmsProvider) of the served simulated phone: what
``content query --uri content://sms/sent`` reads on an Android 10 device, made from Messages' conversations
(:class:`~vlui.sim.apps.messages.MessagesState`), so that a task can check what was sent as on a real phone.

:func:`sms_rows` is the provider; ``content query`` reads its URIs through it (:data:`vlui.served.providers.TABLES`). Columns are Android's (``Telephony.TextBasedSmsColumns``) that the state gives: ``_id``, ``thread_id``,
``address``, ``body``, ``date`` (ms since 1970 on the phone's clock), ``type`` (1 received, 2 sent) and ``read`` (1 or
0). Rows come newest first, SmsProvider's default order (``date DESC``). Deviation: ``_id`` numbers the messages in the
order of their times (SmsProvider numbers them in the order they were written), and a thread is a conversation's
place in Messages' list, from 1.
"""

from __future__ import annotations

from datetime import datetime

from vlui.android.logcat import EPOCH
from vlui.android.state import DeviceState
from vlui.errors import VluiError
from vlui.sim.apps.messages import TIME_FORMAT, MessagesState

MESSAGE_TYPE = {"in": 1, "out": 2}  # Telephony.TextBasedSmsColumns.MESSAGE_TYPE_INBOX, MESSAGE_TYPE_SENT
BOXES = {"": None, "inbox": 1, "sent": 2, "draft": 3, "outbox": 4, "failed": 5, "queued": 6}  # content://sms/<box>
COLUMNS = ("_id", "thread_id", "address", "body", "date", "type", "read")


def sms_rows(state: DeviceState, box: str = "") -> list[dict[str, int | str]]:
    """The rows of ``content://sms/<box>`` (``box`` "" for ``content://sms``: every message), newest first, each a
    mapping of :data:`COLUMNS`. The simulated phone's drafts, outbox, failed and queued boxes are always empty (a
    draft is the compose field's text, not a row). An unknown box is an error naming the known ones."""
    if box not in BOXES:
        raise VluiError(f"content://sms/{box}: no such box; boxes: {', '.join(b for b in BOXES if b)}")
    messages = state.app("messages", MessagesState)
    found = [(m.time, thread, m) for thread, c in enumerate(messages.conversations, 1) for m in c.messages]
    numbers = {thread: c.number for thread, c in enumerate(messages.conversations, 1)}
    found.sort(key=lambda row: row[0])  # stable: messages of one minute keep their order
    rows = []
    for n, (time, thread, m) in enumerate(found, 1):
        date = int((datetime.strptime(time, TIME_FORMAT) - EPOCH).total_seconds() * 1000)
        kind = MESSAGE_TYPE[m.direction]
        if BOXES[box] in (None, kind):
            rows.append({"_id": n, "thread_id": thread, "address": numbers[thread], "body": m.text, "date": date,
                         "type": kind, "read": int(m.read or m.direction == "out")})
    return rows[::-1]
