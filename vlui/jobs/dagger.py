"""DAgger (Ross et al. 2011) with the scripted expert as the labeller: ``python train.py dagger.rounds=N``.

Each round rolls the policy trained so far out on the training configurations of the dataset it learned from (its
tasks and snapshots), asks the expert, on every state the policy visits, what it would do there, and writes those
states with the expert's actions as a dataset of its own. The policy is then trained further on the demonstrations
and every round so far. The policy learns what to do where its own mistakes lead (a wrong app opened, a tap that
changed nothing), which demonstrations alone never show.

A round's dataset is an ordinary dataset (docs/dataset.md) whose recipe says ``relabelled_by: expert``: its
``action`` column holds the expert's labels; the steps, rewards and ``done`` are those of the policy that acted.
With ``save_xml`` (training with grounding, which reads them) it keeps every screen's UI tree too: the labeller reads
them anyway, so they cost no extra device work, and the policy's own wrong turns add screens to ground on.
Rounds are written under ``<data>.dagger/<run>/round-<r>`` and kept, so an interrupted run resumes at the round it
was in (a round whose dataset and policy export exist is not redone).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image
from tqdm import tqdm

from vlui.agents import make_agent
from vlui.env.settings import EnvConfig
from vlui.data.format import DatasetWriter, progress
from vlui.data.training import TrainingData
from vlui.env.actions import ActionParser
from vlui.env.agent import OneEpisodeAtATime
from vlui.jobs.executor import LOCAL, Environments
from vlui.models.policy import VLUIPolicy
from vlui.rollout import EpisodeRecord, Job, dataset_rows, rollout
from vlui.seeding import substream
from vlui.tasks.catalog import resolve_tasks
from vlui.spec import Memory, Past


class PolicyActor(OneEpisodeAtATime):
    """A policy being trained, as a batch agent (deterministic: the actions evaluation would take). Screens of the
    dataset's size, past screens included, are resized to the policy's as training resized them."""

    def __init__(self, policy: VLUIPolicy) -> None:
        self.policy = policy

    def memory(self) -> Memory:
        return self.policy.memory()

    def act_batch(self, screens: np.ndarray, instructions: list[str], past: Past | None = None) -> np.ndarray:
        h, w = self.policy.image_size
        if screens.shape[1:3] != (h, w):
            screens = _resized(screens, (h, w))
            if past is not None and past.screens is not None:
                k = past.screens.shape[1]
                past = replace(past, screens=_resized(past.screens.reshape(-1, *past.screens.shape[2:]), (h, w))
                               .reshape(len(screens), k, h, w, 3))
        return self.policy.select_action(screens, instructions, past)


def _resized(screens: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``(N, H, W, 3)`` uint8 screens at ``size`` (height, width), resized as training resizes them."""
    h, w = size
    return np.stack([np.asarray(Image.fromarray(s).resize((w, h), Image.BILINEAR)) for s in screens])


class Labeller:
    """The expert as a labeller: a state it has no answer for (a screen it was not written for) gets no label,
    instead of stopping the run."""

    def __init__(self) -> None:
        self.expert = make_agent({"name": "expert"})

    def reset(self, task: Any, info: dict[str, Any] | None = None, seed: int | None = None) -> None:
        self.expert.reset(task, info, seed=seed)

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray | None:
        try:
            return self.expert.act(obs, info)
        except Exception:  # noqa: BLE001 - the expert's Stuck, or a bug in it: this state goes unlabelled
            return None


def relabelled(record: EpisodeRecord, parser: ActionParser) -> EpisodeRecord | None:
    """The episode with every step's action replaced by the labeller's (parsed as the environment parses it), up to
    the first state the labeller had no answer for (that state becomes the final observation); None when the first
    state has none."""
    steps = []
    for step in record.steps:
        if step.label is None:
            if not steps:
                return None
            return replace(record, steps=steps, final_observation=step.observation, final_extra=step.extra,
                           terminated=False, truncated=True)
        steps.append(replace(step, action=step.label, parsed=parser.parse(step.label).as_dict(), acted=step.action))
    return replace(record, steps=steps)


