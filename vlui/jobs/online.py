"""The online side of ``python train.py``, for an algorithm that learns from rollouts (its entry's
``learns_from="rollouts"``, its settings an :class:`~vlui.algos.settings.OnlineConfig`: PPO): :class:`FromRollouts`,
the training job's hooks for it: the policy it starts from, the episodes it learns from, how its time is counted and
what its export records (:mod:`vlui.algos.online` and :mod:`vlui.algos.ppo` are the algorithms; this module knows the
phones).

Training episodes are drawn from the tasks of ``algo.tasks`` on ``env.snapshots`` (the configurations trained on);
the learning curve's held-out evaluation runs every task on ``algo.eval_snapshots``, the same episodes each time.
Both go through the one rollout loop (:func:`vlui.rollout.rollout`), on whichever backend ``env`` names: the same
algorithm drives the simulated phone or emulators over ADB.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

import lightning as L

from vlui.algos.online import Actor, OnlineModule, RolloutData
from vlui.backends import resolve_snapshots
from vlui.config import TrainJobConfig
from vlui.env.settings import EnvConfig
from vlui.data.datamodule import DemoDataModule
from vlui.data.training import TrainingData
from vlui.env.agent import OneEpisodeAtATime
from vlui.errors import VluiError
from vlui.jobs.executor import LOCAL, Environments
from vlui.jobs.split import check_training_reads, refuse_held_out_phones
from vlui.models.policy import load_policy
from vlui.models.settings import to_dict
from vlui.rollout import EpisodeRecord, Job, rollout
from vlui.spec import ObsActionSpec
from vlui.tasks.catalog import resolve_tasks


class OnlineEpisodes:
    """Episodes of ``tasks`` on the ``env`` phones for training and on ``eval_snapshots`` for evaluation, at most
    ``env.num_envs`` of them side by side (one per device over ADB), on this machine or a cluster's workers (``where``:
    vlui/jobs/executor.py). Training iteration ``i`` runs ``episodes`` (task,
    snapshot) pairs drawn from ``(seed, i)``: a resumed run replays exactly what it would have."""

    def __init__(self, env: EnvConfig, tasks: Any, eval_snapshots: Any, episodes: int, seed: int,
                 where: Environments = LOCAL) -> None:
        self.env, self.episodes, self.seed, self.where = env, episodes, seed, where
        self.task_list = resolve_tasks(tasks, backend=env.backend)
        self.tasks = [t.id for t in self.task_list]
        self.instructions = sorted({t.instruction for t in self.task_list})
        self.snapshots = resolve_snapshots(env)
        self.eval_snapshots = resolve_snapshots(replace(env, snapshots=eval_snapshots)) if eval_snapshots else []
        self.slots = where.slots(env, env.num_envs)

    def train(self, iteration: int, act: Actor) -> list[EpisodeRecord]:
        rng = np.random.default_rng([self.seed, iteration])
        pairs = [(t, s) for t in self.tasks for s in self.snapshots]
        chosen = rng.choice(len(pairs), self.episodes, replace=self.episodes > len(pairs))
        jobs = [Job(*pairs[c], seed=int(rng.integers(2**31)), id=i) for i, c in enumerate(chosen)]
        return self._run(jobs, act, self.snapshots, keep_observations=True)

    def evaluate(self, act: Actor) -> list[EpisodeRecord]:
        pairs = [(t, s) for t in self.tasks for s in self.eval_snapshots]
        return self._run([Job(t, s, seed=i, id=i) for i, (t, s) in enumerate(pairs)], act, self.eval_snapshots)

    def _run(self, jobs: list[Job], act: Actor, snapshots: list[str], keep_observations: bool = False
             ) -> list[EpisodeRecord]:
        env = replace(self.env, snapshots=snapshots)
        records: list[EpisodeRecord] = []
        agent = ActorAgent(act)
        rollout(jobs, self.where.factory(env, self.task_list, snapshots), lambda: agent, self.slots, records.append,
                keep_observations=keep_observations, retries=self.where.retries)
        return records


class ActorAgent(OneEpisodeAtATime):
    """The policy being trained (an :class:`~vlui.algos.online.Actor`) as the rollout loop's batch agent."""

    def __init__(self, act: Actor) -> None:
        self.act_batch = act
        self.memory = act.memory


