"""The values a setting may take, and settings built from plain values and checked against them.

The settings' dataclasses live beside what they configure (:mod:`vlui.env.settings`, :mod:`vlui.agents.settings`,
:mod:`vlui.data.settings`, :mod:`vlui.models.settings`, :mod:`vlui.algos.settings`) and
know nothing of Hydra: each lists its numeric bounds in a ``LIMITS`` class variable and its choices in ``CHOICES``.
The job floor (:mod:`vlui.config`) registers them as Hydra's schemas and checks a composed config against them when a
job starts (:func:`vlui.config.check_settings`); code below it takes typed settings, or a plain mapping that
:func:`typed` checks the same way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from vlui.errors import VluiError

T = TypeVar("T")

# A value the config must give (a setting with no default): the mark Hydra's configs use for it, "???"
MISSING = "???"


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


def check_fields(schema: type, values: Mapping[str, Any], key: str) -> None:
    """Raise :class:`VluiError` naming ``key + field`` for the first of ``values`` outside ``schema``'s ``CHOICES``
    or ``LIMITS`` (a list setting: every item within them)."""
    for name, allowed in getattr(schema, "CHOICES", {}).items():
        if name in values and values[name] not in allowed:
            raise VluiError(f"{key}{name} must be one of {', '.join(allowed)}, not {values[name]!r}")
    for name, limit in getattr(schema, "LIMITS", {}).items():
        if name not in values:
            continue
        value = values[name]
        if isinstance(value, Sequence) and not isinstance(value, (str, list, tuple)):
            value = list(value)  # a config's list node, shown as the list it holds
        for v in value if isinstance(value, (list, tuple)) else [value]:
            problem = limit.problem(v)
            if problem:
                raise VluiError(f"{key}{name} {problem}, not {value!r}")


def typed(schema: type[T], value: T | Mapping[str, Any], group: str) -> T:
    """The settings of config group ``group`` as their dataclass ``schema``, checked: from a plain mapping (a key
    that is no setting is an error, not ignored) or an instance."""
    if isinstance(value, Mapping):
        known = [f.name for f in fields(schema)]
        unknown = sorted(set(value) - set(known))
        if unknown:
            raise VluiError(f"unknown {group} setting(s) {', '.join(map(str, unknown))}; valid: {', '.join(known)}")
        value = schema(**value)
    if not isinstance(value, schema):
        raise VluiError(f"{group} settings must be a mapping or a {schema.__name__}, not {type(value).__name__}")
    check_fields(schema, vars(value), f"{group}.")
    return value
