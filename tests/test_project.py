"""The project's own files: setup is idempotent, the lock matches pyproject, generated data stays out of git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.integration
def test_setup_is_idempotent_and_skips_what_is_done() -> None:
    out = subprocess.run(["bash", "scripts/setup.sh"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "system packages present" in out.stdout
    assert "installing" not in out.stdout  # neither system packages nor uv are installed again
    assert "ready:" in out.stdout


def test_lock_file_is_up_to_date_with_pyproject() -> None:
    out = subprocess.run([str(ROOT / ".tools/bin/uv"), "lock", "--check", "--offline"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"uv.lock is stale; run `.tools/bin/uv lock`:\n{out.stderr}"


def test_generated_content_is_ignored_by_git() -> None:
    for path in ["data/some_dataset/episodes.parquet", "checkpoints/x/y/last.ckpt", "outputs/a", ".venv/x"]:
        out = subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT)
        assert out.returncode == 0, f"{path} would be committed"
    for path in ["data/README.md", "checkpoints/README.md", "envs/000.yaml"]:
        assert subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT).returncode == 1, path


def test_code_passes_the_linter() -> None:
    out = subprocess.run([str(ROOT / ".venv/bin/ruff"), "check", "--output-format", "concise", "."], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout
