"""Episodes as the viewer shows them, read from what vlui writes: a collected dataset (docs/dataset.md), an
evaluation's folder (docs/evaluation.md), and an LLM or MLLM agent's evaluation, whose lines carry the agent's
``transcript`` (docs/viewer.md).

Each folder gives the page plain JSON: a summary of every episode for the list, and on demand one episode's steps,
each with its screen's URL, the action as numbers and as what it did, the outcome, the log line that decided
success, and for an LLM agent what it was asked and what it answered. What an episode lacks (screens an evaluation
did not keep, a log line it was written before) is said in its ``notes``; an episode that cannot be read carries its
``problem``, and the others stay viewable. A path that is no such folder is a :class:`~vlui.errors.VluiError`.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

from vlui.data.format import dataset_spec, read_episode, read_info, writer_pid
from vlui.data.images import IMAGE_REF, IMAGES
from vlui.env.actions import LONG_PRESS_MS, ActionError, ActionParser, Command
from vlui.errors import VluiError
from vlui.spec import ObsActionSpec
from vlui.tasks.catalog import Task, catalog
from vlui.tasks.templates import instance_from_id

WHAT = "give a collected dataset (data/<dataset>) or an evaluation's folder (outputs/evaluate/<name>)"
HASH = re.compile(r"[0-9a-f]{64}")


def open_folder(path: str | Path) -> Folder:
    """The dataset or evaluation at ``path`` (its folder, or its ``episodes.jsonl``)."""
    path = Path(path)
    if not path.exists():
        raise VluiError(f"{path} does not exist: {WHAT}")
    if path.is_file() and path.name == "episodes.jsonl":
        path = path.parent.parent if path.parent.name == "meta" else path.parent
    if (path / "meta" / "info.json").is_file():
        return DatasetFolder(path)
    if (path / "episodes.jsonl").is_file() or (path / "recipe.json").is_file():
        return EvaluationFolder(path)
    inside = sorted(p.name for p in path.iterdir() if p.is_dir() and (
        (p / "meta" / "info.json").is_file() or (p / "episodes.jsonl").is_file())) if path.is_dir() else []
    if inside:
        more = f" and {len(inside) - 5} more" if len(inside) > 5 else ""
        raise VluiError(f"{path} holds {len(inside)} datasets or evaluations ({', '.join(inside[:5])}{more}), not "
                        f"one: give one of them, e.g. {path / inside[0]}")
    raise VluiError(f"{path} is neither a collected dataset (no meta/info.json) nor an evaluation (no "
                    f"episodes.jsonl): {WHAT}")


def json_lines(path: Path) -> list[tuple[int, Any, str | None]]:
    """Each line of a JSON-lines file as ``(number, value, None)``, or ``(number, None, why)`` when it is not JSON.
    A last line without its newline (a writer killed mid-line, or one still writing) is left out."""
    text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    lines = text.split("\n")[:-1]  # the text after the last newline is not a whole line yet
    out: list[tuple[int, Any, str | None]] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append((n, json.loads(line), None))
        except json.JSONDecodeError as err:
            out.append((n, None, f"not JSON: {err.msg} at column {err.colno}"))
    return out


def task_of(task_id: str) -> Task | None:
    """The catalog's task of that id (a template's instance too), or None for one this vlui does not know."""
    try:
        return instance_from_id(task_id) if "@" in task_id else catalog().get(task_id)
    except VluiError:
        return None


def detector_text(task: Task | None) -> str:
    """How the task's success is detected, in words."""
    if task is None:
        return "unknown: this vlui does not know the task"
    if task.log_tag:
        return f"a log line tagged {task.log_tag} whose message matches {task.regex}"
    if task.evaluator_check:
        return f"B-MoCA's evaluator check ({task.evaluator or 'none in the release'}): {json.dumps(task.evaluator_check)}"
    return f"the device's state: {json.dumps(task.state_check)}"


def gesture(kind: str, touch: Any, lift: Any, key: str | None, role: str = "done") -> dict[str, Any]:
    """One gesture for the page to draw: ``kind`` tap, swipe or key, normalised (y, x) points, ``role`` ``done``
    (what was done on the phone) or ``label`` (a DAgger round's expert label, not acted on)."""
    touch = [float(v) for v in touch]
    lift = [float(v) for v in (lift if lift is not None else touch)]
    return {"kind": kind, "touch": touch, "lift": lift, "key": key or "", "role": role}


