"""What every algorithm that learns from its own rollouts shares (:class:`OnlineModule`): a trained policy acting
by sampling on the phones, iterations of roll out then update, the held-out learning curve, imitation of
demonstrations alongside, and resuming at the iteration a checkpoint was written.

An iteration is one Lightning epoch (:meth:`OnlineModule.minibatches`):

1. **Roll out**: ``algo.episodes`` episodes (:class:`Episodes`, which :class:`vlui.jobs.online.OnlineEpisodes` runs
   on the phones ``env`` names), the policy *sampling* its dual-gestures (:mod:`vlui.algos.distributions`). The
   reward is 1 when the task's detector fires, minus ``algo.step_cost`` per step. A frozen backbone's features of
   each screen are computed once, when the policy acts on it, and kept for the updates.
2. **Learn**: the algorithm's own two hooks: :meth:`OnlineModule.learn_from` turns the episodes into what its updates
   read, and :meth:`OnlineModule.updates` hands Lightning the iteration's minibatches, one optimiser step each, for
   its ``training_step``.

The learning curve's evaluation (``algo.eval_every``) runs between the two, as the deterministic policy (the
distributions' mode), which is also what ``evaluate.py`` runs of the export. Everything is seeded by ``seed`` and the
iteration, so a run resumed from a checkpoint goes on exactly as it would have. :mod:`vlui.algos.ppo` is such an
algorithm.
"""

from __future__ import annotations

import csv
from abc import ABC, abstractmethod
import hashlib
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import lightning as L
import numpy as np
import torch
from torch import nn

from vlui.algos.base import PolicyModule
from vlui.algos.distributions import PointerDistribution, SquashedGaussian
from vlui.algos.settings import CURVE_COLUMNS
from vlui.models.policy import Fused
from vlui.seeding import substream
from vlui.spec import Memory, Past

log = logging.getLogger(__name__)


class Episodes(Protocol):
    """Where an online algorithm's episodes come from (:class:`vlui.jobs.online.OnlineEpisodes` on the configured
    phones): the instructions of its tasks, a training iteration's episodes and the held-out evaluation's, each acted
    in by ``act`` (an :class:`Actor`). Records are :class:`vlui.rollout.EpisodeRecord`; training ones keep their
    observations."""

    instructions: list[str]
    tasks: list[str]

    def train(self, iteration: int, act: "Actor") -> list[Any]: ...

    def evaluate(self, act: "Actor") -> list[Any]: ...


def _digest(screen: np.ndarray) -> bytes:
    return hashlib.blake2b(np.ascontiguousarray(screen).data, digest_size=16).digest()


class Actor:
    """The policy being trained as a function of a batch of screens: ``(B, H, W, 3)`` uint8 screens, their
    instructions and the episodes' :class:`~vlui.spec.Past` (None: every episode at its first step) -> ``(B, 4)``
    actions, sampled (rollouts) or the distributions' mode (evaluation). It times its forward passes (the rest of a
    rollout is the phones' time)."""

    def __init__(self, module: "OnlineModule", sample: bool, generator: torch.Generator | None = None) -> None:
        self.module, self.sample, self.generator = module, sample, generator
        self.seconds = 0.0

    @torch.no_grad()
    def __call__(self, screens: np.ndarray, instructions: list[str], past: Past | None = None) -> np.ndarray:
        start = time.perf_counter()
        m = self.module
        dist = m.distribution(m.fused(m.inputs(list(screens), instructions, past)))
        actions = dist.sample(self.generator) if self.sample else dist.mode()
        self.seconds += time.perf_counter() - start
        return actions.float().cpu().numpy()

    def memory(self) -> Memory:
        """A fresh record of one episode, keeping what the policy reads of it."""
        return self.module.policy.memory()


