"""A dataset's card: ``README.md`` in its folder, the way the Hugging Face Hub describes a dataset.

Its YAML front matter (``huggingface_hub``'s :class:`~huggingface_hub.DatasetCardData`) tells ``datasets.load_dataset``
where the episodes are and what they hold: one config of every episode (``all``, the default) and one per named split
of ``meta/splits.json`` with its ``train``, ``validation`` and ``test`` parts as the config's splits, each listing its
episode files; the features are the episode files' columns with the screens (PNG bytes in the files) as ``Image``
features, so ``load_dataset("data/<name>", split="train")`` gives PIL images. Its sections say what was collected:
the tasks, the phones, the splits, the recipe, the generator version and the licences of what the screens show.

The card is written when a collection ends and when a split is made (``vlui/jobs``), and by ``python -m vlui.data
card``. A ``README.md`` that vlui did not write (no :data:`MARKER`) is left alone unless asked.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from importlib import metadata
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from huggingface_hub import DatasetCard, DatasetCardData

from vlui.data.format import FORMAT_VERSION, dataset_spec, read_episode, read_index, read_info
from vlui.data.splits import PARTS, read_splits
from vlui.errors import VluiError
from vlui.hub import front_matter

log = logging.getLogger(__name__)

CARD = "README.md"
MARKER = "<!-- written by vlui (python -m vlui.data card): running it again rewrites this card -->"
ALL = "all"  # the config of every episode
PART_SPLITS = {"train": "train", "val": "validation", "test": "test"}  # a split's parts as the Hub names splits
SCREENS = ("screen", "screen_full")  # PNG bytes in the episode files, Image features in the card
REQUIRED = ("license", "tags", "configs", "dataset_info", "pretty_name")
SECTIONS = ("How to load", "Tasks", "Phones", "Splits", "Recipe", "Licences")
TAGS = ["vlui", "android", "gui-agent", "mobile-device-control", "b-moca", "demonstrations"]
NOTO = "Noto fonts (Debian's fonts-noto-core and fonts-noto-cjk), SIL Open Font License 1.1"


def version() -> str:
    """This vlui's version (the installed package's)."""
    try:
        return metadata.version("vlui")
    except metadata.PackageNotFoundError:
        return "unknown"


def summary(root: str | Path) -> dict[str, Any]:
    """What a dataset holds, from its files: its episodes and successes, tasks (each family's instances, episodes,
    successes and an instruction), phones, splits, screens and the collection recipe. A training run's export keeps
    it (``data`` in the policy's config.json), so a policy's card can describe its data without the dataset."""
    root = Path(root)
    info = read_info(root)
    index = read_index(root)
    recipe = info.get("recipe") or {}
    spec = dataset_spec(info, root)
    families: dict[str, dict[str, Any]] = {}
    first: dict[str, int] = {}
    for eid, entry in sorted(index.items()):
        family = entry["task_id"].split("@", 1)[0]
        f = families.setdefault(family, {"instances": set(), "episodes": 0, "successes": 0})
        f["instances"].add(entry["task_id"])
        f["episodes"] += 1
        f["successes"] += bool(entry["success"])
        first.setdefault(family, eid)
    for family, eid in first.items():  # one instruction of each family, read from its first episode's first row
        table = read_episode(root / index[eid]["file"], columns=["instruction"])
        families[family]["instruction"] = table.column("instruction")[0].as_py() if table.num_rows else None
        families[family]["instances"] = len(families[family]["instances"])
    env = recipe.get("env") or {}
    splits = read_splits(root)
    phones = sorted({str(e["snapshot_id"]) for e in index.values()})
    return {
        "name": root.name,
        "episodes": len(index),
        "successes": sum(bool(e["success"]) for e in index.values()),
        "steps": sum(int(e["steps"]) for e in index.values()),
        "tasks": families,
        "phones": phones,
        "phone_kinds": {kind: len(ids) for kind, ids in phone_kinds(phones).items()},
        "planned": {"tasks": len(recipe.get("tasks") or []), "phones": len(recipe.get("snapshots") or []),
                    "episodes_per_pair": recipe.get("episodes_per_pair")},
        "screen": [spec.height, spec.width],
        "backend": env.get("backend", "sim"),
        "observation_version": env.get("observation_version", 1),
        "generator_version": recipe.get("generator_version"),
        "agent": (recipe.get("agent") or {}).get("name"),
        "seed": recipe.get("seed"),
        "save_xml": recipe.get("save_xml"),
        "format_version": info.get("format_version"),
        "splits": {name: {"by": s.by, "holdout": list(s.holdout), "seed": s.seed,
                          "episodes": {p: len(s.parts[p]) for p in PARTS}} for name, s in splits.items()},
    }


def phone_kinds(phones: list[str]) -> dict[str, list[str]]:
    """The phones by where they come from: B-MoCA's snapshot files (``000`` ... ``109``), generated training phones
    (``gen-<seed>-<i>``), validation phones (``val-...``), leaky ones (``leaky-...``) and the user's snapshot files."""
    kinds: dict[str, list[str]] = defaultdict(list)
    for phone in phones:
        kind = ("B-MoCA snapshot" if re.fullmatch(r"\d{3}", phone) else
                {"gen": "generated training phone", "val": "generated validation phone",
                 "leaky": "leaky generated phone"}.get(phone.split("-", 1)[0], "snapshot file")
                if re.fullmatch(r"[a-z]+-\d+-\d+", phone) else "snapshot file")
        kinds[kind].append(phone)
    return dict(kinds)


def features(root: str | Path) -> Any:
    """The episode files' columns as ``datasets`` features, screens as ``Image``: the schema every episode file
    has. Files written by vlui versions with other columns (``acted``, ``success_line`` came later) make one
    feature set impossible: that is an error naming the first file that differs."""
    from datasets import Features, Image  # seconds to load (pandas too): only when a card is written

    root = Path(root)
    index = read_index(root)
    if not index:
        raise VluiError(f"{root} has no episodes yet: a card describes collected episodes")
    schema, where = None, None
    for eid in sorted(index):
        path = root / index[eid]["file"]
        try:
            own = pq.read_schema(path).remove_metadata()
        except OSError as err:
            raise VluiError(f"episode file {path} is corrupted ({str(err).splitlines()[0][:80]}): delete it and re-run "
                            "collect.py with the same settings to write it again") from None
        if schema is None:
            schema, where = own, path
        elif own.names != schema.names:
            differ = sorted(set(own.names) ^ set(schema.names))
            raise VluiError(f"{path} and {where} have different columns ({', '.join(differ)}): the dataset was "
                            "collected by vlui versions with other formats; collect it again to share it")
    found = Features.from_arrow_schema(schema)
    for column in SCREENS:
        if column in found:
            found[column] = Image()
    return found


def card_data(root: str | Path, license: str | None = None) -> Any:
    """The card's YAML front matter (:class:`~huggingface_hub.DatasetCardData`)."""
    root = Path(root)
    facts = summary(root)
    index = read_index(root)
    files = {eid: index[eid]["file"] for eid in index}
    configs = [{"config_name": ALL, "default": True,
                "data_files": [{"split": "train", "path": "episodes/chunk-*/episode_*.parquet"}]}]
    for name, split in read_splits(root).items():
        if name == ALL:
            raise VluiError(f"{root} has a split named {ALL!r}, the name of the card's config of every episode: make "
                            "it again under another --name")
        parts = [{"split": PART_SPLITS[p], "path": [files[e] for e in split.parts[p] if e in files]} for p in PARTS]
        configs.append({"config_name": name, "data_files": [p for p in parts if p["path"]]})
    found = features(root)
    n = facts["episodes"]
    size = "n<1K" if n < 1_000 else "1K<n<10K" if n < 10_000 else "10K<n<100K" if n < 100_000 else "100K<n<1M"
    from datasets.info import DatasetInfo, DatasetInfosDict  # loaded with the features, by features()

    data = DatasetCardData(
        license=license or default_license(facts), pretty_name=f"vlui demonstrations: {facts['name']}",
        language=["en"], task_categories=["robotics"], size_categories=[size], tags=list(TAGS), configs=configs)
    DatasetInfosDict({c["config_name"]: DatasetInfo(features=found) for c in configs}).to_dataset_card_data(data)
    return data


def default_license(facts: dict[str, Any]) -> str:
    """Apache-2.0 for screens the simulated phone drew (vlui's code drew all of them but the glyphs, from Noto fonts
    under the OFL, which lets what is set in them be used freely); ``unknown`` for a device's (over ADB), whose
    wallpapers, fonts and apps are its own."""
    return "apache-2.0" if facts["backend"] == "sim" else "unknown"


def dataset_card(root: str | Path, license: str | None = None, repo_id: str | None = None) -> Any:
    """The card of the dataset at ``root`` (:class:`~huggingface_hub.DatasetCard`), front matter and sections; its
    code loads the dataset from ``repo_id`` on the Hub when given, else from ``root``."""
    root = Path(root)
    data = card_data(root, license)
    parts = sections(repo_id or str(root), summary(root), data.license)
    text = f"---\n{data.to_yaml()}\n---\n{MARKER}\n\n" + "\n".join(line for lines in parts.values() for line in lines)
    return DatasetCard(text)


def write_dataset_card(root: str | Path, license: str | None = None, force: bool = False,
                       repo_id: str | None = None) -> Path:
    """Write the card to ``<root>/README.md`` (loading from ``repo_id`` in its code, when given) and check it. A
    README.md that vlui did not write is replaced only with ``force``."""
    root = Path(root)
    path = root / CARD
    if path.exists() and not force and MARKER not in path.read_text(encoding="utf-8", errors="replace"):
        raise VluiError(f"{path} was not written by vlui (someone's own card?): it is kept; move it away, or pass "
                        "--force to replace it")
    card = dataset_card(root, license, repo_id)
    tmp = path.with_name(f".{CARD}.tmp")
    tmp.write_text(str(card), encoding="utf-8")
    tmp.replace(path)
    check_dataset_card(root)
    return path


def refresh_dataset_card(root: str | Path, repo_id: str | None = None) -> Path | None:
    """Write the card again where vlui wrote it before or there is none (after a collection, after a split, before
    an upload to ``repo_id``), keeping the licence it names; None, leaving it, where the README.md is someone's
    own."""
    root = Path(root)
    path = root / CARD
    license = None
    if path.exists():
        text = path.read_text(encoding="utf-8", errors="replace")
        if MARKER not in text:
            return None
        license = front_matter(text, path, "write it again").get("license")
    return write_dataset_card(root, license if isinstance(license, str) else None, repo_id=repo_id)


def update_dataset_card(root: str | Path) -> Path | None:
    """:func:`refresh_dataset_card` after a collection or a split changed the dataset: a card that cannot be written
    is a warning naming why, not a failure of the job that changed the dataset."""
    try:
        return refresh_dataset_card(root)
    except VluiError as err:
        log.warning(f"the dataset card of {root} was not written: {err}")
        return None


def check_dataset_card(root: str | Path) -> Any:
    """The card of the dataset at ``root``, checked: its front matter is YAML with every field :data:`REQUIRED`,
    every config's files exist, its screens are ``Image`` features, and its sections are all there. Anything missing
    is one line naming it."""
    root = Path(root)
    path = root / CARD
    if not path.is_file():
        raise VluiError(f"{root} has no dataset card ({CARD}): write it with `python -m vlui.data card {root}`")
    text = path.read_text(encoding="utf-8", errors="replace")
    meta = front_matter(text, path, "write it again")
    missing = [k for k in REQUIRED if not meta.get(k)]
    if missing:
        raise VluiError(f"{path}: the card's front matter lacks {', '.join(missing)}: write it again with "
                        f"`python -m vlui.data card {root}`")
    for config in _as_list(meta["configs"]):
        name = config.get("config_name") if isinstance(config, dict) else None
        for part in _as_list(config.get("data_files")) if name else []:
            paths = part.get("path") if isinstance(part, dict) else part
            for rel in [paths] if isinstance(paths, str) else paths or []:
                if not any(root.glob(rel)):
                    raise VluiError(f"{path}: config {name!r} lists {rel}, which is not in {root}: write the card "
                                    f"again with `python -m vlui.data card {root}`")
        if not name or not config.get("data_files"):
            raise VluiError(f"{path}: a config without a config_name or data_files: write the card again with "
                            f"`python -m vlui.data card {root}`")
    for info in _as_list(meta["dataset_info"]):
        dtypes = {f.get("name"): f.get("dtype") for f in info.get("features") or []}
        if dtypes.get("screen") != "image":
            raise VluiError(f"{path}: config {info.get('config_name')!r} does not read the screens as images "
                            f"(features: screen is {dtypes.get('screen')!r}): write the card again with "
                            f"`python -m vlui.data card {root}`")
    absent = [s for s in SECTIONS if not re.search(rf"^## {re.escape(s)}\b", text, re.MULTILINE)]
    if absent:
        raise VluiError(f"{path}: the card lacks the section(s) {', '.join(absent)}: write it again with "
                        f"`python -m vlui.data card {root}`")
    return DatasetCard(text)


def _as_list(value: Any) -> list[Any]:
    """A front-matter entry that is one mapping (a card of one config) or a list of them, as a list."""
    return [value] if isinstance(value, (dict, str)) else value if isinstance(value, list) else []


# ------------------------------------------------------------------------------------------------- the sections
def sections(load_from: str, facts: dict[str, Any], license: str) -> dict[str, list[str]]:
    """The card's text, section by section (heading -> its lines; ``""`` is the title and the introduction); its code
    loads the dataset from ``load_from`` (its folder, or its repo id on the Hub)."""
    name = facts["name"]
    rate = 100 * facts["successes"] / max(facts["episodes"], 1)
    agent = facts["agent"] or "an agent"
    where = ("vlui's simulated Android 10 phone" if facts["backend"] == "sim" else
             "Android emulators or phones over ADB")
    h, w = facts["screen"]
    out = [f"# vlui demonstrations: {name}", "",
           f"{facts['episodes']} episodes ({facts['steps']} steps) of {agent} operating {where}, collected by vlui {version()} (dataset format {facts['format_version']}): "
           f"{facts['successes']} of them succeeded ({rate:.1f}%); failed episodes are kept and flagged. Each step is "
           f"the {h}x{w} screen the agent saw, the instruction, and the dual-gesture it answered (touch point, lift "
           "point: a tap or a swipe) with its reward; each episode ends with one more row holding the final screen. "
           "docs/dataset.md in vlui documents every column.", ""]
    out += ["## How to load", "", "```python", "from datasets import load_dataset", "",
            f'episodes = load_dataset("{load_from}", split="train")        # every episode (config "{ALL}")',
            'episodes[0]["screen"]                                      # a PIL image']
    for split in facts["splits"]:
        out.append(f'test = load_dataset("{load_from}", "{split}", split="test")   # split {split}\'s held-out part')
    out += ["```", "", "The files are plain Parquet: `pandas.read_parquet(\"" + load_from + "/episodes\")` reads "
            "them too (screens as PNG bytes). `python -m vlui.data export --format lerobot` writes the episodes in "
            "LeRobot's format.", ""]
    out += ["## Tasks", "", f"{len(facts['tasks'])} task families; a template's instances (`create_alarm@0630`) are "
            "counted under its name.", "", "| task | instances | episodes | successes | an instruction |",
            "| --- | --- | --- | --- | --- |"]
    for family, t in facts["tasks"].items():
        out.append(f"| `{family}` | {t['instances']} | {t['episodes']} | {t['successes']} | {t['instruction'] or '–'} |")
    out += ["", "## Phones", ""]
    kinds = phone_kinds(facts["phones"])
    out.append(f"{len(facts['phones'])} device configurations (snapshots): " + "; ".join(
        f"{len(ids)} {kind}{'s' if len(ids) > 1 else ''} ({_listed(ids)})" for kind, ids in kinds.items()) + ".")
    generator = facts["generator_version"]
    out += ["", f"Generator version: {generator} (what a generated phone's id means: `gen-<seed>-<index>` is the same "
            "phone under the same version)." if generator is not None else
            "Generator version: none (no generated phones: B-MoCA's snapshot files, or the user's).", ""]
    out += ["## Splits", ""]
    if facts["splits"]:
        out += ["The named splits of `meta/splits.json` (vlui's `python -m vlui.jobs.split`), each a config of this "
                "card whose `train`, `validation` and `test` splits are its parts:", "",
                "| split | kind | held out | seed | train | validation | test |", "| --- | --- | --- | --- | --- | --- | --- |"]
        for split, s in facts["splits"].items():
            held = ", ".join(s["holdout"]) or "episodes drawn at random"
            parts = " | ".join(str(s["episodes"][p]) for p in PARTS)
            out.append(f"| `{split}` | {s['by']} | {held} | {s['seed']} | {parts} |")
    else:
        out.append(f"None yet: every episode is in the config `{ALL}`'s `train` split. `python -m vlui.jobs.split "
                   f"{load_from} --by unseen_device ...` names one (GUIOdyssey's kinds) and writes this card again.")
    planned = facts["planned"]
    out += ["", "## Recipe", "",
            f"- agent: {agent}; seed {facts['seed']}; {planned['episodes_per_pair']} episode(s) per (task, phone) "
            f"pair over {planned['tasks']} tasks and {planned['phones']} phones",
            f"- device: {where}; observation version {facts['observation_version']} (the full screen resized to "
            f"{h}x{w})" if facts["observation_version"] >= 2 else
            f"- device: {where}; observation version {facts['observation_version']}",
            f"- UI trees (`xml`) saved: {'yes' if facts['save_xml'] else 'no'}",
            f"- vlui {version()}, dataset format {FORMAT_VERSION}; the whole recipe is `meta/info.json`'s `recipe`", ""]
    out += ["## Licences", "", f"This dataset: `{license}`."]
    if facts["backend"] == "sim":
        out += ["", "Every screen was drawn by vlui's simulated phone (Apache-2.0): its wallpapers are procedural, "
                "drawn from code (vlui/sim/wallpapers.py: no image files), and so are its icons (vlui/sim/icons.py); "
                f"its text is set in {NOTO}, which lets documents and images made with the fonts be used under any "
                "licence. The 45 B-MoCA device configurations follow the B-MoCA benchmark's environment table "
                "(Lee et al., 2024): cite it with this dataset."]
    else:
        out += ["", "The screens were taken from Android emulators or phones over ADB: their wallpapers, fonts, icons "
                "and app contents are the device's, under their own licences (and may show personal data). Check "
                "them before sharing, and name the licence with `python -m vlui.data card --license`."]
    parts: dict[str, list[str]] = {"": []}
    heading = ""
    for line in out:
        if line.startswith("## "):
            heading = line[3:]
            parts[heading] = []
        parts[heading].append(line)
    return parts


def _listed(ids: list[str], most: int = 6) -> str:
    shown = ", ".join(ids[:most])
    return shown + (f", … {len(ids) - most} more" if len(ids) > most else "")
