"""``python -m vlui.study.launch -m study=NAME out=DIR step=I,J,... hydra/launcher=...``: steps of a study as the
jobs of a Hydra multirun, so a launcher runs them: Hydra's basic launcher one after another, submitit's side by side
on a SLURM cluster. ``python -m vlui.study`` writes these commands, a stage of independent steps at a time
(:func:`vlui.study.run`); each job runs :func:`vlui.study.step_job`."""

from __future__ import annotations

from vlui.cli import entry_point


def main() -> None:
    entry_point("study", "vlui.study:step_job")


if __name__ == "__main__":
    main()
