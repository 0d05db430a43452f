"""Parameterized tasks (AndroidWorld-style): task templates with typed parameters, as data (``data/templates.yaml``).

A template makes one :class:`~vlui.tasks.task.Task` per parameter value: ``create_alarm`` at (6, 30) is the task
``create_alarm@0630``, "create alarm at 06:30 am", whose detector wants ``nextUserAlarmTime ... 06:30:00``. Ids carry
the parameters, so any process can rebuild an instance from its id (:func:`instance_from_id`, which
:func:`~vlui.tasks.catalog.resolve_tasks` uses). :func:`instances` draws instances with a seeded generator from a
split; the ``train`` and ``test`` splits draw from disjoint parameter values, so a test instance is never seen in
training.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from vlui.errors import VluiError
from vlui.resources import read_yaml
from vlui.tasks.task import Constraint, Task

DATA = Path(__file__).resolve().parent / "data" / "templates.yaml"
SPLITS = ("train", "test", "all")
KINDS = ("time", "digits", "choice", "int")
PREFIX = "template:"  # a config's tasks entry naming a template: tasks=template:create_alarm
FAMILIES = ("constrained", "cross_app")  # a config's tasks entry naming every template of a family: tasks=constrained
TASK_FIELDS = ("instruction", "step_limit", "log_tag", "regex", "apps", "state", "state_check", "constraints")
_PLACEHOLDER = re.compile(r"^\{(\w+)\}$")


@lru_cache(maxsize=1)
def templates() -> dict[str, dict[str, Any]]:
    """Template name -> its definition, as in the data file."""
    raw = read_yaml(DATA)["templates"]
    for name, t in list(raw.items()):  # a template built on another (``base``) takes what it does not set from it
        if "base" in t:
            base = raw.get(t["base"])
            if base is None or "base" in base:
                raise VluiError(f"{DATA.name}: {name}: base must name a template without a base of its own, not "
                                f"{t['base']!r}")
            raw[name] = {**base, **{k: v for k, v in t.items() if k != "base"}}
    for name, t in raw.items():
        for pname, p in t["params"].items():
            if p.get("kind") not in KINDS:
                raise VluiError(f"{DATA.name}: {name}.{pname}: kind must be one of {', '.join(KINDS)}")
        if t.get("family", FAMILIES[0]) not in FAMILIES:
            raise VluiError(f"{DATA.name}: {name}: family must be one of {', '.join(FAMILIES)}")
    return raw


def family_templates(family: str) -> list[str]:
    """The templates of ``family`` (a template's ``family`` field), in the data file's order."""
    return [name for name, t in templates().items() if t.get("family") == family]


def log_tags() -> set[str]:
    """Every logcat tag a template's success detector may read (what a device's log reader must stream)."""
    tags = set()
    for t in templates().values():
        tags |= {t.get("log_tag") or "", *((case.get("log_tag") or "") for case in t.get("cases", {}).values())}
    return tags - {""}


def template(name: str) -> dict[str, Any]:
    if name not in templates():
        raise VluiError(f"unknown task template {name!r}; choose from: {', '.join(templates())}")
    return templates()[name]


def check_split(split: str) -> None:
    if split not in SPLITS:
        raise VluiError(f"unknown task split {split!r}; choose from: {', '.join(SPLITS)}")


def held_out(name: str) -> bool:
    """Whether the template's train and test splits differ (a template whose parameters have no splits, such as
    ``toggle_setting``'s six instances, gives the same instances in every split)."""
    return any("splits" in p for p in template(name)["params"].values())


# ------------------------------------------------------------------------------------------------ parameter values
def _split_spec(p: dict[str, Any], split: str) -> list[dict[str, Any]]:
    """The value domains of parameter ``p`` in ``split`` (``all``: train's and test's)."""
    check_split(split)
    splits = p.get("splits")
    if splits is None:
        return [{}]
    return [splits[s] for s in (("train", "test") if split == "all" else (split,))]


def values(name: str, pname: str, split: str = "all") -> list[Any]:
    """Every value parameter ``pname`` of template ``name`` takes in ``split`` (digits: every number, so keep
    ``length`` small where this is called)."""
    p = template(name)["params"][pname]
    out: list[Any] = []
    for spec in _split_spec(p, split):
        if p["kind"] == "time":
            out += [(h, m) for h in spec["hours"] for m in spec["minutes"]]
        elif p["kind"] == "int":
            out += list(spec["values"])
        elif p["kind"] == "choice":
            out += [str(v) for v in spec.get("values", p["values"])]
        else:
            out += [f"{pre}{i:0{spec['length'] - len(pre)}d}" for pre in spec["prefixes"]
                    for i in range(10 ** (spec["length"] - len(pre)))]
    return out


