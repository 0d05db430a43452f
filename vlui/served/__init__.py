"""The simulated phone served as a device: the ADB transport (:mod:`~vlui.served.adbd`), the emulator console
(:mod:`~vlui.served.console`), the shell its clients run (:mod:`~vlui.served.shell`), and what a device keeps outside
the UI (files, properties, settings: :mod:`~vlui.served.phone`, :mod:`~vlui.served.storage`,
:mod:`~vlui.served.configure`, :mod:`~vlui.served.device_files`). ``python -m vlui.served`` serves one on loopback.

It imports :mod:`vlui.sim` (the phone it serves); nothing in :mod:`vlui.sim` imports it.
"""

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"  # what the served phone reports of its packages (YAML)
