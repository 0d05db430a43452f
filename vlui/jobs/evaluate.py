"""The ``evaluate`` job (``python evaluate.py``): an agent on held-out snapshots, with honest statistics.

Default: the B-MoCA protocol, the six representative tasks on the test snapshots (100–109), 3 runs with different
seeds. Episodes run in ``env.num_envs`` environments side by side with one batched policy forward per step. Every
finished episode is appended to ``episodes.jsonl`` in the output folder at once; running the same command again
skips the episodes already there. At the end: ``results.json``, ``results.md``, plots, optional GIFs.

``mode=offline`` scores an agent on a dataset's demonstrations instead, without a phone: another job
(vlui/jobs/offline.py), which the entry point runs for it.

The job's door, :func:`run`, turns the composed config into its typed settings once (:class:`EvaluateJobConfig`),
:func:`plan` resolves them into what the work reads (tasks, phones, episodes, the policies, the agent type's class and
each policy's agent settings, the report's inputs) and :func:`run` opens the executor's environments; :func:`evaluate`
runs the episodes and writes the report from those, never from the settings.
"""

from __future__ import annotations

import glob
import json
import logging
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from omegaconf import DictConfig
from tqdm import tqdm

from vlui.agents import make_agent
from vlui.agents.expert import ExpertAgent
from vlui.android import generate
from vlui.android.snapshot import load_snapshot
from vlui.backends import resolve_snapshots
from vlui.agents.base import AgentBase
from vlui.agents.settings import AgentConfig, ExpertAgentConfig, agent_settings, agent_type, recorded_now
from vlui.config import EvaluateJobConfig, job_settings
from vlui.env.settings import EnvConfig
from vlui.data.format import encode_png
from vlui.data.images import IMAGES, image_hash, keep_images
from vlui.errors import VluiError
from vlui.eval import report
from vlui.eval.metrics import adaptive_metrics, repeat_ratio
from vlui.jobs.executor import LOCAL, Environments, environments
from vlui.jobs.policies import checkpoint_groups
from vlui.models.files import weights_digest
from vlui.rollout import EpisodeRecord, Job, result_line, rollout
from vlui.seeding import substream
from vlui.tasks import templates
from vlui.tasks.catalog import Task, resolve_tasks

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Plan:
    """An evaluation resolved once from its settings: the tasks, the phones, every episode with its seed, the
    agent(s) and what the report needs (:class:`vlui.eval.report.Inputs`). Everything after :func:`plan` reads this,
    not the settings."""

    tasks: list[Task]
    snapshots: list[str]
    jobs: list[Job]
    env: EnvConfig  # env.num_envs: how many environments side by side
    agent: AgentConfig  # the agent's settings (a policy's checkpoint: see ``policies``)
    agent_class: type[AgentBase]  # the agent type's class, which makes each policy's agent from its settings
    policies: list[tuple[str, str | None]]  # (group, checkpoint) of each policy; ("", None) for another agent
    agents: list[AgentConfig]  # each policy's agent settings, its checkpoint in them
    recipe: dict[str, Any]  # what makes two evaluations the same one (a resume checks it)
    out: Path
    video: str
    screens: str  # which episodes keep each step's screen (none, failures, all), in images/ by content hash
    adaptive_metrics: bool
    gamma: float
    reuse: list[Path]  # earlier evaluations' folders whose episodes of the same policies are taken, not run again
    report: report.Inputs  # what the report says beside the episodes

    @property
    def task_ids(self) -> list[str]:
        return [t.id for t in self.tasks]

    @property
    def several(self) -> bool:
        return len(self.policies) > 1


