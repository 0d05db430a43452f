"""The demonstration dataset on disk (documented field by field in docs/dataset.md).

::

    data/<name>/
      meta/info.json          format_version, the screens and actions' spec, the collection recipe, feature descriptions
      meta/episodes.jsonl     one line per finished episode (task, snapshot, seed, success, steps, file)
      episodes/chunk-000/episode_000000.parquet   one file per episode, up to 1000 per chunk folder

Parquet, one row per step: the observation at that step and the action taken from it; each episode ends with one
more row holding the final observation (``is_last``, no action). Readable with pandas or pyarrow alone:
``pandas.read_parquet("data/<name>/episodes")``. Episode files are written to a hidden temporary name and renamed
into place, so readers never see half a file and a killed collection resumes where it stopped. No pickle anywhere.

A collection holds an exclusive lock on ``meta/.writer.lock`` while it writes (the kernel drops it when the process
dies, however it dies), so training can tell a dataset that is still being written from one whose writer is gone,
and two collections never write the same dataset. A dataset is complete when every episode its recipe plans
(tasks x snapshots x episodes_per_pair) is on disk.
"""

from __future__ import annotations

import errno
import fcntl
import io
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from vlui.errors import VluiError
from vlui.resources import work_dir
from vlui.spec import ObsActionSpec

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
    pa.field("acted", pa.list_(pa.float32(), 4)),  # the action the agent took, where `action` is a label (DAgger)
    pa.field("success_line", pa.string()),  # the log line that made the detector fire, on the row that succeeded
])


