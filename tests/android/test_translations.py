"""Where the translations of the newer locales come from: every string has a line in
vlui/android/strings/sources/<locale>.tsv saying which file of Android (or CLDR, or Chromium) it was read from, or
that it could not be found, and the line holds exactly the value the phone shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from vlui.android.i18n import HERE, _flatten, get_locale, locales

SOURCES = HERE / "strings" / "sources"
# app: a third-party app's own translation (its res/values-<lang>/strings.xml), or its default where it has none
KINDS = {"aosp", "aosp-same-text", "cldr", "chromium", "brand", "unverified", "app"}
NEW = ["th-TH", "he-IL", "vi-VN", "tr-TR", "pl-PL", "it-IT", "id-ID", "sw-KE", "bn-IN", "fa-IR", "en-GB", "nl-NL"]


def _rows(path: Path) -> dict[str, tuple[str, str, str]]:
    rows = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        key, kind, where, value = line.split("\t")
        assert key not in rows, f"{path.name} line {n}: {key} twice"
        rows[key] = (kind, where, value)
    return rows


@pytest.mark.parametrize("locale_id", NEW)
def test_every_string_says_where_it_comes_from(locale_id: str) -> None:
    strings = get_locale(locale_id).strings
    rows = _rows(SOURCES / f"{locale_id}.tsv")
    reference = _flatten(yaml.safe_load((HERE / "strings" / "en-US.yaml").read_text(encoding="utf-8")))
    assert list(rows) == list(reference)
    for key, (kind, where, value) in rows.items():
        assert kind in KINDS, f"{locale_id} {key}: kind {kind!r}"
        assert where.strip(), f"{locale_id} {key}: no source named"
        shown = strings[key]
        assert (json.loads(value) if isinstance(shown, list) else value) == shown, f"{locale_id} {key}"
        if kind in ("aosp", "aosp-same-text"):  # read from (or composed of) resources of a named strings.xml
            assert "strings.xml" in where, f"{locale_id} {key}: {where}"
        if kind == "app":  # a resource file of the app's, at a commit
            assert "/res/values" in where and ".xml@" in where, f"{locale_id} {key}: {where}"


def test_the_new_locales_have_their_scripts_directions_and_digits() -> None:
    meta = locales()
    assert {i: meta[i]["script"] for i in ("th-TH", "he-IL", "bn-IN", "fa-IR", "vi-VN")} == {
        "th-TH": "thai", "he-IL": "hebrew", "bn-IN": "bengali", "fa-IR": "arabic", "vi-VN": "latin"}
    assert [i for i in NEW if meta[i]["rtl"]] == ["he-IL", "fa-IR"]
    assert get_locale("fa-IR").number(2026) == "۲۰۲۶" and get_locale("bn-IN").number(2026) == "২০২৬"
    assert get_locale("en-GB").t("settings.airplane_mode") == "Aeroplane mode"  # what Android's en-GB says