def plan(job: EvaluateJobConfig) -> Plan:
    """The evaluation ``job`` asks for, every task, phone and policy resolved once, with the agent type's class (its
    module loaded) and what the report needs. With several policies every one gets the same jobs, seeds included, so
    their episodes pair up."""
    if job.reuse and (job.video != "none" or job.screens != "none"):
        raise VluiError("reuse= takes earlier episodes without their frames: leave video and screens at none, or "
                        "leave reuse out")
    reuse = reused_folders(job.reuse, Path(job.paths.root_dir), Path(job.paths.output_dir))
    earlier = compared(job.compare)
    kind = agent_type(job.agent.name)
    agent = agent_settings(job.agent)
    groups: dict[str, list[str]] = {}
    if kind.checkpoint:
        groups = checkpoint_groups(agent.checkpoint or job.checkpoint)
        if not groups:
            raise VluiError("agent=policy needs checkpoint=checkpoints/<experiment>/<run> (or a glob or list of "
                            "runs trained with different seeds)")
    policies: list[tuple[str, str | None]] = [(g, c) for g, paths in groups.items() for c in paths] or [("", None)]
    env = job.env
    spec = templates.expand(job.tasks, job.task_seed, job.task_count, job.task_split)
    tasks = resolve_tasks(spec, backend=env.backend)
    snaps = resolve_snapshots(env)
    several = len(policies) > 1
    jobs = [Job(task.id, snap, substream(job.seed, substream(run, i, 10_007)), run=run, episode=k,
                policy=p if several else None)
            for p in range(len(policies))
            for run in range(job.runs)
            for i, (task, snap, k) in enumerate((t, s, k) for t in tasks for s in snaps
                                                for k in range(job.episodes_per_pair))]
    # a resume may change how to connect; settings added since older evaluations are left out at their default
    measured = type(agent).in_recipe({k: v for k, v in asdict(agent).items() if k not in type(agent).CONNECTION})
    recipe = {"tasks": [t.id for t in tasks], "snapshots": snaps, "runs": job.runs,
              "episodes_per_pair": job.episodes_per_pair, "seed": job.seed, "agent": measured, "env": env.measured()}
    if several:
        recipe["policies"] = [[g, c] for g, c in policies]
    if groups:  # a policy trained again into the same folder is another policy: its episodes are not resumed
        recipe["weights"] = {c: weights_digest(c) for _, c in policies}
    if any(generate.parse_generated(s) for s in snaps):
        recipe["generator_version"] = generate.version()
    agents = [replace(agent, checkpoint=c) if c is not None else agent for _, c in policies]
    agent_class = kind.load()  # last: a policy's torch loads once the settings and files have been checked
    inputs = report.Inputs(
        job.name, agent.name, policies[0][1] if not several else None, asdict(job),
        {s: load_snapshot(s).split for s in snaps}, groups if several else None,
        {t.id: [c.level for c in t.constraints] for t in tasks if t.constraints}, earlier,
        agent_class.prices(agent))
    return Plan(tasks, snaps, jobs, env, agent, agent_class, policies, agents, recipe, Path(job.paths.output_dir),
                job.video, job.screens, job.adaptive_metrics, job.gamma, reuse, inputs)


def reused_folders(value: Any, root: Path, own: Path) -> list[Path]:
    """The evaluation folders ``reuse`` names (a folder or a glob of folders, or a list of them; relative to the
    project's root), this evaluation's own left out; a folder named outright that holds no evaluation is an
    error, a glob that matches none is not (the first evaluation of a study has nothing to reuse)."""
    if value is None:
        return []
    found: list[Path] = []
    for item in value if isinstance(value, list) else [value]:
        path = Path(str(item)).expanduser()
        path = path if path.is_absolute() else root / path
        if glob.has_magic(str(path)):
            found += [Path(p) for p in sorted(glob.glob(str(path))) if (Path(p) / "recipe.json").is_file()]
        elif not (path / "recipe.json").is_file():
            raise VluiError(f"reuse: {path} holds no evaluation (no recipe.json): give the folder of an earlier "
                            "evaluation (outputs/evaluate/<name>), or leave it out")
        else:
            found.append(path)
    mine = own.resolve()
    return list(dict.fromkeys(p for p in found if p.resolve() != mine))


def compared(value: Any) -> dict[str, dict[str, Any]]:
    """The results of the earlier evaluations ``compare`` names (a folder or its results.json; a list of them, named
    by their folders, or a mapping name -> one), read before anything runs."""
    if value is None:
        return {}
    items = value.items() if isinstance(value, dict) else (
        (Path(str(v)).name if Path(str(v)).suffix != ".json" else Path(str(v)).parent.name, v)
        for v in (value if isinstance(value, list) else [value]))
    out: dict[str, dict[str, Any]] = {}
    for name, where in items:
        path = Path(str(where))
        path = path if path.suffix == ".json" else path / "results.json"
        try:
            out[str(name)] = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise VluiError(f"compare: no evaluation results at {path}: give the folder of a finished evaluation "
                            "(outputs/evaluate/<name>)") from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise VluiError(f"compare: {path} is damaged: evaluate that again, or leave it out") from None
    return out


