"""Text layout for the simulated phone: the right Noto font for every script, right-to-left runs, ellipsis.

Android renders mixed-script strings (an Arabic sentence with "Wi-Fi" in it, a Hindi label with digits) by falling
back from font to font per character run. Pillow draws one font at a time, so a string is split into runs of one
script each; Arabic-script, Hebrew, Devanagari, Bengali and Thai runs are shaped with raqm (joining, conjuncts, mark
placement), the rest use Pillow's faster basic layout. Layouts are cached: the same label at the same size is laid out once.
"""

from __future__ import annotations

import subprocess
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from vlui.errors import VluiError

NOTO = Path("/usr/share/fonts/truetype/noto")
NOTO_CJK = Path("/usr/share/fonts/opentype/noto")

# script -> (fontconfig family, Debian's regular file, Debian's bold file, face index inside a .ttc collection). Debian's
# files (fonts-noto-core, fonts-noto-cjk) are used where they are; elsewhere fontconfig finds the family.
FONTS: dict[str, tuple[str, Path, Path, int]] = {
    "latin": ("Noto Sans", NOTO / "NotoSans-Regular.ttf", NOTO / "NotoSans-Bold.ttf", 0),
    "arabic": ("Noto Sans Arabic", NOTO / "NotoSansArabic-Regular.ttf", NOTO / "NotoSansArabic-Bold.ttf", 0),
    "urdu": ("Noto Nastaliq Urdu", NOTO / "NotoNastaliqUrdu-Regular.ttf", NOTO / "NotoNastaliqUrdu-Bold.ttf", 0),
    "devanagari": ("Noto Sans Devanagari", NOTO / "NotoSansDevanagari-Regular.ttf",
                   NOTO / "NotoSansDevanagari-Bold.ttf", 0),
    "bengali": ("Noto Sans Bengali", NOTO / "NotoSansBengali-Regular.ttf", NOTO / "NotoSansBengali-Bold.ttf", 0),
    "thai": ("Noto Sans Thai", NOTO / "NotoSansThai-Regular.ttf", NOTO / "NotoSansThai-Bold.ttf", 0),
    "hebrew": ("Noto Sans Hebrew", NOTO / "NotoSansHebrew-Regular.ttf", NOTO / "NotoSansHebrew-Bold.ttf", 0),
    # the mathematical operators Noto Sans lacks (the Calculator's √ and − sign), as Android falls back to Noto Sans Math
    "math": ("Noto Sans Math", NOTO / "NotoSansMath-Regular.ttf", NOTO / "NotoSansMath-Regular.ttf", 0),
    # Noto Sans CJK collections hold the faces JP, KR, SC, TC, HK in this order.
    "cjk-jp": ("Noto Sans CJK JP", NOTO_CJK / "NotoSansCJK-Regular.ttc", NOTO_CJK / "NotoSansCJK-Bold.ttc", 0),
    "cjk-kr": ("Noto Sans CJK KR", NOTO_CJK / "NotoSansCJK-Regular.ttc", NOTO_CJK / "NotoSansCJK-Bold.ttc", 1),
    "cjk-sc": ("Noto Sans CJK SC", NOTO_CJK / "NotoSansCJK-Regular.ttc", NOTO_CJK / "NotoSansCJK-Bold.ttc", 2),
}
SHAPED = {"arabic", "urdu", "devanagari", "bengali", "thai", "hebrew"}  # scripts that need raqm's shaping
RTL_SCRIPTS = {"arabic", "urdu", "hebrew"}
ELLIPSIS = "…"


