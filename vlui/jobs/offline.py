"""``python evaluate.py mode=offline``: GUIOdyssey's offline evaluation, no phone.

For every step of a dataset's held-out demonstrations (a named split's part, vlui/data/splits.py), the agent is
shown the step's screen, the instruction and (a policy with ``model.history``) the steps demonstrated before it
(their actions, and their screens with ``model.history_screens``), and its action is compared with the demonstrated one (:func:`vlui.eval.metrics.actions_match`). AMS is the share of
steps matched, SR the share of episodes with every step matched. A policy acts on batches of steps
(``data.batch_size``) in one forward pass each; ``agent=random`` draws uniform dual-gestures, a floor to beat.

Several policies (``checkpoint=`` a glob, a list, or a mapping of recipes) are scored on the same steps, with the
spread across their training seeds and the phones from the online report's bootstrap. A policy is not scored on
episodes it trained on: its export says which dataset and split it learnt from.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import DictConfig
from PIL import Image
from tqdm import tqdm

from vlui.agents import make_agent, takes_checkpoint
from vlui.agents.settings import AgentConfig
from vlui.config import EvaluateJobConfig, job_settings
from vlui.data.format import check_observations, dataset_spec, decode_png, read_episode, read_index, read_info
from vlui.data.splits import Split, read_split
from vlui.device import OBSERVATION_VERSION
from vlui.env.actions import ActionError, ActionParser, ParsedAction
from vlui.env.ui_text import parse_xml
from vlui.errors import VluiError
from vlui.eval import offline_report
from vlui.eval.metrics import Box, actions_match
from vlui.jobs.policies import checkpoint_groups
from vlui.models.files import CONFIG, export_dir
from vlui.seeding import substream
from vlui.spec import Memory, ObsActionSpec

log = logging.getLogger(__name__)

AGENTS = ("policy", "random")  # the agents that act on a screen alone, without a phone to ask
COLUMNS = ["step", "task_id", "snapshot_id", "instruction", "screen", "xml", "action", "action_kind", "action_key",
           "touch", "lift", "acted", "is_last"]


@dataclass(frozen=True)
class Demonstration:
    """One episode's steps as offline evaluation reads them (length T: the rows with an action)."""

    id: int
    task: str
    snapshot: str
    instruction: str
    screens: list[bytes]  # (T,) PNGs
    reference: list[ParsedAction]  # (T,) the demonstrated actions
    taken: np.ndarray  # (T, 4) float32, the action taken at each step: what the next steps' past holds
    boxes: list[list[Box]] | None  # (T,) each screen's clickable elements, or None without UI trees


def clickable_boxes(xml: str) -> list[Box]:
    """The enabled clickable elements of a UI dump, in document (drawing) order, as normalised (top, left, bottom,
    right) boxes: a fraction of the screen, whose size is the root node's far corner (the simulated phone's window
    spans it)."""
    elements = parse_xml(xml)
    if not elements:
        return []
    width, height = elements[0].bounds[2:]
    return [(e.bounds[1] / height, e.bounds[0] / width, e.bounds[3] / height, e.bounds[2] / width)
            for e in elements if e.clickable and e.enabled and e.bounds[2] > e.bounds[0] and e.bounds[3] > e.bounds[1]]


def _demonstration(root: Path, entry: dict[str, Any], parser: ActionParser) -> Demonstration:
    rows = read_episode(root / entry["file"], COLUMNS).to_pylist()
    steps = [r for r in rows if not r["is_last"] and r["action"] is not None]
    reference, taken = [], []
    for r in steps:
        if r["action_kind"] is not None:
            key = r["action_key"] or ""
            reference.append(ParsedAction(r["action_kind"], tuple(r["touch"]), tuple(r["lift"]), key))
        else:  # read as the dataset reads its actions
            reference.append(parser.parse(r["action"]))
        # a relabelled (DAgger) step's label is not what led on: the action taken is (vlui/data/datamodule.py)
        taken.append(np.asarray(r["acted"] if r["acted"] is not None else r["action"], np.float32))
    xmls = [r["xml"] for r in steps]
    first = rows[0]
    return Demonstration(int(entry["episode_id"]), first["task_id"], str(first["snapshot_id"]),
                         first["instruction"], [r["screen"] for r in steps], reference,
                         np.stack(taken) if taken else np.zeros((0, 4), np.float32),
                         [clickable_boxes(x) for x in xmls] if xmls and None not in xmls else None)


