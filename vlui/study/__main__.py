"""``python -m vlui.study NAME [--size cpu|gpu] [--seeds N] [--arms A,B] [--splits S,T] [--out DIR] [--plan] [--report-only]
[--set [ARM:]KEY=VALUE ...] [--checkpoint ARM=PATH ...] [--launcher basic|submitit_local|slurm]
[--launcher-set KEY=VALUE ...] [--list]``; ``python -m vlui.study detectors [...]`` measures the tasks' detectors
instead (:mod:`vlui.study.detectors`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vlui.errors import VluiError
from vlui.resources import work_dir
from vlui.study import commands, detectors, load, recorded_timings, report, run, studies


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["detectors"]:  # not a study of arms and seeds: episodes judged twice (vlui/study/detectors.py)
        return detectors.main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m vlui.study", description=(
        "Train every arm of a study with several seeds, evaluate them on held-out and training snapshots, and write "
        "a report (markdown, CSV, plot) next to the B-MoCA paper's numbers. Running it again resumes."))
    parser.add_argument("name", nargs="?", help="the study (--list shows them)")
    parser.add_argument("--size", default="cpu", help="cpu (default: finishes on a laptop) or gpu (the paper's recipes)")
    parser.add_argument("--seeds", type=int, default=3, help="training seeds per arm (default 3)")
    parser.add_argument("--arms", help="only these arms (comma-separated) and the arms they start from, e.g. to "
                        "add seeds where a question needs them: --arms ppo-bc-mem --seeds 5")
    parser.add_argument("--splits", help="evaluate on these of the study's splits only (comma-separated; the "
                        "validation phones always, where the study chooses), e.g. --splits val,train")
    parser.add_argument("--out", help="report folder (default outputs/study/<name>-<size>, with --arms "
                        "outputs/study/<name>-<size>-<arm>+<arm>, with --splits ...-on-<split>+<split>)")
    parser.add_argument("--plan", action="store_true", help="print the commands the study runs, run nothing")
    parser.add_argument("--report-only", action="store_true", help="write the report from finished evaluations")
    parser.add_argument("--list", action="store_true", help="list the studies")
    parser.add_argument("--studies", help="a studies file of your own (default: vlui/study/studies.yaml)")
    parser.add_argument("--set", action="append", default=[], metavar="[ARM:]KEY=VALUE", dest="sets",
                        help="an evaluate.py setting for the study's agent arms, or with ARM: for that one (repeatable), "
                        "e.g. --set agent.base_url=http://127.0.0.1:8000/v1 --set agent.model=Qwen/Qwen2-VL-7B-Instruct "
                        "--set llm:agent.model=Qwen/Qwen2-7B-Instruct")
    parser.add_argument("--checkpoint", action="append", default=[], metavar="ARM=PATH", dest="checkpoints",
                        help="a trained arm's policies, evaluated instead of training the arm: a run folder or a glob "
                        "of several seeds' (repeatable), e.g. vlui='checkpoints/study/quickstart-cpu/quickstart-seed*'")
    parser.add_argument("--launcher", default="basic", help="the Hydra launcher that runs the steps: basic (default: "
                        "one after another, here), submitit_local (side by side, local processes) or slurm (side by "
                        "side, SLURM jobs: configs/hydra/launcher/slurm.yaml)")
    parser.add_argument("--launcher-set", action="append", default=[], metavar="KEY=VALUE",
                        help="a setting of the launcher, e.g. hydra.launcher.partition=gpu (repeatable)")
    args = parser.parse_args(argv)
    try:
        if args.list or not args.name:
            for name, spec in studies(Path(args.studies) if args.studies else None).items():
                sized = spec["cpu"]
                print(f"{name}: {spec['title']} ({len(sized.get('arms') or {}) + len(sized.get('agents') or {})} arms)")
            return 0
        arms = [a.strip() for a in args.arms.split(",") if a.strip()] if args.arms else None
        splits = [s.strip() for s in args.splits.split(",") if s.strip()] if args.splits else None
        study = load(args.name, args.size, args.seeds, Path(args.studies) if args.studies else None, arms, splits,
                     args.sets, args.checkpoints)
        folder = (f"{study.name}-{study.size}" + ("-" + "+".join(arms) if arms else "")
                  + ("-on-" + "+".join(study.splits) if splits else ""))
        out = Path(args.out) if args.out else work_dir() / "outputs" / "study" / folder
        if args.report_only:
            result = report(study, out, recorded_timings(study, out))
        else:
            result = run(study, out, plan_only=args.plan, launcher=args.launcher,
                         launcher_settings=args.launcher_set, studies_file=Path(args.studies) if args.studies else None)
            if args.plan:
                print(f"{len(commands(study))} steps")
                return 0
        print(f"study: report in {result['report']}")
        return 0
    except VluiError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("study: interrupted; run the same command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
