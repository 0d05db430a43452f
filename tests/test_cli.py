"""The entry points: Hydra help with every group, one-line errors for user mistakes, exit statuses scripts rely on."""

from __future__ import annotations

import pytest

from tests.conftest import run_python
from vlui.cli import compose, slug

pytestmark = pytest.mark.integration


@pytest.mark.slow
@pytest.mark.parametrize("job", ["train", "collect", "evaluate"])
def test_help_lists_the_config_groups(job: str) -> None:
    out = run_python(f"{job}.py", "--help")
    assert out.returncode == 0, out.stderr
    assert f"== vlui {job} ==" in out.stdout
    groups = {"algo", "model", "model/vision", "data", "env", "trainer", "logger", "experiment", "debug", "agent"}
    listed = {line.split(":")[0] for line in out.stdout.splitlines() if ": " in line}
    assert groups <= listed


@pytest.mark.parametrize("flag", ["--help", "--cfg=job", "--info"])
def test_what_hydra_answers_without_running_a_job_loads_no_torch(flag: str) -> None:
    # --help answers in a second or two instead of the 15 s it took to import Lightning and torch first
    code = ("import atexit, sys\n"
            "atexit.register(lambda: print('torch loaded:', 'torch' in sys.modules))\n"
            f"sys.argv = ['train.py', '{flag}']\n"
            "from vlui.cli import train\n"
            "train()\n")
    out = run_python("-c", code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "torch loaded: False"


@pytest.mark.parametrize("args", [["agent=expert", "tasks=nope"], ["agent=policy"],
                                  ["mode=offline", "agent=random", "data.name=nope"],
                                  ["mode=offline", "agent=policy", "data.part=all"]])
def test_an_evaluation_that_needs_no_policy_loads_no_torch(args: list[str], tmp_path) -> None:
    # an error in the settings, or an agent other than a policy: one line (or the run) without the 5 s of importing
    # torch, timm and transformers, which only a policy needs
    code = ("import atexit, sys\n"
            "atexit.register(lambda: print('torch loaded:', 'torch' in sys.modules))\n"
            f"sys.argv = ['evaluate.py', *{args!r}, 'hydra.run.dir={tmp_path}']\n"
            "from vlui.cli import evaluate\n"
            "evaluate()\n")
    out = run_python("-c", code)
    assert out.returncode == 2 and out.stderr.startswith("error: ") and len(out.stderr.strip().splitlines()) == 1
    assert out.stdout.splitlines()[-1] == "torch loaded: False"


def test_user_error_is_one_line_without_traceback() -> None:
    code = (
        "from vlui.cli import hydra_main\n"
        "from vlui.errors import VluiError\n"
        "def job(cfg):\n"
        "    raise VluiError(f'unknown task {cfg.tasks!r}: choose from representative, open_app')\n"
        "hydra_main('evaluate', job)()\n"
    )
    out = run_python("-c", code, "tasks=nope", "hydra.run.dir=/tmp/vlui-test-cli")
    assert out.returncode == 2
    assert out.stderr.strip() == "error: unknown task 'nope': choose from representative, open_app"
    assert "Traceback" not in out.stderr


@pytest.mark.slow
def test_bad_override_is_reported_by_hydra_without_traceback() -> None:
    out = run_python("train.py", "algo.bogus=1")
    assert out.returncode != 0
    assert "Key 'bogus' not in 'BCConfig'" in out.stderr and "Traceback" not in out.stderr


def test_slug_names_folders_after_the_checkpoint() -> None:
    assert slug("checkpoints/quickstart/bc-tf_efficientnet_lite0-seed0/policy") == "quickstart-bc-tf_efficientnet_lite0-seed0"
    assert slug(None) == "none" and slug("representative") == "representative"


def test_evaluation_folders_differ_per_checkpoint(tmp_path) -> None:
    a = compose("evaluate", ["checkpoint=checkpoints/x/run1"], output_dir=tmp_path)
    b = compose("evaluate", ["checkpoint=checkpoints/x/run2"], output_dir=tmp_path)
    assert a.name == "policy-x-run1" and b.name == "policy-x-run2"
