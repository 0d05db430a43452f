"""Generated device configurations: reproducible from their ids, valid, never a test snapshot, drawn from three
disjoint pools (training phones never take a value the test snapshots hold out or a validation value; validation
phones never a test-only one), and split by a holdout that keeps whole axes out of training."""

from __future__ import annotations

import dataclasses
import logging
import shutil
from collections import Counter

import pytest

from vlui.android import generate
from vlui.android.i18n import locales
from vlui.android.profiles import device_profiles, smallest_width_dp
from vlui.android.snapshot import (
    ENVS_DIR,
    configs_of_test_snapshots,
    generator_pools,
    held_out,
    load_snapshot,
    read_snapshot,
    snapshot_ids,
    snapshot_refs,
)
from vlui.backends import resolve_snapshots
from vlui.cli import compose
from vlui.config import env_settings
from vlui.errors import VluiError
from vlui.jobs import train
from vlui.sim.__main__ import main as sim_main


def test_an_id_is_the_same_configuration_every_time_and_seeds_differ() -> None:
    pools = generator_pools()
    a = generate.generated_fields(3, 17, pools)
    assert a == generate.generated_fields(3, 17, pools) and a["id"] == "gen-3-17"
    assert generate.config_key(a) != generate.config_key(generate.generated_fields(4, 17, pools))
    assert generate.config_key(a) != generate.config_key(generate.generated_fields(3, 17, pools, prefix="val"))
    snap = load_snapshot("gen-3-17")
    assert snap.split == "generated" and snap.device == a["device"] and snap.state == a["state"]


def test_generated_configurations_are_valid_and_cover_every_axis() -> None:
    snaps = [load_snapshot(ref) for ref in snapshot_refs("random:600", seed=1)]
    assert len({s.id for s in snaps}) == 600
    spec, pools = generate.distribution(), generator_pools()
    held = pools.test_only["device"] | pools.validation["device"]
    panels = pools.test_only["panel"] | pools.validation["panel"]
    trained = {d for d in spec["device"] if d not in held
               and (device_profiles()[d]["width"], device_profiles()[d]["height"]) not in panels}
    assert {s.device for s in snaps} == trained and len(trained) >= 6
    assert {s.font_scale for s in snaps} == {float(f) for f in spec["font_scale"]}
    assert {s.locale for s in snaps} == set(locales()) - pools.test_only["locale"] - pools.validation["locale"]
    assert {s.clock_dial for s in snaps} == {"circle", "rectangle"}
    assert 0.2 < sum(s.dark_theme for s in snaps) / 600 < 0.4
    assert sum(s.wallpaper.startswith("procedural-") for s in snaps) > 400
    assert len({s.time[11:13] for s in snaps}) == 24  # every hour of the day
    for s in snaps:  # no screen narrower than the generator allows, and every density near the device's own
        assert smallest_width_dp(s.profile, s.dpi) >= spec["min_width_dp"]
        assert 0.7 <= s.dpi / s.profile["dpi"] <= 1.26
        assert 5 <= s.state["battery_level"] <= 100 and len(s.state["notifications"]) <= 4


def test_a_generated_configuration_never_equals_a_test_snapshot(monkeypatch) -> None:
    avoid, pools = configs_of_test_snapshots(), generator_pools()
    assert len(avoid) == 10 and generate.config_key(load_snapshot("105")) in avoid
    first = generate.generated_fields(0, 0, pools)
    redrawn = generate.generated_fields(0, 0, pools, avoid | {generate.config_key(first)})
    assert generate.config_key(redrawn) != generate.config_key(first)  # that draw was taken, so it drew again
    # a distribution that can only draw one configuration, which is taken: a clear error, not a test snapshot
    one = {**generate.distribution(), "device": {"Pixel 3": 1}, "density": {1.0: 1}, "font_scale": {1.0: 1},
           "locale": ["en-US"], "wallpaper": {"bmoca": 1}, "dark_theme": 0.0, "home_layout": {"default": 1},
           "clock_dial": {"circle": 1}}
    monkeypatch.setattr(generate, "distribution", lambda: one)
    monkeypatch.setattr(generate, "WALLPAPERS", ("003",))
    only = generate.config_key(generate.generated_fields(0, 0, pools))
    with pytest.raises(VluiError, match="every draw equals a test snapshot"):
        generate.generated_fields(0, 0, pools, {only})


