"""Studies: ``python -m vlui.study NAME`` trains every arm of a named study with several seeds, evaluates them on the
same episodes, and writes a report (markdown, CSV, a plot) with the B-MoCA paper's numbers side by side.

A study (``studies.yaml``) is a set of datasets, each collected once with ``collect.py`` and its overrides, and a set
of arms, each a list of ``train.py`` overrides on top of the study's base. Every step runs the project's own
command-line programs as child processes, so a study is exactly the commands a user would type; each step resumes
(a trained seed is not trained again, a collected dataset is not collected again, an evaluation picks up where it
stopped), so running the same study again after an interruption finishes it.

Where things go: checkpoints in ``checkpoints/study/<name>/<arm>-seed<s>``, evaluations in
``outputs/evaluate/study-<name>-<split>``, the report in ``--out`` (default ``outputs/study/<name>``).
"""

from __future__ import annotations

import csv
import glob
import hashlib
import json
import math
import platform
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from vlui.algos.settings import CURVE_COLUMNS
from hydra.errors import HydraException
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from vlui.agents import check_early
from vlui.agents.settings import AGENT_TYPES
from vlui.cli import compose
from vlui.config import StudyStepConfig, check_renamed, check_settings, hydra_value
from vlui.errors import VluiError
from vlui.eval import axes
from vlui.eval.metrics import BOOTSTRAP_RESAMPLES, paired
from vlui.eval.report import (
    BOOTSTRAP,
    T_EXPLAINED,
    PhoneTable,
    across_seeds,
    bootstrap_comparison,
    bootstrap_summary,
    ci_points,
    comparison,
    family,
    group_comparison,
    holm_adjust,
    p_text,
    seeds_phones_table,
    t_text,
    verdict,
)
from vlui.processes import call_child, child_env, cores, threads_per_job
from vlui.resources import checkout, work_dir
from vlui.study import agents_report
from vlui.study.per_phone import HEAD as PER_PHONE_HEAD
from vlui.study.per_phone import INTRO as PER_PHONE_INTRO
from vlui.tasks.catalog import app_of

HERE = Path(__file__).parent
# the paper's names of the six representative tasks (B-MoCA Sec. 4.1)
PAPER_TASKS = {"airplane_on": "Airplane", "alarm_9am_on": "Alarm1", "alarm_1030": "Alarm2",
               "brightness_down": "Brightness", "call_911": "Call 911", "add_language": "Language"}
TIMINGS = "timings.json"  # each finished step's wall-clock seconds, in the report folder (studies run before 2026-11-28)
STEP_TIMINGS = "timings.d"  # one file a finished step: its wall-clock seconds (the launcher's jobs write side by side)
RUN_REF = re.compile(r"\{run:([^}]+)\}")  # an arm's override naming another arm's run of the same seed
# env.snapshots -> words
SPLITS = {"val": "the 50 validation phones", "train": "the 35 training snapshots", "test": "the 10 test snapshots"}
SELECT_ON = "val"  # the split a study chooses on (docs/evaluation.md, "Held out means held out")
TEST = "test"  # the split a study reports once, last, and never chooses on
DEFAULT_SPLITS = {SELECT_ON: SELECT_ON, "train": "train", TEST: TEST}
# a study's `compare:` -> the arms its report tests, in words ("first" where it names none)
COMPARE = {"first": "each arm against the first", "consecutive": "each arm against the one before it"}


@dataclass
class Study:
    name: str
    title: str
    question: str
    paper: str | None
    size: str
    datasets: dict[str, list[str]]
    base: list[str]
    arms: dict[str, list[str]]
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    # evaluated on: split name -> evaluate.py overrides (a plain value in studies.yaml is env.snapshots)
    splits: dict[str, list[str]] = field(default_factory=lambda: _ordered(DEFAULT_SPLITS))
    evaluate: list[str] = field(default_factory=list)  # more evaluate.py overrides (e.g. tasks=...)
    chosen: list[str] = field(default_factory=list)  # --arms: the arms asked for (empty: all of them)
    chosen_splits: list[str] = field(default_factory=list)  # --splits: the splits asked for (empty: all of them)
    compare: str = "first"  # which arms the report tests against which (:data:`COMPARE`)
    # agent arms, evaluated as they are, not trained (LLM and MLLM agents on a served model): name -> evaluate.py
    # overrides, the study's agent_base first and the command line's --set last
    agents: dict[str, list[str]] = field(default_factory=dict)
    sets: list[str] = field(default_factory=list)  # --set: [ARM:]KEY=VALUE, as typed
    given: dict[str, str] = field(default_factory=dict)  # --checkpoint ARM=PATH: a trained arm's policies, not trained
    chooses: bool = True  # False: a comparison made as a paper made it, on its splits only (no validation phones)
    by_app: bool = False  # the report also pools the tasks by app (a study over many apps' tasks: the release's 131)


def studies(path: Path | None = None) -> dict[str, dict[str, Any]]:
    return yaml.safe_load((path or HERE / "studies.yaml").read_text(encoding="utf-8"))


def paper_numbers() -> dict[str, Any]:
    return yaml.safe_load((HERE / "paper.yaml").read_text(encoding="utf-8"))


def load(name: str, size: str = "cpu", seeds: int = 3, path: Path | None = None,
         arms: list[str] | None = None, splits: list[str] | None = None, sets: list[str] | None = None,
         checkpoints: list[str] | None = None) -> Study:
    """Study ``name`` of ``studies.yaml`` (or of the file at ``path``) at ``size``, with seeds 0 to ``seeds - 1``;
    with ``arms``, only those arms and the arms they start from (``{run:ARM}``); with ``splits``, evaluated on those
    of its splits only, and always on the validation phones (where it chooses); ``sets``, evaluate.py settings for
    its agent arms (``KEY=VALUE`` for all, ``ARM:KEY=VALUE`` for one); ``checkpoints``, trained arms' policies given
    (``ARM=PATH``, a run folder or a glob of them), which the study then evaluates instead of training them."""
    known = studies(path)
    if name not in known:
        raise VluiError(f"unknown study {name!r}; choose from: {', '.join(known)}")
    spec = known[name]
    if size not in ("cpu", "gpu"):
        raise VluiError(f"--size must be cpu or gpu, not {size!r}")
    if seeds < 1:
        raise VluiError("--seeds must be at least 1 (3 or more for an error bar)")
    compare = str(spec.get("compare", "first"))
    if compare not in COMPARE:
        raise VluiError(f"study {name}: compare: {compare!r} is not one of: "
                        + "; ".join(f"{k} ({v})" for k, v in COMPARE.items()))
    sized = spec[size]
    every = {str(k): [str(v) for v in vs] for k, vs in (sized.get("arms") or {}).items()}
    agent_base = [str(v) for v in sized.get("agent_base", [])]
    every_agent = {str(k): [*agent_base, *map(str, vs)] for k, vs in (sized.get("agents") or {}).items()}
    if arms:
        unknown = [a for a in arms if a not in every and a not in every_agent]
        if unknown:
            raise VluiError(f"--arms: the study has no arm {unknown[0]!r}; its arms: {', '.join([*every, *every_agent])}")
    kept = _with_starts(every, [a for a in arms if a in every]) if arms else every
    agents = {k: v for k, v in every_agent.items() if not arms or k in arms}
    given = _given(checkpoints or [], kept)
    agents = _with_sets(agents, sets or [], name)
    base = [str(v) for v in sized.get("base", [])]
    datasets = {str(k): [str(v) for v in vs] for k, vs in sized["datasets"].items()}
    if arms or given:  # only the datasets the arms trained here train on (data.name or data.mix) and agents' examples
        trained = [o for arm, os in kept.items() if arm not in given for o in os]
        used = _datasets_named([*(base if len(given) < len(kept) else []), *trained,
                                *(o for os in agents.values() for o in os)])
        datasets = {k: v for k, v in datasets.items() if k in used or not used}
    chooses = bool(spec.get("chooses", True))
    every_split = _ordered(sized.get("splits", DEFAULT_SPLITS), chooses)
    evaluate = [str(v) for v in sized.get("evaluate", [])]
    _refuse_old_names(name, {"base": base, "evaluate": evaluate,
                             **{f"{kind} {k}": v for kind, named in (("dataset", datasets), ("arm", every),
                                                                     ("agent arm", agents), ("split", every_split))
                                for k, v in named.items()}})
    if splits:
        unknown = [s for s in splits if s not in every_split]
        if unknown:
            raise VluiError(f"--splits: the study has no split {unknown[0]!r}; its splits: {', '.join(every_split)}")
        every_split = {k: v for k, v in every_split.items() if k in splits or k == SELECT_ON}
    return Study(name, spec["title"], " ".join(str(spec["question"]).split()), spec.get("paper"), size,
                 datasets, base, kept, list(range(seeds)), every_split, evaluate, list(arms or []),
                 list(splits or []), compare, agents, list(sets or []), given, chooses, bool(spec.get("by_app", False)))


