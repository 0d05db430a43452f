"""The same command gives the same output in another process, whatever the interpreter's hash seed: generated phones,
task-template instances, collected demonstrations. (Evaluation records and PPO's weights across a kill and a new
process: tests/eval/test_evaluate.py and tests/jobs/test_ppo.py.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from vlui.data.format import read_dataset

pytestmark = pytest.mark.integration


def python(*args: str, hash_seed: int, timeout: float = 600) -> str:
    """``python ARGS`` from the repository root in a new process with PYTHONHASHSEED=hash_seed; its stdout."""
    out = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                         env={**os.environ, "PYTHONHASHSEED": str(hash_seed)})
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_generated_phones_are_the_same_files_in_every_process(tmp_path: Path) -> None:
    out, written = tmp_path / "phones", []
    for hash_seed in (1, 2):  # the same folder each time: the files name their own path
        shutil.rmtree(out, ignore_errors=True)
        python("-m", "vlui.sim", "snapshots", "generate", "40", "--seed", "7", "--out", str(out), hash_seed=hash_seed)
        written.append(files(out))
    assert len(written[0]) == 40 and written[0] == written[1]


def test_task_template_instances_are_the_same_in_every_process() -> None:
    code = ("from vlui.tasks.templates import instances\n"
            "for t in instances('create_alarm', 3, 20, 'train'): print(t.id, t.instruction, t.regex, sorted(t.state))")
    a, b = (python("-c", code, hash_seed=s) for s in (1, 2))
    assert len(a.splitlines()) == 20 and a == b


@pytest.mark.slow
def test_a_collection_is_the_same_demonstrations_in_every_process(tmp_path: Path) -> None:
    for hash_seed, name in ((1, "a"), (2, "b")):
        python("collect.py", f"paths.data_dir={tmp_path}", f"dataset={name}", "tasks=[airplane_on,alarm_9am_on]",
               "env.snapshots=[000,105,random:2]", "env.observation_height=64", "env.observation_width=32",
               f"hydra.run.dir={tmp_path}/run-{name}", hash_seed=hash_seed)
    (info_a, a), (info_b, b) = read_dataset(tmp_path / "a"), read_dataset(tmp_path / "b")
    assert info_a == info_b and len(set(a.column("episode_id").to_pylist())) == 8
    assert a.equals(b)  # every step: screens, XML, actions, rewards
