"""vlui.processes: a pool worker tells a dying job from a living one, and says nothing about the death of a job it
did not cause (the end-to-end check: tests/test_errors.py, a killed collection prints no noise)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time

import pytest

from vlui.processes import OrphanQuietStderr, cores, exiting, threads_per_job

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and the death signal are Linux's")


def test_a_living_process_is_not_exiting_and_a_dead_or_unreaped_one_is() -> None:
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    done = subprocess.Popen(["true"])
    try:
        assert not exiting(alive.pid) and not exiting(os.getpid())
        deadline = time.time() + 10
        while not exiting(done.pid) and time.time() < deadline:  # exited, not yet reaped: a zombie
            time.sleep(0.01)
        assert exiting(done.pid)
    finally:
        alive.kill()
        alive.wait()
        done.wait()
    assert exiting(done.pid)  # reaped: gone


def test_a_workers_stderr_is_written_while_its_job_lives_and_dropped_once_it_dies() -> None:
    job = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    written = io.StringIO()
    try:
        # a worker's view: its parent is ``job``; os.getppid() differs here, so look at the liveness check alone
        stderr = OrphanQuietStderr(written, job.pid)
        stderr.parent = os.getppid()  # this process's own parent is alive
        assert stderr.write("a real error\n") == len("a real error\n")
        stderr.parent = job.pid  # a parent that is not ours (as after reparenting) or is dying: dropped
        assert stderr.write("Process SpawnPoolWorker-1:\n") == len("Process SpawnPoolWorker-1:\n")
    finally:
        job.kill()
        job.wait()
    assert written.getvalue() == "a real error\n"
    assert stderr.encoding == written.encoding  # everything else is the stream's


def test_jobs_side_by_side_share_the_cores_out_one_thread_at_least() -> None:
    assert threads_per_job(1, 8) == 8 and threads_per_job(2, 8) == 4 and threads_per_job(3, 16) == 5
    assert threads_per_job(20, 2) == 1  # more jobs than cores: one each, never none
    assert 1 <= threads_per_job(2) <= cores()


def test_a_child_started_by_a_job_is_stopped_with_sigterm_when_the_job_is_killed(tmp_path) -> None:
    # the child notes its pid (written whole, then renamed), and on SIGTERM notes that it was stopped (a training's
    # stop) and exits
    child = ("import os, signal, sys, time, pathlib; d = pathlib.Path(sys.argv[1]); "
             "signal.signal(signal.SIGTERM, lambda *_: (d.joinpath('stopped').write_text('SIGTERM'), sys.exit(0))); "
             "d.joinpath('pid.tmp').write_text(str(os.getpid())); os.replace(d / 'pid.tmp', d / 'pid'); time.sleep(60)")
    job = subprocess.Popen([sys.executable, "-c", "import sys; from vlui.processes import call_child; "
                            "call_child([sys.executable, '-c', sys.argv[1], sys.argv[2]])", child, str(tmp_path)])
    deadline = time.time() + 30
    while not (tmp_path / "pid").exists() and time.time() < deadline:
        time.sleep(0.05)
    pid = int((tmp_path / "pid").read_text())
    job.kill()  # SIGKILL: the job runs no code of its own on the way out
    job.wait()
    while not exiting(pid) and time.time() < deadline:
        time.sleep(0.05)
    assert exiting(pid), "the child outlived the job that started it"
    assert (tmp_path / "stopped").read_text() == "SIGTERM"
