"""The dataset format's guarantees: versioned, atomic episode files, an index that survives a kill."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from vlui.data.format import (
    SCHEMA,
    DatasetWriter,
    dataset_spec,
    decode_png,
    encode_png,
    episode_path,
    read_dataset,
    read_info,
)
from vlui.errors import VluiError
from vlui.spec import ObsActionSpec


def rows(eid: int, steps: int = 2, success: bool = True) -> list[dict]:
    img = np.full((8, 4, 3), eid, dtype=np.uint8)
    out = []
    for t in range(steps + 1):
        last = t == steps
        out.append({"episode_id": eid, "step": t, "task_id": "airplane_on", "snapshot_id": "000",
                    "instruction": "turn on airplane mode", "seed": eid, "screen": encode_png(img), "screen_full": None,
                    "xml": None, "action": None if last else [0.1, 0.2, 0.1, 0.2], "action_kind": None if last else "tap",
                    "action_key": None, "touch": None if last else [0.55, 0.6], "lift": None if last else [0.55, 0.6],
                    "reward": float(success and t == steps - 1), "done": t >= steps - 1, "terminated": success,
                    "truncated": not success, "success": success, "is_last": last})
    return out


def writer(root: Path) -> DatasetWriter:
    w = DatasetWriter(root, {"tasks": ["airplane_on"]}, ObsActionSpec(8, 4))
    w.open(resume=True)
    return w


def test_round_trip_and_png_decoding(tmp_path: Path) -> None:
    w = writer(tmp_path)
    for eid in (0, 1, 2):
        w.write(eid, rows(eid, success=eid != 1))
    info, table = read_dataset(tmp_path)
    assert table.schema.equals(SCHEMA) and table.num_rows == 9
    assert info["image"]["height"] == 8 and dataset_spec(info) == ObsActionSpec(8, 4)
    assert decode_png(table.column("screen")[3].as_py())[0, 0, 0] == 1
    assert [e["success"] for e in w.done().values()] == [True, False, True]


def test_other_format_versions_are_refused(tmp_path: Path) -> None:
    writer(tmp_path)
    meta = tmp_path / "meta" / "info.json"
    info = json.loads(meta.read_text())
    meta.write_text(json.dumps({**info, "format_version": 99}))
    with pytest.raises(VluiError, match="format version 99, this vlui reads version 1"):
        read_info(tmp_path)


def test_missing_dataset_says_how_to_create_it(tmp_path: Path) -> None:
    with pytest.raises(VluiError, match="python collect.py dataset=nothing"):
        read_info(tmp_path / "nothing")


def test_files_written_before_a_kill_are_indexed_and_temp_files_removed(tmp_path: Path) -> None:
    w = writer(tmp_path)
    w.write(0, rows(0))
    # killed after renaming episode 1 into place but before indexing it, and while writing episode 2
    path = episode_path(tmp_path, 1)
    import pyarrow as pa
    pq.write_table(pa.Table.from_pylist(rows(1), schema=SCHEMA), path)
    tmp = episode_path(tmp_path, 2).with_name(".episode_000002.parquet.tmp")
    tmp.write_bytes(b"half a file")
    w.close()  # the kill drops the writer's lock
    w2 = writer(tmp_path)
    assert sorted(w2.done()) == [0, 1] and not tmp.exists()
    assert read_dataset(tmp_path)[1].num_rows == 6