def encode_png(image: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def decode_png(data: bytes) -> np.ndarray:
    """PNG bytes -> (H, W, 3) uint8."""
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def dataset_folder(name: str | Path) -> Path:
    """A dataset given as a folder or as a name in ``data/``."""
    path = Path(name)
    if path.is_dir() or "/" in str(name):
        return path
    return work_dir() / "data" / str(name)


def episode_path(root: Path, episode_id: int) -> Path:
    return root / "episodes" / f"chunk-{episode_id // EPISODES_PER_CHUNK:03d}" / f"episode_{episode_id:06d}.parquet"


Plan = dict[int, tuple[str, str, int]]  # episode id -> (task, snapshot, seed) that a recipe collects


@dataclass
class DatasetWriter:
    """Writes episodes atomically and keeps the episode index; ``done()`` tells which episodes already exist. The
    episodes' screens and actions are those of ``spec``, stored in ``meta/info.json`` for training to read."""

    root: Path
    recipe: dict[str, Any]
    spec: ObsActionSpec
    _lock: Any = field(default=None, init=False, repr=False)

    def open(self, resume: bool, plan: Plan | None = None) -> None:
        """Create the dataset or continue it. ``plan`` (the episodes this recipe collects) lets a dataset whose
        ``meta/info.json`` was lost be checked episode by episode before its info is written again."""
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
        (self.root / "meta").mkdir(parents=True, exist_ok=True)
        self._lock = _acquire(self.root)
        self._index = self.root / "meta" / "episodes.jsonl"
        if not meta.exists():
            found = sorted((self.root / "episodes").glob("chunk-*/episode_*.parquet"))
            if found:
                self._check_lost_info(found, plan)
                self._index.unlink(missing_ok=True)  # indexed again from the files below, once each
            _atomic_write(meta, json.dumps({
                "format_version": FORMAT_VERSION,
                "image": {"height": self.spec.height, "width": self.spec.width, "format": "png"},
                "spec": self.spec.to_dict(),
                "recipe": self.recipe,
                "features": {f.name: str(f.type) for f in SCHEMA},
                "layout": "episodes/chunk-NNN/episode_NNNNNN.parquet, one row per step plus a final observation row",
            }, indent=2))
        self._repair_index()

    def close(self) -> None:
        """Release the writer's lock (also released when the process dies)."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def done(self) -> dict[int, dict[str, Any]]:
        """Episode id -> its index entry, for the episodes already on disk."""
        return read_index(self.root)

    def write(self, episode_id: int, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """Write one episode (file, then its index line). A full disk is a :class:`VluiError` that says what is
        kept: every episode written before this one, whole."""
        path = episode_path(self.root, episode_id)
        tmp = path.with_name(f".{path.name}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            table = pa.Table.from_pylist(rows, schema=SCHEMA)
            pq.write_table(table, tmp, compression="zstd")
            os.replace(tmp, path)  # readers see the whole file or none of it
            entry = _entry(rows, path.relative_to(self.root))
            _append_line(self._index, json.dumps(entry))
        except OSError as err:
            tmp.unlink(missing_ok=True)
            if err.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            raise VluiError(f"no space left on the device writing episode {episode_id} to {self.root}: the "
                            f"{len(read_index(self.root))} episodes written before it are kept; free some space and "
                            "run the same command again to collect the rest") from None
        return entry

    def _repair_index(self) -> None:
        """After a kill: drop temporary files and a line cut short, and index episode files written just before
        the kill."""
        for tmp in (self.root / "episodes").glob("chunk-*/.episode_*.tmp"):
            tmp.unlink()
        _drop_partial_line(self._index)
        indexed = read_index(self.root)
        for path in sorted((self.root / "episodes").glob("chunk-*/episode_*.parquet")):
            eid = int(path.stem.split("_")[1])
            if eid not in indexed:
                rows = read_episode(path).to_pylist()
                _append_line(self._index, json.dumps(_entry(rows, path.relative_to(self.root))))

    def _check_lost_info(self, found: list[Path], plan: Plan | None) -> None:
        """``meta/info.json`` is gone but episodes are here: write it again only if every episode is the one this
        recipe would collect under its id (task, snapshot, seed) and at its image size; otherwise the recipe would
        mislabel them and resuming would collect some pairs twice."""
        if plan is None:
            raise VluiError(f"{self.root} has episodes but no meta/info.json: run the collect.py command that "
                            "collected it to write the info again, or collect into another dataset name")
        h, w = self.spec.image_size
        for path in found:
            first = read_episode(path, columns=["episode_id", "task_id", "snapshot_id", "seed", "screen"]).slice(
                0, 1).to_pylist()[0]
            eid = int(first["episode_id"])
            have = (first["task_id"], first["snapshot_id"], int(first["seed"]))
            want = plan.get(eid)
            size = decode_png(first["screen"]).shape[:2] if first["screen"] else None
            if have != want or size != (h, w):
                what = (f"holds {have[0]} on snapshot {have[1]} (seed {have[2]})" if have != want else
                        f"has {size[0]}x{size[1]} screens" if size else "has no screen")
                wanted = (f"{want[0]} on snapshot {want[1]} (seed {want[2]})" if want and have != want else
                          f"{h}x{w} screens" if want else "no such episode")
                raise VluiError(f"{self.root} has lost its meta/info.json and was collected with another recipe "
                                f"(episode {eid} {what}; this recipe has {wanted}): run the collect.py command that "
                                "collected it, or collect into another dataset name")


@contextmanager
def _held(root: Path, exclusive: bool) -> Iterator[Any]:
    f = open(Path(root) / "meta" / ".writer.lock", "a+", encoding="utf-8")
    try:
        fcntl.flock(f, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        pid = f.read().strip()
        f.close()
        yield pid or "?"
        return
    yield f


def _acquire(root: Path):
    """The writer's exclusive lock on ``root``, as an open file; refused while another collection writes."""
    with _held(root, exclusive=True) as held:
        if isinstance(held, str):
            raise VluiError(f"another collection (pid {held}) is writing to {root}: wait for it to finish or stop "
                            "it, then run this again")
        held.seek(0)
        held.truncate()
        held.write(str(os.getpid()))
        held.flush()
        return held


def writer_pid(root: str | Path) -> str | None:
    """The process id of a collection writing to ``root`` now, or None when none is."""
    if not (Path(root) / "meta").is_dir():
        return None
    with _held(Path(root), exclusive=False) as held:
        if isinstance(held, str):
            return held
        held.close()
        return None


def progress(root: str | Path) -> tuple[int, int | None]:
    """(episodes on disk, episodes the recipe plans or None when the recipe does not say)."""
    info = read_info(root)
    recipe = info.get("recipe", {})
    try:
        planned = len(recipe["tasks"]) * len(recipe["snapshots"]) * int(recipe["episodes_per_pair"])
    except (KeyError, TypeError, ValueError):
        planned = None
    return len(read_index(root)), planned


def _append_line(path: Path, line: str) -> None:
    """Append one line in one write, so a kill leaves at most the last line cut short (dropped on reopening)."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def _drop_partial_line(path: Path) -> None:
    """Cut a last line that a kill or a full disk left without its newline; its episode is indexed again."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)


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


def dataset_spec(info: dict[str, Any], where: str | Path = "the dataset") -> ObsActionSpec:
    """The screens and actions of a dataset (its ``meta/info.json``, :func:`read_info`). Datasets collected before
    the spec was stored give it by their image size and the environment settings in their recipe."""
    if "spec" in info:
        return ObsActionSpec.from_dict(info["spec"], f"{where}: meta/info.json's spec")
    env = (info.get("recipe") or {}).get("env") or {}
    image = info.get("image") or {}
    try:
        return ObsActionSpec(image.get("height"), image.get("width"),
                             env.get("tap_threshold", ObsActionSpec.tap_threshold),
                             env.get("y_distance_scale", ObsActionSpec.y_scale))
    except VluiError as err:
        raise VluiError(f"{where}: meta/info.json does not say its screens' size ({err}): collect it again") from None


def check_observations(root: str | Path, info: dict[str, Any], current: int) -> None:
    """Refuse screens the simulated phone drew before observation version ``current`` (vlui.device): a policy now
    sees the full screen resized, as over ADB, and screens drawn at their own size are not what it sees."""
    env = info["recipe"].get("env", {})
    version = env.get("observation_version", 1)
    if env.get("backend", "sim") == "sim" and version != current:
        raise VluiError(f"{root} holds screens of observation version {version}: the simulated phone drew them at "
                        f"their own size, and a policy now sees the full screen resized as over ADB (version "
                        f"{current}); collect it again (delete it, or collect under another dataset=)")


def read_index(root: str | Path) -> dict[int, dict[str, Any]]:
    """Episode id -> index entry for the episodes listed in ``meta/episodes.jsonl`` whose file exists. A last line
    without its newline (a kill while appending) is skipped: the episode file is indexed again when collect.py
    reopens the dataset. A damaged line elsewhere is an error naming it."""
    index: dict[int, dict[str, Any]] = {}
    path = Path(root) / "meta" / "episodes.jsonl"
    if not path.exists():
        return index
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = text.split("\n")
    for n, line in enumerate(lines, 1):
        if not line.strip() or (n == len(lines) and not text.endswith("\n")):
            continue
        try:
            entry = json.loads(line)
            eid, rel = entry["episode_id"], entry["file"]
            if not isinstance(eid, int) or isinstance(eid, bool) or not isinstance(rel, str):
                raise TypeError
        except (json.JSONDecodeError, KeyError, TypeError):
            raise VluiError(f"{path} line {n} is damaged: delete that line (or the whole file) and run the same "
                            "collect.py command again; it indexes the episode again from its file") from None
        if (Path(root) / rel).exists():
            index[eid] = entry
    return index


def read_episode(path: Path, columns: list[str] | None = None) -> pa.Table:
    """One episode file's rows (``columns`` of them, or all), in the dataset's schema: columns a file written before
    them lacks read as null. A damaged file is a :class:`VluiError` naming it and what to do."""
    try:
        return pq.read_table(path, schema=SCHEMA, columns=columns)
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
    tables = [read_episode(root / index[eid]["file"]) for eid in sorted(index)]
    return info, pa.concat_tables(tables)
