"""Errors that are the user's to fix, and how a command-line tool reports one.

A :class:`VluiError` carries a one-line, actionable message. The entry points print it as ``error: <message>`` and
exit with status 2, without a traceback; anything else is a bug in vlui and keeps its traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable


class VluiError(Exception):
    """A mistake in input, configuration or environment that the user can fix; the message says how."""

    exit_code = 2


class NotBuiltError(VluiError):
    """A job this version of vlui does not have yet. Exit status 3, so scripts can tell it from a failure."""

    exit_code = 3


def tool_status(run: Callable[[], int]) -> int:
    """The exit status of a ``python -m vlui.<tool>`` command: ``run``'s, or, when it raises a :class:`VluiError`,
    the error's (its message printed as one ``error: ...`` line on stderr, no traceback)."""
    try:
        return run()
    except VluiError as err:
        print(f"error: {err}", file=sys.stderr)
        return err.exit_code
