"""Errors of the ADB backend."""

from vlui.errors import VluiError


class DeviceError(VluiError):
    """A device that cannot be reached, stopped answering or went away. The message names the device; evaluation
    records an episode that hits one as an infrastructure failure."""