def char_script(ch: str, cjk: str, arabic: str) -> str | None:
    """The font family for one character, or None for neutral characters (spaces, digits, punctuation) that take
    the script of their neighbours. ``cjk``/``arabic`` pick the locale's CJK face and Arabic-script style."""
    o = ord(ch)
    if ch.isspace() or (o < 0x80 and not ch.isalpha()) or 0x2000 <= o <= 0x206F:
        return None
    if 0x0600 <= o <= 0x06FF or 0x0750 <= o <= 0x077F or 0xFB50 <= o <= 0xFDFF or 0xFE70 <= o <= 0xFEFF:
        return arabic
    if 0x0900 <= o <= 0x097F:
        return "devanagari"
    if 0x0980 <= o <= 0x09FF:
        return "bengali"
    if 0x0E00 <= o <= 0x0E7F:
        return "thai"
    if 0x0590 <= o <= 0x05FF or 0xFB1D <= o <= 0xFB4F:
        return "hebrew"
    if 0x2200 <= o <= 0x22FF:
        return "math"
    if (0x1100 <= o <= 0x11FF or 0x2E80 <= o <= 0x9FFF or 0xAC00 <= o <= 0xD7AF or 0xF900 <= o <= 0xFAFF
            or 0xFF00 <= o <= 0xFFEF or 0x3000 <= o <= 0x303F):
        return cjk
    return "latin"


@lru_cache(maxsize=None)
def font_file(script: str, bold: bool = False) -> tuple[Path, int] | None:
    """(file, face index) of ``script``'s font (its regular face where there is no bold one), or None."""
    family, regular, bold_file, index = FONTS[script]
    for path in ((bold_file, regular) if bold else (regular,)):
        if path.exists():
            return path, index
    for style in (("Bold", "Regular") if bold else ("Regular",)):
        found = _fontconfig(family, style)
        if found is not None:
            return found
    return None


def _fontconfig(family: str, style: str) -> tuple[Path, int] | None:
    """What fontconfig has for ``family`` in ``style``; None when it would only offer a substitute."""
    try:
        out = subprocess.run(["fc-match", "--format", "%{file}\n%{index}\n%{family}\n%{style}", f"{family}:style={style}"],
                             capture_output=True, text=True, timeout=10, check=True).stdout.split("\n")
    except (OSError, subprocess.SubprocessError):
        return None
    if len(out) < 4 or family not in out[2].split(",") or style not in out[3].split(","):
        return None
    return Path(out[0]), int(out[1] or 0)


