"""Calculator (Google's, com.google.android.calculator 8.6: B-MoCA release 2.5's third-party app): one screen, the
display over the pads.

On a phone in portrait the display (the formula, the live result ``result_preview`` under it, and after "=" the
result ``result_final``) sits over a row of scientific keys (√ π ^ !) with an arrow (``collapse_expand``) that opens
two more rows (the angle mode, sin cos tan; INV, e ln log), over the numeric pad (AC, the parentheses key, %, ÷;
7 8 9 ×; 4 5 6 −; 1 2 3 +; 0 . ⌫ =). A screen at least 600 dp wide (a tablet, a landscape tablet) shows the
scientific keys always, beside the numeric pad. Keys are ImageButtons named by their content description ("plus",
"equals", "clear", the digit itself), as version 8.6 shows them; the pads are never mirrored and the formula reads left
to right in every locale (digits stay 0-9, only the decimal point is the language's, as AOSP's ExactCalculator
translates it).

The formula's text is what :mod:`vlui.android.calculator` says (a function as one letter: "c180" for "cos(180");
the screen draws the names). The result is computed in double precision and shown rounded to what fits (at most
15 significant digits); angles start in radians, as ExactCalculator's do. The app keeps its formula, result, angle
mode and open pad in :class:`CalculatorState` as long as the phone runs (the real app saves them across restarts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, TypedDict, get_args

from vlui.android.calculator import DIGITS, FORMULA_TEXT, FUNCTION_NAMES, PACKAGE
from vlui.sim.protocol import Phone
from vlui.sim.ui import Node
from vlui.sim.widgets import Ctx

PKG = PACKAGE
ScreenName = Literal["main"]
SCREENS: tuple[str, ...] = get_args(ScreenName)

BINARY = ("op_add", "op_sub", "op_mul", "op_div", "op_pow")
POSTFIX = ("op_fact", "op_pct", "op_sqr")
OPENING = ("lparen", "op_sqrt", *FUNCTION_NAMES)  # a key after which an operand must come
FUNCTIONS = tuple(FUNCTION_NAMES)
INVERSE = {"fun_sin": "fun_arcsin", "fun_cos": "fun_arccos", "fun_tan": "fun_arctan", "fun_ln": "fun_exp",
           "op_sqrt": "op_sqr"}
# each key's content description (calculator.<name>; a digit's is the digit)
DESC = {"op_add": "plus", "op_sub": "minus", "op_mul": "multiply", "op_div": "divide", "op_pct": "percent",
        "op_fact": "factorial", "op_sqrt": "square_root", "op_sqr": "squared", "op_pow": "power", "const_pi": "pi",
        "const_e": "euler", "fun_sin": "sine", "fun_cos": "cosine", "fun_tan": "tangent", "fun_arcsin": "arcsine",
        "fun_arccos": "arccosine", "fun_arctan": "arctangent", "fun_ln": "ln", "fun_log": "log", "fun_exp": "exp",
        "fun_10pow": "ten_pow", "dec_point": "point", "parens": "parens", "clr": "clear", "del": "delete",
        "eq": "equals"}
# what a key's face shows, where it is not what it writes
FACE = {"op_pct": "%", "op_sqr": "x\u00b2", "fun_sin": "sin", "fun_cos": "cos", "fun_tan": "tan",
        "fun_arcsin": "sin\u207b\u00b9", "fun_arccos": "cos\u207b\u00b9", "fun_arctan": "tan\u207b\u00b9", "fun_ln": "ln",
        "fun_log": "log", "fun_exp": "e\u02e3", "fun_10pow": "10\u02e3", "parens": "( )", "clr": "AC", "eq": "="}
NUMERIC_ROWS = (("clr", "parens", "op_pct", "op_div"), ("digit_7", "digit_8", "digit_9", "op_mul"),
                ("digit_4", "digit_5", "digit_6", "op_sub"), ("digit_1", "digit_2", "digit_3", "op_add"),
                ("digit_0", "dec_point", "del", "eq"))
SCIENCE_ROWS = (("op_sqrt", "const_pi", "op_pow", "op_fact"), ("toggle_mode", "fun_sin", "fun_cos", "fun_tan"),
                ("toggle_inv", "const_e", "fun_ln", "fun_log"))
MAX_DIGITS = 15  # significant digits a double holds
# Material You's default (blue) tones of version 8's keys: digits, operators, AC, "="; light and dark
KEY_COLORS = {False: {"digit": (232, 237, 247), "op": (211, 227, 253), "clr": (255, 218, 214), "eq": (11, 87, 208),
                      "face": (31, 31, 31), "on_eq": (255, 255, 255), "op_face": (4, 30, 73), "clr_face": (65, 0, 2)},
              True: {"digit": (45, 47, 53), "op": (4, 62, 124), "clr": (140, 29, 24), "eq": (168, 199, 250),
                     "face": (227, 227, 227), "on_eq": (6, 46, 111), "op_face": (211, 227, 253),
                     "clr_face": (255, 218, 214)}}


class Screen(TypedDict):
    screen: ScreenName


@dataclass
class CalculatorState:
    """What the Calculator remembers: the formula's keys in order (resource ids, :data:`FORMULA_TEXT`'s), whether
    "=" has shown its result, the angle mode, the inverse functions' toggle and whether the scientific rows are
    open."""

    keys: list[str] = field(default_factory=list)
    done: bool = False
    degrees: bool = False
    inverse: bool = False
    expanded: bool = False


def calculator_state(dev: Phone) -> CalculatorState:
    return dev.state.app("calculator", CalculatorState)


# --------------------------------------------------------------------------------------------------- the formula
def formula_text(keys: list[str], point: str) -> str:
    """The formula's text as UI automation reads it (a function as its letter)."""
    return "".join(point if k == "dec_point" else FORMULA_TEXT[k] for k in keys)


