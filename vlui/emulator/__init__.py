"""Real Android emulators given a snapshot's configuration: :mod:`~vlui.emulator.build` lists and runs the device
commands, and ``python -m vlui.emulator build-snapshots`` is its command line (docs/adb.md, "Building snapshots on
an emulator"). It sits above both backends: it renders the wallpapers with the simulator and tests every command on
the served phone."""
