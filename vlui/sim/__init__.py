"""The simulated Android phone: vlui's default device backend. ``SimDevice`` is the entry point;
``python -m vlui.sim --help`` lists the command-line tools (screenshots, XML dumps, contact sheets)."""

from vlui.sim.phone import SimDevice

__all__ = ["SimDevice"]
