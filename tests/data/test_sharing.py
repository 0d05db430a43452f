"""Datasets shared the way the field shares them, offline: a card that ``datasets.load_dataset`` reads (screens as
images, a config per split), checked; an export in LeRobot's format; one line for every bad input."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import datasets
import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from PIL import Image

from vlui.data.__main__ import main
from vlui.data.card import CARD, MARKER, check_dataset_card, update_dataset_card, write_dataset_card
from vlui.data.format import decode_png, read_dataset, read_index
from vlui.data.lerobot import export_lerobot
from vlui.data.splits import read_splits
from vlui.errors import VluiError
from vlui.jobs import split as split_job

LEROBOT_CHECK = Path(__file__).with_name("lerobot_check.py")


def load(root: Path, *args: str, cache: Path, **kwargs):
    return datasets.load_dataset(str(root), *args, cache_dir=str(cache), **kwargs)


def test_a_collection_ends_with_a_card(tiny_dataset: Path) -> None:
    text = (tiny_dataset / CARD).read_text()
    assert MARKER in text
    check_dataset_card(tiny_dataset)


def test_load_dataset_reads_the_screens_as_images_and_the_splits_as_configs(tiny_dataset_copy: Path,
                                                                            tmp_path: Path) -> None:
    split = split_job.make(tiny_dataset_copy, "unseen_task", ["open_clock"], val=0.2)  # writes the card again
    _, table = read_dataset(tiny_dataset_copy)
    every = load(tiny_dataset_copy, split="train", cache=tmp_path / "cache")
    assert every.num_rows == table.num_rows
    assert isinstance(every.features["screen"], datasets.Image)
    first = every[0]
    assert isinstance(first["screen"], Image.Image)
    assert np.array_equal(np.asarray(first["screen"].convert("RGB")), decode_png(table.column("screen")[0].as_py()))
    assert first["action"] == pytest.approx(table.column("action")[0].as_py())
    parts = load(tiny_dataset_copy, "unseen_task", cache=tmp_path / "cache")
    assert set(parts) == {"train", "validation", "test"}
    for part, name in (("train", "train"), ("val", "validation"), ("test", "test")):
        assert set(parts[name]["episode_id"]) == set(split.parts[part])
    assert set(parts["test"]["task_id"]) == {"open_clock"}


def test_the_card_says_tasks_phones_splits_recipe_and_licences(tiny_dataset_copy: Path) -> None:
    split_job.make(tiny_dataset_copy, "random", test=0.25)
    text = (tiny_dataset_copy / CARD).read_text()
    for words in ("| `airplane_on` | 1 | 6 | 6 | turn on airplane mode |", "3 B-MoCA snapshots (000, 001, 030)",
                  "| `random` | random | episodes drawn at random | 0 | 8 | 1 | 3 |", "agent: expert; seed 0",
                  "Generator version: none", "license: apache-2.0", "SIL Open Font License 1.1",
                  "wallpapers are procedural", "config_name: random"):
        assert words in text, words
    assert "## Licences" in text and "## Recipe" in text


def test_the_licence_given_stays_when_the_card_is_written_again(tiny_dataset_copy: Path) -> None:
    write_dataset_card(tiny_dataset_copy, license="cc-by-4.0")
    split_job.make(tiny_dataset_copy, "random", test=0.25)
    assert "license: cc-by-4.0" in (tiny_dataset_copy / CARD).read_text()


def test_a_card_missing_a_field_or_a_file_is_one_clear_line(tiny_dataset_copy: Path, capsys) -> None:
    path = tiny_dataset_copy / CARD
    good = path.read_text()
    path.write_text(good.replace("license: apache-2.0\n", ""))
    with pytest.raises(VluiError, match=r"README.md: the card's front matter lacks license: write it again with "
                                        r"`python -m vlui.data card .*`$"):
        check_dataset_card(tiny_dataset_copy)
    assert main(["check", str(tiny_dataset_copy)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "lacks license" in err
    path.write_text(good.replace("dtype: image", "dtype: binary"))
    with pytest.raises(VluiError, match="does not read the screens as images"):
        check_dataset_card(tiny_dataset_copy)
    path.write_text(good.replace("## Licences", "## Other"))
    with pytest.raises(VluiError, match="lacks the section.s. Licences"):
        check_dataset_card(tiny_dataset_copy)
    path.write_text(good.replace("episodes/chunk-*/episode_*.parquet", "episodes/gone/*.parquet"))
    with pytest.raises(VluiError, match="lists episodes/gone/.*parquet, which is not in"):
        check_dataset_card(tiny_dataset_copy)
    path.unlink()
    with pytest.raises(VluiError, match="has no dataset card"):
        check_dataset_card(tiny_dataset_copy)


def test_someone_elses_readme_is_kept_unless_forced(tiny_dataset_copy: Path, capsys) -> None:
    path = tiny_dataset_copy / CARD
    path.write_text("# my own notes\n")
    assert update_dataset_card(tiny_dataset_copy) is None and path.read_text() == "# my own notes\n"
    assert main(["card", str(tiny_dataset_copy)]) == 2
    assert "was not written by vlui" in capsys.readouterr().err
    assert main(["card", str(tiny_dataset_copy), "--force", "--license", "mit"]) == 0
    assert "license: mit" in path.read_text()


def test_the_lerobot_export_has_the_documented_schema_and_the_datasets_frames(tiny_dataset_copy: Path,
                                                                             tmp_path: Path) -> None:
    split_job.make(tiny_dataset_copy, "unseen_task", ["open_clock"], val=0.2)
    out = tmp_path / "lerobot"
    assert main(["export", "--format", "lerobot", str(tiny_dataset_copy), "--out", str(out)]) == 0
    info = json.loads((out / "meta" / "info.json").read_text())
    index = read_index(tiny_dataset_copy)
    _, table = read_dataset(tiny_dataset_copy)
    steps = table.filter(pc.invert(table.column("is_last")))
    assert info["codebase_version"] == "v3.0" and info["fps"] == 1 and info["video_path"] is None
    assert (info["total_episodes"], info["total_frames"], info["total_tasks"]) == (len(index), steps.num_rows, 2)
    assert info["splits"] == {"train": f"0:{len(index)}"}
    assert info["data_path"] == "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
    features = info["features"]
    assert features["observation.image"] == {"dtype": "image", "shape": [256, 128, 3],
                                             "names": ["height", "width", "channels"]}
    assert features["action"] == {"dtype": "float32", "shape": [4],
                                  "names": ["touch_y", "touch_x", "lift_y", "lift_x"]}
    for key in ("timestamp", "frame_index", "episode_index", "index", "task_index", "next.reward", "next.done"):
        assert features[key]["shape"] == [1], key
    data = pq.read_table(out / "data" / "chunk-000" / "file-000.parquet")
    assert set(data.column_names) == set(features)
    assert json.loads(data.schema.metadata[b"huggingface"])["info"]["features"]["observation.image"]["_type"] == "Image"
    # frame by frame, the dataset's steps: the same PNG bytes, actions, rewards, in episode and step order
    assert [v["bytes"] for v in data.column("observation.image").to_pylist()] == steps.column("screen").to_pylist()
    assert np.allclose(data.column("action").to_pylist(), steps.column("action").to_pylist())
    assert data.column("next.reward").to_pylist() == pytest.approx(steps.column("reward").to_pylist())
    assert data.column("frame_index").to_pylist() == steps.column("step").to_pylist()
    assert data.column("timestamp").to_pylist() == pytest.approx(steps.column("step").to_pylist())
    assert data.column("index").to_pylist() == list(range(steps.num_rows))
    episodes = pq.read_table(out / "meta" / "episodes" / "chunk-000" / "file-000.parquet").to_pylist()
    assert [e["episode_index"] for e in episodes] == list(range(len(index)))
    assert [e["vlui/episode_id"] for e in episodes] == sorted(index)
    assert [e["length"] for e in episodes] == [index[e]["steps"] for e in sorted(index)]
    assert all(e["dataset_to_index"] - e["dataset_from_index"] == e["length"] for e in episodes)
    episode_of_frame = data.column("episode_index").to_pylist()
    assert all(episode_of_frame[e["dataset_from_index"]:e["dataset_to_index"]] == [e["episode_index"]] * e["length"]
               for e in episodes)
    tasks = pq.read_table(out / "meta" / "tasks.parquet").to_pandas()
    assert sorted(tasks.index) == ["open the clock app", "turn on airplane mode"]
    assert all(tasks.loc[e["tasks"][0], "task_index"] == data.column("task_index")[e["dataset_from_index"]].as_py()
               for e in episodes)
    stats = json.loads((out / "meta" / "stats.json").read_text())
    assert set(stats) == set(features) and np.asarray(stats["observation.image"]["mean"]).shape == (3, 1, 1)
    assert stats["action"]["count"] == [steps.num_rows] and len(stats["action"]["mean"]) == 4
    # the data files read with datasets as LeRobot reads them: screens as images
    frames = datasets.Dataset.from_parquet(str(out / "data" / "chunk-000" / "file-000.parquet"),
                                           cache_dir=str(tmp_path / "cache"))
    assert isinstance(frames[0]["observation.image"], Image.Image)
    card = (out / CARD).read_text()
    assert "- LeRobot" in card and "data_files: data/*/*.parquet" in card and "SIL Open Font License" in card
    assert "unseen_task" in card


@pytest.mark.skipif(not os.environ.get("VLUI_LEROBOT_PYTHON"),
                    reason="lerobot 0.4 pins huggingface-hub<0.36 and datasets<5 (vlui locks 2.4 and 5.2), so it cannot "
                           "share vlui's environment: set VLUI_LEROBOT_PYTHON to a Python with lerobot installed "
                           "(docs/sharing.md) to load the export with it")
def test_lerobot_loads_the_export(tiny_dataset: Path, tmp_path: Path) -> None:
    out = export_lerobot(tiny_dataset, tmp_path / "lerobot")["out"]
    run = subprocess.run([os.environ["VLUI_LEROBOT_PYTHON"], str(LEROBOT_CHECK), out], capture_output=True, text=True,
                         timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    _, table = read_dataset(tiny_dataset)
    steps = [r for r in table.to_pylist() if not r["is_last"]]
    assert seen["frames"] == len(steps) and seen["episodes"] == len(read_index(tiny_dataset))
    assert seen["image"] == [3, 256, 128] and seen["camera_keys"] == ["observation.image"]
    first = np.asarray(Image.open(io.BytesIO(steps[0]["screen"])).convert("RGB"), dtype=np.int64)
    assert seen["first_image_sums"] == first.sum(axis=(0, 1)).tolist()  # the very pixels of the dataset's screen
    assert seen["action"] == pytest.approx(steps[0]["action"]) and seen["task"] == steps[0]["instruction"]
    assert seen["chunk_shape"] == [4, 4]  # four actions from the frame on (delta_timestamps), as chunking policies read


def test_bad_exports_and_pushes_are_one_line(tiny_dataset_copy: Path, tmp_path: Path, capsys) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "x").write_text("x")
    assert main(["export", "--format", "lerobot", str(tiny_dataset_copy), "--out", str(taken)]) == 2
    assert main(["export", "--format", "lerobot", str(tiny_dataset_copy), "--out",
                 str(tiny_dataset_copy / "inside")]) == 2
    assert main(["export", "--format", "lerobot", str(tmp_path / "nothing"), "--out", str(tmp_path / "o")]) == 2
    assert main(["push", str(tiny_dataset_copy), "not a repo"]) == 2
    assert main(["push", str(tiny_dataset_copy), "someone/tiny"]) == 2  # the suite runs with HF_HUB_OFFLINE=1
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"error: {taken} already exists: export into a new folder (--out), or delete it first",
                     f"error: {tiny_dataset_copy / 'inside'} is inside the dataset {tiny_dataset_copy}: export "
                     "somewhere else",
                     f"error: no dataset at {tmp_path / 'nothing'} (no meta/info.json): give a dataset's folder or its "
                     "name in data/",
                     "error: 'not a repo' is not a Hub repo id (owner/name)",
                     f"error: uploading {tiny_dataset_copy} to someone/tiny: the Hub cannot be reached (no network, or "
                     "HF_HUB_OFFLINE=1): connect to the network to upload"]
    assert not (tmp_path / "o").exists() and not any(tmp_path.glob(".*.tmp"))
    assert read_splits(tiny_dataset_copy) == {}