def _refuse_old_names(study: str, overrides: dict[str, list[str]]) -> None:
    """A setting named by its old name (:data:`vlui.config.RENAMED`) in any of the study's ``overrides`` (by where
    they are: its base, an arm, a split, ``--set``...) is refused in one line before any step runs."""
    for where, items in overrides.items():
        try:
            check_renamed(items)
        except VluiError as err:
            raise VluiError(f"study {study}, {where}: {err}") from None


def _datasets_named(overrides: list[str]) -> set[str]:
    """The datasets that ``overrides`` train on (``data.name=X`` and ``data.mix=[X,Y]``) or draw an agent's
    examples from (``agent.few_shot_data=data/X``)."""
    names: set[str] = set()
    for o in overrides:
        key, _, value = o.lstrip("+~").partition("=")
        if key in ("data.name", "data.mix"):
            names.update(v.strip(" '\"") for v in value.strip("[]").split(",") if v.strip())
        elif key == "agent.few_shot_data":
            names.add(Path(value.strip(" '\"")).name)
    return names


def _with_sets(agents: dict[str, list[str]], sets: list[str], study: str) -> dict[str, list[str]]:
    """The agent arms' overrides with the command line's ``--set`` after them: ``KEY=VALUE`` for every agent arm,
    ``ARM:KEY=VALUE`` for one; a key set again replaces its earlier value (the arm's own, or one set for all)."""
    out = {arm: list(overrides) for arm, overrides in agents.items()}
    for item in sets:
        key, eq, value = item.partition("=")
        arm, colon, key = key.rpartition(":")
        if not eq or not key:
            raise VluiError(f"--set {item}: give KEY=VALUE (every agent arm) or ARM:KEY=VALUE (one), e.g. "
                            "--set agent.base_url=http://127.0.0.1:8000/v1")
        if not agents:
            raise VluiError(f"--set {item}: study {study} has no agent arms to set (its arms are trained: change "
                            "their recipe in a studies file of your own, --studies)")
        if colon and arm not in agents:
            raise VluiError(f"--set {item}: the study has no agent arm {arm!r}; its agent arms: {', '.join(agents)}")
        for name in [arm] if colon else agents:
            out[name] = [o for o in out[name] if o.partition("=")[0].lstrip("+~") != key] + [f"{key}={value}"]
    return out


def _given(items: list[str], arms: dict[str, list[str]]) -> dict[str, str]:
    """``--checkpoint ARM=PATH`` as arm -> the policies' absolute path (a run folder or a glob of several seeds'),
    each checked to hold something."""
    out = {}
    for item in items:
        arm, eq, where = item.partition("=")
        if not eq or not where:
            raise VluiError(f"--checkpoint {item}: give ARM=PATH, e.g. vlui='checkpoints/quickstart/*-seed*'")
        if arm not in arms:
            raise VluiError(f"--checkpoint {item}: the study trains no arm {arm!r}; its trained arms: "
                            f"{', '.join(arms) or 'none'}")
        path = Path(where).expanduser().absolute()
        if not (glob.glob(str(path)) if glob.has_magic(str(path)) else path.exists()):
            raise VluiError(f"--checkpoint {item}: no policy at {path} (a run folder, or a glob of its seeds' folders)")
        out[arm] = str(path)
    return out


def _with_starts(every: dict[str, list[str]], chosen: list[str]) -> dict[str, list[str]]:
    """The arms ``chosen`` and those they start from (``{run:ARM}``, followed back), in the study's order."""
    unknown = [a for a in chosen if a not in every]
    if unknown:
        raise VluiError(f"--arms: the study has no arm {unknown[0]!r}; its arms: {', '.join(every)}")
    keep: set[str] = set()
    todo = list(chosen)
    while todo:
        arm = todo.pop()
        if arm not in keep:
            keep.add(arm)
            todo += _starts(every[arm])
    return {arm: overrides for arm, overrides in every.items() if arm in keep}


def _ordered(splits: dict[str, Any], chooses: bool = True) -> dict[str, list[str]]:
    """A study's splits as evaluate.py overrides, in the order the protocol reads them: the validation phones first
    (added where a study that ``chooses`` names none: every choice is made there), the test snapshots last
    (reported once)."""
    out = {str(k): _split_overrides(v) for k, v in splits.items()}
    if SELECT_ON not in out and chooses:
        out = {SELECT_ON: _split_overrides(SELECT_ON), **out}
    return {**{k: v for k, v in out.items() if k != TEST}, **({TEST: out[TEST]} if TEST in out else {})}


def _split_overrides(value: Any) -> list[str]:
    """A split of studies.yaml as evaluate.py overrides: ``test`` is ``env.snapshots=test``; a list is overrides as
    typed (``[env.snapshots=random:50, env.generator.seed=2]``: 50 generated phones of a seed nobody trained on)."""
    return [str(v) for v in value] if isinstance(value, list) else [f"env.snapshots={value}"]


def split_words(study: Study, split: str) -> str:
    """What a split evaluates on, in words for the report."""
    overrides = study.splits[split]
    named = overrides[0].removeprefix("env.snapshots=") if len(overrides) == 1 else None
    words = SPLITS[named] if named in SPLITS else "`" + " ".join(overrides) + "`"
    if split == SELECT_ON:
        return f"{words}, where the study chooses"
    return f"{words}, reported once and never chosen on" if split == TEST else words


# ------------------------------------------------------------------------------------------------------ commands
def _job(name: str) -> list[str]:
    """A job as collect.py / train.py / evaluate.py run it (those files are not in an installed package)."""
    return [sys.executable, "-c", f"from vlui.cli import {name}; {name}()"]


def run_dir(study: Study, arm: str, seed: int) -> Path:
    """An arm's seed's run folder, relative to the working directory the jobs run in."""
    return Path("checkpoints") / "study" / f"{study.name}-{study.size}" / f"{arm}-seed{seed}"