def formula_shown(keys: list[str], point: str) -> str:
    """The formula as the screen draws it (a function by its name)."""
    return "".join(FUNCTION_NAMES.get(k) or (point if k == "dec_point" else FORMULA_TEXT[k]) for k in keys)


def _open_count(keys: list[str]) -> int:
    return sum(k in ("lparen", *FUNCTIONS) for k in keys) - keys.count("rparen")


def _ends_value(keys: list[str]) -> bool:
    """Whether the formula ends with something a binary operator may follow."""
    return bool(keys) and (keys[-1] in DIGITS or keys[-1] in ("dec_point", "rparen", "const_pi", "const_e")
                           or keys[-1] in POSTFIX)


def press(calc: CalculatorState, key: str) -> None:
    """A key of the pads (a resource id) edits the formula as the app does."""
    if key == "clr":
        calc.keys, calc.done = [], False
        return
    if key == "eq":
        calc.done = bool(calc.keys)
        return
    if calc.done:
        calc.done = False
        if key == "del":
            calc.keys = []
            return
        result = evaluate(calc.keys, calc.degrees)
        if key in BINARY or key in POSTFIX:  # go on from the result
            calc.keys = _result_keys(result) if isinstance(result, float) else calc.keys
        else:
            calc.keys = []
    keys = calc.keys
    last = keys[-1] if keys else None
    if key == "del":
        if keys:
            keys.pop()
    elif key in DIGITS:
        keys.append(key)
    elif key == "dec_point":
        number = []
        for k in reversed(keys):
            if k not in DIGITS and k != "dec_point":
                break
            number.append(k)
        if "dec_point" not in number:
            keys.append(key)
    elif key == "op_sub":
        if last == "op_add":
            keys[-1] = key
        elif last != "op_sub":
            keys.append(key)
    elif key in BINARY:
        if last in BINARY:
            if _ends_value(keys[:-1]):  # another operator takes its place
                keys[-1] = key
        elif _ends_value(keys):
            keys.append(key)
    elif key in POSTFIX:
        if _ends_value(keys):
            keys.append(key)
    elif key == "parens":
        if not _ends_value(keys):
            keys.append("lparen")
        elif _open_count(keys) > 0:
            keys.append("rparen")
        else:
            keys += ["op_mul", "lparen"]
    elif key == "fun_10pow":
        keys += ["digit_1", "digit_0", "op_pow"]
    else:  # a function, √, π, e, a parenthesis
        keys.append(key)


def _result_keys(value: float) -> list[str]:
    text = _plain(value)
    if "e" in text:
        return []
    out = []
    for ch in text:
        out.append("op_sub" if ch == "-" else "dec_point" if ch == "." else f"digit_{ch}")
    return out


