"""Locales of the simulated phone: translated strings (``strings/<locale>.yaml``), time formats, digits, direction.

Strings are data files, one per locale, with the same keys as ``strings/en-US.yaml``; ``locales.yaml`` holds each
locale's metadata. A missing key is an error, never a silent fallback to English.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from vlui.errors import VluiError
from vlui.resources import read_yaml

HERE = Path(__file__).resolve().parent
WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")  # locales.yaml's first_day, in ``weekday``'s order
SCRIPT_FONTS = {"cjk-sc": "cjk-sc", "cjk-jp": "cjk-jp", "cjk-kr": "cjk-kr", "urdu": "urdu"}


@lru_cache(maxsize=1)
def locales() -> dict[str, dict[str, Any]]:
    """Locale id -> metadata (name, native_name, android, rtl, hour12, time_format, am, pm, digits, decimal,
    script, first_day)."""
    return read_yaml(HERE / "data" / "locales.yaml")


def _flatten(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, path + "."))
        else:
            flat[path] = value
    return flat


@dataclass(frozen=True)
class Locale:
    id: str
    meta: dict[str, Any]
    strings: dict[str, Any]

    @property
    def rtl(self) -> bool:
        return bool(self.meta["rtl"])

    @property
    def cjk_font(self) -> str:
        """The CJK face for this locale's Han characters (Japanese and Korean differ from Simplified Chinese)."""
        return self.meta["script"] if self.meta["script"].startswith("cjk") else "cjk-sc"

    @property
    def arabic_font(self) -> str:
        return "urdu" if self.meta["script"] == "urdu" else "arabic"

    def t(self, key: str, **values: Any) -> str:
        """The string ``key`` (``"settings.airplane_mode"``), with ``{placeholders}`` filled in and numbers
        written in the locale's digits."""
        try:
            value = self.strings[key]
        except KeyError:
            raise KeyError(f"string {key!r} is missing from strings/{self.id}.yaml") from None
        if values:
            value = value.format(**{k: self.number(v) if isinstance(v, int) else v for k, v in values.items()})
        return value

    def seq(self, key: str) -> list[str]:
        return self.strings[key]

    def week(self) -> list[int]:
        """The days of a week as the locale shows them, from its first day (``first_day``): indices into
        ``weekday`` (0 Sunday ... 6 Saturday); ``[1, 2, 3, 4, 5, 6, 0]`` where a week starts on Monday."""
        first = WEEKDAYS.index(self.meta["first_day"])
        return [(first + i) % 7 for i in range(7)]

    def number(self, n: int | str) -> str:
        digits = self.meta["digits"]
        return "".join(digits[int(c)] if c.isdigit() else c for c in str(n))

    def decimal(self, value: float, places: int) -> str:
        """``value`` with ``places`` decimals in the locale's digits and decimal separator (``2.40``, ``2,40``)."""
        whole, _, fraction = f"{value:.{places}f}".partition(".")
        return self.number(whole) + (self.meta["decimal"] + self.number(fraction) if fraction else "")

    def time(self, hour: int, minute: int, hour12: bool | None = None) -> str:
        """A time of day as the locale's Clock app writes it (``9:00 AM``, ``09:00``, ``오전 9:00``)."""
        twelve = self.meta["hour12"] if hour12 is None else hour12
        fmt = self.meta["time_format"] if twelve else _to_24h(self.meta["time_format"])
        h12 = hour % 12 or 12
        out = fmt.format(h=h12, hh=f"{h12:02d}", H=hour, HH=f"{hour:02d}", mm=f"{minute:02d}",
                         ampm=self.meta["am"] if hour < 12 else self.meta["pm"])
        return self.number(out).strip()

    def clock_digits(self, hour: int, minute: int) -> str:
        """The time without its am/pm marker (the big digits of a clock)."""
        twelve = self.meta["hour12"]
        h = (hour % 12 or 12) if twelve else hour
        return self.number(f"{h}:{minute:02d}" if twelve else f"{h:02d}:{minute:02d}")


def _to_24h(fmt: str) -> str:
    """A 24-hour variant of a 12-hour format: drop the am/pm marker, use 00-23 hours."""
    return fmt.replace("{ampm}", "").replace("{hh}", "{HH}").replace("{h}", "{HH}").strip()


@lru_cache(maxsize=32)
def get_locale(locale_id: str) -> Locale:
    """The locale ``locale_id`` (e.g. ``"fr-CA"``); unknown ids are an error listing the known ones."""
    meta = locales().get(locale_id)
    if meta is None:
        raise VluiError(f"unknown locale {locale_id!r}; choose from: {', '.join(locales())}")
    path = HERE / "strings" / f"{locale_id}.yaml"
    if not path.exists():
        raise VluiError(f"locale {locale_id!r} has no strings file {path}")
    strings = _flatten(read_yaml(path))
    reference = _flatten(read_yaml(HERE / "strings" / "en-US.yaml"))
    missing = sorted(set(reference) - set(strings))
    if missing:
        raise VluiError(f"strings/{locale_id}.yaml lacks {len(missing)} key(s), e.g. {', '.join(missing[:5])}")
    return Locale(locale_id, meta, strings)


def locale_for_tag(tag: str) -> str:
    """The locale id (``zh-hans-CN``) of an Android language tag (``zh-Hans-CN``, any case)."""
    by_tag = {}
    for locale_id, meta in locales().items():
        by_tag[meta["android"].lower()] = by_tag[locale_id.lower()] = locale_id
    found = by_tag.get(tag.strip().lower())
    if found is None:
        known = ", ".join(meta["android"] for meta in locales().values())
        raise VluiError(f"persist.sys.locale {tag!r} is not a locale of the simulated phone; choose from: {known}")
    return found


# Languages whose script Android lays out right to left (ICU's likely script of the language is Arabic, Hebrew,
# Thaana, Syriac or N'Ko): for a phone's locale that locales.yaml does not know (a real phone over ADB)
RTL_LANGUAGES = frozenset({"ar", "fa", "he", "iw", "ur", "ps", "sd", "ug", "yi", "ji", "ckb", "dv", "syr", "ks",
                           "ku-arab", "nqo"})


def is_rtl(locale_id: str) -> bool:
    """Whether Android lays a phone in locale ``locale_id`` out right to left: locales.yaml's ``rtl`` for a locale it
    knows, else by the language (and an ``Arab`` script subtag: ``pa-Arab``), as ICU's likely script says."""
    meta = locales().get(locale_id)
    if meta is not None:
        return bool(meta["rtl"])
    parts = locale_id.replace("_", "-").lower().split("-")
    return parts[0] in RTL_LANGUAGES or "arab" in parts[1:] or "hebr" in parts[1:]
