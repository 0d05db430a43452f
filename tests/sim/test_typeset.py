"""Text of the simulated phone: every locale's strings render without tofu, runs split per script, right-to-left
layout, ellipsis, masks."""

from __future__ import annotations

import time
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from fontTools.ttLib import TTFont
from PIL import Image

from vlui.android.i18n import HERE, get_locale, locales
from vlui.sim import typeset as T
from vlui.sim.typeset import ELLIPSIS, FONTS, _fontconfig, font_file, layout, mask, split_runs

TIMES = [(0, 0), (0, 5), (9, 0), (11, 59), (12, 0), (12, 30), (13, 7), (18, 45), (23, 59)]


@lru_cache(maxsize=None)
def _cmap(path: Path, index: int) -> frozenset[int]:
    kwargs = {"fontNumber": index} if path.suffix == ".ttc" else {}
    font = TTFont(str(path), lazy=True, **kwargs)
    cmap = font.getBestCmap()
    font.close()
    return frozenset(cmap)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


class _Values(dict):
    """Placeholder values as the phone fills them in: numbers in the locale's digits."""

    def __init__(self, number: str) -> None:
        super().__init__()
        self.number = number

    def __missing__(self, key: str) -> str:
        return self.number


def _displayed(template: str, number: str) -> str:
    try:
        return template.format_map(_Values(number))
    except (ValueError, IndexError, AttributeError, KeyError):
        return template


def _locale_texts(locale_id: str) -> list[str]:
    loc = get_locale(locale_id)
    raw = yaml.safe_load((HERE / "strings" / f"{locale_id}.yaml").read_text(encoding="utf-8"))
    templates = _strings(raw)
    texts = [_displayed(t, loc.number(n)) for t in templates for n in (7, 42)] + [loc.meta["native_name"]]
    texts += [t[:n].rstrip() + ELLIPSIS for t in texts[::2] for n in (3, 8)]  # what an ellipsized label shows
    for h, m in TIMES:
        texts += [loc.time(h, m), loc.time(h, m, hour12=True), loc.time(h, m, hour12=False), loc.clock_digits(h, m)]
    texts += [loc.number(n) for n in (0, 7, 42, 100, 1234567890)] + [loc.number("12:34"), loc.number("3.5%")]
    return texts


def _skippable(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch) in ("Cf", "Zs")


@pytest.mark.parametrize("locale_id", sorted(locales()))
def test_every_string_of_the_locale_has_glyphs_in_its_run_fonts(locale_id: str) -> None:
    loc = get_locale(locale_id)
    missing: dict[str, set[str]] = {}
    for s in _locale_texts(locale_id):
        for script, chunk in split_runs(s, cjk=loc.cjk_font, arabic=loc.arabic_font):
            regular, index = font_file(script)
            cmap = _cmap(regular, index)
            for ch in chunk:
                if not _skippable(ch) and ord(ch) not in cmap:
                    missing.setdefault(f"{script} ({regular.name}#{index})", set()).add(ch)
    report = {k: " ".join(f"{c!r}=U+{ord(c):04X}" for c in sorted(v)) for k, v in missing.items()}
    assert not missing, f"{locale_id}: characters without a glyph (tofu): {report}"


def test_the_locale_texts_cover_the_strings_files() -> None:
    # guard against the tofu test silently checking nothing
    texts = _locale_texts("ja-JP")
    assert len(texts) > 100
    assert get_locale("ja-JP").t("app.settings") in texts


# ---------------------------------------------------------------------------------------------- run splitting
def test_plain_latin_is_one_run_including_digits_and_punctuation() -> None:
    assert split_runs("Wi-Fi 5 GHz, 100%!") == [("latin", "Wi-Fi 5 GHz, 100%!")]


def test_neutral_characters_join_the_run_before_them() -> None:
    runs = split_runs("設定 12: abc")
    assert runs == [("cjk-sc", "設定 12: "), ("latin", "abc")]
    assert "".join(t for _, t in runs) == "設定 12: abc"


def test_leading_neutral_characters_join_the_first_strong_run() -> None:
    assert split_runs("12 設定") == [("cjk-sc", "12 設定")]
    assert split_runs("  مرحبا") == [("arabic", "  مرحبا")]


def test_only_neutral_characters_are_one_latin_run() -> None:
    assert split_runs("12:34 - 56") == [("latin", "12:34 - 56")]
    assert split_runs("") == []


