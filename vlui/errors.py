"""Errors that are the user's to fix.

A :class:`VluiError` carries a one-line, actionable message. The entry points print it as ``error: <message>`` and
exit with status 2, without a traceback; anything else is a bug in vlui and keeps its traceback.
"""


class VluiError(Exception):
    """A mistake in input, configuration or environment that the user can fix; the message says how."""

    exit_code = 2


class NotBuiltError(VluiError):
    """A job this version of vlui does not have yet. Exit status 3, so scripts can tell it from a failure."""

    exit_code = 3