def commands(study: Study) -> list[tuple[str, list[str], Path | None]]:
    """Every step of the study in order: (what, command, the file whose presence says the step is done)."""
    steps: list[tuple[str, list[str], Path | None]] = []
    for dataset, overrides in study.datasets.items():
        steps.append((f"collect {dataset}", [*_job("collect"), f"dataset={dataset}", *overrides], None))
    for arm, overrides in study.arms.items():
        if arm in study.given:
            continue
        for seed in study.seeds:
            out = run_dir(study, arm, seed)
            # {run:ARM} names the same seed's run of an earlier arm (e.g. the policy online RL starts from)
            overrides = [RUN_REF.sub(lambda m: str(run_dir(study, m.group(1), seed)), o)
                         for o in study.arms[arm]]
            steps.append((f"train {arm} seed {seed}", [
                *_job("train"), *study.base, *overrides, f"seed={seed}",
                f"run_name=study-{study.name}-{study.size}-{arm}-seed{seed}",
                f"callbacks.model_checkpoint.dirpath={out}"], work_dir() / out / "policy" / "model.safetensors"))
    for split, split_overrides in study.splits.items():
        # the study's earlier evaluations of this split (other arms or seeds): their episodes of the runs evaluated
        # here are taken, not run again (evaluate.py checks the settings and the weights are the same)
        earlier = f"outputs/evaluate/study-{study.name}-{study.size}-{split}-*"
        if study.arms:
            steps.append((f"evaluate on {split}", [
                *_job("evaluate"), f"checkpoint={hydra_value(_groups(study))}", *split_overrides, "runs=1",
                *study.evaluate, f"name={evaluation_name(study, split)}", f"reuse={hydra_value([earlier])}"], None))
        for agent, overrides in study.agents.items():
            steps.append((f"evaluate {agent} on {split}", [
                *_job("evaluate"), *split_overrides, *study.evaluate, *overrides,
                f"name={agent_evaluation_name(study, agent, split)}"], None))
    return steps


def plan_digest(study: Study) -> str:
    """A digest of the study's steps in order: the launcher's jobs name steps by index, so a job checks that the
    study it reads now has the steps it was started with (studies.yaml edited in between would shift them)."""
    steps = json.dumps([(what, cmd[3:]) for what, cmd, _ in commands(study)])  # not the interpreter's path
    return hashlib.sha256(steps.encode()).hexdigest()[:12]


def _groups(study: Study) -> dict[str, list[str]]:
    return {arm: [study.given[arm]] if arm in study.given else [str(run_dir(study, arm, s)) for s in study.seeds]
            for arm in study.arms}


def check_agent_arms(study: Study) -> None:
    """Each agent arm's evaluation composed and its settings checked before any step runs: a misspelt ``--set`` or
    a model or endpoint not given is one line in seconds, not after hours of collecting and training."""
    for arm, overrides in study.agents.items():
        for split_overrides in study.splits.values():
            where = f"study {study.name}, agent arm {arm}"
            try:
                cfg = compose("evaluate", [*split_overrides, *study.evaluate, *overrides],
                              output_dir=work_dir() / "outputs" / "evaluate")
                check_settings(cfg)
                check_early(OmegaConf.to_container(cfg.agent, resolve=True))
            except (HydraException, OmegaConfBaseException) as err:
                cause = f": {str(err.__cause__).splitlines()[0]}" if err.__cause__ else ""
                raise VluiError(f"{where}: {str(err).splitlines()[0].rstrip('.')}{cause}") from None
            except VluiError as err:
                raise VluiError(f"{where}: {err} (--set KEY=VALUE for every agent arm, --set {arm}:KEY=VALUE for "
                                "this one)") from None


def agent_evaluation_name(study: Study, agent: str, split: str) -> str:
    """An agent arm's evaluation folder in outputs/evaluate: the study, the split, the arm and a digest of what it
    measures (its settings and the split's, without how it reaches the model: an agent type's ``CONNECTION``, in
    :mod:`vlui.agents.settings`): a new endpoint or price goes on in the same folder, another model evaluates
    afresh."""
    connection = {k for kind in AGENT_TYPES.values() for k in kind.settings.CONNECTION}
    measured = [o for o in study.agents[agent]
                if o.partition("=")[0].lstrip("+~").removeprefix("agent.") not in connection]
    what = json.dumps([measured, study.splits[split], study.evaluate])
    return f"study-{study.name}-{study.size}-{split}-{agent}-{hashlib.sha256(what.encode()).hexdigest()[:8]}"


def evaluation_name(study: Study, split: str) -> str:
    """The evaluation's folder in outputs/evaluate: named after the study and the split, and a digest of what it
    evaluates (the arms' runs and the overrides), so a study whose arms change evaluates afresh and the evaluation
    of the arms before is kept."""
    what = json.dumps([_groups(study), study.splits[split], study.evaluate], sort_keys=True)
    return f"study-{study.name}-{study.size}-{split}-{hashlib.sha256(what.encode()).hexdigest()[:8]}"


def stages(study: Study) -> list[list[int]]:
    """The study's steps (indices into :func:`commands`) in the order they can run: the collections, then the arms'
    seeds (an arm that starts from another arm's run after it), then the evaluations. The steps of a stage do not
    depend on each other: a launcher may run them side by side."""
    depth: dict[str, int] = {}

    def level(arm: str) -> int:
        if arm not in depth:
            start = started_from(study, arm)
            depth[arm] = 0 if start is None else level(start) + 1
        return depth[arm]

    keyed: dict[int, list[int]] = {}
    arms = sorted(study.arms, key=len, reverse=True)  # "train ARM seed S": the longest arm name that fits
    last = 2 + max((level(a) for a in study.arms), default=0)
    for i, (what, _, _) in enumerate(commands(study)):
        if what.startswith("collect "):
            stage = 0
        elif what.startswith("train "):
            stage = 1 + level(next(a for a in arms if what.startswith(f"train {a} seed ")))
        else:
            stage = last
        keyed.setdefault(stage, []).append(i)
    return [keyed[k] for k in sorted(keyed)]


LAUNCHERS = {"basic": "one step after another, here", "submitit_local": "side by side, as local processes (submitit)",
             "slurm": "side by side, as SLURM jobs (submitit; configs/hydra/launcher/slurm.yaml)"}


def run(study: Study, out: Path, plan_only: bool = False, launcher: str = "basic",
        launcher_settings: list[str] | None = None, studies_file: Path | None = None) -> dict[str, Any]:
    """Run (or, with ``plan_only``, print) every step, then write the report.

    The steps run stage by stage (:func:`stages`), each stage one Hydra multirun of ``python -m vlui.study.launch``
    over its steps with ``hydra/launcher=<launcher>`` (``launcher_settings``: more of its settings, e.g.
    ``hydra.launcher.partition=gpu``): Hydra's basic launcher runs them one after another here, submitit's side by
    side on a SLURM cluster. A step done before is skipped; each step's wall-clock is kept in ``out`` as it finishes,
    so the report of a resumed study still has the steps done before."""
    steps = commands(study)
    if plan_only:
        for what, cmd, _ in steps:
            print(f"{what}: python {cmd[2].split(';')[0].split()[-1]}.py {' '.join(cmd[3:])}")
        return {}
    if launcher not in LAUNCHERS:
        raise VluiError(f"--launcher {launcher}: choose from {', '.join(f'{k} ({v})' for k, v in LAUNCHERS.items())}")
    check_agent_arms(study)
    for stage in stages(study):
        todo = []
        for i in stage:
            what, _, done = steps[i]
            if done is not None and done.exists():
                print(f"study: {what}: done before ({done.parent.parent.relative_to(work_dir())})")
            else:
                todo.append(i)
        if not todo:
            continue
        # local processes side by side share this machine's cores: each gets its share of torch threads
        threads = threads_per_job(len(todo)) if launcher == "submitit_local" else 0
        shared = f", {threads} torch thread{'s' * (threads > 1)} each" if threads else ""
        print(f"study: {', '.join(steps[i][0] for i in todo)} (hydra/launcher={launcher}{shared})", flush=True)
        cmd = [sys.executable, "-m", "vlui.study.launch", "--multirun", f"study={hydra_value(study.name)}",
               f"size={study.size}", f"seeds={len(study.seeds)}", f"arms={hydra_value(study.chosen)}",
               f"splits={hydra_value(list(study.splits))}", f"sets={hydra_value(study.sets)}",
               f"checkpoints={hydra_value([f'{arm}={path}' for arm, path in study.given.items()])}",
               f"studies={hydra_value(str(studies_file.resolve()) if studies_file else None)}",
               f"out={hydra_value(str(out.resolve()))}",
               f"step={','.join(map(str, todo))}", f"plan={hydra_value(plan_digest(study))}", f"threads={threads}",
               f"hydra/launcher={launcher}", *(launcher_settings or [])]
        code = call_child(cmd, cwd=work_dir())
        if code != 0:
            failed = [steps[i][0] for i in todo if not _finished(out, steps[i][0])]
            raise VluiError(f"study {study.name}: {', '.join(failed) or 'a step'} failed (exit status {code}); its "
                            "message is above (with a submitit launcher, in the job's log under multirun/study/). "
                            "Run the same command again to resume from there")
    return report(study, out, recorded_timings(study, out))