def test_neutral_characters_the_arabic_font_lacks_fall_back_to_noto_sans() -> None:
    # Noto Sans Arabic has no "%", "(", ")" or "…": Android draws them with the next font of its fallback chain
    assert split_runs("100% - يتبقى") == [("latin", "100%"), ("arabic", " - يتبقى")]
    assert split_runs("بنسبة 23% - 49 غيغابايت") == [("arabic", "بنسبة "), ("latin", "23%"), ("arabic", " - 49 غيغابايت")]
    assert split_runs("عرض كل التطبيقات (42)") == [("arabic", "عرض كل التطبيقات "), ("latin", "(42)")]
    assert split_runs("جارٍ الاتصال…") == [("arabic", "جارٍ الاتصال"), ("latin", "…")]
    assert split_runs("ترتیبات…", arabic="urdu") == [("urdu", "ترتیبات"), ("latin", "…")]


def test_ellipsized_arabic_has_the_ellipsis_at_its_left_end() -> None:
    line = layout("شاشة القراءة والعرض وعناصر التحكم في التفاعل والمزيد", 30, max_width=200)
    assert line.runs[0][:2] == ("latin", ELLIPSIS) and line.runs[0][2] == 0


def test_arabic_with_embedded_latin_gives_two_runs() -> None:
    runs = split_runs("تشغيل Wi‑Fi")
    assert [s for s, _ in runs] == ["arabic", "latin"]
    assert runs[1][1] == "Wi‑Fi"
    assert "".join(t for _, t in runs) == "تشغيل Wi‑Fi"


def test_urdu_locale_uses_nastaliq_for_arabic_script() -> None:
    loc = get_locale("ur-PK")
    assert loc.arabic_font == "urdu"
    assert split_runs("ترتیبات", cjk=loc.cjk_font, arabic=loc.arabic_font) == [("urdu", "ترتیبات")]
    assert get_locale("ar-AE").arabic_font == "arabic"


def test_devanagari_with_digits_is_one_run() -> None:
    assert split_runs("सेटिंग 5") == [("devanagari", "सेटिंग 5")]


@pytest.mark.parametrize("locale_id, face", [("ja-JP", "cjk-jp"), ("ko-KR", "cjk-kr"), ("zh-hans-CN", "cjk-sc"),
                                             ("en-US", "cjk-sc"), ("ar-AE", "cjk-sc")])
def test_cjk_locales_pick_their_face(locale_id: str, face: str) -> None:
    loc = get_locale(locale_id)
    assert loc.cjk_font == face
    runs = split_runs("設定", cjk=loc.cjk_font, arabic=loc.arabic_font)
    assert runs == [(face, "設定")]


def test_hangul_in_korean_uses_the_korean_face() -> None:
    loc = get_locale("ko-KR")
    assert split_runs(loc.t("app.settings"), cjk=loc.cjk_font)[0][0] == "cjk-kr"


def test_cjk_faces_are_the_right_members_of_the_collection() -> None:
    expected = {"cjk-jp": "JP", "cjk-kr": "KR", "cjk-sc": "SC"}
    for script, region in expected.items():
        for path, index in (font_file(script), font_file(script, bold=True)):
            family = TTFont(str(path), fontNumber=index, lazy=True)["name"].getDebugName(1)
            assert family == f"Noto Sans CJK {region}", (script, path, family)


def test_fontconfig_finds_each_family_where_debian_puts_it() -> None:
    """Away from Debian's paths, fonts are found by family through fontconfig: here it finds the same files."""
    for script, (family, regular, bold, index) in FONTS.items():
        assert _fontconfig(family, "Regular") == (regular, index), script
        # a family with no bold face (Noto Sans Math) draws bold with its regular one
        assert _fontconfig(family, "Bold") == ((bold, index) if bold != regular else None), script
    assert _fontconfig("No Such Family", "Regular") is None  # a substitute is not the font asked for


# ---------------------------------------------------------------------------------------------- layout
def test_right_to_left_line_places_its_runs_from_the_right() -> None:
    line = layout("تشغيل Wi‑Fi", 32)
    by_script = {script: (chunk, x) for script, chunk, x in line.runs}
    assert set(by_script) == {"arabic", "latin"}
    assert by_script["arabic"][1] > by_script["latin"][1]
    assert by_script["latin"][1] == 0
    assert line.width > by_script["arabic"][1]