@lru_cache(maxsize=512)
def font(script: str, size: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    """The font for ``script`` at ``size`` pixels."""
    found = font_file(script, bold)
    if found is None:
        raise VluiError(f"no {FONTS[script][0]} font: install Noto fonts (Debian's fonts-noto-core and "
                        "fonts-noto-cjk; bash scripts/setup.sh does)")
    engine = ImageFont.Layout.RAQM if script in SHAPED else ImageFont.Layout.BASIC
    return ImageFont.truetype(str(found[0]), size=max(size, 1), index=found[1], layout_engine=engine)


@lru_cache(maxsize=None)
def coverage(script: str) -> frozenset[int]:
    """The code points ``script``'s regular font has glyphs for (Noto Sans Arabic, for one, lacks ``%()…``)."""
    from fontTools.ttLib import TTFont  # a dependency of matplotlib

    found = font_file(script)
    if found is None:
        return frozenset()
    with TTFont(str(found[0]), fontNumber=found[1], lazy=True) as f:
        return frozenset(f.getBestCmap())


FALLBACK = "latin"  # Noto Sans has every neutral character the other fonts lack


def split_runs(text: str, cjk: str = "cjk-sc", arabic: str = "arabic") -> list[tuple[str, str]]:
    """Split ``text`` into ``(script, substring)`` runs; neutral characters join the run before them (those before
    the first strong character, the run after them). Where that run's font lacks a neutral character, it falls back
    to a Noto Sans run, as Android falls back from font to font, taking the digits right before it along ("23%");
    the neutral characters after it go back to the surrounding script's run."""
    runs: list[list[str]] = []
    pending = ""  # neutral characters before the first strong one
    context = FALLBACK  # the script of the last strong character
    in_fallback = False  # whether runs[-1] is a fallback run of neutral characters
    for ch in text:
        script = char_script(ch, cjk, arabic)
        if script is None:
            covered = context == FALLBACK or ord(ch) in coverage(context)
            if not runs:
                pending += ch
            elif in_fallback:
                if covered and not ch.isdigit():
                    runs.append([context, ch])
                    in_fallback = False
                else:
                    runs[-1][1] += ch
            elif covered:
                runs[-1][1] += ch
            else:
                head = runs[-1][1]
                digits = head[len(head.rstrip("0123456789")):]
                runs[-1][1] = head[:len(head) - len(digits)]
                if not runs[-1][1]:
                    runs.pop()
                runs.append([FALLBACK, digits + ch])
                in_fallback = True
        elif runs and runs[-1][0] == script:
            runs[-1][1] += ch
            context, in_fallback = script, False
        else:
            if pending:
                cover = coverage(script)
                cut = max((i + 1 for i, c in enumerate(pending) if ord(c) not in cover), default=0)
                if cut:
                    runs.append([FALLBACK, pending[:cut]])
                    pending = pending[cut:]
            if runs and runs[-1][0] == script:
                runs[-1][1] += pending + ch
            else:
                runs.append([script, pending + ch])
            pending = ""
            context, in_fallback = script, False
    if pending:
        runs.append(["latin", pending])
    return [(s, t) for s, t in runs]


@dataclass(frozen=True)
class Line:
    """A laid-out single line: runs with their x offsets from the line's left edge, total width, and height."""

    runs: tuple[tuple[str, str, int], ...]  # (script, text, x offset)
    width: int
    ascent: int
    descent: int
    bold: bool
    size: int


# Text longer than this is cut before it is laid out (see _clip), so that drawing a long string costs what the screen
# shows of it, never its length: a client can type megabytes into a field. Shorter text is laid out whole, as before.
LONG_TEXT = 512
MAX_LINE_CHARS = 8192  # the most characters one line shows, whatever its width (a 4K screen at half a pixel each)


def _clip(text: str, size: int, bold: bool, max_width: int, cjk: str, arabic: str) -> str:
    """The shortest prefix of ``text`` of 64 characters times a power of two that lays out wider than ``max_width``
    (or MAX_LINE_CHARS long): what an ellipsized line of ``text`` can show lies inside it, and laying it out costs a
    few times the characters that fit."""
    k = 64
    while k < min(len(text), MAX_LINE_CHARS) and _layout(text[:k], size, bold, cjk, arabic).width <= max_width:
        k *= 2
    return text[:min(k, MAX_LINE_CHARS)]


@lru_cache(maxsize=8192)
def layout(text: str, size: int, bold: bool = False, max_width: int = 1 << 30, cjk: str = "cjk-sc",
           arabic: str = "arabic") -> Line:
    """Lay out ``text`` on one line at ``size`` px, ellipsized to ``max_width``. Runs of right-to-left scripts
    make the line right-to-left: its runs are placed from the right. Of a text over LONG_TEXT characters only what
    can show is laid out (:func:`_clip`)."""
    if len(text) > LONG_TEXT:
        text = _clip(text, size, bold, max_width, cjk, arabic)
    line = _layout(text, size, bold, cjk, arabic)
    if line.width <= max_width or len(text) <= 1:
        return line
    lo, hi = 0, len(text)  # longest prefix that fits with an ellipsis
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _layout(text[:mid].rstrip() + ELLIPSIS, size, bold, cjk, arabic).width <= max_width:
            lo = mid
        else:
            hi = mid - 1
    return _layout(text[:lo].rstrip() + ELLIPSIS, size, bold, cjk, arabic)


def _layout(text: str, size: int, bold: bool, cjk: str, arabic: str) -> Line:
    runs = split_runs(text, cjk, arabic)
    widths, ascent, descent = [], 0, 0
    for script, chunk in runs:
        f = font(script, size, bold)
        widths.append(int(round(f.getlength(chunk))))
        a, d = f.getmetrics()
        ascent, descent = max(ascent, a), max(descent, d)
    rtl = any(script in RTL_SCRIPTS for script, _ in runs)
    order = list(range(len(runs)))[::-1] if rtl else list(range(len(runs)))
    placed, x = [], 0
    for i in order:
        placed.append((runs[i][0], runs[i][1], x))
        x += widths[i]
    return Line(tuple(placed), x, ascent, descent, bold, size)


@lru_cache(maxsize=32768)
def mask(script: str, chunk: str, size: int, bold: bool) -> tuple[Image.Image | None, int, int]:
    """``chunk`` rasterised once as an 8-bit coverage mask, with its offset from the baseline origin. Drawing a
    label is then a masked paste of its colour: labels repeat from frame to frame, rasterising them does not."""
    f = font(script, size, bold)
    x0, y0, x1, y1 = f.getbbox(chunk, anchor="ls")
    if x1 <= x0 or y1 <= y0:
        return None, 0, 0
    im = Image.new("L", (x1 - x0, y1 - y0), 0)
    ImageDraw.Draw(im).text((-x0, -y0), chunk, fill=255, font=f, anchor="ls")
    return im, x0, y0


def wrap(text: str, size: int, max_width: int, cjk: str = "cjk-sc", arabic: str = "arabic",
         bold: bool = False) -> list[str]:
    """``text`` broken into lines no wider than ``max_width``: at spaces, and inside a word too long for a line (or
    in scripts written without spaces: Chinese, Japanese, Thai) between characters, never before a combining mark."""
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if (layout(candidate, size, bold, cjk=cjk, arabic=arabic).width <= max_width if len(word) <= LONG_WORD
                else _fitting(candidate, size, bold, max_width, cjk, arabic) == len(candidate)):
            line = candidate
            continue
        if line:
            lines.append(line)
            line = ""
        hint, long_word = 0, len(word) > LONG_WORD
        while (cut := _fitting(word, size, bold, max_width, cjk, arabic, hint)) < len(word):
            while cut > 1 and (unicodedata.combining(word[cut]) or unicodedata.category(word[cut])[0] == "M"):
                cut -= 1  # a mark belongs with the letter before it
            lines.append(word[:cut])
            word, hint = word[cut:], cut if long_word else 0
        line = word
    return lines + ([line] if line else [])


LONG_WORD = 256  # a word longer than this is cut by bisection (see _fitting)


def _fitting(word: str, size: int, bold: bool, max_width: int, cjk: str, arabic: str, hint: int = 0) -> int:
    """How many of ``word``'s characters fit on a line of ``max_width`` (at least one; all of them if it fits). A
    word of LONG_WORD characters or fewer is measured as it always was, the longest prefix that fits found by
    taking a character off at a time; a longer one (a client's megabyte of digits) by doubling then bisection, in
    a few times what fits, not the square of its length. ``hint``: what fitted on the line before, for the rest of
    a long word (its next line takes as many characters, most often: two layouts confirm it)."""
    def fits(k: int) -> bool:
        return layout(word[:k], size, bold, cjk=cjk, arabic=arabic).width <= max_width

    if 0 < hint < len(word) and fits(hint) and not fits(hint + 1):
        return hint

    if len(word) <= LONG_WORD:
        if fits(len(word)):
            return len(word)
        cut = len(word)
        while cut > 1 and not fits(cut):
            cut -= 1
        return cut
    hi = 2
    while hi < len(word) and fits(hi):
        hi *= 2
    if hi >= len(word) and fits(len(word)):
        return len(word)
    lo, hi = 1, min(hi, len(word))  # fits(lo) (or lo is 1), not fits(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def is_rtl_text(text: str) -> bool:
    return any(0x0590 <= ord(ch) <= 0x08FF for ch in text)