def references(p: Plan, envs: Environments = LOCAL) -> dict[tuple[str, str], list[str]]:
    """The expert's action tokens per (task, snapshot): the reference trajectories of the adaptive metrics."""
    refs: dict[tuple[str, str], list[str]] = {}

    def keep(record: EpisodeRecord) -> None:
        if record.success:
            refs[(record.job.task, record.job.snapshot)] = result_line(record)["tokens"]

    jobs = [Job(t.id, s, 0) for t in p.tasks for s in p.snapshots]
    make_env = envs.factory(p.env, p.tasks, p.snapshots, include_xml=True, include_screen=False)
    slots = envs.slots(p.env, 8)
    rollout(jobs, make_env, lambda: make_agent(ExpertAgentConfig()), slots=slots, on_done=keep, retries=envs.retries)
    return refs


def run(cfg: DictConfig | EvaluateJobConfig) -> dict[str, Any]:
    """The evaluation ``cfg`` (a composed config, or its typed settings) asks for, on phones."""
    job = job_settings(cfg, EvaluateJobConfig)
    if job.mode == "offline":
        raise VluiError("mode=offline scores a dataset's demonstrations without a phone: run it as python evaluate.py "
                        "mode=offline (vlui.jobs.offline.run), not through the online evaluation")
    p = plan(job)
    with environments(job.executor) as envs:
        return evaluate(p, envs)


