"""``python -m vlui.bench`` prints one JSON object per line with baselines measured in the same run."""

from __future__ import annotations

import json

import pytest

from vlui.bench import record, registry
from vlui.bench.__main__ import main


def test_record_computes_ratio_against_its_baseline() -> None:
    rec = record("x", 30.0, "steps/s", baseline=10.0, note="n")
    assert rec == {"name": "x", "value": 30.0, "unit": "steps/s", "baseline": 10.0, "ratio": 3.0, "note": "n"}
    assert "ratio" not in record("y", 1.0, "s")


@pytest.mark.slow
def test_every_benchmark_runs_quick_and_prints_json_lines(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--quick"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    for bench in registry():  # every benchmark reports at least one figure, named after it
        assert any(rec["name"].startswith(bench) for rec in lines), bench
    for rec in lines:
        assert {"name", "value", "unit", "machine"} <= rec.keys()
        assert rec["value"] > 0
        if "baseline" in rec:
            assert rec["ratio"] == pytest.approx(rec["value"] / rec["baseline"], rel=0.01, abs=0.002)


def test_unknown_benchmark_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["warp_speed"]) == 2
    assert "unknown benchmark(s) warp_speed; choose from:" in capsys.readouterr().err
