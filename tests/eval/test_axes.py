"""Success by phone setting (vlui.eval.axes): what each phone is on each axis, and each group's mean and interval."""

from __future__ import annotations

import numpy as np
import pytest

from vlui.android import generate
from vlui.android.snapshot import generator_pools, load_snapshot, snapshot_refs
from vlui.cli import compose
from vlui.eval.axes import AXES, breakdown, describe, describe_all, group, table
from vlui.config import TrainJobConfig, job_settings
from vlui.jobs.train import datamodule, training_data


def test_a_phone_is_described_on_every_axis_with_its_held_out_values() -> None:
    train = describe("000")  # a B-MoCA training snapshot takes no held-out value
    assert set(train) == set(AXES) and train["held_out"] == ("none",) and train["held_out_count"] == ("0",)
    assert train["device"] == ("Pixel 3",) and train["kind"] == ("phone",) and train["density"] == ("x0.75",)  # 330 dpi on a 440-dpi Pixel 3
    tablet = describe("109")  # B-MoCA's test tablet: its screen, its device and its locale are test-only
    assert tablet["kind"] == ("tablet",) and {"screen", "device", "locale"} <= set(tablet["held_out"])
    assert tablet["script"] == ("arabic",) and tablet["screen"] == ("tablet, landscape",)
    assert tablet["direction"] == ("right to left",) and train["direction"] == ("left to right",)
    assert describe("108")["screen"] == ("phone, under 300 dp",) and describe("100")["screen"] == ("phone, 300-400 dp",)
    # a validation phone is under "screen" exactly when its screen is in a validation region (from the pools, not
    # written here)
    pools = generator_pools()
    for ref in snapshot_refs("val", 0, None):
        described = describe(ref)
        in_region = pools.region(generate.geometry(load_snapshot(ref)), "validation") is not None
        assert ("screen" in described["held_out"]) == in_region, ref
        assert described["held_out_count"] == (str(min(3, len(described["held_out"]) - ("none" in described[
            "held_out"]))) + ("+" if len(described["held_out"]) >= 3 else ""),)


def test_phones_without_settings_are_left_out() -> None:
    assert list(describe_all(["000", "emulator-5554", "100"])) == ["000", "100"]
    assert (group("kind", "109"), group("kind", "000"), group("kind", "emulator-5554")) == ("tablet", "phone",
                                                                                           "unknown")


def test_data_balance_groups_a_runs_training_samples_by_the_setting(tiny_dataset, tmp_path) -> None:
    cfg = compose("train", [f"data.path={tiny_dataset}", "data.balance=kind", "data.val_fraction=0"],
                  output_dir=tmp_path / "out")
    dm = datamodule(training_data(job_settings(cfg, TrainJobConfig)), seed=0)
    dm.setup("fit")
    assert dm.groups == {"phone": len(dm.train_set)}  # 000, 001 and 030 are all phones


def test_each_group_is_the_mean_of_its_phones_cells_with_its_interval() -> None:
    phones = ["000", "001", "109"]  # two Pixel 3 phones, one tablet
    matrix = np.array([[1.0, 0.0, 1.0],
                       [1.0, np.nan, 0.0]])  # seed 1 counted no episode on 001
    rows = {(r["axis"], r["value"]): r for r in breakdown(phones, matrix, describe_all(phones))}
    phone = rows["kind", "phone"]
    assert phone["phones"] == 2 and phone["mean"] == pytest.approx(2 / 3)  # the three observed cells
    assert 0 <= phone["ci_low"] <= phone["mean"] <= phone["ci_high"] <= 1
    tablet = rows["kind", "tablet"]
    assert tablet["phones"] == 1 and tablet["mean"] == pytest.approx(0.5)
    everywhere = breakdown(phones, np.ones((2, 3)), describe_all(phones))  # all successes: an exact interval
    assert all((r["mean"], r["ci_low"], r["ci_high"]) == (1.0, 1.0, 1.0) for r in everywhere)
    nothing = breakdown(phones, np.full((2, 3), np.nan), describe_all(phones))  # no cell observed: no rate
    assert all(r["mean"] is None for r in nothing)
    with pytest.raises(ValueError, match="over 3 phones"):
        breakdown(phones, np.ones((2, 2)), describe_all(phones))


def test_values_are_in_numeric_order_and_the_table_has_a_column_per_group() -> None:
    phones = ["000", "100", "109"]
    described = describe_all(phones)
    rows = breakdown(phones, np.array([[1.0, 0.0, 1.0]]), described)
    assert [r["value"] for r in rows if r["axis"] == "held_out_count"] == sorted(
        {described[p]["held_out_count"][0] for p in phones})
    lines = table({"a": rows, "b": breakdown(phones, np.array([[0.0, 0.0, 0.0]]), described)})
    assert lines[0] == "| setting | value | phones | a | b |"
    assert "| device kind | tablet | 1 | 100.0 [100.0, 100.0] | 0.0 [0.0, 0.0] |" in lines