def _draw(p: dict[str, Any], specs: list[dict[str, Any]], rng: random.Random) -> Any:
    spec = rng.choice(specs)
    if p["kind"] == "time":
        return (rng.choice(spec["hours"]), rng.choice(spec["minutes"]))
    if p["kind"] == "int":
        return rng.choice(spec["values"])
    if p["kind"] == "choice":
        return str(rng.choice(list(spec.get("values", p["values"]))))
    prefix = rng.choice(spec["prefixes"])
    return prefix + "".join(rng.choice("0123456789") for _ in range(spec["length"] - len(prefix)))


def _in_split(p: dict[str, Any], specs: list[dict[str, Any]], value: Any) -> bool:
    for spec in specs:
        if p["kind"] == "time" and value[0] in spec["hours"] and value[1] in spec["minutes"]:
            return True
        if p["kind"] == "int" and value in spec["values"]:
            return True
        if p["kind"] == "choice" and value in spec.get("values", p["values"]):
            return True
        if p["kind"] == "digits" and len(value) == spec["length"] and value.startswith(tuple(spec["prefixes"])):
            return True
    return False


def split_of(task: Task) -> str:
    """``train`` or ``test``: the split whose values a templated task's parameters come from."""
    t = template(task.template)
    for split in ("train", "test"):
        if all(_in_split(p, _split_spec(p, split), task.params[n]) for n, p in t["params"].items()):
            return split
    raise VluiError(f"{task.id}: its parameters are in neither the train nor the test split")


# ------------------------------------------------------------------------------------------------ ids
def _token(kind: str, value: Any) -> str:
    return f"{value[0]:02d}{value[1]:02d}" if kind == "time" else str(value)


def _parse_token(name: str, pname: str, p: dict[str, Any], token: str) -> Any:
    kind = p["kind"]
    if kind == "time" and re.fullmatch(r"\d{4}", token) and int(token[:2]) < 24 and int(token[2:]) < 60:
        return (int(token[:2]), int(token[2:]))
    if kind == "int" and re.fullmatch(r"-?\d+", token):
        return int(token)
    if kind == "choice" and token in p["values"]:
        return token
    if kind == "digits" and re.fullmatch(r"\d+", token):
        return token
    raise VluiError(f"task {name}@...: {token!r} is not a {kind} value for {pname!r}")


def instance_id(name: str, params: dict[str, Any]) -> str:
    t = template(name)
    return f"{name}@" + "-".join(_token(p["kind"], params[n]) for n, p in t["params"].items())


def instance_from_id(task_id: str) -> Task:
    """The task an instance id names (``create_alarm@0630``)."""
    name, _, rest = task_id.partition("@")
    t = template(name)
    tokens = rest.split("-")
    if len(tokens) != len(t["params"]) or not rest:
        raise VluiError(f"task {task_id!r}: {name} takes {len(t['params'])} parameter(s) "
                        f"({', '.join(t['params'])}) after '@', joined by '-'")
    pairs = zip(t["params"].items(), tokens, strict=True)
    return instance(name, {n: _parse_token(name, n, p, tok) for (n, p), tok in pairs})


# ------------------------------------------------------------------------------------------------ instances
def _fields(p: dict[str, Any], pname: str, value: Any) -> dict[str, Any]:
    """The placeholders parameter ``pname`` gives the format strings."""
    if p["kind"] == "time":
        h, m = value
        return {pname: f"{h:02d}:{m:02d} {'am' if h < 12 else 'pm'}", f"{pname}_hour": h, f"{pname}_minute": m,
                f"{pname}_re": re.escape(f"{h:02d}:{m:02d}")}
    words = p["values"][value] if p["kind"] == "choice" else str(value)
    return {pname: value, f"{pname}_re": re.escape(str(value)), f"{pname}_text": words}


def _format(value: Any, fields: dict[str, Any]) -> Any:
    if isinstance(value, str):
        whole = _PLACEHOLDER.match(value)
        return fields[whole.group(1)] if whole else value.format(**fields)
    if isinstance(value, dict):
        return {_format(k, fields): _format(v, fields) for k, v in value.items()}
    if isinstance(value, list):
        return [_format(v, fields) for v in value]
    return value


