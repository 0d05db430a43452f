"""The project's own files: setup is idempotent, the lock matches pyproject, generated data stays out of git, the
docs' links resolve."""

from __future__ import annotations

import re
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


_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(markdown: str) -> set[str]:
    """GitHub's ids for a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered."""
    ids: set[str] = set()
    counts: dict[str, int] = {}
    for heading in re.findall(r"^#+ +(.*?) *$", re.sub(r"```.*?```", "", markdown, flags=re.S), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        n = counts.get(slug, 0)
        ids.add(slug if n == 0 else f"{slug}-{n}")
        counts[slug] = n + 1
    return ids


def test_relative_links_in_the_readme_and_docs_resolve() -> None:
    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for target in _LINK.findall(_CODE.sub("", page.read_text(encoding="utf-8"))):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path) if path else page
            if not dest.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest.read_text(encoding="utf-8")):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "broken links:\n" + "\n".join(broken)