@dataclass(frozen=True)
class Plan:
    """An offline evaluation resolved from its settings before any agent loads."""

    root: Path
    spec: ObsActionSpec  # the dataset's screens and reading of actions
    split: Split | None
    part: str
    episodes: list[dict[str, Any]]  # the index entries of the episodes scored
    agent: AgentConfig
    policies: list[tuple[str, str]]  # (group, checkpoint) of each policy; ("random", "random") for the random agent
    out: Path
    batch_size: int
    seed: int
    config: dict[str, Any]

    @property
    def groups(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for group, checkpoint in self.policies:
            out.setdefault(group, []).append(checkpoint)
        return out


def plan(job: EvaluateJobConfig) -> Plan:
    """The episodes ``job`` scores and the agents that are scored."""
    agent = job.agent
    if agent.name not in AGENTS:
        raise VluiError(f"mode=offline scores an agent on a dataset's screens without a phone: agent=policy or "
                        f"agent=random, not agent={agent.name} (evaluate it online: mode=online)")
    root = Path(job.data.path)
    info = read_info(root)
    index = read_index(root)
    split, part = job.data.split, job.data.part
    if split is None and part != "all":
        raise VluiError(f"mode=offline scores a split's held-out part: set data.split=<name> (make one with python -m "
                        f"vlui.jobs.split {root} --by ...), or data.part=all to score every episode of a dataset "
                        "the policy never trained on")
    if split is not None and part == "all":
        raise VluiError(f"data.part=all scores every episode of {root}: leave data.split out, or score one part of "
                        f"split {split!r} (data.part=train, val or test)")
    chosen = read_split(root, split, index) if split is not None else None
    ids = sorted(index) if chosen is None else chosen.parts[part]
    if not ids:
        raise VluiError(f"{'the dataset' if chosen is None else f'the {part} part of split {split!r}'} of {root} has "
                        "no episode to score: " + ("collect some" if chosen is None else "score another part, or "
                                                   "make the split again with a share for it"))
    check_observations(root, info, OBSERVATION_VERSION)
    out = Path(job.paths.output_dir)
    if (out / "episodes.jsonl").exists():  # its results.json would be replaced by this one's
        raise VluiError(f"{out} holds an online evaluation: name this one (name=...) or choose another output folder "
                        "(hydra.run.dir=...)")
    if takes_checkpoint(agent):
        groups = checkpoint_groups(agent.checkpoint or job.checkpoint)
        if not groups:
            raise VluiError("mode=offline with agent=policy needs checkpoint=checkpoints/<experiment>/<run> (or a "
                            "glob or list of runs trained with different seeds)")
        policies = [(g, c) for g, paths in groups.items() for c in paths]
        _check_screens(root, [index[e] for e in ids])
        for _, checkpoint in policies:
            _refuse_training_episodes(checkpoint, root, chosen, part, set(ids))
    else:
        policies = [(agent.name, agent.name)]
    return Plan(root, dataset_spec(info, root), chosen, part, [index[e] for e in ids], agent, policies, out,
                job.data.batch_size, job.seed, asdict(job))


def _check_screens(root: Path, entries: list[dict[str, Any]]) -> None:
    """Every step a policy is scored on has its screen: a one-line error naming the first episode without."""
    for entry in entries:
        screens = read_episode(root / entry["file"], ["step", "screen"]).to_pylist()
        missing = next((r["step"] for r in screens if not r["screen"]), None)
        if missing is not None:
            raise VluiError(f"{root}: the screen of episode {entry['episode_id']} step {missing} is missing, and a "
                            f"policy is scored on each step's screen: delete {entry['file']} and run the same "
                            "collect.py command again to collect that episode again")


def trained_on(checkpoint: str) -> dict[str, Any] | None:
    """What a policy export says it learnt from (its ``dataset``, and ``split`` with its digest), read without
    loading it; None for a Lightning checkpoint or an export that does not say."""
    path = export_dir(checkpoint) / CONFIG
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None  # loading the policy says what is wrong with it
    return {k: config[k] for k in ("dataset", "split") if k in config} if "dataset" in config else None


def _refuse_training_episodes(checkpoint: str, root: Path, split: Split | None, part: str, ids: set[int]) -> None:
    """Refuse to score a policy on episodes it trained on (a leak), as far as its export says what it learnt from: a
    dataset's every episode without a split, or a split's train part (or, made again since, an unknown part).
    Scoring a split's train part is allowed: it says how well the policy fits what it learnt."""
    learnt = trained_on(checkpoint)
    if learnt is None or part == "train" or Path(learnt["dataset"]).resolve() != root.resolve():
        return
    own = learnt.get("split")
    if own is None:
        raise VluiError(f"{checkpoint} was trained on every episode of {root} (no data.split): scoring it on them "
                        "measures what it memorised; score it on another dataset, or train it on a split "
                        "(data.split=...) and score that split's test part")
    if split is None or split.name != own["name"]:
        trained = read_split(root, own["name"], read_index(root))
        overlap = len(set(trained.parts["train"]) & ids)
        if overlap:
            raise VluiError(f"{checkpoint} trained on split {own['name']!r} of {root}, whose train part holds {overlap} "
                            f"of the {len(ids)} episodes scored: score the test part of split {own['name']!r} "
                            f"(data.split={own['name']})")
    elif split.digest() != own["digest"]:
        raise VluiError(f"split {split.name!r} of {root} was made again after {checkpoint} trained on it: its train "
                        "part may hold episodes scored now; train the policy again on the split as it is")


def _screens(screens: list[bytes], size: tuple[int, int]) -> np.ndarray:
    """PNG screens as ``(B, H, W, 3)`` uint8 at ``size`` (resized as training resizes them)."""
    h, w = size
    out = []
    for png in screens:
        img = decode_png(png)
        if img.shape[:2] != (h, w):
            img = np.asarray(Image.fromarray(img).resize((w, h), Image.BILINEAR))
        out.append(img)
    return np.stack(out)


def _act(agent: Any, demos: list[Demonstration], batch_size: int, seed: int, bar: tqdm) -> list[np.ndarray]:
    """Each demonstration's ``(T, 4)`` actions of ``agent``: a policy's in batches of steps across episodes; the
    random agent's drawn from each episode's seed, whatever the batches."""
    if agent.spec is None:  # no screens to batch: the random agent
        out = []
        for d in demos:
            agent.reset(None, seed=substream(seed, d.id))
            out.append(np.stack([agent.act({}, {}) for _ in d.reference]) if d.reference else np.zeros((0, 4)))
            bar.update(len(d.reference))
        return out
    size = agent.spec.image_size
    steps = [(i, t) for i, d in enumerate(demos) for t in range(len(d.reference))]
    actions = [np.zeros((len(d.reference), 4), np.float32) for d in demos]
    for start in range(0, len(steps), batch_size):
        batch = steps[start:start + batch_size]
        screens = _screens([demos[i].screens[t] for i, t in batch], size)
        predicted = agent.act_batch(screens, [demos[i].instruction for i, _ in batch],
                                    Memory.batch([_memory(agent.memory(), demos[i], t, size) for i, t in batch], screens))
        for (i, t), a in zip(batch, predicted, strict=True):
            actions[i][t] = a
        bar.update(len(batch))
    return actions


def _memory(memory: Memory, demo: Demonstration, t: int, size: tuple[int, int]) -> Memory:
    """``memory`` (fresh) told the steps demonstrated before step ``t``, as many as it keeps: what the policy would
    remember had it been acting."""
    for s in range(max(0, t - memory.steps), t):
        memory.add(_screens([demo.screens[s]], size)[0] if memory.screens else None, demo.taken[s])
    return memory


def _parsed(parser: ActionParser, action: np.ndarray) -> ParsedAction | None:
    try:
        return parser.parse(action)
    except ActionError:  # NaN or out of range: no valid action, which matches nothing
        return None


def run(cfg: DictConfig | EvaluateJobConfig) -> dict[str, Any]:
    """The offline evaluation ``cfg`` (a composed config with ``mode=offline``, or its typed settings) asks for."""
    job = job_settings(cfg, EvaluateJobConfig)
    if job.mode != "offline":
        raise VluiError(f"mode={job.mode} evaluates on phones: run it as python evaluate.py (vlui.jobs.evaluate.run), "
                        "or set mode=offline to score a dataset's demonstrations")
    return score(plan(job))


def score(p: Plan) -> dict[str, Any]:
    """Score the agents of ``p`` on its demonstrations, step by step, and write the report."""
    parser = ActionParser.of(p.spec)
    demos = [_demonstration(p.root, entry, parser) for entry in p.episodes]
    steps = sum(len(d.reference) for d in demos)
    elements = all(d.boxes is not None for d in demos)
    what = f"the {p.part} part of split {p.split.name}" if p.split else "every episode"
    log.info(f"scoring agent={p.agent.name}{f' ({len(p.policies)} policies)' if len(p.policies) > 1 else ''} on "
             f"{len(demos)} episodes ({steps} steps) of {p.root}, {what}"
             + ("" if elements else "; no UI trees in the dataset: taps are matched by distance alone"))
    records = []
    bar = tqdm(total=steps * len(p.policies), unit="step", dynamic_ncols=True, mininterval=0.5)
    try:
        for group, checkpoint in p.policies:
            settings = replace(p.agent, checkpoint=checkpoint) if takes_checkpoint(p.agent) else p.agent
            agent = make_agent(settings, p.seed)
            if agent.spec is not None:
                agent.spec.require_same_actions(p.spec, "the policy", str(p.root), "score it on a dataset collected "
                                                "with its env.tap_threshold and env.y_distance_scale")
            for d, actions in zip(demos, _act(agent, demos, p.batch_size, p.seed, bar), strict=True):
                matches = [bool(actions_match(_parsed(parser, a), ref, d.boxes[t] if d.boxes else None))
                           for t, (a, ref) in enumerate(zip(actions, d.reference, strict=True))]
                records.append({"checkpoint": checkpoint, "group": group, "episode": d.id, "task": d.task,
                                "snapshot": d.snapshot, "matches": matches,
                                "kinds": [r.kind for r in d.reference],
                                "actions": [[round(float(v), 4) for v in a] for a in actions]})
            del agent
    finally:
        bar.close()
    split = None if p.split is None else {"name": p.split.name, "by": p.split.by, "axis": p.split.axis,
                                          "holdout": list(p.split.holdout), "part": p.part,
                                          "digest": p.split.digest()}
    result = offline_report.aggregate(records, p.groups, p.part, {
        "agent": p.agent.name, "checkpoint": p.policies[0][1] if len(p.policies) == 1 and takes_checkpoint(
            p.agent) else None, "dataset": str(p.root), "split": split, "elements": elements, "config": p.config})
    paths = offline_report.write(result, p.out)
    print(offline_report.table(result))
    log.info(f"results in {paths['json']} and {paths['md']}")
    return {"ams": result["ams"], "success_rate": result["success_rate"], "episodes": result["episodes"],
            "steps": result["steps"], "results": str(paths["json"])}