def meaning(g: dict[str, Any]) -> str:
    """What a gesture does, in words: where a tap lands, which way a swipe goes, which key is pressed."""
    (ty, tx), (ly, lx) = g["touch"], g["lift"]
    if g["kind"] == "key":
        return f"press {g['key']} (a tap on its navigation point at x {tx:.3f}, y {ty:.3f})"
    if g["kind"] == "swipe":
        dy, dx = ly - ty, lx - tx
        way = ("down" if dy > 0 else "up") if abs(dy) >= abs(dx) else ("right" if dx > 0 else "left")
        return f"swipe {way} from x {tx:.3f}, y {ty:.3f} to x {lx:.3f}, y {ly:.3f}"
    if g["kind"] == "long_press":
        return f"long press at x {tx:.3f}, y {ty:.3f} (held {LONG_PRESS_MS} ms)"
    return f"tap at x {tx:.3f}, y {ty:.3f}"


def parsed_gesture(parser: ActionParser, action: Any, role: str = "done") -> tuple[dict[str, Any] | None, str]:
    """A stored action read as the environment read it: the gesture and its meaning, or None and why not (text typed
    draws nothing: the meaning says what was typed)."""
    try:
        p = parser.parse(Command.from_record(action) if isinstance(action, dict) else action)
    except (ActionError, KeyError, TypeError, ValueError) as err:
        return None, f"an action the viewer cannot read: {err}"
    if p.kind == "type":
        return None, f"type {json.dumps(p.text)} into the field that has focus"
    if p.kind == "status":
        return None, f"declare the task {p.text}: the episode ends"
    if p.kind == "answer":
        return None, f"answer {json.dumps(p.text, ensure_ascii=False)}: the episode ends"
    if p.kind == "open_app":
        return None, f"open the app {p.text}"
    if p.kind == "wait":
        return None, "wait: a step with no input"
    if p.touch is None:  # the keyboard's enter key
        return None, f"press the keyboard's {p.key} key"
    g = gesture(p.kind, p.touch, p.lift, p.key, role)
    return g, meaning(g)


def rounded(action: list[float] | None) -> list[float] | None:
    """A dataset's action (float32, so 0.3 reads 0.30000001192092896) to 4 decimals, as an evaluation keeps its
    own."""
    return None if action is None else [round(float(v), 4) for v in action]


def episode_limit(task: Task | None, recipe: Any) -> int | None:
    """The steps an episode of ``task`` could take: the task's limit, or the recipe's ``env.step_limit`` (recorded
    only when set) where that is lower."""
    cap = ((recipe if isinstance(recipe, dict) else {}).get("env") or {}).get("step_limit")
    return None if task is None else task.step_limit if cap is None else min(task.step_limit, int(cap))


def success_text(task: Task | None, success: bool | None, line: str | None, steps: int, where: str,
                 again: str, limit: int | None = None) -> tuple[str | None, str]:
    """The log line that decided success and a sentence on it: where it is missing, why. ``limit``: the episode's
    step limit (:func:`episode_limit`); None, the task's."""
    if line:
        return line, "the task's detector fired on this log line"
    if success is None:
        return None, "not run to the end"
    if not success:
        limit = f" (its step limit is {limit or task.step_limit})" if task is not None else ""
        return None, f"no log line decided success in {steps} steps{limit}"
    if task is not None and not task.log_tag:
        return None, "judged by the device's state, which no log line says"
    return None, (f"{where} does not hold the log line that decided success (it was written before vlui kept it): "
                  f"{again} to keep it")


