"""Policies shared the way the field shares models, offline: ``from_pretrained`` / ``save_pretrained`` round trips
through local folders, exports of earlier versions still load, model cards that render and validate with the recipe
and the held-out numbers with their seeds, and one line for every bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from huggingface_hub import ModelCard, PyTorchModelHubMixin

from vlui.cli import compose
from vlui.errors import VluiError
from vlui.jobs import evaluate, train
from vlui.models.__main__ import main
from vlui.models.card import CARD, MARKER, check_model_card, write_model_card
from vlui.models.files import weights_digest
from vlui.models.policy import VLUIPolicy, export_policy, load_policy
from vlui.models.settings import ModelConfig, TextConfig, VisionConfig
from vlui.spec import ObsActionSpec

TINY = ModelConfig(VisionConfig("efficientnet_b0"), TextConfig("t5", size="tiny"), hidden_dim=32, num_heads=2,
                   head_dims=[32, 32])
SIZE = ObsActionSpec(64, 32)
SCREENS = np.random.default_rng(0).integers(0, 256, (2, 64, 32, 3), dtype=np.uint8)


def tiny_policy(seed: int = 0) -> VLUIPolicy:
    torch.manual_seed(seed)
    return VLUIPolicy(TINY, SIZE).eval()


def test_save_pretrained_and_from_pretrained_round_trip_a_policy_exactly(tmp_path: Path) -> None:
    policy = tiny_policy()
    assert isinstance(policy, PyTorchModelHubMixin)
    policy.save_pretrained(tmp_path / "run" / "policy")
    assert sorted(p.name for p in (tmp_path / "run" / "policy").iterdir()) == [CARD, "config.json",
                                                                              "model.safetensors"]
    check_model_card(tmp_path / "run" / "policy")
    for where in (tmp_path / "run" / "policy", tmp_path / "run", str(tmp_path / "run")):  # the export, its run folder
        loaded = VLUIPolicy.from_pretrained(where)
        assert not loaded.training and loaded.cfg == TINY and loaded.spec == SIZE
        assert np.array_equal(loaded.select_action(SCREENS, ["a", "b"]), policy.select_action(SCREENS, ["a", "b"]))
    # saved again, it is the same export: the same weights (an evaluation's digest still names it) and settings
    loaded.metadata["algo"] = "bc"
    loaded.save_pretrained(tmp_path / "again")
    assert weights_digest(tmp_path / "again") == weights_digest(tmp_path / "run")
    config = json.loads((tmp_path / "again" / "config.json").read_text())
    assert config["policy"] == json.loads((tmp_path / "run" / "policy" / "config.json").read_text())["policy"]
    assert config["algo"] == "bc" and VLUIPolicy.from_pretrained(tmp_path / "again").metadata == {"algo": "bc"}


def test_exports_written_before_sharing_still_load(tmp_path: Path) -> None:
    policy = tiny_policy()
    export_policy(policy, tmp_path / "v3" / "policy", metadata={"algo": "bc"})  # as train.py wrote them: no card
    loaded = VLUIPolicy.from_pretrained(tmp_path / "v3")
    assert np.array_equal(loaded.select_action(SCREENS, ["a", "b"]), policy.select_action(SCREENS, ["a", "b"]))
    shutil.copytree(tmp_path / "v3", tmp_path / "v1")  # format 1: one flat mapping of settings
    config_path = tmp_path / "v1" / "policy" / "config.json"
    config = json.loads(config_path.read_text())
    config["export_version"] = 1
    config["policy"] = {"vision": "efficientnet_b0", "vision_pretrained": None, "vision_freeze": False,
                        "text_kind": "t5", "text_name_or_path": None, "text_size": "tiny", "text_max_length": 64,
                        "hidden_dim": 32, "num_heads": 2, "head_dims": [32, 32], "dropout": 0.0, "image_height": 64,
                        "image_width": 32}
    config_path.write_text(json.dumps(config))
    old = VLUIPolicy.from_pretrained(tmp_path / "v1")
    assert old.cfg == TINY and np.array_equal(old.select_action(SCREENS, ["a", "b"]),
                                              policy.select_action(SCREENS, ["a", "b"]))
    write_model_card(tmp_path / "v1")  # an old export gets a card too, saying what it does not know
    text = (tmp_path / "v1" / "policy" / CARD).read_text()
    assert "the rest of the recipe was not recorded" in text and "No evaluation was given" in text


def cached_repo(cache: Path, repo_id: str) -> Path:
    """The folder of ``repo_id``'s snapshot in a Hub cache laid out as huggingface_hub lays it out after a download
    (``models--owner--name/refs/main`` naming the snapshot's commit)."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("0" * 40)
    return repo / "snapshots" / ("0" * 40)


def test_a_hub_repo_id_loads_from_the_hubs_cache_offline(tmp_path: Path) -> None:
    policy = tiny_policy()
    policy.save_pretrained(cached_repo(tmp_path / "hub", "someone/policy"))
    loaded = VLUIPolicy.from_pretrained("someone/policy", cache_dir=tmp_path / "hub")  # HF_HUB_OFFLINE=1 in the suite
    assert np.array_equal(loaded.select_action(SCREENS, ["a", "b"]), policy.select_action(SCREENS, ["a", "b"]))
    notes = cached_repo(tmp_path / "hub", "someone/notes")
    notes.mkdir(parents=True)
    (notes / "README.md").write_text("# notes\n")
    with pytest.raises(VluiError, match=r"^the Hub repository someone/notes is not a vlui policy \(no config.json and "
                                        r"model.safetensors in it\)$"):
        VLUIPolicy.from_pretrained("someone/notes", cache_dir=tmp_path / "hub")


def test_someone_elses_card_is_kept(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / CARD).write_text("# my policy\n")
    tiny_policy().save_pretrained(tmp_path / "mine")
    assert (tmp_path / "mine" / CARD).read_text() == "# my policy\n"


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, tiny_dataset: Path) -> Path:
    """A tiny policy trained by train.py (seed 3) on the tiny dataset: its run folder, as train.py leaves it."""
    tmp = tmp_path_factory.mktemp("trained")
    result = train.run(compose("train", ["debug=tiny", f"paths.data_dir={tiny_dataset.parent}",
                                         f"data.name={tiny_dataset.name}", f"paths.checkpoint_dir={tmp}/ckpt",
                                         "logger=csv", "seed=3", "run_name=card-seed3"], output_dir=tmp / "run"))
    return Path(result["policy"]).parent