def test_left_to_right_line_keeps_logical_order() -> None:
    line = layout("Wi‑Fi 設定", 32)
    assert [s for s, _, _ in line.runs] == ["latin", "cjk-sc"]
    xs = [x for _, _, x in line.runs]
    assert xs[0] == 0 and xs[1] > 0


def test_runs_tile_the_line_width() -> None:
    line = layout("Bluetooth 蓝牙 on", 28)
    xs = [x for _, _, x in line.runs]
    assert xs == sorted(xs)
    last_script, last_chunk, last_x = line.runs[-1]
    assert line.width == last_x + round(T.font(last_script, 28).getlength(last_chunk))


@pytest.mark.parametrize("text", ["Screen readers, display, interaction controls and more settings",
                                  "شاشة القراءة والعرض وعناصر التحكم في التفاعل والمزيد",
                                  "屏幕阅读器、显示和互动控件以及更多设置选项"])
def test_long_text_is_ellipsized_to_fit(text: str) -> None:
    full = layout(text, 30)
    line = layout(text, 30, max_width=200)
    assert full.width > 200
    assert line.width <= 200
    logical = "".join(chunk for _, chunk, _ in sorted(line.runs, key=lambda r: r[2], reverse=T.is_rtl_text(text)))
    assert logical.endswith(ELLIPSIS)
    assert len(logical) > 1
    assert text.startswith(logical[:-1].rstrip())


def test_text_that_fits_is_not_ellipsized() -> None:
    line = layout("Battery", 30, max_width=1000)
    assert "".join(c for _, c, _ in line.runs) == "Battery"


@pytest.mark.parametrize("text", ["Settings", "الإعدادات", "设置", "सेटिंग"])
def test_layout_width_grows_with_font_size(text: str) -> None:
    widths = [layout(text, size).width for size in (12, 24, 48)]
    assert widths[0] < widths[1] < widths[2]
    heights = [layout(text, size).ascent + layout(text, size).descent for size in (12, 24, 48)]
    assert heights[0] < heights[1] < heights[2]


def test_bold_is_at_least_as_wide_as_regular() -> None:
    assert layout("Network & internet", 30, bold=True).width >= layout("Network & internet", 30).width


# ---------------------------------------------------------------------------------------------- masks
@pytest.mark.parametrize("script, chunk", [("latin", "Hello"), ("arabic", "مرحبا"), ("cjk-jp", "設定"),
                                           ("devanagari", "नमस्ते"), ("urdu", "ترتیبات")])
def test_mask_of_visible_text_has_ink(script: str, chunk: str) -> None:
    im, x0, y0 = mask(script, chunk, 24, False)
    assert isinstance(im, Image.Image)
    assert im.mode == "L"
    assert im.getbbox() is not None
    assert max(im.histogram()[1:]) > 0
    assert y0 < 0  # glyphs rise above the baseline


def test_mask_of_spaces_is_none() -> None:
    im, x0, y0 = mask("latin", "   ", 24, False)
    assert im is None
    assert (x0, y0) == (0, 0)


def test_bigger_text_gives_a_bigger_mask() -> None:
    small, _, _ = mask("latin", "Hello", 12, False)
    big, _, _ = mask("latin", "Hello", 36, False)
    assert big.size[0] > small.size[0] and big.size[1] > small.size[1]


def test_a_long_text_costs_what_shows_of_it() -> None:
    """Issue 63: a client typed megabytes into a field and every frame laid the whole line out (seconds, then a
    Pillow error). A text over LONG_TEXT characters is laid out only as far as it can show: its ellipsized line is the
    one a short prefix gives, in time that does not grow with its length; a word of any length wraps in lines that
    fit, as fast."""
    huge = "1" * 1_000_000
    start = time.perf_counter()
    line = layout(huge, 40, max_width=900)
    assert time.perf_counter() - start < 2.0
    assert line == layout(huge[:4 * T.LONG_TEXT], 40, max_width=900) and line.width <= 900
    assert line.runs[-1][1].endswith(ELLIPSIS)
    start = time.perf_counter()
    lines = T.wrap("2" * 20_000, 40, 900)
    assert time.perf_counter() - start < 5.0
    assert "".join(lines) == "2" * 20_000 and all(layout(x, 40).width <= 900 for x in lines)
    assert len({len(x) for x in lines[:-1]}) == 1  # every full line holds the same count of the same digit
