"""The task catalog: B-MoCA's 60 daily tasks as data (``data/bmoca.yaml``), its release 2.5's 131 task files
(``data/bmoca25.yaml``), named task sets, and success detectors.

A detector reads logcat ``threadtime`` lines from either backend, keeps those whose tag is the task's
``log_tag`` (AndroidEnv's filter), and reports the first whose message ``re.match``-es the task's regex. A task
without a log tag is judged on the device after each step instead: by its B-MoCA evaluator check
(:mod:`vlui.tasks.checks`) or its ``state_check``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from vlui.adb.state import READERS, SETTERS, can_read
from vlui.android.apps import AOSP_DIALER, apps
from vlui.android.logcat import parse_threadtime
from vlui.android.state import state_paths
from vlui.device import Device, HomeScreen, PinnedApp
from vlui.errors import VluiError
from vlui.resources import read_yaml
from vlui.tasks.checks import UiNode, check_holds, check_reads, reads_ui
from vlui.tasks.task import Task
from vlui.tasks.templates import FAMILIES, instance_from_id

DATA = Path(__file__).resolve().parent / "data" / "bmoca.yaml"
RELEASE = DATA.parent / "bmoca25.yaml"
RELEASE_HOME = DATA.parent / "bmoca25_home.yaml"
TASK_SETS = ("representative", "open_app", "supported", "all", "bmoca25", "bmoca25_supported")
RELEASE_FIELDS = ("id", "instruction", "step_limit", "sim", "paper", "evaluator", "evaluator_check")


@lru_cache(maxsize=1)
def tasks() -> dict[str, Task]:
    """Task id -> Task: the paper's 60, in its order."""
    raw = read_yaml(DATA)["tasks"]
    return {t["id"]: Task(**{**t, "apps": tuple(t["apps"])}) for t in raw}


@lru_cache(maxsize=1)
def release_tasks() -> dict[str, Task]:
    """Task id -> Task: B-MoCA release 2.5's 131 tasks, one per task file, in the files' path order. A task judged by
    a logcat line has its ``log_tag`` and ``regex``; one judged by an evaluator has neither, and its
    ``evaluator_check`` says what the evaluator reads."""
    data = _release()
    new_apps = data["apps"]
    out: dict[str, Task] = {}
    for raw in data["tasks"]:
        t = Task(**{k: raw[k] for k in RELEASE_FIELDS if k in raw}, log_tag=raw.get("log_tag", ""),
                 regex=raw.get("regex", ""), apps=tuple(raw["apps"]), source=raw["file"],
                 unsupported="" if raw["sim"] else _unsupported(raw, new_apps))
        lacking = [a for a in t.apps if a not in apps()]
        if t.sim and (lacking or not (t.log_tag or t.evaluator_check)):
            raise VluiError(f"{RELEASE.name}: {t.id} is marked sim: true, but the simulated phone has no "
                            f"{', '.join(lacking)} app or nothing to judge it by")
        if not t.sim and not lacking and not raw.get("sim_note"):
            raise VluiError(f"{RELEASE.name}: {t.id} is marked sim: false, but its apps are there: sim_note says why")
        if t.sim and raw.get("over_step_limit"):
            raise VluiError(f"{RELEASE.name}: {t.id} is marked sim: true and over_step_limit: true; over_step_limit "
                            "marks a task the simulated phone does not run (sim: false)")
        if t.id in out or t.id in tasks():
            raise VluiError(f"{RELEASE.name}: task id {t.id} is used twice")
        out[t.id] = t
    return out


@lru_cache(maxsize=1)
def _release() -> dict[str, Any]:
    return read_yaml(RELEASE)


@lru_cache(maxsize=1)
def release_pins() -> dict[str, PinnedApp]:
    """B-MoCA release 2.5's third-party apps by key (``apps:`` in ``data/bmoca25.yaml``), each at the version the
    release pins, whether vlui simulates them or not."""
    return {key: PinnedApp(key, raw["name"], raw["package"], raw["version"]) for key, raw in _release()["apps"].items()}


# The Phone app of the release's phones (android-29 google_apis images): AOSP's Dialer, a system app of that image,
# where vlui's other phones have the Pixel's Google dialer (docs/environment.md, "The release's phones")
RELEASE_DIALER = PinnedApp("phone", "Phone (AOSP Dialer)", AOSP_DIALER.package, "android-29 google_apis system image")


