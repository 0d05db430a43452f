"""How Android formats a US phone number for the screen: libphonenumber's rules for the country the phone is in
(region ``US``, the North American Numbering Plan), as Android 10 applies them.

- :func:`format_in_original_format`: ``PhoneNumberUtil.formatInOriginalFormat`` of a number parsed with its raw
  input kept, which is what ``PhoneNumberUtils.formatNumber(number, e164, "US")`` returns: the national format
  ("(202) 456-1111", "223-4458") where a pattern of the region fits the number, otherwise the digits as dialled
  ("11489", "311311", "1234578").
- :func:`as_you_type`: ``AsYouTypeFormatter``, what ``PhoneNumberFormattingTextWatcher`` shows in a field while the
  digits are typed ("(264) 451-193" for nine digits, "1 234-578" for a number that starts with the national prefix).
- :func:`incall_number`: the number as AOSP Dialer's in-call screen shows it for an outgoing call dialled on its
  dial pad (docs/environment.md, "The calls: the release's phones have the AOSP Dialer").

Only what a US phone needs for numbers typed on a dial pad (digits, ``*``, ``#``) is implemented, written from
libphonenumber's documented behaviour and the US metadata of its 2019 releases (Android 10's): national prefix
``1``, numbers of 10 digits (7 without the area code), formats ``$1-$2`` for 7 digits and ``($1) $2-$3`` for 10,
each for numbers that start with 2-9."""

from __future__ import annotations

import re

NATIONAL_PREFIX = "1"
NATIONAL_LENGTH = 10  # area code + exchange + line
LOCAL_LENGTH = 7  # exchange + line: a number dialled without its area code
MAX_LENGTH = 17  # libphonenumber's longest national number; a longer one does not parse
# The region's formats in metadata order: (pattern of the national number, template), each for a number whose first
# digit is 2-9. A template's x's are the digits in turn.
FORMATS = ((re.compile(r"[2-9]\d{6}"), "xxx-xxxx"), (re.compile(r"[2-9]\d{9}"), "(xxx) xxx-xxxx"))
INTERNATIONAL_TEMPLATE = "xxx-xxx-xxxx"  # the 10-digit format's intlFormat ($1-$2-$3), used after the prefix


def _fill(template: str, digits: str) -> str:
    """``digits`` in the template's places, cut after the last digit placed."""
    out, i = [], 0
    for ch in template:
        if i == len(digits):
            break
        if ch == "x":
            out.append(digits[i])
            i += 1
        else:
            out.append(ch)
    return "".join(out)


def _national(digits: str) -> str:
    """The national significant number libphonenumber parses out of ``digits`` (a US number without ``+``): the
    national prefix is stripped only when what follows it is long enough to be a whole number (so "11489" and
    "1234578" keep their leading 1, as short numbers may)."""
    if digits.startswith(NATIONAL_PREFIX) and len(digits) - 1 >= NATIONAL_LENGTH:
        return digits[1:]
    return digits


def format_national(national: str) -> str | None:
    """The national format of a national significant number, or None where no format of the region fits it."""
    for pattern, template in FORMATS:
        if pattern.fullmatch(national):
            return _fill(template, national)
    return None


def format_in_original_format(number: str) -> str:
    """``PhoneNumberUtils.formatNumber(number, e164, "US")``: the number in its national format when a format of
    the region fits it and formatting adds no digit and drops none (a national prefix the user dialled stays, so the
    digits as dialled are shown); otherwise ``number`` as it is (a number with ``*`` or ``#``, too short or too long
    to parse, or one no format fits)."""
    if not number.isdigit() or len(number) < 2 or len(number) > MAX_LENGTH:
        return number
    national = _national(number)
    formatted = format_national(national)
    if formatted is None:
        return number
    if re.sub(r"\D", "", formatted) != number:  # the raw input had the national prefix: keep what was dialled
        return number
    return formatted


def as_you_type(number: str) -> str:
    """What ``AsYouTypeFormatter`` (region US) shows once ``number`` has been typed digit by digit: nothing before
    the third digit; a leading national prefix set apart ("1 234-578") when the next digit starts an area code (2-9);
    the first format whose template holds the digits typed so far; the digits as typed where none does, or where
    anything but digits was typed."""
    if len(number) < 3 or not number.isdigit():
        return number
    if number[0] == NATIONAL_PREFIX:
        if number[1] in "01":  # a 1 that cannot start a NANP number after the prefix: nothing to format
            return number
        national = number[1:]
        if len(national) < 3:
            return f"{NATIONAL_PREFIX} {national}"
        if len(national) > INTERNATIONAL_TEMPLATE.count("x"):
            return number
        return f"{NATIONAL_PREFIX} {_fill(INTERNATIONAL_TEMPLATE, national)}"
    if number[0] not in "23456789":
        return number
    for _, template in FORMATS:
        if len(number) <= template.count("x"):
            return _fill(template, number)
    return number


def incall_number(number: str) -> str:
    """The number as AOSP Dialer's in-call screen (``contactgrid_contact_name``) shows an outgoing call to a number
    that is no contact's, on a US phone: :func:`format_in_original_format` of the digits, except a number longer
    than a local number and shorter than a whole one (8 or 9 digits, starting with 2-9), which keeps the area-code
    form the dial pad gave it as it was typed (:func:`as_you_type`: "(264) 451-193"). That exception is what
    B-MoCA release 2.5's checks read off its emulator for "26-445-1193", next to "311311", "11489" and "1234578" as
    dialled and "(202) 456-1111" formatted (docs/environment.md)."""
    if number.isdigit() and number[0] in "23456789" and LOCAL_LENGTH < len(number) < NATIONAL_LENGTH:
        return as_you_type(number)
    return format_in_original_format(number)