class Folder:
    """A folder of episodes the viewer reads; :func:`open_folder` makes the right one."""

    kind: ClassVar[str] = ""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.base = ""  # what the server puts before this folder's image addresses (several folders: "/<n>")

    def listing(self) -> dict[str, Any]:
        """The folder's title, notes and every episode's summary (``id``, ``task``, ``snapshot``, ``success``,
        ``steps``, ``label``, ``problem``; an evaluation's also its ``run``, ``episode`` and ``policy``, the name of
        the policy that acted where it evaluated several)."""
        raise NotImplementedError

    def episode(self, eid: str) -> dict[str, Any] | None:
        """One episode with its steps, or None when there is no episode ``eid``."""
        raise NotImplementedError

    def require(self, eid: str) -> None:
        """A :class:`VluiError` when the folder has no episode ``eid`` (what ``--episode`` names)."""
        episodes = self.listing()["episodes"]
        if not any(e["id"] == eid for e in episodes):
            some = ", ".join(e["id"] for e in episodes[:3]) or "none here yet"
            raise VluiError(f"{self.path} has no episode {eid!r}: give a dataset's episode id or an evaluation's key "
                            f"(e.g. {some})")

    def image(self, name: str) -> bytes | None:
        """An image by its content hash (``images/<hash>.png``), None when it is not there."""
        if not HASH.fullmatch(name):
            return None
        path = self.path / IMAGES / f"{name}.png"
        return path.read_bytes() if path.is_file() else None

    def screen(self, eid: str, step: int, full: bool) -> bytes | None:
        """A dataset's screen (PNG) of one step, None when there is none."""
        return None