def evaluate(p: Plan, envs: Environments) -> dict[str, Any]:
    """Run the evaluation ``p`` on the phones of ``envs`` and write its report."""
    p.out.mkdir(parents=True, exist_ok=True)
    journal = p.out / "episodes.jsonl"
    # the first policy is loaded before anything is written or run: a missing or incompatible checkpoint is one line
    # (the others load when their turn comes)
    first: Any = p.agent_class.from_settings(p.agents[0])
    first.refuse_overlap(p.snapshots)  # few-shot examples never come from the phones evaluated
    done = _resume(p.out, p.recipe, p.jobs)
    retry = {k for k, r in done.items() if r.get("infra_failure")}  # failed for infrastructure reasons: run again
    done = {k: r for k, r in done.items() if k not in retry}
    taken = _take_reused(p, done)
    # run a snapshot's episodes together (the phone keeps only a few configurations' renderings at hand); the seeds,
    # keys and the order of the results are the plan's
    todo = sorted((j for j in p.jobs if j.key not in done), key=lambda j: j.snapshot)
    if todo:
        first.check()  # a remote model's endpoint, key and name, in one line, before anything runs
    log.info(f"{len(p.jobs)} episodes ({len(p.tasks)} tasks x {len(p.snapshots)} snapshots x "
             f"{p.recipe['episodes_per_pair']} x {p.recipe['runs']} runs"
             f"{f' x {len(p.policies)} policies' if p.several else ''}) with agent={p.agent.name} -> {p.out}"
             + (f"; {len(done) - taken} already done, resuming" if len(done) > taken else "")
             + (f"; {taken} taken from earlier evaluations of the same policies (reuse)" if taken else "")
             + (f"; {len(retry)} that failed for infrastructure reasons run again" if retry else ""))
    include_xml = "xml" in p.agent_class.reads or p.adaptive_metrics
    # the screens are drawn only to be looked at: for the agent, the GIFs or the viewer
    record_frames = p.video != "none" or p.screens != "none"
    include_screen = "screen" in p.agent_class.reads or record_frames
    bar = tqdm(total=len(p.jobs), initial=len(done), unit="episode", dynamic_ncols=True, mininterval=0.5)
    videos = p.out / "videos"
    with open(journal, "a", encoding="utf-8") as f:
        for index, (group, checkpoint) in enumerate(p.policies):
            mine = [j for j in todo if j.policy == (index if p.several else None)]
            if not mine and p.several:
                continue
            agent = first if index == 0 else p.agent_class.from_settings(p.agents[index])
            agents = iter([agent])
            phones = screens_for(agent, p.env)
            # the environments' agents: siblings share what a run shares (an endpoint's cache and budget)
            another = lambda a=agent, i=index: a.sibling() or p.agent_class.from_settings(p.agents[i])

            def save(episode: EpisodeRecord, group: str = group, checkpoint: str | None = checkpoint) -> None:
                record, frames = result_line(episode), episode.frames
                success = record["success"]
                screens, gif = frames and kept(p.screens, success), frames and kept(p.video, success)
                if p.several:
                    record.update(policy=episode.job.policy, group=group, checkpoint=checkpoint)
                if screens:
                    record["screens"] = keep_screens(frames, p.out / IMAGES)
                if episode.transcript is not None:
                    keep_images(episode.transcript.get("images", {}), p.out / IMAGES)
                if gif:
                    videos.mkdir(exist_ok=True)
                    head = f"p{record['policy']}_" if p.several else ""
                    name = (f"{head}{record['task']}_{Path(record['snapshot']).stem}_run{record['run']}_"
                            f"ep{record['episode']}.gif")
                    report.gif(frames, record["actions"], videos / name)
                f.write(json.dumps(record) + "\n")
                f.flush()
                done[record["key"]] = record
                bar.update(1)

            make_env = envs.factory(phones, p.tasks, p.snapshots, include_xml, include_screen)
            slots = envs.slots(p.env, p.env.num_envs)
            # an agent that waits on a served model asks in threads (agent.concurrency), the wait shown on the bar
            concurrency = agent.concurrency
            if concurrency is not None and concurrency > min(slots, len(mine)) and mine:
                log.info(f"agent.concurrency={concurrency}, but {min(slots, len(mine))} environments run side by "
                         f"side (env.num_envs={p.env.num_envs}, {len(mine)} episodes to run): that many requests at "
                         "most are in flight")
            try:
                rollout(mine, make_env, lambda a=agents, more=another: next(a, None) or more(), slots=slots,
                        on_done=save, record_frames=record_frames, retries=envs.retries, concurrency=concurrency,
                        on_wait=lambda awaited, seconds: bar.set_postfix_str(
                            f"{awaited} answer(s) awaited for {seconds:.0f} s" if awaited else ""))
            except VluiError:
                bar.close()  # the error on a line of its own, not after the progress bar
                raise
            except KeyboardInterrupt:
                bar.close()
                raise VluiError(f"interrupted: {len(done)} of {len(p.jobs)} episodes are saved in {journal}; run the "
                                "same command again to finish") from None
            del agent, agents
            first = None  # the first policy's agent is not kept while the others run
    bar.close()
    records = [done[j.key] for j in p.jobs if j.key in done]
    failed = [r for r in records if r.get("infra_failure")]
    if failed and len(failed) == len(records):  # nothing was measured: no rates, no report
        raise VluiError(f"all {len(records)} episodes failed for infrastructure reasons, the last with: "
                        f"{failed[-1]['infra_failure']}; fix that and run the same command again to retry them")
    if p.adaptive_metrics and records:
        _add_adaptive_metrics(p, records, own_reference=p.agent_class is ExpertAgent, envs=envs)
    result, paths = report.publish(records, p.report, p.out)
    print(report.table(result))
    if "compared" in result:
        print("\n" + report.side_by_side_table(result["compared"]))
    usage = result.get("llm")
    if usage:
        log.info(report.usage_line(usage))
        if usage["answers"] and usage["invalid_answers"] == usage["answers"]:
            log.warning(f"none of the model's {usage['answers']} answers held a valid action (the raw answers are in "
                        f"{journal}): does {usage['model']} follow the prompt's format? (agent.answer=json asks for "
                        "another)")
    if failed:
        log.info(f"{len(failed)} of {len(records)} episodes failed for infrastructure reasons and are not "
                 f"counted (the last with: {failed[-1]['infra_failure']}); run the same command again to retry them")
    log.info(f"results in {paths['json']} and {paths['md']}" + (f"; GIFs in {videos}" if videos.exists() else ""))
    return {k: result[k] for k in ("success_rate", "episodes")} | {"results": str(paths["json"])}


def _add_adaptive_metrics(p: Plan, records: list[dict[str, Any]], own_reference: bool,
                          envs: Environments = LOCAL) -> None:
    """Each episode's adaptive metrics against the expert's trajectory on its task and phone: the expert's own
    successful episodes when it is the agent evaluated (no second pass), else a pass of the expert."""
    if own_reference:
        refs = {(r["task"], r["snapshot"]): r["tokens"] for r in reversed(records) if r["success"]}
    else:
        refs = references(p, envs)
    for r in records:
        ref = refs.get((r["task"], r["snapshot"]))
        if ref and r["tokens"]:
            a = adaptive_metrics(ref, r["tokens"], p.gamma)
            r["adaptive"] = {"tr": a.tr, "tr_normalised": a.tr_normalised, "tcr": a.tcr, "rrr": a.rrr,
                             "repeat_ratio": repeat_ratio(r["tokens"])}


