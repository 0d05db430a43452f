"""Numbers a client gives the served phone (a count, a pid, an SQL literal), read as a device's C code reads them,
in time linear in the text whatever its length: Python's ``int()`` refuses more than 4,300 digits with a ValueError,
which reached clients as a traceback. The shell's own arithmetic (mksh's, wrapping at 32 bits) is
:func:`vlui.served.shell.language.wrapped`."""

from __future__ import annotations

LONG_MAX = (1 << 63) - 1


def parse_long(text: str, low: int = -LONG_MAX - 1, high: int = LONG_MAX) -> int | None:
    """``text`` (ASCII digits after an optional sign) as an integer from ``low`` to ``high`` (C's long long by
    default, what toybox's strtoll reads), or None: not such a number, or out of range (``ERANGE``). Linear in the
    text whatever its length (Python's ``int()`` refuses more than 4,300 digits)."""
    sign, digits = (text[0], text[1:]) if text[:1] in ("-", "+") else ("", text)
    if not (digits.isascii() and digits.isdigit()):
        return None
    digits = digits.lstrip("0") or "0"
    if len(digits) > 20:
        return None
    value = int(sign + digits)
    return value if low <= value <= high else None
