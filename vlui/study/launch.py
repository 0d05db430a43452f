"""``python -m vlui.study.launch -m study=NAME out=DIR step=I,J,... hydra/launcher=...``: steps of a study as the
jobs of a Hydra multirun, so a launcher runs them: Hydra's basic launcher one after another, submitit's side by side
on a SLURM cluster. ``python -m vlui.study`` writes these commands, a stage of independent steps at a time."""

from __future__ import annotations

from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from vlui.cli import entry_point


def run(cfg: DictConfig) -> None:
    from vlui.study import load, run_step

    arms = OmegaConf.to_object(cfg.arms) if OmegaConf.is_config(cfg.arms) else cfg.arms
    study = load(cfg.study, cfg.size, cfg.seeds, Path(cfg.studies) if cfg.studies else None, list(arms or []) or None)
    run_step(study, cfg.step, Path(cfg.out))


def main() -> None:
    entry_point("study", "vlui.study.launch:run")


if __name__ == "__main__":
    main()