def run_step(study: Study, index: int, out: Path, threads: int = 0) -> None:
    """Step ``index`` of :func:`commands` (what a launcher's job runs): its command as a child process (with
    ``threads`` torch threads, or torch's default with 0), its wall-clock kept in ``out``."""
    what, cmd, done = commands(study)[index]
    if done is not None and done.exists():
        print(f"study: {what}: done before")
        return
    print(f"study: {what}", flush=True)
    start = time.perf_counter()
    code = call_child(cmd, cwd=work_dir(), env=child_env(threads))
    if code != 0:
        raise VluiError(f"study {study.name}: {what} failed (exit status {code}); its message is above")
    if done is not None and done.exists():  # a finished run: its export and last.ckpt stay, its epochs' go
        for step_checkpoint in done.parent.parent.glob("step*.ckpt"):
            step_checkpoint.unlink(missing_ok=True)
    kept = out / STEP_TIMINGS
    kept.mkdir(parents=True, exist_ok=True)
    path = kept / f"{_slug(what)}.json"
    # a step run again (an evaluation resumed, or one of a study run again) adds its time to what it took before
    before = json.loads(path.read_text(encoding="utf-8"))["seconds"] if path.exists() else 0.0
    tmp = kept / f".{index}.tmp"
    tmp.write_text(json.dumps({"what": what, "seconds": round(before + time.perf_counter() - start, 1)}),
                   encoding="utf-8")
    tmp.replace(path)


def step_job(job: StudyStepConfig) -> None:
    """What ``python -m vlui.study.launch`` runs for each job of its multirun: step ``job.step`` of the study its
    settings name (the entry point hands it them typed)."""
    arms = list(job.arms) if job.arms else None
    study = load(job.study, job.size, job.seeds, Path(job.studies) if job.studies else None, arms,
                 list(job.splits or []) or None, list(job.sets or []), list(job.checkpoints or []))
    if job.plan is not None and job.plan != plan_digest(study):
        raise VluiError(f"study {study.name}: its steps changed since this launch began (studies.yaml edited?), so "
                        f"step {job.step} may now be another one; run python -m vlui.study {study.name} again")
    run_step(study, job.step, Path(job.out), job.threads)


def _slug(what: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "_", what)


def _finished(out: Path, what: str) -> bool:
    return (out / STEP_TIMINGS / f"{_slug(what)}.json").exists()


def recorded_timings(study: Study, out: Path) -> dict[str, float]:
    """The wall-clock seconds of the study's steps that have run, in the order of the steps (``out/timings.json``)."""
    timings = _read_timings(out)
    return {what: timings[what] for what, _, _ in commands(study) if what in timings}


def _read_timings(out: Path) -> dict[str, float]:
    """``out/timings.json`` (studies run before the launcher) and the steps' own files (``out/timings.d/``)."""
    kept = out / TIMINGS
    timings = json.loads(kept.read_text(encoding="utf-8")) if kept.exists() else {}
    for path in sorted((out / STEP_TIMINGS).glob("*.json")):
        step = json.loads(path.read_text(encoding="utf-8"))
        timings[step["what"]] = step["seconds"]
    return timings


# -------------------------------------------------------------------------------------------------------- report
def _results(study: Study, split: str) -> dict[str, Any]:
    return _read_results(work_dir() / "outputs" / "evaluate" / evaluation_name(study, split))


def _read_results(folder: Path) -> dict[str, Any]:
    path = folder / "results.json"
    if not path.exists():
        raise VluiError(f"no evaluation at {path}: run the study (without --report-only) first")
    return json.loads(path.read_text(encoding="utf-8"))


@dataclass
class Evaluation:
    """One split's evaluation of every arm: the statistics across seeds (:func:`vlui.eval.report.across_seeds`) and
    each policy's successes per phone and task."""

    seeds: dict[str, Any]
    phones: PhoneTable
    records: list[dict[str, Any]] = field(default_factory=list)  # the episodes, as results.json keeps them


def evaluations(study: Study) -> dict[str, Evaluation]:
    """Each split's evaluation, its statistics computed afresh from the episodes results.json keeps (``records``):
    a report regenerated with ``--report-only`` from an evaluation made before a statistic was added still has it."""
    out = {}
    for split in study.splits:
        result = _results(study, split)
        groups = {arm: g["checkpoints"] for arm, g in result["seeds"]["groups"].items()}
        out[split] = Evaluation(across_seeds(result["records"], groups, {},
                                             by_app(result["records"]) if study.by_app else None),
                                PhoneTable(result["records"], [c for paths in groups.values() for c in paths]),
                                result["records"])
    return out


