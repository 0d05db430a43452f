"""Background log traffic of the simulated phone: a few unrelated lines per input, drawn from a seeded RNG so the
same snapshot and actions give the same log."""

from __future__ import annotations

import random
from functools import lru_cache

from vlui.resources import read_yaml
from vlui.sim import DATA_DIR
from vlui.sim.protocol import Phone

PIDS = {"chatty": 1210, "GnssLocationProvider": 1210, "WifiScanner": 1210, "BatteryService": 1210,
        "ConnectivityService": 1210, "InputDispatcher": 1210, "SurfaceFlinger": 317, "audio_hw_generic": 285,
        "GoogleApiManager": 2851, "Finsky": 3012, "AndroidIME": 2790}


@lru_cache(maxsize=1)
def catalog() -> tuple[list[tuple[str, str, str]], list[int], list[str]]:
    data = read_yaml(DATA_DIR / "log_noise.yaml")
    lines = [(tag, level, msg) for tag, level, msg, _ in data["lines"]]
    weights = [w for *_, w in data["lines"]]
    return lines, weights, data["background_packages"]


def noise_lines(rng: random.Random, dev: Phone) -> list[tuple[str, str, str, int]]:
    """0–3 ``(tag, level, message, pid)`` lines."""
    lines, weights, packages = catalog()
    out = []
    for _ in range(rng.choice((0, 1, 1, 2, 3))):
        tag, level, msg = rng.choices(lines, weights)[0]
        msg = msg.replace("{pkg}", rng.choice(packages)).replace("{n}", str(rng.randrange(10, 9999)))
        out.append((tag, level, msg, PIDS.get(tag, 1210)))
    return out