def test_a_holdout_keeps_whole_axes_out_of_random_and_heldout_draws_only_from_it() -> None:
    holdout = {"locale": ["ja-JP", "ar-AE"], "device": ["tablet"]}
    train = [load_snapshot(r) for r in snapshot_refs("random:300", seed=0, holdout=holdout)]
    held = [load_snapshot(r) for r in snapshot_refs("heldout:60", seed=0, holdout=holdout)]
    assert not any(s.locale in ("ja-JP", "ar-AE") or s.profile["kind"] == "tablet" for s in train)
    assert all(s.locale in ("ja-JP", "ar-AE") or s.profile["kind"] == "tablet" for s in held)
    assert not {s.id for s in train} & {s.id for s in held}
    # one axis at a time, as the paper studies them: only the scripts of the held-out locales
    cjk = [load_snapshot(r) for r in snapshot_refs("heldout:20", holdout={"script": ["cjk-jp", "cjk-sc"]})]
    assert {s.locale for s in cjk} == {"ja-JP", "zh-hans-CN"}
    dense = [load_snapshot(r) for r in snapshot_refs("heldout:10", holdout={"font_scale": [1.3, 1.5, 2.0]})]
    assert Counter(s.font_scale >= 1.3 for s in dense) == {True: 10}


@pytest.mark.parametrize(("spec", "holdout", "message"), [
    ("random:10", {"language": ["ja-JP"]}, "env.generator.holdout: unknown axis 'language'; axes: device, locale"),
    ("random:10", {"locale": ["xx-XX"]}, "env.generator.holdout.locale: unknown value 'xx-XX'; choose from:"),
    ("random:10", {"device": ["phablet"]}, "env.generator.holdout.device: unknown value 'phablet'"),
    ("heldout:10", {}, "heldout:N needs a holdout: env.generator.holdout="),
    ("random:5", {"device": ["phone", "tablet"]}, "random:5: only 0 of 1000 generated configurations fall outside"),
    ("random:x", {}, "'random:x': write random:N, heldout:N, val:N or leaky:N with a whole number N"),
    ("val:-1", {}, "'val:-1': write random:N, heldout:N, val:N or leaky:N with a whole number N"),
    ("random:0", {}, "random:0: ask for at least one configuration"),
])
def test_bad_generator_settings_are_one_line(spec: str, holdout: dict, message: str) -> None:
    with pytest.raises(VluiError) as info:
        snapshot_refs(spec, holdout=holdout)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_the_settings_come_from_the_command_line_and_reach_trains_own_collection(monkeypatch, tmp_path) -> None:
    holdout = "env.generator.holdout={locale: [ja-JP, ar-AE], device: [tablet]}"
    cfg = compose("train", ["env.snapshots=random:7", "env.generator.seed=4", holdout, "data.name=gen7",
                            "data.collect_if_missing=true"], output_dir=tmp_path)
    env = env_settings(cfg.env)
    refs = resolve_snapshots(env)
    assert len(refs) == 7 and all(r.startswith("gen-4-") for r in refs)
    launched = []

    class Child:  # train's collection runs as a child process: what it is told is what matters
        def __init__(self, cmd, **kwargs):
            launched.append(cmd)

        def wait(self):
            return 0

    monkeypatch.setattr(train.subprocess, "Popen", Child)
    train._collect(cfg, tmp_path / "gen7")
    overrides = [a for a in launched[0] if "=" in a and not a.startswith(("hydra.", "paths."))]
    collect_cfg = compose("collect", overrides, output_dir=tmp_path / "c")
    assert resolve_snapshots(env_settings(collect_cfg.env)) == refs
    assert snapshot_refs("random:7", 4, {"locale": ["ja-JP", "ar-AE"], "device": ["tablet"]}) == refs
    with pytest.raises(VluiError, match="env.generator.holdout must be a mapping"):
        snapshot_refs("random:3", holdout="ja-JP")


def test_each_environment_of_a_rollout_does_not_check_every_generated_phone_again(monkeypatch) -> None:
    # every environment of a rollout resolves the whole list: on thousands of generated phones that was minutes per
    # online-RL iteration. A generated phone cannot change, so it is checked once; a file is checked every time.
    from dataclasses import replace

    from vlui import backends

    env = replace(env_settings({}), snapshots="random:300")
    env.generator.seed = 11
    refs = resolve_snapshots(env)
    loads: list[str] = []
    real = backends.load_snapshot
    monkeypatch.setattr(backends, "load_snapshot", lambda ref, *a: loads.append(ref) or real(ref, *a))
    assert resolve_snapshots(replace(env, snapshots=[*refs, "000"])) == [*refs, "000"]
    assert loads == ["000"]
    with pytest.raises(VluiError, match="unknown snapshot 'gen-11-x'"):
        resolve_snapshots(replace(env, snapshots=[*refs, "gen-11-x"]))


