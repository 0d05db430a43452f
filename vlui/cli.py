"""Glue between the thin entry points (``train.py``, ``collect.py``, ``evaluate.py``) and the jobs in ``vlui.jobs``.

The entry points stay one line long; the jobs are plain functions of a composed config that tests call directly
(through :func:`compose`) without going through the command line.
"""

from __future__ import annotations

import errno
import hashlib
import importlib
import json
import os
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the entry points import this module first: it stays light, so Ctrl-C is caught early
    from omegaconf import DictConfig

from vlui.errors import VluiError
from vlui.resources import shipped, work_dir

CONFIG_DIR = shipped("configs")


def slug(value: Any) -> str:
    """A folder-name-safe label for a config value: the last two parts of a path, a set name, ``none``."""
    if value is None:
        return "none"
    if isinstance(value, Mapping):  # policies to compare: their names
        return "-vs-".join(slug(k) for k in value) or "none"
    if isinstance(value, Sequence) and not isinstance(value, str):  # one recipe's seeds: the first, and how many
        items = list(value)
        return slug(items[0]) + (f"-and-{len(items) - 1}-more" if len(items) > 1 else "") if items else "none"
    parts = [p for p in str(value).replace("\\", "/").split("/") if p and p != "policy"][-2:]
    return "-".join("".join(c if c.isalnum() or c in "._-" else "_" for c in p) for p in parts) or "none"


# The settings of a model-driven agent (agent=text, agent=mllm) that change what it is asked or answers: two runs that
# differ in one of them are two evaluations, each in a folder of its own by default (the budget, retries, prices and
# cache do not change the answers, so a run with a larger budget resumes in the same folder)
ANSWERING = ("model", "temperature", "top_p", "max_answer_tokens", "seed_requests", "with_bounds", "history",
             "answer", "actions", "reflect", "few_shot", "few_shot_data", "few_shot_seed", "image_height",
             "image_width", "set_of_marks")
# The folders' digests were first made when every agent type had every setting: the MLLM's screenshot size is digested
# under its name then, and a text agent, which has no screenshot, with the values it had then, so that the folder of
# an evaluation begun before is the same folder
DIGESTED_AS = {"image_height": "screenshot_height", "image_width": "screenshot_width"}
DIGESTED_WITHOUT = {"image_height": 1024, "image_width": 512, "set_of_marks": False}


def run_label(checkpoint: Any, agent: Mapping[str, Any]) -> str:
    """What an evaluation's default folder says after the agent's name: the checkpoint's :func:`slug`, or for an
    agent driven by a served model, the model's name and a digest of the settings that change its answers
    (``stand-in-3f9a1c``), so that another model or option never lands in a run's folder."""
    if checkpoint is not None or not agent.get("model"):
        return slug(checkpoint)
    settings = {k: agent.get(DIGESTED_AS.get(k, k), DIGESTED_WITHOUT.get(k)) for k in ANSWERING}
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:6]
    return f"{slug(agent['model'])}-{digest}"


def offline_suffix(mode: str, dataset: str, split: str | None, part: str) -> str:
    """What an offline evaluation's folder name adds to an online one's: ``-offline-<dataset>-<split>-<part>``
    (``-offline-<dataset>-all`` for every episode), so that it never lands in an online evaluation's folder."""
    if mode != "offline":
        return ""
    return "-offline-" + "-".join(slug(v) for v in (dataset, *([split] if split else []), part))


def _prepare() -> None:
    """Make the configs resolvable: the repository root for ``paths.root_dir``, the typed schemas, and the
    ``vlui.slug``, ``vlui.label`` and ``vlui.offline`` resolvers that name output folders."""
    from omegaconf import OmegaConf

    from vlui.config import register_configs

    os.environ.setdefault("VLUI_ROOT", str(work_dir()))
    register_configs()
    _share_config_store()
    OmegaConf.register_new_resolver("vlui.slug", slug, replace=True)
    OmegaConf.register_new_resolver("vlui.offline", offline_suffix, replace=True)
    OmegaConf.register_new_resolver("vlui.label", run_label, replace=True)


def _share_config_store() -> None:
    """Let a copy of Hydra's ConfigStore be the store itself. Hydra 1.3 deep-copies its config repository, and with
    it the ConfigStore holding every schema, each time it lists a group's options: ``--help`` lists 138 groups, and
    the copies took 25 of its 30 s. The store is one per process, and reading a config from it copies that config,
    so a copy shares nothing that changes; Hydra's own later fix reads the live store instead of copying it
    (facebookresearch/hydra#2928, not in a 1.3 release)."""
    from hydra.core.config_store import ConfigStore

    ConfigStore.__deepcopy__ = lambda self, memo: self


def hydra_main(config_name: str, job: Callable[[DictConfig], Any]) -> Callable[[], Any]:
    """Wrap ``job`` as a Hydra command-line program over ``configs/<config_name>.yaml``.

    A :class:`VluiError` raised by the job becomes one line on stderr and exit status 2.
    """
    import hydra

    _prepare()

    @hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name=config_name)
    def main(cfg: DictConfig) -> Any:
        try:
            return run_job(job, cfg)
        except VluiError as err:
            print(f"error: {err}", file=sys.stderr)
            sys.exit(err.exit_code)

    return main


INTERRUPTED = "error: interrupted; what was written is kept, and the same command resumes"
# Hydra's flags that print something (the groups, the composed config, its search path) and run no job
INFORMATIONAL = {"--help", "-h", "--hydra-help", "--info", "-i", "--cfg", "-c", "--shell-completion", "-sc",
                 "--version"}


