"""Generated device configurations: reproducible from their ids, valid, never a test snapshot, drawn from three
disjoint pools (training phones never take a value the test snapshots hold out or a validation value; validation
phones never a test-only one), and split by a holdout that keeps whole axes out of training."""

from __future__ import annotations

import dataclasses
import logging
import re
import shutil
from collections import Counter

import pytest

from vlui.android import distances, generate
from vlui.android.i18n import locales
from vlui.android.profiles import device_profiles, smallest_width_dp
from vlui.android.screens import AXES
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
from vlui.config import TrainJobConfig, job_settings
from vlui.env.settings import env_settings
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
    assert {s.device for s in snaps} == {"custom"}  # every one a screen of its own, drawn
    assert len({s.size for s in snaps}) > 550 and {s.profile["kind"] for s in snaps} == {"phone", "tablet"}
    assert 0.03 < sum(s.size[0] > s.size[1] for s in snaps) / 600 < 0.15  # landscape-natural tablets
    assert {s.font_scale for s in snaps} == {float(f) for f in spec["font_scale"]}
    assert {s.locale for s in snaps} == set(locales()) - pools.test_only["locale"] - pools.validation["locale"]
    assert {s.clock_dial for s in snaps} == {"circle", "rectangle"}
    assert 0.2 < sum(s.dark_theme for s in snaps) / 600 < 0.4
    assert sum(s.wallpaper.startswith("procedural-") for s in snaps) > 400
    assert len({s.time[11:13] for s in snaps}) == 24  # every hour of the day
    factors = {round(float(f), 2) for f in spec["density"]}
    for s in snaps:  # within the ranges real devices span, and every density a display-size step of the panel's
        g = generate.geometry(s)
        short, long = sorted((g.width_dp, g.height_dp))
        assert 239 < short and long / short <= 2.45 and 120 <= s.dpi <= 640, s.id
        assert s.profile["kind"] == "tablet" or long >= 529, s.id
        assert min(abs(s.dpi / s.profile["dpi"] - f) for f in factors) < 0.02, s.id
        assert 5 <= s.state["battery_level"] <= 100 and len(s.state["notifications"]) <= 4


