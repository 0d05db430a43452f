"""Training data: decoded once, split by episode, transitions, reproducible batches under resume and DDP."""

from __future__ import annotations

import io
import json
from collections import Counter

import numpy as np
import pytest
import torch
from PIL import Image

from vlui.algos.augment import color_jitter, random_shift
from vlui.data.datamodule import DemoDataModule, EpochBatches, past_windows
from vlui.data.format import read_dataset
from vlui.env.grounding import grounding_pairs
from vlui.errors import VluiError


def test_frames_are_decoded_once_and_split_by_episode(tiny_dataset) -> None:
    dm = DemoDataModule(str(tiny_dataset), batch_size=4, val_fraction=0.25, image_height=64, image_width=32,
                        on_device=False)
    dm.setup("fit")
    assert dm.frames.dtype == torch.uint8 and dm.frames.shape[1:] == (64, 32, 3)
    assert dm.instructions == ["open the clock app", "turn on airplane mode"]
    train_frames = set(dm.train_set.obs.tolist()) | set(dm.train_set.next_obs.tolist())
    val_frames = set(dm.val_set.obs.tolist()) | set(dm.val_set.next_obs.tolist())
    assert train_frames and val_frames and not train_frames & val_frames  # no episode in both
    assert torch.equal(dm.train_set.next_obs, dm.train_set.obs + 1)
    assert dm.train_set.actions.abs().max() <= 1 and not dm.train_set.actions.isnan().any()
    assert dm.train_set.dones.sum() + dm.val_set.dones.sum() == 12  # one final action per (successful) episode
    batch = dm.batch(dm.train_set, torch.tensor([0, 1]))
    assert batch["images"].shape == (2, 64, 32, 3) and batch["next_images"].shape == (2, 64, 32, 3)


def test_a_screen_that_recurs_is_one_frame_and_every_row_still_gets_its_own_screen(tiny_dataset,
                                                                                  random_dataset) -> None:
    dm = DemoDataModule(str(tiny_dataset), batch_size=4, val_fraction=0.0, image_height=64, image_width=32,
                        on_device=False, mix=[str(random_dataset)], history=2)
    dm.setup("fit")
    screens = [s for path in (tiny_dataset, random_dataset) for s in read_dataset(path)[1].column("screen").to_pylist()]
    # each part's home screens recur (a snapshot's tasks start on it): one frame each, in every dataset of the mix
    distinct = [len(set(read_dataset(path)[1].column("screen").to_pylist())) for path in (tiny_dataset, random_dataset)]
    assert [n for _, n in dm.parts] == distinct and dm.frames.shape[0] == sum(distinct) < len(screens)
    for row, png in enumerate(screens):  # every row's frame is its own screen
        expected = np.asarray(Image.open(io.BytesIO(png)).convert("RGB").resize((32, 64), Image.BILINEAR))
        assert np.array_equal(dm.frames[dm.frame_of[row]].numpy(), expected), row
    # a batch's images, frames and past frames are its rows' screens
    idx = torch.arange(len(dm.train_set))
    batch = dm.batch(dm.train_set, idx)
    assert torch.equal(batch["images"], dm.frames[dm.frame_of[dm.train_set.obs]])
    assert torch.equal(batch["next_images"], dm.frames[dm.frame_of[dm.train_set.next_obs]])
    assert torch.equal(batch["frame"], dm.frame_of[dm.train_set.obs])
    assert torch.equal(batch["past_frame"], dm.frame_of[dm.train_set.past])


def test_a_named_splits_parts_replace_the_random_validation_episodes(tiny_dataset, random_dataset) -> None:
    # episodes 0-5: airplane_on, 6-11: open_clock (2 tasks x 3 snapshots x 2); the held-out ones are left out
    dm = DemoDataModule(str(tiny_dataset), batch_size=4, val_fraction=0.25, image_height=64, image_width=32,
                        on_device=False, mix=[str(random_dataset)], split_episodes=([0, 1, 2, 3, 4], [5]))
    dm.setup("fit")
    _, table = read_dataset(tiny_dataset)
    episode = table.column("episode_id").to_numpy()
    mixed = len(episode)  # frames past the first dataset's are the mixed dataset's
    in_first = dm.train_set.obs[dm.train_set.obs < mixed]
    assert set(episode[in_first.numpy()].tolist()) == {0, 1, 2, 3, 4}
    assert set(episode[dm.val_set.obs.numpy()].tolist()) == {5}
    assert (dm.train_set.obs >= mixed).sum() == read_dataset(random_dataset)[1].num_rows - 2  # all of the mix