def _derived_time(name: str, field: str, spec: dict[str, Any], params: dict[str, Any]) -> tuple[int, int]:
    """A time of day ``spec["minus"]`` (or ``plus``) minutes from the time parameter ``spec["from"]``, around the
    clock: a number, or a parameter's value (a choice's is its id, a number of minutes)."""
    try:
        hour, minute = params[spec["from"]]
        sign, other = (-1, spec["minus"]) if "minus" in spec else (1, spec["plus"])
        total = hour * 60 + minute + sign * int(other if isinstance(other, int) else params[other])
    except (KeyError, TypeError, ValueError):
        raise VluiError(f"{DATA.name}: {name}.derived.{field}: give from: <a time parameter> and minus: or plus: "
                        "<a parameter whose value is minutes>") from None
    return (total // 60) % 24, total % 60


def _derived_number(name: str, field: str, spec: dict[str, Any], params: dict[str, Any]) -> int:
    """An int parameter ``spec["from"]`` times ``spec["times"]`` (a timer's minutes in milliseconds)."""
    value, factor = params.get(spec.get("from")), spec["times"]
    if not isinstance(value, int) or isinstance(value, bool) or not isinstance(factor, int):
        raise VluiError(f"{DATA.name}: {name}.derived.{field}: give from: <an int parameter> and times: <a number>")
    return value * factor


def instance(name: str, params: dict[str, Any]) -> Task:
    """The task template ``name`` makes for ``params`` (``{"time": (6, 30)}``)."""
    t = template(name)
    if set(params) != set(t["params"]):
        raise VluiError(f"template {name} takes parameters {', '.join(t['params'])}, not {', '.join(params)}")
    params = {n: tuple(v) if t["params"][n]["kind"] == "time" else v for n, v in params.items()}
    fields: dict[str, Any] = {}
    for n, p in t["params"].items():
        fields.update(_fields(p, n, params[n]))
    for n, d in t.get("derived", {}).items():  # a time computed from the parameters: {from: time, minus: lead}
        if "times" in d:  # or a number: {from: minutes, times: 60000}
            fields.update(_fields({"kind": "int"}, n, _derived_number(name, n, d, params)))
        else:
            fields.update(_fields({"kind": "time"}, n, _derived_time(name, n, d, params)))
    task_id = instance_id(name, params)
    raw = {k: t[k] for k in TASK_FIELDS if k in t}
    raw.update(t.get("cases", {}).get(task_id.partition("@")[2], {}))
    out = {k: _format(v, fields) for k, v in raw.items()}
    return Task(id=task_id, instruction=out["instruction"], step_limit=int(out["step_limit"]),
                log_tag=out.get("log_tag", ""), regex=out.get("regex", ""), apps=tuple(out["apps"]), sim=True,
                state=out.get("state", {}), state_check=out.get("state_check", {}), template=name,
                params={n: list(v) if isinstance(v, tuple) else v for n, v in params.items()},
                constraints=_constraints(task_id, out.get("constraints", [])))


def _constraints(task_id: str, entries: Any) -> tuple[Constraint, ...]:
    if not isinstance(entries, list):
        raise VluiError(f"{DATA.name}: {task_id}: constraints must be a list")
    try:
        return tuple(Constraint.read(e) for e in entries)
    except ValueError as err:
        raise VluiError(f"{DATA.name}: {task_id}: constraints: {err}") from None


def instances(name: str, seed: int, n: int, split: str = "train") -> list[Task]:
    """``n`` distinct instances of template ``name`` drawn from ``split`` with ``random.Random(seed)``, in the order
    drawn (fewer when the split has fewer than ``n`` distinct values)."""
    t = template(name)
    specs = {pn: _split_spec(p, split) for pn, p in t["params"].items()}
    rng = random.Random(seed)
    chosen: dict[str, Task] = {}
    for _ in range(n * 50):
        if len(chosen) == n:
            break
        params = {pn: _draw(p, specs[pn], rng) for pn, p in t["params"].items()}
        task_id = instance_id(name, params)
        if task_id not in chosen:
            chosen[task_id] = instance(name, params)
    return list(chosen.values())


def expand(spec: Any, seed: int = 0, count: int = 10, split: str = "train") -> Any:
    """A config's ``tasks`` value with every ``template:<name>`` entry replaced by ``count`` instance ids drawn from
    ``split`` with ``seed`` (``tasks=template:create_alarm task_seed=3 task_count=20 task_split=train``), and a
    family's name (``tasks=constrained``) by each of its templates' instances; other values pass through unchanged."""
    entries = [spec] if isinstance(spec, str) else list(spec) if isinstance(spec, Iterable) else None
    if entries is None:
        return spec
    for e in entries:
        if e in FAMILIES and not family_templates(e):
            raise VluiError(f"the task family {e!r} has no templates yet; families: {', '.join(FAMILIES)}")
    entries = [x for e in entries for x in ([f"{PREFIX}{n}" for n in family_templates(e)] if e in FAMILIES else [e])]
    if not any(str(e).startswith(PREFIX) for e in entries):
        return spec
    check_split(split)
    if count < 1:
        raise VluiError(f"task_count must be at least 1, not {count}")
    ids: list[str] = []
    for e in map(str, entries):
        if e.startswith(PREFIX):
            ids += [task.id for task in instances(e[len(PREFIX):], seed, count, split)]
        else:
            ids.append(e)
    return ids
