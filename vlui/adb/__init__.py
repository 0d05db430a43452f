"""Real Android devices and emulators over ADB: the device backend, and building B-MoCA snapshots on an emulator."""