# ------------------------------------------------------------------------------------------------- evaluation
class _Error(Exception):
    """The formula has no value: ``kind`` is the error's string (calculator.error_<kind>)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


class _Parser:
    """The formula's keys as an expression: + and − below × and ÷ (a value next to another multiplies), − before a
    value, ^ (right to left), then !, % and ² after a value, √ and the functions before one; parentheses left open
    close at the end, as the app closes them to show a result."""

    def __init__(self, keys: list[str], degrees: bool) -> None:
        self.keys, self.i, self.degrees = keys, 0, degrees

    def peek(self) -> str | None:
        return self.keys[self.i] if self.i < len(self.keys) else None

    def take(self) -> str:
        self.i += 1
        return self.keys[self.i - 1]

    def parse(self) -> float:
        value = self.sum()
        while self.peek() == "rparen":  # a ")" with no "(" is dropped, as the app never writes one
            self.take()
        if self.peek() is not None:
            raise _Error("syntax")
        return value

    def sum(self) -> float:
        value = self.product()
        while self.peek() in ("op_add", "op_sub"):
            op = self.take()
            right = self.product()
            value = value + right if op == "op_add" else value - right
        return value

    def product(self) -> float:
        value = self.signed()
        while True:
            op = self.peek()
            if op in ("op_mul", "op_div"):
                self.take()
                right = self.signed()
                if op == "op_div":
                    if right == 0:
                        raise _Error("zero")
                    value /= right
                else:
                    value *= right
            elif op is not None and (op in DIGITS or op in ("dec_point", "const_pi", "const_e", "lparen", "op_sqrt")
                                     or op in FUNCTIONS):
                value *= self.signed()
            else:
                return value

    def signed(self) -> float:
        if self.peek() == "op_sub":
            self.take()
            return -self.signed()
        return self.power()

    def power(self) -> float:
        base = self.postfix()
        if self.peek() == "op_pow":
            self.take()
            exponent = self.signed()
            try:
                value = math.pow(base, exponent)
            except (ValueError, OverflowError):
                raise _Error("nan") from None
            return value
        return base

    def postfix(self) -> float:
        value = self.primary()
        while self.peek() in POSTFIX:
            op = self.take()
            if op == "op_pct":
                value /= 100
            elif op == "op_sqr":
                value *= value
            else:
                if value < 0 or value != int(value) or value > 170:
                    raise _Error("nan")
                value = float(math.factorial(int(value)))
        return value

    def primary(self) -> float:
        key = self.peek()
        if key is None:
            raise _Error("syntax")
        if key in DIGITS or key == "dec_point":
            text = ""
            while self.peek() is not None and (self.peek() in DIGITS or self.peek() == "dec_point"):
                k = self.take()
                text += "." if k == "dec_point" else k[-1]
            if text == ".":
                raise _Error("syntax")
            return float(text)
        self.take()
        if key == "const_pi":
            return math.pi
        if key == "const_e":
            return math.e
        if key == "op_sqrt":
            negative = self.peek() == "op_sub"
            if negative:
                self.take()
            value = -self.postfix() if negative else self.postfix()
            if value < 0:
                raise _Error("nan")
            return math.sqrt(value)
        if key == "lparen" or key in FUNCTIONS:
            value = self.sum()
            if self.peek() == "rparen":
                self.take()
            elif self.peek() is not None:
                raise _Error("syntax")
            return value if key == "lparen" else self.function(key, value)
        raise _Error("syntax")

    def function(self, key: str, x: float) -> float:
        turn = math.pi / 180 if self.degrees else 1.0
        try:
            if key in ("fun_sin", "fun_cos", "fun_tan"):
                angle = x * turn
                if self.degrees and key != "fun_tan" and x % 90 == 0:  # exact at right angles, as the app is
                    quarter = int(x // 90) % 4
                    table = {"fun_sin": (0.0, 1.0, 0.0, -1.0), "fun_cos": (1.0, 0.0, -1.0, 0.0)}
                    return table[key][quarter]
                if key == "fun_tan" and self.degrees and x % 180 == 90:
                    raise _Error("nan")
                return {"fun_sin": math.sin, "fun_cos": math.cos, "fun_tan": math.tan}[key](angle)
            if key in ("fun_arcsin", "fun_arccos", "fun_arctan"):
                return {"fun_arcsin": math.asin, "fun_arccos": math.acos, "fun_arctan": math.atan}[key](x) / turn
            if key == "fun_ln":
                return math.log(x)
            if key == "fun_log":
                return math.log10(x)
            return math.exp(x)
        except (ValueError, OverflowError):
            raise _Error("nan") from None


def evaluate(keys: list[str], degrees: bool) -> float | str:
    """The formula's value, or the kind of error it has (``"zero"``, ``"nan"``, ``"syntax"``)."""
    try:
        value = _Parser(keys, degrees).parse()
    except _Error as e:
        return e.kind
    if math.isnan(value) or math.isinf(value):
        return "nan"
    return value


