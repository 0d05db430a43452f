"""Write ``bmoca25_tasks.tsv``: B-MoCA release 2.5's task files as one table, read from a B-MoCA repository.

    python tests/reference/make_bmoca25.py PATH [--rev REV] [--out FILE]

PATH is a clone of gimme1dollar/b-moca (a work tree, or a bare or mirror git directory, read at ``--rev``, default
HEAD). The table has one row per ``asset/tasks/<app>/*.textproto``, in path order, and says, for each:

- ``instruction``: what B-MoCA's environment (``bmoca/environment/environment.py``) makes of the file name: the last
  path component up to its first ``.``, with ``_`` turned into spaces (the environment then prefixes ``"Goal: "``);
- ``max_episode_steps`` and ``reset_steps`` (compact: ``press_button:HOME``, steps joined by ``;``);
- ``log_filters``, ``log_regex`` and ``log_reward``: the file's ``log_parsing_config`` (filters joined by ``,``; the
  regex after text-format unescaping, as AndroidEnv compiles it);
- ``detector``: ``logcat`` when the file's regex carries a reward above 0; ``evaluator`` when B-MoCA's
  ``Evaluator.success_detector`` (``bmoca/environment/evaluator_script/evaluator.py``) has a branch for
  ``"Goal: " + instruction``, which it compares for equality, in which case ``evaluator`` names the script that
  defines the function the branch calls; ``none`` when neither, so that the release never rewards the task (``note``
  then names the branch that comes closest);
- ``device_time``: the time B-MoCA's environment sets on the device (``toybox date``, at every reset and step) when the
  instruction contains one of the times it looks for, as ISO 8601; empty otherwise;
- ``source``: ``gimme1dollar/b-moca@<commit>``.

Only the text-format subset B-MoCA's task files use is read; anything else stops the script with the file's name.
"""

from __future__ import annotations

import argparse
import ast
import csv
import difflib
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

TASKS = "asset/tasks/"
ENVIRONMENT = "bmoca/environment/environment.py"
EVALUATORS = "bmoca/environment/evaluator_script/"
COLUMNS = ("app", "file", "instruction", "max_episode_steps", "reset_steps", "log_filters", "log_regex", "log_reward",
           "detector", "evaluator", "device_time", "source", "note")
OUT = Path(__file__).resolve().parent / "bmoca25_tasks.tsv"


class Repo:
    """A B-MoCA repository: a work tree read from disk, or a git directory read at a revision."""

    def __init__(self, path: Path, rev: str) -> None:
        self.path = path
        self.tree = (path / TASKS).is_dir()
        self.rev = rev
        self.commit = self._git("rev-parse", f"{rev}^{{commit}}").decode().strip()

    def _git(self, *args: str) -> bytes:
        done = subprocess.run(["git", "-C", str(self.path), *args], capture_output=True)
        if done.returncode:
            sys.exit(f"git {' '.join(args)} in {self.path}: {done.stderr.decode().strip()}")
        return done.stdout

    def files(self, prefix: str) -> list[str]:
        if self.tree:
            return sorted(str(p.relative_to(self.path)) for p in (self.path / prefix).rglob("*") if p.is_file())
        out = self._git("ls-tree", "-r", "-z", "--name-only", self.rev, "--", prefix)
        return sorted(name for name in out.decode("utf-8").split("\0") if name)

    def read(self, path: str) -> str:
        if self.tree:
            return (self.path / path).read_text(encoding="utf-8")
        return self._git("show", f"{self.rev}:{path}").decode("utf-8")


# --------------------------------------------------------------------------------------------- text format
_TOKEN = re.compile(r'\s+|#[^\n]*|"(?:[^"\\\n]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"#]+')
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'"}


def _unescape(body: str) -> str:
    """A text-format string's value: the C escapes decoded, any other backslash kept with its character (as
    protobuf's Python parser leaves ``\\[``)."""
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), body)