def kept(choice: str, success: bool) -> bool:
    """Whether an episode's GIF or screens are kept under ``video``'s or ``screens``' ``choice``: every episode's
    (``all``), the failures' (``failures``) or none."""
    return choice == "all" or (choice == "failures" and not success)


def keep_screens(frames: list[Any], folder: Path) -> list[str]:
    """An episode's screens, first to last, as the content hashes of their PNGs (``<folder>/<hash>.png``): a screen
    seen again (the home screen of every episode on a phone) is stored once."""
    pngs = [encode_png(frame) for frame in frames]
    hashes = [image_hash(png) for png in pngs]
    keep_images(dict(zip(hashes, pngs, strict=True)), folder)
    return hashes


def screens_for(agent: AgentBase, env: EnvConfig) -> EnvConfig:
    """The phones an agent is evaluated on: an agent with a ``spec`` (a trained policy) sees screens at the size it
    was trained at and its actions read as it learnt them (so policies of several sizes compare in one evaluation);
    an agent that asks for screens of a size (an MLLM's screenshot, ``observation_size``) gets them at that size;
    other agents act under ``env``'s settings."""
    spec = agent.spec
    if spec is None:
        size = agent.observation_size
        return replace(env, observation_height=size[0], observation_width=size[1]) if size else env
    if not spec.same_actions(env.spec()):
        log.info(f"the policy's actions read as it learnt them ({spec.reading()}), not by env's settings "
                 f"({env.spec().reading()})")
    return env.with_spec(spec)


def _without_weights(recipe: Any) -> Any:
    return {k: v for k, v in recipe.items() if k != "weights"} if isinstance(recipe, dict) else recipe


def _set_aside(out: Path, what: str) -> None:
    """Move the evaluation in ``out`` (its files, not the log of the runs) into ``out/earlier-<time>/``: kept, and
    out of the way of a fresh one."""
    aside = out / f"earlier-{time.strftime('%Y%m%d-%H%M%S')}"
    aside.mkdir()
    for path in out.iterdir():
        if path.is_file() and path.name != "cli.log":
            path.replace(aside / path.name)
    log.info(f"{out} held an evaluation of {what}; it is kept in {aside.name}/, evaluating afresh")


def recipe_now(saved: Any) -> Any:
    """An evaluation's recipe as this version records it: its agent's settings by the names and fields they have now
    (:func:`~vlui.agents.settings.recorded_now`: an evaluation from before each agent type had settings of its own
    recorded every agent's)."""
    if isinstance(saved, dict) and isinstance(saved.get("agent"), dict):
        return {**saved, "agent": recorded_now(saved["agent"])}
    return saved


def _same_settings(recipe: dict[str, Any]) -> dict[str, Any]:
    """What two evaluations of different policies must share for one's episodes to stand for the other's: the
    recipe without its policies (and an agent's own checkpoint setting)."""
    out = {k: v for k, v in _without_weights(recipe).items() if k != "policies"}
    if isinstance(out.get("agent"), dict):
        out["agent"] = {k: v for k, v in out["agent"].items() if k != "checkpoint"}
    return out