class FromRollouts:
    """An algorithm learning from its own rollouts (:class:`~vlui.algos.online.OnlineModule`): it starts from the
    policy ``init=`` names, rolls it out on ``env``'s phones and counts its time in iterations, each one Lightning
    epoch (``algo.iterations``; a checkpoint every ``algo.checkpoint_every``); its export says which policy it started
    from, and its recipe which phones it learnt on."""

    def build(self, job: TrainJobConfig, module_class: type[OnlineModule], envs: Environments = LOCAL
              ) -> tuple[OnlineModule, RolloutData]:
        """The online algorithm ``module_class`` from the policy ``init`` names (its settings and weights) on the
        episodes of ``algo`` and ``env``."""
        if not job.init:
            raise VluiError(f"algo={job.algo.name} fine-tunes a trained policy online: add "
                            "init=checkpoints/<experiment>/<run> (a run's folder or its policy/ export)")
        if job.dagger.rounds:
            raise VluiError(f"dagger.rounds={job.dagger.rounds} with algo={job.algo.name}: DAgger follows offline "
                            "training; fine-tune a policy DAgger already improved, with dagger.rounds=0")
        if job.data.grounding.weight:
            raise VluiError(f"data.grounding trains alongside BC or IQL on a dataset's screens; "
                            f"algo={job.algo.name} learns from its own rollouts: drop data.grounding.weight")
        if job.data.augment.zoom:
            raise VluiError(f"data.augment.zoom zooms the dataset's screens for BC or IQL; algo={job.algo.name} "
                            "learns from its own rollouts: drop data.augment.zoom")
        if job.data.balance is not None:
            raise VluiError(f"data.balance balances BC or IQL's batches over a dataset's phones; "
                            f"algo={job.algo.name} learns from its own rollouts: drop data.balance")
        if job.algo.optim.scheduler != "constant":
            raise VluiError(f"algo={job.algo.name} trains at a constant learning rate: "
                            "algo.optim.scheduler=constant")
        start = load_policy(job.init)
        algo = asdict(job.algo)
        model = start.cfg
        if job.algo.tune_blocks is not None:  # the settings of the policy it starts from, but more of it trains
            model = replace(model, vision=replace(model.vision, tune_blocks=job.algo.tune_blocks))
        module = module_class(policy=to_dict(model, start.spec), algo=algo, seed=job.seed,
                              channels_last=job.channels_last, compile=job.compile)
        module.policy.load_state_dict(start.state_dict())
        env = job.env.with_spec(start.spec)  # the policy's screens, its actions read as it learnt them
        a = module.algo
        episodes = OnlineEpisodes(env, a.tasks, a.eval_snapshots if a.eval_every else None, a.episodes, job.seed,
                                  envs)
        refuse_held_out_phones({f"env.snapshots (the phones {job.algo.name.upper()} trains on)": episodes.snapshots},
                               job.allow_held_out_phones)
        module.use(episodes, demonstrations(job, start.spec, model.history))
        module.curve_path = Path(job.checkpoint_dir) / "curve.csv"
        return module, RolloutData(module)

    def callbacks(self, job: TrainJobConfig, callbacks: dict[str, Any]) -> dict[str, Any]:
        if "model_checkpoint" in callbacks:
            callbacks["model_checkpoint"]["every_n_epochs"] = job.algo.checkpoint_every
        return callbacks

    def planned(self, job: TrainJobConfig, trainer: dict[str, Any]) -> dict[str, Any]:
        return {"epochs_planned": job.algo.iterations}

    def after_fit(self, job: TrainJobConfig, module: OnlineModule, ckpt_dir: Path, loggers: list,
                  envs: Environments, data: RolloutData) -> dict[str, Any]:
        return {}

    def trained_on(self, job: TrainJobConfig, trainer: L.Trainer, data: RolloutData) -> dict[str, Any]:
        return {"init": str(job.init), "iterations": trainer.current_epoch}

    def recipe(self, job: TrainJobConfig) -> dict[str, Any]:
        return {"env": {"snapshots": job.env.snapshots, "generator_seed": job.env.generator.seed}}


def demonstrations(job: TrainJobConfig, spec: ObsActionSpec, history: int = 0) -> DemoDataModule | None:
    """The demonstrations an online algorithm imitates alongside when ``algo.bc_coef`` > 0: ``data.name``'s dataset
    (the train part of ``data.split`` when set), at the policy's screen size (and reading actions as the policy does),
    each step with its episode's last ``history`` steps (the policy's ``model.history``)."""
    if not job.algo.bc_coef:
        return None
    path = Path(job.data.path)
    if not (path / "meta" / "info.json").exists():
        raise VluiError(f"algo.bc_coef={job.algo.bc_coef} imitates data.name's demonstrations, but there is no dataset "
                        f"at {path}: set data.name to the dataset the starting policy was trained on (or collect it: "
                        f"python collect.py dataset={job.data.name} ...)")
    # the dataset alone (no data.mix), every step of the split's train part a demonstration (failed episodes' too),
    # kept off the GPU
    settings = replace(job.data, mix=[], observation_height=None, observation_width=None, val_fraction=0.0,
                       on_device=False, success_only=False)
    data = TrainingData.read(path, settings)
    spec.require_same_actions(data.stored, "the policy", f"algo.bc_coef: {path}",
                              "set data.name to the dataset the starting policy was trained on")
    data = replace(data, spec=spec)
    check_training_reads(data, {}, job.allow_held_out_phones)
    demos = DemoDataModule.of(data, job.seed, history)
    demos.setup()
    return demos