@dataclass
class Steps:
    """An iteration's episodes as one list of steps, in episode order. ``position`` is each step's index in its
    episode (how many steps of it came before: its past, :func:`past_windows`); ``cut`` holds, for each episode
    stopped at the task's step limit rather than ended, its last step's index, the screen it was cut at and its
    instruction (an algorithm with a value bootstraps from that screen)."""

    screens: list[np.ndarray] = field(default_factory=list)
    instructions: list[str] = field(default_factory=list)
    position: list[int] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    terminated: list[bool] = field(default_factory=list)
    ends: list[bool] = field(default_factory=list)  # the episode's last step (ended or cut)
    success: list[float] = field(default_factory=list)  # whether the episode the step is in succeeded
    cut: list[tuple[int, np.ndarray, str]] = field(default_factory=list)


def episode_steps(records: list[Any], step_cost: float) -> Steps:
    """The steps of ``records`` (:class:`vlui.rollout.EpisodeRecord`, with their observations), each rewarded the
    detector's reward minus ``step_cost``."""
    out = Steps()
    for r in records:
        out.success += [float(r.success)] * len(r.steps)
        for i, s in enumerate(r.steps):
            out.screens.append(s.observation["screen"])
            out.instructions.append(r.instruction)
            out.position.append(i)
            out.actions.append(s.action)
            out.rewards.append(s.reward - step_cost)
            out.terminated.append(s.terminated)
            out.ends.append(i == len(r.steps) - 1)
        if not r.steps[-1].terminated:  # cut at the step limit: bootstrapped from where it was cut
            out.cut.append((len(out.screens) - 1, r.final_observation["screen"], r.instruction))
    return out