# ------------------------------------------------------------------------------------------------------- datasets
class DatasetFolder(Folder):
    """A collected dataset: its index lists the episodes, each episode's file holds its screens and actions."""

    kind: ClassVar[str] = "dataset"
    CACHED = 4  # episodes whose rows are kept in memory for their screens

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.info = read_info(path)
        self.spec = dataset_spec(self.info, path)
        self.parser = ActionParser.of(self.spec, clip=True)
        self.rows: OrderedDict[str, tuple[str, list[dict[str, Any]]]] = OrderedDict()
        self.lock = threading.Lock()

    def entries(self) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
        """The episodes (id -> index entry; files no index line names yet are read for theirs) and a summary with
        its ``problem`` for each damaged index line."""
        found: dict[str, dict[str, Any]] = {}
        damaged = []
        for n, entry, why in json_lines(self.path / "meta" / "episodes.jsonl"):
            if why is None and not (isinstance(entry, dict) and isinstance(entry.get("file"), str)
                                    and "episode_id" in entry):
                why = "not an index entry (episode_id, file)"
            if why is not None:
                damaged.append({"id": f"index-line-{n}", "task": "?", "snapshot": "?", "success": None, "steps": None,
                                "label": "", "problem": f"line {n} of meta/episodes.jsonl is damaged ({why}): its "
                                                        "episode is listed from its file if the file is there"})
                continue
            found[str(entry["episode_id"])] = entry
        indexed = {e["file"] for e in found.values()}
        for path in sorted((self.path / "episodes").glob("chunk-*/episode_*.parquet")):
            rel = str(path.relative_to(self.path))
            if rel in indexed:
                continue
            eid = str(int(path.stem.split("_")[1]))
            try:
                first = read_episode(path, ["task_id", "snapshot_id", "seed", "success", "step"]).to_pylist()
            except VluiError as err:
                found[eid] = {"episode_id": eid, "task_id": "?", "snapshot_id": "?", "file": rel, "problem": str(err)}
                continue
            found[eid] = {"episode_id": eid, "task_id": first[0]["task_id"], "snapshot_id": first[0]["snapshot_id"],
                          "seed": first[0]["seed"], "success": first[0]["success"], "steps": len(first) - 1,
                          "file": rel}
        return found, damaged

    def listing(self) -> dict[str, Any]:
        found, damaged = self.entries()
        episodes = []
        for eid, e in sorted(found.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else -1):
            problem = e.get("problem")
            if problem is None and not (self.path / e["file"]).is_file():
                problem = f"its file {e['file']} is missing: run the collect.py command again to collect it"
            episodes.append({"id": eid, "task": str(e.get("task_id")), "snapshot": str(e.get("snapshot_id")),
                             "seed": e.get("seed"), "success": e.get("success"), "steps": e.get("steps"),
                             "label": "", "problem": problem})
        recipe = self.info.get("recipe") or {}
        agent = (recipe.get("agent") or {}).get("name", "?")
        notes = []
        pid = writer_pid(self.path)
        if pid:
            notes.append(f"a collection (pid {pid}) is still writing this dataset: reload to see its new episodes")
        return {"kind": self.kind, "path": str(self.path), "notes": notes, "episodes": damaged + episodes,
                "title": f"dataset {self.path.name}: {len(episodes)} episodes of agent={agent}"}

    def episode_rows(self, eid: str) -> tuple[str, list[dict[str, Any]]] | None:
        """The episode's file (relative to the dataset) and its rows in step order (kept for their screens), None
        when there is no such episode; a damaged or missing file is a :class:`VluiError` naming it."""
        with self.lock:
            if eid in self.rows:
                self.rows.move_to_end(eid)
                return self.rows[eid]
        entry = self.entries()[0].get(eid)
        if entry is None:
            return None
        path = self.path / entry["file"]
        if not path.is_file():
            raise VluiError(f"its file {entry['file']} is missing: run the collect.py command again to collect it")
        rows = sorted(read_episode(path).to_pylist(), key=lambda r: r["step"])
        with self.lock:
            self.rows[eid] = entry["file"], rows
            while len(self.rows) > self.CACHED:
                self.rows.popitem(last=False)
        return entry["file"], rows

    def episode(self, eid: str) -> dict[str, Any] | None:
        try:
            found = self.episode_rows(eid)
        except VluiError as err:
            return {"id": eid, "problem": str(err), "steps": [], "notes": []}
        if found is None:
            return None
        file, rows = found
        if not rows:
            return {"id": eid, "problem": "its file holds no rows", "steps": [], "notes": []}
        first = rows[0]
        task = task_of(first["task_id"])
        steps = []
        for r in rows:
            gestures, said = [], []
            if r["action"] is not None:
                done = r["acted"] if r["acted"] is not None else None
                label = gesture(r["action_kind"], r["touch"], r["lift"], r["action_key"],
                                "label" if done is not None else "done")
                if done is not None:
                    g, text = parsed_gesture(self.parser, done)
                    gestures += [g] if g else []
                    said.append(f"the policy did: {text}; the expert's label: {meaning(label)}")
                else:
                    said.append(meaning(label))
                gestures.append(label)
            full = r["screen_full"] is not None
            steps.append({
                "index": r["step"], "final": bool(r["is_last"]),
                "screen": (f"{self.base}/screen?id={quote(eid)}&step={r['step']}" + ("&full=1" if full else ""))
                if (r["screen"] is not None or full) else None,
                "screen_note": None if (r["screen"] is not None or full) else "this row holds no screen",
                "action": rounded(r["acted"] if r["acted"] is not None else r["action"]),
                "label": rounded(r["action"]) if r["acted"] is not None else None, "gestures": gestures,
                "meaning": "; ".join(said) if said else "the final screen: the episode ended",
                "reward": r["reward"], "terminated": bool(r["terminated"]), "truncated": bool(r["truncated"]),
                "success_line": r["success_line"], "llm": None})
        line = next((r["success_line"] for r in rows if r["success_line"]), None)
        success = bool(first["success"])
        limit = episode_limit(task, self.info.get("recipe"))
        line, said = success_text(task, success, line, len(rows) - 1, "this dataset", "collect it again", limit)
        return {"id": eid, "task": first["task_id"], "snapshot": first["snapshot_id"], "seed": first["seed"],
                "instruction": first["instruction"], "success": success, "detector": detector_text(task),
                "success_line": line, "success_note": said, "screen_size": [self.spec.height, self.spec.width],
                "facts": [["episode", eid], ["seed", first["seed"]], ["file", file]], "outcome_note": "",
                "notes": [], "problem": None, "steps": steps, "agent": None}

    def screen(self, eid: str, step: int, full: bool) -> bytes | None:
        try:
            found = self.episode_rows(eid)
        except VluiError:
            return None
        row = next((r for r in (found[1] if found else []) if r["step"] == step), None)
        if row is None:
            return None
        return row["screen_full"] if full and row["screen_full"] is not None else row["screen"]


