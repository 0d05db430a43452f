"""The served shell's house stays as drawn: each command family is a module of plain functions ``(sh, s, io, args)``
with its own ``COMMANDS`` table, the shell's table is their disjoint union, a command sees the shell only through
:class:`~vlui.served.shell.context.ShellApi` (tests/test_architecture.py keeps every module, these
included, off other modules' private names)."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from vlui.served.phone import ServedPhone
from vlui.served.shell import COMMANDS, Shell, runner
from vlui.served.shell.builtins import SHELL_ONLY
from vlui.served.shell.context import ShellApi
from vlui.served.shell.files import BIN_DIRS, TOYBOX
from vlui.served.shell.filters import FILTERS

SHELL_DIR = Path(runner.__file__).parent

FAMILIES = ("apps", "builtins", "dumpsys", "files", "log", "procs", "screen", "sqlite", "system")

# Every command the shell ran when its families were mixins of Shell: none may be lost.
OLD_COMMANDS = {
    ":", "[", "am", "break", "cd", "chmod", "chown", "cmd", "content", "continue", "cp", "date", "df", "dumpsys", "echo",
    "env", "exec", "exit", "export", "false", "getprop", "id", "input", "local", "log", "logcat", "ls", "media",
    "mkdir", "monkey", "mv", "pm", "pwd", "read", "return", "rm", "rmdir", "screencap", "service", "set", "setprop",
    "settings", "sh", "sleep", "sqlite3", "start", "stop", "svc", "test", "touch", "true", "uiautomator", "unset",
    "whoami", "wm",
}


def family(name: str):
    return importlib.import_module(f"vlui.served.shell.{name}")


def shell_api_members() -> set[str]:
    return {n for n, v in vars(ShellApi).items() if callable(v) and not n.startswith("_")} | set(
        ShellApi.__annotations__)


@pytest.mark.parametrize("name", FAMILIES)
def test_a_family_is_module_level_functions_listed_in_its_table(name: str) -> None:
    module = family(name)
    assert isinstance(module.COMMANDS, dict) and module.COMMANDS
    for command, fn in module.COMMANDS.items():
        where = f"{name}.COMMANDS[{command!r}]"
        assert inspect.isfunction(fn), f"{where} is not a function"
        assert fn.__module__ == module.__name__ and fn.__qualname__ == fn.__name__, f"{where} is not {name}'s own"
        assert getattr(module, fn.__name__) is fn, f"{where} is not a module-level function"
        assert list(inspect.signature(fn).parameters) == ["sh", "s", "io", "args"], where
    # no mixin comes back: no class of the family has a method that takes a command's arguments
    for cls_name, cls in vars(module).items():
        if inspect.isclass(cls) and cls.__module__ == module.__name__:
            for method_name, method in vars(cls).items():
                if inspect.isfunction(method):
                    params = list(inspect.signature(method).parameters)[1:]
                    assert params[:3] != ["s", "io", "args"], f"{name}.{cls_name}.{method_name} is a command method"


def defines_commands(path: Path) -> bool:
    """Whether a module assigns ``COMMANDS`` at its top level."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "COMMANDS" for t in targets):
            return True
    return False


def test_the_shell_table_is_the_families_tables_disjoint_union() -> None:
    assert sorted(m.__name__.rsplit(".", 1)[1] for m in runner.FAMILIES) == list(FAMILIES)
    with_tables = {p.stem for p in SHELL_DIR.glob("*.py") if p.stem != "runner" and defines_commands(p)}
    assert with_tables == set(FAMILIES), "a module with a COMMANDS table that the shell does not merge"
    tables = [family(name).COMMANDS for name in FAMILIES]
    assert sum(len(t) for t in tables) == len(COMMANDS), "a command is defined by two families"
    assert COMMANDS == {k: v for t in tables for k, v in t.items()}
    missing = OLD_COMMANDS - set(COMMANDS)
    assert not missing, f"commands lost: {sorted(missing)}"
    assert Shell.__bases__ == (object,), "the shell inherits no command family"


def test_the_shell_is_what_the_interface_says() -> None:
    """Each member of ShellApi is on Shell, its methods with the same parameters."""
    shell = Shell(ServedPhone("000"))
    for name in shell_api_members():
        assert hasattr(shell, name), name
        protocol_fn = vars(ShellApi).get(name)
        if protocol_fn is not None:
            assert inspect.signature(getattr(Shell, name)).parameters.keys() == \
                inspect.signature(protocol_fn).parameters.keys(), name


def uses_of_the_shell(tree: ast.AST) -> set[str]:
    """What a family's code reads of ``sh`` (a command's argument, or a helper's ``self.sh``)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            owner = node.value
            if (isinstance(owner, ast.Name) and owner.id == "sh") or (
                    isinstance(owner, ast.Attribute) and owner.attr == "sh"):
                found.add(node.attr)
    return found


def test_commands_use_the_shell_only_through_its_interface_and_all_of_it() -> None:
    """The interface lists what the families use, nothing more and nothing less; no family imports the runner."""
    used: set[str] = set()
    for name in FAMILIES:
        tree = ast.parse((SHELL_DIR / f"{name}.py").read_text(encoding="utf-8"))
        uses = uses_of_the_shell(tree)
        assert uses <= shell_api_members(), f"{name} uses {sorted(uses - shell_api_members())} beyond ShellApi"
        used |= uses
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert "vlui.served.shell.runner" not in imported and "vlui.served.shell" not in imported, name
    assert used == shell_api_members(), f"ShellApi lists what no command uses: {sorted(shell_api_members() - used)}"


def test_the_system_folders_hold_the_shells_commands() -> None:
    """``ls /system/bin`` and ``/system/xbin`` (vlui/served/data/system_bin.yaml) list every command the shell runs but
    mksh's own builtins, each once, and toybox's commands are among them."""
    listed = [name for names in BIN_DIRS.values() for name in names]
    assert len(listed) == len(set(listed)), "a program in two folders"
    assert set(listed) == (set(COMMANDS) | set(FILTERS)) - SHELL_ONLY
    assert set(TOYBOX) <= set(listed)
