"""The policies an evaluation's ``checkpoint=`` names, online (vlui/jobs/evaluate.py) or offline
(vlui/jobs/offline.py)."""

from __future__ import annotations

import glob
from typing import Any

from vlui.errors import VluiError


def checkpoint_groups(value: Any) -> dict[str, list[str]]:
    """The policies of ``checkpoint``: one, a glob or a list of them (one recipe trained with several seeds: group
    ``""``), or a mapping name -> any of these (recipes to compare). Globs are expanded in sorted order; one that
    matches nothing is an error."""
    if value is None:
        return {}
    if isinstance(value, dict):
        groups = {str(k): _policies(v, f"checkpoint.{k}") for k, v in value.items()}
        if not groups:
            raise VluiError("checkpoint={} names no policy: give name: path-or-glob pairs")
        return groups
    return {"": _policies(value, "checkpoint")}


def _policies(value: Any, key: str) -> list[str]:
    items = value if isinstance(value, list) else [value]
    found: list[str] = []
    for item in items:
        item = str(item)
        if glob.has_magic(item):
            matches = sorted(glob.glob(item))
            if not matches:
                raise VluiError(f"{key}={item!r} matches no policy: check the pattern (e.g. "
                                "checkpoints/<experiment>/bc-*-seed*)")
            found += matches
        else:
            found.append(item)
    if not found:
        raise VluiError(f"{key} is an empty list: give the policies to evaluate")
    dup = sorted({p for p in found if found.count(p) > 1})
    if dup:
        raise VluiError(f"{key} names {dup[0]} more than once")
    return found
