"""Named splits of a dataset into training, validation and held-out (test) episodes, kept in ``meta/splits.json``.

A split says which episodes are which; the episodes stay where they are. GUIOdyssey's four kinds (Lu et al. 2024,
Sec. 3.3):

- ``random``: episodes drawn at random with a seed (in-domain);
- ``unseen_task``: the episodes of held-out tasks (a template's instances count as one task);
- ``unseen_device``: the episodes on held-out device models (a profile such as ``WXGA Tablet``, or a kind: ``tablet``);
- ``unseen_app``: the episodes of held-out app combinations (the set of apps an episode's task uses).

The values an episode has on each axis (:data:`Facts`) come from the task catalog and the device snapshots, which
this layer does not know: the caller gives them (``vlui/jobs/split.py`` makes splits, ``vlui/jobs/train.py`` trains
on one). The **leak check** (:func:`check_no_leak`) refuses training data that holds a held-out value, as the
generator keeps the test snapshots' values out of training phones (``vlui/android/generate.py``).

``meta/splits.json``::

    {"format_version": 1, "splits": {"<name>": {"by": "unseen_device", "axis": "device", "holdout": ["tablet"],
      "seed": 0, "val": 0.1, "test": null, "episodes": {"train": [0, 1, ...], "val": [...], "test": [...]}}}}
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vlui.errors import VluiError

SPLITS_VERSION = 1
SPLITS_FILE = Path("meta") / "splits.json"
PARTS = ("train", "val", "test")
# a split's kind -> the axis its held-out values are on (None: episodes drawn at random)
KINDS: dict[str, str | None] = {"random": None, "unseen_task": "task", "unseen_device": "device",
                                "unseen_app": "apps"}
# axis -> an episode's values on it: the first is what a drawn holdout picks from (the task or template, the device
# profile, the app combination), the others other names a holdout may give (the task instance, the device's kind)
Facts = Mapping[str, Sequence[str]]


@dataclass(frozen=True)
class Split:
    """A named split: the episode ids of each part (:data:`PARTS`), and how they were drawn."""

    name: str
    by: str  # a kind of :data:`KINDS`
    holdout: tuple[str, ...]  # the held-out values on the axis (none for ``random``)
    seed: int
    val: float  # the share of the other episodes drawn for validation
    test: float | None  # the share of episodes asked for the test part (random, or a holdout drawn), else None
    parts: dict[str, tuple[int, ...]]

    @property
    def axis(self) -> str | None:
        return KINDS[self.by]

    def digest(self) -> str:
        """A short digest of the parts: a policy remembers which training part it learnt from."""
        text = json.dumps({p: list(self.parts[p]) for p in PARTS}, sort_keys=True)
        return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        return {"by": self.by, "axis": self.axis, "holdout": list(self.holdout), "seed": self.seed, "val": self.val,
                "test": self.test, "episodes": {p: list(self.parts[p]) for p in PARTS}}

    @classmethod
    def from_dict(cls, name: str, data: Any, where: str) -> Split:
        try:
            if data["by"] not in KINDS:
                raise ValueError(f"unknown kind {data['by']!r}")
            parts = {p: tuple(int(e) for e in data["episodes"][p]) for p in PARTS}
            return cls(name, data["by"], tuple(str(v) for v in data["holdout"]), int(data["seed"]),
                       float(data["val"]), None if data["test"] is None else float(data["test"]), parts)
        except (KeyError, TypeError, ValueError) as err:
            raise VluiError(f"{where}: split {name!r} is damaged ({type(err).__name__}: {err}): make it again "
                            "(python -m vlui.jobs.split ... --replace)") from None


def make_split(name: str, by: str, facts: Mapping[int, Facts], holdout: Sequence[str] = (),
               test: float | None = None, val: float = 0.1, seed: int = 0) -> Split:
    """Split the episodes ``facts`` describes (episode id -> its values per axis).

    ``random`` draws a ``test`` share of the episodes. The other kinds hold out the episodes that have one of the
    ``holdout`` values on their axis, or, without ``holdout``, values drawn with ``seed`` (each a value an episode
    has first, :data:`Facts`) until at least a ``test`` share of the episodes is held out. Then a ``val`` share of the
    episodes left is drawn for validation; the rest is for training. Every draw is by episode and from ``seed``."""
    if by not in KINDS:
        raise VluiError(f"unknown split kind {by!r}; choose from: {', '.join(KINDS)}")
    for what, share in (("the test share", test), ("the validation share", val)):
        if share is not None and not 0 <= share < 1:
            raise VluiError(f"{what} must be at least 0 and less than 1, not {share}")
    axis = KINDS[by]
    episodes = sorted(facts)
    if len(episodes) < 2:
        raise VluiError(f"a split needs at least 2 episodes, the dataset has {len(episodes)}: collect more")
    rng = np.random.default_rng(seed)
    holdout = tuple(dict.fromkeys(str(v) for v in holdout))
    if axis is None:
        if holdout:
            raise VluiError("a random split holds out no values: leave out --holdout, give --test FRACTION")
        test = 0.1 if test is None else test
        order = [episodes[i] for i in rng.permutation(len(episodes))]
        held = set(order[:max(1, round(test * len(episodes)))])
    else:
        values = {e: facts[e][axis] for e in episodes}
        known = sorted({v for vs in values.values() for v in vs})
        if holdout:
            if test is not None:
                raise VluiError("give the held-out values (--holdout) or the share to hold out (--test), not both")
            unknown = [v for v in holdout if v not in known]
            if unknown:
                raise VluiError(f"no episode has {axis} {unknown[0]!r} to hold out; its {axis} values: "
                                f"{_listed(known)}")
        elif test is None:
            raise VluiError(f"a {by} split needs the {axis} values to hold out (--holdout VALUE ...) or the share of "
                            f"episodes to hold out (--test FRACTION); its {axis} values: {_listed(known)}")
        else:
            holdout = _drawn(values, test, rng)
        held = {e for e in episodes if set(values[e]) & set(holdout)}
    rest = [e for e in episodes if e not in held]
    if not rest:
        raise VluiError(f"holding out {', '.join(holdout) or 'that share'} leaves no episode to train on: hold out "
                        "less")
    n_val = round(val * len(rest)) if val else 0
    n_val = min(max(n_val, 1 if val else 0), len(rest) - 1)
    drawn = rng.permutation(len(rest))
    in_val = {rest[i] for i in drawn[:n_val]}
    parts = {"train": tuple(e for e in rest if e not in in_val), "val": tuple(sorted(in_val)),
             "test": tuple(sorted(held))}
    split = Split(name, by, tuple(sorted(holdout)), seed, val, test, parts)
    check_no_leak(split, {"the dataset": {e: facts[e] for e in parts["train"]}})
    return split


def _drawn(values: Mapping[int, Sequence[str]], share: float, rng: np.random.Generator) -> tuple[str, ...]:
    """Values (each episode's first, in an order drawn from ``rng``) held out one by one until at least ``share`` of
    the episodes has one of them."""
    firsts = sorted({vs[0] for vs in values.values()})
    chosen: list[str] = []
    for i in rng.permutation(len(firsts)):
        if sum(1 for vs in values.values() if set(vs) & set(chosen)) >= share * len(values) and chosen:
            break
        chosen.append(firsts[i])
    return tuple(chosen)


def _listed(values: Sequence[str], most: int = 12) -> str:
    shown = ", ".join(values[:most])
    return shown + (f" and {len(values) - most} more" if len(values) > most else "")


def check_no_leak(split: Split, training: Mapping[str, Mapping[int, Facts]]) -> None:
    """Refuse, in one line, training data with a value the split holds out: ``training`` maps where episodes come
    from (the split's own dataset, each of ``data.mix``, DAgger's rounds) to their ids and values. Also refuses a
    split whose parts share an episode (a damaged or hand-edited file)."""
    seen: dict[int, str] = {}
    for part in PARTS:
        for e in split.parts[part]:
            if e in seen:
                raise VluiError(f"split {split.name!r} puts episode {e} in both {seen[e]} and {part}: make it again "
                                "(python -m vlui.jobs.split ... --replace)")
            seen[e] = part
    if split.axis is None:
        return
    held = set(split.holdout)
    for source, episodes in training.items():
        for e, facts in sorted(episodes.items()):
            leaked = sorted(held & set(facts[split.axis]))
            if leaked:
                raise VluiError(f"split {split.name!r} holds out {split.axis} {leaked[0]}, but {source} trains on "
                                f"episode {e}, which has it: that value would be seen in training (a leak); leave "
                                f"that data out of training, or hold out another {split.axis}")


# ------------------------------------------------------------------------------------------------- on disk
def read_splits(root: str | Path) -> dict[str, Split]:
    """The splits of the dataset at ``root`` (none: an empty mapping)."""
    path = Path(root) / SPLITS_FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise VluiError(f"{path} is damaged ({str(err).splitlines()[0]}): delete it and make the splits again "
                        "(python -m vlui.jobs.split)") from None
    if not isinstance(data, dict) or data.get("format_version") != SPLITS_VERSION:
        raise VluiError(f"{path} is not a splits file this vlui reads (format_version {SPLITS_VERSION}): delete it "
                        "and make the splits again (python -m vlui.jobs.split)")
    return {name: Split.from_dict(name, s, str(path)) for name, s in data.get("splits", {}).items()}


def read_split(root: str | Path, name: str, episodes: Collection[int]) -> Split:
    """Split ``name`` of the dataset at ``root``, checked against the dataset's ``episodes`` (the ids it holds now):
    an unknown name lists the dataset's splits; episodes collected after the split was made, or gone since, are
    an error, since the parts would no longer say where they belong."""
    splits = read_splits(root)
    if name not in splits:
        have = f"it has: {', '.join(splits)}" if splits else "it has none"
        raise VluiError(f"{root} has no split {name!r} ({have}): make it with `python -m vlui.jobs.split {root} "
                        f"--by {name if name in KINDS else 'KIND'} ...` (kinds: {', '.join(KINDS)})")
    split = splits[name]
    placed = {e for p in PARTS for e in split.parts[p]}
    new, gone = sorted(set(episodes) - placed), sorted(placed - set(episodes))
    if new or gone:
        what = (f"{len(new)} episode(s) it does not place (collected after it was made, e.g. {new[0]})" if new else
                f"{len(gone)} episode(s) it places are no longer in the dataset (e.g. {gone[0]})")
        raise VluiError(f"split {name!r} of {root} is out of date: {what}; make it again (python -m vlui.jobs.split "
                        f"{root} --by {split.by} --name {name} --replace ...)")
    return split


def write_split(root: str | Path, split: Split, replace: bool = False) -> Path:
    """Add ``split`` to the dataset's ``meta/splits.json`` (written to a temporary name and renamed into place). A
    split of the same name is replaced only when ``replace``: a policy trained on it would read another training
    part."""
    path = Path(root) / SPLITS_FILE
    splits = read_splits(root)
    if split.name in splits and not replace:
        raise VluiError(f"{root} already has a split named {split.name!r}: give another --name, or --replace it "
                        "(a policy trained on it then no longer matches it, and offline evaluation says so)")
    splits[split.name] = split
    data = {"format_version": SPLITS_VERSION, "splits": {n: s.to_dict() for n, s in splits.items()}}
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data) + "\n")
    os.replace(tmp, path)
    return path