def reusable(p: Plan, folder: Path) -> dict[str, dict[str, Any]]:
    """The episodes of ``folder``'s evaluation that stand for episodes of ``p``, under ``p``'s keys: those of a
    policy ``p`` evaluates too (the same checkpoint with the same weights), evaluated with the same settings (tasks,
    phones, runs, seeds, agent, environment) and not failed for infrastructure reasons. An evaluation of other
    settings, or a damaged one, gives none (it is another evaluation, not this one's)."""
    try:
        saved = json.loads((folder / "recipe.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return {}
    if not isinstance(saved, dict) or _same_settings(recipe_now(saved)) != _same_settings(p.recipe):
        return {}
    weights, theirs = saved.get("weights", {}), p.recipe.get("weights", {})
    old = ({c: j for j, (_, c) in enumerate(saved["policies"])} if "policies" in saved
           else {c: None for c in weights})
    index = {}  # their policy index -> ours
    for i, (group, checkpoint) in enumerate(p.policies):
        if checkpoint in old and weights.get(checkpoint) == theirs.get(checkpoint) != "missing":
            index[old[checkpoint]] = (i if p.several else None, group, checkpoint)
    if not index:  # none of its policies is one of ours: its episodes are not read
        return {}
    try:
        text = (folder / "episodes.jsonl").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    seeds = {j.key: j.seed for j in p.jobs}
    out: dict[str, dict[str, Any]] = {}
    for line in text.splitlines():
        try:
            record = json.loads(line)
            head, _, rest = record["key"].partition("/") if "policies" in saved else ("", "", record["key"])
            mine = index.get(int(head[1:]) if head else None)
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
            continue  # a line cut short or damaged there: that episode runs here
        if mine is None or record.get("infra_failure"):
            continue
        policy, group, checkpoint = mine
        key = f"p{policy}/{rest}" if policy is not None else rest
        if seeds.get(key) != record.get("seed"):
            continue
        record = {k: v for k, v in record.items() if k not in ("policy", "group", "checkpoint", "screens", "adaptive")}
        record["key"] = key
        if policy is not None:
            record.update(policy=policy, group=group, checkpoint=checkpoint)
        record["reused"] = folder.name
        out[key] = record
    return out


def _take_reused(p: Plan, done: dict[str, dict[str, Any]]) -> int:
    """Add to ``done`` (and to this evaluation's journal) the episodes that ``p.reuse``'s evaluations ran and this
    one has not: how many were taken."""
    taken: dict[str, dict[str, Any]] = {}
    for folder in p.reuse:
        for key, record in reusable(p, folder).items():
            if key not in done and key not in taken:
                taken[key] = record
    if taken:
        with open(p.out / "episodes.jsonl", "a", encoding="utf-8") as f:  # in the plan's order
            f.writelines(json.dumps(taken[job.key]) + "\n" for job in p.jobs if job.key in taken)
        done.update(taken)
    return len(taken)


def journal_records(journal: Path) -> list[tuple[int, dict[str, Any]]]:
    """The episodes an ``episodes.jsonl`` holds, with their line numbers: a line cut short by a kill is dropped from
    the file (that episode runs again), a damaged one is one line naming it."""
    if not journal.exists():
        return []
    text = journal.read_text(encoding="utf-8", errors="replace")
    if text and not text.endswith("\n"):  # a line cut short by a kill: drop it, that episode runs again
        text = text[: text.rfind("\n") + 1]
        journal.write_text(text, encoding="utf-8")
    records = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            record = None
        if not isinstance(record, dict) or "key" not in record:
            raise VluiError(f"{journal} line {n} is damaged: delete that line and run the same command again to "
                            "evaluate that episode again")
        records.append((n, record))
    return records


def _resume(out: Path, recipe: dict[str, Any], jobs: list[Job]) -> dict[str, dict[str, Any]]:
    """Episodes already evaluated in ``out`` with the same recipe. A damaged ``recipe.json`` or line of
    ``episodes.jsonl`` is a one-line error naming it; nothing in the folder is changed or dropped silently, except a
    last line that a kill cut short (its episode runs again)."""
    meta, journal = out / "recipe.json", out / "episodes.jsonl"
    if meta.exists():
        try:
            saved = json.loads(meta.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise VluiError(f"{meta} is damaged ({str(err).splitlines()[0]}): restore it, or evaluate into another "
                            "folder (name=... or hydra.run.dir=...)") from None
        saved = recipe_now(saved)
        if saved != recipe and not (journal.exists() and journal.stat().st_size):
            meta.unlink()  # a run that stopped before its first episode (a failed check): nothing to keep
        elif saved != recipe and _without_weights(saved) == _without_weights(recipe):
            _set_aside(out, "its policies' earlier weights")  # trained again since: evaluate them afresh
        elif saved != recipe:
            raise VluiError(f"{out} holds an evaluation with other settings: name this one (name=...) or choose "
                            "another output folder (hydra.run.dir=...)")
    done: dict[str, dict[str, Any]] = {}
    seeds = {j.key: j.seed for j in jobs}
    for n, record in journal_records(journal):
        key = record["key"]
        if not meta.exists() and seeds.get(key) != record.get("seed"):
            raise VluiError(f"{out} has episodes but no recipe.json, and line {n} ({key}) is not an episode of "
                            "this evaluation: evaluate into another folder (name=... or hydra.run.dir=...)")
        done[key] = record
    if not meta.exists():
        tmp = meta.with_name(f".{meta.name}.tmp")
        tmp.write_text(json.dumps(recipe, indent=2))
        tmp.replace(meta)
    return done
