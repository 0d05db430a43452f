"""Google's Calculator (com.google.android.calculator 8.6, B-MoCA release 2.5's) as UI automation sees it: its keys'
resource ids and what each key writes into the text of its formula (``com.google.android.calculator:id/formula``),
which B-MoCA's evaluators compare. The simulated app (:mod:`vlui.sim.apps.calculator`) draws and edits its formula
from this table; the expert (:mod:`vlui.agents.expert`) reads its progress in a formula from it.

A function key writes one letter into the formula's text, not the name the screen shows: the screen shows "cos(180"
and the text reads "c180" (B-MoCA's ``cos180.py`` expects ``c180``, ``log_1234.py`` ``l1234`` for "ln(1234"). The app
keeps a function as one character under a span that draws its name, as AOSP's ExactCalculator keeps it as one byte
(KeyMaps.toByte: s c t, S C T for the inverse functions, l for ln, L for log, E for exp); B-MoCA's evaluators show
c and l, the other letters are ExactCalculator's. Every key writes exactly one character, so a formula's text is
as long as the keys that made it.
"""

from __future__ import annotations

PACKAGE = "com.google.android.calculator"
ACTIVITY = "com.android.calculator2.Calculator"

DIGITS = tuple(f"digit_{d}" for d in range(10))
# the key's resource id (com.google.android.calculator:id/<key>) -> the character it writes into the formula's text;
# the decimal point writes the locale's (calculator.dec_point), the parentheses key "(" or ")" as the formula needs
FORMULA_TEXT = {
    **{f"digit_{d}": str(d) for d in range(10)},
    "op_add": "+", "op_sub": "\u2212", "op_mul": "\u00d7", "op_div": "\u00f7", "op_pct": "%", "op_fact": "!",
    "op_sqrt": "\u221a", "op_sqr": "\u00b2", "op_pow": "^", "const_pi": "\u03c0", "const_e": "e",
    "lparen": "(", "rparen": ")",
    "fun_sin": "s", "fun_cos": "c", "fun_tan": "t", "fun_arcsin": "S", "fun_arccos": "C", "fun_arctan": "T",
    "fun_ln": "l", "fun_log": "L", "fun_exp": "E",
}
# what the screen shows for a function: its name and the parenthesis it opens
FUNCTION_NAMES = {"fun_sin": "sin(", "fun_cos": "cos(", "fun_tan": "tan(", "fun_arcsin": "sin\u207b\u00b9(",
                  "fun_arccos": "cos\u207b\u00b9(", "fun_arctan": "tan\u207b\u00b9(", "fun_ln": "ln(",
                  "fun_log": "log(", "fun_exp": "exp("}
