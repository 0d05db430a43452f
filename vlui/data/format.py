"""The demonstration dataset on disk (documented field by field in docs/dataset.md).

::

    data/<name>/
      meta/info.json          format_version, image size, the collection recipe, feature descriptions
      meta/episodes.jsonl     one line per finished episode (task, snapshot, seed, success, steps, file)
      episodes/chunk-000/episode_000000.parquet   one file per episode, up to 1000 per chunk folder

Parquet, one row per step: the observation at that step and the action taken from it; each episode ends with one
more row holding the final observation (``is_last``, no action). Readable with pandas or pyarrow alone:
``pandas.read_parquet("data/<name>/episodes")``. Episode files are written to a hidden temporary name and renamed
into place, so readers never see half a file and a killed collection resumes where it stopped. No pickle anywhere.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from vlui.errors import VluiError

FORMAT_VERSION = 1
EPISODES_PER_CHUNK = 1000

SCHEMA = pa.schema([
    pa.field("episode_id", pa.int64()),
    pa.field("step", pa.int32()),
    pa.field("task_id", pa.string()),
    pa.field("snapshot_id", pa.string()),
    pa.field("instruction", pa.string()),
    pa.field("seed", pa.int64()),
    pa.field("screen", pa.binary()),  # PNG at observation resolution
    pa.field("screen_full", pa.binary()),  # PNG at full resolution, when collected with save_full_screen
    pa.field("xml", pa.string()),  # the uiautomator dump, when collected with save_xml
    pa.field("action", pa.list_(pa.float32(), 4)),  # dual-gesture in [-1, 1]; null on the last row
    pa.field("action_kind", pa.string()),  # tap | swipe | key
    pa.field("action_key", pa.string()),  # BACK | HOME | APP_SWITCH for key presses
    pa.field("touch", pa.list_(pa.float32(), 2)),  # parsed, normalised (y, x) in [0, 1]
    pa.field("lift", pa.list_(pa.float32(), 2)),
    pa.field("reward", pa.float32()),  # received for this row's action
    pa.field("done", pa.bool_()),  # the episode ended after this row's action
    pa.field("terminated", pa.bool_()),  # ... because the task succeeded
    pa.field("truncated", pa.bool_()),  # ... because the step limit was reached
    pa.field("success", pa.bool_()),  # whether the episode succeeded (same on every row of the episode)
    pa.field("is_last", pa.bool_()),  # the final observation, after the last action
])


def encode_png(image: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def decode_png(data: bytes) -> np.ndarray:
    """PNG bytes -> (H, W, 3) uint8."""
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def episode_path(root: Path, episode_id: int) -> Path:
    return root / "episodes" / f"chunk-{episode_id // EPISODES_PER_CHUNK:03d}" / f"episode_{episode_id:06d}.parquet"


@dataclass
class DatasetWriter:
    """Writes episodes atomically and keeps the episode index; ``done()`` tells which episodes already exist."""

    root: Path
    recipe: dict[str, Any]
    image_size: tuple[int, int]

    def open(self, resume: bool) -> None:
        meta = self.root / "meta" / "info.json"
        if meta.exists():
            info = read_info(self.root)
            if not resume:
                raise VluiError(f"{self.root} already holds a dataset: choose another dataset name, delete it, or "
                                "set resume=true to continue it")
            if info["recipe"] != self.recipe:
                changed = sorted(k for k in set(info["recipe"]) | set(self.recipe)
                                 if info["recipe"].get(k) != self.recipe.get(k))
                raise VluiError(f"{self.root} was collected with a different recipe (differs in: {', '.join(changed)}); "
                                "use another dataset name to collect this one")
        else:
            (self.root / "meta").mkdir(parents=True, exist_ok=True)
            _atomic_write(meta, json.dumps({
                "format_version": FORMAT_VERSION,
                "image": {"height": self.image_size[0], "width": self.image_size[1], "format": "png"},
                "recipe": self.recipe,
                "features": {f.name: str(f.type) for f in SCHEMA},
                "layout": "episodes/chunk-NNN/episode_NNNNNN.parquet, one row per step plus a final observation row",
            }, indent=2))
        self._index = self.root / "meta" / "episodes.jsonl"
        self._repair_index()

    def done(self) -> dict[int, dict[str, Any]]:
        """Episode id -> its index entry, for the episodes already on disk."""
        return read_index(self.root)

    def write(self, episode_id: int, rows: list[dict[str, Any]]) -> dict[str, Any]:
        path = episode_path(self.root, episode_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pylist(rows, schema=SCHEMA)
        tmp = path.with_name(f".{path.name}.tmp")
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, path)  # readers see the whole file or none of it
        entry = _entry(rows, path.relative_to(self.root))
        with open(self._index, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
        return entry

    def _repair_index(self) -> None:
        """After a kill: drop temporary files, and index episode files written just before the kill."""
        for tmp in (self.root / "episodes").glob("chunk-*/.episode_*.tmp"):
            tmp.unlink()
        indexed = read_index(self.root)
        for path in sorted((self.root / "episodes").glob("chunk-*/episode_*.parquet")):
            eid = int(path.stem.split("_")[1])
            if eid not in indexed:
                rows = _read_episode(path).to_pylist()
                with open(self._index, "a", encoding="utf-8") as f:
                    f.write(json.dumps(_entry(rows, path.relative_to(self.root))) + "\n")


def _entry(rows: list[dict[str, Any]], rel: Path) -> dict[str, Any]:
    first = rows[0]
    return {"episode_id": first["episode_id"], "task_id": first["task_id"], "snapshot_id": first["snapshot_id"],
            "seed": first["seed"], "success": bool(first["success"]), "steps": len(rows) - 1, "file": str(rel)}


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def read_info(root: str | Path) -> dict[str, Any]:
    """``meta/info.json``, checked: a dataset of another format version is refused with a clear message."""
    path = Path(root) / "meta" / "info.json"
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise VluiError(f"no dataset at {root} (no meta/info.json): create it with `python collect.py "
                        f"dataset={Path(root).name}`") from None
    except json.JSONDecodeError as err:
        raise VluiError(f"{path} is corrupted ({err.msg}): collect the dataset again") from None
    version = info.get("format_version")
    if version != FORMAT_VERSION:
        raise VluiError(f"{root} has dataset format version {version}, this vlui reads version {FORMAT_VERSION}: "
                        "collect it again with this version")
    return info


def read_index(root: str | Path) -> dict[int, dict[str, Any]]:
    index: dict[int, dict[str, Any]] = {}
    path = Path(root) / "meta" / "episodes.jsonl"
    if not path.exists():
        return index
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            raise VluiError(f"{path} line {n} is corrupted: delete that line and re-run collect.py to redo the "
                            "episode") from None
        if (Path(root) / entry["file"]).exists():
            index[entry["episode_id"]] = entry
    return index


def _read_episode(path: Path) -> pa.Table:
    try:
        return pq.read_table(path, schema=SCHEMA)
    except (pa.ArrowInvalid, OSError) as err:
        raise VluiError(f"episode file {path} is corrupted ({str(err).splitlines()[0][:80]}): delete it and re-run "
                        "collect.py with the same settings to write it again") from None


def read_dataset(root: str | Path) -> tuple[dict[str, Any], pa.Table]:
    """The dataset's info and all its rows (episodes in id order, steps in order)."""
    root = Path(root)
    info = read_info(root)
    index = read_index(root)
    if not index:
        raise VluiError(f"{root} has no episodes yet: run `python collect.py dataset={root.name}`")
    tables = [_read_episode(root / index[eid]["file"]) for eid in sorted(index)]
    return info, pa.concat_tables(tables)