def round_dir(data_path: str | Path, run_name: str, round_: int) -> Path:
    path = Path(data_path)
    return path.parent / f"{path.name}.dagger" / run_name / f"round-{round_}"


def collect_round(policy: VLUIPolicy, env: EnvConfig, base: TrainingData, out: Path, round_: int,
                  episodes_per_pair: int, seed: int, slots: int = 16, pairs: int | None = None,
                  save_xml: bool = False, envs: Environments = LOCAL, snapshots: Sequence[str] | None = None
                  ) -> dict[str, Any]:
    """Roll ``policy`` out on the tasks x snapshots of dataset ``base`` (its tasks x ``snapshots`` when given: other
    training phones; those of its split's train part when it has a split; or ``pairs`` of them, drawn from the seed
    and the round), label each visited state with the expert's action, and write the relabelled episodes to ``out``
    (resuming a round cut short), with each screen's UI tree when ``save_xml``, on the environments of ``envs`` (this
    machine's, or a cluster's). Returns the round's success rate (the policy's own, as it acted) and the number of
    labelled states."""
    recipe = base.recipe
    only = base.training_pairs()
    tasks, snaps = list(recipe["tasks"]), [str(s) for s in (snapshots or recipe["snapshots"])]
    chosen = [(t, s) for t in tasks for s in snaps if only is None or (t, s) in only]
    if pairs is not None and pairs < len(chosen):
        rng = np.random.default_rng([seed, round_])
        chosen = [chosen[i] for i in sorted(rng.choice(len(chosen), pairs, replace=False))]
    jobs = [Job(task, snap, substream(substream(seed, round_, 7919), i), id=i)
            for i, (task, snap) in enumerate((t, s) for t, s in chosen for _ in range(episodes_per_pair))]
    # the dataset's phones, its screens and its reading of actions (the policy's, which learnt from it)
    spec = base.stored
    policy.spec.require_same_actions(spec, "the policy", str(base.path), "run DAgger on the dataset the policy was "
                                     "trained on")
    env = replace(env.with_spec(spec), snapshots=snaps)
    writer = DatasetWriter(out, {"tasks": tasks, "snapshots": snaps, "pairs": [list(p) for p in chosen],
                                 "episodes_per_pair": episodes_per_pair,
                                 "seed": seed, "round": round_, "relabelled_by": "expert", "base": str(base.path),
                                 "env": env.measured(),
                                 # recorded when set only: rounds collected before the option resume as they were
                                 **({"save_xml": True} if save_xml else {})},
                       spec)
    writer.open(resume=True, plan={j.id: (j.task, j.snapshot, j.seed) for j in jobs})
    done = writer.done()
    todo = [j for j in jobs if j.id not in done]
    parser = ActionParser.of(spec, clip=env.clip_actions)
    bar = tqdm(total=len(jobs), initial=len(done), unit="episode", desc=f"dagger round {round_}", dynamic_ncols=True,
               mininterval=0.5)
    was_training = policy.training
    policy.eval()

    def save(record: EpisodeRecord) -> None:
        bar.update(1)
        labelled = None if record.infra_failure or not record.steps else relabelled(record, parser)
        if labelled is not None:  # otherwise nothing to learn from: the environment failed, or no label
            writer.write(record.job.id, dataset_rows(labelled, save_xml=save_xml))

    try:
        with torch.no_grad():
            rollout(todo, envs.factory(env, resolve_tasks(tasks, backend=env.backend), snaps, include_xml=True),
                    lambda: PolicyActor(policy), envs.slots(env, slots), save, keep_observations=True,
                    labeller=Labeller, retries=envs.retries)
    finally:
        bar.close()
        writer.close()
        policy.train(was_training)
    index = writer.done()
    have, planned = progress(out)
    return {"episodes": len(index), "planned": planned, "complete": planned is None or have >= planned,
            "policy_success": float(np.mean([e["success"] for e in index.values()])) if index else 0.0,
            "labelled_states": int(sum(e["steps"] for e in index.values()))}
