"""Making devices from the ``env`` settings (:class:`~vlui.env.settings.EnvConfig`), and reading its snapshot lists."""

from __future__ import annotations

from pathlib import Path

from vlui.adb.device import AdbDevice, claim, online_serials
from vlui.android.generate import parse_generated
from vlui.android.snapshot import load_snapshot, snapshot_refs
from vlui.env.settings import EnvConfig
from vlui.device import Device
from vlui.errors import VluiError
from vlui.sim.phone import SimDevice, check_snapshot_state
from vlui.sim.render import FRAME_CACHE_MB, SHARED_FRAMES
from vlui.tasks import templates
from vlui.tasks.catalog import catalog

_CHECKED_GENERATED: set[str] = set()


def resolve_snapshots(env: EnvConfig) -> list[str]:
    """The snapshot references of ``env.snapshots``: ``train``, ``test``, ``all``, ``random:N``/``heldout:N``
    (generated configurations, :attr:`EnvConfig.generator`), one id or file, or a list of them. Every one is loaded
    once here, so a typo fails before anything runs (a generated one once per process: it cannot change, and every
    environment of a parallel rollout resolves the same thousands of them); on the simulated phone, so is one in the
    state of an app (its entry checked against the app's own type)."""
    refs = snapshot_refs(env.snapshots, env.generator.seed, env.generator.holdout)
    for ref in refs:
        if ref not in _CHECKED_GENERATED:
            snap = load_snapshot(ref)
            if env.backend == "sim":
                check_snapshot_state(snap)
            if parse_generated(ref) is not None:
                _CHECKED_GENERATED.add(ref)
    return [str(Path(r).resolve()) if r.endswith((".yaml", ".yml")) else r for r in refs]


def make_device(env: EnvConfig, snapshot: str) -> Device:
    """The device of the ``env`` settings, at ``snapshot`` on the simulated phone."""
    if env.backend == "sim":
        mb = FRAME_CACHE_MB if env.frame_cache_mb is None else env.frame_cache_mb
        SHARED_FRAMES.limit(mb << 20)  # the process's, which its phones share
        return SimDevice(snapshot)
    if env.backend == "adb":
        return make_adb_device(env)
    raise VluiError(f"unknown env.backend {env.backend!r}; choose from: sim, adb")


def adb_serials(env: EnvConfig) -> list[str]:
    """The device serials of an ``env=adb`` config (one string, a comma-separated string or a list); ``auto``:
    every device online on the adb server at ``env.adb_host:env.adb_port``."""
    serials = env.serial
    if isinstance(serials, str) and serials.strip() == "auto":
        found = online_serials(env.adb_host, env.adb_port)
        if not found:
            raise VluiError(f"env.serial=auto: the adb server at {env.adb_host}:{env.adb_port} has no device online "
                            "(see `adb devices`): start an emulator, or name the device with env.serial")
        return found
    if isinstance(serials, str):
        serials = [s.strip() for s in serials.split(",") if s.strip()]
    if not serials:
        raise VluiError("env=adb needs the device: env.serial=emulator-5554 (see `adb devices`), a list "
                        "env.serial=[emulator-5554,emulator-5556] for parallel environments, or env.serial=auto "
                        "for every device the adb server has online")
    return [str(s) for s in serials]


def max_parallel(env: EnvConfig, wanted: int) -> int:
    """How many environments can run side by side: ``wanted``, but one per device on the ADB backend."""
    if env.backend == "adb":
        return max(1, min(wanted, len(adb_serials(env))))
    return wanted


def make_adb_device(env: EnvConfig) -> Device:
    """An :class:`~vlui.adb.device.AdbDevice` for the ``env=adb`` config: the first free device of ``serial``."""
    serials = adb_serials(env)
    tags = env.log_tags
    if tags == "tasks":
        tags = sorted(({t.log_tag for t in catalog().values()} | templates.log_tags()) - {""})
    elif tags == "all":
        tags = None
    elif isinstance(tags, str):
        raise VluiError(f"env.log_tags must be 'tasks', 'all' or a list of tags, not {tags!r}")
    serial, release = claim(serials, env.adb_host, env.adb_port)
    try:
        return AdbDevice(serial, env.adb_host, env.adb_port, env.console_port, command_timeout_s=env.command_timeout_s,
                         connect_timeout_s=env.connect_timeout_s, log_tags=tags, screencap=env.screencap,
                         snapshot_reset=env.snapshot_reset, console_token_file=env.console_token_file, release=release)
    except BaseException:
        release()
        raise