def test_splits_ids_and_generated_samples_mix_in_one_list() -> None:
    refs = snapshot_refs(["test", "random:3", "000"], seed=5)
    assert refs[:10] == [f"{i}" for i in range(100, 110)] and refs[10:13] == ["gen-5-0", "gen-5-1", "gen-5-2"]
    assert refs[13] == "000"


def test_the_command_line_writes_what_random_n_draws(tmp_path, capsys) -> None:
    assert sim_main(["snapshots", "generate", "4", "--seed", "9", "--out", str(tmp_path),
                     "--holdout", "locale=ja-JP,ar-AE", "--holdout", "device=tablet"]) == 0
    refs = snapshot_refs("random:4", seed=9, holdout={"locale": ["ja-JP", "ar-AE"], "device": ["tablet"]})
    assert sorted(p.stem for p in tmp_path.glob("*.yaml")) == sorted(refs)
    for ref in refs:
        written = read_snapshot(tmp_path / f"{ref}.yaml")
        assert dataclasses.replace(written, source="") == dataclasses.replace(load_snapshot(ref), source="")
    assert f"generator version {generate.version()}, seed 9" in capsys.readouterr().out
    assert sim_main(["snapshots", "generate", "2", "--out", str(tmp_path), "--holdout", "lang=ja"]) == 2


def test_every_profile_is_a_real_screen() -> None:
    profiles = device_profiles()
    assert {"Galaxy Nexus", "Pixel 7", "Pixel 8", "7.6in Foldable", "Nexus 7", "Pixel C"} <= set(profiles)
    assert (profiles["Galaxy Nexus"]["width"], profiles["Galaxy Nexus"]["height"]) == (720, 1280)
    for name, p in profiles.items():
        sw = smallest_width_dp(p, p["dpi"])
        assert (p["kind"] == "tablet") == (sw >= 600), name  # Android's sw600dp: the tablet layouts


# ---------------------------------------------------------------------------------------------------- the three pools
def _values(snap) -> dict[str, set]:
    return generate.pool_values(snap)


def test_the_test_only_values_are_what_the_test_snapshots_use_and_no_training_snapshot_does() -> None:
    pools = generator_pools()
    assert pools.test_only["device"] == {"Pixel 6", "WXGA Tablet"}
    assert pools.test_only["locale"] == {"ko-KR", "ur-PK", "ar-EG"}
    assert pools.test_only["wallpaper"] == {"005", "009", "011", "012"}
    assert pools.test_only["screen"] == {(1080, 2340, 550), (1080, 2400, 700), (1280, 800, 160)}  # Pixel 5 @ 550 too
    assert pools.test_only["script"] == {"cjk-kr", "urdu"} and pools.test_only["density"] == {1.67}
    for axis, values in pools.validation.items():  # the validation pool shares nothing with test or training
        assert not values & pools.test_only[axis], axis
    assert pools.rates == {"device": 0.2, "density": 0.3, "locale": 0.3, "wallpaper": 0.8}


@pytest.mark.slow  # 6-10 s: ten thousand phones drawn
def test_ten_thousand_training_phones_never_take_a_test_only_or_a_validation_value() -> None:
    pools = generator_pools()
    snaps = [load_snapshot(r) for r in snapshot_refs("random:10000", seed=7)]
    assert len({s.id for s in snaps}) == 10_000
    for s in snaps:
        values = _values(s)
        for axis in generate.POOL_AXES:
            assert not values[axis] & pools.test_only[axis], (s.id, axis, values[axis])
            assert not values[axis] & pools.validation.get(axis, frozenset()), (s.id, axis, values[axis])
    # Pixel 7 and 8 share the Pixel 6's panel: they are the test phone's screen under another name
    assert not {s.device for s in snaps} & {"Pixel 6", "Pixel 7", "Pixel 8", "WXGA Tablet", "Pixel 4 XL", "Nexus 7"}