@pytest.fixture(scope="module")
def evaluations(trained: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two evaluations of the trained policy: alone on a training and a test phone (2 runs), and with another
    seed's policy of its recipe on two test phones (the spread across training seeds)."""
    tmp = tmp_path_factory.mktemp("evaluations")
    export_policy(tiny_policy(9), trained.parent / "card-seed9" / "policy")
    small = ["tasks=[open_clock]", "runs=2", "adaptive_metrics=false"]
    out = {}
    for name, checkpoint, phones in (("alone", str(trained), "[000,100]"),
                                     ("seeds", f"{trained.parent}/card-seed*", "[100,101]")):
        evaluate.run(compose("evaluate", [f"checkpoint={checkpoint}", f"env.snapshots={phones}", *small],
                             output_dir=tmp / name))
        out[name] = tmp / name
    return out


def test_train_writes_a_model_card_with_the_recipe_and_the_data(trained: Path, tiny_dataset: Path) -> None:
    card = check_model_card(trained)
    assert card.data.library_name == "vlui" and card.data.license == "apache-2.0"
    assert card.data.datasets == ["tiny"] and "bc" in card.data.tags
    text = (trained / "policy" / CARD).read_text()
    assert MARKER in text
    for words in ("training seed 3", "- algorithm: bc; 4 optimiser steps", "python train.py debug=tiny",
                  "The dataset `tiny`: 12 episodes of expert (12 successful) over 2 task families (`airplane_on`, "
                  "`open_clock`) and 3 phones (3 B-MoCA snapshots)", f"its card: `{tiny_dataset}/README.md`",
                  "image encoder: `efficientnet_b0` (timm), randomly initialised", "No evaluation was given",
                  "## Intended use", "## Limits", "## Licence"):
        assert words in text, words
    recipe = json.loads((trained / "policy" / "config.json").read_text())["recipe"]
    assert recipe["seed"] == 3 and recipe["data"]["name"] == "tiny" and recipe["trainer"]["max_steps"] == 4
    assert (recipe["data"]["observation_height"], recipe["data"]["observation_width"]) == (64, 32)


def test_a_recipe_that_names_the_screens_size_by_its_old_name_still_loads(trained: Path, tmp_path: Path) -> None:
    run = Path(shutil.copytree(trained, tmp_path / "before"))  # exported when the setting was data.image_height
    config_path = run / "policy" / "config.json"
    config = json.loads(config_path.read_text())
    data = config["recipe"]["data"]
    data["image_height"], data["image_width"] = data.pop("observation_height"), data.pop("observation_width")
    config_path.write_text(json.dumps(config))
    assert load_policy(run).spec.image_size == (64, 32)
    write_model_card(run)
    assert "image_height=64, image_width=32" in (run / "policy" / CARD).read_text()


def test_the_card_gives_the_held_out_numbers_with_their_seeds(trained: Path, evaluations: dict[str, Path],
                                                              tmp_path: Path, capsys) -> None:
    run = Path(shutil.copytree(trained, tmp_path / "card-seed3"))  # a run folder of the same weights
    assert main(["card", str(run), "--results", str(evaluations["alone"]), "--results", str(evaluations["seeds"]),
                 "--license", "mit"]) == 0
    assert capsys.readouterr().out.strip() == str(run / "policy" / CARD)
    card = check_model_card(run)
    text = (run / "policy" / CARD).read_text()
    alone = json.loads((evaluations["alone"] / "results.json").read_text())
    seeds = json.loads((evaluations["seeds"] / "results.json").read_text())
    for split, name in (("test", "test phones (held out)"), ("train", "training phones")):
        rate = 100 * alone["per_split"][split]["success_rate"]
        assert f"| alone | 000, 100 | {name} | {rate:.1f}% |" in text
    assert "| 2 | 2 | 0 |" in text  # episodes, runs, the evaluation's seed
    group = seeds["seeds"]["groups"][""]["per_split"]["test"]
    mine = next(v for c, v in group["per_policy"].items() if c.endswith("card-seed3"))
    assert f"| seeds | 100, 101 | test phones (held out) | {100 * mine:.1f}% |" in text
    assert "the recipe's, over 2 training seeds and the phones: bootstrap" in text
    assert (f"seeds, test phones (held out): the recipe over 2 training seeds, mean {100 * group['mean']:.1f}%"
            in text and "each seed: card-seed3" in text and "card-seed9" in text)
    assert card.data.license == "mit"
    assert [(r.dataset_config, r.dataset_split) for r in card.data.eval_results] == [
        ("alone", "test"), ("alone", "train"), ("seeds", "test")]
    # written again without --license, the licence stays
    assert main(["card", str(run), "--results", str(evaluations["alone"])]) == 0
    assert check_model_card(run).data.license == "mit"


def test_a_card_missing_a_field_is_one_clear_line(trained: Path, tmp_path: Path, capsys) -> None:
    run = Path(shutil.copytree(trained, tmp_path / "run"))
    path = run / "policy" / CARD
    good = path.read_text()
    path.write_text(good.replace("license: apache-2.0\n", ""))
    with pytest.raises(VluiError, match=r"README.md: the card's front matter lacks license: write it again with "
                                        r"`python -m vlui.models card .*policy`$"):
        check_model_card(run)
    assert main(["check", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "lacks license" in err
    path.write_text(good.replace("library_name: vlui", "library_name: timm"))
    with pytest.raises(VluiError, match="library_name is 'timm', not vlui"):
        check_model_card(run)
    path.write_text(good.replace("## Limits", "## Other"))
    with pytest.raises(VluiError, match=r"lacks the section\(s\) Limits"):
        check_model_card(run)
    path.write_text(good.replace("\n---\n", "\n", 1))
    with pytest.raises(VluiError, match="no YAML front matter"):
        check_model_card(run)
    assert ModelCard(good).data.library_name == "vlui"


def test_bad_inputs_are_one_line(trained: Path, evaluations: dict[str, Path], tmp_path: Path, capsys) -> None:
    (tmp_path / "notes").mkdir()
    with pytest.raises(VluiError, match=r"notes is not a policy export \(config.json and model.safetensors\)"):
        VLUIPolicy.from_pretrained(tmp_path / "notes")
    with pytest.raises(VluiError, match=r"^someone/policy is no folder here, and downloading it from the Hub failed: "
                                        r"the Hub cannot be reached \(no network, or HF_HUB_OFFLINE=1\) and it is not "
                                        r"in the local cache: connect to the network, or give a local folder$"):
        VLUIPolicy.from_pretrained("someone/policy")  # the suite runs with HF_HUB_OFFLINE=1
    with pytest.raises(VluiError, match="takes no map_location"):
        VLUIPolicy.from_pretrained(trained, map_location="cpu")
    with pytest.raises(VluiError, match=r"^uploading the policy to someone/policy: the Hub cannot be reached"):
        tiny_policy().push_to_hub("someone/policy")
    other = tmp_path / "other"
    export_policy(tiny_policy(5), other / "policy")
    (tmp_path / "partial").mkdir()
    (tmp_path / "partial" / "results.json").write_text(json.dumps({"overall": {}}))
    assert main(["card", str(other), "--results", str(evaluations["alone"])]) == 2
    assert main(["card", str(trained), "--results", str(tmp_path / "nothing")]) == 2
    assert main(["card", str(trained), "--results", str(tmp_path / "partial")]) == 2
    assert main(["card", str(tmp_path / "notes")]) == 2
    run = Path(shutil.copytree(trained, tmp_path / "run"))  # push writes its card for the repository first
    assert main(["push", str(run), "not a repo"]) == 2
    assert main(["push", str(run), "someone/policy"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 6 and all(line.startswith("error: ") for line in lines)
    assert lines[0].startswith(f"error: {evaluations['alone']} evaluated other weights than {other / 'policy'}'s")
    assert lines[1] == (f"error: no evaluation at {tmp_path / 'nothing'} (no results.json): evaluate the policy first "
                        "(python evaluate.py checkpoint=...), then give its folder outputs/evaluate/<name>")
    assert lines[2].endswith("is not an evaluation's results.json (it lacks per_split, runs, config): give the folder "
                             "evaluate.py wrote (outputs/evaluate/<name>)")
    assert lines[3] == (f"error: {tmp_path / 'notes'} is not a policy export (no config.json): point to "
                        "checkpoints/<experiment>/<run> or its policy/ folder")
    assert lines[4] == "error: 'not a repo' is not a Hub repo id (owner/name)"
    assert lines[5] == (f"error: uploading {run / 'policy'} to someone/policy: the Hub cannot be reached (no "
                        "network, or HF_HUB_OFFLINE=1): connect to the network to upload")