def installs(tasks: Iterable[Task]) -> tuple[PinnedApp, ...]:
    """The apps the phones of a run of ``tasks`` have besides the Pixel image's: the release's third-party apps that
    vlui knows (``third_party`` in ``vlui/android/data/apps.yaml``; B-MoCA's release phones have all five) and
    AOSP's Dialer as the Phone app (:data:`RELEASE_DIALER`) when any task is one of the release's; none for the
    paper's tasks alone (their phones are as they always were)."""
    if not any(t.source for t in tasks):
        return ()
    known = apps()
    for pin in release_pins().values():
        if pin.key in known and (not known[pin.key].third_party or known[pin.key].package != pin.package):
            raise VluiError(f"{RELEASE.name}: the release's {pin.name} is {pin.package}, but apps.yaml's {pin.key} is "
                            f"{known[pin.key].package}{'' if known[pin.key].third_party else ', a system app'}")
    return (*(pin for pin in release_pins().values() if pin.key in known), RELEASE_DIALER)


@lru_cache(maxsize=1)
def release_homes() -> dict[str, HomeScreen]:
    """B-MoCA release 2.5's home screens by vlui snapshot id (``data/bmoca25_home.yaml``): the launcher database its
    set-up pushes to the snapshot of that index (``train_env_000.db`` for ``000``, ``test_env_100.db`` for ``100``)."""
    data = read_yaml(RELEASE_HOME)
    homes = {}
    for snapshot, raw in data["phones"].items():
        named = {a for a in raw["hotseat"] if a is not None} | {a for a, _, _ in raw["workspace"]}
        unknown = sorted(named - set(apps()))
        if unknown:
            raise VluiError(f"{RELEASE_HOME.name}: {snapshot}: unknown app(s) {', '.join(unknown)}")
        homes[str(snapshot)] = HomeScreen(tuple(raw["hotseat"]), tuple((a, r, c) for a, r, c in raw["workspace"]),
                                          data["grid"]["rows"], f"B-MoCA release 2.5's {raw['db']}")
    return homes


def release_home(tasks: Iterable[Task], snapshot: str) -> HomeScreen | None:
    """The home screen the phones of a run of ``tasks`` have on ``snapshot``: the release's database for that
    snapshot when any task is one of the release's (the apps :func:`installs` installs are on it), else None (the
    snapshot's own layout; also for a snapshot the release has no database for: a generated phone, one of yours)."""
    if not any(t.source for t in tasks):
        return None
    return release_homes().get(snapshot)


def _unsupported(raw: dict[str, Any], new_apps: dict[str, Any]) -> str:
    """Why the simulated phone cannot run a release task yet, in a few words."""
    lacking = [new_apps[a]["name"] if a in new_apps else a for a in raw["apps"] if a not in apps()]
    if lacking:
        return f"it has no {' or '.join(lacking)} app"
    if raw.get("over_step_limit"):
        return f"B-MoCA's step limit is too short for it on some of vlui's phones: {raw['sim_note']}"
    if raw.get("evaluator_check"):
        return f"B-MoCA's evaluator check cannot judge it there: {raw['sim_note']}"
    return f"its log has no line the release's regex matches, see sim_note in {RELEASE.name}"


def catalog() -> dict[str, Task]:
    """Every task of the catalog by id: the paper's 60, then the release's 131 (templates make the others)."""
    return {**tasks(), **release_tasks()}


def app_of(task_id: str) -> str | None:
    """The app a task is reported under (a study's table by app): its first app (the release's task folder for
    its 131: a Clock task that also turns the alarm volume up in Settings is Clock's), None for an id the catalog does
    not know (a template's instance)."""
    task = catalog().get(task_id)
    return task.apps[0] if task is not None and task.apps else None


def task_set(name: str) -> list[str]:
    """The ids of a named set: ``representative`` (the paper's six), ``open_app`` (the 14 "open the … app"
    tasks), ``supported`` (those of the 60 the simulated phone runs), ``all`` (the paper's 60, as before the release's
    tasks came: they are not part of it), ``bmoca25`` (B-MoCA release 2.5's 131) or ``bmoca25_supported`` (those of the
    131 the simulated phone runs)."""
    all_tasks = tasks()
    if name == "representative":
        return [t.id for t in all_tasks.values() if t.representative]
    if name == "open_app":
        return [t.id for t in all_tasks.values() if t.id.startswith("open_")]
    if name == "supported":
        return [t.id for t in all_tasks.values() if t.sim]
    if name == "all":
        return list(all_tasks)
    if name == "bmoca25":
        return list(release_tasks())
    if name == "bmoca25_supported":
        return [t.id for t in release_tasks().values() if t.sim]
    raise VluiError(f"unknown task set {name!r}; choose from: {', '.join(TASK_SETS)} (or give a list of task ids)")


def _few(ids: Sequence[str], shown: int = 3) -> str:
    return ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


