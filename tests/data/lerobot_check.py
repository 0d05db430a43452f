"""Load a LeRobot export with ``lerobot`` itself and print what it read as one JSON line: run by
tests/data/test_sharing.py under the interpreter of ``VLUI_LEROBOT_PYTHON`` (lerobot cannot share vlui's environment).

    python tests/data/lerobot_check.py EXPORT_DIR
"""

import json
import sys

from lerobot.datasets.lerobot_dataset import LeRobotDataset

root = sys.argv[1]
dataset = LeRobotDataset("vlui/export", root=root)
item = dataset[0]
chunked = LeRobotDataset("vlui/export", root=root, delta_timestamps={"action": [0.0, 1.0, 2.0, 3.0]})
print(json.dumps({
    "frames": len(dataset), "episodes": dataset.num_episodes, "fps": dataset.fps,
    "camera_keys": dataset.meta.camera_keys, "image": list(item["observation.image"].shape),
    "first_image_sums": (item["observation.image"] * 255).round().long().sum(dim=(1, 2)).tolist(),  # exact
    "action": item["action"].tolist(), "task": item["task"],
    "chunk_shape": list(chunked[0]["action"].shape),
    "stats": sorted(dataset.meta.stats),
}))
