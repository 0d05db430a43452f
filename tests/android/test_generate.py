"""Generated device configurations: reproducible from their ids, valid, never a test snapshot, and split by a holdout
that keeps whole axes out of training."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from vlui.android import generate
from vlui.android.i18n import locales
from vlui.android.profiles import device_profiles, smallest_width_dp
from vlui.android.snapshot import configs_of_test_snapshots, load_snapshot, read_snapshot, snapshot_refs
from vlui.backends import resolve_snapshots
from vlui.cli import compose
from vlui.config import env_settings
from vlui.errors import VluiError
from vlui.jobs import train
from vlui.sim.__main__ import main as sim_main


def test_an_id_is_the_same_configuration_every_time_and_seeds_differ() -> None:
    a = generate.generated_fields(3, 17)
    assert a == generate.generated_fields(3, 17) and a["id"] == "gen-3-17"
    assert generate.config_key(a) != generate.config_key(generate.generated_fields(4, 17))
    snap = load_snapshot("gen-3-17")
    assert snap.split == "generated" and snap.device == a["device"] and snap.state == a["state"]


def test_generated_configurations_are_valid_and_cover_every_axis() -> None:
    snaps = [load_snapshot(ref) for ref in snapshot_refs("random:600", seed=1)]
    assert len({s.id for s in snaps}) == 600
    spec = generate.distribution()
    assert {s.device for s in snaps} == set(spec["device"])
    assert {s.font_scale for s in snaps} == {float(f) for f in spec["font_scale"]}
    assert {s.locale for s in snaps} == set(locales())
    assert {s.clock_dial for s in snaps} == {"circle", "rectangle"}
    assert 0.2 < sum(s.dark_theme for s in snaps) / 600 < 0.4
    assert sum(s.wallpaper.startswith("procedural-") for s in snaps) > 400
    assert len({s.time[11:13] for s in snaps}) == 24  # every hour of the day
    for s in snaps:  # no screen narrower than the generator allows, and every density near the device's own
        assert smallest_width_dp(s.profile, s.dpi) >= spec["min_width_dp"]
        assert 0.7 <= s.dpi / s.profile["dpi"] <= 1.55
        assert 5 <= s.state["battery_level"] <= 100 and len(s.state["notifications"]) <= 4


def test_a_generated_configuration_never_equals_a_test_snapshot(monkeypatch) -> None:
    avoid = configs_of_test_snapshots()
    assert len(avoid) == 10 and generate.config_key(load_snapshot("105")) in avoid
    first = generate.generated_fields(0, 0)
    redrawn = generate.generated_fields(0, 0, avoid | {generate.config_key(first)})
    assert generate.config_key(redrawn) != generate.config_key(first)  # that draw was taken, so it drew again
    # a distribution that can only draw one configuration, which is taken: a clear error, not a test snapshot
    one = {**generate.distribution(), "device": {"Pixel 3": 1}, "density": {1.0: 1}, "font_scale": {1.0: 1},
           "locale": ["en-US"], "wallpaper": {"bmoca": 1}, "dark_theme": 0.0, "home_layout": {"default": 1},
           "clock_dial": {"circle": 1}}
    monkeypatch.setattr(generate, "distribution", lambda: one)
    monkeypatch.setattr(generate, "WALLPAPERS", ("003",))
    only = generate.config_key(generate.generated_fields(0, 0))
    with pytest.raises(VluiError, match="every draw equals a test snapshot"):
        generate.generated_fields(0, 0, {only})


def test_a_holdout_keeps_whole_axes_out_of_random_and_heldout_draws_only_from_it() -> None:
    holdout = {"locale": ["ja-JP", "ar-AE"], "device": ["tablet"]}
    train = [load_snapshot(r) for r in snapshot_refs("random:300", seed=0, holdout=holdout)]
    held = [load_snapshot(r) for r in snapshot_refs("heldout:60", seed=0, holdout=holdout)]
    assert not any(s.locale in ("ja-JP", "ar-AE") or s.profile["kind"] == "tablet" for s in train)
    assert all(s.locale in ("ja-JP", "ar-AE") or s.profile["kind"] == "tablet" for s in held)
    assert not {s.id for s in train} & {s.id for s in held}
    # one axis at a time, as the paper studies them: only the scripts of the held-out locales
    cjk = [load_snapshot(r) for r in snapshot_refs("heldout:20", holdout={"script": ["cjk-jp", "cjk-kr"]})]
    assert {s.locale for s in cjk} == {"ja-JP", "ko-KR"}
    dense = [load_snapshot(r) for r in snapshot_refs("heldout:10", holdout={"font_scale": [1.3, 1.5, 2.0]})]
    assert Counter(s.font_scale >= 1.3 for s in dense) == {True: 10}


@pytest.mark.parametrize(("spec", "holdout", "message"), [
    ("random:10", {"language": ["ja-JP"]}, "env.generator.holdout: unknown axis 'language'; axes: device, locale"),
    ("random:10", {"locale": ["xx-XX"]}, "env.generator.holdout.locale: unknown value 'xx-XX'; choose from:"),
    ("random:10", {"device": ["phablet"]}, "env.generator.holdout.device: unknown value 'phablet'"),
    ("heldout:10", {}, "heldout:N needs a holdout: env.generator.holdout="),
    ("random:5", {"device": ["phone", "tablet"]}, "random:5: only 0 of 1000 generated configurations fall outside"),
    ("random:x", {}, "'random:x': write random:N or heldout:N with a whole number N"),
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
    assert "generator version 1, seed 9" in capsys.readouterr().out
    assert sim_main(["snapshots", "generate", "2", "--out", str(tmp_path), "--holdout", "lang=ja"]) == 2


def test_every_profile_is_a_real_screen() -> None:
    profiles = device_profiles()
    assert {"Galaxy Nexus", "Pixel 7", "Pixel 8", "7.6in Foldable", "Nexus 7", "Pixel C"} <= set(profiles)
    assert (profiles["Galaxy Nexus"]["width"], profiles["Galaxy Nexus"]["height"]) == (720, 1280)
    for name, p in profiles.items():
        sw = smallest_width_dp(p, p["dpi"])
        assert (p["kind"] == "tablet") == (sw >= 600), name  # Android's sw600dp: the tablet layouts