def test_batches_depend_only_on_seed_and_epoch_and_shard_across_ranks() -> None:
    a, b = EpochBatches(50, 8, 5, seed=1), EpochBatches(50, 8, 5, seed=1)
    a.set_epoch(3)
    b.set_epoch(3)
    assert list(a) == list(b) and len(list(a)) == 5
    b.set_epoch(4)
    assert list(a) != list(b)
    ranks = [EpochBatches(50, 4, 3, seed=1, rank=r, world=2) for r in range(2)]
    for r in ranks:
        r.set_epoch(0)
    r0, r1 = list(ranks[0]), list(ranks[1])
    assert all(not set(x) & set(y) for x, y in zip(r0, r1, strict=True))  # each rank its own slice of the global batch


def test_weighted_batches_draw_each_sample_by_its_weight_and_repeat_by_seed_and_epoch() -> None:
    weights = torch.tensor([1.0, 1.0, 2.0, 0.0])
    a, b = EpochBatches(4, 100, 20, seed=3, weights=weights), EpochBatches(4, 100, 20, seed=3, weights=weights)
    drawn = Counter(i for batch in a for i in batch)
    assert list(a) == list(b) and 3 not in drawn  # a weight of 0 is never drawn
    assert drawn[2] / 2000 == pytest.approx(0.5, abs=0.04) and drawn[0] / 2000 == pytest.approx(0.25, abs=0.04)
    for bad in (torch.zeros(4), torch.tensor([1.0, -1.0, 1.0, 1.0]), torch.tensor([1.0, float("nan"), 1, 1]),
                torch.ones(3)):
        with pytest.raises(VluiError, match="sample weights"):
            EpochBatches(4, 8, 2, seed=0, weights=bad)


def test_balanced_batches_draw_each_group_of_phones_equally_often(tiny_dataset) -> None:
    # snapshot 000 alone against 001 and 030 together: fewer samples, half of the batches
    dm = DemoDataModule(str(tiny_dataset), batch_size=8, val_fraction=0.0, image_height=64, image_width=32,
                        on_device=False, steps_per_epoch=400, group_of=lambda s: "first" if s == "000" else "others")
    dm.setup("fit")
    _, table = read_dataset(tiny_dataset)
    snapshot = np.array(table.column("snapshot_id").to_pylist())[dm.train_set.obs.numpy()]
    assert dm.groups == {"others": int((snapshot != "000").sum()), "first": int((snapshot == "000").sum())}
    drawn = Counter(str(snapshot[i]) == "000" for batch in dm.train_dataloader().batch_sampler for i in batch)
    assert drawn[True] / 3200 == pytest.approx(0.5, abs=0.04)
    plain = DemoDataModule(str(tiny_dataset), batch_size=8, val_fraction=0.0, image_height=64, image_width=32,
                           on_device=False, steps_per_epoch=400)
    plain.setup("fit")  # without groups every sample alike: 000 as often as it has samples
    drawn = Counter(str(snapshot[i]) == "000" for batch in plain.train_dataloader().batch_sampler for i in batch)
    assert drawn[True] / 3200 == pytest.approx((snapshot == "000").mean(), abs=0.04)


def test_augmentations_keep_shape_and_are_reproducible() -> None:
    imgs = torch.randint(0, 256, (6, 16, 8, 3), dtype=torch.uint8)
    out1 = random_shift(imgs, 2, torch.Generator().manual_seed(0))
    out2 = random_shift(imgs, 2, torch.Generator().manual_seed(0))
    assert out1.shape == imgs.shape and out1.dtype == torch.uint8 and torch.equal(out1, out2)
    assert torch.equal(random_shift(imgs, 0), imgs)
    shifted = random_shift(torch.arange(16).view(1, 16, 1, 1).expand(1, 16, 8, 3).to(torch.uint8), 3,
                           torch.Generator().manual_seed(5))
    col = shifted[0, :, 0, 0].int()
    assert ((col[1:] - col[:-1]) >= 0).all()  # rows stay in order: a shift, not a shuffle
    jittered = color_jitter(imgs, 0.3, torch.Generator().manual_seed(1))
    assert jittered.shape == imgs.shape and not torch.equal(jittered, imgs)