def test_five_thousand_drawn_phones_have_a_thousand_screen_sizes_and_none_in_a_held_out_region(tmp_path,
                                                                                               capsys) -> None:
    assert sim_main(["snapshots", "generate", "5000", "--seed", "3", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    sizes = int(out.split("): ")[1].split(" screen sizes")[0])
    assert sizes >= 1000 and out.rstrip().endswith("0 in a test snapshot's held-out region"), out
    pools = generator_pools()
    for ref in snapshot_refs("random:5000", seed=3):
        g = generate.geometry(load_snapshot(ref))
        assert pools.region(g, "test_only") is None and pools.region(g, "validation") is None, ref


def test_a_generated_configuration_never_equals_a_test_snapshot(monkeypatch) -> None:
    avoid, pools = configs_of_test_snapshots(), generator_pools()
    assert len(avoid) == 10 and generate.config_key(load_snapshot("105")) in avoid
    first = generate.generated_fields(0, 0, pools)
    redrawn = generate.generated_fields(0, 0, pools, avoid | {generate.config_key(first)})
    assert generate.config_key(redrawn) != generate.config_key(first)  # that draw was taken, so it drew again
    # a distribution that can only draw one configuration, which is taken: a clear error, not a test snapshot
    screen = {"kinds": {"phone": {"weight": 1, "layout": "phone", "width_dp": [360, 360], "aspect": [2.0, 2.0],
                                  "dpi": [440, 440], "max_pixels": 3200}}}
    one = {**generate.distribution(), "screen": screen, "density": {1.0: 1}, "font_scale": {1.0: 1},
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


def test_heldout_on_one_axis_adds_phones_of_that_axis_alone_beside_another_axis() -> None:
    """More landscape tablets in training beside the right-to-left phones of one locale: two held-out axes, each drawn
    on its own (heldout:N:AXIS), while random:N stays clear of both."""
    holdout = {"locale": ["ar-AE"], "orientation": ["landscape"]}
    refs = snapshot_refs(["random:200", "heldout:40:locale", "heldout:30:orientation"], seed=0, holdout=holdout)
    snaps = [load_snapshot(r) for r in refs]
    landscape = [s for s in snaps if s.profile["width"] > s.profile["height"]]
    arabic = [s for s in snaps if s.locale == "ar-AE"]
    assert len(landscape) >= 30 and len(arabic) >= 40
    assert all(s.profile["kind"] == "tablet" for s in landscape)  # the generator's landscape-natural screens
    assert not any(s.locale == "ar-AE" or s in landscape for s in snaps[:200])
    # a phone both held-out draws take (an ar-AE landscape tablet) is listed once: the list is their union, in order
    by_locale = snapshot_refs("heldout:40:locale", seed=0, holdout=holdout)
    by_orientation = snapshot_refs("heldout:30:orientation", seed=0, holdout=holdout)
    assert set(by_locale) & set(by_orientation)
    assert refs == refs[:200] + by_locale + [r for r in by_orientation if r not in by_locale]


@pytest.mark.parametrize(("spec", "holdout", "message"), [
    ("random:10", {"language": ["ja-JP"]}, "env.generator.holdout: unknown axis 'language'; axes: device, locale"),
    ("random:10", {"locale": ["xx-XX"]}, "env.generator.holdout.locale: unknown value 'xx-XX'; choose from:"),
    ("random:10", {"device": ["phablet"]}, "env.generator.holdout.device: unknown value 'phablet'"),
    ("heldout:10", {}, "heldout:N needs a holdout: env.generator.holdout="),
    ("random:5", {"device": ["phone", "tablet"]}, "random:5: only 0 of 1000 generated configurations fall outside"),
    ("random:x", {}, "'random:x': write random:N, heldout:N, val:N or leaky:N with a whole number N"),
    ("val:-1", {}, "'val:-1': write random:N, heldout:N, val:N or leaky:N with a whole number N"),
    ("random:0", {}, "random:0: ask for at least one configuration"),
    ("heldout:5:locale", {"device": ["tablet"]}, "heldout:5:locale: the holdout has no 'locale' axis; hold it out too"),
    ("heldout:5:language", {"locale": ["ja-JP"]}, "heldout:5:language: unknown axis 'language'; axes: device"),
    ("random:5:locale", {"locale": ["ja-JP"]}, "random:5:locale: only heldout:N takes an axis"),
    ("random:5", {"orientation": ["sideways"]}, "env.generator.holdout.orientation: unknown value 'sideways'"),
])
def test_bad_generator_settings_are_one_line(spec: str, holdout: dict, message: str) -> None:
    with pytest.raises(VluiError) as info:
        snapshot_refs(spec, holdout=holdout)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_the_settings_come_from_the_command_line_and_reach_trains_own_collection(monkeypatch, tmp_path) -> None:
    holdout = "env.generator.holdout={locale: [ja-JP, ar-AE], device: [tablet]}"
    cfg = compose("train", ["env.snapshots=random:7", "env.generator.seed=4", holdout, "data.name=gen7",
                            "data.collect_if_missing=true", "env.num_envs=8"], output_dir=tmp_path)
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
    train._collect(job_settings(cfg, TrainJobConfig), tmp_path / "gen7")
    overrides = [a for a in launched[0] if "=" in a and not a.startswith(("hydra.", "paths."))]
    collect_cfg = compose("collect", overrides, output_dir=tmp_path / "c")
    assert resolve_snapshots(env_settings(collect_cfg.env)) == refs
    assert collect_cfg.env.num_envs == 8  # as many environments side by side (collect.py caps its processes)
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
    assert pools.test_only["script"] == {"cjk-kr", "urdu"} and pools.test_only["density"] == {1.67}
    # a region around every test screen no training snapshot has: the Pixel 5 at 550 dpi only as far as the Pixel 4
    # at 550 dpi (a training snapshot) allows, 108 and 109 a full radius
    regions = {r.name: (r.screen, round(r.radius, 2)) for r in pools.test_regions}
    assert regions == {"107": ((1080, 2340, 550, "phone"), 0.45), "108": ((1080, 2400, 700, "phone"), 1.0),
                       "109": ((1280, 800, 160, "tablet"), 1.0)}
    for axis, values in pools.validation.items():  # the validation pool shares nothing with test or training
        assert not values & pools.test_only[axis], axis
    assert not any(v.overlaps(t) for v in pools.validation_regions for t in pools.test_regions)
    assert pools.rates == {"screen": 0.3, "density": 0.1, "locale": 0.3, "wallpaper": 0.8}
    assert pools.tablets == 0.0 and set(pools.font_scales) == {1.0}


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
        g = generate.geometry(s)
        assert pools.region(g, "test_only") is None and pools.region(g, "validation") is None, s.id


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
        assert pools.region(generate.geometry(s), "test_only") is None, s.id
    share = {axis: sum(bool(_values(s)[axis] & pools.validation[axis]) for s in snaps) / len(snaps)
             for axis in ("locale", "wallpaper", "density")}
    share["screen"] = sum(pools.region(generate.geometry(s), "validation") is not None for s in snaps) / len(snaps)
    for axis in ("screen", "locale", "wallpaper", "density"):
        assert abs(share[axis] - pools.rates[axis]) < 0.06, (axis, share[axis])
    # the test snapshots' mix: a tenth tablets (109, in its region), font scale 1.0, every validation screen drawn
    assert abs(sum(s.profile["kind"] == "tablet" for s in snaps) / len(snaps) - 0.1) < 0.04
    assert {s.font_scale for s in snaps} == {1.0} and {s.locale for s in snaps} >= {"th-TH", "fa-IR"}
    centres = {r.screen[:2] for r in pools.validation_regions}
    assert centres <= {s.size for s in snaps}
    assert not {s.id for s in snaps} & set(snapshot_refs("random:600", seed=0))


def test_validation_is_at_least_as_far_from_training_as_the_test_snapshots_are() -> None:
    table = distances.rows("random:2000")
    summary = distances.summary(table)
    test, val = summary["test, held-out screens"], summary["val, held-out screens"]
    assert test["phones"] == 3 and val["phones"] >= 10
    for key in ("mean distance", "least distance", *(f"least along {a}" for a in AXES)):
        assert val[key] >= test[key], key
    assert summary["val, all"]["mean distance"] >= summary["test, all"]["mean distance"]
    for axis in distances.VALUE_AXES:  # and as often held out on the other axes, to sampling's noise on 50 phones
        assert summary["val, all"][f"share {axis}"] >= summary["test, all"][f"share {axis}"] - 0.05, axis
    assert "| 108 | test | 247x549 dp at 700 dpi | 108 |" in distances.markdown(table)


def test_leaky_phones_take_the_test_only_values_loudly_and_never_validation_ones(caplog) -> None:
    pools = generator_pools()
    with caplog.at_level(logging.WARNING):
        refs = snapshot_refs("leaky:400", seed=0)
    assert "may take the values the test snapshots hold out" in caplog.text
    snaps = [load_snapshot(r) for r in refs]
    assert all(r.startswith("leaky-0-") for r in refs) and all(s.split == "leaky" for s in snaps)
    leaked = [s for s in snaps if any(_values(s)[a] & pools.test_only[a] for a in generate.POOL_AXES)
              or pools.region(generate.geometry(s), "test_only")]
    assert 0.3 < len(leaked) / len(snaps) < 0.9
    assert any(pools.region(generate.geometry(s), "test_only") for s in snaps)
    assert not any(_values(s)[a] & pools.validation.get(a, frozenset()) for s in snaps for a in generate.POOL_AXES)
    assert not any(pools.region(generate.geometry(s), "validation") for s in snaps)


def test_the_test_only_values_follow_the_snapshot_files(tmp_path) -> None:
    # a set of snapshot files whose test phone 108 is a Pixel C: its screen becomes the held-out one there
    envs = tmp_path / "envs"
    shutil.copytree(ENVS_DIR, envs)
    text = (envs / "108.yaml").read_text(encoding="utf-8")
    (envs / "108.yaml").write_text(text.replace("device: Pixel 6", "device: Pixel C").replace("dpi: 700",
                                                                                              "dpi: 320"))
    pools = generator_pools(str(envs))
    assert "Pixel C" in pools.test_only["device"] and "Pixel 6" not in pools.test_only["device"]
    assert {r.screen for r in pools.test_regions} >= {(2560, 1800, 320, "tablet")}
    assert (1080, 2400, 700, "phone") not in {r.screen for r in pools.test_regions}
    tablet = next(r for r in pools.test_regions if r.name == "108")
    refs = snapshot_refs("random:3000", seed=3, envs_dir=envs)
    assert not any(tablet.contains(generate.geometry(load_snapshot(r, envs))) for r in refs)
    assert any(tablet.contains(generate.geometry(load_snapshot(r))) for r in snapshot_refs("random:3000", seed=3))


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


@pytest.mark.parametrize(("screen", "message"), [
    ({"width": 1080, "height": 2160, "dpi": 440},  # the Pixel 3 at 440 dpi, a training snapshot: 393 x 785 dp
     "validation screen 0 (393x785 dp at 440 dpi) is within reach of a training snapshot's screen"),
    ({"width": 1080, "height": 2400, "dpi": 640},
     "validation screen 0 (270x600 dp at 640 dpi) comes within reach of test snapshot 108's region"),
])
def test_a_validation_screen_near_a_test_region_or_a_training_snapshot_is_refused(monkeypatch, screen,
                                                                                  message) -> None:
    spec = generate.distribution()
    bad = {**spec, "validation": {**spec["validation"], "screens": [screen]}}
    monkeypatch.setattr(generate, "distribution", lambda: bad)
    generator_pools.cache_clear()
    try:
        with pytest.raises(VluiError, match=re.escape(message)):
            generator_pools()
    finally:
        generator_pools.cache_clear()


def test_the_phones_no_training_may_read_are_the_validation_phones_and_the_test_snapshots() -> None:
    refs = ["000", "105", *snapshot_refs("val:2"), *snapshot_refs("random:3"), *snapshot_refs("leaky:2"), "105"]
    assert held_out(refs) == ["105", "val-0-0", "val-0-1"]  # each once, in order; training and leaky phones pass
    assert held_out(snapshot_refs("test")) == snapshot_ids("test") and held_out(snapshot_refs("train")) == []
