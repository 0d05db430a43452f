"""A dataset exported in LeRobot's dataset format (codebase version 3.0, what ``lerobot`` 0.4 reads and writes), so
LeRobot's loaders, policies and tools take vlui's demonstrations as they are.

::

    <out>/
      meta/info.json                               codebase_version v3.0, fps, features, totals, file layout
      meta/stats.json                              min, max, mean, std, count and quantiles of each feature
      meta/tasks.parquet                           the instructions (index) and their task_index
      meta/episodes/chunk-000/file-000.parquet     one row per episode: its tasks, length, where its frames are,
                                                   and vlui's episode id, task, phone, seed and success
      data/chunk-000/file-000.parquet              one row per frame, many episodes per file (up to 100 MB)
      README.md                                    a dataset card

A frame is one step of a vlui episode: ``observation.image`` (the screen the agent saw, its PNG bytes as they are in
the dataset, an ``Image`` feature), ``action`` (the dual-gesture: touch_y, touch_x, lift_y, lift_x in [-1, 1]),
``next.reward``, ``next.done`` and ``next.success`` (what the action led to), and LeRobot's ``timestamp``,
``frame_index``, ``episode_index``, ``index`` and ``task_index``. The task is the instruction. vlui's last row of an
episode (the final screen, no action) is not a frame: a LeRobot frame pairs an observation with its action. Steps are
not timed on a phone: ``fps`` is 1 and a frame's timestamp is its step. Episodes are numbered from 0 in the order of
vlui's episode ids (which may have gaps); ``vlui/episode_id`` in the episodes' metadata maps them back.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from huggingface_hub import DatasetCardData
from PIL import Image

from vlui.data.card import CARD, TAGS, default_license, sections, summary, version
from vlui.data.format import dataset_spec, read_episode, read_index, read_info
from vlui.errors import VluiError

CODEBASE_VERSION = "v3.0"
FPS = 1
CHUNKS_SIZE = 1000  # files per chunk folder
DATA_FILE_MB = 100  # a data file is closed once it holds this many megabytes of frames
VIDEO_FILE_MB = 200  # LeRobot's default, unused: the screens are images, not videos
DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
EPISODES_PATH = "meta/episodes/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
ACTION_NAMES = ["touch_y", "touch_x", "lift_y", "lift_x"]
QUANTILES = {"q01": 0.01, "q10": 0.10, "q50": 0.50, "q90": 0.90, "q99": 0.99}
IMAGE_STATS_FRAMES = 1000  # the image statistics are over this many frames at most, spread evenly


def lerobot_features(height: int, width: int) -> dict[str, dict[str, Any]]:
    """``meta/info.json``'s features: LeRobot's dtype, shape and names of each column of the data files."""
    scalar = {"shape": [1], "names": None}
    return {
        "observation.image": {"dtype": "image", "shape": [height, width, 3], "names": ["height", "width", "channels"]},
        "action": {"dtype": "float32", "shape": [4], "names": ACTION_NAMES},
        "next.reward": {"dtype": "float32", **scalar},
        "next.done": {"dtype": "bool", **scalar},
        "next.success": {"dtype": "bool", **scalar},
        "timestamp": {"dtype": "float32", **scalar},
        "frame_index": {"dtype": "int64", **scalar},
        "episode_index": {"dtype": "int64", **scalar},
        "index": {"dtype": "int64", **scalar},
        "task_index": {"dtype": "int64", **scalar},
    }


def hf_features(features: dict[str, dict[str, Any]]) -> Any:
    """The ``datasets`` features of the data files, as LeRobot reads them (its ``get_hf_features_from_features``)."""
    from datasets import Features, Image as ImageFeature, List, Value  # seconds to load: only when exporting

    out = {}
    for key, ft in features.items():
        if ft["dtype"] == "image":
            out[key] = ImageFeature()
        elif ft["shape"] == [1]:
            out[key] = Value(ft["dtype"])
        else:
            out[key] = List(Value(ft["dtype"]), length=ft["shape"][0])
    return Features(out)


def export_lerobot(root: str | Path, out: str | Path) -> dict[str, Any]:
    """Write the dataset at ``root`` to the new folder ``out`` in LeRobot's format; what was written (episodes,
    frames, tasks, files, and the episodes left out for having no action). Written into a hidden folder beside
    ``out`` and renamed into place at the end, so ``out`` is whole or absent."""
    root, out = Path(root), Path(out)
    info = read_info(root)
    index = read_index(root)
    if not index:
        raise VluiError(f"{root} has no episodes yet: collect it first (python collect.py dataset={root.name})")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise VluiError(f"{out} already exists: export into a new folder (--out), or delete it first")
    if out.resolve() == root.resolve() or root.resolve() in out.resolve().parents:
        raise VluiError(f"{out} is inside the dataset {root}: export somewhere else")
    spec = dataset_spec(info, root)
    features = lerobot_features(spec.height, spec.width)
    schema = hf_features(features).arrow_schema
    tmp = out.with_name(f".{out.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        written = _write(root, index, tmp, features, schema)
        _write_card(root, tmp, out.name, written)
        if out.exists():
            out.rmdir()  # empty: checked above
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {**{k: v for k, v in written.items() if k != "stats"}, "out": str(out)}


def _write(root: Path, index: dict[int, dict[str, Any]], out: Path, features: dict[str, dict[str, Any]],
           schema: pa.Schema) -> dict[str, Any]:
    tasks: dict[str, int] = {}
    episodes: list[dict[str, Any]] = []
    pending: list[pa.Table] = []
    pending_bytes, chunk, file, frames, skipped = 0, 0, 0, 0, []
    numeric: dict[str, list[np.ndarray]] = {"action": [], "next.reward": [], "next.done": [], "next.success": [],
                                            "timestamp": [], "frame_index": [], "episode_index": [], "index": [],
                                            "task_index": []}
    screens: list[bytes] = []

    def flush() -> None:
        nonlocal pending, pending_bytes, chunk, file
        if not pending:
            return
        path = out / DATA_PATH.format(chunk_index=chunk, file_index=file)
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.concat_tables(pending), path, compression="snappy")
        pending, pending_bytes = [], 0
        chunk, file = (chunk + 1, 0) if file == CHUNKS_SIZE - 1 else (chunk, file + 1)

    for eid in sorted(index):
        rows = read_episode(root / index[eid]["file"]).to_pylist()
        steps = [r for r in rows if not r["is_last"] and r["action"] is not None]
        if not steps:
            skipped.append(eid)
            continue
        n, ep = len(steps), len(episodes)
        instruction = steps[0]["instruction"]
        task = tasks.setdefault(instruction, len(tasks))
        columns = {
            "observation.image": [{"bytes": r["screen"], "path": None} for r in steps],
            "action": [r["action"] for r in steps],
            "next.reward": [float(r["reward"] or 0.0) for r in steps],
            "next.done": [bool(r["done"]) for r in steps],
            "next.success": [bool(r["terminated"]) for r in steps],
            "timestamp": [float(r["step"]) / FPS for r in steps],
            "frame_index": [int(r["step"]) for r in steps],
            "episode_index": [ep] * n,
            "index": list(range(frames, frames + n)),
            "task_index": [task] * n,
        }
        for key in numeric:
            numeric[key].append(np.asarray(columns[key], dtype=np.float64))
        screens += [r["screen"] for r in steps]
        episodes.append({"episode_index": ep, "tasks": [instruction], "length": n,
                         "data/chunk_index": chunk, "data/file_index": file,
                         "dataset_from_index": frames, "dataset_to_index": frames + n,
                         "meta/episodes/chunk_index": 0, "meta/episodes/file_index": 0,
                         "vlui/episode_id": eid, "vlui/task_id": steps[0]["task_id"],
                         "vlui/snapshot_id": str(steps[0]["snapshot_id"]), "vlui/seed": int(steps[0]["seed"]),
                         "vlui/success": bool(steps[0]["success"])})
        pending.append(pa.Table.from_pydict(columns, schema=schema))
        pending_bytes += sum(len(r["screen"]) for r in steps) + 64 * n
        frames += n
        if pending_bytes >= DATA_FILE_MB * 1024 * 1024:
            flush()
    flush()
    if not episodes:
        raise VluiError(f"{root} has no episode with an action to export (every one ended before its first step)")
    path = out / EPISODES_PATH.format(chunk_index=0, file_index=0)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(episodes), path, compression="snappy")
    _write_tasks(out, tasks)
    stats = {key: _stats(np.concatenate(values), len(values[0].shape)) for key, values in numeric.items()}
    stats["observation.image"] = _image_stats(screens)
    _write_json(out / "meta" / "stats.json", stats)
    spec_h, spec_w = features["observation.image"]["shape"][:2]
    _write_json(out / "meta" / "info.json", {
        "codebase_version": CODEBASE_VERSION, "robot_type": "android_phone",
        "total_episodes": len(episodes), "total_frames": frames, "total_tasks": len(tasks),
        "chunks_size": CHUNKS_SIZE, "data_files_size_in_mb": DATA_FILE_MB, "video_files_size_in_mb": VIDEO_FILE_MB,
        "fps": FPS, "splits": {"train": f"0:{len(episodes)}"}, "data_path": DATA_PATH, "video_path": None,
        "features": features,
        "vlui": {"source": str(root), "version": version(), "screen": [spec_h, spec_w],
                 "episode_ids": "meta/episodes' vlui/episode_id", "skipped_episodes": skipped}})
    return {"episodes": len(episodes), "frames": frames, "tasks": len(tasks), "skipped": skipped, "stats": stats}


def _write_tasks(out: Path, tasks: dict[str, int]) -> None:
    """``meta/tasks.parquet``: the instructions as the index, with their ``task_index`` (as pandas writes a frame,
    which is how LeRobot reads it)."""
    import pandas as pd  # seconds to load: only when exporting

    frame = pd.DataFrame({"task_index": list(tasks.values())}, index=pd.Index(list(tasks), name="task"))
    frame.to_parquet(out / "meta" / "tasks.parquet")


def _stats(values: np.ndarray, vector: int) -> dict[str, Any]:
    """LeRobot's statistics of a feature: per dimension for vectors ``(N, D)``, one value in a list for scalars."""
    values = values.reshape(len(values), -1) if vector > 1 else values.reshape(-1, 1)
    stats = {"min": values.min(0), "max": values.max(0), "mean": values.mean(0), "std": values.std(0),
             "count": np.array([len(values)])}
    stats |= {name: np.quantile(values, q, axis=0) for name, q in QUANTILES.items()}
    return {k: v.tolist() for k, v in stats.items()}