def test_only_success_is_terminal_and_success_only_keeps_successful_episodes(tiny_dataset, random_dataset) -> None:
    import pyarrow.parquet as pq

    rows = pq.read_table(random_dataset / "episodes").to_pandas()
    assert not rows["success"].any() and rows["truncated"].any()  # the random agent ran out of steps
    dm = DemoDataModule(str(tiny_dataset), batch_size=4, val_fraction=0.0, image_height=64, image_width=32,
                        on_device=False, mix=[str(random_dataset)])
    dm.setup("fit")
    expert_rows = int((pq.read_table(tiny_dataset / "episodes").to_pandas()["is_last"] == False).sum())  # noqa: E712
    random_rows = int((rows["is_last"] == False).sum())  # noqa: E712
    assert len(dm.train_set) == expert_rows + random_rows
    # the step limit is not the end of the task: time-outs bootstrap (done = 0), only the 12 successes are terminal
    assert dm.train_set.dones.sum() == 12
    assert dm.frame_of.shape[0] == len(pq.read_table(tiny_dataset / "episodes")) + len(rows)  # a frame each row
    assert torch.equal(dm.train_set.next_obs, dm.train_set.obs + 1)  # o' of each dataset's rows, offsets included
    filtered = DemoDataModule(str(tiny_dataset), batch_size=4, val_fraction=0.0, image_height=64, image_width=32,
                              on_device=False, mix=[str(random_dataset)], success_only=True)
    filtered.setup("fit")
    assert len(filtered.train_set) == expert_rows  # the random agent's failed episodes are left out
    alone = DemoDataModule(str(random_dataset), batch_size=4, val_fraction=0.0, image_height=64, image_width=32,
                           on_device=False, success_only=True)
    with pytest.raises(VluiError, match="no training samples with data.success_only=true"):
        alone.setup("fit")


def test_each_sample_knows_the_action_taken_before_it_in_its_episode(tiny_dataset) -> None:
    import pyarrow.parquet as pq

    dm = DemoDataModule(str(tiny_dataset), batch_size=4, val_fraction=0.0, image_height=64, image_width=32,
                        on_device=False, history=1)
    dm.setup("fit")
    table = pq.read_table(tiny_dataset / "episodes").to_pandas()
    assert table["acted"].isna().all()  # demonstrations: the action column is what was done
    samples = dm.train_set
    steps = torch.tensor(table["step"].to_numpy())[samples.obs]
    first = steps == 0
    assert first.any() and (~first).any()
    assert not samples.past_valid[first].any() and samples.past_actions[first].isnan().all()  # the first has none
    # later steps: the action of the row before, in the same episode
    assert samples.past_valid[~first].all() and torch.equal(samples.past[~first, 0], samples.obs[~first] - 1)
    assert torch.equal(samples.past_actions[~first, 0], dm.train_set.actions[torch.searchsorted(
        samples.obs, samples.obs[~first] - 1)])
    batch = dm.batch(samples, torch.arange(4))
    assert torch.equal(batch["past_actions"].nan_to_num(9), samples.past_actions[:4].nan_to_num(9))
    # o' was reached by the action at o
    assert torch.equal(batch["next_past_actions"][:, 0], samples.actions[:4]) and batch["next_past_valid"].all()
    assert torch.equal(batch["next_past_frame"][:, 0], samples.obs[:4])


def test_past_windows_stay_inside_their_episode_whatever_the_rows_order() -> None:
    # episode 7: steps 0-2, episode 3: steps 0-3 (its last row first), rows shuffled
    episode = np.array([7, 7, 7, 3, 3, 3, 3])
    step = np.array([0, 1, 2, 0, 1, 2, 3])
    order = np.array([6, 0, 3, 5, 1, 2, 4])
    episode, step = episode[order], step[order]
    rows = np.arange(len(order))
    past, valid = past_windows(episode, step, rows, 3)
    for r in rows:
        for j in range(3):
            if step[r] >= j + 1:
                assert valid[r, j] and episode[past[r, j]] == episode[r] and step[past[r, j]] == step[r] - j - 1
            else:
                assert not valid[r, j] and past[r, j] == r  # a missing step points at the row itself
    assert past_windows(episode, step, rows, 0)[0].shape == (7, 0)