def past_windows(latest: np.ndarray, count: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Windows over an iteration's steps (:class:`Steps`, in episode order): for each observation, the indices of
    the ``k`` steps before it, the most recent (``latest``, ``(N,)``) first, ``(N, K)``, and whether each exists
    ``(N, K)``: its episode had ``count`` steps before it (a missing one's index is 0, never read)."""
    ages = np.arange(k)
    valid = ages[None] < count[:, None]
    return np.where(valid, latest[:, None] - ages[None], 0), valid


def learned_from(ran: list[Any]) -> list[Any]:
    """The episodes of ``ran`` that count: those that took steps and did not fail for infrastructure reasons."""
    return [r for r in ran if not r.infra_failure and r.steps]


def rollout_stats(records: list[Any], ran: int, step_cost: float, wall: float, policy_seconds: float
                  ) -> dict[str, float]:
    """The figures of an iteration's rollout (``records``: the :func:`learned_from` of the ``ran`` episodes run, in
    ``wall`` seconds of which the policy took ``policy_seconds``): success, return, episodes and steps, their rates."""
    steps = sum(len(r.steps) for r in records)
    success = [r.success for r in records]
    return {
        "rollout/success": float(np.mean(success)) if success else 0.0,
        "rollout/return": float(np.mean([sum(s.reward for s in r.steps) - step_cost * len(r.steps)
                                         for r in records])) if records else 0.0,
        "rollout/episodes": float(len(records)), "rollout/steps": float(steps),
        "rollout/episode_steps": steps / max(1, len(records)),
        "rollout/episodes_per_s": len(records) / max(wall, 1e-9),
        "rollout/steps_per_s": steps / max(wall, 1e-9),
        "rollout/env_steps_per_s": steps / max(wall - policy_seconds, 1e-9),  # the phones alone
        "rollout/infra_failures": float(ran - len(records))}


class OnlineModule(PolicyModule, ABC):
    """An algorithm learning from its own episodes on the policy of ``policy`` (the settings of the policy it starts
    from), its settings an :class:`~vlui.algos.settings.OnlineConfig`. A subclass gives :meth:`learn_from`,
    :meth:`updates` and ``training_step``; the job hands it its :class:`Episodes` (and demonstrations) by :meth:`use`
    before training."""

    def __init__(self, policy: dict[str, Any], algo: dict[str, Any], seed: int = 0, channels_last: bool = True,
                 compile: bool = False) -> None:
        super().__init__(policy, algo, None, seed, channels_last, compile)
        cfg = self.policy.cfg
        self.log_std = nn.Parameter(torch.full((4,), float(self.algo.log_std_init))) if cfg.head == "mlp" else None
        self.episodes: Episodes | None = None  # set by the job before training
        self.demos: Any = None  # the demonstrations imitated alongside (algo.bc_coef > 0): a set-up DemoDataModule
        self._demo_inputs: dict[str, torch.Tensor] | None = None
        self._features: dict[bytes, torch.Tensor] = {}  # a screen's digest -> its frozen backbone features
        self._past_table: torch.Tensor | None = None  # the iteration's screens (or features), read by past_index
        self.stats: dict[str, float] = {}  # the last iteration's rollout figures (progress bar and loggers)
        self.iterations_done = 0  # kept in the checkpoints (resuming goes on at the next iteration)
        self._ran = False  # this epoch ran an iteration
        self.curve_path: Path | None = None  # the learning curve's CSV (the run's folder), when set
        self._curve_started = False
        self._totals = {"seconds": 0.0, "episodes": 0.0, "env_steps": 0.0}  # over the run, resumes included
        self._clock = time.perf_counter()

    # ------------------------------------------------------------------------------------------------ the algorithm's
    @abstractmethod
    def learn_from(self, records: list[Any]) -> dict[str, torch.Tensor]:
        """What the updates of an iteration read, from its episodes (:func:`learned_from` of the rollout); empty
        when there is nothing to learn from."""

    @abstractmethod
    def updates(self, iteration: int, batch: dict[str, torch.Tensor]) -> Iterator[dict[str, torch.Tensor]]:
        """The iteration's minibatches of ``batch`` (:meth:`learn_from`'s), each one optimiser step."""

    # ------------------------------------------------------------------------------------------------ model
    def setup(self, stage: str) -> None:
        self.use(self.episodes)

    def use(self, episodes: Episodes, demos: Any = None) -> None:
        """Act on ``episodes``' tasks, and imitate ``demos`` (a set-up DemoDataModule) alongside if given: the
        instructions' embeddings, computed once."""
        self.episodes, self.demos = episodes, demos if demos is not None else self.demos
        instructions = sorted({*episodes.instructions, *(self.demos.instructions if self.demos is not None else [])})
        self.instruction_index = {text: i for i, text in enumerate(instructions)}
        tokens, mask = self.policy.text.table(instructions)
        self.instr_tokens, self.instr_mask = tokens.to(self.device), mask.to(self.device)
        self._demo_inputs = None

    def train(self, mode: bool = True) -> "OnlineModule":
        super().train(mode)
        self.policy.eval()  # a ratio compares the same network's probabilities: no dropout, fixed BatchNorm
        return self

    @property
    def frozen(self) -> bool:
        return self.policy.encoder.vision.frozen

    def inputs(self, screens: list[np.ndarray], instructions: list[str],
               past: Past | None = None) -> dict[str, torch.Tensor]:
        """A batch of screens, instructions and (for a policy with memory) the episodes' past as the policy's inputs:
        a frozen backbone's features (computed once per distinct screen), or the screens themselves. The past is
        ``past_actions`` and ``past_valid``, and with ``model.history_screens`` ``past_screens`` in the form the
        screens take (features or pixels); without a ``past`` there is none (:meth:`fused` reads every episode as at
        its first step, :meth:`windows` adds the iteration's own)."""
        out = {"instruction": torch.tensor([self.instruction_index[i] for i in instructions], device=self.device)}
        out |= {"screens": torch.as_tensor(np.stack(screens), device=self.device)} if not self.frozen else \
            {"features": self._frozen_features(screens)}
        cfg = self.policy.cfg
        if not cfg.history or past is None:
            return out
        k = cfg.history
        out |= {"past_actions": torch.as_tensor(np.asarray(past.actions, np.float32), device=self.device),
                "past_valid": torch.as_tensor(np.asarray(past.valid, bool), device=self.device)}
        if cfg.history_screens:
            form = out["screens" if "screens" in out else "features"]
            table = torch.zeros((len(screens), k, *form.shape[1:]), dtype=form.dtype, device=self.device)
            for b, j in zip(*np.nonzero(np.asarray(past.valid)), strict=True):  # the steps that exist only
                screen = past.screens[b, j]
                table[b, j] = (torch.as_tensor(screen, device=self.device) if not self.frozen
                               else self._frozen_features([screen])[0])
            out["past_screens"] = table
        return out

    def _frozen_features(self, screens: list[np.ndarray]) -> torch.Tensor:
        """The frozen backbone's features of ``screens``, each computed once (kept by its digest)."""
        keys = [_digest(s) for s in screens]
        missing = list({k: s for k, s in zip(keys, screens, strict=True) if k not in self._features}.items())
        vision = self.policy.encoder.vision
        for i in range(0, len(missing), 64):
            chunk = missing[i:i + 64]
            images = torch.as_tensor(np.stack([s for _, s in chunk]), device=self.device)
            with torch.no_grad():
                fmap = vision.cached_map(images).half()
            for (key, _), f in zip(chunk, fmap, strict=True):
                self._features[key] = f
        return torch.stack([self._features[k] for k in keys])

    def step_inputs(self, steps: Steps) -> dict[str, torch.Tensor]:
        """The policy's inputs of every step of an iteration, each with its own past in its episode (the rows of
        the iteration's screens or features before it: no screen is held twice)."""
        inputs = self.inputs(steps.screens, steps.instructions)
        self._past_table = inputs["features" if "features" in inputs else "screens"]  # where past_index points
        position = np.asarray(steps.position)
        return inputs | self.windows(steps, np.arange(len(position)) - 1, position)

    def fused(self, batch: dict[str, torch.Tensor]) -> Fused:
        """The policy's features of a batch of :meth:`inputs` (or of :meth:`step_inputs`, whose past screens are
        ``past_index`` rows of the iteration's own)."""
        text, mask = self.instr_tokens[batch["instruction"]], self.instr_mask[batch["instruction"]]
        past = None
        if self.policy.cfg.history and "past_actions" in batch:
            screens = None
            if self.policy.cfg.history_screens:
                screens = batch["past_screens"] if "past_screens" in batch else self._past_table[batch["past_index"]]
            past = Past(batch["past_actions"], batch["past_valid"], screens)
        if "features" in batch:
            return self.policy.encoder.from_cached(batch["features"], text, mask, past)
        return self._encode(batch["screens"], text, mask, past)

    def windows(self, steps: Steps, latest: np.ndarray, count: np.ndarray) -> dict[str, torch.Tensor]:
        """The past of observations whose most recent past step is ``latest`` of ``steps`` (after ``count`` steps of
        their episode), as :meth:`fused` reads it; nothing for a memoryless policy."""
        k = self.policy.cfg.history
        if not k:
            return {}
        index, valid = past_windows(latest, count, k)
        actions = np.stack(steps.actions).astype(np.float32)[index]
        return {"past_actions": torch.as_tensor(np.where(valid[..., None], actions, np.nan), device=self.device),
                "past_valid": torch.as_tensor(valid, device=self.device),
                "past_index": torch.as_tensor(index, device=self.device)}

    def distribution(self, fused: Fused) -> PointerDistribution | SquashedGaussian:
        if self.policy.cfg.head == "pointer":
            return PointerDistribution(self.policy.head_output(fused))
        return SquashedGaussian(nn.Sequential.forward(self.policy.head, fused.pooled), self.log_std)

    # ------------------------------------------------------------------------------------------------ rollouts
    def _acting(self, run, actor: Actor) -> list[Any]:
        was = self.training
        self.eval()
        try:
            return run(actor)
        finally:
            self.train(was)

    def roll_out(self, iteration: int) -> list[Any]:
        """The sampling policy's episodes of ``iteration`` that count (:func:`learned_from`), their figures in
        :attr:`stats`."""
        actor = Actor(self, True, torch.Generator().manual_seed(substream(self.hparams.seed, iteration)))
        self._features.clear()
        start = time.perf_counter()
        ran = self._acting(lambda act: self.episodes.train(iteration, act), actor)
        records = learned_from(ran)
        self.stats = rollout_stats(records, len(ran), self.algo.step_cost, time.perf_counter() - start, actor.seconds)
        return records

    def minibatches(self) -> Iterator[dict[str, torch.Tensor]]:
        """One iteration: roll out, learn from its episodes (:meth:`learn_from`), report, then :meth:`updates`. The
        iterations done are counted here and kept in the checkpoints, not taken from Lightning's epochs (a run
        resumed from a checkpoint written at an epoch's end may be handed that epoch again)."""
        iteration = self.iterations_done
        if iteration >= self.algo.iterations:
            return
        self._ran = True
        batch = self.learn_from(self.roll_out(iteration))
        self._report(iteration)
        if batch:
            yield from self.updates(iteration, batch)

    # ------------------------------------------------------------------------------------------------ training
    def imitation_loss(self, batch_idx: int) -> torch.Tensor:
        """The policy's BC loss on a minibatch of the demonstrations (``algo.bc_coef``), drawn from the seed, the
        iteration and the minibatch's index (a resumed run draws the same ones)."""
        demos = self.demos.train_set
        if self._demo_inputs is None:  # once: the screens' frozen features (from the dataset's feature store)
            index = torch.tensor([self.instruction_index[self.demos.instructions[i]] for i in demos.instruction])
            frames, frame_of = self.demos.frames, self.demos.frame_of  # a row's screen is frame frame_of[row]
            self._demo_inputs = {"instruction": index.to(self.device), "actions": demos.actions.to(self.device),
                                 "frame": frame_of[demos.obs].to(self.device),
                                 "past_frame": frame_of[demos.past].to(self.device),
                                 "past_actions": demos.past_actions.to(self.device),
                                 "past_valid": demos.past_valid.to(self.device)}
            if self.frozen:
                self._demo_inputs["features"] = self._stored_features(str(self.demos.path.resolve()), frames)
            else:
                self._demo_inputs["screens"] = frames
        g = torch.Generator().manual_seed(substream(substream(self.hparams.seed, self.iterations_done), batch_idx,
                                                           10_007))
        pick = torch.randint(len(demos), (self.algo.minibatch,), generator=g).to(self.device)
        d = self._demo_inputs
        table = d["features"] if "features" in d else d["screens"]
        frame, past_frame = d["frame"][pick], d["past_frame"][pick]
        inputs = {"features" if "features" in d else "screens": table[frame.to(table.device)].to(self.device),
                  "instruction": d["instruction"][pick], "past_actions": d["past_actions"][pick],
                  "past_valid": d["past_valid"][pick]}
        if self.policy.cfg.history_screens:  # the past steps' frames in the same table
            inputs["past_screens"] = table[past_frame.to(table.device)].to(self.device)
        loss, _ = self.actor_loss(self.fused(inputs), d["actions"][pick])
        return loss

    def trainer_settings(self) -> dict[str, Any]:
        # an epoch is an iteration; the module stops the run after algo.iterations (on_train_epoch_end)
        return {"max_steps": -1, "max_epochs": -1}

    # ------------------------------------------------------------------------------------------------ reporting
    def evaluate(self) -> dict[str, float]:
        """Deterministic success on the (task, eval snapshot) pairs, one episode each, the same every time."""
        records = self._acting(self.episodes.evaluate, Actor(self, False))
        out = {"eval/success": float(np.mean([r.success for r in records]))}
        for task in self.episodes.tasks:
            out[f"eval/{task}"] = float(np.mean([r.success for r in records if r.job.task == task]))
        return out

    def _elapsed(self) -> dict[str, float]:
        now = time.perf_counter()
        self._totals["seconds"] += now - self._clock
        self._clock = now
        return dict(self._totals)

    def _write_curve(self, rows: list[dict[str, Any]]) -> None:
        """Append to the learning curve. The first write of a run keeps only the rows of the iterations its
        checkpoint has done (none when it starts over): what a resumed run redoes is not in it twice."""
        if self.curve_path is None or not self.trainer.is_global_zero:
            return
        first = not self._curve_started
        if first and self.curve_path.exists():
            with open(self.curve_path, newline="", encoding="utf-8") as f:
                rows = [r for r in csv.DictReader(f) if float(r["iteration"]) < self.iterations_done] + rows
        self._curve_started = True
        self.curve_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.curve_path, "w" if first else "a", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, CURVE_COLUMNS)
            if first:
                writer.writeheader()
            writer.writerows(rows)

    def _curve_row(self, iteration: int, metrics: dict[str, float]) -> dict[str, Any]:
        t = self._elapsed()
        return {"iteration": iteration, "seconds": round(t["seconds"], 1), "episodes": int(t["episodes"]),
                "env_steps": int(t["env_steps"]), "rollout_success": metrics.get("rollout/success", ""),
                "rollout_return": metrics.get("rollout/return", ""), "heldout_success": metrics.get("eval/success", "")}

    def _report(self, iteration: int) -> None:
        """Log the rollout's figures, and the held-out evaluation when it is due (before the first update too)."""
        metrics = {**self.stats, "iteration": float(iteration)}
        self._totals["episodes"] += self.stats["rollout/episodes"]
        self._totals["env_steps"] += self.stats["rollout/steps"]
        every = self.algo.eval_every
        if every and iteration % every == 0:
            metrics |= self.evaluate()
        self._record(iteration, metrics)
        held_out = f", held-out {100 * metrics['eval/success']:.1f}%" if "eval/success" in metrics else ""
        log.info(f"iteration {iteration + 1}/{self.algo.iterations}: success {100 * self.stats['rollout/success']:.1f}%"
                 f" of {self.algo.episodes} episodes, return {self.stats['rollout/return']:.3f}, "
                 f"{self.stats['rollout/steps_per_s']:.0f} steps/s ({self.stats['rollout/env_steps_per_s']:.0f} on "
                 f"the phones){held_out}")

    def on_train_epoch_end(self) -> None:
        if self._ran:  # runs before the checkpoint callback: the checkpoint counts this iteration as done
            self.iterations_done += 1
            self._ran = False
        if self.iterations_done >= self.algo.iterations:
            self.trainer.should_stop = True

    # the checkpoint's keys; "ppo_*" were their names before every online algorithm shared them, and still load
    ITERATIONS_KEYS = ("iterations_done", "ppo_iterations_done")
    TOTALS_KEYS = ("online_totals", "ppo_totals")

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        checkpoint[self.ITERATIONS_KEYS[0]] = self.iterations_done
        checkpoint[self.TOTALS_KEYS[0]] = self._elapsed()

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        done = next((checkpoint[k] for k in self.ITERATIONS_KEYS if k in checkpoint), 0)
        totals = next((checkpoint[k] for k in self.TOTALS_KEYS if k in checkpoint), self._totals)
        self.iterations_done = int(done)
        self._totals = {k: float(v) for k, v in totals.items()}
        self._clock = time.perf_counter()

    def on_train_end(self) -> None:
        if self.algo.eval_every:
            metrics = self.evaluate()
            self._record(self.iterations_done, {**metrics, "iteration": float(self.iterations_done)})
            log.info(f"after {self.iterations_done} iterations, held-out {100 * metrics['eval/success']:.1f}%")

    def _record(self, iteration: int, metrics: dict[str, float]) -> None:
        """``metrics`` to the loggers (at the current step) and a row of the learning curve."""
        for logger in self.loggers:
            logger.log_metrics(metrics, step=self.global_step)
        self._write_curve([self._curve_row(iteration, metrics)])


class RolloutData(L.LightningDataModule):
    """The data of online RL: each epoch's minibatches come from that epoch's rollouts."""

    def __init__(self, module: OnlineModule) -> None:
        super().__init__()
        self.module = module

    def train_dataloader(self) -> torch.utils.data.DataLoader:
        return torch.utils.data.DataLoader(_Iteration(self.module), batch_size=None, num_workers=0)


class _Iteration(torch.utils.data.IterableDataset):
    def __init__(self, module: OnlineModule) -> None:
        self.module = module

    def __iter__(self) -> Iterator[dict[str, torch.Tensor]]:
        return self.module.minibatches()