def _not_run(cfg: DictConfig) -> None:
    raise AssertionError("Hydra ran the job for an informational flag")


def _loaded_when_run(jobs: str | Mapping[str, str]) -> Callable[[DictConfig], Any]:
    """The job ``module:function`` (or, by the config's ``mode``, one of ``jobs``), imported once its config is
    composed, checked and typed: a misspelt key, a bad value or an override Hydra refuses is one line in seconds,
    before torch and Lightning load (20 s here). The job gets its config's typed settings
    (:func:`vlui.config.job_settings`), checked here once."""
    def job(cfg: DictConfig) -> Any:
        from omegaconf import OmegaConf

        from vlui.config import job_settings

        settings = job_settings(cfg, OmegaConf.get_type(cfg))
        module, _, function = (jobs if isinstance(jobs, str) else jobs[settings.mode]).partition(":")
        run = getattr(importlib.import_module(module), function)
        signal.signal(signal.SIGINT, signal.default_int_handler)  # from here the jobs stop cleanly on Ctrl-C
        return run(settings)

    return job


def entry_point(config_name: str, job_path: str | Mapping[str, str]) -> None:
    """What ``train.py``, ``collect.py`` and ``evaluate.py`` run: the job ``module:function`` (or the one of a mapping
    that the config's ``mode`` names) as a Hydra program.
    Until the job starts (Hydra and the job's modules loading, the config composed and checked), Ctrl-C is one line
    and exit status 130 rather than a traceback; the job's module (and with it torch) is imported only once the config
    is known to be good."""
    def interrupted(*_) -> None:
        print(INTERRUPTED, file=sys.stderr, flush=True)
        os._exit(130)

    # While modules load nothing has been written, so Ctrl-C ends the process at once: raised inside an import,
    # KeyboardInterrupt can leave a half-imported module (numpy's) that fails again with another error.
    signal.signal(signal.SIGINT, interrupted)
    try:
        check_overrides(config_name, sys.argv[1:])  # before Hydra, which would answer them with a screen of advice
    except VluiError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(err.exit_code)
    informational = INFORMATIONAL.intersection(a.split("=", 1)[0] for a in sys.argv[1:])
    job = _not_run if informational else _loaded_when_run(job_path)  # answered without the job: no torch
    try:
        hydra_main(config_name, job)()
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        sys.exit(130)


def train() -> None:
    """``vlui-train``: ``train.py`` of an installed package."""
    entry_point("train", "vlui.jobs.train:run")


def collect() -> None:
    """``vlui-collect``: ``collect.py`` of an installed package."""
    entry_point("collect", "vlui.jobs.collect:run")


# evaluate.py's two jobs, by its mode: episodes on phones, or a dataset's demonstrations step by step without one
EVALUATIONS = {"online": "vlui.jobs.evaluate:run", "offline": "vlui.jobs.offline:run"}


def evaluate() -> None:
    """``vlui-evaluate``: ``evaluate.py`` of an installed package."""
    entry_point("evaluate", EVALUATIONS)


def check_overrides(config_name: str, overrides: Sequence[str]) -> None:
    """Refuse in one line a command-line override of a setting by its old name (:func:`vlui.config.check_renamed`) or
    of an agent setting the agent type does not have (:func:`vlui.config.check_agent_overrides`; the job's agent unless
    ``agent=`` chooses another)."""
    from omegaconf import OmegaConf

    from vlui.config import check_agent_overrides, check_renamed

    check_renamed(overrides)
    defaults = OmegaConf.to_container(OmegaConf.load(CONFIG_DIR / f"{config_name}.yaml")).get("defaults") or []
    default = next((d["agent"] for d in defaults if isinstance(d, dict) and "agent" in d), None)
    check_agent_overrides(overrides, default)


def run_job(job: Callable[[DictConfig], Any], cfg: DictConfig) -> Any:
    """Run ``job`` on ``cfg`` as the entry points do: a disk that filled up anywhere becomes a :class:`VluiError`
    (the jobs say what they kept where they write; this catches the writes they do not own, such as logs)."""
    check_complete(cfg)
    try:
        return job(cfg)
    except OSError as err:
        if err.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        where = f" writing {err.filename}" if err.filename else ""
        raise VluiError(f"no space left on the device{where}: free some space and run the same command again "
                        "(what was already written is kept)") from None


def check_complete(cfg: DictConfig) -> None:
    """Fail early, naming the keys, when a config still has mandatory values (``???``) unset."""
    from omegaconf import OmegaConf

    missing = sorted(k for k in OmegaConf.missing_keys(cfg) if not k.startswith("hydra."))
    if missing:
        settings = " ".join(f"{k}=..." for k in missing)
        raise VluiError(f"missing required value(s): {', '.join(missing)}; set them on the command line: {settings}")


def compose(config_name: str, overrides: Sequence[str] = (), output_dir: str | Path | None = None) -> DictConfig:
    """Compose ``configs/<config_name>.yaml`` with command-line style ``overrides``, as the entry point would.

    ``output_dir`` stands in for Hydra's run directory (``${hydra:runtime.output_dir}``) so that the config resolves
    outside a Hydra run, e.g. in tests and notebooks. A setting by its old name, or one the agent type does not have,
    is refused (:func:`check_overrides`).
    """
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import open_dict

    check_overrides(config_name, overrides)
    _prepare()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = hydra_compose(config_name=config_name, overrides=list(overrides), return_hydra_config=True)
    if output_dir is not None:
        cfg.hydra.runtime.output_dir = str(output_dir)
    HydraConfig.instance().set_config(cfg)
    with open_dict(cfg):
        del cfg["hydra"]
    return cfg