def test_validation_phones_take_validation_values_as_often_as_test_snapshots_take_test_only_ones() -> None:
    pools = generator_pools()
    snaps = [load_snapshot(r) for r in snapshot_refs("val:600", seed=0)]
    assert snapshot_refs("val") == [f"val-0-{i}" for i in range(generate.VAL_PHONES)]
    assert snapshot_refs("val", seed=5) == snapshot_refs("val")  # the validation split is one set of phones
    assert snapshot_refs("val:600", seed=0)[:generate.VAL_PHONES] == snapshot_refs("val")
    assert all(s.split == "val" for s in snaps)
    for s in snaps:
        values = _values(s)
        assert not any(values[axis] & pools.test_only[axis] for axis in generate.POOL_AXES), s.id
    share = {axis: sum(bool(_values(s)[axis] & pools.validation[axis]) for s in snaps) / len(snaps)
             for axis in ("device", "locale", "wallpaper", "density")}
    for axis in ("device", "locale", "wallpaper"):
        assert abs(share[axis] - pools.rates[axis]) < 0.06, (axis, share[axis])
    assert 0.15 < share["density"] <= pools.rates["density"] + 0.06  # a dense factor is not drawn where too narrow
    assert {s.device for s in snaps} >= {"Pixel 4 XL", "Nexus 7"} and {s.locale for s in snaps} >= {"th-TH", "fa-IR"}
    assert not {s.id for s in snaps} & set(snapshot_refs("random:600", seed=0))


def test_leaky_phones_take_the_test_only_values_loudly_and_never_validation_ones(caplog) -> None:
    pools = generator_pools()
    with caplog.at_level(logging.WARNING):
        refs = snapshot_refs("leaky:400", seed=0)
    assert "may take the values the test snapshots hold out" in caplog.text
    snaps = [load_snapshot(r) for r in refs]
    assert all(r.startswith("leaky-0-") for r in refs) and all(s.split == "leaky" for s in snaps)
    leaked = [s for s in snaps if any(_values(s)[a] & pools.test_only[a] for a in generate.POOL_AXES)]
    assert 0.3 < len(leaked) / len(snaps) < 0.8
    assert not any(_values(s)[a] & pools.validation.get(a, frozenset()) for s in snaps for a in generate.POOL_AXES)


def test_the_test_only_values_follow_the_snapshot_files(tmp_path) -> None:
    # a set of snapshot files whose test phone 108 is a Galaxy Nexus: that device becomes test-only there
    envs = tmp_path / "envs"
    shutil.copytree(ENVS_DIR, envs)
    text = (envs / "108.yaml").read_text(encoding="utf-8")
    (envs / "108.yaml").write_text(text.replace("device: Pixel 6", "device: Galaxy Nexus").replace("dpi: 700",
                                                                                                   "dpi: 320"))
    pools = generator_pools(str(envs))
    assert "Galaxy Nexus" in pools.test_only["device"] and "Pixel 6" not in pools.test_only["device"]
    refs = snapshot_refs("random:300", seed=3, envs_dir=envs)
    assert "Galaxy Nexus" not in {load_snapshot(r, envs).device for r in refs}
    assert "Galaxy Nexus" in {load_snapshot(r).device for r in snapshot_refs("random:300", seed=3)}


def test_a_validation_value_that_training_uses_or_test_holds_out_is_refused(monkeypatch) -> None:
    spec = generate.distribution()
    for locale, why in (("en-US", "a training snapshot uses it"), ("ko-KR", "the test snapshots hold it out")):
        bad = {**spec, "validation": {**spec["validation"], "locale": [locale]}}
        monkeypatch.setattr(generate, "distribution", lambda bad=bad: bad)
        generator_pools.cache_clear()
        try:
            with pytest.raises(VluiError, match=f"validation locale '{locale}' cannot be a validation value: {why}"):
                generator_pools()
        finally:
            generator_pools.cache_clear()


def test_the_phones_no_training_may_read_are_the_validation_phones_and_the_test_snapshots() -> None:
    refs = ["000", "105", *snapshot_refs("val:2"), *snapshot_refs("random:3"), *snapshot_refs("leaky:2"), "105"]
    assert held_out(refs) == ["105", "val-0-0", "val-0-1"]  # each once, in order; training and leaky phones pass
    assert held_out(snapshot_refs("test")) == snapshot_ids("test") and held_out(snapshot_refs("train")) == []