def _image_stats(screens: list[bytes]) -> dict[str, Any]:
    """Per-channel statistics of the screens in [0, 1], shaped ``(3, 1, 1)`` as LeRobot keeps image statistics, over
    at most :data:`IMAGE_STATS_FRAMES` frames spread evenly (LeRobot samples frames too)."""
    picked = np.linspace(0, len(screens) - 1, min(len(screens), IMAGE_STATS_FRAMES)).round().astype(int)
    pixels = np.concatenate([np.asarray(Image.open(io.BytesIO(screens[i])).convert("RGB"), dtype=np.float32)
                             .reshape(-1, 3) / 255.0 for i in sorted(set(picked.tolist()))])
    stats = {"min": pixels.min(0), "max": pixels.max(0), "mean": pixels.mean(0), "std": pixels.std(0)}
    stats |= {name: np.quantile(pixels, q, axis=0) for name, q in QUANTILES.items()}
    out = {k: v.reshape(3, 1, 1).tolist() for k, v in stats.items()}
    out["count"] = [len(picked)]
    return out


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=4), encoding="utf-8")


def _write_card(root: Path, out: Path, name: str, written: dict[str, Any]) -> None:
    """The export's dataset card: LeRobot's tag and data files, and what it was exported from."""
    facts = summary(root)
    data = DatasetCardData(license=default_license(facts), task_categories=["robotics"], tags=["LeRobot", *TAGS],
                           pretty_name=f"vlui demonstrations: {facts['name']} (LeRobot format)",
                           configs=[{"config_name": "default", "data_files": "data/*/*.parquet"}])
    lines = [f"# vlui demonstrations: {facts['name']}, in LeRobot's format", "",
             f"{written['episodes']} episodes ({written['frames']} frames, {written['tasks']} instructions) exported "
             f"by vlui {version()} (`python -m vlui.data export --format lerobot`) from the vlui dataset "
             f"`{facts['name']}` in LeRobot's dataset format {CODEBASE_VERSION}. A frame is a step: the screen "
             "(`observation.image`), the dual-gesture answered (`action`: touch_y, touch_x, lift_y, lift_x in "
             "[-1, 1]) and what it led to (`next.reward`, `next.done`, `next.success`); the task is the instruction. "
             "Steps are not timed: fps is 1, a frame's timestamp is its step.", "",
             "```python", "from lerobot.datasets.lerobot_dataset import LeRobotDataset", "",
             f'dataset = LeRobotDataset("<owner>/<name>", root="{name}")', "```", "",
             "`meta/episodes` maps each episode back to the vlui dataset's (`vlui/episode_id`, `vlui/task_id`, "
             "`vlui/snapshot_id`, `vlui/seed`, `vlui/success`), so the source's splits (by vlui episode id) apply."
             + (f" {len(written['skipped'])} episode(s) without an action were left out." if written["skipped"] else ""),
             ""]
    for heading, part in sections(str(root), facts, data.license).items():
        if heading not in ("", "How to load"):  # the source's loading code is not this folder's
            lines += ["## Licences" if heading == "Licences" else f"## The source dataset's {heading.lower()}",
                      *part[1:]]
    (out / CARD).write_text(f"---\n{data.to_yaml()}\n---\n" + "\n".join(lines) + "\n", encoding="utf-8")
