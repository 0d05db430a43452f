"""The simulated Android phone: vlui's default device backend. :class:`vlui.sim.phone.SimDevice` is the entry point;
``python -m vlui.sim --help`` lists the command-line tools (screenshots, XML dumps, contact sheets).

What a phone *is* (snapshots, locales, apps, log lines, the state a phone keeps) is :mod:`vlui.android`; this
package is how one is simulated: apps that build widget trees, the renderer, system UI and services."""

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"  # what the simulated apps show and log (YAML)
