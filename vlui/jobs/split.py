"""``python -m vlui.jobs.split DATASET --by KIND ...``: name a split of a collected dataset (docs/dataset.md).

  python -m vlui.jobs.split data/gen200 --by unseen_device --holdout "WXGA Tablet" --val 0.1 --seed 0
  python -m vlui.jobs.split data/gen200 --by unseen_app --test 0.2        # app combinations drawn with the seed
  python -m vlui.jobs.split data/gen200 --by random --test 0.2
  python -m vlui.jobs.split data/gen200                                   # the dataset's splits

DATASET is a folder or a name in data/. The split is written to its ``meta/splits.json``: ``python train.py
data.split=NAME`` trains on its train part (validating on its val part), ``python evaluate.py mode=offline
data.split=NAME`` scores a policy on its test part. Kinds: ``random``, ``unseen_task`` (a template's instances are
one task), ``unseen_device`` (a device profile, or a kind: phone, tablet), ``unseen_app`` (an app combination such
as ``clock`` or ``clock+settings``).

This lives with the jobs, not in ``vlui.data``: which task, device and apps an episode has comes from the task
catalog and the snapshots, which the data layer does not know (vlui/data/splits.py is told).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from vlui.android.snapshot import held_out, load_snapshot
from vlui.data.card import update_dataset_card
from vlui.data.format import dataset_folder, read_index, writer_pid
from vlui.data.splits import KINDS, PARTS, Facts, Split, check_no_leak, make_split, read_splits, write_split
from vlui.data.training import TrainingData
from vlui.errors import VluiError, tool_status
from vlui.tasks.catalog import catalog
from vlui.tasks.task import Task
from vlui.tasks.templates import instance_from_id

log = logging.getLogger(__name__)

HELD_OUT_OPT_IN = "allow_held_out_phones=true"


def _task(task_id: str) -> Task:
    if "@" in task_id:
        return instance_from_id(task_id)
    known = catalog()
    if task_id not in known:
        raise VluiError(f"a dataset episode's task {task_id!r} is not in this vlui's catalog "
                        "(vlui/tasks/data/bmoca.yaml, bmoca25.yaml): update vlui, or leave that dataset out")
    return known[task_id]


def pair_facts(task_id: str, snapshot_id: str) -> Facts:
    """What an episode of ``task_id`` on ``snapshot_id`` is, on each axis a split holds values out on: its task (the
    template's name for an instance, then the instance's id), its device (the profile, then its kind) and its app
    combination (the task's apps, sorted, joined by ``+``)."""
    task = _task(task_id)
    snapshot = load_snapshot(snapshot_id)
    family = task_id.split("@", 1)[0]
    return {"task": tuple(dict.fromkeys((family, task_id))),
            "device": (snapshot.device, snapshot.profile["kind"]),
            "apps": ("+".join(sorted(set(task.apps))),)}


def episode_facts(index: Mapping[int, Mapping[str, Any]], episodes: Iterable[int] | None = None) -> dict[int, Facts]:
    """Each episode's :func:`pair_facts` (of ``episodes``, all by default), read from a dataset's ``index``
    (:func:`vlui.data.format.read_index`)."""
    wanted = index if episodes is None else {e: index[e] for e in episodes}
    known: dict[tuple[str, str], Facts] = {}
    out = {}
    for e, entry in wanted.items():
        pair = (entry["task_id"], str(entry["snapshot_id"]))
        if pair not in known:
            known[pair] = pair_facts(*pair)
        out[e] = known[pair]
    return out


def make(root: str | Path, by: str, holdout: Iterable[str] = (), test: float | None = None, val: float = 0.1,
         seed: int = 0, name: str | None = None, replace: bool = False) -> Split:
    """Make split ``name`` (``by`` when not given) of the dataset at ``root`` and write it to its metadata."""
    root = Path(root)
    if not (root / "meta" / "info.json").exists():
        raise VluiError(f"no dataset at {root} (no meta/info.json): give a dataset's folder or its name in data/")
    pid = writer_pid(root)
    if pid is not None:
        raise VluiError(f"a collection (pid {pid}) is still writing {root}: split it once the collection is done")
    split = make_split(name or by, by, episode_facts(read_index(root)), tuple(holdout), test, val, seed)
    write_split(root, split, replace)
    update_dataset_card(root)  # a config per split
    return split


def check_training_reads(data: TrainingData, others: Mapping[str, Mapping[int, Mapping[str, Any]]],
                         allowed: bool = False) -> None:
    """What training reads, ``data``'s episodes (its split's train and val parts) and those of ``others`` (label ->
    a dataset's index: ``data.mix``, DAgger's rounds), holds none of the values ``data.split`` holds out
    (:func:`vlui.data.splits.check_no_leak`), and no validation phone or test snapshot unless ``allowed``
    (:func:`refuse_held_out_phones`)."""
    split = data.split
    own = {e: data.index[e] for e in data.read_episodes()}
    if split is not None and split.axis is not None:
        check_no_leak(split, {f"{data.path} (its train and val parts)": episode_facts(own),
                              **{label: episode_facts(index) for label, index in others.items()}})
    where = f"{data.path} (split {split.name}'s train and val parts)" if split else str(data.path)
    refuse_held_out_phones({label: [str(e["snapshot_id"]) for e in index.values()]
                            for label, index in {f"the dataset {where}": own, **others}.items()}, allowed)


def refuse_held_out_phones(sources: Mapping[str, Iterable[str]], allowed: bool = False) -> None:
    """Training reads no validation phone and no test snapshot: ``sources`` (what training reads -> the snapshot ids
    it holds) with one is refused, since every result of the policy would then be measured on phones it was trained
    on (docs/evaluation.md, "Held out means held out"). ``allowed`` (``allow_held_out_phones=true``) trains on them
    all the same, with a warning: only to measure what that does."""
    for what, refs in sources.items():
        held = held_out(refs)
        if not held:
            continue
        some = ", ".join(held[:3]) + (f" and {len(held) - 3} more" if len(held) > 3 else "")
        if allowed:
            log.warning("%s holds validation or test phones (%s), trained on as %s asks: this policy's results on "
                        "them are not held out", what, some, HELD_OUT_OPT_IN)
            continue
        raise VluiError(f"{what} holds validation or test phones ({some}): a policy trained on them is measured on "
                        "phones it has seen. Train on training phones (env.snapshots=[train,random:N]), or add "
                        f"{HELD_OUT_OPT_IN} to measure what training on them does")


def describe(split: Split, facts: Mapping[int, Facts]) -> str:
    """One line: the split's name, kind, held-out values, and each part's episodes (and values on the axis)."""
    counts = ", ".join(f"{p} {len(split.parts[p])}" for p in PARTS)
    line = f"{split.name}: {split.by}"
    if split.holdout:
        line += f" holding out {split.axis} {', '.join(split.holdout)}"
    line += f" (seed {split.seed}); episodes: {counts}"
    if split.axis is not None and facts:
        shown = sorted({facts[e][split.axis][0] for e in split.parts["train"] if e in facts})
        line += f"; trains on {split.axis} {', '.join(shown[:8])}" + (" …" if len(shown) > 8 else "")
    return line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vlui.jobs.split", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", help="a dataset's folder, or its name in data/")
    parser.add_argument("--by", choices=list(KINDS), help="the kind of split to make (without it: list the splits)")
    parser.add_argument("--holdout", nargs="+", default=[], metavar="VALUE",
                        help="the task, device or app combination(s) to hold out")
    parser.add_argument("--test", type=float, help="the share of episodes to hold out (random; or drawn values)")
    parser.add_argument("--val", type=float, default=0.1, help="the share of the other episodes for validation")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--name", help="the split's name (default: its kind)")
    parser.add_argument("--replace", action="store_true", help="make a split of that name again")
    args = parser.parse_args(argv)

    def run() -> int:
        root = dataset_folder(args.dataset)
        if args.by is None:
            splits = read_splits(root)
            facts = episode_facts(read_index(root)) if splits else {}
            print("\n".join(describe(s, facts) for s in splits.values()) or f"{root} has no splits")
            return 0
        split = make(root, args.by, args.holdout, args.test, args.val, args.seed, args.name, args.replace)
        print(describe(split, episode_facts(read_index(root))))
        return 0

    return tool_status(run)


if __name__ == "__main__":
    sys.exit(main())