# ---------------------------------------------------------------------------------------------------- evaluations
class EvaluationFolder(Folder):
    """An evaluation's folder: ``episodes.jsonl`` (the last line of an episode counts), ``recipe.json``, and the
    screens and request images it kept in ``images/``."""

    kind: ClassVar[str] = "evaluation"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.notes: list[str] = []
        self.recipe: dict[str, Any] = {}
        meta = path / "recipe.json"
        if meta.is_file():
            try:
                loaded = json.loads(meta.read_text(encoding="utf-8"))
                self.recipe = loaded if isinstance(loaded, dict) else {}
            except (json.JSONDecodeError, UnicodeDecodeError):
                self.notes.append("recipe.json is damaged: actions are read with the default tap threshold")

    def records(self) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
        """The episodes by key (the last line of each) and a summary with its ``problem`` per damaged line."""
        found: dict[str, dict[str, Any]] = {}
        damaged = []
        for n, record, why in json_lines(self.path / "episodes.jsonl"):
            if why is None and not (isinstance(record, dict) and isinstance(record.get("key"), str)):
                why = "not an episode's record (no key)"
            if why is not None:
                damaged.append({"id": f"line-{n}", "task": "?", "snapshot": "?", "success": None, "steps": None,
                                "label": f"line {n}", "problem": f"line {n} of episodes.jsonl is damaged ({why}): "
                                                                 "this episode cannot be shown, the others can"})
                continue
            found[record["key"]] = record
        return found, damaged

    def listing(self) -> dict[str, Any]:
        found, damaged = self.records()
        episodes = []
        for key, r in found.items():
            label = f"run {r.get('run')}, episode {r.get('episode')}"
            policy = f"{r.get('group') or 'policy'} {Path(str(r['checkpoint'])).name}" if r.get("checkpoint") else None
            if policy is not None:
                label += f", {policy}"
            infra = r.get("infra_failure")
            episodes.append({"id": key, "task": str(r.get("task")), "snapshot": str(r.get("snapshot")),
                             "seed": r.get("seed"), "success": None if infra else r.get("success"),
                             "steps": r.get("steps"), "label": label, "run": r.get("run"),
                             "episode": r.get("episode"), "policy": policy,
                             "problem": f"an infrastructure failure, not counted: {infra}" if infra else None})
        notes = list(self.notes)
        if found and not any(r.get("screens") for r in found.values()):
            notes.append(self.NO_SCREENS)
        agent = (self.recipe.get("agent") or {}).get("name", "?")
        return {"kind": self.kind, "path": str(self.path), "notes": notes, "episodes": damaged + episodes,
                "title": f"evaluation {self.path.name}: {len(episodes)} episodes of agent={agent}"}

    def compared(self) -> dict[str, Path]:
        """The earlier evaluations this one was compared with when it ran (``compare=``, as its ``results.json``
        keeps it: a folder or its results.json, a list of them, or a mapping name -> one), by name."""
        try:
            value = json.loads((self.path / "results.json").read_text(encoding="utf-8"))["config"]["compare"]
        except (OSError, ValueError, KeyError, TypeError):
            return {}  # not finished, or evaluated before results kept their config: nothing to say
        named = value.items() if isinstance(value, dict) else (
            (None, v) for v in (value if isinstance(value, list) else [value] if value else []))
        out = {}
        for name, where in named:
            path = Path(str(where))
            path = path.parent if path.suffix == ".json" else path
            out[str(name or path.name)] = path
        return out

    NO_SCREENS = ("this evaluation kept no screens: evaluate again with screens=all (or screens=failures) into "
                  "another folder (name=...) to see each step's screen; here the gestures are drawn on a blank screen "
                  "(or, for an MLLM agent, on the screenshot it was sent)")

    def spec(self, checkpoint: str | None) -> ObsActionSpec:
        """The screens and action reading an episode had: a policy's own (its export's ``config.json``) where it
        can be read, else the evaluation's ``env`` settings."""
        env = self.recipe.get("env") or {}
        for folder in ([Path(checkpoint) / "policy", Path(checkpoint)] if checkpoint else []):
            try:
                config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
                return ObsActionSpec.from_dict(config["policy"]["spec"])
            except (OSError, ValueError, KeyError, TypeError, VluiError):
                continue
        try:
            return ObsActionSpec(env.get("observation_height", ObsActionSpec.height),
                                 env.get("observation_width", ObsActionSpec.width),
                                 env.get("tap_threshold", ObsActionSpec.tap_threshold),
                                 env.get("y_distance_scale", ObsActionSpec.y_scale),
                                 env.get("landscape", ObsActionSpec.landscape), env.get("rtl", ObsActionSpec.rtl))
        except VluiError:
            return ObsActionSpec()

    def episode(self, eid: str) -> dict[str, Any] | None:
        found, damaged = self.records()
        if eid not in found:
            hit = next((d for d in damaged if d["id"] == eid), None)
            return None if hit is None else {"id": eid, "problem": hit["problem"], "steps": [], "notes": []}
        r = found[eid]
        try:
            return self.read(eid, r, any(x.get("screens") for x in found.values()))
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
            return {"id": eid, "steps": [], "notes": [], "problem": f"this episode's line in episodes.jsonl is "
                                                                    f"incomplete or malformed ({type(err).__name__}: "
                                                                    f"{err}): it cannot be shown, the others can"}

    def read(self, eid: str, r: dict[str, Any], any_screens: bool) -> dict[str, Any]:
        """One episode's line as the page shows it (:meth:`episode`)."""
        task = task_of(str(r["task"]))
        checkpoint = r.get("checkpoint") or next(iter(self.recipe.get("weights") or {}), None)
        spec = self.spec(checkpoint)
        parser = ActionParser.of(spec, clip=True)
        n, actions, success = int(r["steps"]), list(r["actions"]), r.get("success")
        screens = r.get("screens") or []
        transcript = r.get("transcript")
        notes = []
        if r.get("infra_failure"):
            notes.append(f"this episode failed for infrastructure reasons ({r['infra_failure']}): it is not counted "
                         "and kept no steps; running the same evaluate.py command again retries it")
        elif not screens and any_screens:  # (an evaluation that kept none says so once, in its notes)
            notes.append("this episode's screens were not kept (screens=failures keeps the failed episodes' only; "
                         "episodes evaluated before screens were asked for have none)")
        llm_steps = transcript.get("steps") if isinstance(transcript, dict) else None
        if transcript is not None and not isinstance(llm_steps, list):
            notes.append("this episode's transcript is not in the layout the viewer reads (docs/viewer.md): it is not "
                         "shown")
            llm_steps = None
        marks = bool((self.recipe.get("agent") or {}).get("set_of_marks"))
        limit = episode_limit(task, self.recipe)
        steps = []
        for i in range(n + 1):
            final = i == n
            action = None if final or i >= len(actions) else actions[i]
            gestures, said = [], "the final screen: the episode ended"
            if not final:
                if action is None:
                    said = "no action: the agent's answer held none, so the step counted and nothing was done"
                else:
                    g, said = parsed_gesture(parser, action)
                    gestures = [g] if g else []
            elif r.get("invalid_action"):
                said = f"the episode ended at an action the environment refused: {r['invalid_action']}"
            last = i == n - 1
            screen = screens[i] if i < len(screens) else None
            llm = self.exchange(llm_steps[i], marks) if llm_steps is not None and i < len(llm_steps) else None
            url, screen_note = f"{self.base}/images/{screen}.png" if screen else None, None
            if screen and not (self.path / IMAGES / f"{screen}.png").is_file():
                screen_note = f"this screen's file {IMAGES}/{screen}.png is missing from the evaluation's folder"
            elif not screen and llm is not None and llm["image"] is not None and not llm["image"]["missing"]:
                url, screen_note = llm["image"]["image"], ("the screenshot sent to the agent (the evaluation kept no "
                                                           "screens of its own)")
            steps.append({
                "index": i, "final": final, "action": action, "label": None, "gestures": gestures, "meaning": said,
                "screen": url, "screen_note": screen_note,
                "reward": (1.0 if last and success else 0.0) if not final else None,
                "terminated": bool(last and success),
                "truncated": bool(last and not success and limit is not None and n >= limit),
                "success_line": r.get("success_line") if last and success else None,
                "llm": llm})
        if llm_steps is not None and len(llm_steps) > n + 1:
            notes.append(f"the transcript has {len(llm_steps)} answers for {n} steps: the last ones are not shown")
        line, said = success_text(task, None if r.get("infra_failure") else success, r.get("success_line"), n,
                                  "this evaluation", "evaluate again", limit)
        facts = [["key", eid], ["run", r.get("run")], ["episode", r.get("episode")], ["seed", r.get("seed")]]
        if r.get("checkpoint"):
            facts += [["group", r.get("group")], ["checkpoint", r.get("checkpoint")]]
        if r.get("perturbations"):
            facts.append(["perturbations", json.dumps(r["perturbations"])])
        judged = r.get("judged")
        if isinstance(judged, dict):  # python -m vlui.study detectors: the detector against the task's truth
            facts.append(["detector and truth", f"{judged.get('verdict')}: the detector first fired at step "
                          f"{judged.get('detector_step') or '-'}, the goal first held at step "
                          f"{judged.get('truth_step') or '-'}"])
        if r.get("adaptive"):
            facts.append(["adaptive metrics", ", ".join(f"{k} {v:.3g}" for k, v in r["adaptive"].items())])
        agent = None
        if isinstance(transcript, dict):
            agent = {k: transcript.get(k) for k in ("model", "requests", "cached", "input_tokens", "output_tokens",
                                                    "answers", "invalid_answers")}
        return {"id": eid, "task": r["task"], "snapshot": r.get("snapshot"), "seed": r.get("seed"),
                "instruction": task.instruction if task is not None else f"(task {r['task']} is not in this vlui's "
                                                                         "catalog)",
                "success": None if r.get("infra_failure") else success, "detector": detector_text(task),
                "success_line": line, "success_note": said, "screen_size": [spec.height, spec.width],
                "facts": facts, "notes": notes, "problem": None, "steps": steps, "agent": agent,
                "outcome_note": "an evaluation keeps no reward per step: these follow from the episode's outcome"}

    def exchange(self, x: Any, marks: bool) -> dict[str, Any] | None:
        """One step of an LLM agent's transcript for the page: the request's messages (images as URLs), the raw
        answer, the action read from it, whether it was valid and why not, and its reflection (M3A's summary)."""
        if not isinstance(x, dict):
            return None
        request = x.get("request") if isinstance(x.get("request"), dict) else {}
        messages = [{"role": str(m.get("role", "?")), "parts": self.parts(m.get("content"))}
                    for m in request.get("messages") or [] if isinstance(m, dict)]
        images = [p for m in messages for p in m["parts"] if "image" in p]
        out = {"messages": messages, "answer": x.get("answer"), "action": x.get("action"), "valid": x.get("valid"),
               "error": x.get("error") or "", "cached": x.get("cached"),
               "tokens": [x.get("input_tokens"), x.get("output_tokens")], "model": request.get("model"),
               "image": images[-1] if images else None,
               "image_title": "the screenshot sent, with its set-of-mark tags" if marks else "the screenshot sent"}
        if isinstance(x.get("reflection"), dict):
            out["reflection"] = self.exchange(x["reflection"], marks)
        return out

    def parts(self, content: Any) -> list[dict[str, Any]]:
        """A message's content as text and image parts; an image named by hash becomes its URL here (``missing``
        when its file is not in the folder)."""
        if isinstance(content, str):
            return [{"text": content}]
        out: list[dict[str, Any]] = []
        for p in content if isinstance(content, list) else []:
            if not isinstance(p, dict):
                continue
            if p.get("type") == "text":
                out.append({"text": str(p.get("text", ""))})
            elif p.get("type") == "image_url":
                url = str((p.get("image_url") or {}).get("url", ""))
                digest = url[len(IMAGE_REF):]
                if url.startswith(IMAGE_REF) and HASH.fullmatch(digest):
                    out.append({"image": f"{self.base}/images/{digest}.png",
                                "missing": not (self.path / IMAGES / f"{digest}.png").is_file()})
                elif url.startswith("data:image/"):
                    out.append({"image": url, "missing": False})
                else:
                    out.append({"text": f"(an image at {url[:80]}: not shown, the viewer reaches no network)"})
        return out