def by_app(records: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The tasks of ``records`` by the app each is reported under (:func:`vlui.tasks.catalog.app_of`), apps in
    alphabetical order; a task the catalog does not know (a template's instance) under its template."""
    pools: dict[str, list[str]] = {}
    for task in dict.fromkeys(family(r["task"]) for r in records):
        pools.setdefault(app_of(task) or task, []).append(task)
    return dict(sorted(pools.items()))


def app_rows(study: Study, evaluated: dict[str, Evaluation]) -> list[dict[str, Any]]:
    """One row per (arm, split, app) of a study that pools its tasks by app: as :func:`rows`, with the app's number of
    tasks."""
    out = []
    for split in study.splits:
        for arm in study.arms:
            for app, s in evaluated[split].seeds["groups"][arm].get("per_pool", {}).items():
                ci = s["ci95"] or {}
                out.append({"arm": arm, "split": split, "app": app, "tasks": s["tasks"], "mean": s["mean"],
                            "stderr": s["stderr"], "ci_low": ci.get("low"), "ci_high": ci.get("high"), "t_interval": s["t_interval"],
                            "seeds": s["seeds"], "per_seed": list(s["per_policy"].values())})
    return out


def app_lines(study: Study, apps: list[dict[str, Any]]) -> list[str]:
    """The report's tables by app, one per split (``by_app.csv`` holds them with each seed's success)."""
    if not apps:
        return []
    lines = []
    for split in study.splits:
        names = list(dict.fromkeys(r["app"] for r in apps if r["split"] == split))
        lines += [f"## By app ({split})", "", f"Success on {split_words(study, split)}, each app's tasks pooled (the "
                  "interval as in the tables by task, over seeds and phones).", "",
                  "| app | tasks | " + " | ".join(study.arms) + " |", "| --- " * (len(study.arms) + 2) + "|"]
        for app in names:
            cells = [next((r for r in apps if r["arm"] == arm and r["split"] == split and r["app"] == app), None)
                     for arm in study.arms]
            count = next(c["tasks"] for c in cells if c is not None)
            lines.append(f"| {app} | {count} | " + " | ".join(_pct(c) if c else "–" for c in cells) + " |")
        lines.append("")
    return lines


# AndroidArena's adaptive metrics a study reports beside success (evaluate.py's adaptive_metrics, on by default)
PROGRESS = {"tcr": "TCR", "tr_normalised": "TR (normalised)", "rrr": "RRR"}


def progress(study: Study, evaluated: dict[str, Evaluation]) -> list[dict[str, Any]]:
    """Per split, arm and adaptive metric (:data:`PROGRESS`): each seed's mean over its episodes, their mean, and the
    95% interval of the bootstrap over seeds and phones; then each arm against the first arm, the bootstrap
    difference, Holm-adjusted over a split's arms for each metric. Success counts a finished task only; TCR says how
    far along the expert's path an episode got, which tells arms apart where success is rare. Empty where the
    evaluations computed none (``adaptive_metrics=false``)."""
    out = []
    first = next(iter(study.arms))
    for split in study.splits:
        ev = evaluated[split]
        groups = {arm: ev.seeds["groups"][arm]["checkpoints"] for arm in study.arms}
        everyone = [c for paths in groups.values() for c in paths]
        for metric in PROGRESS:
            table = PhoneTable(ev.records, everyone,
                               lambda r, m=metric: r["adaptive"][m] if r.get("adaptive") else None)
            if not table.phones:
                continue
            rows, tests = [], []
            _, baseline = table.matrix(groups[first])
            for arm, paths in groups.items():
                _, sums, counts = table.cells(paths)
                per_seed = [float(k / n) if n else None for k, n in zip(sums.sum(axis=1), counts.sum(axis=1),
                                                                         strict=True)]
                seen = [v for v in per_seed if v is not None]
                _, matrix = table.matrix(paths)
                row = {"split": split, "arm": arm, "metric": metric, "mean": sum(seen) / len(seen) if seen else None,
                       "ci95": bootstrap_summary(matrix), "per_seed": per_seed, "against_first": None}
                if arm != first:
                    row["against_first"] = bootstrap_comparison(matrix, baseline, False)
                    if row["against_first"] is not None:
                        tests.append(row["against_first"])
                rows.append(row)
            holm_adjust(tests)
            out += rows
    return out


def progress_lines(study: Study, found: list[dict[str, Any]]) -> list[str]:
    """The report's section on :func:`progress`: a table per split, then each arm's TCR against the first arm's."""
    if not found:
        return []
    first = next(iter(study.arms))
    lines = ["## How far along the expert's path (AndroidArena's adaptive metrics)", "",
             "Against the expert's trajectory on the same task and phone: TCR, the share of the expert's path done up "
             "to the last step matched; TR normalised, the matched steps weighted towards the end; RRR, the expert's "
             "length over the episode's (docs/evaluation.md). Each cell: the mean across seeds of each seed's mean "
             f"over its episodes, and in [ ] the 95% interval of the {BOOTSTRAP}.", ""]
    for split in study.splits:
        mine = [r for r in found if r["split"] == split]
        if not mine:
            continue
        metrics = [m for m in PROGRESS if any(r["metric"] == m for r in mine)]
        lines += [f"{split}:", "", "| arm | " + " | ".join(PROGRESS[m] for m in metrics) + " |",
                  "| --- " * (len(metrics) + 1) + "|"]
        for arm in study.arms:
            cells = []
            for m in metrics:
                r = next(x for x in mine if x["arm"] == arm and x["metric"] == m)
                ci = r["ci95"]
                cells.append("–" if r["mean"] is None else f"{r['mean']:.3f}"
                             + (f" [{ci['low']:.3f}, {ci['high']:.3f}]" if ci else ""))
            lines.append(f"| {arm} | " + " | ".join(cells) + " |")
        against = [r for r in mine if r["metric"] == "tcr" and r["against_first"] is not None]
        if against:
            lines += [""] + [f"- TCR, {r['arm']} − {first}: {r['against_first']['difference']:+.3f} ({BOOTSTRAP}: "
                             f"95% CI [{r['against_first']['ci95'][0]:+.3f}, {r['against_first']['ci95'][1]:+.3f}], "
                             f"{p_text(r['against_first'])}): {verdict([r['against_first']])}" for r in against]
        lines.append("")
    return lines


def rows(study: Study, evaluated: dict[str, Evaluation]) -> list[dict[str, Any]]:
    """One row per (arm, split, task or 'all'): mean and standard error across seeds, the 95% interval of the
    bootstrap over seeds and phones, the 95% t interval over the phones' means (``t_interval``, None under two
    phones), and each seed's success."""
    out = []
    for split in study.splits:
        groups = evaluated[split].seeds["groups"]
        for arm in study.arms:
            g = groups[arm]
            for task, s in [*g["per_family"].items(), ("all", g["overall"])]:
                ci = s["ci95"] or {}
                out.append({"arm": arm, "split": split, "task": task, "mean": s["mean"], "stderr": s["stderr"],
                            "ci_low": ci.get("low"), "ci_high": ci.get("high"), "t_interval": s["t_interval"],
                            "seeds": s["seeds"], "per_seed": list(s["per_policy"].values())})
    return out


def per_phone(study: Study, evaluated: dict[str, Evaluation]) -> list[dict[str, Any]]:
    """Each seed's success on each phone, all tasks pooled: one row per (arm, split, snapshot, seed); success None
    where none of the seed's episodes on the phone counted."""
    out = []
    for split in study.splits:
        for arm in study.arms:
            g = evaluated[split].seeds["groups"][arm]
            for snapshot, rates in g["per_phone"].items():
                out += [{"arm": arm, "split": split, "snapshot": snapshot, "seed": seed, "success": rates[c]}
                        for seed, c in zip(study.seeds, g["checkpoints"], strict=True)]
    return out


def by_setting(study: Study, evaluated: dict[str, Evaluation]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Each arm's success on each split by phone setting (:func:`vlui.eval.axes.breakdown`), keyed (arm, split); a
    split of fewer than two phones with settings (one snapshot, or phones known only to a device) has none."""
    out = {}
    for split in study.splits:
        ev = evaluated[split]
        described = axes.describe_all(ev.phones.phones)
        if len(described) < 2:
            continue
        for arm in study.arms:
            phones, matrix = ev.phones.matrix(ev.seeds["groups"][arm]["checkpoints"])
            out[arm, split] = axes.breakdown(phones, matrix, described)
    return out


def _starts(overrides: list[str]) -> list[str]:
    """The arms whose same-seed runs an arm's ``overrides`` name (``{run:ARM}``)."""
    return [m.group(1) for o in overrides for m in RUN_REF.finditer(o)]


def started_from(study: Study, arm: str) -> str | None:
    """The arm whose same-seed run ``arm`` starts from (``{run:ARM}`` in its overrides), if any."""
    found = _starts(study.arms[arm])
    return found[0] if found else None


def paired_comparisons(study: Study, table: list[dict[str, Any]], split: str,
                       evaluation: Evaluation) -> list[dict[str, Any]]:
    """Each arm that starts from another arm's run of the same seed against that arm, seed by seed (paired), per
    task and overall: the paired t-test across seeds (None with fewer than two pairs, or where the difference is the
    same in every seed: then ``every_seed`` is it) and the paired bootstrap over seeds and phones. The seed-to-seed
    spread both share cancels; the phones are the same for both."""
    out = []
    groups = evaluation.seeds["groups"]
    for arm in study.arms:
        base = started_from(study, arm)
        if base is None:
            continue
        for task in dict.fromkeys(r["task"] for r in table):
            a, b = ([x for x in table if x["arm"] == name and x["split"] == split and x["task"] == task][0]["per_seed"]
                    for name in (arm, base))
            pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
            d = paired([x for x, _ in pairs], [y for _, y in pairs])
            families = None if task == "all" else [task]
            _, ma = evaluation.phones.matrix(groups[arm]["checkpoints"], families)
            _, mb = evaluation.phones.matrix(groups[base]["checkpoints"], families)
            out.append({"a": arm, "b": base, "task": task, "pairs": len(pairs),
                        "every_seed": d.difference if d is not None and d.stderr == 0 else None,
                        "t_test": {"difference": d.difference, "stderr": d.stderr, "ci95": list(d.ci95),
                                   "p_value": d.p_value, "test": "paired t-test across seeds"}
                        if d is not None and d.stderr > 0 else None,
                        "bootstrap": bootstrap_comparison(ma, mb, paired=True)})
    return out


def differences(study: Study, table: list[dict[str, Any]],
                evaluated: dict[str, Evaluation]) -> dict[str, list[dict[str, Any]]]:
    """Per split, the comparisons the report prints: each arm that starts from no other arm against the study's first
    arm, or with ``compare: consecutive`` against the arm before it (:func:`against_the_one_before`), by Welch's
    t-test across seeds and the bootstrap over seeds and phones; and each arm against the arm it starts from
    (:func:`paired_comparisons`), overall and per task. The overall comparisons of a split are its family of
    planned tests: their p-values are Holm-adjusted over that family (the t-tests and the bootstrap tests each on
    their own), since the more tests a report runs the more come out below 0.05 by chance. Per-task differences are
    exploratory and printed unadjusted, saying so."""
    first = next(iter(study.arms))
    out = {}
    for split in study.splits:
        if study.compare == "consecutive":
            pairs = against_the_one_before(study, evaluated[split])
        else:
            pairs = [c for c in evaluated[split].seeds["comparisons"] if first in (c["a"], c["b"])
                     and started_from(study, c["a"] if c["b"] == first else c["b"]) is None]
        paired_ones = paired_comparisons(study, table, split, evaluated[split])
        planned = [*pairs, *[c for c in paired_ones if c["task"] == "all"]]
        for test in [*pairs, *[c["bootstrap"] for c in pairs if c.get("bootstrap")]]:
            for key in ("p_holm", "holm_tests"):  # the evaluation adjusted over all its pairs; the family is this
                test.pop(key, None)
        holm_adjust([c for c in pairs if c.get("difference") is not None]
                    + [c["t_test"] for c in planned if c.get("t_test")])
        holm_adjust([c["bootstrap"] for c in planned if c.get("bootstrap")])
        out[split] = [*planned, *[c for c in paired_ones if c["task"] != "all"]]
    return out


def against_the_one_before(study: Study, evaluation: Evaluation) -> list[dict[str, Any]]:
    """Each arm that starts from no other arm minus the arm before it in the study's order, for a study whose arms
    are steps (7, 21, 35 training phones: did each step help?): Welch's t-test across seeds and the bootstrap over
    seeds and phones on the phones both ran (:func:`~vlui.eval.report.group_comparison`), not yet Holm-adjusted. An
    arm that starts from another arm's run is compared with that one, seed by seed (:func:`paired_comparisons`)."""
    groups = evaluation.seeds["groups"]

    def seeds(arm: str) -> list[float]:
        return [v for v in groups[arm]["overall"]["per_policy"].values() if v is not None]

    def rates(arm: str) -> np.ndarray:
        return evaluation.phones.matrix(groups[arm]["checkpoints"])[1]

    arms = list(study.arms)
    return [group_comparison(arm, before, seeds(arm), seeds(before), rates(arm), rates(before))
            for before, arm in pairwise(arms) if started_from(study, arm) is None]


def stored_differences(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Per split, each arm minus the one before it, recomputed from a study report's folder as a study with
    ``compare: consecutive`` tests them (:func:`against_the_one_before`, Holm-adjusted over the split's tests), so
    that a study reported before it could need no evaluation run again: each seed's success, all tasks, from
    ``results.csv`` (the t-test), each seed's success on each phone from ``per_phone.csv`` (the bootstrap; the
    phones in the order an evaluation sorts them, so the resamples are the report's). The arms come in results.csv's
    order, each compared unpaired: these files do not say which arm started from which."""
    with open(folder / "results.csv", newline="", encoding="utf-8") as f:
        overall = [r for r in csv.DictReader(f) if r["task"] == "all"]
    with open(folder / "per_phone.csv", newline="", encoding="utf-8") as f:
        cells = list(csv.DictReader(f))
    seeds = sorted({int(c["seed"]) for c in cells})
    out = {}
    for split in dict.fromkeys(r["split"] for r in overall):
        mine = [r for r in overall if r["split"] == split]
        per_seed = {r["arm"]: [float(r[f"seed{s}"]) for s in seeds if r[f"seed{s}"] != ""] for r in mine}
        phones = sorted({c["snapshot"] for c in cells if c["split"] == split})
        rates = {r["arm"]: np.full((len(seeds), len(phones)), np.nan) for r in mine}
        for c in cells:
            if c["split"] == split and c["success"] != "":
                rates[c["arm"]][seeds.index(int(c["seed"])), phones.index(c["snapshot"])] = float(c["success"])
        arms = list(per_seed)
        found = [group_comparison(arm, before, per_seed[arm], per_seed[before], rates[arm], rates[before])
                 for before, arm in pairwise(arms)]
        holm_adjust([c for c in found if c["difference"] is not None])
        holm_adjust([c["bootstrap"] for c in found if c["bootstrap"]])
        out[split] = found
    return out


def selected(study: Study, table: list[dict[str, Any]]) -> str | None:
    """The arm the study chooses: the highest mean success on the validation phones, all tasks (None with one arm)."""
    if len(study.arms) < 2 or SELECT_ON not in study.splits:
        return None
    scored = {r["arm"]: r["mean"] for r in table if r["split"] == SELECT_ON and r["task"] == "all"
              and r["mean"] is not None}
    return max(scored, key=scored.get) if scored else None


def _paired_sentence(c: dict[str, Any]) -> str:
    """A paired comparison (:func:`paired_comparisons`, with Holm-adjusted p-values) as a sentence."""
    t, boot = c["t_test"], c["bootstrap"]
    what = PAPER_TASKS.get(c["task"], c["task"]) if c["task"] != "all" else "**all tasks**"
    if t is not None:
        head, tests = f"{100 * t['difference']:+.1f} ± {100 * t['stderr']:.1f} points", [
            f"paired t-test across seeds: 95% CI {ci_points(t['ci95'])}, {p_text(t)}"]
    elif c["every_seed"] is not None:
        head, tests = f"{100 * c['every_seed']:+.1f} points in every seed", ["no spread across seeds for a t-test"]
    elif boot is None:
        return f"{c['a']} − {c['b']}, {what}: needs at least two seeds for a paired test"
    else:
        head, tests = f"{100 * boot['difference']:+.1f} points", ["needs at least two seeds for a paired t-test"]
    if boot is not None:
        tests.append(f"paired {BOOTSTRAP}: 95% CI {ci_points(boot['ci95'])}, {p_text(boot)}")
    return (f"{c['a']} − {c['b']} (paired by seed), {what}: {head} ({'; '.join(tests)}): "
            f"{verdict([x for x in (t, boot) if x is not None])}")


def summary(study: Study, table: list[dict[str, Any]]) -> list[str]:
    """The report's first table: each arm's success over all tasks on every split with both intervals (:func:`_pct`),
    the validation phones first and the test snapshots in the last column, marked as reported once; then the arm the
    study chooses on validation."""
    names = [f"{s} (reported once)" if s == TEST else f"{s} (chosen on)" if s == SELECT_ON else s
             for s in study.splits]
    lines = ["## Summary", "", "| arm | " + " | ".join(names) + " |", "| --- " * (len(names) + 1) + "|"]
    for arm in study.arms:
        cells = [_pct(next(r for r in table if r["arm"] == arm and r["split"] == s and r["task"] == "all"), t=True)
                 for s in study.splits]
        lines.append(f"| {arm} | " + " | ".join(cells) + " |")
    chosen = selected(study, table)
    if chosen is not None:
        lines += ["", f"Chosen on the validation phones (the highest mean, all tasks): **{chosen}**. The test column "
                  "played no part in that choice."]
    return [*lines, ""]


def _pct(row: dict[str, Any], t: bool = False) -> str:
    """A table cell: the mean across seeds with the 95% bootstrap interval over seeds and phones, in %; with ``t``,
    the 95% t interval over the phones' means after it (where the split has two phones or more)."""
    if row["mean"] is None:
        return "–"
    cell = f"{100 * row['mean']:.1f} [{100 * row['ci_low']:.1f}, {100 * row['ci_high']:.1f}]"
    return cell + (f" {t_text(row['t_interval'])}" if t and row["t_interval"] else "")


def _paper(study: Study, arm: str, task: str, split: str) -> str:
    if not study.paper:
        return ""
    fig = paper_numbers().get(study.paper, {})
    values = fig.get("train" if split == "train" else "arms", {}).get(arm, {})
    return str(values.get(PAPER_TASKS.get(task, task), ""))


def report(study: Study, out: Path, timings: dict[str, float] | None = None) -> dict[str, Any]:
    """``report.md``, ``results.csv``, ``per_phone.csv``, ``success.png`` and ``study.json`` in ``out``; for a study
    with agent arms, :func:`agents_study_report`."""
    if study.agents:
        return agents_study_report(study, out, timings)
    out.mkdir(parents=True, exist_ok=True)
    evaluated = evaluations(study)
    table = rows(study, evaluated)
    _write_summaries(out / "results.csv", ["task"], table, study.seeds)
    with open(out / "per_phone.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, ["arm", "split", "snapshot", "seed", "success"])
        w.writeheader()
        w.writerows(per_phone(study, evaluated))
    settings = by_setting(study, evaluated)
    with open(out / "by_setting.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, ["arm", "split", "axis", "value", "phones", "mean", "ci_low", "ci_high"])
        w.writeheader()
        w.writerows({"arm": arm, "split": split, **r} for (arm, split), rows in settings.items() for r in rows)
    apps = app_rows(study, evaluated)
    if apps:
        _write_summaries(out / "by_app.csv", ["app", "tasks"], apps, study.seeds)
    found = differences(study, table, evaluated)
    tasks = list(dict.fromkeys(r["task"] for r in table))
    has_paper = any(_paper(study, arm, t, s) for arm in study.arms for t in tasks for s in study.splits)
    lines = [f"# Study: {study.title}", "", study.question, "",
             f"{len(study.seeds)} training seeds per arm; each cell is the mean across seeds, in %, and in [ ] its 95% "
             f"interval from a {BOOTSTRAP} ({BOOTSTRAP_RESAMPLES:,} resamples, each drawing the seeds and, "
             "independently, the phones with replacement: both are samples, of the training randomness and of the "
             "phones users have), per task and overall alike. " + T_EXPLAINED + " Each seed's success is in "
             "`results.csv`, each seed's on each phone in `per_phone.csv` and under Per phone. Evaluated on "
             + "; ".join(f"{split}: {split_words(study, split)}" for split in study.splits)
             + " (one run each: the phone and the policies are deterministic).", ""]
    lines += summary(study, table)
    for split in study.splits:
        head = [" task"] + [f" {arm}" for arm in study.arms]
        if has_paper:
            head += [f" paper: {arm}" for arm in study.arms if any(_paper(study, arm, t, split) for t in tasks)]
        words = split_words(study, split)
        lines += [f"## {words[0].upper() + words[1:]} ({split})", "",
                  "|" + " |".join(head) + " |", "|" + " --- |" * len(head)]
        for task in tasks:
            cells = [f" {PAPER_TASKS.get(task, task) if task != 'all' else '**all**'}"]
            for arm in study.arms:
                r = next(x for x in table if x["arm"] == arm and x["split"] == split and x["task"] == task)
                cells.append(f" {_pct(r, t=task == 'all')}")
            if has_paper:
                cells += [f" {_paper(study, arm, task, split) or '–'}" for arm in study.arms
                          if any(_paper(study, arm, t, split) for t in tasks)]
            lines.append("|" + " |".join(cells) + " |")
        if found[split]:
            lines += ["", f"Differences, each with a t-test across seeds (Welch's, {COMPARE[study.compare]}; paired "
                      f"by seed where an arm starts from another's policy) and a {BOOTSTRAP}. Overall differences are "
                      "this split's planned tests, their p also Holm-adjusted over them (t-tests and bootstrap tests "
                      "each on their own); per-task ones are exploratory and unadjusted:", "",
                      *[f"- {_paired_sentence(c) if 'task' in c else comparison(c)}" for c in found[split]]]
        lines.append("")
    lines += app_lines(study, apps)
    adaptive = progress(study, evaluated)
    lines += progress_lines(study, adaptive)
    with open(out / "progress.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["arm", "split", "metric", "mean", "ci_low", "ci_high", "minus_first", "minus_first_ci_low",
                    "minus_first_ci_high", "minus_first_p", *[f"seed{s}" for s in study.seeds]])
        for r in adaptive:
            ci, d = r["ci95"] or {}, r["against_first"] or {}
            w.writerow([r["arm"], r["split"], r["metric"], r["mean"], ci.get("low"), ci.get("high"),
                        d.get("difference"), *(d.get("ci95") or [None, None]), d.get("p_value"), *r["per_seed"]])
    # the split the study chooses on, else the first with phones to group
    where = next((s for s in sorted(study.splits, key=lambda s: s != SELECT_ON)
                  if any(settings.get((arm, s)) for arm in study.arms)), None)
    if where is not None:
        lines += [f"## By phone setting ({where})", "", f"Success on {split_words(study, where)}, by phone setting. "
                  + axes.EXPLAINED + " Every split's: `by_setting.csv`.", "",
                  *axes.table({arm: settings.get((arm, where), []) for arm in study.arms}), ""]
    lines += [PER_PHONE_HEAD, "", PER_PHONE_INTRO, ""]
    for split in study.splits:
        groups = evaluated[split].seeds["groups"]
        lines += [f"{split}:", "", seeds_phones_table({arm: groups[arm] for arm in study.arms}), ""]
    if study.paper:
        fig = paper_numbers()[study.paper]
        lines += ["## The paper", "", f"{fig['what']}. Source: {' '.join(str(fig['source']).split())}", ""]
    curves = learning_curves(study)
    if curves:
        lines += ["## Learning curves", "", "Success of the deterministic policy on the held-out snapshots (before the "
                  "first update, then as it trains) and of the sampling policy in its own rollouts, per seed: "
                  "`learning_curve.png`, `learning_curve.csv` (each run's `curve.csv`).", "",
                  "![learning curves](learning_curve.png)", ""]
    lines += how_it_was_made(study)
    meta = {"study": study.name, "size": study.size, "seeds": study.seeds, "commit": checkout_commit(),
            "machine": f"{platform.machine()}, {cores()} cores", "timings_s": timings or {}}
    if timings:
        lines += [f"Wall-clock on this machine ({meta['machine']}): " + "; ".join(
            f"{k} {v / 60:.1f} min" for k, v in timings.items()) + "."]
    lines += [f"Commit: `{meta['commit']}`.", ""]
    (out / "report.md").write_text("\n".join(lines), encoding="utf-8")
    (out / "study.json").write_text(json.dumps({**meta, "rows": table, "differences": found,
                                                "chosen_on_validation": selected(study, table)}, indent=2),
                                    encoding="utf-8")
    _plot(study, table, out / "success.png")
    if curves:
        _plot_curves(study, curves, out / "learning_curve.png")
        with open(out / "learning_curve.csv", "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["arm", "seed", *CURVE_COLUMNS])
            for (arm, seed), curve in curves.items():
                w.writerows([arm, seed, *(r[c] for c in CURVE_COLUMNS)] for r in curve)
    return {"report": str(out / "report.md"), **meta}


def _write_summaries(path: Path, keys: list[str], table: list[dict[str, Any]], seeds: list[int]) -> None:
    """Rows of :func:`rows` (or :func:`app_rows`) as CSV: arm, split, ``keys``, the mean with its standard error, both
    intervals and each seed's success."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["arm", "split", *keys, "mean", "stderr", "ci_low", "ci_high", "t_low", "t_high", "seeds",
                    *[f"seed{s}" for s in seeds]])
        for r in table:
            t = r["t_interval"] or {}
            w.writerow([r["arm"], r["split"], *(r[k] for k in keys), r["mean"], r["stderr"], r["ci_low"],
                        r["ci_high"], t.get("low"), t.get("high"), r["seeds"], *r["per_seed"]])


def how_it_was_made(study: Study) -> list[str]:
    """The report's section on the command that made it and the commands that command ran."""
    chosen = (f" --arms {','.join(study.chosen)}" if study.chosen else "") + (
        f" --splits {','.join(study.chosen_splits)}" if study.chosen_splits else "") + "".join(
        f" --set {shlex.quote(s)}" for s in study.sets) + "".join(
        f" --checkpoint {shlex.quote(f'{arm}={path}')}" for arm, path in study.given.items())
    lines = ["## How it was made", "", f"`python -m vlui.study {study.name} --size {study.size} --seeds "
             f"{len(study.seeds)}{chosen}`, which ran:", "", "```"]
    for _, cmd, _ in commands(study):
        lines.append(f"python {cmd[2].split(';')[0].split()[-1]}.py {' '.join(cmd[3:])}")
    return [*lines, "```", ""]


def agents_study_report(study: Study, out: Path, timings: dict[str, float] | None = None) -> dict[str, Any]:
    """The report of a study with agent arms (:mod:`vlui.study.agents_report`): each split's evaluation of the
    trained (or given) arms and each agent arm's, side by side with the paper's values."""
    splits = {}
    for split in study.splits:
        columns = agents_report.policy_columns(_results(study, split), list(study.arms)) if study.arms else []
        columns += [agents_report.agent_column(agent, _read_results(
            work_dir() / "outputs" / "evaluate" / agent_evaluation_name(study, agent, split))) for agent in study.agents]
        splits[split] = (split_words(study, split), columns)
    meta = {"study": study.name, "size": study.size, "seeds": study.seeds, "commit": checkout_commit(),
            "machine": f"{platform.machine()}, {cores()} cores", "timings_s": timings or {}}
    head = [f"# Study: {study.title}", "", study.question, ""]
    tail = [*how_it_was_made(study), f"Commit: `{meta['commit']}`. The wall-clock of each step and the requests "
            "each evaluation sent this time (the rest answered from the cache) are in `study.json`.", ""]
    path = agents_report.write(out, head, splits, paper_numbers()[study.paper] if study.paper else None,
                               PAPER_TASKS, tail, meta)
    return {"report": str(path), **meta}


def learning_curves(study: Study) -> dict[tuple[str, int], list[dict[str, str]]]:
    """The ``curve.csv`` of every (arm, seed) run that wrote one (online RL runs)."""
    found = {}
    for arm in study.arms:
        for seed in study.seeds:
            path = work_dir() / run_dir(study, arm, seed) / "curve.csv"
            if path.exists():
                with open(path, newline="", encoding="utf-8") as f:
                    found[(arm, seed)] = list(csv.DictReader(f))
    return found


def _plot_curves(study: Study, curves: dict[tuple[str, int], list[dict[str, str]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for (arm, seed), curve in curves.items():
        for ax, column in zip(axes, ("heldout_success", "rollout_success"), strict=True):
            points = [(float(r["iteration"]), 100 * float(r[column])) for r in curve if r[column] != ""]
            if points:
                ax.plot(*zip(*points, strict=True), marker="o", markersize=3, label=f"{arm} seed {seed}")
    titles = ("held-out snapshots (deterministic policy)", "its own rollouts (sampling policy)")
    for ax, title in zip(axes, titles, strict=True):
        ax.set_xlabel("iteration (the CSV has the wall-clock)")
        ax.set_ylabel("success (%)")
        ax.set_ylim(0, 100)
        ax.set_title(title, fontsize=9)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"{study.title}: learning curves", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot(study: Study, table: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = list(dict.fromkeys(r["task"] for r in table))
    fig, axes = plt.subplots(1, len(study.splits), figsize=(5.5 * len(study.splits), 3.6), squeeze=False)
    width = 0.8 / max(1, len(study.arms))
    for ax, split in zip(axes[0], study.splits, strict=True):
        for i, arm in enumerate(study.arms):
            rs = [next(x for x in table if x["arm"] == arm and x["split"] == split and x["task"] == t) for t in tasks]
            xs = [j + (i - (len(study.arms) - 1) / 2) * width for j in range(len(tasks))]
            ax.bar(xs, [100 * (r["mean"] or 0) for r in rs], width, label=arm, capsize=2, yerr=[
                [100 * max(0.0, r["mean"] - r["ci_low"]) if r["mean"] is not None else 0 for r in rs],
                [100 * max(0.0, r["ci_high"] - r["mean"]) if r["mean"] is not None else 0 for r in rs]])
            for x, t in zip(xs, tasks, strict=True):
                value = _paper(study, arm, t, split).lstrip("~>")
                if value and not math.isnan(float(value)):
                    ax.plot([x], [float(value)], marker="*", color="black", markersize=8)
        ax.set_xticks(range(len(tasks)), [PAPER_TASKS.get(t, t) for t in tasks], rotation=30, fontsize=8)
        ax.set_ylim(0, 100)
        ax.set_ylabel("success (%)")
        ax.set_title(split_words(study, split).strip("`"), fontsize=9)
    axes[0][0].legend(fontsize=7, title="arm (★ paper)", title_fontsize=7)
    fig.suptitle(f"{study.title} (mean across {len(study.seeds)} seeds, 95% {BOOTSTRAP})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def checkout_commit() -> str:
    """The commit of the vlui checkout that ran the study (with ``+changes`` when it had uncommitted ones)."""
    root = checkout()
    if root is None:
        return "an installed vlui package"
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True).stdout.strip()
        return head + ("+changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
