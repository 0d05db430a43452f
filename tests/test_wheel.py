"""`pip install .` gives a vlui that works anywhere: a wheel built from the checkout, installed into a fresh virtual
environment, collects and evaluates from a folder outside the checkout, with its configs and snapshots found in the
package and its outputs written where it runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.integration

SOURCES = ("vlui", "configs", "envs", "pyproject.toml", "setup.py", "MANIFEST.in", "README.md")


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    out = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, f"{args}: {out.stdout[-2000:]}{out.stderr[-3000:]}"
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed. Its heavy dependencies (torch, ...) come from the suite's own
    environment through a .pth line: nothing is downloaded, and the editable vlui there stays out of sight (a
    directory named in a .pth file is added to sys.path without running the .pth files inside it)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"  # a copy, so the build leaves nothing in the checkout
    for name in SOURCES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(ROOT / name, src / name, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                          if (ROOT / name).is_dir() else {}))
    uv = shutil.which("uv") or str(ROOT / ".tools" / "bin" / "uv")
    run(uv, "build", "--wheel", "--no-build-isolation", "--offline", "--python", sys.executable, "--out-dir",
        tmp / "dist", src, cwd=tmp)
    (wheel,) = (tmp / "dist").glob("vlui-*.whl")
    venv = tmp / "venv"
    run(uv, "venv", "--offline", "--python", sys.executable, venv, cwd=tmp)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "suite_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run(uv, "pip", "install", "--offline", "--no-deps", "--python", venv / "bin" / "python", wheel, cwd=tmp)
    return venv


def test_the_installed_package_is_the_wheel_with_its_data(installed: Path, tmp_path: Path) -> None:
    out = run(installed / "bin" / "python", "-c", "import vlui, vlui.resources as r; print(vlui.__file__); "
              "print(r.checkout()); print(r.shipped('configs')); print(r.shipped('envs'))", cwd=tmp_path)
    package, checkout, configs, envs = out.stdout.split()
    assert Path(package).is_relative_to(installed) and checkout == "None"
    assert (Path(configs) / "train.yaml").is_file() and (Path(envs) / "000.yaml").is_file()


@pytest.mark.slow
def test_collect_and_evaluate_run_from_outside_the_checkout(installed: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("VLUI_ROOT", "PYTHONPATH")}
    env.update(HF_HUB_OFFLINE="1", WANDB_MODE="offline")
    common = ["tasks=[airplane_on]", "env.snapshots=[000,030]", "env.num_envs=1"]
    run(installed / "bin" / "vlui-collect", "dataset=mine", *common, cwd=tmp_path, env=env)
    index = [json.loads(line) for line in (tmp_path / "data" / "mine" / "meta" / "episodes.jsonl").open()]
    assert len(index) == 2 and all(e["success"] for e in index)  # written where it ran, not into site-packages
    run(installed / "bin" / "vlui-evaluate", "agent=expert", *common, "runs=1", "adaptive_metrics=false",
        "name=wheel", cwd=tmp_path, env=env)
    (results,) = (tmp_path / "outputs").rglob("results.json")
    assert json.loads(results.read_text())["overall"]["success_rate"] == 1.0
    assert not any(installed.rglob("episodes.jsonl"))