def preview(keys: list[str], degrees: bool) -> float | None:
    """The live result under the formula: shown once the formula is more than a number, from its keys up to a
    trailing operator; none where that has no value."""
    end = len(keys)
    while end and (keys[end - 1] in BINARY or keys[end - 1] in OPENING):
        end -= 1
    if all(k in DIGITS or k == "dec_point" for k in keys[:end]):
        return None
    value = evaluate(keys[:end], degrees)
    return value if isinstance(value, float) else None


def _plain(value: float, digits: int = MAX_DIGITS) -> str:
    """``value`` with at most ``digits`` significant digits, trailing zeros dropped; "e" for a power of ten where
    the number is too long to show (-1.5e20)."""
    if value == 0:
        return "0"
    if value == int(value) and abs(value) < 10 ** digits:
        return str(int(value))
    exponent = math.floor(math.log10(abs(value)))
    if -5 <= exponent < digits:
        places = max(0, digits - 1 - exponent)
        text = f"{value:.{places}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return text
    mantissa = f"{value:.{max(0, digits - 6)}e}"
    head, _, power = mantissa.partition("e")
    if "." in head:
        head = head.rstrip("0").rstrip(".")
    return f"{head}e{int(power)}"


def number_text(value: float, point: str, room: int) -> str:
    """A result as the app writes it, in at most ``room`` characters: the unicode minus, the language's decimal
    point, E for a power of ten."""
    digits = MAX_DIGITS
    text = _plain(value, digits)
    while len(text) > room and digits > 1:
        digits -= 1
        text = _plain(value, digits)
    return text.replace("-", "\u2212").replace(".", point).replace("e", "E")


# ------------------------------------------------------------------------------------------------------ screen
def build(dev: Phone, ctx: Ctx, screen: Screen) -> Node:
    calc = calculator_state(dev)
    top, bottom, width = ctx.top, ctx.bottom, ctx.width
    root = Node(cls="android.widget.FrameLayout", bounds=(0, top, width, bottom), package=PKG,
                rid=f"{PKG}:id/main_calculator", bg=ctx.theme.background)
    wide = width >= ctx.dp(600)
    side = ctx.dp(12)
    pad_w = int((width - 3 * side) * 0.56) if wide else width - 2 * side
    key_w = pad_w // 4
    height = bottom - top
    science_rows = 0 if wide else (3 if calc.expanded else 1)
    # the keys take what the display leaves: at least a quarter of the screen stays the display's
    row_h = min(int(key_w * 0.86), int(height * 0.66 / (5 + 0.62 * science_rows)))
    sci_h = int(row_h * 0.62)
    pad_top = bottom - side - 5 * row_h
    sci_top = pad_top - science_rows * sci_h
    display_bottom = sci_top if not wide else pad_top - side
    root.add(_display(ctx, calc, (side, top, width - side, display_bottom)))
    if wide:
        sci_w = width - 3 * side - pad_w
        root.add(_science(ctx, calc, (side, pad_top, side + sci_w, pad_top + 5 * row_h), 3, arrow=False))
        x0 = width - side - pad_w
    else:
        root.add(_science(ctx, calc, (side, sci_top, width - side, pad_top), science_rows, arrow=True))
        x0 = side
    root.add(_numeric(ctx, calc, (x0, pad_top, x0 + pad_w, pad_top + 5 * row_h)))
    for node in root.walk():  # the pads and the formula keep their left-to-right order in every language
        node.mirror = False
    return root


