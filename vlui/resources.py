"""Where vlui finds what it ships: the Hydra configs (``configs/``) and the snapshot definitions (``envs/``).

In a checkout (the package next to ``configs/`` and ``envs/``: an editable install, or running from the repository)
they are the checkout's folders, the ones users edit. An installed wheel carries copies inside the package
(``vlui/_data/``, put there when the wheel is built) and reads them through :mod:`importlib.resources`. Whatever a job
writes (data, checkpoints, outputs) goes under :func:`work_dir`, never into the installed package.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from vlui.errors import VluiError

PACKAGE = Path(__file__).resolve().parent
SHIPPED = ("configs", "envs")


def checkout() -> Path | None:
    """The repository this package runs from, or None when it is an installed package."""
    root = PACKAGE.parent
    if (root / "pyproject.toml").is_file() and all((root / name).is_dir() for name in SHIPPED):
        return root
    return None


def shipped(name: str) -> Path:
    """The folder ``name`` (``configs`` or ``envs``): the checkout's, or the copy inside the installed package."""
    root = checkout()
    if root is not None:
        return root / name
    path = Path(str(resources.files("vlui") / "_data" / name))
    if not path.is_dir():
        raise VluiError(f"this installation of vlui lacks its {name}/ folder ({path}); reinstall it from a wheel or "
                        "a checkout (pip install .)")
    return path


def work_dir() -> Path:
    """Where jobs write data, checkpoints and outputs: ``$VLUI_ROOT`` if set, else the checkout, else the current
    working directory."""
    if os.environ.get("VLUI_ROOT"):
        return Path(os.environ["VLUI_ROOT"])
    return checkout() or Path.cwd()


def read_yaml(path: Path) -> Any:
    """The data in a YAML file that vlui ships (its tasks, locales, apps, devices): parsed by libyaml's C parser when
    PyYAML has it, which gives the same data ten times faster, else by PyYAML's own. Every process reads these files
    when it starts, so the difference is paid by every job, worker and test."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(path.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506 (a safe loader)