def _sim_refusal(refused: Sequence[Task]) -> str:
    """One line: the tasks the simulated phone cannot run, grouped by why, and what to do."""
    if len(refused) == 1:
        head = f"task {refused[0].id} yet" + (f": {refused[0].unsupported}" if refused[0].unsupported else "")
    else:
        why: dict[str, list[str]] = {}
        for t in refused:
            why.setdefault(t.unsupported, []).append(t.id)
        head = f"{len(refused)} of these tasks yet: " + "; ".join(
            _few(ids) + (f" ({reason})" if reason else "") for reason, ids in why.items())
    if any(t.source for t in refused):
        hint = (f"tasks=bmoca25_supported selects the {len(task_set('bmoca25_supported'))} tasks of B-MoCA release "
                "2.5 it runs")
    else:
        hint = "use tasks=supported, or env=adb with a real device"
    return f"the simulated phone does not support {head}; {hint}"


def resolve_tasks(spec: Any, backend: str = "sim") -> list[Task]:
    """Tasks from a config value: a set name, one task id, or a list of ids. Ids may name parameterized
    instances (``create_alarm@0630``, see :mod:`vlui.tasks.templates`). On the simulated phone, tasks it does not
    support yet are refused with a one-line message that names them and why (the app it lacks); over ADB, so are
    tasks whose starting state, state check or B-MoCA evaluator check reads what no shell command reaches
    (:mod:`vlui.adb.state`: state inside an app, such as Clock's timer; Clock's alarms database and the apps' shared
    preferences it reads as root)."""
    if isinstance(spec, str):
        ids = task_set(spec) if spec in TASK_SETS else [spec]
    elif isinstance(spec, Iterable):
        ids = [str(s) for s in spec]
    else:
        raise VluiError(f"tasks must be a set name ({', '.join(TASK_SETS)}) or a list of task ids, not {spec!r}")
    templated = {i: instance_from_id(i) for i in ids if "@" in i}  # a malformed one fails here, in one line
    known = catalog()
    unknown = [i for i in ids if i not in known and i not in templated]
    if unknown:
        words = [w for w in unknown[0].lower().split("_") if len(w) >= 3]
        # those sharing the most words first, the paper's before the release's
        close = ", ".join(sorted((t for t in known if any(w in t for w in words)),
                                 key=lambda t: (-sum(w in t for w in words), t in release_tasks(), t))[:6])
        raise VluiError(f"unknown task id(s) {', '.join(unknown) or repr('')}" + (f"; similar: {close}" if close else "")
                        + f"; sets: {', '.join(TASK_SETS)}; template families: {', '.join(FAMILIES)}; all ids: "
                        "vlui/tasks/data/bmoca.yaml and bmoca25.yaml")
    if not ids:
        raise VluiError("the task list is empty")
    chosen = [templated[i] if i in templated else known[i] for i in ids]
    if backend == "sim":
        refused = [t for t in chosen if not t.sim]
        if refused:
            raise VluiError(_sim_refusal(refused))
    elif backend == "adb":
        out_of_reach = {t.id: sorted(set(state_paths(t.state)) - set(SETTERS))
                        + sorted(set(t.state_check) - set(READERS))
                        + [name for name in check_reads(t.evaluator_check) if not can_read(name)] for t in chosen}
        out_of_reach = {task: fields for task, fields in out_of_reach.items() if fields}
        if out_of_reach:
            listed = ", ".join(f"{task} ({', '.join(fields)})" for task, fields in out_of_reach.items())
            raise VluiError(f"over ADB, no shell command reaches the state these tasks start from or are judged "
                            f"by: {listed}. It lives inside an app; leave those tasks out, or run them on the "
                            "simulated phone (env=sim) where it has their apps")
    return chosen


@dataclass
class Detector:
    """The success detector of one task: the first log line (tag filter, then ``re.match`` on the message), or, for
    a task judged by the device's state, its evaluator check or state check, read after each step."""

    task: Task

    @property
    def reads_ui(self) -> bool:
        """Whether :meth:`holds` reads the UI tree (an evaluator check with a ``ui`` condition)."""
        return reads_ui(self.task.evaluator_check)

    def holds(self, device: Device, screen: Callable[[], Sequence[UiNode]]) -> bool:
        """Whether the task's goal holds on ``device`` now: its evaluator check (B-MoCA's environment asks its
        evaluator after every step, and ends the episode with reward 1 when it answers yes), else its
        ``state_check``; False for a task judged by its log alone. ``screen()``: the elements of the UI tree now."""
        if self.task.evaluator_check:
            return check_holds(self.task.evaluator_check, device, screen, self.task.id)
        return bool(self.task.state_check) and device.check_state(self.task.state_check)

    def match(self, lines: Sequence[str]) -> str | None:
        """The first line that signals success, or None. Lines that are not threadtime lines are ignored. A task
        without a ``log_tag`` (one judged by its evaluator check or ``state_check``: :meth:`holds`) never
        matches."""
        if not self.task.log_tag:
            return None
        for line in lines:
            fields = parse_threadtime(line)
            if fields is None or fields["tag"] != self.task.log_tag:
                continue
            if self.task.pattern.match(fields["message"]):
                return line
        return None
