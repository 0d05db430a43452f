"""The values a numeric setting may take. The settings' dataclasses (:mod:`vlui.config`, :mod:`vlui.models.settings`)
list theirs in a ``LIMITS`` class variable, checked when a job starts (:func:`vlui.config.check_settings`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Range:
    """The values a numeric setting may take: ``lo <= x`` (or ``lo < x`` when ``open_lo``), likewise for ``hi``.
    ``None`` passes when ``optional``. Schemas list theirs in ``LIMITS``, checked by :func:`check_settings`."""

    lo: float | None = None
    hi: float | None = None
    open_lo: bool = False
    open_hi: bool = False
    optional: bool = False

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not allowed, or None."""
        if value is None and self.optional:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return f"must be {self.describe()}"
        low = self.lo is not None and (value <= self.lo if self.open_lo else value < self.lo)
        high = self.hi is not None and (value >= self.hi if self.open_hi else value > self.hi)
        return f"must be {self.describe()}" if low or high else None

    def describe(self) -> str:
        if self.lo is not None and self.hi is not None:
            return (f"{'greater than' if self.open_lo else 'at least'} {self.lo:g} and "
                    f"{'less than' if self.open_hi else 'at most'} {self.hi:g}")
        if self.lo is not None:
            return f"{'greater than' if self.open_lo else 'at least'} {self.lo:g}"
        return f"{'less than' if self.open_hi else 'at most'} {self.hi:g}"


@dataclass(frozen=True)
class Count:
    """A whole number ``>= lo``; with ``switch``, ``true`` and ``false`` too, read as 1 and 0 (a setting that was
    a switch before it counted, whose old configs still hold one)."""

    lo: int = 0
    switch: bool = False

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not allowed, or None."""
        if isinstance(value, bool):
            return None if self.switch else f"must be {self.describe()}"
        return None if isinstance(value, int) and value >= self.lo else f"must be {self.describe()}"

    def describe(self) -> str:
        return f"a whole number at least {self.lo}" + (" (or true for 1, false for 0)" if self.switch else "")

    def read(self, value: Any) -> int:
        """``value`` as the count it stands for (``true`` 1, ``false`` 0); check it first (:meth:`problem`)."""
        return int(value)


POSITIVE = Range(0, open_lo=True)
AT_LEAST_1 = Range(1)
NON_NEGATIVE = Range(0)
FRACTION = Range(0, 1)
PORT = Range(1, 65535)
SEED = Range(0, 2**32 - 1)
