"""Making devices from the ``env`` config group, and reading its snapshot lists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vlui.device import Device
from vlui.errors import NotBuiltError, VluiError
from vlui.sim.snapshot import SPLITS, load_snapshot, snapshot_ids


def resolve_snapshots(spec: Any) -> list[str]:
    """Snapshot references from a config value: ``train``, ``test``, ``all``, one id or file, or a list of them.
    Every one is loaded once here, so a typo fails before anything runs."""
    if isinstance(spec, (str, int)):
        refs = snapshot_ids(spec) if spec in SPLITS else [str(spec)]
    else:
        refs = [str(s) for s in spec]
    if not refs:
        raise VluiError("the snapshot list is empty")
    for ref in refs:
        load_snapshot(ref)
    return [str(Path(r).resolve()) if r.endswith((".yaml", ".yml")) else r for r in refs]


def make_device(env_cfg: dict, snapshot: str) -> Device:
    backend = env_cfg.get("backend", "sim")
    if backend == "sim":
        from vlui.sim.phone import SimDevice

        return SimDevice(snapshot)
    if backend == "adb":
        raise NotBuiltError("the ADB backend (real emulators and phones) is not available in this version of vlui")
    raise VluiError(f"unknown env.backend {backend!r}; choose from: sim, adb")