def parse_textproto(text: str, name: str) -> dict:
    """A text-format message as a dict of field -> list of values (a value: str, or a dict for a message)."""
    tokens = [t for t in _TOKEN.findall(text) if t.strip() and not t.startswith("#")]
    pos = 0

    def fail(what: str) -> None:
        sys.exit(f"{name}: {what} at token {pos} ({tokens[pos] if pos < len(tokens) else 'end'!r})")

    def value() -> object:
        nonlocal pos
        tok = tokens[pos]
        if tok == "{":
            pos += 1
            msg = message("}")
            pos += 1
            return msg
        if tok.startswith('"'):
            pos += 1
            return _unescape(tok[1:-1])
        if tok in "[]{}:,":
            fail("a value expected")
        pos += 1
        return tok

    def message(end: str | None) -> dict:
        nonlocal pos
        out: dict = {}
        while pos < len(tokens) and tokens[pos] != end:
            if tokens[pos] == ",":
                pos += 1
                continue
            field = tokens[pos]
            if not re.fullmatch(r"[A-Za-z_]\w*", field):
                fail("a field name expected")
            pos += 1
            if pos < len(tokens) and tokens[pos] == ":":
                pos += 1
            if pos < len(tokens) and tokens[pos] == "[":
                pos += 1
                while tokens[pos] != "]":
                    if tokens[pos] == ",":
                        pos += 1
                        continue
                    out.setdefault(field, []).append(value())
                pos += 1
            else:
                out.setdefault(field, []).append(value())
        if end is not None and pos >= len(tokens):
            fail(f"{end!r} expected")
        return out

    return message(None)


def _one(msg: dict, field: str, name: str) -> object:
    values = msg.get(field, [])
    if len(values) != 1:
        sys.exit(f"{name}: expected one {field}, found {len(values)}")
    return values[0]


def compact_step(step: dict, name: str) -> str:
    """A reset step in a word: ``press_button:HOME``; the subset B-MoCA's files use, else the script stops."""
    if set(step) == {"adb_request"}:
        request = _one(step, "adb_request", name)
        if set(request) == {"press_button"}:
            return f"press_button:{_one(_one(request, 'press_button', name), 'button', name)}"
    sys.exit(f"{name}: a reset step this script does not know: {step}")


@dataclass
class TaskFile:
    max_steps: int
    reset: str
    filters: str
    regex: str
    reward: str


def read_task_file(text: str, name: str) -> TaskFile:
    msg = parse_textproto(text, name)
    unknown = set(msg) - {"reset_steps", "max_episode_steps", "log_parsing_config"}
    if unknown:
        sys.exit(f"{name}: fields this script does not know: {sorted(unknown)}")
    config = _one(msg, "log_parsing_config", name)
    regexps = _one(config, "log_regexps", name)
    if set(regexps) != {"reward_event"}:
        sys.exit(f"{name}: log_regexps other than one reward_event: {sorted(regexps)}")
    event = _one(regexps, "reward_event", name)
    return TaskFile(max_steps=int(_one(msg, "max_episode_steps", name)),
                    reset=";".join(compact_step(s, name) for s in msg.get("reset_steps", [])),
                    filters=",".join(config.get("filters", [])), regex=_one(event, "event", name),
                    reward=_one(event, "reward", name))


def instruction_of(path: str) -> str:
    """B-MoCA's rule (``BMocaEnv.__init__``), without its ``"Goal: "`` prefix."""
    return path.split("/")[-1].split(".")[0].replace("_", " ")


# --------------------------------------------------------------------------------------------- B-MoCA's code
def evaluator_branches(repo: Repo) -> list[tuple[str, str]]:
    """(the instruction an ``Evaluator.success_detector`` branch compares with, the script of the function it calls),
    in the code's order (the first equal one wins)."""
    code = ast.parse(repo.read(EVALUATORS + "evaluator.py"))
    packages = {a.asname or a.name: a.name for node in code.body if isinstance(node, ast.Import) for a in node.names}
    scripts: dict[tuple[str, str], str] = {}
    for alias, module in packages.items():
        folder = module.replace(".", "/") + "/"
        for node in ast.parse(repo.read(folder + "__init__.py")).body:
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                for a in node.names:
                    scripts[alias, a.asname or a.name] = folder + node.module + ".py"
    branches = []
    for node in ast.walk(code):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)):
            continue
        sides = [node.test.left, *node.test.comparators]
        text = [s.value for s in sides if isinstance(s, ast.Constant) and isinstance(s.value, str)]
        call = node.body[0].value if node.body and isinstance(node.body[0], ast.Return) else None
        if (len(text) == 1 and isinstance(node.test.ops[0], ast.Eq) and isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)):
            key = (call.func.value.id, call.func.attr)
            if key not in scripts:
                sys.exit(f"evaluator.py: {key[0]}.{key[1]} is not imported by its package")
            branches.append((node.lineno, text[0], scripts[key]))
    return [(text, script) for _, text, script in sorted(branches)]