def _fit(ctx: Ctx, shown: str, room: int, largest: int, smallest: int, line: int) -> tuple[int, str]:
    """The text size (px) that fits ``shown`` in ``room`` px and a ``line`` px high, from ``largest`` sp down to
    ``smallest`` sp; past that, the end of the text, as the display scrolls to it."""
    for sp in range(largest, smallest - 1, -2):
        if len(shown) * ctx.sp(sp) * 0.56 <= room and ctx.sp(sp) <= line * 0.8:
            return ctx.sp(sp), shown
    size = min(ctx.sp(smallest), int(line * 0.8))
    keep = max(1, int(room / (size * 0.56)))
    return size, shown[-keep:]


def _display(ctx: Ctx, calc: CalculatorState, box) -> Node:
    x1, y1, x2, y2 = box
    t, point = ctx.t, ctx.t("calculator.dec_point")
    display = Node(cls="android.widget.LinearLayout", bounds=box, package=PKG, rid=f"{PKG}:id/display")
    mode = t("calculator.mode_deg" if calc.degrees else "calculator.mode_rad").upper()
    display.add(Node(cls="android.widget.TextView", bounds=(x1 + ctx.dp(8), y1 + ctx.dp(8), x1 + ctx.dp(120),
                     y1 + ctx.dp(32)), package=PKG, rid=f"{PKG}:id/mode", text=mode, size=ctx.sp(14),
                     fg=ctx.theme.secondary, desc=t("calculator.degree_mode" if calc.degrees
                                                    else "calculator.radian_mode")))
    room = x2 - x1 - ctx.dp(16)
    line = min(ctx.dp(72), (y2 - y1 - ctx.dp(36)) // 2)  # under the mode, the formula's line and the result's
    result_y2 = y2 - ctx.dp(4)
    result_y1 = result_y2 - line
    formula_y1, formula_y2 = result_y1 - line, result_y1
    shown = formula_shown(calc.keys, point)
    big, small = 44, 28
    value = evaluate(calc.keys, calc.degrees) if calc.done else None
    size, visible = _fit(ctx, shown, room, small if calc.done else big, 14, line)
    formula = Node(cls="android.widget.TextView", bounds=(x1, formula_y1, x2, formula_y2), package=PKG,
                   rid=f"{PKG}:id/formula", text=formula_text(calc.keys, point), focusable=True,
                   long_clickable=True, on_long_press=lambda x, y: None)
    formula.add(Node(bounds=(x1, formula_y1, x2 - ctx.dp(8), formula_y2), text=visible, size=size,
                     fg=ctx.theme.secondary if calc.done else ctx.theme.on_surface, align="end", visual=True))
    display.add(formula)
    room_chars = max(1, int(room / (ctx.sp(small) * 0.56)))
    if calc.done:
        if isinstance(value, float):
            result = number_text(value, point, max(1, int(room / (ctx.sp(big) * 0.56))))
            size, color = _fit(ctx, result, room, big, 14, line)[0], ctx.theme.on_surface
        else:
            result = t(f"calculator.error_{value}")
            size, color = _fit(ctx, result, room, small, 12, line)[0], (179, 38, 30)
        display.add(Node(cls="android.widget.TextView", bounds=(x1, result_y1, x2, result_y2), package=PKG,
                         rid=f"{PKG}:id/result_final", text=result, size=size, fg=color, align="end",
                         long_clickable=True, on_long_press=lambda x, y: None))
    else:
        value = preview(calc.keys, calc.degrees)
        result = number_text(value, point, room_chars) if value is not None else ""
        display.add(Node(cls="android.widget.TextView", bounds=(x1, result_y1, x2, result_y2), package=PKG,
                         rid=f"{PKG}:id/result_preview", text=result, size=min(ctx.sp(small), int(line * 0.8)), fg=ctx.theme.secondary,
                         align="end", long_clickable=True, on_long_press=lambda x, y: None))
    return display


def _key(ctx: Ctx, calc: CalculatorState, key: str, box, tone: str | None) -> Node:
    """One key: an ImageButton named by its content description, its face drawn on it."""
    colors = KEY_COLORS[ctx.theme.dark]
    x1, y1, x2, y2 = box

    def tap(x: int, y: int) -> None:
        if key == "collapse_expand":
            calc.expanded = not calc.expanded
        elif key == "toggle_mode":
            calc.degrees = not calc.degrees
        elif key == "toggle_inv":
            calc.inverse = not calc.inverse
        else:
            press(calc, key)

    t = ctx.t
    if key in DIGITS:
        desc, face = key[-1], key[-1]
    elif key == "dec_point":
        desc, face = t("calculator.point"), t("calculator.dec_point")
    elif key == "toggle_mode":
        desc = t("calculator.switch_rad" if calc.degrees else "calculator.switch_deg")
        face = t("calculator.mode_rad" if calc.degrees else "calculator.mode_deg").upper()
    elif key == "toggle_inv":
        desc, face = t("calculator.inv_on" if calc.inverse else "calculator.inv_off"), "INV"
    elif key == "collapse_expand":
        desc, face = t("calculator.collapse" if calc.expanded else "calculator.expand"), ""
    else:
        desc, face = t(f"calculator.{DESC[key]}"), FACE.get(key, FORMULA_TEXT.get(key, ""))
    node = Node(cls="android.widget.ImageButton", bounds=box, package=PKG, rid=f"{PKG}:id/{key}", desc=desc,
                on_tap=tap, selected=key == "toggle_inv" and calc.inverse)
    inset = ctx.dp(3)
    if tone is not None:
        node.add(Node(bounds=(x1 + inset, y1 + inset, x2 - inset, y2 - inset), bg=colors[tone],
                      radius=min(x2 - x1, y2 - y1) // 2 - inset, visual=True))
    fg = colors["on_eq"] if tone == "eq" else colors["op_face"] if tone == "op" else \
        colors["clr_face"] if tone == "clr" else colors["face"]
    if key == "del":
        g = min(ctx.dp(28), (y2 - y1) // 2)
        cx, cy = (x1 + x2) // 2, (y1 + y2) // 2
        node.add(Node(bounds=(cx - g // 2, cy - g // 2, cx + g // 2, cy + g // 2), icon="glyph:delete_digit",
                      icon_color=fg, visual=True))
    elif key == "collapse_expand":
        g = min(ctx.dp(24), (y2 - y1) * 2 // 3)
        cx, cy = (x1 + x2) // 2, (y1 + y2) // 2
        node.add(Node(bounds=(cx - g // 2, cy - g // 2, cx + g // 2, cy + g // 2),
                      icon="glyph:expand_less" if calc.expanded else "glyph:expand_more",
                      icon_color=ctx.theme.on_surface, visual=True))
    else:
        size = ctx.sp(30) if tone is not None else ctx.sp(20)
        size = min(size, int((y2 - y1) * 0.55), int((x2 - x1) / max(2, len(face)) * 1.4))
        node.add(Node(bounds=box, text=face, size=size, fg=fg, align="center", visual=True))
    return node


def _science(ctx: Ctx, calc: CalculatorState, box, rows: int, arrow: bool) -> Node:
    x1, y1, x2, y2 = box
    pad = Node(cls="android.view.ViewGroup", bounds=box, package=PKG, rid=f"{PKG}:id/pad_advanced")
    if rows == 0:
        return pad
    cols_w = (x2 - x1 - (ctx.dp(48) if arrow else 0)) / 4
    row_h = (y2 - y1) / rows
    for r, row in enumerate(SCIENCE_ROWS[:rows]):
        for c, key in enumerate(row):
            if calc.inverse and key in INVERSE:
                key = INVERSE[key]
            elif calc.inverse and key == "fun_log":
                key = "fun_10pow"
            b = (int(x1 + c * cols_w), int(y1 + r * row_h), int(x1 + (c + 1) * cols_w), int(y1 + (r + 1) * row_h))
            pad.add(_key(ctx, calc, key, b, None))
    if arrow:
        pad.add(_key(ctx, calc, "collapse_expand", (x2 - ctx.dp(48), y1, x2, int(y1 + row_h)), None))
    return pad


def _numeric(ctx: Ctx, calc: CalculatorState, box) -> Node:
    x1, y1, x2, y2 = box
    pad = Node(cls="android.view.ViewGroup", bounds=box, package=PKG, rid=f"{PKG}:id/pad_numeric")
    w, h = (x2 - x1) / 4, (y2 - y1) / 5
    for r, row in enumerate(NUMERIC_ROWS):
        for c, key in enumerate(row):
            tone = "clr" if key == "clr" else "eq" if key == "eq" else "op" if c == 3 or r == 0 else "digit"
            b = (int(x1 + c * w), int(y1 + r * h), int(x1 + (c + 1) * w), int(y1 + (r + 1) * h))
            pad.add(_key(ctx, calc, key, b, tone))
    return pad