def test_each_sample_has_its_episodes_last_k_steps_and_no_other_episodes(tiny_dataset, random_dataset) -> None:
    import pyarrow.parquet as pq

    dm = DemoDataModule(str(tiny_dataset), batch_size=4, val_fraction=0.25, image_height=64, image_width=32,
                        on_device=False, mix=[str(random_dataset)], history=4)
    dm.setup("fit")
    tables = [pq.read_table(p / "episodes").to_pandas() for p in (tiny_dataset, random_dataset)]
    part = np.concatenate([np.full(len(t), i) for i, t in enumerate(tables)])  # which dataset each frame is of
    episode = np.concatenate([t["episode_id"].to_numpy() for t in tables])
    step = np.concatenate([t["step"].to_numpy() for t in tables])
    action = np.concatenate([np.stack([a if a is not None else [np.nan] * 4 for a in t["action"]]) for t in tables])
    for samples in (dm.train_set, dm.val_set):
        obs, past, valid = samples.obs.numpy(), samples.past.numpy(), samples.past_valid.numpy()
        ages = np.arange(1, 5)
        assert np.array_equal(valid, step[obs][:, None] >= ages)  # as many as came before, up to 4
        kept = np.nonzero(valid)
        o = obs[kept[0]]
        assert np.array_equal(part[past[kept]], part[o]) and np.array_equal(episode[past[kept]], episode[o])
        assert np.array_equal(step[past[kept]], step[o] - ages[kept[1]])
        assert np.allclose(samples.past_actions.numpy()[kept], action[past[kept]])
        assert np.isnan(samples.past_actions.numpy()[~valid]).all()
    steps = step[dm.train_set.obs.numpy()]
    assert (steps >= 4).any() and (steps < 4).any()  # long episodes (the random agent's) and their starts
    # the frames the windows point at are the earlier screens' own: no screen is stored twice
    assert dm.frame_of.shape[0] == sum(len(t) for t in tables) > dm.frames.shape[0]
    batch = dm.batch(dm.train_set, torch.arange(6))
    assert batch["past_frame"].shape == (6, 4) and batch["past_actions"].shape == (6, 4, 4)
    assert torch.equal(batch["next_past_frame"][:, 1:], batch["past_frame"][:, :3])
    assert torch.equal(batch["next_past_valid"][:, 1:], batch["past_valid"][:, :3])
    with pytest.raises(VluiError, match="history is a number of past steps"):
        DemoDataModule(str(tiny_dataset), history=-1)


def test_grounding_examples_are_pairs_of_the_training_screens_ui_trees(tiny_xml_dataset) -> None:
    def data() -> DemoDataModule:
        dm = DemoDataModule(str(tiny_xml_dataset), batch_size=4, val_fraction=0.25, image_height=64, image_width=32,
                            on_device=False, grounding=grounding_pairs, grounding_per_screen=2)
        dm.setup("fit")
        return dm

    dm = data()
    g, trees = dm.grounding_set, read_dataset(tiny_xml_dataset)[1].column("xml").to_pylist()
    train_frames = set(dm.train_set.obs.tolist()) | set(dm.train_set.next_obs.tolist())
    assert set(g.frame.tolist()) <= train_frames  # the validation episodes' screens stay out
    per_screen = Counter(g.frame.tolist())
    assert max(per_screen.values()) == 2 and len(per_screen) > 5
    for frame, label, action in zip(g.frame.tolist(), g.label.tolist(), g.actions.numpy(), strict=True):
        pairs = [(text, a) for text, a in grounding_pairs(trees[frame]) if text == dm.labels[label]]
        assert len(pairs) == 1 and np.array_equal(pairs[0][1], action)
    assert dm.labels == sorted({dm.labels[i] for i in g.label.tolist()})  # each label once, each one used
    same = data().grounding_set  # drawn with the seed
    assert torch.equal(same.frame, g.frame) and torch.equal(same.label, g.label)
    # every training batch carries a batch of examples: the screen, its label, the tap, and no action before it
    batch = next(iter(dm.train_dataloader()))
    assert batch["actions"].shape == (4, 4) and batch["images"].shape == (4, 64, 32, 3)
    grounding = batch["grounding"]
    assert grounding["images"].shape == (4, 64, 32, 3) and grounding["actions"].shape == (4, 4)
    assert torch.equal(grounding["images"], dm.frames[grounding["frame"]]) and grounding["past_valid"].shape == (4, 0)


def test_grounding_on_a_dataset_without_ui_trees_is_a_one_line_error(tiny_dataset) -> None:
    dm = DemoDataModule(str(tiny_dataset), image_height=64, image_width=32, on_device=False,
                        grounding=grounding_pairs)
    with pytest.raises(VluiError, match=r"tiny was collected without them \(save_xml=false\): collect it again "
                                        r"with save_xml=true") as err:
        dm.setup("fit")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("recorded", [None, 1])
def test_screens_of_an_older_observation_are_a_one_line_error(tiny_dataset_copy, recorded) -> None:
    """A dataset whose screens the simulated phone drew before observation version 2 (no version recorded, or 1)
    would train a policy on other pixels than it is evaluated on."""
    meta = tiny_dataset_copy / "meta" / "info.json"
    info = json.loads(meta.read_text())
    assert info["recipe"]["env"]["observation_version"] == 2  # what collect.py records now
    if recorded is None:
        del info["recipe"]["env"]["observation_version"]
    else:
        info["recipe"]["env"]["observation_version"] = recorded
    meta.write_text(json.dumps(info))
    dm = DemoDataModule(str(tiny_dataset_copy), image_height=64, image_width=32, on_device=False,
                        observation_version=2)
    with pytest.raises(VluiError, match=r"tiny holds screens of observation version 1: .* collect it again") as err:
        dm.setup("fit")
    assert "\n" not in str(err.value)