def device_times(repo: Repo) -> list[tuple[str, str]]:
    """(text looked for in the instruction, the time set, ISO 8601) from ``BMocaEnv.set_device``, in order."""
    code = ast.parse(repo.read(ENVIRONMENT))
    found = []
    for node in ast.walk(code):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                and isinstance(node.test.ops[0], ast.In) and isinstance(node.test.left, ast.Constant)):
            continue
        text = "".join(v.value for n in ast.walk(ast.Module(body=node.body, type_ignores=[]))
                       if isinstance(n, ast.JoinedStr) for v in n.values if isinstance(v, ast.Constant))
        m = re.search(r"toybox date (\d\d)(\d\d)(\d\d)(\d\d)(\d{4})\.(\d\d)", text)
        if m:
            month, day, hour, minute, year, second = m.groups()
            found.append((node.lineno, node.test.left.value, f"{year}-{month}-{day}T{hour}:{minute}:{second}"))
    if not found:
        sys.exit(f"{ENVIRONMENT}: no time setting found")
    return [(key, iso) for _, key, iso in sorted(found)]


# --------------------------------------------------------------------------------------------- the table
def rows(repo: Repo) -> list[dict[str, str]]:
    branches = evaluator_branches(repo)
    times = device_times(repo)
    files = [f for f in repo.files(TASKS) if f.endswith(".textproto")]
    instructions = {f: instruction_of(f) for f in files}
    used = {text for text, _ in branches if any("Goal: " + i == text for i in instructions.values())}
    unused = [(text, script) for text, script in branches if text not in used]
    out = []
    for path in files:
        name = path[len(TASKS):]
        task = read_task_file(repo.read(path), name)
        instruction = instructions[path]
        script = next((s for text, s in branches if text == "Goal: " + instruction), "")
        logcat = float(task.reward) > 0
        notes = []
        if logcat and script:
            detector = "logcat+evaluator"
        elif logcat:
            detector = "logcat"
        elif script:
            detector = "evaluator"
        else:
            detector = "none"
            near = difflib.get_close_matches("Goal: " + instruction, [t for t, _ in unused], n=1, cutoff=0)
            if near:
                s = next(s for t, s in unused if t == near[0])
                notes.append(f"no Evaluator branch is equal to its instruction; the closest is {near[0]!r} "
                             f"({s[len(EVALUATORS):]})")
        if not logcat and not task.regex.startswith("This task is independent"):
            notes.append(f"its log regex carries reward {task.reward}")
        out.append({"app": name.split("/")[0], "file": name, "instruction": instruction,
                    "max_episode_steps": str(task.max_steps), "reset_steps": task.reset,
                    "log_filters": task.filters, "log_regex": task.regex, "log_reward": task.reward,
                    "detector": detector, "evaluator": script[len(EVALUATORS):] if script else "",
                    "device_time": next((iso for key, iso in times if key in "Goal: " + instruction), ""),
                    "source": f"gimme1dollar/b-moca@{repo.commit}", "note": "; ".join(notes)})
    return out


def read_args(doc: str, out: Path, argv: list[str] | None) -> tuple[Repo, Path]:
    """The command line of a script that reads a clone of B-MoCA: the repository (at ``--rev``) and ``--out``."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("repo", type=Path, help="a clone of gimme1dollar/b-moca (work tree or git directory)")
    parser.add_argument("--rev", default="HEAD", help="the revision to read from a git directory (default HEAD)")
    parser.add_argument("--out", type=Path, default=out, help=f"where to write it (default {out})")
    args = parser.parse_args(argv)
    return Repo(args.repo, args.rev), args.out


def main(argv: list[str] | None = None) -> None:
    repo, out = read_args(__doc__, OUT, argv)
    table = rows(repo)
    for row in table:
        bad = [c for c in COLUMNS if any(ch in row[c] for ch in "\t\n\r")]
        if bad:
            sys.exit(f"{row['file']}: a tab or line break in {bad}")
    with out.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, COLUMNS, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_NONE,
                                escapechar=None, quotechar=None)
        writer.writeheader()
        writer.writerows(table)
    print(f"{out}: {len(table)} tasks from {table[0]['source'] if table else repo.path}")


if __name__ == "__main__":
    main()
