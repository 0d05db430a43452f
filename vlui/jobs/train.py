"""The ``train`` job (``python train.py``): a VLUI policy by BC or IQL on a collected dataset.

Writes Lightning checkpoints to ``checkpoints/<experiment>/<run>/`` (``last.ckpt`` for exact resume) and, at the
end, a policy export in ``policy/`` (config.json + model.safetensors) that evaluate.py loads without Hydra or pickle.
Running the same command again resumes from ``last.ckpt`` when there is one (``ckpt_path=auto``, the default).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import lightning as L
import torch
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from vlui.algos.modules import ALGOS
from vlui.data.datamodule import DemoDataModule
from vlui.errors import VluiError
from vlui.models.policy import PolicyConfig, export_policy


def ensure_dataset(cfg: DictConfig) -> Path:
    """The dataset's folder; collected first with collect.py's defaults when missing and the config asks for it."""
    path = Path(cfg.data.path)
    if (path / "meta" / "info.json").exists():
        return path
    if not cfg.data.collect_if_missing:
        raise VluiError(f"no dataset at {path}: create it with `python collect.py dataset={cfg.data.name}` "
                        "(or add data.collect_if_missing=true)")
    print(f"train: no dataset at {path}; collecting it first (python collect.py dataset={cfg.data.name})")
    root = Path(cfg.paths.root_dir)
    out = subprocess.run([sys.executable, str(root / "collect.py"), f"dataset={cfg.data.name}",
                          f"paths.data_dir={path.parent}", f"hydra.run.dir={cfg.paths.output_dir}/collect"],
                         cwd=root)
    if out.returncode != 0:
        raise VluiError(f"collecting {cfg.data.name} failed (exit status {out.returncode})")
    return path


def resume_path(cfg: DictConfig, ckpt_dir: Path) -> str | None:
    if cfg.ckpt_path in (None, "none", "null"):
        return None
    if cfg.ckpt_path in ("auto", "last"):
        last = ckpt_dir / "last.ckpt"
        if last.exists():
            print(f"train: resuming from {last}")
            return str(last)
        if cfg.ckpt_path == "last":
            raise VluiError(f"ckpt_path=last but {last} does not exist")
        return None
    if not Path(cfg.ckpt_path).exists():
        raise VluiError(f"checkpoint {cfg.ckpt_path} does not exist")
    return str(cfg.ckpt_path)


def build(cfg: DictConfig) -> tuple[L.LightningModule, DemoDataModule]:
    if cfg.algo.name not in ALGOS:
        raise VluiError(f"unknown algo {cfg.algo.name!r}; choose from: {', '.join(ALGOS)}")
    policy = PolicyConfig.from_model_cfg(cfg.model, cfg.data.image_height, cfg.data.image_width)
    module = ALGOS[cfg.algo.name](
        policy=vars(policy), algo=OmegaConf.to_container(cfg.algo, resolve=True),
        augment=OmegaConf.to_container(cfg.data.augment, resolve=True), seed=cfg.seed,
        channels_last=cfg.channels_last, compile=cfg.compile)
    data = DemoDataModule(str(cfg.data.path), batch_size=cfg.data.batch_size, val_fraction=cfg.data.val_fraction,
                          image_height=cfg.data.image_height, image_width=cfg.data.image_width,
                          on_device=cfg.data.on_device, steps_per_epoch=cfg.data.steps_per_epoch, seed=cfg.seed)
    return module, data


def run(cfg: DictConfig) -> dict[str, Any]:
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    torch.set_float32_matmul_precision("high")
    ensure_dataset(cfg)
    module, data = build(cfg)
    ckpt_dir = Path(cfg.callbacks.model_checkpoint.dirpath)
    loggers = [instantiate(c) for c in (cfg.logger or {}).values()]
    callbacks = [instantiate(c) for c in (cfg.callbacks or {}).values()]
    trainer: L.Trainer = instantiate(cfg.trainer, logger=loggers or False, callbacks=callbacks)
    trainer.fit(module, datamodule=data, ckpt_path=resume_path(cfg, ckpt_dir), weights_only=True)
    result: dict[str, Any] = {"checkpoint_dir": str(ckpt_dir), "metrics": {
        k: float(v) for k, v in trainer.callback_metrics.items() if v.numel() == 1}}
    if cfg.export and trainer.is_global_zero and not cfg.trainer.fast_dev_run:
        policy_dir = export_policy(module.policy, ckpt_dir / "policy", metadata={
            "algo": cfg.algo.name, "experiment": cfg.experiment, "run": cfg.run_name, "steps": trainer.global_step,
            "dataset": str(cfg.data.path), "text_encoder_untrained": bool(module.policy.text.encoder.untrained)})
        result["policy"] = str(policy_dir)
        print(f"train: policy exported to {policy_dir}")
    print(f"train: checkpoints in {ckpt_dir}; logs in {cfg.paths.output_dir}")
    return result
